// --select-best on the command line (docs/usage.md "Model selection"): the selection record of
// --metrics-out and the summary line give the epoch of best validation metric (evaluated epochs
// only, the earlier on ties) and its test metric, --save-model writes that epoch's model, a
// resumed run selects and saves what the uninterrupted run does, `last` keeps the last epoch;
// link prediction with one negative per positive is selected by ROC-AUC.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "runtime/graph/npy.hpp"
#include "runtime/graph/npz.hpp"
#include "tests/common/cli.hpp"
#include "tests/common/files.hpp"

namespace coopgnn {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using test::read_text;
using test::run_data_cli;
using test::run_train_cli;
using test::temp_dir;
using ::testing::HasSubstr;

/// A run's --metrics-out lines: the epoch records and the selection record.
struct records {
  std::vector<json> epochs;
  std::vector<json> selections;
};

records records_of(const fs::path& file) {
  records r;
  std::istringstream in(read_text(file));
  for (std::string line; std::getline(in, line);) {
    json j = json::parse(line);
    (j.contains("epoch") ? r.epochs : r.selections).push_back(std::move(j));
  }
  return r;
}

/// The epoch rule val must select, from the epoch records alone: the first evaluated epoch of
/// highest val_metric.
int best_val_epoch(const std::vector<json>& epochs) {
  int best = 0;
  double v = -1;
  for (const json& j : epochs) {
    if (j["val_metric"].is_null()) continue;
    if (j["val_metric"].get<double>() > v) {
      v = j["val_metric"].get<double>();
      best = j["epoch"].get<int>();
    }
  }
  return best;
}

const json& epoch_record(const records& r, int e) {
  for (const json& j : r.epochs) {
    if (j["epoch"].get<int>() == e) return j;
  }
  ADD_FAILURE() << "no record of epoch " << e;
  return r.epochs.front();
}

/// A run on the bundled Cora that overfits: one PE, one batch of the 140 training vertices per
/// epoch, lr 0.1 without weight decay or dropout, so its validation accuracy peaks (epoch 7 of
/// 12) before the last epoch (asserted where it matters).
std::vector<std::string> overfit_args(const std::vector<std::string>& more,
                                      const std::string& epochs = "12") {
  std::vector<std::string> a = {"train",
                                "--dataset",
                                std::string(COOPGNN_SOURCE_DIR) + "/data/cora",
                                "--backend",
                                "host",
                                "--pes",
                                "1",
                                "--fanouts",
                                "5,5",
                                "--batch-size",
                                "140",
                                "--hidden",
                                "32",
                                "--lr",
                                "0.1",
                                "--weight-decay",
                                "0",
                                "--dropout",
                                "0",
                                "--seed",
                                "1",
                                "--epochs",
                                epochs,
                                "--quiet",
                                "--no-progress"};
  a.insert(a.end(), more.begin(), more.end());
  return a;
}

/// Test accuracy of a saved model on Cora's test split: `predict`'s classes against the labels
/// read from the dataset (not the trainer's evaluation).
double predicted_test_accuracy(const fs::path& model, const fs::path& dir) {
  auto const out = dir / "classes.npy";
  EXPECT_EQ(run_train_cli({"predict", "--model", model.string(), "--out", out.string()}), "");
  auto const cls = read_npy<std::int64_t>(out);
  auto const labels =
      read_npy<std::int64_t>(fs::path(COOPGNN_SOURCE_DIR) / "data/cora/set/test_labels.npy");
  auto const ids =
      read_npy<std::int64_t>(fs::path(COOPGNN_SOURCE_DIR) / "data/cora/set/test_seeds.npy");
  std::int64_t right = 0;
  for (std::int64_t i = 0; i < ids.size(); ++i) right += cls.data[ids.data[i]] == labels.data[i];
  return static_cast<double>(right) / static_cast<double>(ids.size());
}

TEST(SelectBestCli, ValReportsTheBestValidationEpochAndSavesItsModel) {
  temp_dir d;
  ASSERT_EQ(run_train_cli(overfit_args({"--metrics-out", (d / "m.jsonl").string(), "--save-model",
                                        (d / "model").string()})),
            "");
  records const r = records_of(d / "m.jsonl");
  ASSERT_EQ(r.epochs.size(), 12U);
  ASSERT_EQ(r.selections.size(), 1U) << "one selection record, after the epochs";
  const json& s = r.selections[0];
  int const best = best_val_epoch(r.epochs);
  ASSERT_LT(best, 12) << "the run must peak before its last epoch for this test to mean much";
  EXPECT_EQ(s["record"], "selection");
  EXPECT_EQ(s["select_best"], "val");
  EXPECT_EQ(s["selected_epoch"], best);
  EXPECT_EQ(s["epochs"], 12);
  EXPECT_EQ(s["metric_name"], "accuracy");
  EXPECT_EQ(s["val_metric"], epoch_record(r, best)["val_metric"]);
  EXPECT_EQ(s["test_metric"], epoch_record(r, best)["test_metric"]);
  EXPECT_FALSE(s.contains("note"));
  // The saved model is that epoch's: predict reproduces its test accuracy, not the last one's.
  double const acc = predicted_test_accuracy(d / "model", d.path());
  EXPECT_EQ(acc, s["test_metric"].get<double>());
  // Per-epoch records are as they were: no selection fields in them.
  for (const json& j : r.epochs) EXPECT_FALSE(j.contains("record") || j.contains("selected_epoch"));
}

TEST(SelectBestCli, LastKeepsTheLastEpochAndItsModel) {
  temp_dir d;
  ASSERT_EQ(run_train_cli(
                overfit_args({"--select-best", "last", "--metrics-out", (d / "m.jsonl").string(),
                              "--save-model", (d / "model").string()})),
            "");
  records const r = records_of(d / "m.jsonl");
  ASSERT_EQ(r.selections.size(), 1U);
  EXPECT_EQ(r.selections[0]["select_best"], "last");
  EXPECT_EQ(r.selections[0]["selected_epoch"], 12);
  EXPECT_EQ(r.selections[0]["test_metric"], epoch_record(r, 12)["test_metric"]);
  EXPECT_EQ(predicted_test_accuracy(d / "model", d.path()),
            epoch_record(r, 12)["test_metric"].get<double>());
}

TEST(SelectBestCli, WithEvalEveryOnlyEvaluatedEpochsCount) {
  temp_dir d;
  ASSERT_EQ(
      run_train_cli(overfit_args({"--eval-every", "5", "--metrics-out", (d / "m.jsonl").string()})),
      "");
  records const r = records_of(d / "m.jsonl");
  ASSERT_EQ(r.selections.size(), 1U);
  int const e = r.selections[0]["selected_epoch"].get<int>();
  EXPECT_TRUE(e == 5 || e == 10 || e == 12) << e;
  EXPECT_EQ(e, best_val_epoch(r.epochs));
}

TEST(SelectBestCli, AResumedRunSelectsAndSavesWhatTheUninterruptedRunDoes) {
  temp_dir d;
  ASSERT_EQ(run_train_cli(overfit_args({"--metrics-out", (d / "straight.jsonl").string(),
                                        "--save-model", (d / "straight").string()})),
            "");
  // The same run stopped after epoch 8 (a run of 8 epochs), then resumed to 12.
  ASSERT_EQ(run_train_cli(overfit_args({"--checkpoint", (d / "ck").string()}, "8")), "");
  ASSERT_EQ(run_train_cli(overfit_args({"--resume", (d / "ck").string(), "--metrics-out",
                                        (d / "resumed.jsonl").string(), "--save-model",
                                        (d / "resumed").string()})),
            "");
  json want = records_of(d / "straight.jsonl").selections.at(0);
  json got = records_of(d / "resumed.jsonl").selections.at(0);
  ASSERT_LE(want["selected_epoch"].get<int>(), 8)
      << "the selected epoch must lie before the resume for this test to mean much";
  want.erase("run_id");
  got.erase("run_id");
  EXPECT_EQ(got, want);
  // The same tensors bit for bit (the archives' member timestamps differ).
  npz_archive const a(d / "straight" / "model.npz");
  npz_archive const b(d / "resumed" / "model.npz");
  ASSERT_EQ(a.members(), b.members());
  for (auto const& name : a.members()) {
    EXPECT_EQ(a.read<float>(name).data, b.read<float>(name).data) << name;
  }
}

TEST(SelectBestCli, ACheckpointWithoutTheSelectionStateStillResumes) {
  temp_dir d;
  // --select-best last writes no selection state (as checkpoints older than the option).
  ASSERT_EQ(run_train_cli(
                overfit_args({"--select-best", "last", "--checkpoint", (d / "ck").string()}, "8")),
            "");
  auto const manifest = json::parse(read_text(d / "ck" / "ckpt-000008-000001" / "manifest.json"));
  ASSERT_FALSE(manifest["extra"].contains("selection"));
  ASSERT_EQ(run_train_cli(
                overfit_args({"--resume", (d / "ck").string(), "--metrics-out",
                              (d / "m.jsonl").string(), "--save-model", (d / "model").string()})),
            "");
  records const r = records_of(d / "m.jsonl");
  ASSERT_EQ(r.selections.size(), 1U);
  const json& s = r.selections[0];
  EXPECT_THAT(s.value("note", ""), HasSubstr("selected among epochs 9 to 12 only"));
  EXPECT_EQ(s["selected_epoch"], best_val_epoch(r.epochs)) << "the resumed epochs' best";
  EXPECT_EQ(predicted_test_accuracy(d / "model", d.path()), s["test_metric"].get<double>());
}

TEST(SelectBestCli, TheSummaryLineNamesTheSelectedEpoch) {
  temp_dir d;
  std::string cmd = std::string(COOPGNN_BINARY);
  for (auto const& a : overfit_args({"--metrics-out", (d / "m.jsonl").string()}, "4")) {
    if (a != "--quiet") cmd += " " + a;
  }
  std::string out;
  ASSERT_EQ(test::run_command(cmd, out), 0) << out;
  records const r = records_of(d / "m.jsonl");
  int const e = best_val_epoch(r.epochs);
  char want[160];
  std::snprintf(want, sizeof want, "selected epoch %d of 4 (best val accuracy): val accuracy %.4f",
                e, epoch_record(r, e)["val_metric"].get<double>());
  EXPECT_THAT(out, HasSubstr(want));
}

TEST(SelectBestCli, OneNegativePerPositiveIsSelectedByRocAucOtherwiseMrr) {
  temp_dir d;
  for (std::string const k : {"1", "3"}) {
    auto const lp = d / ("lp" + k);
    run_data_cli({"split-edges", std::string(COOPGNN_SOURCE_DIR) + "/data/cora", lp.string(),
                  "--seed", "1", "--negatives", k});
    auto const m = d / ("m" + k + ".jsonl");
    std::string cmd = std::string(COOPGNN_BINARY);
    for (auto const& a : test::tiny_run_args(
             "train", "8", "1", {"--task", "link_prediction", "--metrics-out", m.string()},
             lp.string())) {
      if (a != "--quiet") cmd += " " + a;
    }
    std::string out;
    ASSERT_EQ(test::run_command(cmd, out), 0) << out;
    std::string const name = k == "1" ? "roc_auc" : "mrr";
    EXPECT_THAT(out, HasSubstr("val " + name + " ")) << k << " negatives";
    records const r = records_of(m);
    ASSERT_EQ(r.epochs.size(), 1U);
    const json& e = r.epochs[0];
    EXPECT_EQ(e["metric_name"], name);
    // Every metric stays in the record under its name; the selection metric is one of them.
    for (const char* key : {"mrr", "mrr_ogb", "hits@10", "roc_auc", "average_precision"}) {
      EXPECT_TRUE(e["metrics"]["val"].contains(key)) << key;
    }
    EXPECT_EQ(e["val_metric"], e["metrics"]["val"][name]);
    EXPECT_EQ(e["test_metric"], e["metrics"]["test"][name]);
    EXPECT_EQ(r.selections.at(0)["metric_name"], name);
  }
}

}  // namespace
}  // namespace coopgnn
