// The stage clock on the CUDA backend (runtime/core/stage_clock.hpp): spans are CUDA events on
// the compute stream, read after one synchronisation; a span around device work measures it,
// an empty span next to it is shorter, and events are reused across steps.
#include <gtest/gtest.h>

#include "tests/common/gpu.hpp"

#if defined(COOPGNN_WITH_CUDA)
#include <cstddef>

#include "runtime/core/cuda_context.hpp"
#include "runtime/core/error.hpp"
#include "runtime/core/stage_clock.hpp"

namespace coopgnn {
namespace {

TEST(StageClockGpu, SpansTimeTheComputeStream) {
  COOPGNN_REQUIRE_DEVICE();
  cuda::cuda_context cc(0);
  exec_context const ctx(cc);
  stage_clock clock(ctx);
  std::size_t const bytes = std::size_t{1} << 30;
  auto buf = cc.allocate<char>(bytes);
  for (int step = 0; step < 2; ++step) {
    clock.reset();
    int const work = clock.begin();
    for (int k = 0; k < 8; ++k) cuda::detail::zero_async(buf.data(), bytes, cc.compute());
    clock.end(work);
    int const empty = clock.begin();
    clock.end(empty);
    cc.synchronize();
    // 8 GiB of memset: well over 100 us on any GPU, and far below a minute.
    EXPECT_GT(clock.seconds(work), 1e-4);
    EXPECT_LT(clock.seconds(work), 60.0);
    EXPECT_GE(clock.seconds(empty), 0.0);
    EXPECT_LT(clock.seconds(empty), clock.seconds(work));
  }
}

}  // namespace
}  // namespace coopgnn

#else
TEST(StageClockGpu, Skipped) { GTEST_SKIP() << "no CUDA device: built without CUDA"; }
#endif
