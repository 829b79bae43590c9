// Which feature and which task read_dataset reads (dataset_read_options::feature / task), what
// it says about the rest (dataset::notes), and inspect_dataset's listing (README "Datasets").
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "runtime/core/error.hpp"
#include "runtime/graph/dataset.hpp"
#include "runtime/graph/npy.hpp"
#include "tests/common/files.hpp"

namespace coopgnn {
namespace {

using test::error_of;
using test::temp_dir;
using test::write_text;
using ::testing::HasSubstr;
namespace fs = std::filesystem;

void i64(const fs::path& p, const std::vector<std::int64_t>& v, std::vector<std::int64_t> shape) {
  fs::create_directories(p.parent_path());
  write_npy(p, std::span<const std::int64_t>(v), shape);
}
void f32(const fs::path& p, const std::vector<float>& v, std::vector<std::int64_t> shape) {
  fs::create_directories(p.parent_path());
  write_npy(p, std::span<const float>(v), shape);
}

/// 4 nodes, 4 edges; node features feat_0 [4, 2] and feat_1 [4, 3], an edge feature w [4];
/// tasks[0] link prediction 'lp', tasks[1] node classification 'nc' (2 classes).
/// `feat_name` renames feat_0.
void write_two_task_dataset(const fs::path& d, const std::string& feat_name = "feat_0") {
  i64(d / "edges.npy", {0, 1, 2, 3, 1, 2, 3, 0}, {2, 4});
  f32(d / "f0.npy", {0, 1, 10, 11, 20, 21, 30, 31}, {4, 2});
  f32(d / "f1.npy", {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, {4, 3});
  f32(d / "w.npy", {0.5f, 1, 1.5f, 2}, {4});
  i64(d / "lp_train.npy", {0, 1, 1, 2}, {2, 2});
  i64(d / "lp_test.npy", {2, 3}, {1, 2});
  i64(d / "nc_train.npy", {0, 1}, {2});
  i64(d / "nc_train_labels.npy", {0, 1}, {2});
  i64(d / "nc_test.npy", {2}, {1});
  i64(d / "nc_test_labels.npy", {1}, {1});
  write_text(d / "metadata.yaml", R"(dataset_name: two_tasks
graph:
  nodes: [{num: 4}]
  edges: [{format: numpy, path: edges.npy}]
feature_data:
  - {domain: node, name: )" + feat_name +
                                      R"(, format: numpy, path: f0.npy}
  - {domain: node, name: feat_1, format: numpy, path: f1.npy}
  - {domain: edge, name: w, format: numpy, path: w.npy}
tasks:
  - name: lp
    train_set:
      - data: [{name: seeds, format: numpy, path: lp_train.npy}]
    test_set:
      - data: [{name: seeds, format: numpy, path: lp_test.npy}]
  - name: nc
    num_classes: 2
    train_set:
      - data:
          - {name: seeds, format: numpy, path: nc_train.npy}
          - {name: labels, format: numpy, path: nc_train_labels.npy}
    test_set:
      - data:
          - {name: seeds, format: numpy, path: nc_test.npy}
          - {name: labels, format: numpy, path: nc_test_labels.npy}
)");
}

dataset_read_options pick(const std::string& feature, const std::string& task = "") {
  dataset_read_options o;
  o.feature = feature;
  o.task = task;
  return o;
}

TEST(DatasetChoice, WithoutFeatTheDefaultIsAnErrorListingTheNodeFeatures) {
  temp_dir d;
  write_two_task_dataset(d.path());
  std::string const e = error_of([&] { read_dataset(d.path()); });
  EXPECT_THAT(e, HasSubstr("no node feature named 'feat'"));
  EXPECT_THAT(e, HasSubstr("--feature NAME"));
  EXPECT_THAT(e, HasSubstr("'feat_0' (float32, (4, 2))"));
  EXPECT_THAT(e, HasSubstr("'feat_1' (float32, (4, 3))"));
  EXPECT_THAT(e, ::testing::Not(HasSubstr("'w'")));  // an edge feature is not an input
  EXPECT_THAT(error_of([&] { read_dataset(d.path(), pick("x")); }),
              HasSubstr("no node feature named 'x' (--feature)"));
}

TEST(DatasetChoice, FeatureByNameAndFeatByDefault) {
  temp_dir d;
  write_two_task_dataset(d.path());
  dataset const a = read_dataset(d.path(), pick("feat_1"));
  EXPECT_EQ(a.feature_name, "feat_1");
  ASSERT_EQ(a.features.cols(), 3);
  EXPECT_EQ(a.features(3, 2), 12.0f);

  temp_dir e;
  write_two_task_dataset(e.path(), "feat");
  dataset const b = read_dataset(e.path());
  EXPECT_EQ(b.feature_name, "feat");
  ASSERT_EQ(b.features.cols(), 2);
  EXPECT_EQ(b.features(2, 1), 21.0f);
}

TEST(DatasetChoice, DefaultReadsTheFirstTaskOfEachKindInOrder) {
  temp_dir d;
  write_two_task_dataset(d.path());
  dataset const ds = read_dataset(d.path(), pick("feat_0"));
  ASSERT_TRUE(ds.link.has_value());
  EXPECT_EQ(ds.link->name, "lp");
  EXPECT_EQ(ds.link->train.size(), 2);
  EXPECT_EQ(ds.task_name, "nc");
  EXPECT_EQ(ds.train, (std::vector<vid_t>{0, 1}));
  EXPECT_EQ(ds.test, (std::vector<vid_t>{2}));
  EXPECT_EQ(ds.labels, (std::vector<std::int64_t>{0, 1, 1, -1}));
  EXPECT_TRUE(ds.link_first);  // tasks[0] is the link task
  EXPECT_TRUE(ds.notes.empty());
}

TEST(DatasetChoice, ANamedTaskIsTheOnlyOneRead) {
  temp_dir d;
  write_two_task_dataset(d.path());
  dataset const nc = read_dataset(d.path(), pick("feat_0", "nc"));
  EXPECT_FALSE(nc.link.has_value());
  EXPECT_EQ(nc.num_classes, 2);
  EXPECT_EQ(nc.train.size(), 2u);

  dataset const lp = read_dataset(d.path(), pick("feat_0", "lp"));
  ASSERT_TRUE(lp.link.has_value());
  EXPECT_TRUE(lp.train.empty());
  EXPECT_TRUE(lp.labels.empty());

  // A kind picks the first task of that kind.
  dataset const by_kind = read_dataset(d.path(), pick("feat_0", "node_classification"));
  EXPECT_EQ(by_kind.task_name, "nc");
  EXPECT_FALSE(by_kind.link.has_value());

  std::string const e = error_of([&] { read_dataset(d.path(), pick("feat_0", "ranking")); });
  EXPECT_THAT(e, HasSubstr("no task named 'ranking' (--task)"));
  EXPECT_THAT(e, HasSubstr("'lp' (tasks[0]), 'nc' (tasks[1])"));
}

TEST(DatasetChoice, AnUnreadableTaskIsSkippedAndSaidByDefaultAndAnErrorWhenNamed) {
  temp_dir d;
  write_two_task_dataset(d.path());
  fs::remove(d / "lp_test.npy");
  dataset const ds = read_dataset(d.path(), pick("feat_0"));
  EXPECT_FALSE(ds.link.has_value());
  EXPECT_EQ(ds.task_name, "nc");
  ASSERT_EQ(ds.notes.size(), 1u);
  EXPECT_THAT(ds.notes[0], HasSubstr("skipped a task that cannot be read"));
  EXPECT_THAT(ds.notes[0], HasSubstr("lp_test.npy: missing file"));
  EXPECT_THAT(ds.notes[0], HasSubstr("(tasks[0] 'lp')"));

  EXPECT_THAT(error_of([&] { read_dataset(d.path(), pick("feat_0", "lp")); }),
              HasSubstr("lp_test.npy: missing file"));

  // Seeds that cannot even be classified (first set's seeds missing): skipped the same way.
  fs::remove(d / "lp_train.npy");
  dataset const again = read_dataset(d.path(), pick("feat_0"));
  EXPECT_FALSE(again.link.has_value());
  ASSERT_EQ(again.notes.size(), 1u);
  EXPECT_THAT(again.notes[0], HasSubstr("lp_train.npy"));

  // Nothing readable: the error, and the other tasks named.
  fs::remove(d / "nc_train.npy");
  std::string const e = error_of([&] { read_dataset(d.path(), pick("feat_0")); });
  EXPECT_THAT(e, HasSubstr("missing file"));
  EXPECT_THAT(e, HasSubstr("--task NAME reads another task"));
}

TEST(DatasetChoice, EveryFeatureIsCheckedAgainstTheGraph) {
  temp_dir d;
  write_two_task_dataset(d.path());
  f32(d / "w.npy", {1, 2, 3}, {3});  // 3 rows for 4 edges, though w is never read
  EXPECT_THAT(error_of([&] { read_dataset(d.path(), pick("feat_0")); }),
              HasSubstr("edge feature 'w' has 3 rows (shape (3,)) but the graph has 4 edges"));
}

TEST(InspectDataset, ListsEveryFeatureAndTaskWithHeadersOnly) {
  temp_dir d;
  write_two_task_dataset(d.path());
  fs::remove(d / "f1.npy");
  dataset_contents const c = inspect_dataset(d.path());
  EXPECT_EQ(c.name, "two_tasks");
  EXPECT_EQ(c.num_nodes, 4);
  ASSERT_EQ(c.features.size(), 3u);
  EXPECT_EQ(c.features[0].name, "feat_0");
  EXPECT_EQ(c.features[0].dtype, "float32");
  EXPECT_EQ(c.features[0].shape, (std::vector<std::int64_t>{4, 2}));
  EXPECT_THAT(c.features[1].error, HasSubstr("f1.npy: missing file"));
  EXPECT_EQ(c.features[2].domain, "edge");
  EXPECT_EQ(c.features[2].shape, (std::vector<std::int64_t>{4}));
  ASSERT_EQ(c.tasks.size(), 2u);
  EXPECT_EQ(c.tasks[0].kind, "link_prediction");
  EXPECT_EQ(c.tasks[0].train, 2);
  EXPECT_EQ(c.tasks[0].valid, 0);
  EXPECT_EQ(c.tasks[0].test, 1);
  EXPECT_EQ(c.tasks[1].kind, "node_classification");
  EXPECT_EQ(c.tasks[1].num_classes, 2);
  EXPECT_EQ(c.tasks[1].train, 2);
  EXPECT_TRUE(c.tasks[1].error.empty());
}

}  // namespace
}  // namespace coopgnn
