// Link-prediction tasks in GraphBolt's OnDiskDataset layout (runtime/graph/dataset.hpp,
// dataset_io.cpp): round trips of the grouped layout, hand-written GraphBolt metadata (legacy
// node_pairs + negative_dsts, unknown keys), and every rejected input naming its file.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
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
using ::testing::Not;

void write_i64(const fs::path& p, const std::vector<std::int64_t>& v,
               std::vector<std::int64_t> shape) {
  fs::create_directories(p.parent_path());
  write_npy(p, std::span<const std::int64_t>(v), shape);
}

/// 6 nodes, 8 directed edges; a grouped validation set (2 queries x 2 negatives), a test set with
/// labels but no indexes.
dataset tiny_link() {
  dataset ds;
  ds.name = "tiny_link";
  ds.num_nodes = 6;
  ds.src = {0, 1, 1, 2, 3, 4, 5, 0};
  ds.dst = {1, 0, 2, 1, 4, 3, 0, 5};
  link_task lt;
  lt.name = "lp";
  lt.train.src = {0, 1, 3};
  lt.train.dst = {1, 2, 4};
  lt.valid.src = {2, 2, 2, 4, 4, 4};
  lt.valid.dst = {3, 0, 5, 5, 1, 2};
  lt.valid.labels = {1, 0, 0, 1, 0, 0};
  lt.valid.indexes = {0, 0, 0, 1, 1, 1};
  lt.test.src = {5, 5};
  lt.test.dst = {2, 4};
  lt.test.labels = {1, 0};
  ds.link = lt;
  return ds;
}

void expect_same_pairs(const pair_set& a, const pair_set& b) {
  EXPECT_EQ(a.src, b.src);
  EXPECT_EQ(a.dst, b.dst);
  EXPECT_EQ(a.labels, b.labels);
  EXPECT_EQ(a.indexes, b.indexes);
}

void expect_same_link(const link_task& a, const link_task& b) {
  EXPECT_EQ(a.name, b.name);
  expect_same_pairs(a.train, b.train);
  expect_same_pairs(a.valid, b.valid);
  expect_same_pairs(a.test, b.test);
  EXPECT_EQ(a.item_begin, b.item_begin);
  EXPECT_EQ(a.item_end, b.item_end);
}

// ---- round trips ---------------------------------------------------------------------------

TEST(LinkIo, GroupedRoundTrip) {
  temp_dir d;
  dataset const ds = tiny_link();
  write_dataset(ds, d.path());
  dataset const back = read_dataset(d.path());
  ASSERT_TRUE(back.link.has_value());
  expect_same_link(*back.link, *ds.link);
  EXPECT_TRUE(back.labels.empty());
  EXPECT_EQ(back.num_classes, 0);
  EXPECT_TRUE(back.train.empty());
  // GraphBolt's layout: seeds [M, 2] row-major int64, labels/indexes [M], omitted when empty.
  auto const seeds = read_npy<std::int64_t>(d / "set/link_valid_seeds.npy");
  EXPECT_EQ(seeds.shape, (std::vector<std::int64_t>{6, 2}));
  EXPECT_EQ(seeds.stored, npy_dtype::int64);
  EXPECT_EQ(seeds.data, (std::vector<std::int64_t>{2, 3, 2, 0, 2, 5, 4, 5, 4, 1, 4, 2}));
  EXPECT_TRUE(fs::is_regular_file(d / "set/link_test_labels.npy"));
  EXPECT_FALSE(fs::exists(d / "set/link_test_indexes.npy"));
  EXPECT_FALSE(fs::exists(d / "set/link_train_labels.npy"));
  dataset_metadata const m = read_metadata(d / "metadata.yaml");
  ASSERT_EQ(m.tasks.size(), 1u);
  EXPECT_EQ(m.tasks[0].name, "lp");
  EXPECT_FALSE(m.tasks[0].num_classes.has_value());
  EXPECT_FALSE(m.tasks[0].item_begin.has_value());
  ASSERT_EQ(m.tasks[0].validation_set.size(), 1u);
  std::vector<std::string> names;
  for (const auto& x : m.tasks[0].validation_set[0].data) names.push_back(x.name.value_or("?"));
  EXPECT_EQ(names, (std::vector<std::string>{"seeds", "labels", "indexes"}));
}

TEST(LinkIo, PositivesOnlyUserItemRoundTrip) {
  temp_dir d;
  dataset ds;
  ds.name = "ui";
  ds.num_nodes = 5;  // users 0, 1; items 2, 3, 4
  ds.src = {0, 2, 1, 3};
  ds.dst = {2, 0, 3, 1};
  link_task lt;  // name left empty: written as "link_prediction"
  lt.train.src = {0, 1};
  lt.train.dst = {2, 3};
  lt.test.src = {0, 1};
  lt.test.dst = {4, 2};
  lt.item_begin = 2;
  lt.item_end = 5;
  ds.link = lt;
  write_dataset(ds, d.path());
  std::string const yaml = read_text(d / "metadata.yaml");
  EXPECT_THAT(yaml, HasSubstr("item_begin: 2"));
  EXPECT_THAT(yaml, HasSubstr("item_end: 5"));
  EXPECT_THAT(yaml, Not(HasSubstr("validation_set")));
  dataset const back = read_dataset(d.path());
  ASSERT_TRUE(back.link.has_value());
  lt.name = "link_prediction";
  expect_same_link(*back.link, lt);
  EXPECT_TRUE(back.link->user_item());
  EXPECT_TRUE(back.link->valid.empty());
}

TEST(LinkIo, NodeClassificationAndLinkPredictionTogether) {
  temp_dir d;
  dataset ds = tiny_link();
  ds.features = matrix<float>(6, 2, std::vector<float>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
  ds.labels = {0, 1, 0, 1, 0, 1};
  ds.num_classes = 2;
  ds.train = {0, 1};
  ds.valid = {2};
  ds.test = {3, 4};
  write_dataset(ds, d.path());
  dataset_metadata const m = read_metadata(d / "metadata.yaml");
  ASSERT_EQ(m.tasks.size(), 2u);
  EXPECT_EQ(m.tasks[0].name, "node_classification");
  EXPECT_EQ(m.tasks[1].name, "lp");
  dataset const back = read_dataset(d.path());
  EXPECT_EQ(back.labels, ds.labels);
  EXPECT_EQ(back.num_classes, 2);
  EXPECT_EQ(back.train, ds.train);
  EXPECT_EQ(back.test, ds.test);
  EXPECT_EQ(back.features.values(), ds.features.values());
  ASSERT_TRUE(back.link.has_value());
  expect_same_link(*back.link, *ds.link);
}

/// A hand-written GraphBolt directory: 5 nodes, a link task given by `task_yaml`.
void write_graphbolt(const temp_dir& d, const std::string& task_yaml) {
  write_i64(d / "edges.npy", {0, 1, 2, 3, 1, 2, 3, 4}, {2, 4});
  write_text(d / "metadata.yaml",
             "dataset_name: hand\n"
             "graph:\n"
             "  nodes:\n"
             "    - num: 5\n"
             "  edges:\n"
             "    - format: numpy\n"
             "      path: edges.npy\n"
             "tasks:\n" +
                 task_yaml);
}

std::string set_yaml(const char* key, std::vector<std::pair<std::string, std::string>> data) {
  std::string s = fmt::format("    {}:\n      - type: null\n        data:\n", key);
  for (auto& [name, path] : data) {
    s += fmt::format(
        "          - name: {}\n            format: numpy\n            in_memory: true\n"
        "            path: {}\n",
        name, path);
  }
  return s;
}

TEST(LinkIo, ReadsLegacyNodePairsWithNegativeDsts) {
  temp_dir d;
  // GraphBolt <= 2.1 (ogbl-citation2): node_pairs [N, 2] + negative_dsts [N, K].
  write_i64(d / "set/train.npy", {0, 1, 1, 2, 2, 3}, {3, 2});
  write_i64(d / "set/valid.npy", {0, 4, 3, 1}, {2, 2});
  write_i64(d / "set/valid_neg.npy", {2, 3, 0, 4}, {2, 2});
  write_graphbolt(d,
                  "  - name: citation\n"
                  "    num_classes: 3\n"          // ignored for link prediction
                  "    some_unknown_key: true\n"  // GraphBolt keeps unknown keys; so do we
                      + set_yaml("train_set", {{"node_pairs", "set/train.npy"}}) +
                      set_yaml("validation_set", {{"node_pairs", "set/valid.npy"},
                                                  {"negative_dsts", "set/valid_neg.npy"}}));
  dataset const ds = read_dataset(d.path());
  ASSERT_TRUE(ds.link.has_value());
  EXPECT_EQ(ds.link->name, "citation");
  EXPECT_EQ(ds.link->train.src, (std::vector<vid_t>{0, 1, 2}));
  EXPECT_EQ(ds.link->train.dst, (std::vector<vid_t>{1, 2, 3}));
  // Query i = positive i then its K = 2 negatives.
  EXPECT_EQ(ds.link->valid.src, (std::vector<vid_t>{0, 0, 0, 3, 3, 3}));
  EXPECT_EQ(ds.link->valid.dst, (std::vector<vid_t>{4, 2, 3, 1, 0, 4}));
  EXPECT_EQ(ds.link->valid.labels, (std::vector<std::int64_t>{1, 0, 0, 1, 0, 0}));
  EXPECT_EQ(ds.link->valid.indexes, (std::vector<std::int64_t>{0, 0, 0, 1, 1, 1}));
  EXPECT_TRUE(ds.link->test.empty());
  EXPECT_EQ(ds.num_classes, 0);
  // Written back, it is in the grouped layout and reads the same.
  temp_dir d2;
  write_dataset(ds, d2.path());
  expect_same_link(*read_dataset(d2.path()).link, *ds.link);
}

TEST(LinkIo, TrainingSetKeepsItsPositives) {
  temp_dir d;
  write_i64(d / "set/s.npy", {0, 1, 0, 3, 2, 3, 2, 0}, {4, 2});
  write_i64(d / "set/l.npy", {1, 0, 1, 0}, {4});
  write_i64(d / "set/i.npy", {0, 0, 1, 1}, {4});
  write_graphbolt(d, "  - name: lp\n" + set_yaml("train_set", {{"seeds", "set/s.npy"},
                                                               {"labels", "set/l.npy"},
                                                               {"indexes", "set/i.npy"}}));
  dataset const ds = read_dataset(d.path());
  ASSERT_TRUE(ds.link.has_value());
  EXPECT_EQ(ds.link->train.src, (std::vector<vid_t>{0, 2}));
  EXPECT_EQ(ds.link->train.dst, (std::vector<vid_t>{1, 3}));
  EXPECT_TRUE(ds.link->train.labels.empty());
  EXPECT_TRUE(ds.link->train.indexes.empty());
}

// ---- rejected input ------------------------------------------------------------------------

class LinkIoErrors : public ::testing::Test {
 protected:
  void SetUp() override { write_dataset(tiny_link(), d.path()); }
  std::string read_error() {
    return error_of([&] { (void)read_dataset(d.path()); });
  }
  temp_dir d;
};

TEST_F(LinkIoErrors, SeedsWithThreeColumns) {
  write_i64(d / "set/link_train_seeds.npy", {0, 1, 2, 1, 2, 3}, {2, 3});
  std::string const msg = read_error();
  EXPECT_THAT(msg, HasSubstr("link_train_seeds.npy"));
  EXPECT_THAT(msg, HasSubstr("(N,) (node classification) or (N, 2) (link prediction), found "
                             "(2, 3)"));
}

TEST_F(LinkIoErrors, SingleVerticesWherePairsAreExpected) {
  write_i64(d / "set/link_valid_seeds.npy", {2, 2, 2, 4, 4, 4}, {6});
  std::string const msg = read_error();
  EXPECT_THAT(msg, HasSubstr("link_valid_seeds.npy"));
  EXPECT_THAT(msg, HasSubstr("must be node pairs of shape (N, 2)"));
  EXPECT_THAT(msg, HasSubstr("found (6,)"));
}

TEST_F(LinkIoErrors, IdOutOfRange) {
  write_i64(d / "set/link_test_seeds.npy", {5, 2, 5, 6}, {2, 2});
  std::string const msg = read_error();
  EXPECT_THAT(msg, HasSubstr("link_test_seeds.npy"));
  EXPECT_THAT(msg, HasSubstr("pair destination (column 1) index 1 = 6 is out of range"));
  EXPECT_THAT(msg, HasSubstr("|V| = 6"));
}

TEST_F(LinkIoErrors, LabelsNotZeroOrOne) {
  write_i64(d / "set/link_valid_labels.npy", {1, 0, 2, 1, 0, 0}, {6});
  std::string const msg = read_error();
  EXPECT_THAT(msg, HasSubstr("link_valid_labels.npy: label index 2 = 2 is not 0 or 1"));
}

TEST_F(LinkIoErrors, LabelsLengthMismatch) {
  write_i64(d / "set/link_valid_labels.npy", {1, 0, 0, 1, 0}, {5});
  std::string const msg = read_error();
  EXPECT_THAT(msg, HasSubstr("link_valid_labels.npy: has 5 labels but"));
  EXPECT_THAT(msg, HasSubstr("link_valid_seeds.npy has 6 pairs"));
}

TEST_F(LinkIoErrors, IndexesLengthMismatch) {
  write_i64(d / "set/link_valid_indexes.npy", {0, 0, 0, 1, 1, 1, 1}, {7});
  std::string const msg = read_error();
  EXPECT_THAT(msg, HasSubstr("link_valid_indexes.npy: has 7 indexes but"));
}

TEST_F(LinkIoErrors, IndexesOutOfOrderAreGroupedByQuery) {
  // DGL's OnDiskDataset tutorial layout: every positive first, then every negative, each with its
  // query's index. Read back grouped by query, stored order kept within a query.
  write_i64(d / "set/link_valid_seeds.npy", {2, 3, 4, 5, 2, 0, 2, 5, 4, 1, 4, 2}, {6, 2});
  write_i64(d / "set/link_valid_labels.npy", {1, 1, 0, 0, 0, 0}, {6});
  write_i64(d / "set/link_valid_indexes.npy", {0, 1, 0, 0, 1, 1}, {6});
  dataset const ds = read_dataset(d.path());
  ASSERT_TRUE(ds.link.has_value());
  expect_same_pairs(ds.link->valid, tiny_link().link->valid);
}

TEST_F(LinkIoErrors, QueryWithoutPositive) {
  write_i64(d / "set/link_valid_labels.npy", {1, 0, 0, 0, 0, 0}, {6});
  std::string const msg = read_error();
  EXPECT_THAT(msg, HasSubstr("link_valid_labels.npy: query 1 (pairs 3..5) has no positive"));
}

TEST_F(LinkIoErrors, NegativeDstsOfWrongShapeOrRange) {
  temp_dir g;
  write_i64(g / "set/p.npy", {0, 1, 2, 3}, {2, 2});
  write_i64(g / "set/n.npy", {1, 2, 3}, {3, 1});
  write_graphbolt(
      g, "  - name: lp\n" + set_yaml("train_set", {{"seeds", "set/p.npy"}}) +
             set_yaml("test_set", {{"seeds", "set/p.npy"}, {"negative_dsts", "set/n.npy"}}));
  std::string msg = error_of([&] { (void)read_dataset(g.path()); });
  EXPECT_THAT(msg, HasSubstr("n.npy: negative_dsts must have shape (2, K)"));
  write_i64(g / "set/n.npy", {1, 9}, {2, 1});
  msg = error_of([&] { (void)read_dataset(g.path()); });
  EXPECT_THAT(msg, HasSubstr("n.npy: negative destination index 1 = 9 is out of range"));
}

TEST_F(LinkIoErrors, ItemRange) {
  std::string const yaml = read_text(d / "metadata.yaml");
  auto const at = yaml.find("  - name: lp\n") + std::string("  - name: lp\n").size();
  write_text(d / "metadata.yaml", yaml.substr(0, at) + "    item_begin: 2\n" + yaml.substr(at));
  EXPECT_THAT(read_error(), HasSubstr("has item_begin but not item_end"));
  write_text(d / "metadata.yaml",
             yaml.substr(0, at) + "    item_begin: 4\n    item_end: 9\n" + yaml.substr(at));
  std::string const msg = read_error();
  EXPECT_THAT(msg, HasSubstr("metadata.yaml: tasks[0]: item_begin = 4, item_end = 9"));
  EXPECT_THAT(msg, HasSubstr("|V| = 6"));
}

TEST(LinkValidate, WriteRejectsInconsistentLinkTask) {
  temp_dir d;
  dataset ds = tiny_link();
  ds.link->valid.labels.pop_back();
  EXPECT_THROW(write_dataset(ds, d.path()), logic_error);
  ds = tiny_link();
  ds.link->train.labels = {1, 1, 1};
  EXPECT_THAT(error_of([&] { validate_dataset(ds, "mem"); }),
              HasSubstr("link.train holds training positives only"));
  ds = tiny_link();
  ds.link->test.dst[0] = 6;
  EXPECT_THAT(error_of([&] { validate_dataset(ds, "mem"); }),
              HasSubstr("mem: link.test seeds: pair destination (column 1) index 0 = 6"));
  ds = tiny_link();
  ds.link->item_begin = 3;
  EXPECT_THAT(error_of([&] { validate_dataset(ds, "mem"); }), HasSubstr("item_begin = 3"));
}

}  // namespace
}  // namespace coopgnn
