// `coopgnn train --checkpoint DIR` never destroys another run's checkpoints: one run at a time per
// DIR (an advisory lock on DIR/.lock; a second run is refused at once, in process and as a child
// process), and a DIR holding checkpoints this run would replace (another configuration's, or
// the same configuration's without --resume) is refused unless --overwrite-checkpoints.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "runtime/core/error.hpp"
#include "pipeline/checkpoint.hpp"
#include "tests/common/cli.hpp"
#include "tests/common/files.hpp"

namespace coopgnn {
namespace {

namespace fs = std::filesystem;
using test::read_text;
using test::run_train_cli;
using test::temp_dir;
using ::testing::AllOf;
using ::testing::HasSubstr;

std::vector<std::string> with(std::vector<std::string> args, const std::vector<std::string>& more) {
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

/// A run on the bundled Cora, one batch (its 140 training vertices) per epoch.
std::vector<std::string> base(const std::string& hidden = "8", const std::string& epochs = "1") {
  return test::tiny_run_args("train", hidden, epochs);
}

/// base() checkpointing into `ck`.
std::vector<std::string> train(const fs::path& ck, const std::string& hidden = "8") {
  return with(base(hidden), {"--checkpoint", ck.string()});
}

/// Every regular file under `dir` but the lock file, with its bytes.
std::map<std::string, std::string> snapshot(const fs::path& dir) {
  std::map<std::string, std::string> m;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (e.is_regular_file() && e.path().filename() != ".lock") {
      m[fs::relative(e.path(), dir).string()] = read_text(e.path());
    }
  }
  return m;
}

TEST(CheckpointDir, AnotherRunsCheckpointsAreRefusedUnlessOverwriteIsGiven) {
  temp_dir d;
  auto const ck = d / "ck";
  ASSERT_EQ(run_train_cli(train(ck, "8")), "");
  auto const first = snapshot(ck);
  ASSERT_TRUE(first.count("latest"));
  std::string const why = run_train_cli(train(ck, "16"));
  EXPECT_THAT(why, AllOf(HasSubstr("--checkpoint " + ck.string()),
                         HasSubstr("holds the checkpoints of another run"),
                         HasSubstr("--hidden is 8 in the checkpoint, 16 in this run"),
                         HasSubstr("--overwrite-checkpoints")));
  EXPECT_EQ(snapshot(ck), first) << "the first run's checkpoints were touched";
  // Explicitly: replaced.
  EXPECT_EQ(run_train_cli(with(train(ck, "16"), {"--overwrite-checkpoints"})), "");
  EXPECT_EQ(read_checkpoint(ck).identity["--hidden"], 16);
}

TEST(CheckpointDir, TheSameConfigurationMustResumeOrOverwrite) {
  temp_dir d;
  auto const ck = d / "ck";
  ASSERT_EQ(run_train_cli(train(ck)), "");
  auto const first = snapshot(ck);
  EXPECT_THAT(run_train_cli(train(ck)),
              AllOf(HasSubstr("holds checkpoints of a run with these options"),
                    HasSubstr("ckpt-000001-000001"), HasSubstr("--resume " + ck.string())));
  EXPECT_EQ(snapshot(ck), first);
  // Resuming from DIR (or one of its checkpoints) continues into it.
  EXPECT_EQ(run_train_cli(with(base("8", "2"), {"--resume", ck.string()})), "");
  EXPECT_EQ(read_text(ck / "latest"), "ckpt-000002-000001\n");
  // A fresh directory, and one holding only the lock file of an ended run, are no obstacle.
  EXPECT_EQ(run_train_cli(train(d / "other")), "");
}

TEST(CheckpointDir, ASecondConcurrentRunIsRefusedAtOnce) {
  temp_dir d;
  auto const ck = d / "ck";
  {
    checkpoint_lock const held(ck);  // another run writing into ck
    EXPECT_THROW(checkpoint_lock{ck}, io_error);
    auto const t0 = std::chrono::steady_clock::now();
    std::string const why = run_train_cli(train(ck));
    EXPECT_THAT(why,
                AllOf(HasSubstr("--checkpoint " + ck.string()), HasSubstr("in use by another run"),
                      HasSubstr("process " + std::to_string(::getpid()))));
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(2))
        << "refused before the dataset is read";
    EXPECT_FALSE(fs::exists(ck / "latest"));
  }
  // Released with the holder: the run proceeds, and releases it in turn.
  EXPECT_EQ(run_train_cli(train(ck)), "");
  EXPECT_NO_THROW(checkpoint_lock{ck});
}

TEST(CheckpointDir, TheCommandLineRefusesADirectoryInUse) {
  temp_dir d;
  auto const ck = d / "ck";
  checkpoint_lock const held(ck);
  std::string cmd = COOPGNN_BINARY;
  for (const std::string& a : train(ck)) cmd += " '" + a + "'";
  std::string out;
  int const status = test::run_command(cmd, out);
  ASSERT_NE(status, -1) << out;
  EXPECT_EQ(status, 1) << out;
  EXPECT_THAT(out,
              AllOf(HasSubstr("coopgnn: error: --checkpoint"), HasSubstr("in use by another run")));
}

}  // namespace
}  // namespace coopgnn
