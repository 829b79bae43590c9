// `--metrics-out` lines of several runs are told apart: every line carries its run's run_id (UTC
// start time and 64 random bits), one per invocation (`compare`'s two modes share it), and a
// file that already holds lines is appended to only with --append-metrics.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "pipeline/report.hpp"
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

/// `cmd` (train or compare) for `epochs` epochs on the bundled Cora, metrics to `metrics`.
std::vector<std::string> run_args(const std::string& cmd, const fs::path& metrics,
                                  const std::string& epochs = "2") {
  return test::tiny_run_args(cmd, "4", epochs, {"--metrics-out", metrics.string()});
}

std::vector<nlohmann::json> lines_of(const fs::path& file) {
  std::vector<nlohmann::json> v;
  std::istringstream in(read_text(file));
  for (std::string line; std::getline(in, line);) v.push_back(nlohmann::json::parse(line));
  return v;
}

TEST(MetricsOut, EveryLineCarriesItsRunsId) {
  temp_dir d;
  auto const m = d / "m.jsonl";
  ASSERT_EQ(run_train_cli(run_args("train", m)), "");
  auto const first = lines_of(m);
  ASSERT_EQ(first.size(), 3U) << "two epochs and the selection record";
  EXPECT_EQ(first[2]["record"], "selection");
  std::regex const form("[0-9]{8}T[0-9]{6}Z-[0-9a-f]{16}");
  for (const auto& j : first) {
    ASSERT_TRUE(j.contains("run_id")) << j.dump();
    EXPECT_TRUE(std::regex_match(j["run_id"].get<std::string>(), form)) << j["run_id"];
    EXPECT_EQ(j["run_id"], first[0]["run_id"]) << "one id per run";
  }
  // A second run on the same file: refused without --append-metrics, the file untouched.
  std::string const before = read_text(m);
  EXPECT_THAT(run_train_cli(run_args("train", m)),
              AllOf(HasSubstr("--metrics-out " + m.string()), HasSubstr("--append-metrics")));
  EXPECT_EQ(read_text(m), before);
  // With it: appended, and its lines name another run.
  auto args = run_args("compare", m, "1");
  args.push_back("--append-metrics");
  ASSERT_EQ(run_train_cli(args), "");
  auto const all = lines_of(m);
  ASSERT_EQ(all.size(), 7U) << "3 + per mode one epoch and its selection record";
  EXPECT_EQ(all[0]["run_id"], first[0]["run_id"]);
  EXPECT_NE(all[3]["run_id"], first[0]["run_id"]);
  EXPECT_EQ(all[3]["run_id"], all[5]["run_id"]) << "compare's two modes are one run";
  EXPECT_NE(all[3]["mode"], all[5]["mode"]);
  EXPECT_EQ(all[4]["record"], "selection");
  EXPECT_EQ(all[4]["mode"], all[3]["mode"]);
  EXPECT_EQ(all[6]["record"], "selection");
  EXPECT_EQ(all[6]["mode"], all[5]["mode"]);
}

TEST(MetricsOut, AnEmptyExistingFileNeedsNoFlag) {
  temp_dir d;
  test::write_text(d / "m.jsonl", "");
  ASSERT_EQ(run_train_cli(run_args("train", d / "m.jsonl", "1")), "");
  EXPECT_EQ(lines_of(d / "m.jsonl").size(), 2U) << "one epoch and the selection record";
}

TEST(MetricsOut, RunIdsDiffer) {
  auto const now = std::chrono::system_clock::now();
  std::set<std::string> ids;
  for (int i = 0; i < 100; ++i) ids.insert(make_run_id(now));
  EXPECT_EQ(ids.size(), 100U);
  // 2001-09-09 01:46:40 UTC.
  EXPECT_EQ(make_run_id(std::chrono::system_clock::from_time_t(1000000000)).substr(0, 17),
            "20010909T014640Z-");
}

}  // namespace
}  // namespace coopgnn
