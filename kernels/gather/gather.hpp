// Row gather (docs/design.md section 1, kernels): out[i, :] = table[ids[i], :], widened to
// float32 when the table is 16-bit (float16 or bfloat16 bit patterns: runtime/core/half.hpp;
// exact).
#pragma once

#include <cstdint>
#include <span>

#include "runtime/core/exec_context.hpp"
#include "runtime/core/half.hpp"
#include "runtime/core/matrix.hpp"
#include "runtime/core/memory.hpp"
#include "runtime/core/types.hpp"

namespace coopgnn {

/// Gathers rows of a row-major float32 table.
/// @param table  [n, d] host matrix
/// @param ids    [m] row ids in [0, n)
/// @return       [m, d]; m = 0 gives an empty [0, d] matrix
/// @throws logic_error naming the first id outside [0, n). Deterministic, no aliasing.
matrix<float> gather_rows(const matrix<float>& table, std::span<const vid_t> ids);

/// The same over a raw row-major table of `rows` x `cols` elements of `dtype` at `table` (host
/// readable: host memory, a memory-mapped file, pinned memory; 4 bytes per element for float32,
/// 2 for float16 and bfloat16). Rows are read at the stored width and widened to float32
/// exactly (half_to_float, bfloat16_to_float). May be null when rows * cols is 0.
/// @return [m, cols] float32 host matrix
/// @throws logic_error naming the first id outside [0, rows).
matrix<float> gather_rows(const void* table, feature_dtype dtype, std::int64_t rows,
                          std::int64_t cols, std::span<const vid_t> ids);

/// out[i, :] = table[ids[i], :] on views in ctx.space(), the gather entry of every backend (the
/// cooperative exchanges answer requests and place received rows with it). Host and emulated
/// backends: the host loop above (an id outside [0, table.rows) throws logic_error naming it and
/// its position). CUDA: gather_rows_async on ctx's compute stream without the id check (no
/// synchronisation): the caller guarantees the ids, as an exchange plan's validated indices are.
/// @param table [n, d]; @param ids [m] int64; @param out [m, d], overwritten, not overlapping
/// @throws logic_error naming the operand on a space or shape mismatch.
void gather_rows(const exec_context& ctx, tensor_view<const float> table,
                 buffer_view<const std::int64_t> ids, tensor_view<float> out);

/// The widening gather on views in ctx.space(): out[i, :] = widen(table[ids[i], :]) for a table
/// of 16-bit patterns of `dtype` (float16 or bfloat16), read at 2 bytes per element. Host and
/// emulated backends: the host loop (ids checked as above); CUDA: gather_rows_async with a
/// table_view of that dtype (__half2float / __bfloat162float), ids not checked. Results equal
/// the host's bit for bit except NaN payloads, which CUDA's conversion may not keep.
/// @param table [n, d] uint16 bit patterns; @param ids [m] int64; @param out [m, d] float32
/// @throws logic_error on a space or shape mismatch, for dtype float32 (use the overload above),
///         or (host, emulated) for an id outside [0, n).
void gather_rows(const exec_context& ctx, tensor_view<const std::uint16_t> table,
                 feature_dtype dtype, buffer_view<const std::int64_t> ids, tensor_view<float> out);

}  // namespace coopgnn
