// Values that used to train nonsense or die with an unrelated message are refused up front,
// naming the option, file or field: non-finite float options (--lr inf, --weight-decay nan,
// --homophily nan, ...) and a dropout outside [0, 1) at parse time; a checkpoint manifest whose
// integers are out of range (epoch 2147483647); --threads-per-pe beyond 4 x the hardware
// threads; and a dataset directory that cannot be read ("cannot read: Permission denied", not a
// missing file).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "runtime/core/error.hpp"
#include "tests/common/cli.hpp"
#include "tests/common/files.hpp"

namespace coopgnn {
namespace {

namespace fs = std::filesystem;
using test::read_text;
using test::run_data_cli;
using test::run_train_cli;
using test::temp_dir;
using test::write_text;
using ::testing::AllOf;
using ::testing::HasSubstr;

std::string cora() { return std::string(COOPGNN_SOURCE_DIR) + "/data/cora"; }

/// A short run on `dataset` (default the bundled Cora; one batch per epoch) with `more` options.
std::vector<std::string> train(const std::vector<std::string>& more,
                               const std::string& dataset = cora()) {
  return test::tiny_run_args("train", "4", "1", more, dataset);
}

/// The message of the CLI::ParseError `f` throws ("<no parse error>" when none).
template <typename F>
std::string parse_error_of(F&& f) {
  try {
    f();
  } catch (const CLI::ParseError& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("<not a parse error: ") + e.what() + ">";
  }
  return "<no parse error>";
}

TEST(OptionRanges, NonFiniteFloatsAreRefusedAtParseTimeNamingTheOption) {
  for (auto const& [option, value] :
       std::vector<std::pair<std::string, std::string>>{{"--lr", "inf"},
                                                        {"--lr", "nan"},
                                                        {"--lr", "1e999"},
                                                        {"--lr", "-inf"},
                                                        {"--weight-decay", "nan"},
                                                        {"--weight-decay", "inf"},
                                                        {"--dropout", "nan"},
                                                        {"--attn-dropout", "nan"},
                                                        {"--negative-slope", "inf"},
                                                        {"--peer-timeout", "nan"},
                                                        {"--cache-fraction", "nan"}}) {
    EXPECT_THAT(parse_error_of([&] {
                  (void)run_train_cli(train({option, value}));
                }),
                HasSubstr(option))
        << option << " " << value;
  }
  // Out of their ranges.
  for (auto const& [option, value] :
       std::vector<std::pair<std::string, std::string>>{{"--dropout", "1"},
                                                        {"--dropout", "-0.1"},
                                                        {"--lr", "0"},
                                                        {"--lr", "-0.01"},
                                                        {"--weight-decay", "-1"},
                                                        {"--epochs", "2147483647"}}) {
    EXPECT_THAT(parse_error_of([&] {
                  (void)run_train_cli(train({option, value}));
                }),
                HasSubstr(option))
        << option << " " << value;
  }
  temp_dir d;
  EXPECT_THAT(
      parse_error_of([&] {
        run_data_cli({"generate", "sbm", (d / "s").string(), "--nodes", "10", "--classes", "2",
                      "--avg-degree", "2", "--homophily", "nan", "--feature-dim", "2"});
      }),
      HasSubstr("--homophily"));
  EXPECT_THAT(
      parse_error_of([&] {
        run_data_cli({"split-edges", cora(), (d / "lp").string(), "--fractions", "nan,0.5,0.5"});
      }),
      HasSubstr("--fractions"));
  EXPECT_FALSE(fs::exists(d / "s"));
  // Finite values in range still train.
  EXPECT_EQ(run_train_cli(train({"--lr", "0.02", "--dropout", "0", "--weight-decay", "0"})), "");
}

TEST(OptionRanges, TheCommandLineRefusesInfiniteLr) {
  std::string out;
  int const status =
      test::run_command(std::string(COOPGNN_BINARY) + " train --lr inf --epochs 1", out);
  ASSERT_NE(status, -1) << out;
  EXPECT_NE(status, 0) << out;
  EXPECT_THAT(out, AllOf(HasSubstr("--lr"), HasSubstr("not a finite number")));
  EXPECT_THAT(out, ::testing::Not(HasSubstr("epoch 1"))) << "it trained";
}

TEST(OptionRanges, AManifestEpochOutOfRangeIsNamed) {
  temp_dir d;
  auto const ck = d / "ck";
  ASSERT_EQ(run_train_cli(train({"--checkpoint", ck.string()})), "");
  auto const manifest = ck / "ckpt-000001-000001" / "manifest.json";
  std::string text = read_text(manifest);
  // The position's epoch (extra.selection, before it in the manifest, has one too).
  auto const at = text.find("\"epoch\": 1,", text.find("\"position\""));
  ASSERT_NE(at, std::string::npos) << text;
  text.replace(at, 11, "\"epoch\": 2147483647,");
  write_text(manifest, text);
  auto resume = train({"--resume", ck.string()});
  resume[14] = "3";  // --epochs 3
  ASSERT_EQ(resume[13], "--epochs");
  EXPECT_THAT(run_train_cli(resume),
              AllOf(HasSubstr(manifest.string()), HasSubstr("position.epoch = 2147483647"),
                    HasSubstr("[1, 1000000000]")));
  // A float where an integer belongs, and a step count below zero.
  text = read_text(manifest);
  text.replace(text.find("\"epoch\": 2147483647,"), 20, "\"epoch\": 1.5,");
  write_text(manifest, text);
  EXPECT_THAT(run_train_cli(resume), HasSubstr("position.epoch = 1.5"));
  text = read_text(manifest);
  text.replace(text.find("\"epoch\": 1.5,"), 13, "\"epoch\": 1,");
  auto const steps = text.find("\"adam_steps\": ");
  ASSERT_NE(steps, std::string::npos);
  text.insert(steps + 14, "-");
  write_text(manifest, text);
  EXPECT_THAT(run_train_cli(resume), HasSubstr("adam_steps = -"));
}

TEST(OptionRanges, ThreadsBeyondFourTimesTheHardwareAreRefused) {
  EXPECT_THAT(run_train_cli(train({"--threads-per-pe", "100000"})),
              AllOf(HasSubstr("--threads-per-pe 100000 exceeds"), HasSubstr("hardware threads")));
  EXPECT_THAT(run_train_cli(train({"--sample-threads", "100000"})),
              HasSubstr("--sample-threads 100000"));
  int const hw = static_cast<int>(std::max(1U, std::thread::hardware_concurrency()));
  EXPECT_EQ(run_train_cli(train({"--threads-per-pe", std::to_string(hw)})), "");
}

TEST(OptionRanges, AnUnreadableDatasetIsNotReportedMissing) {
  if (::geteuid() == 0) GTEST_SKIP() << "running as root: permissions do not block reads";
  temp_dir d;
  fs::copy(cora(), d / "cora", fs::copy_options::recursive);
  fs::permissions(d / "cora", fs::perms::none);
  std::string const why = run_train_cli(train({}, (d / "cora").string()));
  std::string info;
  try {
    run_data_cli({"info", (d / "cora").string()});
  } catch (const io_error& e) {
    info = e.what();
  }
  fs::permissions(d / "cora", fs::perms::owner_all);
  EXPECT_THAT(why, AllOf(HasSubstr("metadata.yaml: cannot read: Permission denied")));
  EXPECT_THAT(why, ::testing::Not(HasSubstr("missing")));
  EXPECT_THAT(info, HasSubstr("cannot read: Permission denied"));
  // An unreadable array: the file is named, not called missing.
  fs::permissions(d / "cora" / "edges", fs::perms::none);
  std::string const edges = run_train_cli(train({}, (d / "cora").string()));
  fs::permissions(d / "cora" / "edges", fs::perms::owner_all);
  EXPECT_THAT(edges, AllOf(HasSubstr("cannot read: Permission denied"),
                           ::testing::Not(HasSubstr("missing"))));
}

}  // namespace
}  // namespace coopgnn
