// Feature row gather on the CUDA backend (docs/design.md sections 1 and 2, parity; the UVA
// reads after GraphBolt's index_select):
//   out[i, :] = widen(table[ids[i], :])   for i in [0, m)
// from a table in device memory or in pinned host memory read in place over UVA, at its stored
// width: float32 rows are copied, float16 / bfloat16 rows (2 bytes per element) are widened to
// float32 in the kernel (__half2float, __bfloat162float; exact). Host reference: gather.hpp
// (gather_rows); results are equal byte for byte (for 16-bit NaNs, NaN for NaN: the payload
// the hardware conversion gives).
//
// Includable from .cpp files in any build; definitions (gather.cu) exist only in CUDA builds.
#pragma once

#include <cstdint>

#include "runtime/core/cuda_context.hpp"
#include "runtime/core/half.hpp"
#include "runtime/core/types.hpp"

namespace coopgnn::cuda {

/// A row-major feature table readable by kernels: device memory, or pinned host memory through
/// its device pointer (pinned_buffer::device_data, host_registration::device_data), of element
/// type `dtype` (float32; float16 or bfloat16 bit patterns, 2 bytes each).
struct table_view {
  const void* data = nullptr;                    ///< device-accessible address of row 0
  std::int64_t rows = 0;                         ///< N
  std::int64_t cols = 0;                         ///< F (elements per row)
  std::int64_t stride = 0;                       ///< elements between consecutive rows, >= cols
  feature_dtype dtype = feature_dtype::float32;  ///< element type as stored
};

/// True when the vector path applies: 4 elements per thread (16 bytes of float32 or 8 bytes of
/// a 16-bit type read, one float4 written), with table.data aligned to 4 elements, `out` 16-byte
/// aligned and cols and stride multiples of 4. Otherwise the kernel reads and writes single
/// elements.
bool gather_is_vectorised(const table_view& table, const float* out);

/// Enqueues the gather on stream s without synchronising or allocating.
/// Kernel (one thread per chunk of 4 elements or 1, grid-stride over m * chunks per row):
///   for i, c: v = ids[i]; if v < 0 or v >= N: atomicMin(*first_bad, i), write nothing;
///             else out[i * cols + c] = widen(table[v * stride + c])
/// @param ids        [m] device int64 row ids
/// @param out        [m, cols] device float32, contiguous; must not overlap the table
/// @param first_bad  device slot, initialised by the caller to ~0ULL; receives the smallest
///                   position of an id outside [0, N) (rows of bad ids are left unwritten)
/// @param max_blocks cap on thread blocks (0 = none): for UVA reads, a small cap leaves SMs to
///                   concurrent compute, as GraphBolt caps UVA threads
/// @throws cuda_error for a failed launch. m = 0 or cols = 0 enqueues nothing.
void gather_rows_async(const table_view& table, const vid_t* ids, std::int64_t m, float* out,
                       unsigned long long* first_bad, stream_t s, int max_blocks = 0);

/// The gather restricted to positions: for j < m, with i = pos[j],
///   out[i, :] = table[ids[i], :]
/// and every other row of `out` is left as it was. This fills the misses of a cache lookup in
/// place (device_set_assoc_cache::lookup writes the hits and lists the miss positions).
/// @param ids        [>= max(pos) + 1] device int64 row ids
/// @param pos        [m] device int64 positions into ids and out (distinct, else the rows of a
///                   repeated position are written twice with the same bytes)
/// @param out        [>= max(pos) + 1, cols] device float32, contiguous; not overlapping table
/// @param first_bad  as gather_rows_async; receives the smallest position i with a bad id
/// @throws cuda_error for a failed launch. m = 0 or cols = 0 enqueues nothing.
void gather_rows_at_async(const table_view& table, const vid_t* ids, const std::int64_t* pos,
                          std::int64_t m, float* out, unsigned long long* first_bad, stream_t s,
                          int max_blocks = 0);

/// Gathers rows into a new [ids.size(), table.cols] device buffer on stream s (default
/// ctx.compute(); use ctx.h2d() for pinned host tables), then synchronises s to check the ids.
/// `ids` and the table must be ready on s (written on s, or ordered before it by the caller).
/// @throws logic_error naming the first id outside [0, N) and its position (no out-of-bounds
///         read happens); logic_error when stride < cols or a table with rows has no data;
///         cuda_error for CUDA failures. Deterministic.
device_buffer<float> gather_rows(const cuda_context& ctx, const table_view& table,
                                 const device_buffer<vid_t>& ids, stream_t s = nullptr,
                                 int max_blocks = 0);

}  // namespace coopgnn::cuda
