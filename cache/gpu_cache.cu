// Kernels of the GPU feature cache (cache/gpu_cache.hpp). Residency follows set_assoc_policy
// exactly; see that class for the rules.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cub/device/device_radix_sort.cuh>
#include <type_traits>

#include "cache/gpu_cache.hpp"
#include "runtime/core/cuda_check.hpp"
#include "runtime/core/cuda_launch.cuh"
#include "runtime/core/nvtx.hpp"

namespace coopgnn::cuda {

namespace {

constexpr int kThreads = 256;

std::int64_t blocks_for(std::int64_t n) { return (n + kThreads - 1) / kThreads; }

/// A cached element of type S to float32 and back: float32 unchanged; float16 / bfloat16
/// widened with CUDA's conversions on a hit, narrowed exactly on admission (the values are
/// widened 16-bit values: runtime/core/half.hpp).
template <feature_dtype D>
struct slot_elem;
template <>
struct slot_elem<feature_dtype::float32> {
  using type = float;
  __device__ static float widen(float x) { return x; }
  __device__ static float narrow(float x) { return x; }
};
template <>
struct slot_elem<feature_dtype::float16> {
  using type = unsigned short;
  __device__ static float widen(unsigned short b) { return __half2float(__ushort_as_half(b)); }
  __device__ static unsigned short narrow(float x) { return float_to_half_exact(x); }
};
template <>
struct slot_elem<feature_dtype::bfloat16> {
  using type = unsigned short;
  __device__ static float widen(unsigned short b) {
    return __bfloat162float(__ushort_as_bfloat16(b));
  }
  __device__ static unsigned short narrow(float x) {
    return static_cast<unsigned short>(__float_as_uint(x) >> 16);
  }
};

/// One thread per key: find the key's way, stamp it, copy the row (widened); record misses.
template <feature_dtype D>
__global__ void lookup_kernel(set_assoc_geometry geo, std::int64_t dim, std::uint64_t clock,
                              const std::int64_t* __restrict__ slot_keys,
                              std::uint64_t* __restrict__ stamps,
                              const typename slot_elem<D>::type* __restrict__ rows,
                              const std::int64_t* __restrict__ keys, std::int64_t n,
                              float* __restrict__ out, std::uint8_t* __restrict__ miss) {
  auto const i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  std::int64_t slot = -1;
  if (geo.sets > 0) {
    auto const base = geo.set_of(keys[i]) * geo.ways;
    for (std::int64_t w = 0; w < geo.ways; ++w) {
      if (stamps[base + w] != 0 && slot_keys[base + w] == keys[i]) {
        slot = base + w;
        break;
      }
    }
  }
  miss[i] = slot < 0 ? 1 : 0;
  if (slot < 0) return;
  stamps[slot] = clock;  // every hitter of this slot writes the same value
  for (std::int64_t c = 0; c < dim; ++c) {
    out[i * dim + c] = slot_elem<D>::widen(rows[slot * dim + c]);
  }
}

/// Appends the positions with miss[i] = 1 to miss_pos through an atomic counter (any order;
/// lookup() sorts them back into batch order).
__global__ void collect_misses(const std::uint8_t* __restrict__ miss, std::int64_t n,
                               std::int64_t* __restrict__ miss_pos,
                               unsigned long long* __restrict__ count) {
  auto const i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n || miss[i] == 0) return;
  miss_pos[atomicAdd(count, 1ull)] = i;
}

/// set of each missing key, for the sort that groups misses by set in batch order.
__global__ void miss_sets(set_assoc_geometry geo, const std::int64_t* __restrict__ keys,
                          const std::int64_t* __restrict__ miss_pos, std::int64_t m,
                          std::int64_t* __restrict__ set_out) {
  auto const j = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (j >= m) return;
  set_out[j] = geo.set_of(keys[miss_pos[j]]);
}

/// One thread per run of equal sets in the sorted list: admits the run's keys in batch order,
/// exactly as set_assoc_policy::admit does one after the other; rows narrowed to D.
template <feature_dtype D>
__global__ void admit_kernel(set_assoc_geometry geo, std::int64_t dim, std::uint64_t clock,
                             std::int64_t* __restrict__ slot_keys,
                             std::uint64_t* __restrict__ stamps,
                             typename slot_elem<D>::type* __restrict__ rows,
                             const std::int64_t* __restrict__ keys, const float* __restrict__ out,
                             const std::int64_t* __restrict__ sorted_sets,
                             const std::int64_t* __restrict__ sorted_pos, std::int64_t m) {
  auto const j = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (j >= m || (j > 0 && sorted_sets[j - 1] == sorted_sets[j])) return;
  auto const set = sorted_sets[j];
  auto const base = set * geo.ways;
  for (auto r = j; r < m && sorted_sets[r] == set; ++r) {
    auto const i = sorted_pos[r];
    auto const key = keys[i];
    bool resident = false;
    for (std::int64_t w = 0; w < geo.ways && !resident; ++w) {
      resident = stamps[base + w] != 0 && slot_keys[base + w] == key;
    }
    if (resident) continue;  // repeated in this batch, admitted already
    std::int64_t victim = 0;
    for (std::int64_t w = 1; w < geo.ways; ++w) {
      if (stamps[base + w] < stamps[base + victim]) victim = w;
    }
    auto const slot = base + victim;
    slot_keys[slot] = key;
    stamps[slot] = clock;
    for (std::int64_t c = 0; c < dim; ++c) {
      rows[slot * dim + c] = slot_elem<D>::narrow(out[i * dim + c]);
    }
  }
}

/// Calls f(std::integral_constant<feature_dtype, D>) for the cache's element type.
template <class F>
void with_slot_type(feature_dtype t, F&& f) {
  switch (t) {
    case feature_dtype::float32:
      return f(std::integral_constant<feature_dtype, feature_dtype::float32>{});
    case feature_dtype::float16:
      return f(std::integral_constant<feature_dtype, feature_dtype::float16>{});
    case feature_dtype::bfloat16:
      return f(std::integral_constant<feature_dtype, feature_dtype::bfloat16>{});
  }
}

__global__ void ways_kernel(set_assoc_geometry geo, const std::int64_t* __restrict__ slot_keys,
                            const std::uint64_t* __restrict__ stamps,
                            const std::int64_t* __restrict__ keys, std::int64_t n,
                            std::int64_t* __restrict__ way) {
  auto const i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  way[i] = -1;
  if (geo.sets == 0) return;
  auto const base = geo.set_of(keys[i]) * geo.ways;
  for (std::int64_t w = 0; w < geo.ways; ++w) {
    if (stamps[base + w] != 0 && slot_keys[base + w] == keys[i]) {
      way[i] = w;
      return;
    }
  }
}

}  // namespace

device_set_assoc_cache::device_set_assoc_cache(const cuda_context& ctx, std::int64_t capacity_rows,
                                               std::int64_t dim, std::int64_t ways,
                                               feature_dtype dtype)
    : ctx_(&ctx), geo_(), dim_(dim), dtype_(dtype) {
  COOPGNN_CUDA_EXPECTS(dim >= 1, "device_set_assoc_cache: dim must be >= 1");
  // The host reference's geometry (set_assoc.cpp, compiled by the C++ compiler; it checks
  // capacity_rows and ways).
  geo_ = make_set_assoc_geometry(capacity_rows, ways);
  auto const slots = static_cast<std::size_t>(geo_.sets * geo_.ways);
  auto const s = ctx.compute();
  keys_ = ctx.allocate<std::int64_t>(slots, s);
  stamps_ = ctx.allocate<std::uint64_t>(slots, s);
  rows_ = ctx.allocate<std::uint8_t>(
      slots * static_cast<std::size_t>(dim * feature_dtype_size(dtype)), s);
  counter_ = ctx.allocate<unsigned long long>(1, s);
  if (slots > 0) COOPGNN_CUDA_CHECK(cudaMemsetAsync(stamps_.data(), 0, stamps_.bytes(), s));
  // lookup() and admit() may run on any stream: the slots must be allocated and empty first.
  COOPGNN_CUDA_CHECK(cudaStreamSynchronize(s));
}

cache_batch_stats device_set_assoc_cache::lookup(const std::int64_t* keys, std::int64_t n,
                                                 float* out, std::int64_t* miss_pos, stream_t s) {
  COOPGNN_NVTX_RANGE("cache/lookup");
  ++clock_;
  cache_batch_stats st;
  if (n == 0) return st;
  auto miss = ctx_->allocate<std::uint8_t>(static_cast<std::size_t>(n), s);
  with_slot_type(dtype_, [&](auto d) {
    constexpr feature_dtype D = decltype(d)::value;
    COOPGNN_LAUNCH(lookup_kernel<D>, blocks_for(n), kThreads, 0, s, geo_, dim_, clock_,
                   keys_.data(), stamps_.data(),
                   reinterpret_cast<const typename slot_elem<D>::type*>(rows_.data()), keys, n, out,
                   miss.data());
  });
  COOPGNN_CUDA_CHECK(cudaMemsetAsync(counter_.data(), 0, sizeof(unsigned long long), s));
  COOPGNN_LAUNCH(collect_misses, blocks_for(n), kThreads, 0, s, miss.data(), n, miss_pos,
                 counter_.data());
  unsigned long long m = 0;
  COOPGNN_CUDA_CHECK(cudaMemcpyAsync(&m, counter_.data(), sizeof(m), cudaMemcpyDeviceToHost, s));
  COOPGNN_CUDA_CHECK(cudaStreamSynchronize(s));
  st.misses = static_cast<std::int64_t>(m);
  st.hits = n - st.misses;
  if (st.misses > 1) {
    // The atomic counter scrambles the order: sort the positions back into batch order.
    auto sorted = ctx_->allocate<std::int64_t>(static_cast<std::size_t>(st.misses), s);
    std::size_t temp_bytes = 0;
    COOPGNN_CUDA_CHECK(cub::DeviceRadixSort::SortKeys(nullptr, temp_bytes, miss_pos, sorted.data(),
                                                      st.misses, 0, 64, s));
    auto temp = ctx_->allocate<std::uint8_t>(temp_bytes, s);
    COOPGNN_CUDA_CHECK(cub::DeviceRadixSort::SortKeys(temp.data(), temp_bytes, miss_pos,
                                                      sorted.data(), st.misses, 0, 64, s));
    COOPGNN_CUDA_CHECK(cudaMemcpyAsync(miss_pos, sorted.data(),
                                       static_cast<std::size_t>(st.misses) * sizeof(std::int64_t),
                                       cudaMemcpyDeviceToDevice, s));
  }
  return st;
}

void device_set_assoc_cache::admit(const std::int64_t* keys, const float* out,
                                   const std::int64_t* miss_pos, std::int64_t misses, stream_t s) {
  COOPGNN_NVTX_RANGE("cache/admit");
  if (misses == 0 || geo_.sets == 0) return;
  auto const m = static_cast<std::size_t>(misses);
  auto sets = ctx_->allocate<std::int64_t>(m, s);
  auto sorted_sets = ctx_->allocate<std::int64_t>(m, s);
  auto sorted_pos = ctx_->allocate<std::int64_t>(m, s);
  COOPGNN_LAUNCH(miss_sets, blocks_for(misses), kThreads, 0, s, geo_, keys, miss_pos, misses,
                 sets.data());
  // Radix sort is stable: within a set the misses stay in batch order.
  std::size_t temp_bytes = 0;
  COOPGNN_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, temp_bytes, sets.data(),
                                                     sorted_sets.data(), miss_pos,
                                                     sorted_pos.data(), misses, 0, 64, s));
  auto temp = ctx_->allocate<std::uint8_t>(temp_bytes, s);
  COOPGNN_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp.data(), temp_bytes, sets.data(),
                                                     sorted_sets.data(), miss_pos,
                                                     sorted_pos.data(), misses, 0, 64, s));
  with_slot_type(dtype_, [&](auto d) {
    constexpr feature_dtype D = decltype(d)::value;
    COOPGNN_LAUNCH(admit_kernel<D>, blocks_for(misses), kThreads, 0, s, geo_, dim_, clock_,
                   keys_.data(), stamps_.data(),
                   reinterpret_cast<typename slot_elem<D>::type*>(rows_.data()), keys, out,
                   sorted_sets.data(), sorted_pos.data(), misses);
  });
}

std::vector<std::int64_t> device_set_assoc_cache::ways_of(const std::int64_t* keys, std::int64_t n,
                                                          stream_t s) const {
  std::vector<std::int64_t> out(static_cast<std::size_t>(n));
  if (n == 0) return out;
  auto way = ctx_->allocate<std::int64_t>(static_cast<std::size_t>(n), s);
  COOPGNN_LAUNCH(ways_kernel, blocks_for(n), kThreads, 0, s, geo_, keys_.data(), stamps_.data(),
                 keys, n, way.data());
  COOPGNN_CUDA_CHECK(
      cudaMemcpyAsync(out.data(), way.data(), way.bytes(), cudaMemcpyDeviceToHost, s));
  COOPGNN_CUDA_CHECK(cudaStreamSynchronize(s));
  return out;
}

}  // namespace coopgnn::cuda
