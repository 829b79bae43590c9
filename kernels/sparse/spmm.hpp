// Sparse (block) times dense: the aggregation of GNN layers, host reference (DESIGN.md section 2;
// section 4, "Layers on sampled blocks").
//
// The sparse operand is a CSR by destination: row s holds edges e in [indptr[s], indptr[s + 1]),
// edge e reads source row indices[e] with value values[e]. A sampled `block` is exactly this with
// values = block.weights; the span overloads let a layer pass other per-edge values (GCN
// normalisation). Sums run in edge order, so results are bitwise deterministic.
#pragma once

#include <cstdint>
#include <span>

#include "kernels/sample/block.hpp"
#include "runtime/core/matrix.hpp"
#include "runtime/core/types.hpp"

namespace coopgnn {

/// y = A x with A the block's weighted adjacency: for every destination s < b.num_dst,
///   y[s, :] = sum_{e in [indptr[s], indptr[s+1])} weights[e] * x[indices[e], :]
/// summed from zero in edge order (a destination without edges gets a zero row).
///
/// @param b  the block; b.indptr [num_dst + 1], b.indices and b.weights [num_edges]
/// @param x  [b.num_src(), d] source rows
/// @param y  [b.num_dst, d], overwritten; not resized
/// @throws logic_error naming the argument on a shape mismatch, a non-monotone indptr, an indptr
///         that does not span the edge arrays, or an index outside [0, x.rows()).
/// Aliasing: y must not be x. Empty: num_dst == 0 or d == 0 does nothing beyond validation.
/// Deterministic (sequential, edge order). Explicitly instantiated for float and double (the
/// float weights are converted to T before multiplying).
template <typename T>
void spmm(const block& b, const matrix<T>& x, matrix<T>& y);

/// As spmm(block, ...) but computes only the destination rows [row_begin, row_end) of y and leaves
/// every other row untouched: disjoint row ranges may run concurrently on different threads and
/// give the same bits as one full call.
/// @throws logic_error also when the range is not inside [0, b.num_dst].
template <typename T>
void spmm(const block& b, const matrix<T>& x, matrix<T>& y, std::int64_t row_begin,
          std::int64_t row_end);

/// As spmm(block, ...) with explicit per-edge values.
///
/// @param indptr   [num_dst + 1] edge offsets, indptr[0] == 0, non-decreasing,
///                 indptr[num_dst] == indices.size()
/// @param indices  [num_edges] source rows, each in [0, x.rows())
/// @param values   [num_edges] edge values
/// @param x        [num_src, d]; @param y [num_dst, d], overwritten
/// @throws logic_error as spmm(block, ...).
template <typename T>
void spmm(std::span<const eid_t> indptr, std::span<const std::int64_t> indices,
          std::span<const T> values, const matrix<T>& x, matrix<T>& y);

/// As the span overload but computes only the destination rows [row_begin, row_end) of y and
/// leaves every other row untouched: disjoint row ranges may run concurrently on different
/// threads and give the same bits as one full call.
/// @throws logic_error also when the range is not inside [0, num_dst].
template <typename T>
void spmm(std::span<const eid_t> indptr, std::span<const std::int64_t> indices,
          std::span<const T> values, const matrix<T>& x, matrix<T>& y, std::int64_t row_begin,
          std::int64_t row_end);

/// x_grad += A^T y_grad, the backward of spmm: for s ascending, then e in edge order,
///   x_grad[indices[e], :] += weights[e] * y_grad[s, :].
///
/// @param b       the block (as spmm)
/// @param y_grad  [b.num_dst, d] gradient with respect to spmm's output
/// @param x_grad  [b.num_src(), d], accumulated into (not zeroed)
/// @throws logic_error as spmm. Aliasing: x_grad must not be y_grad. Empty: nothing to add.
/// Deterministic (sequential). Instantiated for float and double.
template <typename T>
void spmm_transpose_add(const block& b, const matrix<T>& y_grad, matrix<T>& x_grad);

/// As spmm_transpose_add(block, ...) with explicit per-edge values; num_src = x_grad.rows().
template <typename T>
void spmm_transpose_add(std::span<const eid_t> indptr, std::span<const std::int64_t> indices,
                        std::span<const T> values, const matrix<T>& y_grad, matrix<T>& x_grad);

}  // namespace coopgnn
