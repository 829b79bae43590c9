// Memory soak (label `large`, not run in CI): `coopgnn train` runs 100 epochs
// on a cnr-2000 task built in a temporary directory from the SNAP file
// cnr2000/cnr-2000.txt.gz of the raw datasets folder (COOPGNN_RAW_DATA_DIR,
// tests/CMakeLists.txt; $COOPGNN_SHARED_DATA overrides it; skipped when missing), evaluating every
// epoch, and the process's peak resident memory (VmHWM, reported per epoch as memory.peak_rss_bytes
// of the --metrics-out lines) must grow by less than 1% from the end of epoch 2 to the end of the
// run: steady-state training and evaluation allocate nothing that is not given back.
// COOPGNN_SOAK_EPOCHS (>= 3) shortens the run for a quick try.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "tests/common/files.hpp"

namespace coopgnn {
namespace {

namespace fs = std::filesystem;

/// Runs `cmd` through the shell; returns its exit status (-1 when it did not exit).
int shell(const std::string& cmd) {
  int const st = std::system(cmd.c_str());
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

TEST(MemorySoakLarge, PeakRssStaysFlatOver100EpochsOnCnr2000) {
  const char* env = std::getenv("COOPGNN_SHARED_DATA");
  fs::path const src = (env != nullptr ? fs::path(env) : fs::path(COOPGNN_RAW_DATA_DIR)) /
                       "cnr2000" / "cnr-2000.txt.gz";
  if (!fs::is_regular_file(src)) GTEST_SKIP() << "shared dataset missing: " << src;
  int epochs = 100;
  if (const char* e = std::getenv("COOPGNN_SOAK_EPOCHS")) epochs = std::atoi(e);
  ASSERT_GE(epochs, 3) << "COOPGNN_SOAK_EPOCHS";

  fs::path const dir = fs::temp_directory_path() / ("coopgnn_soak_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::string const bin = COOPGNN_BINARY;
  // The cnr-2000 task of the other tests and benchmarks, with a smaller training split (10%,
  // 32.6k seeds: 32 batches of 1024 per epoch) so that 100 epochs take minutes.
  ASSERT_EQ(shell(bin + " convert --from snap " + src.string() + " " + (dir / "graph").string() +
                  " --symmetrize --drop-self-loops > " + (dir / "convert.log").string() + " 2>&1"),
            0)
      << test::read_text(dir / "convert.log");
  ASSERT_EQ(
      shell(bin + " generate task " + (dir / "graph").string() + " " + (dir / "task").string() +
            " --classes 16 --feature-dim 64 --train-fraction 0.1 --valid-fraction 0.05 > " +
            (dir / "generate.log").string() + " 2>&1"),
      0)
      << test::read_text(dir / "generate.log");
  auto const metrics = dir / "metrics.jsonl";
  auto const t0 = std::chrono::steady_clock::now();
  ASSERT_EQ(shell(bin + " train --dataset " + (dir / "task").string() +
                  " --backend host --pes 2 --fanouts 5,5 --hidden 16 --batch-size 1024 "
                  "--eval-every 1 --epochs " +
                  std::to_string(epochs) + " --no-progress --quiet --metrics-out " +
                  metrics.string() + " > " + (dir / "train.log").string() + " 2>&1"),
            0)
      << test::read_text(dir / "train.log");
  double const seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  std::vector<std::int64_t> hwm(static_cast<std::size_t>(epochs) + 1, -1),
      rss(static_cast<std::size_t>(epochs) + 1, -1);
  std::istringstream in(test::read_text(metrics));
  std::string line;
  while (std::getline(in, line)) {
    auto const j = nlohmann::json::parse(line);
    if (!j.contains("epoch")) continue;  // the run's selection record
    int const e = j.at("epoch").get<int>();
    ASSERT_TRUE(e >= 1 && e <= epochs) << line;
    ASSERT_TRUE(j.at("memory").at("peak_rss_bytes").is_number_integer()) << line;
    hwm[static_cast<std::size_t>(e)] = j["memory"]["peak_rss_bytes"].get<std::int64_t>();
    rss[static_cast<std::size_t>(e)] = j["memory"]["rss_bytes"].get<std::int64_t>();
  }
  for (int e = 1; e <= epochs; ++e) {
    ASSERT_GT(hwm[e], 0) << "no memory line for epoch " << e;
    ASSERT_GE(hwm[e], rss[e]) << "epoch " << e << ": the peak is below the current RSS";
    if (e > 1) ASSERT_GE(hwm[e], hwm[e - 1]) << "VmHWM never decreases";
  }
  double const growth = static_cast<double>(hwm[epochs] - hwm[2]) / static_cast<double>(hwm[2]);
  std::cout << "memory soak: " << epochs << " epochs in " << seconds
            << " s; peak RSS after epoch 2 " << hwm[2] << " B, after epoch " << epochs << " "
            << hwm[epochs] << " B (growth " << 100.0 * growth << "%); RSS after epoch 2 " << rss[2]
            << " B, at the end " << rss[epochs] << " B\n";
  for (int e = 1; e <= epochs; e += std::max(1, epochs / 10)) {
    std::cout << "  epoch " << e << ": peak " << hwm[e] << " B, rss " << rss[e] << " B\n";
  }
  RecordProperty("peak_rss_epoch2", std::to_string(hwm[2]));
  RecordProperty("peak_rss_end", std::to_string(hwm[epochs]));
  EXPECT_LT(growth, 0.01) << "peak RSS grew from " << hwm[2] << " to " << hwm[epochs] << " bytes";
  fs::remove_all(dir);
}

}  // namespace
}  // namespace coopgnn
