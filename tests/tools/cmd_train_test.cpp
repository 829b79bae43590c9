// `coopgnn train` option handling for the backends (README "Backends"): a CUDA-only option on
// the host backend and the CUDA backend without a device are clear errors before any training.
#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "runtime/core/device.hpp"
#include "runtime/core/error.hpp"
#include "tests/common/cli.hpp"
#include "tools/coopgnn/commands.hpp"

namespace coopgnn {
namespace {

std::string run_train(std::vector<std::string> args) {
  return test::run_train_cli(std::move(args));
}

TEST(TrainCommand, PesPerGpuNeedsTheCudaBackend) {
  auto const why = run_train({"train", "--backend", "host", "--pes-per-gpu", "2", "--epochs", "0",
                              "--no-progress", "--quiet"});
  EXPECT_NE(why.find("--pes-per-gpu 2 needs the CUDA backend"), std::string::npos) << why;
}

TEST(TrainCommand, CudaBackendWithoutADeviceSaysWhy) {
  if (query_devices().count > 0) GTEST_SKIP() << "a CUDA device is present";
  auto const why =
      run_train({"train", "--backend", "cuda", "--epochs", "0", "--no-progress", "--quiet"});
  EXPECT_NE(why.find("--backend cuda"), std::string::npos) << why;
}

TEST(TrainCommand, AutoFallsBackToTheHostWithoutADevice) {
  if (query_devices().count > 0) GTEST_SKIP() << "a CUDA device is present";
  EXPECT_EQ(run_train({"train", "--epochs", "0", "--pes", "2", "--no-progress", "--quiet"}), "");
}

TEST(TrainCommand, DropLastReachesTheTrainer) {
  // The bundled Cora has 140 training vertices: a batch of 200 holds a short tail only.
  auto const why = run_train({"train", "--backend", "host", "--pes", "1", "--batch-size", "200",
                              "--drop-last", "--epochs", "0", "--no-progress", "--quiet"});
  EXPECT_NE(why.find("--drop-last with --batch-size 200 above the 140 training vertices"),
            std::string::npos)
      << why;
  EXPECT_EQ(run_train({"train", "--backend", "host", "--pes", "1", "--batch-size", "200",
                       "--epochs", "0", "--no-progress", "--quiet"}),
            "");
}

}  // namespace
}  // namespace coopgnn
