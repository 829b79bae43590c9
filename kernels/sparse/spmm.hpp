// Sparse (block) times dense: the aggregation of GNN layers, host reference (docs/design.md section
// 2; section 4.4, layers on sampled blocks).
//
// The sparse operand is a CSR by destination: row s holds edges e in [indptr[s], indptr[s + 1]),
// edge e reads source row indices[e] with value values[e]. A sampled `block` is exactly this with
// values = block.weights; the span overloads let a layer pass other per-edge values (GCN
// normalisation). Sums run in edge order, so results are bitwise deterministic.
#pragma once

#include <cstdint>
#include <span>

#include "kernels/sample/block.hpp"
#include "runtime/core/exec_context.hpp"
#include "runtime/core/matrix.hpp"
#include "runtime/core/memory.hpp"
#include "runtime/core/types.hpp"

namespace coopgnn {

/// A CSR by destination row in one memory space: row s holds the edges e in
/// [indptr[s], indptr[s + 1]), edge e reads source row indices[e] in [0, num_cols). A block's
/// adjacency (csr_of) or the push CSR of a cooperative exchange.
struct csr_view {
  std::int64_t num_rows = 0;              ///< destinations
  std::int64_t num_cols = 0;              ///< sources
  std::int64_t num_edges = 0;             ///< == indptr[num_rows]
  const eid_t* indptr = nullptr;          ///< [num_rows + 1]
  const std::int64_t* indices = nullptr;  ///< [num_edges]
  memory_space space = memory_space::host;
};

/// The adjacency of a block: rows = destinations, columns = sources.
inline csr_view csr_of(const block_view& b) {
  return {b.num_dst, b.num_src, b.num_edges, b.indptr, b.indices, b.space};
}

/// Positions grouped by value: the transpose of a CSR's column indices.
struct grouped_positions {
  buffer<eid_t> offsets;           ///< [num_values + 1]: value v's positions start at offsets[v]
  buffer<std::int64_t> positions;  ///< [m] 0..m-1 sorted by value, ascending within a value
};

/// Groups the positions of `values` by value (a stable counting sort; the transposed CSR that
/// makes SpMM's backward a gather, and the index of a cooperative exchange). Host and emulated
/// backends: the counting sort (a value outside [0, num_values) throws logic_error naming its
/// position). CUDA: build_transpose (a stable CUB radix sort on the bits of num_values), the same
/// result for valid values; values are NOT checked there (an out-of-range value is misplaced
/// silently), so callers pass indices they built themselves. Allocates the outputs (and, on CUDA,
/// the workspace) from ctx.
/// @param values [m] int64 in ctx.space()
grouped_positions group_by_value(const exec_context& ctx, std::int64_t num_values,
                                 buffer_view<const std::int64_t> values);

/// y = A x on views in ctx.space(), the one SpMM entry of every backend: for s < a.num_rows,
///   y[s, :] = sum_{e in [indptr[s], indptr[s+1])} values[e] * x[indices[e], :]
/// summed from zero in edge order (a row without edges gets zeros). Host and emulated backends:
/// the host reference (rows split over ctx.threads(), same bits for any count; an index outside
/// [0, x.rows) throws logic_error naming the edge). CUDA (float32): spmm_row_per_warp on ctx's
/// compute stream, the same summation order (bitwise on integer data; indices not checked).
/// @param values [a.num_edges]; @param x [a.num_cols, d]; @param y [a.num_rows, d], overwritten
/// @throws logic_error naming the operand on a space or shape mismatch, when y is x, or (host
///         backend) when indptr is not monotone or does not end at num_edges.
template <typename T>
void spmm(const exec_context& ctx, const csr_view& a, buffer_view<const T> values,
          tensor_view<const T> x, tensor_view<T> y);

/// x_grad += A^T y_grad, the backward of spmm, on views in ctx.space(): for s ascending and e in
/// edge order, x_grad[indices[e], :] += values[e] * y_grad[s, :]. Host: with ctx.threads() > 1
/// and enough work, the edges are grouped by source (a counting sort per call, O(edges + sources)
/// sequential) and the x_grad rows gathered in parallel, each adding its terms in ascending edge
/// order, the sequential order: bitwise equal for any thread count, no atomics. CUDA
/// (float32): a gather over the transposed CSR (build_transpose; workspace from ctx's pool,
/// stream-ordered), which adds each element's terms in the same order: bitwise equal.
/// @param y_grad [a.num_rows, d]; @param x_grad [a.num_cols, d], accumulated into
/// @throws logic_error as spmm, and on CUDA when a.num_rows > a.num_cols (the kernel takes a
///         block's shape: destinations are a prefix of the sources).
template <typename T>
void spmm_transpose_add(const exec_context& ctx, const csr_view& a, buffer_view<const T> values,
                        tensor_view<const T> y_grad, tensor_view<T> x_grad);

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
