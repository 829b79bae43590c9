// Row gather (DESIGN.md section 1, kernels): out[i, :] = table[ids[i], :].
#pragma once

#include <cstdint>
#include <span>

#include "runtime/core/matrix.hpp"
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

}  // namespace coopgnn
