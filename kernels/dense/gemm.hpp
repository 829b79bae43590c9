// Dense matrix multiply (docs/design.md section 2, "every kernel has a host reference").
//
// Two host implementations:
// - gemm_reference: plain loops, the test reference. The loop order keeps the innermost loop
//   contiguous over the columns of C and B so that it auto-vectorises; every element of C
//   accumulates its k products in ascending k, whatever the operand layout, so results are
//   deterministic and independent of how a caller splits the rows of C across threads.
// - the exec_context entry, which on the host and emulated backends calls BLIS (libblis-dev,
//   0.9 on Debian 12) when the build has it (COOPGNN_BLAS=ON, the default; CMake prints the
//   choice) and the reference loops otherwise.
//
// Why BLIS and not OpenBLAS: each PE thread has its own host thread budget, and P PEs may call
// GEMM concurrently. OpenBLAS 0.3.21 (Debian 12) has one process-global thread count
// (openblas_set_num_threads; cblas.h offers no per-call or per-thread setting), so concurrent PEs
// could neither use different budgets nor be kept from oversubscribing the cores. BLIS's expert API
// takes a per-call rntm_t that fixes the ways of parallelism of each loop; we ask for one way
// everywhere (no BLIS thread at all) and split the rows of C over the PE's own persistent pool
// (runtime/core/parallel.hpp), so a PE never runs more than its budget and the reduction over k is
// never split (bitwise the same for any thread count). OpenBLAS was about 1.2-1.4x faster
// single-threaded on this machine (AVX-512 kernels; [1024x64]x[64x64] 57 us vs 70 us,
// [20000x64]x[64x64] 1.19 ms vs 1.44 ms, X^T dY with k = 20000 1.38 ms vs 1.67 ms; the
// reference loops take 0.38 ms, 41 ms and 57 ms there, 5-24x slower than BLIS); budgets that
// never oversubscribe decided.
//
// Determinism and safety of the BLIS path: BLIS would use its unpacked "sup" kernels when m, n
// or k is under 201; the entry turns them off on every call (rntm_t l3_sup = false), because they
// read whole micro-panels of A past its last row when m is not a multiple of MR (an ASan build
// faulted in them on a 7 x 250 A), while the packed kernels copy exactly m rows. Row ranges are
// whole multiples of 96 rows, at least 192 rows each (products under 192 rows are not split),
// because BLIS's results for a row depend on its position within a micro-tile. With those rules
// each range computes its rows exactly as the one-range call: tested bitwise across thread counts
// 1, 2, 3 and against aligned row-range calls in tests/kernels/gemm_test.cpp. An arbitrary row
// range (say one row) called on its own is NOT bitwise the full call's rows under BLIS;
// gemm_reference keeps that property for whoever needs it (no caller does: layers call the entry on
// whole operands). BLIS fuses multiply-adds (FMA) and blocks k by 256, so it matches gemm_reference
// exactly only on data whose products and sums are exact (small integers); otherwise within the
// tolerance stated in the tests.
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
/// so computing a row range [i0, i1) by offsetting a and c gives the same bits as the full call
/// (the BLAS path of gemm_host does not have this property; see the file comment).
/// Allocation: op_b == op::transpose packs op(B) into a temporary [k, n] host buffer.
/// Not thread-safe on the same C; distinct row ranges of C may be computed concurrently.
template <typename T>
void gemm_reference(op op_a, op op_b, std::int64_t m, std::int64_t n, std::int64_t k, T alpha,
                    const T* a, std::int64_t lda, const T* b, std::int64_t ldb, T beta, T* c,
                    std::int64_t ldc);

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
void gemm_reference(op op_a, op op_b, T alpha, const matrix<T>& a, const matrix<T>& b, T beta,
                    matrix<T>& c);

/// The host path of the exec_context entry below on raw row-major host pointers with leading
/// dimensions: single-threaded BLIS calls on row ranges of C split over `threads` (< 1 counts as
/// 1; at least ~2 MFLOP per range, so small products stay on the calling thread, which runs range
/// 0; the others run on its persistent pool, runtime/core/parallel.hpp), or gemm_reference's
/// loops in a build without BLIS. Arguments, aliasing rules, errors, beta == 0 and k == 0 as
/// gemm_reference. Bitwise the same for any `threads` (see the file comment); equal to
/// gemm_reference exactly on small-integer data, within rounding (FMA, k blocked) otherwise.
template <typename T>
void gemm_host(int threads, op op_a, op op_b, std::int64_t m, std::int64_t n, std::int64_t k,
               T alpha, const T* a, std::int64_t lda, const T* b, std::int64_t ldb, T beta, T* c,
               std::int64_t ldc);

/// C = alpha * op(A) * op(B) + beta * C on views in ctx.space(), the one GEMM entry of every
/// backend (docs/design.md section 2): on the host and emulated backends single-threaded BLIS calls
/// on row ranges of C split over ctx.threads() (at least ~2 MFLOP per range; same bits for any
/// count, see the file comment), or the reference loops in a build without BLIS; cuBLAS
/// (gemm_cuda.hpp, float32 only, asynchronous on ctx's compute stream; exact on integer data below
/// 2^24, otherwise within a relative 1e-5 * sqrt(k) of the host) on the CUDA backend.
/// @param a  A [m, k] (op::none) or [k, m] (op::transpose), row-major with stride a.cols
/// @param b  B [k, n] or [n, k]; @param c C [m, n], updated in place
/// beta == 0 overwrites C (NaN/Inf in C do not propagate); k == 0 or alpha == 0 scales C by beta.
/// @throws logic_error naming the operand when its memory space is not ctx.space(), when the
///         inner dimensions differ or C's shape is not [m, n], or when C overlaps A or B;
///         cuda_error when cuBLAS fails.
template <typename T>
void gemm(const exec_context& ctx, op op_a, op op_b, T alpha, tensor_view<const T> a,
          tensor_view<const T> b, T beta, tensor_view<T> c);

}  // namespace coopgnn
