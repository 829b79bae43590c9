// The GPU set-associative feature cache (cache/gpu_cache.hpp) against its host reference
// set_assoc_policy: the same hits per batch, the same ways, and the right rows for every hit.
#include <gtest/gtest.h>

#ifdef COOPGNN_WITH_CUDA

#include <cuda_runtime_api.h>

#include <random>
#include <vector>

#include "cache/gpu_cache.hpp"
#include "cache/set_assoc.hpp"
#include "runtime/core/half.hpp"
#include "tests/common/gpu.hpp"

namespace coopgnn {
namespace {

TEST(GpuCache, MatchesTheHostReferenceOnRandomBatches) {
  COOPGNN_REQUIRE_DEVICE();
  cuda::cuda_context ctx(0);
  auto const s = ctx.compute();
  std::int64_t const universe = 5000, dim = 6;
  for (feature_dtype dt :
       {feature_dtype::float32, feature_dtype::float16, feature_dtype::bfloat16}) {
    // The feature table as the gather hands it over: float32 row v is (v, v + 0.5, ...), exact;
    // a 16-bit table's rows are widened bit patterns (finite, subnormals included), which the
    // cache holds at 2 bytes and gives back bit for bit.
    std::vector<float> table(static_cast<std::size_t>(universe * dim));
    for (std::int64_t v = 0; v < universe; ++v) {
      for (std::int64_t c = 0; c < dim; ++c) {
        auto const bits = static_cast<std::uint16_t>((v * 7 + c * 4099) % 0x7C00);
        table[static_cast<std::size_t>(v * dim + c)] = dt == feature_dtype::float32
                                                           ? static_cast<float>(v) + 0.5f * c
                                                           : widen_to_float(dt, bits);
      }
    }
    for (std::int64_t ways : {1, 8, 32}) {
      for (std::int64_t cap : {0, 7, 300, 1024}) {
        SCOPED_TRACE(std::string(to_string(dt)) + " ways " + std::to_string(ways) + " capacity " +
                     std::to_string(cap));
        set_assoc_policy host(cap, ways);
        cuda::device_set_assoc_cache dev(ctx, cap, dim, ways, dt);
        EXPECT_EQ(dev.row_bytes_total(),
                  dev.geometry().sets * dev.geometry().ways * dim * feature_dtype_size(dt));
        std::mt19937_64 gen(static_cast<std::uint64_t>(cap * 31 + ways));
        std::geometric_distribution<std::int64_t> key(0.002);
        for (int b = 0; b < 40; ++b) {
          std::vector<std::int64_t> keys(static_cast<std::size_t>(gen() % 700));
          for (auto& k : keys) k = std::min(key(gen), universe - 1);
          auto const n = static_cast<std::int64_t>(keys.size());
          std::vector<std::uint8_t> hit(keys.size());
          host.access_batch(keys, hit);
          auto d_keys = ctx.to_device(std::span<const std::int64_t>(keys), s);
          auto d_out = ctx.allocate<float>(keys.size() * dim, s);
          auto d_miss = ctx.allocate<std::int64_t>(keys.size(), s);
          auto const st = dev.lookup(d_keys.data(), n, d_out.data(), d_miss.data(), s);
          auto miss_pos = ctx.to_host(d_miss);
          miss_pos.resize(static_cast<std::size_t>(st.misses));
          std::vector<std::int64_t> want;
          for (std::int64_t i = 0; i < n; ++i) {
            if (hit[static_cast<std::size_t>(i)] == 0) want.push_back(i);
          }
          ASSERT_EQ(miss_pos, want) << "batch " << b;
          // Fill the misses from storage, then admit.
          auto out = ctx.to_host(d_out);
          for (auto i : miss_pos) {
            for (std::int64_t c = 0; c < dim; ++c) {
              out[static_cast<std::size_t>(i * dim + c)] =
                  table[static_cast<std::size_t>(keys[static_cast<std::size_t>(i)] * dim + c)];
            }
          }
          for (std::int64_t i = 0; i < n; ++i) {  // hits came from the cache: the right rows
            for (std::int64_t c = 0; c < dim; ++c) {
              ASSERT_EQ(
                  out[static_cast<std::size_t>(i * dim + c)],
                  table[static_cast<std::size_t>(keys[static_cast<std::size_t>(i)] * dim + c)]);
            }
          }
          auto d_filled = ctx.to_device(std::span<const float>(out), s);
          d_miss = ctx.to_device(std::span<const std::int64_t>(miss_pos), s);
          dev.admit(d_keys.data(), d_filled.data(), d_miss.data(), st.misses, s);
          auto const ways_dev = dev.ways_of(d_keys.data(), n, s);
          for (std::int64_t i = 0; i < n; ++i) {
            ASSERT_EQ(ways_dev[static_cast<std::size_t>(i)],
                      host.way_of(keys[static_cast<std::size_t>(i)]))
                << "batch " << b << " key " << keys[static_cast<std::size_t>(i)];
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace coopgnn

#else
TEST(GpuCache, NeedsACudaBuild) { GTEST_SKIP() << "built without CUDA"; }
#endif
