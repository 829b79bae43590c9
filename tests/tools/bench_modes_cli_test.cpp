// `coopgnn bench modes` on the command line: the paper's grid (--paper-settings, the cache,
// --batch-dependency, --feature-bytes, --gemm-math) reaches the outputs, and the options that
// contradict it are errors naming them.
#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "runtime/core/error.hpp"
#include "tools/coopgnn/commands.hpp"

namespace coopgnn {
namespace {

/// Runs `bench modes ARGS`; @returns the coopgnn::error's message, empty on success.
std::string run_bench_modes(std::vector<std::string> args) {
  CLI::App app{"test"};
  auto* bench = app.add_subcommand("bench");
  cli::add_bench_modes_command(*bench);
  args.insert(args.begin(), {"bench", "modes"});
  std::reverse(args.begin(), args.end());
  try {
    app.parse(args);
  } catch (const error& e) {
    return e.what();
  }
  return {};
}

std::string read(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::filesystem::path out_dir(const std::string& name) {
  auto const d = std::filesystem::path(::testing::TempDir()) / name;
  std::filesystem::remove_all(d);
  return d;
}

// A small configuration on the bundled Cora: 2 layers, P = 2, one batch after one warm-up.
std::vector<std::string> small(const std::filesystem::path& out) {
  return {"--fanouts", "5,5", "--pes", "2", "--batch-size", "64", "--batches", "1", "--warmup",
          "1",         "--hidden", "8", "--out", out.string()};
}

TEST(BenchModesCommand, PaperSettingsRunFourSettingsForBothProtocols) {
  auto const out = out_dir("coopgnn_modes_paper");
  auto args = small(out);
  for (std::string a : {"--paper-settings", "--cache-policy", "lru", "--cache-fraction", "0.5",
                        "--feature-bytes", "2", "--gemm-math", "tf32"}) {
    args.push_back(a);
  }
  ASSERT_EQ(run_bench_modes(args), "");
  for (std::string stem : {"modes_cora-k1", "modes_cora-labor-k1", "modes_cora-labor-k1-cache",
                           "modes_cora-labor-k256-cache"}) {
    auto const j = nlohmann::json::parse(read(out / (stem + ".json")));
    EXPECT_EQ(j["cost_model"]["feature_bytes"], 2) << stem;
    EXPECT_EQ(j["cost_model"]["gemm_math"], "tf32") << stem;
    EXPECT_TRUE(j.contains("paper_setting")) << stem;
    bool const cached = stem.ends_with("cache");
    EXPECT_EQ(j["cache_policy"], cached ? "lru" : "none") << stem;
    EXPECT_EQ(j["cache_rows"].get<std::int64_t>() > 0, cached) << stem;
    EXPECT_EQ(j["batch_dependency"], stem.find("k256") != std::string::npos ? 256 : 1) << stem;
    EXPECT_EQ(j["rows"].size(), 2u) << stem;
  }
  auto const csv = read(out / "modes_cora-paper-settings.csv");
  // Header + 4 settings x 2 modes x 1 P x 3 machines.
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 1 + 4 * 2 * 3) << csv;
  EXPECT_NE(csv.find("\"LABOR kappa 256, cache\",labor,256,lru,"), std::string::npos) << csv;
  EXPECT_NE(csv.find("\"NS kappa 1, no cache\",ns,1,none,0,2,tf32,cooperative,2,64,"),
            std::string::npos)
      << csv;
}

TEST(BenchModesCommand, OptionsThatContradictTheGridAreErrors) {
  auto const out = out_dir("coopgnn_modes_errors");
  auto with = [&](std::vector<std::string> extra) {
    auto args = small(out);
    args.insert(args.end(), extra.begin(), extra.end());
    return run_bench_modes(args);
  };
  EXPECT_NE(with({"--paper-settings"}).find("--cache-policy"), std::string::npos);
  EXPECT_NE(with({"--paper-settings", "--sampler", "labor", "--cache-policy", "lru",
                  "--cache-rows", "10"})
                .find("drop --sampler"),
            std::string::npos);
  EXPECT_NE(with({"--batch-dependency", "256"}).find("--sampler labor"), std::string::npos);
  EXPECT_NE(with({"--cache-rows", "10"}).find("--cache-policy"), std::string::npos);
  EXPECT_NE(with({"--cache-policy", "lru", "--cache-fraction", "2"}).find("--cache-fraction"),
            std::string::npos);
}

}  // namespace
}  // namespace coopgnn
