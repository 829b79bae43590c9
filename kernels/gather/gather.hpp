// Row gather (docs/design.md section 1, kernels): out[i, :] = table[ids[i], :].
#pragma once

#include <cstdint>
#include <span>

#include "runtime/core/exec_context.hpp"
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

/// The same over a raw row-major table of `rows` x `cols` float32 values at `table` (host
/// readable: host memory, a memory-mapped file, pinned memory).
/// @throws logic_error naming the first id outside [0, rows).
matrix<float> gather_rows(const float* table, std::int64_t rows, std::int64_t cols,
                          std::span<const vid_t> ids);

/// out[i, :] = table[ids[i], :] on views in ctx.space(), the gather entry of every backend (the
/// cooperative exchanges answer requests and place received rows with it). Host and emulated
/// backends: the host loop above (an id outside [0, table.rows) throws logic_error naming it and
/// its position). CUDA: gather_rows_async on ctx's compute stream without the id check (no
/// synchronisation): the caller guarantees the ids, as an exchange plan's validated indices are.
/// @param table [n, d]; @param ids [m] int64; @param out [m, d], overwritten, not overlapping
/// @throws logic_error naming the operand on a space or shape mismatch.
void gather_rows(const exec_context& ctx, tensor_view<const float> table,
                 buffer_view<const std::int64_t> ids, tensor_view<float> out);

}  // namespace coopgnn
