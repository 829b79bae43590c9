// CUDA row gather (gather_cuda.hpp). Host reference: gather.cpp.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <type_traits>

#include "kernels/gather/gather_cuda.hpp"
#include "runtime/core/cuda_check.hpp"
#include "runtime/core/cuda_launch.cuh"
#include "runtime/core/nvtx.hpp"

namespace coopgnn::cuda {
namespace {

constexpr int kBlock = 256;

/// The conversions of a table chunk S to an output chunk V: float32 copies (float4 <- float4,
/// float <- float) and the 16-bit widenings (float4 <- ushort4, float <- unsigned short) with
/// CUDA's exact __half2float / __bfloat162float.
struct copy_chunk {
  template <class V>
  __device__ V operator()(V x) const {
    return x;
  }
};
template <feature_dtype D>
struct widen_chunk {
  __device__ static float one(unsigned short b) {
    if constexpr (D == feature_dtype::float16) {
      return __half2float(__ushort_as_half(b));
    } else {
      return __bfloat162float(__ushort_as_bfloat16(b));
    }
  }
  __device__ float operator()(unsigned short b) const { return one(b); }
  __device__ float4 operator()(ushort4 b) const {
    return make_float4(one(b.x), one(b.y), one(b.z), one(b.w));
  }
};

/// One thread per (row j, chunk c) with table chunks of type S and output chunks of type V
/// (float4 or float) converted by `conv`: with i = j (pos null) or i = pos[j], out row i chunk
/// c = conv(table row ids[i] chunk c). ids are read once per chunk (cached); bad ids are
/// reported by their position i.
template <class S, class V, class Conv>
__global__ void gather_rows_per_chunk(const S* table, std::int64_t rows, std::int64_t chunks,
                                      std::int64_t stride_chunks, const vid_t* ids,
                                      const std::int64_t* pos, std::int64_t m, V* out,
                                      unsigned long long* first_bad, Conv conv) {
  std::int64_t const total = m * chunks;
  for (std::int64_t k = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; k < total;
       k += std::int64_t{gridDim.x} * blockDim.x) {
    std::int64_t const j = k / chunks;
    std::int64_t const c = k - j * chunks;
    std::int64_t const i = pos == nullptr ? j : pos[j];
    vid_t const v = ids[i];
    if (v < 0 || v >= rows) {
      if (c == 0) atomicMin(first_bad, static_cast<unsigned long long>(i));
      continue;
    }
    out[i * chunks + c] = conv(table[v * stride_chunks + c]);
  }
}

/// Launches gather_rows_per_chunk over m rows (pos as there).
void launch_gather(const table_view& table, const vid_t* ids, const std::int64_t* pos,
                   std::int64_t m, float* out, unsigned long long* first_bad, stream_t s,
                   int max_blocks);

bool aligned16(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }

}  // namespace

bool gather_is_vectorised(const table_view& table, const float* out) {
  auto const chunk = static_cast<std::uintptr_t>(4 * feature_dtype_size(table.dtype));
  return reinterpret_cast<std::uintptr_t>(table.data) % chunk == 0 && aligned16(out) &&
         table.cols % 4 == 0 && table.stride % 4 == 0;
}

void gather_rows_async(const table_view& table, const vid_t* ids, std::int64_t m, float* out,
                       unsigned long long* first_bad, stream_t s, int max_blocks) {
  launch_gather(table, ids, nullptr, m, out, first_bad, s, max_blocks);
}

void gather_rows_at_async(const table_view& table, const vid_t* ids, const std::int64_t* pos,
                          std::int64_t m, float* out, unsigned long long* first_bad, stream_t s,
                          int max_blocks) {
  launch_gather(table, ids, pos, m, out, first_bad, s, max_blocks);
}

namespace {
void launch_gather(const table_view& table, const vid_t* ids, const std::int64_t* pos,
                   std::int64_t m, float* out, unsigned long long* first_bad, stream_t s,
                   int max_blocks) {
  if (m == 0 || table.cols == 0) return;
  bool const vec = gather_is_vectorised(table, out);
  std::int64_t const chunks = vec ? table.cols / 4 : table.cols;
  std::int64_t const total = m * chunks;
  std::int64_t blocks = (total + kBlock - 1) / kBlock;
  std::int64_t const cap = max_blocks > 0 ? max_blocks : std::int64_t{65535} * 32;
  if (blocks > cap) blocks = cap;
  auto const grid = static_cast<unsigned>(blocks);
  // One launch per (element type, vector width); S is the table's chunk type.
  auto launch = [&](auto s_tag, auto conv) {
    using S = decltype(s_tag);
    if constexpr (std::is_same_v<S, float4> || std::is_same_v<S, ushort4>) {
      COOPGNN_LAUNCH((gather_rows_per_chunk<S, float4, decltype(conv)>), grid, kBlock, 0, s,
                     static_cast<const S*>(table.data), table.rows, chunks, table.stride / 4, ids,
                     pos, m, reinterpret_cast<float4*>(out), first_bad, conv);
    } else {
      COOPGNN_LAUNCH((gather_rows_per_chunk<S, float, decltype(conv)>), grid, kBlock, 0, s,
                     static_cast<const S*>(table.data), table.rows, chunks, table.stride, ids, pos,
                     m, out, first_bad, conv);
    }
  };
  switch (table.dtype) {
    case feature_dtype::float32:
      return vec ? launch(float4{}, copy_chunk{}) : launch(float{}, copy_chunk{});
    case feature_dtype::float16:
      return vec ? launch(ushort4{}, widen_chunk<feature_dtype::float16>{})
                 : launch(static_cast<unsigned short>(0), widen_chunk<feature_dtype::float16>{});
    case feature_dtype::bfloat16:
      return vec ? launch(ushort4{}, widen_chunk<feature_dtype::bfloat16>{})
                 : launch(static_cast<unsigned short>(0), widen_chunk<feature_dtype::bfloat16>{});
  }
}
}  // namespace

device_buffer<float> gather_rows(const cuda_context& ctx, const table_view& table,
                                 const device_buffer<vid_t>& ids, stream_t s, int max_blocks) {
  COOPGNN_NVTX_RANGE("gather/features");
  COOPGNN_CUDA_EXPECTS(table.rows >= 0 && table.cols >= 0 && table.stride >= table.cols,
                       "gather_rows: table shape [" + std::to_string(table.rows) + ", " +
                           std::to_string(table.cols) + "] with row stride " +
                           std::to_string(table.stride) + " is invalid");
  COOPGNN_CUDA_EXPECTS(
      table.data != nullptr || table.rows == 0 || table.cols == 0,
      "gather_rows: table with " + std::to_string(table.rows) + " rows has no data pointer");
  if (s == nullptr) s = ctx.compute();
  auto const m = static_cast<std::int64_t>(ids.size());
  auto out = ctx.allocate<float>(static_cast<std::size_t>(m * table.cols), s);
  auto first_bad = ctx.allocate<unsigned long long>(1, s);
  COOPGNN_CUDA_CHECK(cudaMemsetAsync(first_bad.data(), 0xFF, sizeof(unsigned long long), s));
  gather_rows_async(table, ids.data(), m, out.data(), first_bad.data(), s, max_blocks);
  unsigned long long bad = 0;
  COOPGNN_CUDA_CHECK(
      cudaMemcpyAsync(&bad, first_bad.data(), sizeof bad, cudaMemcpyDeviceToHost, s));
  COOPGNN_CUDA_CHECK(cudaStreamSynchronize(s));
  if (bad != ~0ULL) {
    vid_t v = 0;
    COOPGNN_CUDA_CHECK(cudaMemcpyAsync(&v, ids.data() + bad, sizeof v, cudaMemcpyDeviceToHost, s));
    COOPGNN_CUDA_CHECK(cudaStreamSynchronize(s));
    COOPGNN_CUDA_EXPECTS(false, "gather_rows: id " + std::to_string(v) + " at position " +
                                    std::to_string(bad) + " is outside [0, " +
                                    std::to_string(table.rows) + ")");
  }
  return out;
}

}  // namespace coopgnn::cuda
