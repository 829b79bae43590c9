// `coopgnn train` as a child process (fork + exec of the built binary;
// README "Checkpoints and interrupts"): SIGKILL mid-run leaves a valid previous checkpoint from
// which a resumed run reproduces the uninterrupted run's --metrics-out lines (timings apart);
// SIGINT and SIGTERM stop cleanly with status 130 / 143, a checkpoint and complete metrics
// lines; `--save-model` + `predict` / `embed` agree with the trainer's own evaluation.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "runtime/graph/npy.hpp"
#include "tests/common/files.hpp"

namespace coopgnn {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

/// A small run on the bundled Cora: 18 batches per epoch, a few seconds in all.
std::vector<std::string> train_args(const std::string& metrics, int epochs) {
  return {"train",
          "--backend",
          "host",
          "--pes",
          "3",
          "--batch-size",
          "8",
          "--fanouts",
          "4,4",
          "--hidden",
          "8",
          "--epochs",
          std::to_string(epochs),
          "--seed",
          "3",
          "--no-progress",
          "--metrics-out",
          metrics};
}

/// Starts the coopgnn binary with `args`, stdout and stderr to `log`.
pid_t spawn(const std::vector<std::string>& args, const fs::path& log) {
  std::vector<std::string> full{COOPGNN_BINARY};
  full.insert(full.end(), args.begin(), args.end());
  pid_t const pid = fork();
  if (pid == 0) {
    int const fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(fd, STDOUT_FILENO);
    ::dup2(fd, STDERR_FILENO);
    std::vector<char*> argv;
    for (auto& a : full) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  return pid;
}

int wait_for(pid_t pid) {
  int status = 0;
  ::waitpid(pid, &status, 0);
  return status;
}

/// Runs to the end; expects status 0.
void run(const std::vector<std::string>& args, const fs::path& log) {
  int const st = wait_for(spawn(args, log));
  ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << "status " << st << "\n"
                                                     << test::read_text(log);
}

/// Waits (up to 60 s) until DIR/latest names a checkpoint of epoch >= `epoch`, then sends `sig`.
/// @returns false when the child ended first.
bool signal_after_checkpoint(pid_t pid, const fs::path& dir, int epoch, int sig) {
  auto const deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline) {
    std::string const latest = test::read_text(dir / "latest");
    if (latest.size() >= 11 && std::stoi(latest.substr(5, 6)) >= epoch) {
      ::kill(pid, sig);
      return true;
    }
    int st = 0;
    if (::waitpid(pid, &st, WNOHANG) == pid) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return false;
}

/// The metrics lines by epoch (the last line of each epoch), timings removed, and the selection
/// record under key 0; every line must be complete JSON.
std::map<int, json> metrics_by_epoch(const fs::path& file) {
  std::string const text = test::read_text(file);
  EXPECT_TRUE(text.empty() || text.back() == '\n') << "a torn last line:\n" << text;
  std::map<int, json> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    json j = json::parse(line, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << "not a complete JSON line: " << line;
    if (j.is_discarded()) continue;
    j.erase("run_id");  // each process draws its own
    if (!j.contains("epoch")) {
      // The run's selection record (every run ends with one): one per run, under key 0.
      if (out.count(0) != 0) EXPECT_EQ(out[0], j) << "two different selection records";
      out[0] = j;
      continue;
    }
    j.erase("seconds");
    j.erase("cpu_seconds");  // timings, like "seconds"
    j["memory"].erase("peak_rss_bytes");  // the process's RSS differs from run to run
    j["memory"].erase("rss_bytes");
    int const e = j["epoch"].get<int>();
    if (out.count(e) != 0) {
      EXPECT_EQ(out[e], j) << "two different lines for epoch " << e;
    }
    out[e] = j;
  }
  return out;
}

void expect_same_metrics(const std::map<int, json>& got, const std::map<int, json>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (auto const& [e, j] : want) {
    ASSERT_EQ(got.count(e), 1U) << "epoch " << e;
    EXPECT_EQ(got.at(e), j) << "epoch " << e;
  }
}

constexpr int kEpochs = 5;

TEST(Interrupts, KillNineThenResumeReproducesTheUninterruptedRun) {
  test::temp_dir dir;
  run(train_args((dir / "straight.jsonl").string(), kEpochs), dir / "straight.log");
  auto const want = metrics_by_epoch(dir / "straight.jsonl");
  ASSERT_EQ(want.size(), static_cast<std::size_t>(kEpochs) + 1) << "epochs and the selection";
  ASSERT_GT(want.at(kEpochs)["train_loss"].get<double>(), 0.0);

  auto args = train_args((dir / "killed.jsonl").string(), kEpochs);
  args.insert(args.end(), {"--checkpoint", (dir / "ck").string()});
  pid_t const pid = spawn(args, dir / "killed.log");
  ASSERT_TRUE(signal_after_checkpoint(pid, dir / "ck", 2, SIGKILL))
      << "the run ended before it could be killed\n"
      << test::read_text(dir / "killed.log");
  int const st = wait_for(pid);
  ASSERT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL) << "status " << st;
  auto const before = metrics_by_epoch(dir / "killed.jsonl");  // complete lines only
  EXPECT_LT(before.size(), static_cast<std::size_t>(kEpochs)) << "killed after the end";

  auto resume = train_args((dir / "killed.jsonl").string(), kEpochs);
  resume.insert(resume.end(), {"--resume", (dir / "ck").string(), "--append-metrics"});
  run(resume, dir / "resumed.log");
  EXPECT_NE(test::read_text(dir / "resumed.log").find("resumed from"), std::string::npos);
  expect_same_metrics(metrics_by_epoch(dir / "killed.jsonl"), want);
}

struct signal_usecase {
  int sig;
  int status;
};

class CleanStop : public ::testing::TestWithParam<signal_usecase> {};

TEST_P(CleanStop, ExitStatusCheckpointAndCompleteLines) {
  auto const u = GetParam();
  test::temp_dir dir;
  run(train_args((dir / "straight.jsonl").string(), kEpochs), dir / "straight.log");
  auto args = train_args((dir / "m.jsonl").string(), kEpochs);
  args.insert(args.end(), {"--checkpoint", (dir / "ck").string()});
  pid_t const pid = spawn(args, dir / "log");
  ASSERT_TRUE(signal_after_checkpoint(pid, dir / "ck", 1, u.sig)) << test::read_text(dir / "log");
  int const st = wait_for(pid);
  std::string const log = test::read_text(dir / "log");
  ASSERT_TRUE(WIFEXITED(st)) << "status " << st << "\n" << log;
  EXPECT_EQ(WEXITSTATUS(st), u.status) << log;
  EXPECT_NE(log.find(u.sig == SIGINT ? "stopped by SIGINT" : "stopped by SIGTERM"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("resume with --resume"), std::string::npos) << log;
  // The checkpoint the stop wrote is the latest and names where the run was.
  std::string const latest = test::read_text(dir / "ck/latest");
  ASSERT_FALSE(latest.empty());
  EXPECT_NE(log.find(latest.substr(0, latest.size() - 1)), std::string::npos) << log;
  EXPECT_TRUE(fs::exists(dir / "ck" / latest.substr(0, latest.size() - 1) / "manifest.json"));
  auto const lines = metrics_by_epoch(dir / "m.jsonl");
  EXPECT_GE(lines.size(), 1U);
  EXPECT_LT(lines.size(), static_cast<std::size_t>(kEpochs));
  // Stopped inside an epoch (the usual case: the signal comes right after a checkpoint) or
  // between two: either way the resumed run ends as the uninterrupted one.
  auto resume = train_args((dir / "m.jsonl").string(), kEpochs);
  resume.insert(resume.end(), {"--resume", (dir / "ck").string(), "--append-metrics"});
  run(resume, dir / "resumed.log");
  expect_same_metrics(metrics_by_epoch(dir / "m.jsonl"), metrics_by_epoch(dir / "straight.jsonl"));
}

INSTANTIATE_TEST_SUITE_P(Signals, CleanStop,
                         ::testing::Values(signal_usecase{SIGINT, 130},
                                           signal_usecase{SIGTERM, 143}),
                         [](const auto& info) {
                           return std::string(info.param.sig == SIGINT ? "sigint" : "sigterm");
                         });

TEST(SavedModel, PredictReproducesTheRunsTestAccuracyAndEmbedItsLogits) {
  test::temp_dir dir;
  auto args = train_args((dir / "m.jsonl").string(), 2);
  args.insert(args.end(), {"--save-model", (dir / "model").string()});
  run(args, dir / "train.log");
  // The saved model is the selected epoch's (--select-best val, the default).
  double const test_acc = metrics_by_epoch(dir / "m.jsonl").at(0)["test_metric"].get<double>();
  run({"predict", "--model", (dir / "model").string(), "--out", (dir / "cls.npy").string(),
       "--out-logits", (dir / "logits.npy").string()},
      dir / "predict.log");
  run({"embed", "--model", (dir / "model").string(), "--out", (dir / "emb.npy").string()},
      dir / "embed.log");
  auto const cls = read_npy<std::int64_t>(dir / "cls.npy");
  auto const logits = read_npy<float>(dir / "logits.npy");
  auto const emb = read_npy<float>(dir / "emb.npy");
  ASSERT_EQ(cls.shape, (std::vector<std::int64_t>{2708}));
  ASSERT_EQ(logits.shape, (std::vector<std::int64_t>{2708, 7}));
  EXPECT_EQ(emb.data, logits.data) << "no --linear-head: the last layer's output is the logits";
  // Cora's test split: the 1000 vertices read from the dataset itself.
  auto const labels =
      read_npy<std::int64_t>(fs::path(COOPGNN_SOURCE_DIR) / "data/cora/set/test_labels.npy");
  auto const ids =
      read_npy<std::int64_t>(fs::path(COOPGNN_SOURCE_DIR) / "data/cora/set/test_seeds.npy");
  ASSERT_EQ(ids.size(), labels.size());
  std::int64_t right = 0;
  for (std::int64_t i = 0; i < ids.size(); ++i) right += cls.data[ids.data[i]] == labels.data[i];
  EXPECT_EQ(static_cast<double>(right) / static_cast<double>(ids.size()), test_acc);
  EXPECT_GT(test_acc, 0.2);
}

}  // namespace
}  // namespace coopgnn
