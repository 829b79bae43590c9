// What the command line prints, as a user reads it: errors without the checks' source
// locations, `tma --help` listing only options tma takes (the others refused with a reason),
// and `compare`'s table and legend, with per-epoch lines only under --verbose.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "runtime/core/error.hpp"
#include "tests/common/cli.hpp"
#include "tools/coopgnn/commands.hpp"

namespace coopgnn {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

std::string const bin = COOPGNN_BINARY;
std::string const cora = std::string(COOPGNN_SOURCE_DIR) + "/data/cora";

/// Runs `coopgnn ARGS` (stderr merged); returns the output, and the status in `status`.
std::string run(const std::string& args, int& status) {
  std::string out;
  status = test::run_command(bin + " " + args, out);
  return out;
}

/// The option names a --help text lists: the first word of each line that starts with "-"
/// after its indentation ("-v,--verbose" gives both names).
std::set<std::string> listed_options(const std::string& help) {
  std::set<std::string> names;
  std::istringstream in(help);
  for (std::string line; std::getline(in, line);) {
    auto const start = line.find_first_not_of(' ');
    if (start == std::string::npos || line[start] != '-') continue;
    std::string word = line.substr(start, line.find(' ', start) - start);
    std::istringstream parts(word);
    for (std::string name; std::getline(parts, name, ',');) names.insert(name);
  }
  return names;
}

TEST(CliOutput, AnErrorOfInputCarriesNoCheckLocation) {
  int status = 0;
  std::string const args =
      "train --dataset " + cora + " --backend host --pes 0 --epochs 1 --no-progress";
  std::string const out = run(args, status);
  EXPECT_EQ(status, 1) << out;
  EXPECT_THAT(out, HasSubstr("coopgnn: error: --pes must be at least 1, got 0\n"));
  EXPECT_THAT(out, AllOf(Not(HasSubstr("failed:")), Not(HasSubstr(".cpp:"))));
  // Developers get the place from the debug log.
  std::string debug;
  status = test::run_command("env COOPGNN_LOG_LEVEL=debug " + bin + " " + args, debug);
  EXPECT_THAT(debug, HasSubstr("coopgnn: debug: check failed at cmd_train.cpp:"));
}

TEST(CliOutput, TmaHelpListsOnlyTheOptionsTmaTakes) {
  int status = 0;
  std::string const help = run("tma --help", status);
  ASSERT_EQ(status, 0) << help;
  auto const tma = listed_options(help);
  for (const char* refused : {"--embedding-dim", "--embedding-weight-decay", "--dry-run",
                              "--metrics-out", "--append-metrics", "--eval-every", "--epochs"}) {
    EXPECT_EQ(tma.count(refused), 0U) << refused << " is listed:\n" << help;
  }
  for (const char* taken : {"--hidden", "--time-limit", "--max-epochs", "--mode", "--scheme",
                            "--pes", "--fanouts", "--batch-size", "--lr"}) {
    EXPECT_EQ(tma.count(taken), 1U) << taken << " is not listed:\n" << help;
  }
  // tma's --mode defaults to train's (CLI11 shows the default after '=').
  std::istringstream in(help);
  bool saw_mode = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("  --mode ", 0) == 0) {
      saw_mode = true;
      EXPECT_THAT(line, HasSubstr("=cooperative"));
    }
  }
  EXPECT_TRUE(saw_mode) << help;
  // train keeps them; compare lists --verbose and not train's --dry-run.
  auto const train = listed_options(run("train --help", status));
  for (const char* name :
       {"--embedding-dim", "--dry-run", "--metrics-out", "--eval-every", "--epochs", "--mode"}) {
    EXPECT_EQ(train.count(name), 1U) << name;
  }
  auto const compare = listed_options(run("compare --help", status));
  EXPECT_EQ(compare.count("--verbose"), 1U);
  EXPECT_EQ(compare.count("--dry-run"), 0U);
  EXPECT_EQ(compare.count("--metrics-out"), 1U);
}

TEST(CliOutput, TmaRefusesWhatItDoesNotTakeNamingWhy) {
  struct usecase {
    std::vector<std::string> args;
    std::string message;
  };
  std::vector<usecase> const cases{
      {{"--epochs", "3"},
       "--epochs does not apply to coopgnn tma: the run ends at --time-limit or --max-epochs"},
      {{"--eval-every", "2"}, "--eval-every does not apply to coopgnn tma: the server's evaluator"},
      {{"--embedding-dim", "8"},
       "--embedding-dim does not apply to coopgnn tma: tma averages the model's weights"},
      {{"--embedding-weight-decay", "0.1"}, "--embedding-weight-decay does not apply"},
      {{"--dry-run"}, "--dry-run does not apply to coopgnn tma: tma has no dry run"},
      {{"--metrics-out", "m.jsonl"}, "--metrics-out does not apply to coopgnn tma: the server"},
      {{"--append-metrics"}, "--append-metrics does not apply to coopgnn tma"},
  };
  for (auto const& c : cases) {
    CLI::App app{"test"};
    cli::add_tma_command(app);
    std::vector<std::string> args = c.args;
    args.insert(args.begin(), "tma");
    std::reverse(args.begin(), args.end());  // CLI11 parses a reversed vector
    std::string what;
    try {
      app.parse(args);
    } catch (const error& e) {
      what = e.what();
    }
    EXPECT_THAT(what, AllOf(HasSubstr(c.message), Not(HasSubstr("failed:"))));
  }
}

std::string compare_args(const std::string& more) {
  return "compare --dataset " + cora +
         " --backend host --pes 2 --fanouts 2,2 --hidden 8 --epochs 2 --no-progress " + more;
}

TEST(CliOutput, CompareShowsOneTableWithALegendAndEpochLinesOnlyWhenVerbose) {
  int status = 0;
  std::string const out = run(compare_args(""), status);
  ASSERT_EQ(status, 0) << out;
  EXPECT_THAT(out, Not(HasSubstr("[cooperative] epoch")));
  EXPECT_THAT(out, Not(HasSubstr("[independent] epoch")));
  EXPECT_THAT(out, AllOf(HasSubstr("final test accuracy"), HasSubstr("epoch time, mean (s)"),
                         HasSubstr("cooperative/independent:"), HasSubstr("  epoch time"),
                         HasSubstr("independent/cooperative:"), HasSubstr("x faster\n"),
                         HasSubstr("timings: host backend, 2 PEs x ")));
  // The table holds the last epoch; each mode's --select-best choice follows it.
  EXPECT_THAT(out, AllOf(HasSubstr("cooperative: selected epoch "),
                         HasSubstr("independent: selected epoch ")));
  // Cora has 140 training seeds and the default batch is 1024: said once.
  std::string const once = "every epoch is one batch (--batch-size 1024 >= 140 training seeds)";
  ASSERT_THAT(out, HasSubstr(once));
  EXPECT_EQ(out.find(once), out.rfind(once));
  EXPECT_THAT(out, Not(HasSubstr("cache hit rate"))) << "no cache was configured";

  std::string const verbose = run(compare_args("--verbose"), status);
  ASSERT_EQ(status, 0) << verbose;
  for (const char* line : {"[cooperative] epoch   1", "[cooperative] epoch   2",
                           "[independent] epoch   1", "[independent] epoch   2"}) {
    EXPECT_THAT(verbose, HasSubstr(line));
  }
  std::string const cached = run(compare_args("--cache-policy lru --cache-rows 500"), status);
  ASSERT_EQ(status, 0) << cached;
  EXPECT_THAT(cached, HasSubstr("feature cache hit rate"));
}

}  // namespace
}  // namespace coopgnn
