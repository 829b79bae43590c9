// Each PE's device memory on RMM (runtime/core/cuda_context.hpp, device_pool): the peak device
// bytes a run reports are the bytes the PE allocated at once, exactly; every PE has its own pool,
// also when several share one GPU; the memory is the pool's (so cudaMemPoolSetAccess on
// pool().handle() lets peers on other devices read it).
#include <gtest/gtest.h>

#include "tests/common/gpu.hpp"

#if defined(COOPGNN_WITH_CUDA)
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "runtime/core/cuda_context.hpp"
#include "runtime/core/error.hpp"
#include "runtime/core/exec_context.hpp"
#include "runtime/core/memory.hpp"

namespace coopgnn {
namespace {

constexpr std::uint64_t kThreshold = std::uint64_t{64} << 20;

TEST(DevicePool, PeakIsTheMostBytesAllocatedAtOnce) {
  COOPGNN_REQUIRE_DEVICE();
  cuda::cuda_context ctx(0, 0, kThreshold);
  EXPECT_EQ(ctx.peak_used_bytes(), 0u);
  EXPECT_EQ(ctx.pool().used_bytes(), 0u);
  {
    auto a = ctx.allocate<float>(1000);         // 4000 bytes
    auto b = ctx.allocate<std::int64_t>(333);   // 2664 bytes
    EXPECT_EQ(ctx.pool().used_bytes(), 6664u);
    EXPECT_EQ(ctx.peak_used_bytes(), 6664u);
    a.reset();
    EXPECT_EQ(ctx.pool().used_bytes(), 2664u);
    auto c = ctx.allocate<std::uint8_t>(100);   // 2764 in use, below the peak
    EXPECT_EQ(ctx.pool().used_bytes(), 2764u);
    EXPECT_EQ(ctx.peak_used_bytes(), 6664u);

    // A reset restarts the peak at what is in use, and later peaks count that too.
    ctx.reset_peak_used();
    EXPECT_EQ(ctx.peak_used_bytes(), 2764u);
    {
      auto d = ctx.allocate<std::byte>(std::size_t{1} << 20);
      EXPECT_EQ(ctx.peak_used_bytes(), 2764u + (1u << 20));
    }
    EXPECT_EQ(ctx.pool().used_bytes(), 2764u);
    EXPECT_EQ(ctx.peak_used_bytes(), 2764u + (1u << 20));
    // A second reset (the previous frame is folded back first); freeing memory allocated
    // before a reset lowers the use below the level at the reset.
    ctx.reset_peak_used();
    EXPECT_EQ(ctx.peak_used_bytes(), 2764u);
    b.reset();
    EXPECT_EQ(ctx.pool().used_bytes(), 100u);
    EXPECT_EQ(ctx.peak_used_bytes(), 2764u);
    ctx.synchronize();
  }
  EXPECT_EQ(ctx.pool().used_bytes(), 0u);
}

TEST(DevicePool, BuffersOfTheExecContextAreCounted) {
  COOPGNN_REQUIRE_DEVICE();
  cuda::cuda_context ctx(0, 0, kThreshold);
  exec_context ectx(ctx);
  {
    buffer<float> x(ectx, 250);  // 1000 bytes through allocate_device_bytes
    EXPECT_EQ(ctx.pool().used_bytes(), 1000u);
    auto adopted = buffer<std::int32_t>::adopt(ctx.allocate<std::int32_t>(10));  // 40 bytes
    EXPECT_EQ(ctx.pool().used_bytes(), 1040u);
    EXPECT_EQ(ctx.peak_used_bytes(), 1040u);
  }
  EXPECT_EQ(ctx.pool().used_bytes(), 0u);  // both freed through the pool with their sizes
  EXPECT_EQ(ctx.peak_used_bytes(), 1040u);
  synchronize(ectx);
}

TEST(DevicePool, PesSharingAGpuHaveTheirOwnPools) {
  COOPGNN_REQUIRE_DEVICE();
  cuda::cuda_context pe0(0, 0, kThreshold);
  cuda::cuda_context pe1(0, 1, kThreshold);
  EXPECT_NE(pe0.pool().handle(), pe1.pool().handle());
  auto a = pe0.allocate<double>(500);  // 4000 bytes on PE 0 only
  auto b = pe1.allocate<double>(20);   // 160 bytes on PE 1 only
  EXPECT_EQ(pe0.peak_used_bytes(), 4000u);
  EXPECT_EQ(pe1.peak_used_bytes(), 160u);
}

TEST(DevicePool, MemoryIsOnTheDeviceAndFromThePool) {
  COOPGNN_REQUIRE_DEVICE();
  cuda::cuda_context ctx(0, 0, kThreshold);
  auto a = ctx.allocate<float>(std::size_t{1} << 18);  // 1 MiB
  ctx.synchronize();
  cudaPointerAttributes attr{};
  ASSERT_EQ(cudaPointerGetAttributes(&attr, a.data()), cudaSuccess);
  EXPECT_EQ(attr.type, cudaMemoryTypeDevice);
  EXPECT_EQ(attr.device, 0);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(a.data()) % 256, 0u);
  // The bytes sit in the cudaMemPool that handle() names (what peers are granted access to).
  std::uint64_t in_use = 0;  // the attribute is a cuuint64_t
  ASSERT_EQ(cudaMemPoolGetAttribute(ctx.pool().handle(), cudaMemPoolAttrUsedMemCurrent, &in_use),
            cudaSuccess);
  EXPECT_GE(in_use, a.bytes());
  cudaMemPool_t implicit = ctx.pool();  // the conversion the peer-copy set-up relies on
  EXPECT_EQ(implicit, ctx.pool().handle());
  // Data written there reads back.
  std::vector<float> host(a.size(), 2.5f);
  auto b = ctx.to_device(std::span<const float>(host));
  EXPECT_EQ(ctx.to_host(b), host);
}

TEST(DevicePool, ExhaustionIsACudaErrorNamingTheSize) {
  COOPGNN_REQUIRE_DEVICE();
  cuda::cuda_context ctx(0, 0, kThreshold);
  std::size_t const huge = std::size_t{1} << 50;  // 1 PiB
  try {
    auto a = ctx.allocate<std::byte>(huge);
    FAIL() << "allocating 1 PiB succeeded";
  } catch (const cuda_error& e) {
    EXPECT_NE(std::string(e.what()).find("1125899906842624 bytes"), std::string::npos) << e.what();
  }
  EXPECT_EQ(ctx.pool().used_bytes(), 0u);
  auto ok = ctx.allocate<float>(10);  // the pool still serves
  EXPECT_EQ(ctx.pool().used_bytes(), 40u);
}

}  // namespace
}  // namespace coopgnn

#else
TEST(DevicePool, Skipped) { GTEST_SKIP() << "no CUDA device: built without CUDA"; }
#endif
