// Edge lists that are never held whole: clean_edge_rows (edges.hpp), the streaming build_csc and
// read_edge_csc (csc.hpp), npy_two_row_reader (npy.hpp), write_dataset from rows and
// read_dataset with load_edges false (dataset.hpp). Oracles: std::set of pairs, hand-written
// files, and the in-memory paths that hold the list.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "runtime/core/error.hpp"
#include "runtime/graph/csc.hpp"
#include "runtime/graph/dataset.hpp"
#include "runtime/graph/edges.hpp"
#include "runtime/graph/npy.hpp"
#include "pipeline/checkpoint.hpp"
#include "tests/common/files.hpp"

namespace coopgnn {
namespace {

using test::error_of;
using test::temp_dir;
using ::testing::HasSubstr;

/// A list of more than one chunk: edge e is (e * 7919 + 3) % n -> (e * 104729) % n, with every
/// 1000th edge a self-loop (integer data, so every oracle is exact).
struct usecase_list {
  vid_t n = 1000;
  std::int64_t m = edge_chunk_edges + 12345;
  [[nodiscard]] std::pair<vid_t, vid_t> edge(std::int64_t e) const {
    vid_t const u = (e * 7919 + 3) % n;
    return {u, e % 1000 == 0 ? u : (e * 104729) % n};
  }
  [[nodiscard]] edge_chunk_source source() const {
    return [this](std::int64_t first, std::span<vid_t> s, std::span<vid_t> d) {
      for (std::size_t i = 0; i < s.size(); ++i) {
        std::tie(s[i], d[i]) = edge(first + static_cast<std::int64_t>(i));
      }
    };
  }
};

std::vector<std::uint8_t> bytes_of(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST(CleanEdgeRows, MatchesASetOfPairsAcrossChunks) {
  usecase_list const l;
  for (bool sym : {false, true}) {
    for (bool drop : {false, true}) {
      SCOPED_TRACE(::testing::Message() << "symmetrize " << sym << " drop " << drop);
      std::set<std::pair<vid_t, vid_t>> want;
      std::int64_t loops = 0;
      for (std::int64_t e = 0; e < l.m; ++e) {
        auto const [u, v] = l.edge(e);
        if (u == v) {
          ++loops;
          if (drop) continue;
        }
        want.emplace(u, v);
        if (sym) want.emplace(v, u);
      }
      edge_stats st;
      edge_rows const rows = clean_edge_rows(l.n, l.m, l.source(), sym, drop, &st);
      ASSERT_EQ(rows.num_edges(), static_cast<eid_t>(want.size()));
      auto it = want.begin();
      for (vid_t u = 0; u < l.n; ++u) {
        for (eid_t e = rows.offsets[u]; e < rows.offsets[u + 1]; ++e, ++it) {
          ASSERT_EQ(std::make_pair(u, static_cast<vid_t>(rows.targets[e])), *it);
        }
      }
      EXPECT_EQ(st.edges_read, l.m);
      EXPECT_EQ(st.self_loops_dropped, drop ? loops : 0);
      EXPECT_EQ(st.reverse_edges_added, sym ? l.m - loops : 0);
      EXPECT_EQ(st.edges_final, static_cast<std::int64_t>(want.size()));
      EXPECT_EQ(st.edges_final, st.edges_read - st.self_loops_dropped + st.reverse_edges_added -
                                    st.duplicates_removed);
    }
  }
}

TEST(CleanEdgeRows, RejectsIdsOutsideTheRange) {
  auto bad = [](std::int64_t, std::span<vid_t> s, std::span<vid_t> d) {
    s[0] = 0;
    d[0] = 5;
  };
  EXPECT_THAT(error_of<logic_error>([&] { (void)clean_edge_rows(5, 1, bad, true, true); }),
              HasSubstr("edge 0 (0 -> 5) has a vertex id outside [0, 5)"));
  EXPECT_THROW((void)clean_edge_rows((vid_t{1} << 32) + 1, 0, bad, true, true), logic_error);
  std::vector<vid_t> src = {-1};
  std::vector<vid_t> dst = {0};
  EXPECT_THROW(clean_edges(src, dst, true, true), logic_error);
}

TEST(StreamingCsc, EqualsTheInMemoryBuildAcrossChunks) {
  usecase_list const l;
  std::vector<vid_t> src(static_cast<std::size_t>(l.m));
  std::vector<vid_t> dst(static_cast<std::size_t>(l.m));
  l.source()(0, src, dst);
  csc_graph const streamed = build_csc(l.n, l.m, l.source());
  // Oracle: the distinct in-neighbours of each vertex from a set.
  std::vector<std::set<vid_t>> in(static_cast<std::size_t>(l.n));
  for (std::size_t e = 0; e < src.size(); ++e) in[dst[e]].insert(src[e]);
  eid_t at = 0;
  for (vid_t v = 0; v < l.n; ++v) {
    ASSERT_EQ(streamed.indptr[v], at);
    for (vid_t u : in[v]) ASSERT_EQ(streamed.indices[at++], u);
  }
  EXPECT_EQ(streamed.indptr[l.n], at);
  csc_graph const whole = build_csc(l.n, src, dst);
  EXPECT_EQ(whole.indptr, streamed.indptr);
  EXPECT_EQ(whole.indices, streamed.indices);
}

TEST(StreamingCsc, ReadsTheEdgesFileAndNamesItForABadId) {
  temp_dir d;
  // Edges 2->1, 0->1, 1->0, 2->0, 3->3 in C order, then the same in Fortran order.
  std::vector<std::int64_t> const c_order = {2, 0, 1, 2, 3, /**/ 1, 1, 0, 0, 3};
  std::int64_t const shape[2] = {2, 5};
  write_npy(d / "c.npy", std::span<const std::int64_t>(c_order), shape);
  csc_graph const g = read_edge_csc(5, d / "c.npy");
  EXPECT_EQ(g.indptr, (std::vector<eid_t>{0, 2, 4, 4, 5, 5}));
  EXPECT_EQ(g.indices, (std::vector<vid_t>{1, 2, 0, 2, 3}));
  // Fortran order ((2, 5) stored column by column): the pairs interleaved, as int32.
  {
    std::int64_t const fshape[2] = {2, 5};
    std::string header = make_npy_header(npy_dtype::int32, fshape);
    auto const pos = header.find("False");
    ASSERT_NE(pos, std::string::npos);
    header.replace(pos, 5, "True ");
    std::vector<std::int32_t> const pairs = {2, 1, 0, 1, 1, 0, 2, 0, 3, 3};
    std::ofstream out(d / "f.npy", std::ios::binary);
    out.write(header.data(), static_cast<std::streamsize>(header.size()));
    out.write(reinterpret_cast<const char*>(pairs.data()),
              static_cast<std::streamsize>(pairs.size() * 4));
  }
  csc_graph const f = read_edge_csc(5, d / "f.npy");
  EXPECT_EQ(f.indptr, g.indptr);
  EXPECT_EQ(f.indices, g.indices);
  npy_two_row_reader r(d / "f.npy");
  std::vector<std::int64_t> dst(2);
  r.read(3, {}, dst);
  EXPECT_EQ(dst, (std::vector<std::int64_t>{0, 3}));
  std::string const e = error_of([&] { (void)read_edge_csc(3, d / "c.npy"); });
  EXPECT_THAT(e, HasSubstr((d / "c.npy").string()));
  EXPECT_THAT(e, HasSubstr("edge source index 4 = 3 is out of range: ids must be < |V| = 3"));
  std::vector<std::int64_t> const one_row = {1, 2, 3};
  std::int64_t const shape1[1] = {3};
  write_npy(d / "one.npy", std::span<const std::int64_t>(one_row), shape1);
  EXPECT_THAT(error_of([&] { (void)read_edge_csc(5, d / "one.npy"); }),
              HasSubstr("edges must have shape (2, E)"));
}

TEST(StreamingDataset, RowsWriteTheSameFilesAndEdgesCanStayInTheFile) {
  temp_dir d;
  usecase_list l;
  l.m = 3000;
  edge_rows const rows = clean_edge_rows(l.n, l.m, l.source(), true, true);
  dataset with_list;
  with_list.name = "rows";
  with_list.num_nodes = l.n;
  expand_edge_rows(rows, with_list.src, with_list.dst);
  write_dataset(with_list, d / "list");
  dataset without;
  without.name = "rows";
  without.num_nodes = l.n;
  write_dataset(without, rows, d / "rows");
  EXPECT_EQ(bytes_of(d / "rows/edges/edges.npy"), bytes_of(d / "list/edges/edges.npy"));
  EXPECT_EQ(bytes_of(d / "rows/metadata.yaml"), bytes_of(d / "list/metadata.yaml"));
  EXPECT_THROW(write_dataset(with_list, rows, d / "both"), logic_error);

  dataset const loaded = read_dataset(d / "rows");
  EXPECT_EQ(loaded.src, with_list.src);
  EXPECT_EQ(loaded.dst, with_list.dst);
  dataset_read_options opt;
  opt.load_edges = false;
  dataset const left = read_dataset(d / "rows", opt);
  EXPECT_TRUE(left.src.empty());
  EXPECT_EQ(left.num_edges(), rows.num_edges());
  EXPECT_EQ(left.edge_file, d / "rows/edges/edges.npy");
  EXPECT_EQ(dataset_fingerprint(left), dataset_fingerprint(loaded));
  csc_graph const g = read_edge_csc(left.num_nodes, left.edge_file);
  csc_graph const h = build_csc(loaded.num_nodes, loaded.src, loaded.dst);
  EXPECT_EQ(g.indptr, h.indptr);
  EXPECT_EQ(g.indices, h.indices);
  EXPECT_THROW(write_dataset(left, d / "again"), logic_error);
}

}  // namespace
}  // namespace coopgnn
