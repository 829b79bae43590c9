// Dense matrix multiply: the host reference (DESIGN.md section 2, "every kernel exists twice").
//
// Plain loops, no BLAS. The loop order keeps the innermost loop contiguous over the columns of C
// and B so that it auto-vectorises; every element of C accumulates its k products in ascending k,
// whatever the operand layout, so results are deterministic and independent of how a caller
// splits the rows of C across threads.
#pragma once

#include <cstdint>

#include "kernels/dense/op.hpp"
#include "runtime/core/exec_context.hpp"
#include "runtime/core/matrix.hpp"
#include "runtime/core/memory.hpp"

namespace coopgnn {

/// C = alpha * op(A) * op(B) + beta * C on row-major host data (BLAS xGEMM semantics, row-major).
///
/// Scalar pseudocode: for i < m, j < n: C[i,j] = beta * C[i,j] + sum_{p < k} (alpha * opA[i,p]) *
/// opB[p,j], with the sum taken in ascending p and accumulated into C[i,j] after the beta scaling.
///
/// @param op_a, op_b  op::none or op::transpose
/// @param m, n, k     op(A) is [m, k], op(B) is [k, n], C is [m, n]; each >= 0 (rows/columns)
/// @param a           host pointer: A stored [m, k] (op::none) or [k, m] (op::transpose), row
///                    stride lda elements; lda >= stored column count
/// @param b           host pointer: B stored [k, n] (op::none) or [n, k] (op::transpose), row
///                    stride ldb >= stored column count
/// @param c           host pointer: C [m, n], row stride ldc >= n
/// @param beta        beta == 0 overwrites C (NaN/Inf already in C do not propagate), beta == 1
///                    accumulates
/// @throws logic_error naming the argument when a dimension is negative, a leading dimension is
///         too small, a pointer is null for a non-empty operand, or C overlaps A or B.
/// Aliasing: C must not overlap A or B; A and B may alias each other.
/// Empty: m == 0 or n == 0 does nothing; k == 0 or alpha == 0 only scales C by beta.
/// Determinism: bitwise reproducible; row i of C depends only on row i of op(A), B, alpha, beta,
/// so computing a row range [i0, i1) by offsetting a and c gives the same bits as the full call.
/// Allocation: op_b == op::transpose packs op(B) into a temporary [k, n] host buffer.
/// Not thread-safe on the same C; distinct row ranges of C may be computed concurrently.
template <typename T>
void gemm(op op_a, op op_b, std::int64_t m, std::int64_t n, std::int64_t k, T alpha, const T* a,
          std::int64_t lda, const T* b, std::int64_t ldb, T beta, T* c, std::int64_t ldc);

/// C = alpha * op(A) * op(B) + beta * C on whole matrices (see the pointer overload for the
/// semantics, determinism and allocation).
///
/// @param a  A [m, k] (op::none) or [k, m] (op::transpose)
/// @param b  B [k, n] (op::none) or [n, k] (op::transpose)
/// @param c  C [m, n], updated in place; not resized
/// @throws logic_error naming both shapes when the inner dimensions of op(A) and op(B) differ or
///         C's shape is not [m, n], and when c is the same object as a or b.
/// Explicitly instantiated for float and double.
template <typename T>
void gemm(op op_a, op op_b, T alpha, const matrix<T>& a, const matrix<T>& b, T beta, matrix<T>& c);

/// C = alpha * op(A) * op(B) + beta * C on views in ctx.space(), the one GEMM entry of every
/// backend (DESIGN.md section 2): the host reference above (rows of C split over ctx.threads(),
/// same bits for any count) on the host and emulated backends, cuBLAS (gemm_cuda.hpp, float32
/// only, asynchronous on ctx's compute stream; exact on integer data below 2^24, otherwise
/// within a relative 1e-5 * sqrt(k) of the host) on the CUDA backend.
/// @param a  A [m, k] (op::none) or [k, m] (op::transpose), row-major with stride a.cols
/// @param b  B [k, n] or [n, k]; @param c C [m, n], updated in place
/// @throws logic_error naming the operand when its memory space is not ctx.space(), when the
///         inner dimensions differ or C's shape is not [m, n], or when C overlaps A or B;
///         cuda_error when cuBLAS fails.
template <typename T>
void gemm(const exec_context& ctx, op op_a, op op_b, T alpha, tensor_view<const T> a,
          tensor_view<const T> b, T beta, tensor_view<T> c);

}  // namespace coopgnn
