// train --profile-steps (docs/profiling.md): parsing of A:B and the window's calls at its edges.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "runtime/core/error.hpp"
#include "runtime/core/profile_window.hpp"

namespace coopgnn::nvtx {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

TEST(ProfileSteps, ParsesTwoIndices) {
  EXPECT_EQ(parse_profile_steps("3:7", "--profile-steps"), std::make_pair(3L, 7L));
  EXPECT_EQ(parse_profile_steps("0:0", "--profile-steps"), std::make_pair(0L, 0L));
  EXPECT_EQ(parse_profile_steps("12:100000000000", "--profile-steps"),
            std::make_pair(12L, 100000000000L));
}

TEST(ProfileSteps, RejectsMalformedTextNamingTheOption) {
  for (std::string const bad : {"", "3", "3:", ":3", "a:b", "-1:2", "1:-2", "3:7x", " 3:7", "3:7:9",
                                "1.5:2"}) {
    try {
      (void)parse_profile_steps(bad, "--profile-steps");
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const logic_error& e) {
      EXPECT_THAT(e.what(), AllOf(HasSubstr("--profile-steps '" + bad + "'"), HasSubstr("A:B"),
                                  Not(HasSubstr(".cpp:"))));
    }
  }
}

TEST(ProfileSteps, RejectsAnEmptyWindow) {
  try {
    (void)parse_profile_steps("9:5", "--profile-steps");
    ADD_FAILURE() << "accepted 9:5";
  } catch (const logic_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("the first step 9 is after the last 5"));
  }
  EXPECT_THROW(profile_window(4, 3, [](bool) {}, false), logic_error);
}

TEST(ProfileWindow, CallsTheHookAtItsEdgesOnly) {
  std::vector<std::string> log;
  profile_window const w(2, 4, [&](bool start) { log.push_back(start ? "start" : "stop"); },
                         false);
  for (std::int64_t s = 0; s < 7; ++s) {
    w.before_step(s);
    log.push_back(std::to_string(s));
    w.after_step(s);
  }
  EXPECT_EQ(log, (std::vector<std::string>{"0", "1", "start", "2", "3", "4", "stop", "5", "6"}));
}

TEST(ProfileWindow, OneStepWindowAndNoWindow) {
  std::vector<std::string> log;
  auto const rec = [&](bool start) { log.push_back(start ? "start" : "stop"); };
  profile_window const one(0, 0, rec, false);
  one.before_step(0);
  one.after_step(0);
  one.before_step(1);
  one.after_step(1);
  EXPECT_EQ(log, (std::vector<std::string>{"start", "stop"}));
  log.clear();
  profile_window const none(-1, -1, rec, false);
  for (std::int64_t s = 0; s < 3; ++s) {
    none.before_step(s);
    none.after_step(s);
  }
  profile_window const dflt;
  dflt.before_step(0);
  dflt.after_step(0);
  EXPECT_TRUE(log.empty());
}

TEST(ProfileWindow, HostBackendWithoutHookDoesNothing) {
  // No hook and not the CUDA backend: nothing to call (a CUDA-less build would throw from
  // cuda_profiler if it were called).
  profile_window const w(0, 1, {}, false);
  EXPECT_NO_THROW(w.before_step(0));
  EXPECT_NO_THROW(w.after_step(1));
}

}  // namespace
}  // namespace coopgnn::nvtx
