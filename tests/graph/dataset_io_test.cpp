// Dataset directories in GraphBolt's OnDiskDataset layout (runtime/graph/dataset.hpp,
// metadata.hpp): round trips, hand-written GraphBolt metadata, and every rejected input.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "runtime/core/error.hpp"
#include "runtime/graph/dataset.hpp"
#include "runtime/graph/metadata.hpp"
#include "runtime/graph/npy.hpp"
#include "tests/common/files.hpp"
namespace coopgnn {
namespace {

using test::error_of;
using test::read_text;
using test::temp_dir;
using test::write_text;

namespace fs = std::filesystem;
using ::testing::HasSubstr;

void replace_in_file(const fs::path& p, const std::string& from, const std::string& to) {
  std::string s = read_text(p);
  auto const pos = s.find(from);
  ASSERT_NE(pos, std::string::npos) << from;
  s.replace(pos, from.size(), to);
  write_text(p, s);
}

void write_i64(const fs::path& p, const std::vector<std::int64_t>& v,
               std::vector<std::int64_t> shape) {
  write_npy(p, std::span<const std::int64_t>(v), shape);
}

/// 5 nodes, a directed 6-edge graph, 3 features, 3 classes, split 2/1/1 (vertex 4 unsplit).
dataset tiny() {
  dataset ds;
  ds.name = "tiny";
  ds.num_nodes = 5;
  ds.src = {0, 1, 2, 3, 4, 0};
  ds.dst = {1, 2, 3, 4, 0, 2};
  ds.features = matrix<float>(
      5, 3, std::vector<float>{0, 1, 2, 10, 11, 12, 20, 21, 22, 30, 31, 32, 40, 41, 42});
  ds.labels = {0, 1, 2, 1, 0};
  ds.num_classes = 3;
  ds.train = {0, 1};
  ds.valid = {2};
  ds.test = {3};
  return ds;
}

void expect_equal(const dataset& a, const dataset& b) {
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.num_nodes, b.num_nodes);
  EXPECT_EQ(a.src, b.src);
  EXPECT_EQ(a.dst, b.dst);
  EXPECT_EQ(a.features.rows(), b.features.rows());
  EXPECT_EQ(a.features.cols(), b.features.cols());
  EXPECT_EQ(a.features.values(), b.features.values());
  EXPECT_EQ(a.labels, b.labels);
  EXPECT_EQ(a.num_classes, b.num_classes);
  EXPECT_EQ(a.train, b.train);
  EXPECT_EQ(a.valid, b.valid);
  EXPECT_EQ(a.test, b.test);
}

// ---- round trips ---------------------------------------------------------------------------

TEST(DatasetIo, WriteReadRoundTrip) {
  temp_dir d;
  dataset const ds = tiny();
  write_dataset(ds, d.path());
  for (const char* f : {"metadata.yaml", "edges/edges.npy", "data/feat.npy", "data/label.npy",
                        "set/train_seeds.npy", "set/train_labels.npy", "set/valid_seeds.npy",
                        "set/valid_labels.npy", "set/test_seeds.npy", "set/test_labels.npy"}) {
    EXPECT_TRUE(fs::is_regular_file(d / f)) << f;
  }
  // No temporaries left anywhere.
  for (const auto& e : fs::recursive_directory_iterator(d.path())) {
    EXPECT_EQ(e.path().string().find(".tmp."), std::string::npos) << e.path();
  }
  expect_equal(read_dataset(d.path()), ds);
  // The arrays have the layout GraphBolt expects.
  auto const edges = read_npy<std::int64_t>(d / "edges/edges.npy");
  EXPECT_EQ(edges.shape, (std::vector<std::int64_t>{2, 6}));
  EXPECT_EQ(edges.stored, npy_dtype::int64);
  EXPECT_EQ(edges.data, (std::vector<std::int64_t>{0, 1, 2, 3, 4, 0, 1, 2, 3, 4, 0, 2}));
  EXPECT_EQ(read_npy<float>(d / "data/feat.npy").stored, npy_dtype::float32);
  EXPECT_EQ(read_npy<std::int64_t>(d / "set/train_labels.npy").data,
            (std::vector<std::int64_t>{0, 1}));
  // Writing again over an existing directory works.
  write_dataset(ds, d.path());
  expect_equal(read_dataset(d.path()), ds);
}

TEST(DatasetIo, MetadataFollowsGraphBoltLayout) {
  temp_dir d;
  write_dataset(tiny(), d.path());
  dataset_metadata const m = read_metadata(d / "metadata.yaml");
  EXPECT_EQ(m.dataset_name, "tiny");
  ASSERT_EQ(m.nodes.size(), 1u);
  EXPECT_FALSE(m.nodes[0].type.has_value());
  EXPECT_EQ(m.nodes[0].num, 5);
  ASSERT_EQ(m.edges.size(), 1u);
  EXPECT_EQ(m.edges[0].format, "numpy");
  EXPECT_EQ(m.edges[0].path, "edges/edges.npy");
  ASSERT_EQ(m.feature_data.size(), 2u);
  EXPECT_EQ(m.feature_data[0].domain, "node");
  EXPECT_EQ(m.feature_data[0].name, "feat");
  EXPECT_EQ(m.feature_data[0].path, "data/feat.npy");
  EXPECT_TRUE(m.feature_data[0].in_memory);
  EXPECT_EQ(m.feature_data[1].name, "label");
  ASSERT_EQ(m.tasks.size(), 1u);
  EXPECT_EQ(m.tasks[0].name, "node_classification");
  EXPECT_EQ(m.tasks[0].num_classes, 3);
  ASSERT_EQ(m.tasks[0].train_set.size(), 1u);
  ASSERT_EQ(m.tasks[0].train_set[0].data.size(), 2u);
  EXPECT_EQ(m.tasks[0].train_set[0].data[0].name, "seeds");
  EXPECT_EQ(m.tasks[0].train_set[0].data[0].path, "set/train_seeds.npy");
  EXPECT_EQ(m.tasks[0].train_set[0].data[1].name, "labels");
  EXPECT_EQ(m.tasks[0].validation_set[0].data[0].path, "set/valid_seeds.npy");
  EXPECT_EQ(m.tasks[0].test_set[0].data[1].path, "set/test_labels.npy");
  std::string const text = read_text(d / "metadata.yaml");
  EXPECT_THAT(text, HasSubstr("dataset_name: tiny"));
  EXPECT_THAT(text, HasSubstr("train_set:"));
  EXPECT_THAT(text, HasSubstr("validation_set:"));
  EXPECT_THAT(text, HasSubstr("name: seeds"));
}

TEST(DatasetIo, MetadataEmitParseRoundTripWithTypes) {
  dataset_metadata m;
  m.dataset_name = "123";  // must stay a string
  m.nodes = {{std::string("paper"), 4}, {std::string("author"), 2}};
  m.edges = {{std::string("author:writes:paper"), "csv", "e/awp.csv"}};
  m.feature_data = {{"edge", std::string("author:writes:paper"), "w", "numpy", false, "e/w.npy"}};
  task_meta t;
  t.name = "nc";
  t.train_set = {{std::string("paper"), {{std::string("seeds"), "numpy", true, "s.npy"}}}};
  m.tasks = {t};
  dataset_metadata const r = parse_metadata(emit_metadata(m), "m.yaml");
  EXPECT_EQ(r.dataset_name, "123");
  ASSERT_EQ(r.nodes.size(), 2u);
  EXPECT_EQ(r.nodes[1].type, "author");
  EXPECT_EQ(r.nodes[1].num, 2);
  EXPECT_EQ(r.edges[0].type, "author:writes:paper");
  EXPECT_EQ(r.edges[0].format, "csv");
  EXPECT_FALSE(r.feature_data[0].in_memory);
  EXPECT_EQ(r.feature_data[0].domain, "edge");
  EXPECT_FALSE(r.tasks[0].num_classes.has_value());
  EXPECT_EQ(r.tasks[0].train_set[0].type, "paper");
  EXPECT_EQ(r.tasks[0].train_set[0].data[0].path, "s.npy");
}

TEST(DatasetIo, StructureOnlyRoundTrip) {
  temp_dir d;
  dataset ds;
  ds.name = "bare";
  ds.num_nodes = 4;
  ds.src = {0, 1, 3};
  ds.dst = {1, 0, 3};
  write_dataset(ds, d.path());
  EXPECT_FALSE(fs::exists(d / "data/feat.npy"));
  EXPECT_THAT(read_text(d / "metadata.yaml"), ::testing::Not(HasSubstr("tasks")));
  expect_equal(read_dataset(d.path()), ds);
}

TEST(DatasetIo, ReadsHandWrittenGraphBoltDataset) {
  // As in DGL's OnDiskDataset tutorial for a homogeneous graph: csv edges, a node feature and
  // an edge feature, seeds + labels item sets with names chosen by the user, no num_classes.
  temp_dir d;
  write_text(d / "edges.csv", "0,1\n1,2\n2,0\n 3 , 0\n");
  std::vector<float> nf(4 * 2, 0.5f);
  std::int64_t const s42[] = {4, 2};
  write_npy(d / "nf.npy", std::span<const float>(nf), s42);
  std::vector<float> ef = {1, 2, 3, 4};
  std::int64_t const s4[] = {4};
  write_npy(d / "ef.npy", std::span<const float>(ef), s4);
  write_i64(d / "tr-s.npy", {0, 3}, {2});
  write_i64(d / "tr-l.npy", {1, 4}, {2});
  write_i64(d / "te-s.npy", {2}, {1});
  write_i64(d / "te-l.npy", {0}, {1});
  write_text(d / "metadata.yaml", R"(dataset_name: homo
graph:
  nodes:
    - num: 4
  edges:
    - format: csv
      path: edges.csv
feature_data:
  - domain: node
    name: node_feat
    format: numpy
    in_memory: true
    path: nf.npy
  - domain: edge
    name: edge_feat
    format: numpy
    in_memory: false
    path: ef.npy
tasks:
  - name: node_classification
    train_set:
      - data:
          - name: seeds
            format: numpy
            in_memory: true
            path: tr-s.npy
          - name: labels
            format: numpy
            path: tr-l.npy
    test_set:
      - data:
          - name: seeds
            format: numpy
            path: te-s.npy
          - name: labels
            format: numpy
            path: te-l.npy
)");
  // No feature is named feat: the default is an error naming the candidate, never a silent pick.
  EXPECT_THAT(error_of([&] { read_dataset(d.path()); }),
              HasSubstr("pick the input with --feature NAME, one of 'node_feat'"));
  dataset_read_options opt;
  opt.feature = "node_feat";
  dataset const ds = read_dataset(d.path(), opt);
  EXPECT_EQ(ds.name, "homo");
  EXPECT_EQ(ds.num_nodes, 4);
  EXPECT_EQ(ds.src, (std::vector<vid_t>{0, 1, 2, 3}));
  EXPECT_EQ(ds.dst, (std::vector<vid_t>{1, 2, 0, 0}));
  EXPECT_EQ(ds.feature_dim(), 2);
  EXPECT_EQ(ds.feature_name, "node_feat");
  EXPECT_EQ(ds.labels, (std::vector<std::int64_t>{1, -1, 0, 4}));
  EXPECT_EQ(ds.num_classes, 5);  // max label + 1
  EXPECT_EQ(ds.train, (std::vector<vid_t>{0, 3}));
  EXPECT_TRUE(ds.valid.empty());
  EXPECT_EQ(ds.test, (std::vector<vid_t>{2}));
}

TEST(DatasetIo, Float16FeaturesStayAtTwoBytesPerElement) {
  temp_dir d;
  dataset ds = tiny();
  // 1, 2, 3, ..., 15 as float16 (exact), plus a subnormal, -0 and the largest finite value.
  std::vector<std::uint16_t> bits = {0x3C00, 0x4000, 0x4200, 0x4400, 0x4500, 0x4600, 0x4700, 0x4800,
                                     0x4880, 0x4900, 0x4980, 0x4A00, 0x0001, 0x8000, 0x7BFF};
  ds.features = {};
  ds.features16 = matrix<std::uint16_t>(5, 3, bits);
  ds.feature_type = feature_dtype::float16;
  write_dataset(ds, d.path());
  // On disk: '<f2', 2 bytes per element (the table is not widened).
  npy_header const h = read_npy_header(d / "data" / "feat.npy");
  EXPECT_EQ(h.dtype, npy_dtype::float16);
  EXPECT_EQ(h.shape, (std::vector<std::int64_t>{5, 3}));
  EXPECT_EQ(fs::file_size(d / "data" / "feat.npy"), h.data_offset + 30);

  dataset const back = read_dataset(d.path());
  EXPECT_EQ(back.feature_type, feature_dtype::float16);
  EXPECT_TRUE(back.features_are_16bit());
  EXPECT_EQ(back.features.size(), 0);  // no float32 table
  EXPECT_EQ(back.features16.values(), bits);
  EXPECT_EQ(back.feature_dim(), 3);
  EXPECT_EQ(back.feature_row_bytes(), 6);
  EXPECT_TRUE(back.features_in_memory());
  EXPECT_EQ(back.labels, ds.labels);

  // Left in the file: the header gives the type.
  dataset_read_options opt;
  opt.load_features = false;
  dataset const mapped = read_dataset(d.path(), opt);
  EXPECT_EQ(mapped.feature_type, feature_dtype::float16);
  EXPECT_FALSE(mapped.features_in_memory());
  EXPECT_EQ(mapped.feature_dim(), 3);
  EXPECT_EQ(mapped.feature_file, d / "data" / "feat.npy");

  // inspect_dataset (coopgnn info) lists the stored dtype.
  dataset_contents const c = inspect_dataset(d.path());
  ASSERT_FALSE(c.features.empty());
  EXPECT_EQ(c.features[0].dtype, "float16");

  // .npy has no bfloat16: writing one is refused, not widened.
  ds.feature_type = feature_dtype::bfloat16;
  temp_dir e;
  EXPECT_THROW(write_dataset(ds, e.path()), logic_error);
  // 16-bit rows must match the graph.
  ds.feature_type = feature_dtype::float16;
  ds.features16 = matrix<std::uint16_t>(4, 3);
  EXPECT_THAT(error_of([&] { validate_dataset(ds, "x"); }),
              HasSubstr("features have 4 rows but the graph has 5 nodes"));
}

// ---- rejected input ------------------------------------------------------------------------

class DatasetIoErrors : public ::testing::Test {
 protected:
  void SetUp() override { write_dataset(tiny(), d.path()); }
  std::string read_error() {
    return error_of([&] { (void)read_dataset(d.path()); });
  }
  temp_dir d;
};

TEST_F(DatasetIoErrors, BrokenYaml) {
  write_text(d / "metadata.yaml", "dataset_name: x\ngraph:\n  nodes: [ {num: 5\n  edges: ]\n");
  std::string const msg = read_error();
  EXPECT_THAT(msg, HasSubstr("metadata.yaml: yaml error at line"));
  EXPECT_THAT(msg, HasSubstr("column"));
}

TEST_F(DatasetIoErrors, MissingMetadata) {
  fs::remove(d / "metadata.yaml");
  EXPECT_THAT(read_error(), HasSubstr("metadata.yaml: missing file"));
}

TEST_F(DatasetIoErrors, MissingRequiredKey) {
  replace_in_file(d / "metadata.yaml", "num: 5", "count: 5");
  EXPECT_THAT(read_error(), HasSubstr("metadata.yaml: missing required key 'graph.nodes[0].num'"));
}

TEST_F(DatasetIoErrors, WrongValueKind) {
  replace_in_file(d / "metadata.yaml", "num: 5", "num: five");
  EXPECT_THAT(read_error(),
              HasSubstr("metadata.yaml: key 'graph.nodes[0].num' (line 4) must be an integer"));
  write_dataset(tiny(), d.path());
  replace_in_file(d / "metadata.yaml", "format: numpy", "format: parquet");
  EXPECT_THAT(read_error(), HasSubstr("'graph.edges[0].format'"));
}

TEST_F(DatasetIoErrors, MissingFile) {
  fs::remove(d / "data/feat.npy");
  std::string const msg = read_error();
  EXPECT_THAT(msg, HasSubstr("feat.npy: missing file"));
  EXPECT_THAT(msg, HasSubstr("feature_data[0].path"));
}

TEST_F(DatasetIoErrors, EmptyGraph) {
  replace_in_file(d / "metadata.yaml", "num: 5", "num: 0");
  std::string const msg = read_error();
  EXPECT_THAT(msg, HasSubstr("metadata.yaml: empty graph"));
}

// Declared sizes (runtime/core/memory_limit.hpp): 2^40 nodes over a 6-edge file is refused before
// any per-node array (labels, the split's marks, CSC offsets) is allocated, naming the file, key,
// value and bytes.
TEST_F(DatasetIoErrors, NodeCountBeyondMemoryIsRefusedBeforeAllocating) {
  replace_in_file(d / "metadata.yaml", "num: 5", "num: 1099511627776");
  std::string const msg = test::in_limited_child(32u << 20, [&] { return read_error(); });
  EXPECT_THAT(msg, HasSubstr((d / "metadata.yaml").string() +
                             ": graph.nodes[0].num = 1099511627776 needs 17592186044416 bytes "
                             "(16.00 TiB; 16 bytes per node: an int64 label and an int64 CSC "
                             "offset each) but only "));
  EXPECT_THAT(msg, HasSubstr("the value is probably wrong"));
}

TEST_F(DatasetIoErrors, NodeCountAgainstAnInjectedLimit) {
  {
    test::scoped_env const env("COOPGNN_MEMORY_LIMIT", "79");  // 5 nodes need 80 bytes
    EXPECT_THAT(read_error(), HasSubstr("graph.nodes[0].num = 5 needs 80 bytes (80 B; 16 bytes "
                                        "per node: an int64 label and an int64 CSC offset each) "
                                        "but only 79 bytes (79 B) of memory are available "
                                        "(COOPGNN_MEMORY_LIMIT;"));
  }
  // Every check is per array: the largest, edges.npy (2 x 6 int64), needs 96 bytes.
  test::scoped_env const env("COOPGNN_MEMORY_LIMIT", "96");
  EXPECT_EQ(read_dataset(d.path()).num_nodes, 5);
}

TEST_F(DatasetIoErrors, EdgeIdOutOfRange) {
  write_i64(d / "edges/edges.npy", {0, 1, 2, 1, 5, 0}, {2, 3});
  std::string const msg = read_error();
  EXPECT_THAT(msg, HasSubstr("edges.npy: edge destination index 1 = 5 is out of range"));
  EXPECT_THAT(msg, HasSubstr("|V| = 5"));
}

TEST_F(DatasetIoErrors, NegativeEdgeId) {
  write_i64(d / "edges/edges.npy", {0, -3, 2, 1, 2, 0}, {2, 3});
  EXPECT_THAT(read_error(),
              HasSubstr("edges.npy: edge source index 1 = -3 is a negative vertex id"));
}

TEST_F(DatasetIoErrors, EdgesOfWrongShape) {
  write_i64(d / "edges/edges.npy", {0, 1, 1, 2, 2, 0}, {3, 2});
  EXPECT_THAT(read_error(), HasSubstr("edges.npy: edges must have shape (2, E)"));
}

TEST_F(DatasetIoErrors, TruncatedArray) {
  fs::resize_file(d / "data/feat.npy", fs::file_size(d / "data/feat.npy") - 8);
  EXPECT_THAT(read_error(), HasSubstr("feat.npy: truncated: expected 60 bytes of data, found 52"));
}

TEST_F(DatasetIoErrors, FeatureRowsDisagreeWithNodeCount) {
  std::vector<float> f(4 * 3, 1.0f);
  std::int64_t const s[] = {4, 3};
  write_npy(d / "data/feat.npy", std::span<const float>(f), s);
  std::string const msg = read_error();
  EXPECT_THAT(msg, HasSubstr("feat.npy: node feature 'feat' has 4 rows"));
  EXPECT_THAT(msg, HasSubstr("5 nodes"));
}

TEST_F(DatasetIoErrors, WrongDtype) {
  std::string const dict = "{'descr': '|O', 'fortran_order': False, 'shape': (5,), }\n";
  std::string obj = "\x93NUMPY";
  obj += std::string("\x01\x00", 2);
  obj.push_back(static_cast<char>(dict.size()));
  obj.push_back('\0');
  write_text(d / "data/label.npy", obj + dict + std::string(40, '\0'));
  EXPECT_THAT(read_error(), HasSubstr("label.npy: unsupported dtype '|O'"));
}

TEST_F(DatasetIoErrors, LabelOutOfRange) {
  write_i64(d / "set/train_labels.npy", {0, 9}, {2});
  std::string const msg = read_error();
  EXPECT_THAT(msg, HasSubstr("train_labels.npy: label index 1 = 9 is out of range"));
  EXPECT_THAT(msg, HasSubstr("num_classes is 3"));
}

TEST_F(DatasetIoErrors, LabelFeatureOutOfRange) {
  write_i64(d / "data/label.npy", {0, 1, 2, 3, 0}, {5});
  EXPECT_THAT(read_error(), HasSubstr("label.npy: label index 3 = 3 is out of range"));
}

TEST_F(DatasetIoErrors, NegativeLabel) {
  write_i64(d / "set/test_labels.npy", {-2}, {1});
  EXPECT_THAT(read_error(), HasSubstr("test_labels.npy: label index 0 = -2 is negative"));
}

TEST_F(DatasetIoErrors, SeedsOutOfRange) {
  write_i64(d / "set/valid_seeds.npy", {99}, {1});
  std::string const msg = read_error();
  EXPECT_THAT(msg, HasSubstr("valid_seeds.npy: seed index 0 = 99 is out of range"));
}

TEST_F(DatasetIoErrors, SeedAndLabelCountsDisagree) {
  write_i64(d / "set/train_labels.npy", {0}, {1});
  EXPECT_THAT(read_error(), HasSubstr("train_labels.npy: has 1 labels but"));
}

TEST_F(DatasetIoErrors, ConflictingLabels) {
  write_i64(d / "set/train_labels.npy", {0, 2}, {2});  // label.npy says vertex 1 has label 1
  EXPECT_THAT(read_error(),
              HasSubstr("train_labels.npy: label index 1 = 2 for vertex 1 conflicts"));
}

TEST_F(DatasetIoErrors, SplitsOverlap) {
  write_i64(d / "set/test_seeds.npy", {0}, {1});
  write_i64(d / "set/test_labels.npy", {0}, {1});
  EXPECT_THAT(read_error(), HasSubstr("vertex 0 appears twice in the splits"));
}

TEST_F(DatasetIoErrors, HeterogeneousGraph) {
  replace_in_file(d / "metadata.yaml", "  nodes:\n    - num: 5",
                  "  nodes:\n    - type: a\n      num: 5\n    - type: b\n      num: 2");
  EXPECT_THAT(read_error(), HasSubstr("2 node types and 1 edge types: a heterogeneous graph; "
                                      "`coopgnn info` lists it"));
}

TEST_F(DatasetIoErrors, PreprocessedGraphBoltMetadata) {
  write_text(d / "metadata.yaml",
             "dataset_name: x\ngraph_topology:\n  type: FusedCSCSamplingGraph\n  path: g.pt\n");
  EXPECT_THAT(read_error(), HasSubstr("preprocessed"));
}

TEST(DatasetValidate, RejectsInconsistentInMemoryData) {
  dataset ds = tiny();
  ds.src.push_back(7);
  ds.dst.push_back(0);
  EXPECT_THAT(error_of([&] { validate_dataset(ds, "mem"); }),
              HasSubstr("mem: edge source index 6 = 7 is out of range"));
  ds = tiny();
  ds.labels[2] = 3;
  EXPECT_THAT(error_of([&] { validate_dataset(ds, "mem"); }), HasSubstr("label of vertex 2 = 3"));
  ds = tiny();
  ds.train.push_back(1);
  EXPECT_THAT(error_of([&] { validate_dataset(ds, "mem"); }), HasSubstr("appears twice"));
  ds = tiny();
  ds.num_nodes = 0;
  ds.src.clear();
  ds.dst.clear();
  ds.features = matrix<float>();
  ds.labels.clear();
  ds.train.clear();
  ds.valid.clear();
  ds.test.clear();
  EXPECT_THAT(error_of([&] { validate_dataset(ds, "mem"); }), HasSubstr("mem: empty graph"));
  // write_dataset refuses inconsistent data with logic_error and writes nothing.
  temp_dir d;
  dataset bad = tiny();
  bad.labels.pop_back();
  EXPECT_THROW(write_dataset(bad, d / "out"), logic_error);
  EXPECT_FALSE(fs::exists(d / "out" / "metadata.yaml"));
}

}  // namespace
}  // namespace coopgnn
