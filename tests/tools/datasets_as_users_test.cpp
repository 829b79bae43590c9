// Datasets as users have them (README "Datasets"), run as a user runs them: DGL's OnDiskDataset
// homogeneous tutorial dataset (tests/data/dgl_tutorial, written by
// tools/gen_dgl_tutorial_dataset.py with DGL's own recipe: torch-format features and labels, csv
// edges, a node-classification and a link-prediction task) is listed by `info` and trains both
// tasks; a MUSAE directory converts with `convert` alone and trains.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "runtime/core/error.hpp"
#include "runtime/graph/dataset.hpp"
#include "tests/common/cli.hpp"
#include "tests/common/files.hpp"

namespace coopgnn {
namespace {

using test::run_data_cli;
using test::run_train_cli;
using test::temp_dir;
using test::write_text;
using ::testing::HasSubstr;
namespace fs = std::filesystem;

std::string tutorial() { return std::string(COOPGNN_SOURCE_DIR) + "/tests/data/dgl_tutorial"; }

std::string info_output(std::vector<std::string> args) {
  ::testing::internal::CaptureStdout();
  std::string err;
  try {
    run_data_cli(std::move(args));
  } catch (const error& e) {
    err = e.what();
  }
  return ::testing::internal::GetCapturedStdout() + err;
}

TEST(DglTutorialDataset, InfoListsEveryFeatureAndTaskAndMarksWhatTrainUses) {
  std::string const out = info_output({"info", tutorial(), "--feature", "feat_1"});
  EXPECT_THAT(out, HasSubstr("'feat_0' float64 (100, 5) (numpy, node-feat-0.npy)"));
  EXPECT_THAT(out, HasSubstr("'feat_1' float32 (100, 5) (torch, node-feat-1.pt)  <- input"));
  EXPECT_THAT(out, HasSubstr("'feat_1' float32 (1000, 5) (torch, edge-feat-1.pt)"));
  EXPECT_THAT(out, HasSubstr("[0] 'node_classification' node_classification, 10 classes, "
                             "train 60  valid 20  test 20  <- trained"));
  EXPECT_THAT(out, HasSubstr("[1] 'link_prediction' link_prediction"));
  EXPECT_THAT(out, HasSubstr("split            train 60  valid 20  test 20"));
  EXPECT_THAT(out, ::testing::Not(HasSubstr("note")));  // both tasks read

  // Without --feature: the listing, then the error naming both candidates.
  std::string const why = info_output({"info", tutorial()});
  EXPECT_THAT(why, HasSubstr("cannot be read as asked"));
  EXPECT_THAT(why, HasSubstr("--feature NAME, one of 'feat_0' (float64, (100, 5)), 'feat_1' "
                             "(float32, (100, 5))"));

  std::string const lp = info_output(
      {"info", tutorial(), "--feature", "feat_0", "--task", "link_prediction", "--json"});
  EXPECT_THAT(lp, HasSubstr("\"name\":\"link_prediction\",\"num_classes\":10,\"test\":2200,"
                            "\"train\":600,\"trained\":true"));
}

TEST(DglTutorialDataset, ReadsTheTorchArraysAndGroupsTheLinkQueries) {
  dataset_read_options opt;
  opt.feature = "feat_1";
  dataset const ds = read_dataset(tutorial(), opt);
  EXPECT_EQ(ds.num_nodes, 100);
  EXPECT_EQ(ds.num_edges(), 1000);
  EXPECT_EQ(ds.features.cols(), 5);
  EXPECT_EQ(ds.num_classes, 10);
  EXPECT_EQ(ds.train.size() + ds.valid.size() + ds.test.size(), 100u);
  ASSERT_TRUE(ds.link.has_value());
  EXPECT_EQ(ds.link->train.size(), 600);
  // 200 validation positives, each with 10 negatives (the tutorial's recipe).
  EXPECT_EQ(ds.link->valid.size(), 2200);
  ASSERT_EQ(ds.link->valid.indexes.size(), 2200u);
  EXPECT_TRUE(std::is_sorted(ds.link->valid.indexes.begin(), ds.link->valid.indexes.end()));
  EXPECT_EQ(ds.link->valid.indexes.back(), 199);
  std::int64_t positives = 0;
  for (std::int64_t l : ds.link->valid.labels) positives += l;
  EXPECT_EQ(positives, 200);
}

TEST(DglTutorialDataset, TrainsNodeClassificationAndLinkPrediction) {
  EXPECT_EQ(run_train_cli({"train", "--dataset", tutorial(), "--feature", "feat_1", "--epochs", "2",
                           "--batch-size", "20", "--pes", "2", "--quiet", "--no-progress"}),
            "");
  EXPECT_EQ(run_train_cli({"train", "--dataset", tutorial(), "--feature", "feat_0", "--task",
                           "link_prediction", "--epochs", "1", "--batch-size", "100", "--pes", "2",
                           "--quiet", "--no-progress"}),
            "");
  EXPECT_THAT(run_train_cli(
                  {"train", "--dataset", tutorial(), "--epochs", "1", "--quiet", "--no-progress"}),
              HasSubstr("no node feature named 'feat'"));
  EXPECT_THAT(run_train_cli({"train", "--dataset", tutorial(), "--feature", "feat_1", "--task",
                             "graph_classification", "--epochs", "1", "--quiet", "--no-progress"}),
              HasSubstr("the tasks are 'node_classification' (tasks[0]), 'link_prediction' "
                        "(tasks[1])"));
}

TEST(MusaeDataset, ConvertsWithConvertAloneAndTrains) {
  temp_dir d;
  // 12 nodes in two communities of 6 (stored once, with MUSAE's header), two page types,
  // features as sparse id lists.
  std::string edges = "id_1,id_2\n";
  for (int c = 0; c < 2; ++c) {
    for (int i = 0; i < 6; ++i) {
      edges += std::to_string(6 * c + i) + "," + std::to_string(6 * c + (i + 1) % 6) + "\n";
    }
  }
  edges += "0,6\n";
  write_text(d / "in/musae_two_edges.csv", edges);
  std::string target = "id,page_type\n";
  std::string feats = "{";
  for (int v = 0; v < 12; ++v) {
    target += std::to_string(v) + (v < 6 ? ",company\n" : ",tvshow\n");
    feats += (v ? ", \"" : "\"") + std::to_string(v) + "\": [" + (v < 6 ? "0, 2" : "1, 3") + "]";
  }
  write_text(d / "in/musae_two_target.csv", target);
  write_text(d / "in/musae_two_features.json", feats + "}");
  ::testing::internal::CaptureStdout();
  run_data_cli({"convert", "--from", "musae", (d / "in").string(), (d / "out").string()});
  std::string const said = ::testing::internal::GetCapturedStdout();
  EXPECT_THAT(said, HasSubstr("2 distinct values"));
  dataset const ds = read_dataset(d / "out");
  EXPECT_EQ(ds.num_nodes, 12);
  EXPECT_EQ(ds.num_edges(), 26);  // 13 undirected edges, both directions
  EXPECT_EQ(ds.num_classes, 2);
  EXPECT_EQ(ds.features.cols(), 4);
  EXPECT_EQ(ds.features(7, 3), 1.0f);
  EXPECT_EQ(ds.features(7, 0), 0.0f);
  EXPECT_EQ(run_train_cli({"train", "--dataset", (d / "out").string(), "--epochs", "2",
                           "--batch-size", "4", "--pes", "2", "--quiet", "--no-progress"}),
            "");
}

}  // namespace
}  // namespace coopgnn
