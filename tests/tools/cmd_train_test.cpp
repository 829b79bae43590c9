// `coopgnn train` option handling for the backends (README "Backends"): a CUDA-only option on
// the host backend and the CUDA backend without a device are clear errors before any training.
#include <CLI/CLI.hpp>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "runtime/core/device.hpp"
#include "runtime/core/error.hpp"
#include "tools/coopgnn/commands.hpp"

namespace coopgnn {
namespace {

/// Parses and runs `coopgnn <args>` with the train commands; returns the logic_error message
/// (empty when the command succeeded).
std::string run_train(std::vector<std::string> args) {
  CLI::App app{"test"};
  cli::add_train_commands(app);
  std::reverse(args.begin(), args.end());  // CLI11 parses a reversed vector
  try {
    app.parse(args);
  } catch (const logic_error& e) {
    return e.what();
  }
  return {};
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

}  // namespace
}  // namespace coopgnn
