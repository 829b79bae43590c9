// train --profile-steps in the trainer (docs/profiling.md): the capture hook is called before
// global step A and after global step B, between steps, across epoch boundaries. Checked
// against the order of rank 0's progress calls (progress(b + 1) follows batch b).
#include <gtest/gtest.h>

#include <algorithm>
#include <mutex>
#include <string>
#include <vector>

#include "pipeline/trainer.hpp"
#include "tests/common/steps.hpp"

namespace coopgnn {
namespace {

/// The log of two epochs with window [first, last]: "e<epoch>" at each epoch's start, the
/// progress count after each batch, "start"/"stop" for the hook.
std::vector<std::string> two_epochs(std::int64_t first, std::int64_t last, std::int64_t& nb) {
  auto const& d = test::protocol_data();
  train_config c;
  c.num_pes = 2;
  c.mode = minibatch_mode::cooperative;
  c.fanouts = {3};
  c.hidden = 8;
  c.batch_size = 128;
  c.seed = 4;
  std::vector<std::string> log;
  std::mutex mu;
  c.profile_first = first;
  c.profile_last = last;
  c.profile_hook = [&](bool start) {
    std::lock_guard lk(mu);
    log.push_back(start ? "start" : "stop");
  };
  trainer tr(d.ds, d.g, c);
  nb = tr.batches_per_epoch();
  for (int e = 1; e <= 2; ++e) {
    log.push_back("e" + std::to_string(e));
    tr.run_epoch(e, false, [&](std::int64_t done, std::int64_t) {
      std::lock_guard lk(mu);
      log.push_back(std::to_string(done));
    });
  }
  return log;
}

/// The expected log: hook events placed by global step index.
std::vector<std::string> expected(std::int64_t first, std::int64_t last, std::int64_t nb) {
  std::vector<std::string> want;
  for (std::int64_t e = 1; e <= 2; ++e) {
    want.push_back("e" + std::to_string(e));
    for (std::int64_t b = 0; b < nb; ++b) {
      std::int64_t const s = (e - 1) * nb + b;
      if (s == first) want.push_back("start");
      want.push_back(std::to_string(b + 1));
      if (s == last) want.push_back("stop");
    }
  }
  return want;
}

TEST(ProfileSteps, HookBracketsTheWindowAcrossEpochs) {
  std::int64_t nb = 0;
  (void)two_epochs(-1, -1, nb);
  ASSERT_GE(nb, 3) << "the window needs a few batches per epoch";
  for (auto [a, b] : std::vector<std::pair<std::int64_t, std::int64_t>>{
           {0, 0}, {1, 2}, {2, nb + 1}, {nb, nb}, {nb - 1, 2 * nb - 1}}) {
    auto const got = two_epochs(a, b, nb);
    EXPECT_EQ(got, expected(a, b, nb)) << "window " << a << ":" << b;
    EXPECT_EQ(std::count(got.begin(), got.end(), "start"), 1);
    EXPECT_EQ(std::count(got.begin(), got.end(), "stop"), 1);
  }
}

TEST(ProfileSteps, NoWindowAndAWindowPastTheRunCallNothing) {
  std::int64_t nb = 0;
  for (auto [a, b] : std::vector<std::pair<std::int64_t, std::int64_t>>{{-1, -1}, {1000, 1001}}) {
    auto const got = two_epochs(a, b, nb);
    EXPECT_EQ(std::count(got.begin(), got.end(), "start"), 0);
    EXPECT_EQ(std::count(got.begin(), got.end(), "stop"), 0);
  }
}

}  // namespace
}  // namespace coopgnn
