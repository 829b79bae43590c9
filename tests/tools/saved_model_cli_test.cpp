// Saved models on the command line (docs/usage.md "Saved models"): predict / embed on another
// graph for inductive models (with a note) and refused for transductive ones (learnt
// embeddings); score-pairs against the dot product of `embed`'s embeddings computed here.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "runtime/graph/npy.hpp"
#include "tests/common/cli.hpp"
#include "tests/common/files.hpp"

namespace coopgnn {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using test::run_data_cli;
using test::run_train_cli;
using test::tiny_run_args;

/// Cora with 10 % of its edges held out (split-edges): the same vertices and features, another
/// edge set, so another graph for the saved models.
struct split_cora {
  test::temp_dir dir;
  fs::path lp = dir.path() / "cora-lp";
  split_cora() {
    run_data_cli({"split-edges", std::string(COOPGNN_SOURCE_DIR) + "/data/cora", lp.string(),
                  "--seed", "1", "--negatives", "1"});
  }
};

TEST(SavedModelCli, InductiveModelPredictsOnAnotherGraph) {
  split_cora s;
  auto const model = s.dir.path() / "sage";
  ASSERT_EQ(run_train_cli(tiny_run_args("train", "8", "1", {"--save-model", model.string()})),
            "");
  auto const out = s.dir.path() / "classes.npy";
  EXPECT_EQ(run_train_cli({"predict", "--model", model.string(), "--dataset", s.lp.string(),
                           "--out", out.string()}),
            "");
  auto const classes = read_npy<std::int64_t>(out);
  ASSERT_EQ(classes.data.size(), 2708U);
  for (auto c : classes.data) ASSERT_TRUE(c >= 0 && c < 7) << c;
  auto const emb = s.dir.path() / "emb.npy";
  EXPECT_EQ(run_train_cli({"embed", "--model", model.string(), "--dataset", s.lp.string(),
                           "--out", emb.string()}),
            "");
  EXPECT_EQ(read_npy<float>(emb).shape, (std::vector<std::int64_t>{2708, 7}));
}

TEST(SavedModelCli, TransductiveModelIsRefusedOnAnotherGraph) {
  split_cora s;
  auto const model = s.dir.path() / "emb-model";
  ASSERT_EQ(run_train_cli(tiny_run_args("train", "8", "1",
                                        {"--embedding-dim", "8", "--save-model", model.string()})),
            "");
  auto const why = run_train_cli({"predict", "--model", model.string(), "--dataset",
                                  s.lp.string(), "--out", (s.dir.path() / "c.npy").string()});
  EXPECT_THAT(why, HasSubstr("the model is transductive"));
  EXPECT_THAT(why, HasSubstr("--embedding-dim"));
  // On its own graph it still runs.
  EXPECT_EQ(run_train_cli({"predict", "--model", model.string(), "--out",
                           (s.dir.path() / "c.npy").string()}),
            "");
}

TEST(SavedModelCli, ScorePairsIsTheDotProductOfTheEmbeddings) {
  split_cora s;
  auto const model = s.dir.path() / "lp";
  ASSERT_EQ(run_train_cli(tiny_run_args(
                "train", "8", "2",
                {"--task", "link_prediction", "--model", "gcn", "--save-model", model.string()},
                s.lp.string())),
            "");
  auto const emb = s.dir.path() / "z.npy";
  ASSERT_EQ(run_train_cli({"embed", "--model", model.string(), "--dataset", s.lp.string(),
                           "--out", emb.string()}),
            "");
  auto const z = read_npy<float>(emb);
  auto const d = z.dim(1);
  auto const dot = [&](std::int64_t u, std::int64_t v) {
    double s = 0;
    for (std::int64_t k = 0; k < d; ++k) {
      s += static_cast<double>(z.data[static_cast<std::size_t>(u * d + k)]) *
           z.data[static_cast<std::size_t>(v * d + k)];
    }
    return s;
  };
  std::vector<std::pair<std::int64_t, std::int64_t>> const pairs = {{0, 633}, {0, 1}, {2707, 5}};
  auto const text = s.dir.path() / "pairs.txt";
  test::write_text(text, "# u v\n0 633\n0 1\n\n2707 5\n");
  auto const npy = s.dir.path() / "pairs.npy";
  write_npy(npy, std::vector<std::int64_t>{0, 633, 0, 1, 2707, 5},
            std::vector<std::int64_t>{3, 2});
  for (auto const& file : {text, npy}) {
    auto const out = s.dir.path() / "scores.npy";
    ASSERT_EQ(run_train_cli({"score-pairs", "--model", model.string(), "--dataset",
                             s.lp.string(), "--pairs", file.string(), "--out", out.string()}),
              "");
    auto const got = read_npy<float>(out);
    ASSERT_EQ(got.shape, (std::vector<std::int64_t>{3}));
    for (std::size_t i = 0; i < pairs.size(); ++i) {
      EXPECT_NEAR(got.data[i], dot(pairs[i].first, pairs[i].second), 1e-4) << file << " " << i;
    }
    ASSERT_EQ(run_train_cli({"score-pairs", "--model", model.string(), "--dataset",
                             s.lp.string(), "--pairs", file.string(), "--out", out.string(),
                             "--sigmoid"}),
              "");
    auto const p = read_npy<float>(out);
    for (std::size_t i = 0; i < pairs.size(); ++i) {
      EXPECT_NEAR(p.data[i], 1 / (1 + std::exp(-dot(pairs[i].first, pairs[i].second))), 1e-5);
    }
  }
  // Bad pairs name the file and line; a node-classification model is refused.
  test::write_text(text, "0 1\n0 2708\n");
  EXPECT_THAT(run_train_cli({"score-pairs", "--model", model.string(), "--dataset",
                             s.lp.string(), "--pairs", text.string(), "--out",
                             (s.dir.path() / "x.npy").string()}),
              HasSubstr(text.string() + " line 2: pair (0, 2708) names a vertex outside [0, 2708)"));
  test::write_text(text, "0 1\n0 x\n");
  EXPECT_THAT(run_train_cli({"score-pairs", "--model", model.string(), "--dataset",
                             s.lp.string(), "--pairs", text.string(), "--out",
                             (s.dir.path() / "x.npy").string()}),
              HasSubstr(text.string() + " line 2: '0 x'"));
  auto const nc = s.dir.path() / "nc";
  ASSERT_EQ(run_train_cli(tiny_run_args("train", "8", "1", {"--save-model", nc.string()})), "");
  EXPECT_THAT(run_train_cli({"score-pairs", "--model", nc.string(), "--pairs", npy.string(),
                             "--out", (s.dir.path() / "x.npy").string()}),
              HasSubstr("is a node-classification model"));
}

}  // namespace
}  // namespace coopgnn
