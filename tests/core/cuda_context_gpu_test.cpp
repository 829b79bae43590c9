// The per-PE CUDA context: streams, handles, pool-backed buffers, pinned memory
// (docs/design.md section 1, core).
#include <gtest/gtest.h>

#include "tests/common/gpu.hpp"

#if defined(COOPGNN_WITH_CUDA)
#include <numeric>
#include <vector>

#include "runtime/core/cuda_context.hpp"
#include "runtime/core/error.hpp"

namespace coopgnn {
namespace {

TEST(CudaContext, StreamsHandlesAndPoolExist) {
  COOPGNN_REQUIRE_DEVICE();
  cuda::cuda_context ctx(0, 3, std::uint64_t{64} << 20);
  EXPECT_EQ(ctx.device(), 0);
  EXPECT_EQ(ctx.pe(), 3);
  EXPECT_NE(ctx.compute(), nullptr);
  EXPECT_NE(ctx.h2d(), nullptr);
  EXPECT_NE(ctx.comm(), nullptr);
  EXPECT_NE(ctx.compute(), ctx.h2d());
  EXPECT_NE(ctx.h2d(), ctx.comm());
  EXPECT_NE(ctx.cublas(), nullptr);
  EXPECT_NE(ctx.cusparse(), nullptr);
  EXPECT_NE(ctx.pool().handle(), nullptr);
  EXPECT_NO_THROW(ctx.synchronize());
}

TEST(CudaContext, BuffersRoundTripAndMove) {
  COOPGNN_REQUIRE_DEVICE();
  cuda::cuda_context ctx(0);
  std::vector<std::int64_t> host(1000);
  std::iota(host.begin(), host.end(), 5);
  auto a = ctx.to_device(std::span<const std::int64_t>(host));
  EXPECT_EQ(a.size(), host.size());
  auto b = std::move(a);
  EXPECT_TRUE(a.empty());
  EXPECT_EQ(ctx.to_host(b), host);
  auto c = ctx.allocate<float>(0);
  EXPECT_TRUE(ctx.to_host(c).empty());
  cuda::pinned_buffer<int> pinned(16);
  EXPECT_NE(pinned.device_data(), nullptr);
}

TEST(CudaContext, RejectsABadDevice) {
  COOPGNN_REQUIRE_DEVICE();
  EXPECT_THROW(cuda::cuda_context(1 << 20), logic_error);
}

}  // namespace
}  // namespace coopgnn

#else
TEST(CudaContext, Skipped) { GTEST_SKIP() << "no CUDA device: built without CUDA"; }
#endif
