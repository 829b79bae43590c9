// CUDA row gather (gather_cuda.hpp). Host reference: gather.cpp.
#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#include "kernels/gather/gather_cuda.hpp"
#include "runtime/core/cuda_check.hpp"
#include "runtime/core/cuda_launch.cuh"
#include "runtime/core/nvtx.hpp"

namespace coopgnn::cuda {
namespace {

constexpr int kBlock = 256;

/// One thread per (row j, chunk c) with chunks of type V (float4 or float): with i = j (pos
/// null) or i = pos[j], out row i chunk c = table row ids[i] chunk c. ids are read once per chunk
/// (cached); bad ids are reported by their position i.
template <class V>
__global__ void gather_rows_per_chunk(const V* table, std::int64_t rows, std::int64_t chunks,
                                      std::int64_t stride_chunks, const vid_t* ids,
                                      const std::int64_t* pos, std::int64_t m, V* out,
                                      unsigned long long* first_bad) {
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
    out[i * chunks + c] = table[v * stride_chunks + c];
  }
}

/// Launches gather_rows_per_chunk over m rows (pos as there).
void launch_gather(const table_view& table, const vid_t* ids, const std::int64_t* pos,
                   std::int64_t m, float* out, unsigned long long* first_bad, stream_t s,
                   int max_blocks);

bool aligned16(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }

}  // namespace

bool gather_is_vectorised(const table_view& table, const float* out) {
  return aligned16(table.data) && aligned16(out) && table.cols % 4 == 0 && table.stride % 4 == 0;
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
  if (vec) {
    COOPGNN_LAUNCH(gather_rows_per_chunk<float4>, static_cast<unsigned>(blocks), kBlock, 0, s,
                   reinterpret_cast<const float4*>(table.data), table.rows, chunks,
                   table.stride / 4, ids, pos, m, reinterpret_cast<float4*>(out), first_bad);
  } else {
    COOPGNN_LAUNCH(gather_rows_per_chunk<float>, static_cast<unsigned>(blocks), kBlock, 0, s,
                   table.data, table.rows, chunks, table.stride, ids, pos, m, out, first_bad);
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
