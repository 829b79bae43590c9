// float16 features as a user meets them (README "Datasets"): `info` shows the stored dtype,
// `train --metrics-out` counts feature bytes at 2 per element, `predict` runs on the dataset,
// and what would rewrite the table in float32 (--normalize-features row) is refused; a typed
// dataset with a float16 node type trains on the host and emulated backends as its float32 twin.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "runtime/core/half.hpp"
#include "runtime/graph/dataset.hpp"
#include "runtime/graph/npy.hpp"
#include "tests/common/cli.hpp"
#include "tests/common/files.hpp"
#include "tests/common/graphs.hpp"
#include "tests/common/steps.hpp"

namespace coopgnn {
namespace {

using test::run_data_cli;
using test::run_train_cli;
using test::temp_dir;
using ::testing::HasSubstr;
namespace fs = std::filesystem;

/// A 300-vertex, 3-class task whose 6 features are written as float16 (multiples of 2^-8).
void write_half_dataset(const fs::path& dir) {
  dataset ds = test::synthetic_dataset(300, 3, 6, 6, 5);
  std::vector<std::uint16_t> bits;
  for (float x : ds.features.values()) {
    bits.push_back(float_to_half_exact(std::ldexp(std::round(std::ldexp(x, 8)), -8)));
  }
  ds.features16 = matrix<std::uint16_t>(300, 6, std::move(bits));
  ds.features = {};
  ds.feature_type = feature_dtype::float16;
  write_dataset(ds, dir);
}

std::string stdout_of(const std::function<void()>& f) {
  ::testing::internal::CaptureStdout();
  f();
  return ::testing::internal::GetCapturedStdout();
}

TEST(HalfFeaturesCli, InfoShowsTheStoredDtype) {
  temp_dir d;
  write_half_dataset(d / "h");
  std::string const table = stdout_of([&] { run_data_cli({"info", (d / "h").string()}); });
  EXPECT_THAT(table, HasSubstr("[300, 6] float16"));
  EXPECT_THAT(table, HasSubstr("'feat' float16 (300, 6)"));
  std::string const json = stdout_of([&] { run_data_cli({"info", (d / "h").string(), "--json"}); });
  EXPECT_THAT(json, HasSubstr("\"feature_dtype\":\"float16\""));
  EXPECT_THAT(json, HasSubstr("\"feature_shape\":[300,6]"));
}

TEST(HalfFeaturesCli, TrainCountsTwoBytesPerElementAndPredictRuns) {
  temp_dir d;
  write_half_dataset(d / "h");
  for (std::string const storage : {"auto", "mmap"}) {
    SCOPED_TRACE(storage);
    fs::path const metrics = d / ("m_" + storage + ".jsonl");
    EXPECT_EQ(run_train_cli({"train",
                             "--dataset",
                             (d / "h").string(),
                             "--backend",
                             "host",
                             "--pes",
                             "2",
                             "--batch-size",
                             "32",
                             "--fanouts",
                             "4,4",
                             "--hidden",
                             "8",
                             "--epochs",
                             "1",
                             "--seed",
                             "3",
                             "--no-progress",
                             "--quiet",
                             "--feature-storage",
                             storage,
                             "--metrics-out",
                             metrics.string(),
                             "--save-model",
                             (d / ("model_" + storage)).string()}),
              "");
    std::ifstream in(metrics);
    std::string line;
    int epochs = 0;
    while (std::getline(in, line)) {
      auto const j = nlohmann::json::parse(line);
      if (!j.contains("work")) continue;
      ++epochs;
      auto const rows = j["work"]["feature_rows"].get<std::int64_t>();
      EXPECT_GT(rows, 0);
      EXPECT_EQ(j["work"]["feature_bytes"].get<std::int64_t>(), rows * 6 * 2);
    }
    EXPECT_EQ(epochs, 1);
  }
  fs::path const classes = d / "classes.npy";
  EXPECT_EQ(run_train_cli({"predict", "--model", (d / "model_auto").string(), "--dataset",
                           (d / "h").string(), "--out", classes.string()}),
            "");
  EXPECT_EQ(read_npy<std::int64_t>(classes).data.size(), 300U);
  EXPECT_THAT(run_train_cli({"train", "--dataset", (d / "h").string(), "--epochs", "1",
                             "--normalize-features", "row", "--no-progress", "--quiet"}),
              HasSubstr("the dataset's features are float16"));
}

/// The typed fixture (paper, author, subject; papers featured, 12 wide) with the paper
/// features rounded to multiples of 2^-8 (exact in float16), written with them as float16
/// (`half`) or as the same values in float32.
void write_typed_dataset(const fs::path& dir, bool half) {
  dataset ds = test::hetero_protocol_data().ds;
  hetero_schema& h = *ds.hetero;
  matrix<float>& x = h.features[0];
  std::vector<std::uint16_t> bits;
  for (float& v : x.values()) {
    v = std::ldexp(std::round(std::ldexp(v, 8)), -8);
    bits.push_back(float_to_half_exact(v));
  }
  if (half) {
    h.features16 = {matrix<std::uint16_t>(x.rows(), x.cols(), std::move(bits)),
                    matrix<std::uint16_t>(), matrix<std::uint16_t>()};
    h.feature_types = {feature_dtype::float16, feature_dtype::float32, feature_dtype::float32};
    x = matrix<float>();
  }
  write_dataset(ds, dir);
}

TEST(HalfFeaturesCli, TypedFloat16TableTrainsAsItsFloat32TwinAtTwoBytes) {
  temp_dir d;
  write_typed_dataset(d / "h", true);
  write_typed_dataset(d / "f", false);
  EXPECT_EQ(read_npy_header(d / "h" / "data" / "paper_feat.npy").dtype, npy_dtype::float16);
  std::string const table = stdout_of([&] { run_data_cli({"info", (d / "h").string()}); });
  EXPECT_THAT(table, HasSubstr("paper (300 nodes, 12 feature columns, float16)"));
  std::string const json = stdout_of([&] { run_data_cli({"info", (d / "h").string(), "--json"}); });
  EXPECT_THAT(json, HasSubstr("\"feature_dim\":12,\"feature_dtype\":\"float16\""));
  auto run = [&](const std::string& data, const std::string& backend, const std::string& mode,
                 const std::string& storage) {
    fs::path const metrics = d / fmt::format("m_{}_{}_{}_{}.jsonl", data, backend, mode, storage);
    EXPECT_EQ(run_train_cli({"train",
                             "--dataset",
                             (d / data).string(),
                             "--model",
                             "rgcn",
                             "--backend",
                             backend,
                             "--pes",
                             "2",
                             "--mode",
                             mode,
                             "--batch-size",
                             "60",
                             "--fanouts",
                             "3,3",
                             "--hidden",
                             "8",
                             "--epochs",
                             "1",
                             "--seed",
                             "5",
                             "--no-progress",
                             "--quiet",
                             "--feature-storage",
                             storage,
                             "--metrics-out",
                             metrics.string()}),
              "");
    std::ifstream in(metrics);
    std::string line;
    std::getline(in, line);
    return nlohmann::json::parse(line);
  };
  for (std::string const mode : {"cooperative", "independent"}) {
    auto const twin = run("f", "host", mode, "auto");
    for (auto const& [backend, storage] : std::vector<std::pair<std::string, std::string>>{
             {"host", "auto"}, {"host", "mmap"}, {"emulated", "auto"}}) {
      SCOPED_TRACE(mode + " " + backend + " " + storage);
      auto const j = run("h", backend, mode, storage);
      // Exact in float16: the same numbers as the float32 twin.
      EXPECT_EQ(j["train_loss"].get<double>(), twin["train_loss"].get<double>());
      auto const& per = j["work"]["feature_rows_per_type"];
      std::int64_t const papers = per["paper"].get<std::int64_t>();
      std::int64_t const learnt =
          per["author"].get<std::int64_t>() + per["subject"].get<std::int64_t>();
      EXPECT_GT(papers, 0);
      EXPECT_GT(learnt, 0);
      // Papers at 2 bytes per element, learnt embedding rows at 4; the twin's papers at 4.
      EXPECT_EQ(j["work"]["feature_bytes"].get<std::int64_t>(), papers * 12 * 2 + learnt * 12 * 4);
      EXPECT_EQ(twin["work"]["feature_bytes"].get<std::int64_t>(), (papers + learnt) * 12 * 4);
    }
  }
}

TEST(HalfFeaturesCli, GeneratedHeteroGraphTrainsRgcnInBothProtocols) {
  temp_dir d;
  run_data_cli({"generate", "hetero", (d / "g").string(), "--scale", "8", "--feature-dim", "16",
                "--classes", "4", "--train-fraction", "0.5", "--seed", "2"});
  std::string const table = stdout_of([&] { run_data_cli({"info", (d / "g").string()}); });
  EXPECT_THAT(table, HasSubstr("paper (256 nodes, 16 feature columns, float16)"));
  EXPECT_THAT(table, HasSubstr("author (16 nodes, no features)"));
  fs::path const metrics = d / "m.jsonl";
  EXPECT_EQ(run_train_cli({"compare",
                           "--dataset",
                           (d / "g").string(),
                           "--model",
                           "rgcn",
                           "--num-bases",
                           "2",
                           "--backend",
                           "host",
                           "--pes",
                           "3",
                           "--batch-size",
                           "64",
                           "--fanouts",
                           "4,4",
                           "--hidden",
                           "8",
                           "--epochs",
                           "1",
                           "--no-progress",
                           "--quiet",
                           "--metrics-out",
                           metrics.string()}),
            "");
  std::ifstream in(metrics);
  std::string line;
  int runs = 0;
  while (std::getline(in, line)) {
    auto const j = nlohmann::json::parse(line);
    if (!j.contains("work")) continue;
    ++runs;
    EXPECT_TRUE(std::isfinite(j["train_loss"].get<double>()));
    auto const& per = j["work"]["feature_rows_per_type"];
    std::int64_t const papers = per["paper"].get<std::int64_t>();
    std::int64_t const learnt =
        per["author"].get<std::int64_t>() + per["institution"].get<std::int64_t>();
    EXPECT_GT(learnt, 0);
    EXPECT_EQ(j["work"]["feature_bytes"].get<std::int64_t>(), papers * 16 * 2 + learnt * 16 * 4);
  }
  EXPECT_EQ(runs, 2);  // cooperative, then independent
}

}  // namespace
}  // namespace coopgnn
