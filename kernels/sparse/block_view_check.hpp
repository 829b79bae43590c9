// Host-side argument checks of the CUDA sparse entry points (internal to kernels/sparse).
#pragma once

#ifdef COOPGNN_WITH_CUDA

#include <cstdint>

#include "kernels/cuda_check.cuh"
#include "kernels/sparse/sparse_cuda.hpp"

namespace coopgnn::cuda::detail {

/// Throws logic_error prefixed by `fn` when a size of b is negative, num_dst > num_src, or a
/// pointer the call reads is null while its array is non-empty (weights only if need_weights).
inline void check_block_view(const char* fn, const block_view& b, bool need_weights) {
  COOPGNN_CU_EXPECTS(b.num_dst >= 0 && b.num_src >= 0 && b.num_edges >= 0, fn,
                     ": negative block size num_dst=", b.num_dst, ", num_src=", b.num_src,
                     ", num_edges=", b.num_edges);
  COOPGNN_CU_EXPECTS(b.num_dst <= b.num_src, fn, ": block has ", b.num_dst,
                     " destinations but only ", b.num_src, " sources (dsts are a prefix)");
  COOPGNN_CU_EXPECTS(b.indptr != nullptr, fn, ": block indptr is null");
  COOPGNN_CU_EXPECTS(b.num_edges == 0 || b.indices != nullptr, fn, ": block indices are null");
  COOPGNN_CU_EXPECTS(!need_weights || b.num_edges == 0 || b.weights != nullptr, fn,
                     ": block weights are null");
}

/// Throws logic_error prefixed by `fn` when d < 0 or `ptr` (named `what`) is null while the
/// operand has rows * d > 0 elements.
inline void check_dense(const char* fn, const char* what, const void* ptr, std::int64_t rows,
                        std::int64_t d) {
  COOPGNN_CU_EXPECTS(d >= 0, fn, ": negative column count d=", d);
  COOPGNN_CU_EXPECTS(rows == 0 || d == 0 || ptr != nullptr, fn, ": ", what, " is null for a [",
                     rows, ", ", d, "] operand");
}

}  // namespace coopgnn::cuda::detail

#endif  // COOPGNN_WITH_CUDA
