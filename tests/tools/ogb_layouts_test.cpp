// OGB's binary node-property layout (convert_ogb on raw/data.npz, as ogbn-papers100M is
// distributed) and OGB-LSC's MAG240M layout (convert_mag240m): files written here byte for byte
// as numpy writes them (np.savez / np.savez_compressed zip members holding version 1.0 .npy
// images; np.save files), then converted, detected, and trained for one epoch.
#include <fmt/ranges.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <zip.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "formats/formats.hpp"
#include "runtime/core/error.hpp"
#include "runtime/graph/npy.hpp"
#include "runtime/graph/npz.hpp"
#include "tests/common/cli.hpp"
#include "tests/common/files.hpp"

namespace coopgnn {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using test::error_of;
using test::temp_dir;
using test::write_text;
namespace fs = std::filesystem;

/// The bytes numpy.save writes for `values` with `dtype` and `shape`.
template <typename T>
std::string npy_bytes(npy_dtype dtype, std::vector<std::int64_t> shape,
                      const std::vector<T>& values) {
  return make_npy_header(dtype, shape) +
         std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T));
}

/// An .npz: members "NAME.npy", deflated as np.savez_compressed writes them, or stored as
/// np.savez does.
void write_npz(const fs::path& p, const std::vector<std::pair<std::string, std::string>>& members,
               bool compressed) {
  fs::create_directories(p.parent_path());
  int err = 0;
  zip_t* za = zip_open(p.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &err);
  ASSERT_NE(za, nullptr);
  for (const auto& [name, bytes] : members) {
    zip_source_t* src = zip_source_buffer(za, bytes.data(), bytes.size(), 0);
    ASSERT_NE(src, nullptr);
    zip_int64_t const idx = zip_file_add(za, (name + ".npy").c_str(), src, ZIP_FL_OVERWRITE);
    ASSERT_GE(idx, 0);
    ASSERT_EQ(zip_set_file_compression(za, static_cast<zip_uint64_t>(idx),
                                       compressed ? ZIP_CM_DEFLATE : ZIP_CM_STORE, 0),
              0);
  }
  ASSERT_EQ(zip_close(za), 0);
}

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// ---- a member read a range at a time (npz_two_row_reader) ---------------------------------

TEST(NpzTwoRowReader, ReadsRangesOfStoredAndDeflatedMembersInAnyOrder) {
  // (2, N) with row 0 = 3 i + 1 and row 1 = N - i: every value names its place.
  std::int64_t const n = 300000;
  std::vector<std::int64_t> ei(static_cast<std::size_t>(2 * n));
  for (std::int64_t i = 0; i < n; ++i) {
    ei[static_cast<std::size_t>(i)] = 3 * i + 1;
    ei[static_cast<std::size_t>(n + i)] = n - i;
  }
  for (bool compressed : {false, true}) {
    SCOPED_TRACE(compressed ? "deflated" : "stored");
    temp_dir d;
    write_npz(d / "a.npz", {{"edge_index", npy_bytes(npy_dtype::int64, {2, n}, ei)}}, compressed);
    npz_archive const z(d / "a.npz");
    npz_two_row_reader r(z, "edge_index");
    ASSERT_EQ(r.columns(), n);
    // Backwards, so that every range lies behind the streams (a deflated member is reopened).
    for (std::int64_t first : {n - 1000, std::int64_t{150000}, std::int64_t{7}}) {
      std::vector<std::int64_t> a(1000);
      std::vector<std::int64_t> b(1000);
      r.read(first, a, b);
      for (std::int64_t i = 0; i < 1000; ++i) {
        ASSERT_EQ(a[static_cast<std::size_t>(i)], 3 * (first + i) + 1);
        ASSERT_EQ(b[static_cast<std::size_t>(i)], n - (first + i));
      }
    }
    std::vector<std::int64_t> only(5);
    r.read(n - 5, {}, only);
    EXPECT_THAT(only, ElementsAre(5, 4, 3, 2, 1));
    EXPECT_EQ(z.header("edge_index").shape, (std::vector<std::int64_t>{2, n}));
  }
  temp_dir d;
  std::vector<std::int64_t> const flat = {1, 2, 3};
  write_npz(d / "b.npz", {{"x", npy_bytes(npy_dtype::int64, {3}, flat)}}, true);
  npz_archive const z(d / "b.npz");
  EXPECT_THAT(error_of([&] { npz_two_row_reader r(z, "x"); }),
              HasSubstr("b.npz:x: edges must have shape (2, E)"));
  EXPECT_THAT(error_of([&] { npz_two_row_reader r(z, "y"); }), HasSubstr("no member 'y'"));
}

// ---- OGB binary ------------------------------------------------------------------------------

/// An 8-node path 0-1-...-7 stored once (src < dst), 2 float32 features per node, labels
/// 0,1,0,1,0,1,0,NaN, split/time: train {0, 1}, valid {2, 3}, test {4, 5}.
void write_ogb_binary(const fs::path& d, bool compressed, bool half = false,
                      std::int64_t declared_edges = 7) {
  std::vector<std::int64_t> const ei = {0, 1, 2, 3, 4, 5, 6, /*dst*/ 1, 2, 3, 4, 5, 6, 7};
  std::vector<float> const feat = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
  // float16 bit patterns (0.5, 1, 1.5, 2, ...), copied as they are.
  std::vector<std::uint16_t> const feat16 = {0x3800, 0x3C00, 0x3E00, 0x4000, 0x4100, 0x4200,
                                             0x4300, 0x4400, 0x4480, 0x4500, 0x4580, 0x4600,
                                             0x4680, 0x4700, 0x4780, 0x4800};
  std::vector<std::pair<std::string, std::string>> m = {
      {"edge_index", npy_bytes(npy_dtype::int64, {2, 7}, ei)},
      {"num_nodes_list", npy_bytes(npy_dtype::int64, {1}, std::vector<std::int64_t>{8})},
      {"num_edges_list",
       npy_bytes(npy_dtype::int64, {1}, std::vector<std::int64_t>{declared_edges})},
  };
  m.emplace_back("node_year", npy_bytes(npy_dtype::int64, {8, 1}, std::vector<std::int64_t>(8, 2020)));
  m.emplace_back("node_feat", half ? npy_bytes(npy_dtype::float16, {8, 2}, feat16)
                                   : npy_bytes(npy_dtype::float32, {8, 2}, feat));
  write_npz(d / "raw" / "data.npz", m, compressed);
  std::vector<double> const labels = {0, 1, 0, 1, 0, 1, 0, kNaN};
  write_npz(d / "raw" / "node-label.npz",
            {{"node_label", npy_bytes(npy_dtype::float64, {8, 1}, labels)}}, compressed);
  write_text(d / "split" / "time" / "train.csv", "0\n1\n");
  write_text(d / "split" / "time" / "valid.csv", "2\n3\n");
  write_text(d / "split" / "time" / "test.csv", "4\n5\n");
}

TEST(OgbBinary, StoredAndCompressedArchivesConvertAlike) {
  for (bool compressed : {false, true}) {
    SCOPED_TRACE(compressed ? "np.savez_compressed" : "np.savez");
    temp_dir d;
    write_ogb_binary(d.path(), compressed);
    convert_report rep;
    dataset const ds = convert_ogb(d.path(), {}, &rep);
    EXPECT_EQ(ds.num_nodes, 8);
    // Stored once (every src < dst): symmetrized, 7 -> 14 edges.
    EXPECT_EQ(ds.src.size(), 14U);
    EXPECT_EQ(rep.edges.edges_final, 14);
    EXPECT_EQ(ds.features.rows(), 8);
    EXPECT_EQ(ds.features.cols(), 2);
    EXPECT_FLOAT_EQ(ds.features(3, 1), 7.0F);
    EXPECT_THAT(ds.labels, ElementsAre(0, 1, 0, 1, 0, 1, 0, -1));
    EXPECT_EQ(ds.num_classes, 2);
    EXPECT_THAT(ds.train, ElementsAre(0, 1));
    EXPECT_THAT(ds.valid, ElementsAre(2, 3));
    EXPECT_THAT(ds.test, ElementsAre(4, 5));
    EXPECT_EQ(rep.split, "time");
    ASSERT_GE(rep.files_read.size(), 2U);
    EXPECT_THAT(rep.files_read[0], HasSubstr("data.npz"));
    EXPECT_THAT(rep.files_read[1], HasSubstr("node-label.npz"));
    EXPECT_EQ(detect_input_format(d.path()).name, "ogb");
    EXPECT_THAT(fmt::format("{}", fmt::join(rep.notes, "\n")),
                HasSubstr("data.npz:node_year: not read (extra node or graph data)"));
  }
}

TEST(OgbBinary, Float16FeaturesStayAtTwoBytes) {
  temp_dir d;
  write_ogb_binary(d.path(), true, /*half=*/true);
  dataset const ds = convert_ogb(d.path(), {});
  EXPECT_EQ(ds.feature_type, feature_dtype::float16);
  EXPECT_EQ(ds.features.rows(), 0);
  ASSERT_EQ(ds.features16.rows(), 8);
  EXPECT_EQ(ds.features16(0, 0), 0x3800);
  EXPECT_EQ(ds.features16(7, 1), 0x4800);
}

TEST(OgbBinary, BadFilesNameTheFile) {
  temp_dir d;
  write_ogb_binary(d.path(), true, false, /*declared_edges=*/5);
  EXPECT_THAT(error_of([&] { (void)convert_ogb(d.path(), {}); }),
              HasSubstr("data.npz:num_edges_list: says 5 edges but edge_index has 7"));

  write_ogb_binary(d.path(), true);
  std::string const whole = test::read_text(d / "raw" / "data.npz");
  write_text(d / "raw" / "data.npz", whole.substr(0, whole.size() / 2));
  EXPECT_THAT(error_of([&] { (void)convert_ogb(d.path(), {}); }), HasSubstr("data.npz"));

  write_ogb_binary(d.path(), false);
  std::vector<double> const short_labels = {0, 1, 0};
  write_npz(d / "raw" / "node-label.npz",
            {{"node_label", npy_bytes(npy_dtype::float64, {3, 1}, short_labels)}}, false);
  EXPECT_THAT(error_of([&] { (void)convert_ogb(d.path(), {}); }),
              HasSubstr("node-label.npz:node_label: shape (3, 1) but expected [8] or [8, 1]"));

  std::vector<double> const bad_labels = {0, 1, 0.5, 1, 0, 1, 0, 1};
  write_npz(d / "raw" / "node-label.npz",
            {{"node_label", npy_bytes(npy_dtype::float64, {8, 1}, bad_labels)}}, false);
  EXPECT_THAT(error_of([&] { (void)convert_ogb(d.path(), {}); }),
              HasSubstr("node-label.npz:node_label: row 2: label 0.5 is not a class id"));

  write_ogb_binary(d.path(), false);
  std::vector<std::int64_t> const far = {0, 1, 2, 3, 1, 2, 3, 8};
  write_npz(d / "raw" / "data.npz",
            {{"edge_index", npy_bytes(npy_dtype::int64, {2, 4}, far)},
             {"num_nodes_list", npy_bytes(npy_dtype::int64, {1}, std::vector<std::int64_t>{8})}},
            false);
  EXPECT_THAT(error_of([&] { (void)convert_ogb(d.path(), {}); }),
              HasSubstr("data.npz:edge_index: edge 3 (3 -> 8) has an id out of range: |V| = 8"));
}

TEST(OgbBinary, ConvertsAndTrainsThroughTheCommandLine) {
  temp_dir d;
  for (bool half : {false, true}) {
    SCOPED_TRACE(half ? "float16 node_feat" : "float32 node_feat");
    std::string const out = (d / (half ? "out16" : "out32")).string();
    write_ogb_binary(d / "papers", true, half);
    test::run_data_cli({"convert", (d / "papers").string(), out});
    EXPECT_EQ(test::run_train_cli(test::tiny_run_args("train", "8", "1", {}, out)), "");
  }
  // The float16 table is written at its width: 8 x 2 x 2 bytes after the .npy header.
  fs::path const feat = d / "out16" / "data" / "feat.npy";
  ASSERT_TRUE(fs::exists(feat));
  EXPECT_EQ(read_npy_header(feat).dtype, npy_dtype::float16);
  EXPECT_EQ(fs::file_size(feat), read_npy_header(feat).data_offset + 32);
}

// ---- MAG240M ---------------------------------------------------------------------------------

/// 6 papers, 3 authors, 2 institutions. cites 0->1, 1->2, 2->3, 3->4, 4->5; writes (a0,p0)
/// twice, (a1,p1), (a2,p2), (a2,p3); affiliated_with (a0,i0), (a1,i1), (a2,i1). Labels 0, 1,
/// NaN, 1, 0, 0 (float32). Paper features float16 [6, 3] (as released) or float32.
/// split/train.npy {0, 1}, split/valid.npy {3, 4}, no test.npy.
void write_mag240m(const fs::path& d, bool half = true) {
  fs::path const p = d / "processed";
  auto save = [](const fs::path& f, const std::string& bytes) { write_text(f, bytes); };
  save(p / "paper___cites___paper" / "edge_index.npy",
       npy_bytes(npy_dtype::int64, {2, 5}, std::vector<std::int64_t>{0, 1, 2, 3, 4, 1, 2, 3, 4, 5}));
  save(p / "author___writes___paper" / "edge_index.npy",
       npy_bytes(npy_dtype::int64, {2, 5},
                 std::vector<std::int64_t>{0, 0, 1, 2, 2, /*papers*/ 0, 0, 1, 2, 3}));
  save(p / "author___affiliated_with___institution" / "edge_index.npy",
       npy_bytes(npy_dtype::int64, {2, 3}, std::vector<std::int64_t>{0, 1, 2, 0, 1, 1}));
  save(p / "paper" / "node_label.npy",
       npy_bytes(npy_dtype::float32, {6},
                 std::vector<float>{0, 1, std::numeric_limits<float>::quiet_NaN(), 1, 0, 0}));
  if (half) {
    save(p / "paper" / "node_feat.npy",
         npy_bytes(npy_dtype::float16, {6, 3}, std::vector<std::uint16_t>(18, 0x3C00)));
  } else {
    save(p / "paper" / "node_feat.npy",
         npy_bytes(npy_dtype::float32, {6, 3}, std::vector<float>(18, 2.5F)));
  }
  save(p / "paper" / "node_year.npy",
       npy_bytes(npy_dtype::int64, {6},
                 std::vector<std::int64_t>{2019, 2019, 2020, 2021, 2021, 2021}));
  save(d / "split" / "train.npy", npy_bytes(npy_dtype::int64, {2}, std::vector<std::int64_t>{0, 1}));
  save(d / "split" / "valid.npy",
       npy_bytes(npy_dtype::int64, {2}, std::vector<std::int64_t>{3, 4}));
}

TEST(Mag240m, TypesRelationsLabelsAndSplit) {
  temp_dir d;
  write_mag240m(d.path());
  convert_report rep;
  dataset const ds = convert_mag240m(d.path(), {}, &rep);
  ASSERT_TRUE(ds.hetero.has_value());
  const hetero_schema& h = *ds.hetero;
  EXPECT_THAT(h.node_types, ElementsAre("paper", "author", "institution"));
  EXPECT_THAT(h.node_offsets, ElementsAre(0, 6, 9, 11));
  EXPECT_EQ(ds.num_nodes, 11);
  EXPECT_THAT(h.edge_types,
              ElementsAre("paper:cites:paper", "author:writes:paper", "paper:rev_writes:author",
                          "author:affiliated_with:institution",
                          "institution:rev_affiliated_with:author"));
  // 10 symmetrized citations, 4 distinct writes both ways, 3 affiliations both ways.
  ASSERT_EQ(ds.src.size(), 24U);
  EXPECT_EQ(rep.edges.duplicates_removed, 1);
  // The first writes edge: author 0 (global 6) -> paper 0; its reverse at 10 + 4 = 14.
  EXPECT_EQ(ds.src[10], 6);
  EXPECT_EQ(ds.dst[10], 0);
  EXPECT_EQ(h.edge_type[10], 1);
  EXPECT_EQ(ds.src[14], 0);
  EXPECT_EQ(ds.dst[14], 6);
  EXPECT_EQ(h.edge_type[14], 2);
  // The last affiliation reverse: institution 1 (global 10) -> author 2 (global 8).
  EXPECT_EQ(ds.src[23], 10);
  EXPECT_EQ(ds.dst[23], 8);
  EXPECT_THAT(ds.labels, ElementsAre(0, 1, -1, 1, 0, 0, -1, -1, -1, -1, -1));
  EXPECT_EQ(ds.num_classes, 2);
  EXPECT_THAT(ds.train, ElementsAre(0, 1));
  EXPECT_THAT(ds.valid, ElementsAre(3, 4));
  EXPECT_TRUE(ds.test.empty());
  EXPECT_EQ(h.target_type, "paper");
  // float16 features: neither widened nor read, left in the release's file at 2 bytes.
  EXPECT_EQ(h.features[0].rows(), 0);
  EXPECT_EQ(h.feature_type(0), feature_dtype::float16);
  EXPECT_EQ(h.feature_dim(0), 3);
  EXPECT_EQ(h.feature_dim(1), 0);
  ASSERT_TRUE(h.features_in_file(0));
  EXPECT_EQ(fs::canonical(h.feature_files[0]),
            fs::canonical(d / "processed" / "paper" / "node_feat.npy"));
  EXPECT_THAT(fmt::format("{}", fmt::join(rep.notes, "\n")),
              HasSubstr("node_feat.npy: float16 [6, 3] paper features kept at 2 bytes per "
                        "element and not copied"));
  EXPECT_EQ(detect_input_format(d.path()).name, "mag240m");

  write_mag240m(d.path(), /*half=*/false);
  dataset const f32 = convert_mag240m(d.path(), {});
  ASSERT_EQ(f32.hetero->features[0].rows(), 6);
  EXPECT_FLOAT_EQ(f32.hetero->features[0](3, 2), 2.5F);
}

TEST(Mag240m, BadFilesNameTheFile) {
  temp_dir d;
  write_mag240m(d.path());
  fs::path const writes = d / "processed" / "author___writes___paper" / "edge_index.npy";
  std::string const whole = test::read_text(writes);
  write_text(writes, whole.substr(0, whole.size() - 8));
  EXPECT_THAT(error_of([&] { (void)convert_mag240m(d.path(), {}); }),
              HasSubstr("author___writes___paper/edge_index.npy"));

  write_mag240m(d.path());
  write_text(writes, npy_bytes(npy_dtype::int64, {2, 1}, std::vector<std::int64_t>{0, 6}));
  EXPECT_THAT(error_of([&] { (void)convert_mag240m(d.path(), {}); }),
              HasSubstr("author___writes___paper/edge_index.npy: edge 0 (0 -> 6) out of range"));

  write_mag240m(d.path());
  fs::remove(d / "split" / "valid.npy");
  EXPECT_THAT(error_of([&] { (void)convert_mag240m(d.path(), {}); }),
              HasSubstr("valid.npy: missing file"));

  write_mag240m(d.path());
  write_text(d / "split" / "train.npy",
             npy_bytes(npy_dtype::int64, {1}, std::vector<std::int64_t>{2}));
  EXPECT_THAT(error_of([&] { (void)convert_mag240m(d.path(), {}); }),
              HasSubstr("train.npy: paper 2 has no label (NaN)"));
}

TEST(Mag240m, ConvertsAndTrainsThroughTheCommandLine) {
  temp_dir d;
  write_mag240m(d / "mag240m_kddcup2021");
  test::run_data_cli({"convert", (d / "mag240m_kddcup2021").string(), (d / "out").string()});
  // The paper features are a link to the release's float16 file, not a copy.
  fs::path const feat = d / "out" / "data" / "paper_feat.npy";
  ASSERT_TRUE(fs::is_symlink(feat));
  EXPECT_EQ(fs::canonical(feat),
            fs::canonical(d / "mag240m_kddcup2021" / "processed" / "paper" / "node_feat.npy"));
  // Trained with them (papers 3 wide; authors and institutions learn 3-wide embeddings), the
  // paper rows counted at 2 bytes per element.
  fs::path const metrics = d / "m.jsonl";
  EXPECT_EQ(test::run_train_cli(test::tiny_run_args(
                "train", "8", "1", {"--model", "rgcn", "--metrics-out", metrics.string()},
                (d / "out").string())),
            "");
  // The epoch's line (the selection record follows it).
  std::string const text = test::read_text(metrics);
  auto const j = nlohmann::json::parse(text.substr(0, text.find('\n')));
  auto const& per = j["work"]["feature_rows_per_type"];
  std::int64_t const papers = per["paper"].get<std::int64_t>();
  EXPECT_GT(papers, 0);
  EXPECT_EQ(
      j["work"]["feature_bytes"].get<std::int64_t>(),
      papers * 3 * 2 +
          (per["author"].get<std::int64_t>() + per["institution"].get<std::int64_t>()) * 3 * 4);
}

}  // namespace
}  // namespace coopgnn
