// float16 features as a user meets them (README "Datasets"): `info` shows the stored dtype,
// `train --metrics-out` counts feature bytes at 2 per element, `predict` runs on the dataset,
// and what would rewrite the table in float32 (--normalize-features row) is refused.
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

}  // namespace
}  // namespace coopgnn
