// The per-PE stage clock (runtime/core/stage_clock.hpp) on the host and the emulated device:
// spans are the wall time between begin() and end(), nested and overlapping spans are
// independent, reset() starts a step at span 0 again, and misuse names the span.
#include "runtime/core/stage_clock.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "runtime/core/error.hpp"

namespace coopgnn {
namespace {

using std::chrono::milliseconds;

/// Seconds of wall time measured around `f` by the test itself (the oracle's clock).
template <class F>
double wall(F&& f) {
  auto const t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

class StageClock : public ::testing::TestWithParam<backend> {};

TEST_P(StageClock, SpansAreTheWallTimeBetweenTheirMarks) {
  stage_clock clock{exec_context(GetParam())};
  int a = -1, b = -1;
  double outer = 0, inner = 0;
  outer = wall([&] {
    a = clock.begin();
    std::this_thread::sleep_for(milliseconds(20));
    inner = wall([&] {
      b = clock.begin();
      std::this_thread::sleep_for(milliseconds(30));
      clock.end(b);
    });
    clock.end(a);
  });
  EXPECT_EQ(a, 0);
  EXPECT_EQ(b, 1);
  EXPECT_EQ(clock.spans(), 2);
  // A span lies inside the test's own measurement around it and covers its sleeps.
  EXPECT_GE(clock.seconds(b), 0.030);
  EXPECT_LE(clock.seconds(b), inner);
  EXPECT_GE(clock.seconds(a), 0.050);
  EXPECT_LE(clock.seconds(a), outer);
  EXPECT_GT(clock.seconds(a), clock.seconds(b));
}

TEST_P(StageClock, ResetStartsTheNextStepAtSpanZero) {
  stage_clock clock{exec_context(GetParam())};
  for (int step = 0; step < 3; ++step) {
    clock.reset();
    EXPECT_EQ(clock.spans(), 0);
    for (int k = 0; k < 4; ++k) {
      int const s = clock.begin();
      EXPECT_EQ(s, k);
      clock.end(s);
      EXPECT_GE(clock.seconds(s), 0.0);
    }
    EXPECT_EQ(clock.spans(), 4);
  }
  // After a reset the old spans are gone: reading one is an error, not a stale number.
  clock.reset();
  EXPECT_THROW((void)clock.seconds(0), logic_error);
}

TEST_P(StageClock, MisuseNamesTheSpan) {
  stage_clock clock{exec_context(GetParam())};
  EXPECT_THROW(clock.end(0), logic_error);  // never begun
  int const s = clock.begin();
  try {
    (void)clock.seconds(s);  // not ended
    ADD_FAILURE() << "seconds() of an open span did not throw";
  } catch (const logic_error& e) {
    EXPECT_NE(std::string(e.what()).find("span 0 has not ended"), std::string::npos) << e.what();
  }
  clock.end(s);
  EXPECT_THROW(clock.end(s), logic_error);  // ended twice
  EXPECT_THROW((void)clock.seconds(-1), logic_error);
  EXPECT_THROW((void)clock.seconds(1), logic_error);
}

INSTANTIATE_TEST_SUITE_P(HostAndEmulated, StageClock,
                         ::testing::Values(backend::host, backend::emulated),
                         [](const auto& info) { return to_string(info.param); });

}  // namespace
}  // namespace coopgnn
