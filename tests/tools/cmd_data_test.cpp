// `coopgnn convert / generate / info` end to end through CLI11 (tools/coopgnn/cmd_data.cpp), and
// the dataset summary (tools/coopgnn/info.hpp) on a hand-computed graph.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "runtime/core/error.hpp"
#include "runtime/graph/dataset.hpp"
#include "tests/common/cli.hpp"
#include "tests/common/files.hpp"
#include "tools/coopgnn/commands.hpp"
#include "tools/coopgnn/info.hpp"
namespace coopgnn {
namespace {

using test::error_of;
using test::read_text;
using test::run_data_cli;
using test::temp_dir;
using test::write_text;

namespace fs = std::filesystem;
using ::testing::HasSubstr;

TEST(DatasetInfo, HandComputedStatistics) {
  // Edges: 0->1, 0->2, 1->2, 3->3 (self-loop); vertex 4 isolated.
  // in-degrees  [0, 1, 2, 1, 0] sorted 0 0 1 1 2: median 1, p99 = sorted[ceil(4.95) - 1] = 2.
  // out-degrees [2, 1, 0, 1, 0] sorted 0 0 1 1 2.
  dataset ds;
  ds.name = "h";
  ds.num_nodes = 5;
  ds.src = {0, 0, 1, 3};
  ds.dst = {1, 2, 2, 3};
  ds.labels = {0, 0, 1, -1, 1};
  ds.num_classes = 2;
  ds.features = matrix<float>(5, 3);
  ds.train = {0, 1};
  ds.test = {2};
  dataset_info const i = compute_info(ds);
  EXPECT_EQ(i.num_nodes, 5);
  EXPECT_EQ(i.num_edges, 4);
  EXPECT_EQ(i.in_degree.min, 0);
  EXPECT_EQ(i.in_degree.max, 2);
  EXPECT_DOUBLE_EQ(i.in_degree.mean, 0.8);
  EXPECT_DOUBLE_EQ(i.in_degree.median, 1.0);
  EXPECT_EQ(i.in_degree.p99, 2);
  EXPECT_EQ(i.in_degree.zero, 2);
  EXPECT_EQ(i.out_degree.max, 2);
  EXPECT_EQ(i.out_degree.zero, 2);
  EXPECT_EQ(i.isolated, 1);
  EXPECT_EQ(i.self_loops, 1);
  EXPECT_EQ(i.feature_dim, 3);
  EXPECT_EQ(i.class_counts, (std::vector<std::int64_t>{2, 2}));
  EXPECT_EQ(i.unlabeled, 1);
  // Labelled edges: 0->1 same, 0->2 differ, 1->2 differ (3->3 has an unknown label).
  EXPECT_DOUBLE_EQ(i.edge_homophily, 1.0 / 3.0);
  EXPECT_EQ(i.train, 2);
  EXPECT_EQ(i.valid, 0);
  EXPECT_EQ(i.test, 1);
  std::string const json = info_to_json(i);
  EXPECT_THAT(json, HasSubstr("\"num_nodes\":5"));
  EXPECT_THAT(json, HasSubstr("\"class_counts\":[2,2]"));
  EXPECT_THAT(format_info_table(i), HasSubstr("train 2  valid 0  test 1"));
}

TEST(DataCommands, ConvertGenerateAndInfo) {
  temp_dir d;
  {
    std::ofstream out(d / "g.txt");
    out << "# toy\n0 1\n1 2\n2 0\n2 2\n";
  }
  run_data_cli({"convert", "--from", "snap", (d / "g.txt").string(), (d / "g").string(),
                "--symmetrize", "--drop-self-loops", "--name", "toy"});
  dataset const g = read_dataset(d / "g");
  EXPECT_EQ(g.name, "toy");
  EXPECT_EQ(g.num_nodes, 3);
  EXPECT_EQ(g.num_edges(), 6);

  run_data_cli({"generate", "task", (d / "g").string(), (d / "gt").string(), "--classes", "2",
                "--feature-dim", "4", "--seed", "3"});
  dataset const gt = read_dataset(d / "gt");
  EXPECT_EQ(gt.num_classes, 2);
  EXPECT_EQ(gt.feature_dim(), 4);
  EXPECT_EQ(gt.train.size() + gt.valid.size() + gt.test.size(), 3u);

  run_data_cli({"generate", "rmat", (d / "r").string(), "--scale", "6", "--edge-factor", "4"});
  EXPECT_EQ(read_dataset(d / "r").num_nodes, 64);
  run_data_cli({"generate", "sbm", (d / "s").string(), "--nodes", "100", "--classes", "3",
                "--avg-degree", "6", "--homophily", "0.9", "--feature-dim", "5"});
  EXPECT_EQ(read_dataset(d / "s").feature_dim(), 5);
  run_data_cli({"info", (d / "s").string(), "--json"});

  // Errors surface as io_error (main prints them), parse problems as CLI errors.
  EXPECT_THROW(run_data_cli({"info", (d / "missing").string()}), io_error);
  EXPECT_THROW(run_data_cli({"convert", "--from", "xml", "a", "b"}), CLI::ValidationError);
  EXPECT_THROW(run_data_cli({"generate", "rmat", (d / "x").string()}), CLI::RequiredError);
}

}  // namespace
}  // namespace coopgnn
