// Dataset converters (tools/coopgnn/convert.hpp): tiny hand-written OGB, SNAP and NPZ inputs
// with hand-computed expectations, rejected inputs, and the real shared datasets.
#include "tools/coopgnn/convert.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>
#include <zip.h>
#include <zlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "runtime/core/error.hpp"
#include "runtime/graph/dataset.hpp"
#include "tests/common/files.hpp"
namespace coopgnn {
namespace {

using test::error_of;
using test::read_text;
using test::temp_dir;
using test::write_text;

namespace fs = std::filesystem;
using ::testing::HasSubstr;

void write_gz(const fs::path& p, const std::string& s) {
  fs::create_directories(p.parent_path());
  gzFile f = gzopen(p.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(gzwrite(f, s.data(), static_cast<unsigned>(s.size())), static_cast<int>(s.size()));
  ASSERT_EQ(gzclose(f), Z_OK);
}

using edge_set = std::set<std::pair<vid_t, vid_t>>;

edge_set edges_of(const dataset& ds) {
  edge_set s;
  for (std::size_t i = 0; i < ds.src.size(); ++i) s.emplace(ds.src[i], ds.dst[i]);
  return s;
}

// Edge list used by the OGB and SNAP cases: 6 edges, one self-loop (2,2), one duplicate (0,1),
// and (1,0) already the reverse of (0,1).
//   plain:                      distinct {01, 12, 22, 10, 34}              -> 5, 1 duplicate
//   --drop-self-loops --sym:    5 non-loops + 5 reverses = 10, distinct {01,10,12,21,34,43} -> 6
//   --symmetrize only:          6 + 5 reverses (not of the loop) = 11, distinct 7 -> 4 dups
const char* const kEdgesCsv = "0,1\n1,2\n2,2\n1,0\n3,4\n0,1\n";

void write_ogb(const fs::path& dir, bool gz = true) {
  auto put = [&](const std::string& rel, const std::string& text) {
    if (gz) {
      write_gz(dir / (rel + ".gz"), text);
    } else {
      write_text(dir / rel, text);
    }
  };
  put("raw/num-node-list.csv", "5\n");
  put("raw/num-edge-list.csv", "6\n");
  put("raw/edge.csv", kEdgesCsv);
  put("raw/node-feat.csv", "0,0.5\n1,1.5\n2,2.5\n3,3.5\n4,-4.5e1\n");
  put("raw/node-label.csv", "2\n0\n1\n1\n0\n");
  put("split/planetoid/train.csv", "0\n1\n");
  put("split/planetoid/valid.csv", "2\n");
  put("split/planetoid/test.csv", "3\n4\n");
}

// ---- clean_edges -----------------------------------------------------------------------------

TEST(CleanEdges, CountsMatchHandComputedValues) {
  struct usecase {
    bool symmetrize;
    bool drop;
    edge_stats want;
    std::size_t distinct;
  };
  for (const usecase& u :
       {usecase{false, false, {6, 0, 0, 1, 5}, 5}, usecase{true, true, {6, 1, 5, 4, 6}, 6},
        usecase{true, false, {6, 0, 5, 4, 7}, 7}, usecase{false, true, {6, 1, 0, 1, 4}, 4}}) {
    SCOPED_TRACE(::testing::Message() << u.symmetrize << u.drop);
    std::vector<vid_t> src = {0, 1, 2, 1, 3, 0};
    std::vector<vid_t> dst = {1, 2, 2, 0, 4, 1};
    edge_stats const st = clean_edges(src, dst, u.symmetrize, u.drop);
    EXPECT_EQ(st.edges_read, u.want.edges_read);
    EXPECT_EQ(st.self_loops_dropped, u.want.self_loops_dropped);
    EXPECT_EQ(st.reverse_edges_added, u.want.reverse_edges_added);
    EXPECT_EQ(st.duplicates_removed, u.want.duplicates_removed);
    EXPECT_EQ(st.edges_final, u.want.edges_final);
    EXPECT_EQ(src.size(), u.distinct);
    // Sorted by (src, dst), no duplicates.
    for (std::size_t i = 1; i < src.size(); ++i) {
      EXPECT_LT(std::make_pair(src[i - 1], dst[i - 1]), std::make_pair(src[i], dst[i]));
    }
  }
}

TEST(CleanEdges, EmptyInput) {
  std::vector<vid_t> src;
  std::vector<vid_t> dst;
  edge_stats const st = clean_edges(src, dst, true, true);
  EXPECT_EQ(st.edges_final, 0);
  EXPECT_TRUE(src.empty());
}

// ---- OGB -------------------------------------------------------------------------------------

TEST(ConvertOgb, TinyGzipDirectory) {
  temp_dir d;
  write_ogb(d / "tiny");
  convert_options opt;
  opt.symmetrize = true;
  opt.drop_self_loops = true;
  convert_report rep;
  dataset const ds = convert_ogb(d / "tiny", opt, &rep);
  EXPECT_EQ(ds.name, "tiny");
  EXPECT_EQ(ds.num_nodes, 5);
  EXPECT_EQ(edges_of(ds), (edge_set{{0, 1}, {1, 0}, {1, 2}, {2, 1}, {3, 4}, {4, 3}}));
  EXPECT_EQ(rep.edges.edges_read, 6);
  EXPECT_EQ(rep.edges.self_loops_dropped, 1);
  EXPECT_EQ(rep.edges.reverse_edges_added, 5);
  EXPECT_EQ(rep.edges.duplicates_removed, 4);
  EXPECT_EQ(rep.edges.edges_final, 6);
  EXPECT_EQ(rep.split, "planetoid");
  ASSERT_EQ(ds.feature_dim(), 2);
  EXPECT_EQ(ds.features(1, 1), 1.5f);
  EXPECT_EQ(ds.features(4, 1), -45.0f);
  EXPECT_EQ(ds.labels, (std::vector<std::int64_t>{2, 0, 1, 1, 0}));
  EXPECT_EQ(ds.num_classes, 3);
  EXPECT_EQ(ds.train, (std::vector<vid_t>{0, 1}));
  EXPECT_EQ(ds.valid, (std::vector<vid_t>{2}));
  EXPECT_EQ(ds.test, (std::vector<vid_t>{3, 4}));
}

TEST(ConvertOgb, PlainCsvAndNoCleaningOptions) {
  temp_dir d;
  write_ogb(d / "plain", /*gz=*/false);
  convert_report rep;
  convert_options opt;
  opt.name = "renamed";
  dataset const ds = convert_ogb(d / "plain", opt, &rep);
  EXPECT_EQ(ds.name, "renamed");
  EXPECT_EQ(edges_of(ds), (edge_set{{0, 1}, {1, 2}, {2, 2}, {1, 0}, {3, 4}}));
  EXPECT_EQ(rep.edges.duplicates_removed, 1);
  EXPECT_EQ(rep.edges.self_loops_dropped, 0);
}

TEST(ConvertOgb, RejectedInputsNameFileAndLine) {
  temp_dir d;
  fs::path const dir = d / "bad";
  write_ogb(dir);
  auto err = [&] { return error_of([&] { (void)convert_ogb(dir, {}, nullptr); }); };

  write_gz(dir / "raw/edge.csv.gz", "0,1\n1,2\n1,x\n");
  EXPECT_THAT(err(), HasSubstr("edge.csv.gz:3: destination id 'x' is not an integer"));
  write_gz(dir / "raw/edge.csv.gz", "0,1\n-1,2\n");
  EXPECT_THAT(err(), HasSubstr("edge.csv.gz:2: source id -1 is a negative vertex id"));
  write_gz(dir / "raw/edge.csv.gz", "0,1\n1,7\n");
  EXPECT_THAT(err(), HasSubstr("edge.csv.gz:2: edge 1 -> 7 has an id out of range"));
  write_gz(dir / "raw/edge.csv.gz", "0 1\n");
  EXPECT_THAT(err(), HasSubstr("edge.csv.gz:1: expected 'src,dst'"));
  // A truncated gzip stream.
  write_gz(dir / "raw/edge.csv.gz", std::string(kEdgesCsv) + std::string(5000, '7'));
  fs::resize_file(dir / "raw/edge.csv.gz", fs::file_size(dir / "raw/edge.csv.gz") / 2);
  EXPECT_THAT(err(), HasSubstr("edge.csv.gz: cannot read (corrupt or truncated gzip?)"));
  write_gz(dir / "raw/edge.csv.gz", kEdgesCsv);
  write_gz(dir / "raw/num-edge-list.csv.gz", "7\n");
  EXPECT_THAT(err(), HasSubstr("num-edge-list.csv.gz:1: says 7 edges"));
  write_gz(dir / "raw/num-edge-list.csv.gz", "6\n");

  write_gz(dir / "raw/node-feat.csv.gz", "0,0.5\n1,1.5\n2,abc\n3,3.5\n4,4.5\n");
  EXPECT_THAT(err(), HasSubstr("node-feat.csv.gz:3: feature column 1 'abc' is not a number"));
  write_gz(dir / "raw/node-feat.csv.gz", "0,0.5\n1,1.5\n2\n3,3.5\n4,4.5\n");
  EXPECT_THAT(err(), HasSubstr("node-feat.csv.gz:3: 1 values, but the first row has 2"));
  write_gz(dir / "raw/node-feat.csv.gz", "0,0.5\n1,1.5\n2,2\n3,3.5\n");
  EXPECT_THAT(err(), HasSubstr("node-feat.csv.gz: 4 feature rows but num-node-list says 5"));
  write_gz(dir / "raw/node-feat.csv.gz", "0,0.5\n1,1.5\n2,2.5\n3,3.5\n4,4.5\n");

  write_gz(dir / "raw/node-label.csv.gz", "2\n0\n1\n1\n");
  std::string const msg = err();
  EXPECT_THAT(msg, HasSubstr("node-label.csv.gz: 4 label rows but 5 nodes"));
  EXPECT_THAT(msg, HasSubstr("node-feat.csv.gz has 5 feature rows"));
  write_gz(dir / "raw/node-label.csv.gz", "2\n0\none\n1\n0\n");
  EXPECT_THAT(err(), HasSubstr("node-label.csv.gz:3: label 'one' is not an integer class id"));
  write_gz(dir / "raw/node-label.csv.gz", "2\n0\n1\n1\n0\n");

  write_gz(dir / "split/planetoid/valid.csv.gz", "2\n9\n");
  EXPECT_THAT(err(), HasSubstr("valid.csv.gz:2: vertex id 9 is out of range"));
  write_gz(dir / "split/planetoid/valid.csv.gz", "2\n");
  write_gz(dir / "split/other/train.csv.gz", "0\n");
  EXPECT_THAT(err(),
              HasSubstr("several split folders (other, planetoid); choose one with --split"));
  convert_options opt;
  opt.split = "planetoid";
  EXPECT_EQ(convert_ogb(dir, opt).train.size(), 2u);
  opt.split = "nope";
  EXPECT_THAT(error_of([&] { (void)convert_ogb(dir, opt); }),
              HasSubstr("missing split folder 'nope'"));

  fs::remove(dir / "raw/edge.csv.gz");
  EXPECT_THAT(err(), HasSubstr("edge.csv.gz: missing file"));
  EXPECT_THAT(error_of([&] { (void)convert_ogb(d / "nowhere", {}); }),
              HasSubstr("not a directory"));
}

// ---- SNAP ------------------------------------------------------------------------------------

TEST(ConvertSnap, TextAndGzip) {
  temp_dir d;
  std::string const text =
      "# Directed graph: toy.txt\n# FromNodeId\tToNodeId\n0\t1\n1 2\n\n2\t2\n1   0\n3\t9\n0\t1\n";
  write_text(d / "toy.txt", text);
  write_gz(d / "toy.txt.gz", text);
  for (const char* f : {"toy.txt", "toy.txt.gz"}) {
    SCOPED_TRACE(f);
    convert_options opt;
    opt.symmetrize = true;
    opt.drop_self_loops = true;
    convert_report rep;
    dataset const ds = convert_snap(d / f, opt, &rep);
    EXPECT_EQ(ds.name, "toy");
    EXPECT_EQ(ds.num_nodes, 10);  // max id 9 + 1
    EXPECT_EQ(edges_of(ds), (edge_set{{0, 1}, {1, 0}, {1, 2}, {2, 1}, {3, 9}, {9, 3}}));
    EXPECT_EQ(rep.edges.edges_read, 6);
    EXPECT_EQ(rep.edges.self_loops_dropped, 1);
    EXPECT_EQ(rep.edges.reverse_edges_added, 5);
    EXPECT_EQ(rep.edges.duplicates_removed, 4);
    EXPECT_EQ(ds.feature_dim(), 0);
    EXPECT_TRUE(ds.labels.empty());
    EXPECT_EQ(ds.num_classes, 0);
    EXPECT_TRUE(ds.train.empty());
  }
}

TEST(ConvertSnap, RejectedInputs) {
  temp_dir d;
  auto err = [&](const std::string& text) {
    write_text(d / "bad.txt", text);
    return error_of([&] { (void)convert_snap(d / "bad.txt", {}); });
  };
  EXPECT_THAT(err("# c\n0 1\n1 x\n"), HasSubstr("bad.txt:3: destination id 'x' is not an integer"));
  EXPECT_THAT(err("0 1\n-4 1\n"), HasSubstr("bad.txt:2: source id -4 is a negative vertex id"));
  EXPECT_THAT(err("0 1\n7\n"), HasSubstr("bad.txt:2: expected 'src dst'"));
  EXPECT_THAT(err("# only comments\n"), HasSubstr("bad.txt: no edges"));
  EXPECT_THAT(err("0 1.5\n"), HasSubstr("bad.txt:1: destination id '1.5' is not an integer"));
  write_text(d / "bad.txt.gz", "\x1f\x8b\x08\x00 not really deflate data at all, sorry");
  EXPECT_THAT(error_of([&] { (void)convert_snap(d / "bad.txt.gz", {}); }),
              HasSubstr("bad.txt.gz: cannot read (corrupt or truncated gzip?)"));
  EXPECT_THAT(error_of([&] { (void)convert_snap(d / "absent.txt", {}); }),
              HasSubstr("absent.txt: missing file"));
}

// ---- NPZ -------------------------------------------------------------------------------------

/// A .npy image with a hand-written version 1.0 header.
std::string npy_image(const std::string& descr, const std::string& shape, const void* data,
                      std::size_t bytes) {
  std::string h = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
  while ((10 + h.size() + 1) % 64 != 0) h.push_back(' ');
  h.push_back('\n');
  std::string out = "\x93NUMPY";
  out += std::string("\x01\x00", 2);
  out.push_back(static_cast<char>(h.size() & 0xff));
  out.push_back(static_cast<char>(h.size() >> 8));
  return out + h + std::string(static_cast<const char*>(data), bytes);
}

template <typename T>
std::string npy_of(const std::string& descr, const std::string& shape, const std::vector<T>& v) {
  return npy_image(descr, shape, v.data(), v.size() * sizeof(T));
}

void write_zip(const fs::path& p, const std::vector<std::pair<std::string, std::string>>& members) {
  int err = 0;
  zip_t* za = zip_open(p.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &err);
  ASSERT_NE(za, nullptr);
  for (const auto& [name, bytes] : members) {
    zip_source_t* src = zip_source_buffer(za, bytes.data(), bytes.size(), 0);
    ASSERT_NE(src, nullptr);
    ASSERT_GE(zip_file_add(za, name.c_str(), src, ZIP_FL_OVERWRITE), 0);
  }
  ASSERT_EQ(zip_close(za), 0);
}

TEST(ConvertNpz, TolokersLayoutWithSplitIndex) {
  temp_dir d;
  // 4 nodes; edges [E, 2] stored once; 2 splits as [2, 4] bool masks.
  std::vector<float> const feat = {0, 1, 2, 3, 4, 5, 6, 7};
  std::vector<std::int64_t> const labels = {0, 1, 1, 0};
  std::vector<std::int64_t> const edges = {0, 1, 1, 2, 2, 3};
  std::vector<std::uint8_t> const train = {1, 1, 0, 0, /*split 1*/ 0, 0, 1, 1};
  std::vector<std::uint8_t> const val = {0, 0, 1, 0, /*split 1*/ 1, 0, 0, 0};
  std::vector<std::uint8_t> const test = {0, 0, 0, 1, /*split 1*/ 0, 1, 0, 0};
  write_zip(d / "tol.npz", {{"node_features.npy", npy_of("<f4", "(4, 2)", feat)},
                            {"node_labels.npy", npy_of("<i8", "(4,)", labels)},
                            {"edges.npy", npy_of("<i8", "(3, 2)", edges)},
                            {"train_masks.npy", npy_of("|b1", "(2, 4)", train)},
                            {"val_masks.npy", npy_of("|b1", "(2, 4)", val)},
                            {"test_masks.npy", npy_of("|b1", "(2, 4)", test)}});
  convert_options opt;
  opt.symmetrize = true;
  convert_report rep;
  dataset ds = convert_npz(d / "tol.npz", opt, &rep);
  EXPECT_EQ(ds.name, "tol");
  EXPECT_EQ(ds.num_nodes, 4);
  EXPECT_EQ(edges_of(ds), (edge_set{{0, 1}, {1, 0}, {1, 2}, {2, 1}, {2, 3}, {3, 2}}));
  EXPECT_EQ(rep.edges.reverse_edges_added, 3);
  EXPECT_EQ(ds.feature_dim(), 2);
  EXPECT_EQ(ds.features(3, 1), 7.0f);
  EXPECT_EQ(ds.num_classes, 2);
  EXPECT_EQ(ds.train, (std::vector<vid_t>{0, 1}));
  EXPECT_EQ(ds.valid, (std::vector<vid_t>{2}));
  EXPECT_EQ(ds.test, (std::vector<vid_t>{3}));
  opt.split_index = 1;
  ds = convert_npz(d / "tol.npz", opt);
  EXPECT_EQ(ds.train, (std::vector<vid_t>{2, 3}));
  EXPECT_EQ(ds.valid, (std::vector<vid_t>{0}));
  EXPECT_EQ(ds.test, (std::vector<vid_t>{1}));
  opt.split_index = 2;
  EXPECT_THAT(error_of([&] { (void)convert_npz(d / "tol.npz", opt); }),
              HasSubstr("tol.npz:train_masks: --split-index 2 is out of range: the archive has 2"));
}

TEST(ConvertNpz, PygAliases) {
  temp_dir d;
  std::vector<std::int64_t> const ei = {0, 1, 2, /*dst*/ 1, 2, 0};
  std::vector<double> const x = {1, 2, 3};
  std::vector<std::int32_t> const y = {2, 0, 1};
  std::vector<std::uint8_t> const tm = {1, 0, 0};
  write_zip(d / "pyg.npz", {{"edge_index.npy", npy_of("<i8", "(2, 3)", ei)},
                            {"x.npy", npy_of("<f8", "(3, 1)", x)},
                            {"y.npy", npy_of("<i4", "(3,)", y)},
                            {"train_mask.npy", npy_of("|b1", "(3,)", tm)}});
  dataset const ds = convert_npz(d / "pyg.npz", {});
  EXPECT_EQ(edges_of(ds), (edge_set{{0, 1}, {1, 2}, {2, 0}}));
  EXPECT_EQ(ds.features(2, 0), 3.0f);
  EXPECT_EQ(ds.labels, (std::vector<std::int64_t>{2, 0, 1}));
  EXPECT_EQ(ds.num_classes, 3);
  EXPECT_EQ(ds.train, (std::vector<vid_t>{0}));
  EXPECT_TRUE(ds.test.empty());
}

TEST(ConvertNpz, RejectedInputs) {
  temp_dir d;
  std::vector<float> const feat = {0, 1, 2};
  std::vector<std::int64_t> const labels = {0, 1};
  std::vector<std::int64_t> const edges = {0, 5};
  write_zip(d / "a.npz", {{"node_features.npy", npy_of("<f4", "(3, 1)", feat)},
                          {"node_labels.npy", npy_of("<i8", "(2,)", labels)},
                          {"edges.npy", npy_of("<i8", "(1, 2)", edges)}});
  EXPECT_THAT(error_of([&] { (void)convert_npz(d / "a.npz", {}); }),
              HasSubstr("a.npz:node_labels: 2 labels but"));
  write_zip(d / "b.npz", {{"node_features.npy", npy_of("<f4", "(3, 1)", feat)},
                          {"edges.npy", npy_of("<i8", "(1, 2)", edges)}});
  EXPECT_THAT(error_of([&] { (void)convert_npz(d / "b.npz", {}); }),
              HasSubstr("b.npz:edges: vertex id 5 is out of range: |V| = 3"));
  write_zip(d / "c.npz", {{"node_features.npy", npy_of("<f4", "(3, 1)", feat)}});
  EXPECT_THAT(error_of([&] { (void)convert_npz(d / "c.npz", {}); }),
              HasSubstr("c.npz: no edge array"));
  std::vector<std::int64_t> const neg = {0, -1};
  write_zip(d / "e.npz", {{"edges.npy", npy_of("<i8", "(1, 2)", neg)}});
  EXPECT_THAT(error_of([&] { (void)convert_npz(d / "e.npz", {}); }),
              HasSubstr("e.npz:edges: edge 0 (0 -> -1) has a negative vertex id"));
  std::vector<std::int64_t> const three = {0, 1, 2};
  write_zip(d / "f.npz", {{"edges.npy", npy_of("<i8", "(1, 3)", three)}});
  EXPECT_THAT(error_of([&] { (void)convert_npz(d / "f.npz", {}); }),
              HasSubstr("f.npz:edges: edges must have shape (E, 2) or (2, E), found (1, 3)"));
  EXPECT_THAT(error_of([&] { (void)convert_dataset("csv", d / "f.npz", {}); }),
              HasSubstr("unknown input format 'csv'"));
}

// ---- the real shared datasets ----------------------------------------------------------------

fs::path shared_data() { return fs::path(COOPGNN_SHARED_DATA_DIR); }

TEST(ConvertShared, Cora) {
  fs::path const dir = shared_data() / "cora";
  if (!fs::is_directory(dir)) GTEST_SKIP() << "shared dataset missing: " << dir;
  convert_options opt;
  opt.symmetrize = true;
  opt.drop_self_loops = true;
  convert_report rep;
  dataset const ds = convert_ogb(dir, opt, &rep);
  // Expected values from shared/data/README.md.
  EXPECT_EQ(ds.num_nodes, 2708);
  EXPECT_EQ(ds.num_edges(), 10556);
  EXPECT_EQ(rep.edges.edges_read, 5278);
  EXPECT_EQ(rep.edges.duplicates_removed, 0);
  EXPECT_EQ(ds.feature_dim(), 1433);
  EXPECT_EQ(ds.num_classes, 7);
  EXPECT_EQ(ds.train.size(), 140u);
  EXPECT_EQ(ds.valid.size(), 500u);
  EXPECT_EQ(ds.test.size(), 1000u);
  std::vector<std::int64_t> counts(7, 0);
  for (auto l : ds.labels) ++counts[static_cast<std::size_t>(l)];
  EXPECT_EQ(counts, (std::vector<std::int64_t>{351, 217, 418, 818, 426, 298, 180}));
  double ones = 0;
  for (float v : ds.features.values()) ones += v;
  EXPECT_EQ(ones, 49216.0);
  EXPECT_EQ(ds.train.front(), 0);
  EXPECT_EQ(ds.train.back(), 139);
  EXPECT_EQ(ds.test.front(), 1708);
}

TEST(ConvertShared, Tolokers) {
  fs::path const file = shared_data() / "tolokers" / "tolokers.npz";
  if (!fs::is_regular_file(file)) GTEST_SKIP() << "shared dataset missing: " << file;
  convert_options opt;
  opt.symmetrize = true;
  dataset const ds = convert_npz(file, opt);
  EXPECT_EQ(ds.num_nodes, 11758);
  EXPECT_EQ(ds.num_edges(), 1038000);
  EXPECT_EQ(ds.feature_dim(), 10);
  EXPECT_EQ(ds.num_classes, 2);
  EXPECT_EQ(ds.train.size(), 5879u);
  EXPECT_EQ(ds.valid.size(), 2939u);
  EXPECT_EQ(ds.test.size(), 2940u);
  EXPECT_EQ(std::count(ds.labels.begin(), ds.labels.end(), 1), 2566);
}

TEST(ConvertSnap, RejectsAdjacencyListsInsteadOfDroppingEdges) {
  temp_dir tmp;
  write_text(tmp / "weighted.txt", "0 1 0.5\n1 2 7\n");
  EXPECT_EQ(convert_snap(tmp / "weighted.txt", {}, nullptr).num_nodes, 3);
  write_text(tmp / "adj.txt", "0 1 2 3\n");
  auto const msg = error_of([&] { convert_snap(tmp / "adj.txt", {}, nullptr); });
  EXPECT_THAT(msg, HasSubstr("adj.txt"));
  EXPECT_THAT(msg, HasSubstr("4 columns"));
}

}  // namespace
}  // namespace coopgnn
