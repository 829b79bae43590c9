// Launch geometry and warp helpers shared by the .cu files of the kernels layer (internal).
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>

namespace coopgnn::cuda::detail {

inline constexpr int warp_size = 32;
inline constexpr int block_threads = 256;
inline constexpr int warps_per_block = block_threads / warp_size;
/// Grids are capped (kernels use grid-stride loops), so any int64 item count launches.
inline constexpr std::int64_t max_grid = 1 << 20;

/// Blocks of block_threads threads for one thread per item (grid-stride beyond max_grid).
inline unsigned grid_for_threads(std::int64_t items) {
  return static_cast<unsigned>(
      std::clamp<std::int64_t>((items + block_threads - 1) / block_threads, 1, max_grid));
}

/// Blocks for one warp per item.
inline unsigned grid_for_warps(std::int64_t items) {
  return static_cast<unsigned>(
      std::clamp<std::int64_t>((items + warps_per_block - 1) / warps_per_block, 1, max_grid));
}

/// Global warp index and warp count of a grid-stride warp loop.
__device__ inline std::int64_t global_warp() {
  return (static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / warp_size;
}
__device__ inline std::int64_t warp_count() {
  return static_cast<std::int64_t>(gridDim.x) * blockDim.x / warp_size;
}
__device__ inline std::int64_t global_thread() {
  return static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ inline std::int64_t thread_count() {
  return static_cast<std::int64_t>(gridDim.x) * blockDim.x;
}

/// Sum over the 32 lanes by a butterfly (fixed order: every lane gets the same bits).
template <typename T>
__device__ inline T warp_sum(T v) {
  for (int o = warp_size / 2; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

/// Maximum over the 32 lanes.
__device__ inline float warp_max(float v) {
  for (int o = warp_size / 2; o > 0; o /= 2) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

}  // namespace coopgnn::cuda::detail
