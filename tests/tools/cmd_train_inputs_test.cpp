// `coopgnn train` refuses bad inputs before any training:
// --pes 0, more PEs than seeds in a batch, a cache size without a policy, a feature table with
// NaN (unless --allow-nonfinite), options without effect (LABOR's with ns, CUDA's on the
// host backend); and a loss that becomes non-finite stops the step naming the
// epoch, batch and PE.
#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

#include "runtime/core/error.hpp"
#include "runtime/graph/npy.hpp"
#include "pipeline/trainer.hpp"
#include "tests/common/cli.hpp"
#include "tests/common/files.hpp"
#include "tests/common/steps.hpp"
#include "tools/coopgnn/commands.hpp"

namespace coopgnn {
namespace {

std::string run_train(std::vector<std::string> args) {
  return test::run_train_cli(std::move(args));
}

std::string cora() { return std::string(COOPGNN_SOURCE_DIR) + "/data/cora"; }

TEST(TrainInputs, PesZeroIsAnError) {
  auto const why = run_train(
      {"train", "--dataset", cora(), "--pes", "0", "--epochs", "0", "--quiet", "--no-progress"});
  EXPECT_NE(why.find("--pes must be at least 1, got 0"), std::string::npos) << why;
}

TEST(TrainInputs, MorePesThanSeedsIsAnErrorBeforeAnyWork) {
  auto const why = run_train({"train", "--dataset", cora(), "--pes", "10000", "--batch-size", "64",
                              "--epochs", "1", "--quiet", "--no-progress"});
  EXPECT_NE(why.find("--pes 10000 exceeds --batch-size 64"), std::string::npos) << why;
}

TEST(TrainInputs, RowNormalisationNeedsTheFeaturesInMemory) {
  auto const why =
      run_train({"train", "--dataset", cora(), "--normalize-features", "row", "--feature-storage",
                 "mmap", "--epochs", "0", "--quiet", "--no-progress"});
  EXPECT_NE(why.find("--normalize-features row needs the features in memory"), std::string::npos)
      << why;
  EXPECT_EQ(
      run_train({"train", "--dataset", cora(), "--normalize-features", "row",
                 "--weight-decay-scope", "first", "--epochs", "0", "--quiet", "--no-progress"}),
      "");
}

TEST(TrainInputs, DryRunPrintsAnEstimateAndRefusesOneBeyondTheMemory) {
  ::testing::internal::CaptureStdout();
  EXPECT_EQ(run_train({"train", "--dataset", cora(), "--dry-run", "--pes", "2"}), "");
  std::string const out = ::testing::internal::GetCapturedStdout();
  EXPECT_NE(out.find("nothing is trained"), std::string::npos) << out;
  EXPECT_NE(out.find("memory estimate (upper bound"), std::string::npos) << out;
  EXPECT_EQ(out.find("epoch"), std::string::npos) << "a dry run trains nothing: " << out;
  // 40 MB lets every array of Cora be read (the features are 15.5 MB) but not 8 PEs' estimate.
  ::setenv("COOPGNN_MEMORY_LIMIT", "40000000", 1);
  ::testing::internal::CaptureStdout();
  auto const why = run_train({"train", "--dataset", cora(), "--dry-run", "--pes", "8"});
  (void)::testing::internal::GetCapturedStdout();
  ::unsetenv("COOPGNN_MEMORY_LIMIT");
  EXPECT_NE(why.find("--pes 8: the run's estimated"), std::string::npos) << why;
  EXPECT_NE(why.find("of memory available (COOPGNN_MEMORY_LIMIT)"), std::string::npos) << why;
}

TEST(TrainInputs, ACacheSizeWithoutAPolicyIsAnError) {
  auto const why = run_train({"train", "--dataset", cora(), "--cache-fraction", "0.1", "--epochs",
                              "0", "--quiet", "--no-progress"});
  EXPECT_NE(why.find("without --cache-policy"), std::string::npos) << why;
  EXPECT_EQ(run_train({"train", "--dataset", cora(), "--cache-fraction", "0.1", "--cache-policy",
                       "lru", "--epochs", "0", "--quiet", "--no-progress"}),
            "");
}

TEST(TrainInputs, OptionsWithoutEffectAreErrors) {
  auto const labor =
      run_train({"train", "--dataset", cora(), "--sampler", "ns", "--batch-dependency", "4",
                 "--epochs", "0", "--quiet", "--no-progress"});
  EXPECT_NE(labor.find("are LABOR's"), std::string::npos) << labor;
  EXPECT_EQ(run_train({"train", "--dataset", cora(), "--sampler", "labor", "--batch-dependency",
                       "4", "--epochs", "0", "--quiet", "--no-progress"}),
            "");
  auto const comm = run_train({"train", "--dataset", cora(), "--backend", "host", "--device-comm",
                               "nccl", "--epochs", "0", "--quiet", "--no-progress"});
  EXPECT_NE(comm.find("--device-comm nccl needs the CUDA backend"), std::string::npos) << comm;
  auto const on = run_train({"train", "--dataset", cora(), "--backend", "host", "--sample-on",
                             "host", "--epochs", "0", "--quiet", "--no-progress"});
  EXPECT_NE(on.find("--sample-on host needs the CUDA backend"), std::string::npos) << on;
}

TEST(TrainInputs, NonFiniteFeaturesAreNamedAtLoad) {
  test::temp_dir dir;
  std::filesystem::copy(cora(), dir.path() / "cora", std::filesystem::copy_options::recursive);
  auto const file = dir.path() / "cora" / "data" / "feat.npy";
  auto a = read_npy<float>(file);
  ASSERT_EQ(a.rank(), 2u);
  a.data[static_cast<std::size_t>(5 * a.dim(1) + 7)] = std::numeric_limits<float>::infinity();
  write_npy(file, std::span<const float>(a.data), std::span<const std::int64_t>(a.shape));
  auto const ds = (dir.path() / "cora").string();
  auto const why =
      run_train({"train", "--dataset", ds, "--epochs", "0", "--quiet", "--no-progress"});
  EXPECT_NE(why.find("feature row 5 column 7 is inf"), std::string::npos) << why;
  EXPECT_NE(why.find("feat.npy"), std::string::npos) << why;
  EXPECT_EQ(run_train({"train", "--dataset", ds, "--epochs", "0", "--allow-nonfinite", "--quiet",
                       "--no-progress"}),
            "");
}

TEST(TrainInputs, ANonFiniteLossStopsTheStepNamingEpochBatchAndPe) {
  dataset ds = test::protocol_data().ds;  // a copy
  for (std::int64_t c = 0; c < ds.features.cols(); ++c) {
    ds.features(0, c) = std::numeric_limits<float>::quiet_NaN();
  }
  // Vertex 0 as a seed makes its own logits NaN: one layer, so no ReLU (which maps NaN to 0)
  // stands between the features and the logits.
  ds.train = {0, 1, 2, 3};
  train_config cfg;
  cfg.num_pes = 2;
  cfg.hidden = 8;
  cfg.fanouts = {2};
  cfg.dropout = 0;
  cfg.batch_size = 4;
  trainer tr(ds, test::protocol_data().g, cfg);
  try {
    tr.run_epoch(1, false);
    FAIL() << "a NaN loss did not stop training";
  } catch (const error& e) {
    std::string const why = e.what();
    EXPECT_NE(why.find("training diverged: the loss of epoch 1 batch 0"), std::string::npos) << why;
    EXPECT_NE(why.find("PE "), std::string::npos) << why;
  }
}

}  // namespace
}  // namespace coopgnn
