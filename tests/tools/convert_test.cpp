// Dataset converters (formats/formats.hpp): tiny hand-written OGB, SNAP, NPZ and MUSAE inputs
// with hand-computed expectations, rejected inputs, and the real shared datasets.
#include "formats/formats.hpp"

#include <fmt/ranges.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>
#include <zip.h>
#include <zlib.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <tuple>
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

/// The raw datasets: $COOPGNN_SHARED_DATA when set, else COOPGNN_RAW_DATA_DIR (tests/data/raw,
/// which holds cora and tolokers; tests of the others skip without them).
fs::path shared_data() {
  const char* env = std::getenv("COOPGNN_SHARED_DATA");
  return env != nullptr && *env != '\0' ? fs::path(env) : fs::path(COOPGNN_RAW_DATA_DIR);
}

TEST(ConvertShared, Cora) {
  fs::path const dir = shared_data() / "cora";
  if (!fs::is_directory(dir)) GTEST_SKIP() << "shared dataset missing: " << dir;
  convert_options opt;
  opt.symmetrize = true;
  opt.drop_self_loops = true;
  convert_report rep;
  dataset const ds = convert_ogb(dir, opt, &rep);
  // Expected values from data/README.md ("Raw datasets"), not from the code.
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

// ---- edge directions (README "Datasets") ----------------------------------------------------

void write_ogb_edges(const fs::path& dir, int nodes, const std::string& edges) {
  write_text(dir / "raw/num-node-list.csv", std::to_string(nodes) + "\n");
  write_text(dir / "raw/edge.csv", edges);
}

TEST(ConvertOgb, EdgesStoredOnceAreSymmetrizedAndSaidSo) {
  temp_dir d;
  // 4 edges, every src < dst, one self-loop (2,2) that does not count against "stored once".
  write_ogb_edges(d / "once", 4, "0,1\n0,2\n1,3\n2,2\n2,3\n");
  convert_report rep;
  dataset ds = convert_ogb(d / "once", {}, &rep);
  EXPECT_EQ(rep.order, edge_order::lower_to_higher);
  EXPECT_EQ(edges_of(ds),
            (edge_set{{0, 1}, {1, 0}, {0, 2}, {2, 0}, {1, 3}, {3, 1}, {2, 2}, {2, 3}, {3, 2}}));
  ASSERT_EQ(rep.notes.size(), 1u);
  EXPECT_THAT(rep.notes[0],
              HasSubstr("edge.csv: edges stored once (every src < dst): "
                        "symmetrized, 5 -> 9 edges; --directed keeps them as stored"));
  convert_options opt;
  opt.directed = true;
  rep = {};
  ds = convert_ogb(d / "once", opt, &rep);
  EXPECT_EQ(ds.num_edges(), 5);
  ASSERT_EQ(rep.notes.size(), 1u);
  EXPECT_THAT(rep.notes[0], HasSubstr("edges stored once (every src < dst): kept as stored "
                                      "(--directed), 5 edges; without --directed they would be"));
  opt.directed = false;
  opt.symmetrize = true;
  rep = {};
  EXPECT_EQ(convert_ogb(d / "once", opt, &rep).num_edges(), 9);
  EXPECT_THAT(rep.notes[0], HasSubstr("symmetrized (--symmetrize), 5 -> 9 edges"));
  opt.directed = true;
  EXPECT_THAT(error_of([&] { (void)convert_ogb(d / "once", opt); }),
              HasSubstr("--symmetrize and --directed contradict each other"));

  // Every src > dst is stored once too.
  write_ogb_edges(d / "desc", 3, "1,0\n2,1\n");
  rep = {};
  EXPECT_EQ(convert_ogb(d / "desc", {}, &rep).num_edges(), 4);
  EXPECT_EQ(rep.order, edge_order::higher_to_lower);
  EXPECT_THAT(rep.notes[0], HasSubstr("(every src > dst): symmetrized, 2 -> 4 edges"));
}

TEST(ConvertOgb, BothDirectionsPresentStayAsStored) {
  temp_dir d;
  // 0<->1 both ways, 1->2 one way: mixed.
  write_ogb_edges(d / "both", 3, "0,1\n1,0\n1,2\n");
  convert_report rep;
  dataset ds = convert_ogb(d / "both", {}, &rep);
  EXPECT_EQ(rep.order, edge_order::mixed);
  EXPECT_EQ(edges_of(ds), (edge_set{{0, 1}, {1, 0}, {1, 2}}));
  EXPECT_THAT(rep.notes.at(0), HasSubstr("edges in both directions (2 with src < dst, 1 with src "
                                         "> dst): kept as stored, 3 edges"));
  // --symmetrize adds only the missing 2 -> 1; 0 <-> 1 is not doubled.
  convert_options opt;
  opt.symmetrize = true;
  rep = {};
  ds = convert_ogb(d / "both", opt, &rep);
  EXPECT_EQ(edges_of(ds), (edge_set{{0, 1}, {1, 0}, {1, 2}, {2, 1}}));
  EXPECT_EQ(rep.edges.reverse_edges_added, 3);
  EXPECT_EQ(rep.edges.duplicates_removed, 2);
  EXPECT_THAT(rep.notes.at(0), HasSubstr("--symmetrize added the missing reverses, 3 -> 4 edges"));
}

// ---- SNAP syntax -----------------------------------------------------------------------------

TEST(ConvertSnap, HeaderCommasTabsCrlfAndComments) {
  temp_dir d;
  // Header, then comma, tab, mixed separators, a '%' and a '#' comment, CRLF line ends.
  write_text(d / "h.csv",
             "# made by hand\r\nid_1,id_2\r\n0,1\r\n1\t2\r\n% comment\r\n2 ,\t3\r\n  3   0  \r\n");
  convert_report rep;
  dataset const ds = convert_snap(d / "h.csv", {}, &rep);
  EXPECT_EQ(ds.num_nodes, 4);
  EXPECT_EQ(edges_of(ds), (edge_set{{0, 1}, {1, 2}, {2, 3}, {3, 0}}));
  ASSERT_GE(rep.notes.size(), 1u);
  EXPECT_THAT(rep.notes[0], HasSubstr("h.csv:2: header line 'id_1,id_2' skipped"));
  EXPECT_EQ(rep.order, edge_order::mixed);

  write_text(d / "st.txt", "source\ttarget\n0\t1\n0\t2\n");
  rep = {};
  EXPECT_EQ(convert_snap(d / "st.txt", {}, &rep).num_edges(), 2);
  EXPECT_THAT(rep.notes.at(0), HasSubstr("st.txt:1: header line 'source\ttarget' skipped"));
  EXPECT_THAT(rep.notes.at(1), HasSubstr("edges stored once (every src < dst): kept as stored, 2 "
                                         "directed edges; if the graph is undirected, "
                                         "--symmetrize adds"));
}

TEST(ConvertSnap, MalformedLineLaterNamesFileAndLine) {
  temp_dir d;
  write_text(d / "bad.csv", "id_1,id_2\r\n0,1\r\n1,2\r\nid_1,id_2\r\n");
  EXPECT_THAT(error_of([&] { (void)convert_snap(d / "bad.csv", {}); }),
              HasSubstr("bad.csv:4: source id 'id_1' is not an integer"));
  write_text(d / "bad.csv", "0 1\n1;2\n");
  EXPECT_THAT(error_of([&] { (void)convert_snap(d / "bad.csv", {}); }),
              HasSubstr("bad.csv:2: expected 'src dst' (two non-negative integer ids separated "
                        "by spaces, tabs or a comma), found '1;2'"));
  // A first line with a number in it is data, not a header.
  write_text(d / "bad.csv", "0 x\n1 2\n");
  EXPECT_THAT(error_of([&] { (void)convert_snap(d / "bad.csv", {}); }),
              HasSubstr("bad.csv:1: destination id 'x' is not an integer"));
}

// ---- SciPy sparse features ------------------------------------------------------------------

std::string npy_bytes_string(const std::string& s) {
  return npy_image("|S" + std::to_string(s.size()), "()", s.data(), s.size());
}

// The dense matrix used below, 3 x 4 (hand-written):
//   [0   1.5 0 0]
//   [2   0   0 3]
//   [0   0   0 0]
// CSR: indptr [0, 1, 3, 3], indices [1, 0, 3], data [1.5, 2, 3]
// CSC: indptr [0, 1, 2, 2, 3], indices [1, 0, 1], data [2, 1.5, 3]
// COO (in any order): rows [1, 0, 1], cols [3, 1, 0], data [3, 1.5, 2]
const std::vector<float> kDense = {0, 1.5f, 0, 0, 2, 0, 0, 3, 0, 0, 0, 0};

/// Archive members: `extra`, then kDense as CSR members attr_* (with `indptr`, to break it).
std::vector<std::pair<std::string, std::string>> with_csr_attr(
    std::vector<std::pair<std::string, std::string>> extra,
    const std::vector<std::int32_t>& indptr = {0, 1, 3, 3}) {
  std::vector<std::int64_t> const shape = {3, 4};
  std::vector<std::int32_t> const indices = {1, 0, 3};
  std::vector<float> const data = {1.5f, 2, 3};
  extra.emplace_back("attr_data.npy", npy_of("<f4", "(3,)", data));
  extra.emplace_back("attr_indices.npy", npy_of("<i4", "(3,)", indices));
  extra.emplace_back("attr_indptr.npy", npy_of("<i4", "(4,)", indptr));
  extra.emplace_back("attr_shape.npy", npy_of("<i8", "(2,)", shape));
  return extra;
}

TEST(ConvertNpz, SparseCsrAttrAndAdjacencyMembers) {
  temp_dir d;
  // Adjacency 3 x 3 CSR: 0 -> 1, 1 -> 2, and an explicit zero 2 -> 0 that is no edge.
  std::vector<std::int64_t> const ashape = {3, 3};
  std::vector<std::int32_t> const aptr = {0, 1, 2, 3};
  std::vector<std::int32_t> const aidx = {1, 2, 0};
  std::vector<float> const adata = {1, 1, 0};
  std::vector<std::int64_t> const labels = {1, 0, 1};
  write_zip(d / "cf.npz", with_csr_attr({{"adj_data.npy", npy_of("<f4", "(3,)", adata)},
                                         {"adj_indices.npy", npy_of("<i4", "(3,)", aidx)},
                                         {"adj_indptr.npy", npy_of("<i4", "(4,)", aptr)},
                                         {"adj_shape.npy", npy_of("<i8", "(2,)", ashape)},
                                         {"labels.npy", npy_of("<i8", "(3,)", labels)}}));
  convert_report rep;
  dataset const ds = convert_npz(d / "cf.npz", {}, &rep);
  EXPECT_EQ(ds.num_nodes, 3);
  EXPECT_EQ(edges_of(ds), (edge_set{{0, 1}, {1, 2}}));
  ASSERT_EQ(ds.features.rows(), 3);
  ASSERT_EQ(ds.features.cols(), 4);
  EXPECT_EQ(ds.features.values(), kDense);
  EXPECT_EQ(ds.num_classes, 2);
  EXPECT_THAT(rep.notes.at(0), HasSubstr("cf.npz:attr_*: sparse csr 3 x 4 with 3 stored entries "
                                         "-> dense 3 x 4 float32 = 48 B (48 bytes)"));
}

TEST(ConvertNpz, SaveNpzCscAndCooFeaturesThroughFeaturesOption) {
  temp_dir d;
  std::vector<std::int64_t> const shape = {3, 4};
  std::vector<std::int32_t> const indptr = {0, 1, 2, 2, 3};
  std::vector<std::int32_t> const indices = {1, 0, 1};
  std::vector<float> const data = {2, 1.5f, 3};
  auto csc = [&](const std::string& format) {
    // As scipy.sparse.save_npz(m.tocsc()) writes it (member order of scipy 1.10).
    return std::vector<std::pair<std::string, std::string>>{
        {"indices.npy", npy_of("<i4", "(3,)", indices)},
        {"indptr.npy", npy_of("<i4", "(5,)", indptr)},
        {"format.npy", npy_bytes_string(format)},
        {"shape.npy", npy_of("<i8", "(2,)", shape)},
        {"data.npy", npy_of("<f4", "(3,)", data)}};
  };
  write_zip(d / "feat_csc.npz", csc("csc"));
  write_text(d / "g.txt", "0 1\n1 2\n");
  convert_options opt;
  opt.features_file = d / "feat_csc.npz";
  convert_report rep;
  dataset const ds = convert_dataset("snap", d / "g.txt", opt, &rep);
  ASSERT_EQ(ds.features.rows(), 3);
  EXPECT_EQ(ds.features.values(), kDense);
  EXPECT_THAT(rep.notes.back(), HasSubstr("feat_csc.npz:data/indices/indptr/shape: sparse csc 3 x "
                                          "4 with 3 stored entries -> dense 3 x 4 float32"));
  // The same archive as the main npz input: not square, so not an adjacency.
  EXPECT_THAT(error_of([&] { (void)convert_npz(d / "feat_csc.npz", {}); }),
              HasSubstr("a 3 x 4 sparse matrix is not an adjacency (it must be square); a SciPy "
                        "feature matrix (scipy.sparse.save_npz) goes with --features FILE"));
  // A format scipy can write but this reader does not take.
  write_zip(d / "bsr.npz", csc("bsr"));
  opt.features_file = d / "bsr.npz";
  EXPECT_THAT(error_of([&] { (void)convert_dataset("snap", d / "g.txt", opt); }),
              HasSubstr("bsr.npz:format: sparse format 'bsr' is not supported: expected b'csr', "
                        "b'csc' or b'coo'"));
  // COO, as save_npz writes a coo_matrix (row, col, data, shape, format): the same values.
  std::vector<std::int32_t> const row = {1, 0, 1};
  std::vector<std::int32_t> const col = {3, 1, 0};
  std::vector<float> const cdata = {3, 1.5f, 2};
  write_zip(d / "coo.npz", {{"row.npy", npy_of("<i4", "(3,)", row)},
                            {"col.npy", npy_of("<i4", "(3,)", col)},
                            {"format.npy", npy_bytes_string("coo")},
                            {"shape.npy", npy_of("<i8", "(2,)", shape)},
                            {"data.npy", npy_of("<f4", "(3,)", cdata)}});
  opt.features_file = d / "coo.npz";
  EXPECT_EQ(convert_dataset("snap", d / "g.txt", opt).features.values(), kDense);
}

TEST(ConvertNpz, DenseSizeOverTheLimitIsAClearError) {
  temp_dir d;
  std::vector<std::int64_t> const edges = {0, 1};
  std::vector<float> const data = {1.5f, 2, 3};
  write_zip(d / "s.npz", with_csr_attr({{"edges.npy", npy_of("<i8", "(1, 2)", edges)}}));
  convert_options opt;
  opt.max_dense_bytes = 47;  // the dense matrix takes 3 * 4 * 4 = 48 bytes
  EXPECT_THAT(error_of([&] { (void)convert_npz(d / "s.npz", opt); }),
              HasSubstr("s.npz:attr_*: dense features 3 x 4 float32 = 48 B (48 bytes) exceed "
                        "the memory limit of 47 B (47 bytes, --max-dense-bytes)"));
  opt.max_dense_bytes = 48;
  EXPECT_EQ(convert_npz(d / "s.npz", opt).features.cols(), 4);
  opt.disk_free_bytes = 40;
  EXPECT_THAT(error_of([&] { (void)convert_npz(d / "s.npz", opt); }),
              HasSubstr("exceed the free disk space of 40 B (40 bytes)"));
  // Broken structure: indptr that does not end at the number of indices.
  write_zip(d / "b.npz",
            with_csr_attr({{"edges.npy", npy_of("<i8", "(1, 2)", edges)}}, {0, 1, 3, 2}));
  EXPECT_THAT(error_of([&] { (void)convert_npz(d / "b.npz", {}); }),
              HasSubstr("b.npz:attr_indptr: must start at 0 and end at the number of indices 3"));
  write_zip(d / "p.npz", {{"edges.npy", npy_of("<i8", "(1, 2)", edges)},
                          {"attr_data.npy", npy_of("<f4", "(3,)", data)}});
  EXPECT_THAT(error_of([&] { (void)convert_npz(d / "p.npz", {}); }),
              HasSubstr("p.npz:attr_*: incomplete SciPy sparse matrix: has attr_data but not "
                        "attr_indices, attr_indptr, attr_shape"));
}

// ---- MUSAE -----------------------------------------------------------------------------------

// 6 nodes, edges stored once in mixed order (as SNAP's musae files), a quoted name with a comma.
void write_musae(const fs::path& dir) {
  write_text(dir / "musae_toy_edges.csv", "id_1,id_2\n0,1\n2,1\n2,3\n3,4\n5,4\n0,0\n");
  write_text(dir / "musae_toy_target.csv",
             "id,facebook_id,page_name,page_type\n"
             "0,11,Alpha,tvshow\n"
             "1,12,\"Beta, Inc.\",company\n"
             "2,13,Gamma,government\n"
             "3,14,Delta,company\n"
             "4,15,\"Eps \"\"E\"\"\",tvshow\n"
             "5,16,Zeta,government\n");
  write_text(dir / "musae_toy_features.json",
             "{\"0\": [0, 2], \"1\": [1], \"2\": [], \"3\": [3, 3], \"5\": [0]}");
}

TEST(ConvertMusae, ConvertsEdgesLabelsFeaturesAndSplit) {
  temp_dir d;
  write_musae(d / "fb");
  convert_report rep;
  dataset const ds = convert_musae(d / "fb", {}, &rep);
  EXPECT_EQ(ds.name, "musae_toy");
  EXPECT_EQ(ds.num_nodes, 6);
  EXPECT_EQ(
      edges_of(ds),
      (edge_set{
          {0, 0}, {0, 1}, {1, 0}, {1, 2}, {2, 1}, {2, 3}, {3, 2}, {3, 4}, {4, 3}, {4, 5}, {5, 4}}));
  // Sorted values: company=0, government=1, tvshow=2.
  EXPECT_EQ(ds.labels, (std::vector<std::int64_t>{2, 0, 1, 0, 2, 1}));
  EXPECT_EQ(ds.num_classes, 3);
  ASSERT_EQ(ds.features.rows(), 6);
  ASSERT_EQ(ds.features.cols(), 4);  // max feature id 3 + 1
  EXPECT_EQ(ds.features.values(), (std::vector<float>{1,       0, 1, 0, /*1*/ 0, 1, 0, 0,
                                                      /*2*/ 0, 0, 0, 0, /*3*/ 0, 0, 0, 2,
                                                      /*4*/ 0, 0, 0, 0, /*5*/ 1, 0, 0, 0}));
  // 6 * 0.6 = 3.6 -> 4 train, 6 * 0.2 = 1.2 -> 1 valid, 1 test; disjoint, covering all.
  EXPECT_EQ(ds.train.size(), 4u);
  EXPECT_EQ(ds.valid.size(), 1u);
  EXPECT_EQ(ds.test.size(), 1u);
  std::set<vid_t> all(ds.train.begin(), ds.train.end());
  all.insert(ds.valid.begin(), ds.valid.end());
  all.insert(ds.test.begin(), ds.test.end());
  EXPECT_EQ(all.size(), 6u);
  std::string const notes = fmt::format("{}", fmt::join(rep.notes, "\n"));
  EXPECT_THAT(notes, HasSubstr("musae_toy_edges.csv:1: header line 'id_1,id_2' skipped"));
  EXPECT_THAT(notes, HasSubstr("labels from column 'page_type': 3 distinct values mapped to class "
                               "ids 0..2 in sorted order (company=0, government=1, tvshow=2)"));
  EXPECT_THAT(notes, HasSubstr("musae_toy_features.json: bag of words, 6 feature ids listed for 5 "
                               "of 6 nodes -> dense 6 x 4 float32 = 96 B"));
  EXPECT_THAT(notes, HasSubstr("edges are undirected, each stored once: symmetrized, 6 -> 11 "
                               "edges; --directed keeps them as stored"));

  // An integer column as labels; --directed keeps the edges as stored.
  convert_options opt;
  opt.label_column = "facebook_id";
  opt.directed = true;
  dataset const d2 = convert_musae(d / "fb", opt);
  EXPECT_EQ(d2.labels, (std::vector<std::int64_t>{11, 12, 13, 14, 15, 16}));
  EXPECT_EQ(d2.num_classes, 17);
  EXPECT_EQ(d2.num_edges(), 6);
}

TEST(ConvertMusae, RejectionsNameTheFile) {
  temp_dir d;
  fs::path const dir = d / "fb";
  write_musae(dir);
  auto err = [&](const convert_options& opt = {}) {
    return error_of([&] { (void)convert_musae(dir, opt); });
  };
  convert_options opt;
  opt.label_column = "kind";
  EXPECT_THAT(err(opt), HasSubstr("musae_toy_target.csv:1: no label column 'kind' "
                                  "(--label-column); columns are: id, facebook_id, page_name, "
                                  "page_type"));
  write_text(dir / "musae_toy_features.json", "{\"0\": [0, 2], \"1\": [1");
  EXPECT_THAT(err(), HasSubstr("musae_toy_features.json: not valid JSON"));
  write_text(dir / "musae_toy_features.json", "{\"0\": [0, -2]}");
  EXPECT_THAT(err(), HasSubstr("musae_toy_features.json: key \"0\": expected an array of "
                               "non-negative integer feature ids, found [0,-2]"));
  write_text(dir / "musae_toy_features.json", "{\"9\": [0]}");
  EXPECT_THAT(err(), HasSubstr("musae_toy_features.json: key \"9\" is not a node id: expected an "
                               "integer 0..5"));
  write_text(dir / "musae_toy_features.json", "{}");
  write_text(dir / "musae_toy_edges.csv", "id_1,id_2\n0,1\n1,6\n");
  EXPECT_THAT(err(), HasSubstr("musae_toy_edges.csv:3: edge 1 -> 6 has an id out of range: "));
  write_text(dir / "musae_toy_edges.csv", "id_1,id_2\n0,1\n");
  write_text(dir / "musae_toy_target.csv", "id,page_type\n0,a\n7,b\n");
  EXPECT_THAT(err(), HasSubstr("musae_toy_target.csv:3: node id 7 is out of range: 2 rows"));
  write_text(dir / "musae_toy_target.csv", "node,name\n0,a\n1,b\n");
  EXPECT_THAT(err(), HasSubstr("musae_toy_target.csv:1: no node id column 'id'; columns are: "
                               "node, name; choose one with --id-column NAME"));
  opt = {};
  opt.id_column = "node";
  EXPECT_THAT(err(opt), HasSubstr("no label column (tried target, ml_target, page_type, mature); "
                                  "columns are: node, name; choose one with --label-column"));
  fs::remove(dir / "musae_toy_features.json");
  EXPECT_THAT(err(), HasSubstr("missing file NAME_features.json (a MUSAE directory holds "
                               "NAME_edges.csv, NAME_target.csv and NAME_features.json; files "
                               "here: musae_toy_edges.csv, musae_toy_target.csv)"));
  write_text(dir / "a_features.json", "{}");
  write_text(dir / "b_features.json", "{}");
  EXPECT_THAT(err(), HasSubstr("several files NAME_features.json (a_features.json, "
                               "b_features.json)"));
  EXPECT_THAT(error_of([&] { (void)convert_dataset("csv", dir, {}); }),
              HasSubstr("expected ogb, snap, npz, lightgcn, musae, heco or mag240m"));
}

// ---- HeCo (heterogeneous) -------------------------------------------------------------------

/// A HeCo directory with 4 papers, 3 authors, 2 subjects; paper features = kDense's rows padded
/// to 4 papers (CSR members as scipy.sparse.save_npz writes them).
void write_tiny_heco(const fs::path& d) {
  write_text(d / "pa.txt", "0\t0\n0\t1\n1\t1\n2\t2\n3\t0\n1\t1\n");  // (1, 1) twice
  write_text(d / "ps.txt", "0\t0\n1\t1\n2\t1\n3\t0\n");
  std::vector<double> const labels = {0, 1, 2, 1};
  write_text(d / "labels.npy", npy_of("<f8", "(4,)", labels));
  // 4 x 4: rows 0..2 = kDense, row 3 = [0 0 5 0].
  std::vector<std::int64_t> const shape = {4, 4};
  std::vector<std::int32_t> const indptr = {0, 1, 3, 3, 4};
  std::vector<std::int32_t> const indices = {1, 0, 3, 2};
  std::vector<double> const data = {1.5, 2, 3, 5};
  write_zip(d / "p_feat.npz", {{"indices.npy", npy_of("<i4", "(4,)", indices)},
                               {"indptr.npy", npy_of("<i4", "(5,)", indptr)},
                               {"format.npy", npy_bytes_string("csr")},
                               {"shape.npy", npy_of("<i8", "(2,)", shape)},
                               {"data.npy", npy_of("<f8", "(4,)", data)}});
  for (const char* k : {"20", "40", "60"}) {
    write_text(d / (std::string("train_") + k + ".npy"),
               npy_of("<i8", "(2,)", std::vector<std::int64_t>{0, 3}));
    write_text(d / (std::string("val_") + k + ".npy"),
               npy_of("<i8", "(1,)", std::vector<std::int64_t>{1}));
    write_text(d / (std::string("test_") + k + ".npy"),
               npy_of("<i8", "(1,)", std::vector<std::int64_t>{2}));
  }
}

TEST(ConvertHeco, TypesRelationsBothWaysFeaturesAndSplit) {
  temp_dir d;
  write_tiny_heco(d.path());
  convert_report rep;
  dataset const ds = convert_heco(d.path(), {}, &rep);
  ASSERT_TRUE(ds.hetero.has_value());
  const hetero_schema& h = *ds.hetero;
  EXPECT_EQ(h.node_types, (std::vector<std::string>{"paper", "author", "subject"}));
  EXPECT_EQ(h.node_offsets, (std::vector<vid_t>{0, 4, 7, 9}));
  EXPECT_EQ(ds.num_nodes, 9);
  // Typed edges as (relation, src, dst) in global ids: authors 4..6, subjects 7..8.
  std::set<std::tuple<int, vid_t, vid_t>> got;
  for (std::size_t e = 0; e < ds.src.size(); ++e)
    got.insert({h.edge_type[e], ds.src[e], ds.dst[e]});
  std::set<std::tuple<int, vid_t, vid_t>> const want = {
      {0, 0, 4}, {0, 0, 5}, {0, 1, 5}, {0, 2, 6}, {0, 3, 4},  // paper -> author (dup removed)
      {1, 4, 0}, {1, 5, 0}, {1, 5, 1}, {1, 6, 2}, {1, 4, 3},  // author -> paper
      {2, 0, 7}, {2, 1, 8}, {2, 2, 8}, {2, 3, 7},             // paper -> subject
      {3, 7, 0}, {3, 8, 1}, {3, 8, 2}, {3, 7, 3}};            // subject -> paper
  EXPECT_EQ(got, want);
  EXPECT_EQ(ds.num_edges(), 18);
  EXPECT_EQ(rep.edges.duplicates_removed, 1);
  ASSERT_EQ(h.features[0].rows(), 4);
  ASSERT_EQ(h.features[0].cols(), 4);
  std::vector<float> feat = kDense;
  feat.insert(feat.end(), {0, 0, 5, 0});
  EXPECT_EQ(h.features[0].values(), feat);
  EXPECT_EQ(h.features[1].rows(), 0);
  EXPECT_EQ(h.target_type, "paper");
  EXPECT_EQ(ds.num_classes, 3);
  EXPECT_EQ(ds.train, (std::vector<vid_t>{0, 3}));
  EXPECT_EQ(ds.labels, (std::vector<std::int64_t>{0, 1, 2, 1, -1, -1, -1, -1, -1}));
  EXPECT_EQ(ds.task_name, "node_classification_20");

  // Round trip through the typed on-disk layout.
  write_dataset(ds, d / "out");
  dataset_read_options ro;
  ro.heterogeneous = true;
  dataset const back = read_dataset(d / "out", ro);
  ASSERT_TRUE(back.hetero.has_value());
  std::set<std::tuple<int, vid_t, vid_t>> again;
  for (std::size_t e = 0; e < back.src.size(); ++e) {
    again.insert({back.hetero->edge_type[e], back.src[e], back.dst[e]});
  }
  EXPECT_EQ(again, want);
  EXPECT_EQ(back.hetero->node_offsets, h.node_offsets);
  EXPECT_EQ(back.hetero->features[0].values(), feat);
  EXPECT_EQ(back.labels, ds.labels);
  EXPECT_EQ(back.train, ds.train);
  EXPECT_EQ(back.valid, ds.valid);
  EXPECT_EQ(back.test, ds.test);
  // Without the flag a typed dataset is refused, saying why.
  EXPECT_THAT(error_of([&] { (void)read_dataset(d / "out"); }),
              HasSubstr("3 node types and 4 edge types: a heterogeneous graph"));
}

TEST(ConvertHeco, BadInputsNameTheFile) {
  temp_dir d;
  write_tiny_heco(d.path());
  convert_options opt;
  opt.labels_per_class = 30;
  EXPECT_THAT(error_of([&] { (void)convert_heco(d.path(), opt); }),
              HasSubstr("--labels-per-class 30: HeCo's splits have 20, 40 or 60"));
  write_text(d / "pa.txt", "0\t0\n9\t1\n");
  EXPECT_THAT(error_of([&] { (void)convert_heco(d.path(), {}); }),
              HasSubstr("pa.txt:2: paper id 9 is out of range: there are 4 papers"));
  write_text(d / "pa.txt", "0 0 0\n");
  EXPECT_THAT(error_of([&] { (void)convert_heco(d.path(), {}); }),
              HasSubstr("pa.txt:1: expected 'paper<TAB>author id', found 3 fields"));
  write_tiny_heco(d.path());
  write_text(d / "test_20.npy", npy_of("<i8", "(1,)", std::vector<std::int64_t>{4}));
  EXPECT_THAT(error_of([&] { (void)convert_heco(d.path(), {}); }),
              HasSubstr("test_20.npy: index 0 = 4 is not a paper id (there are 4 papers)"));
  fs::remove(d / "ps.txt");
  EXPECT_THAT(error_of([&] { (void)convert_heco(d.path(), {}); }),
              HasSubstr("ps.txt: missing file"));
}

TEST(ConvertHeco, TheBundledAcmMatchesItsPublishedCounts) {
  // HeCo's ACM files; counts from data/README.md ("Raw datasets"), not from the code.
  fs::path const acm = shared_data() / "acm";
  if (!fs::is_directory(acm)) GTEST_SKIP() << acm << " is not present";
  dataset const ds = convert_heco(acm, {});
  const hetero_schema& h = *ds.hetero;
  EXPECT_EQ(h.node_offsets, (std::vector<vid_t>{0, 4019, 4019 + 7167, 4019 + 7167 + 60}));
  std::vector<std::int64_t> per(4, 0);
  for (std::int32_t r : h.edge_type) ++per[static_cast<std::size_t>(r)];
  EXPECT_EQ(per, (std::vector<std::int64_t>{13407, 13407, 4019, 4019}));
  EXPECT_EQ(h.features[0].cols(), 1902);
  std::vector<std::int64_t> counts(3, 0);
  for (vid_t v = 0; v < 4019; ++v) ++counts[static_cast<std::size_t>(ds.labels[v])];
  EXPECT_EQ(counts, (std::vector<std::int64_t>{1993, 965, 1061}));
  EXPECT_EQ(ds.train.size(), 60u);
  EXPECT_EQ(ds.valid.size(), 1000u);
  EXPECT_EQ(ds.test.size(), 1000u);
  // 20 labelled papers per class.
  std::vector<std::int64_t> train_counts(3, 0);
  for (vid_t v : ds.train) ++train_counts[static_cast<std::size_t>(ds.labels[v])];
  EXPECT_EQ(train_counts, (std::vector<std::int64_t>{20, 20, 20}));
}
}  // namespace
}  // namespace coopgnn
