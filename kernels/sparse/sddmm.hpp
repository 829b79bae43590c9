// Sampled dense-dense matrix product over a block: one dot product per edge, the attention
// scores of GAT-style layers. Host reference (docs/design.md sections 1 and 2).
//
// The sparse pattern is the block's CSR by destination (kernels/sample/block.hpp). Sums run over
// the columns in ascending order, so results are bitwise deterministic. The backward needs no
// kernel of its own: with g = dL/dout, dL/da = A_g x (spmm with values g) and dL/dx += A_g^T a
// (spmm_transpose_add with values g), both in kernels/sparse/spmm.hpp.
#pragma once

#include <cstdint>
#include <span>

#include "kernels/sample/block.hpp"
#include "kernels/sparse/spmm.hpp"
#include "runtime/core/matrix.hpp"
#include "runtime/core/types.hpp"

namespace coopgnn {

/// out[e] = scale[e] * sum_{j < d} a[s, j] * x[indices[e], j] for every destination
/// s < num_dst and edge e in [indptr[s], indptr[s + 1]); the columns are summed from zero in
/// ascending j; scale[e] = 1 when edge_scale is empty.
///
/// @param indptr      [num_dst + 1] edge offsets: indptr[0] == 0, non-decreasing,
///                    indptr[num_dst] == indices.size()
/// @param indices     [num_edges] source rows, each in [0, x.rows())
/// @param a           destination-side rows: [num_dst, d], or [num_src, d] whose first num_dst
///                    rows are the destinations (a block's source matrix, destinations first)
/// @param x           [num_src, d] source-side rows
/// @param edge_scale  [num_edges] per-edge factor (e.g. the block's weights), or empty for 1
/// @param out         [num_edges], overwritten (host memory, dtype T)
/// @throws logic_error naming the argument when indptr is malformed, a.cols() != x.cols(),
///         a.rows() is below num_dst, out or a non-empty edge_scale does not have num_edges
///         entries, or an index is outside [0, x.rows()).
/// Aliasing: out must not overlap a, x or edge_scale. Empty: num_edges == 0 writes nothing;
/// d == 0 writes scale[e] * 0. Deterministic. Explicitly instantiated for float and double.
template <typename T>
void sddmm(std::span<const eid_t> indptr, std::span<const std::int64_t> indices, const matrix<T>& a,
           const matrix<T>& x, std::span<const T> edge_scale, std::span<T> out);

/// As the span overload on a block: indptr/indices from b, x [b.num_src(), d], and, when
/// scale_by_weights, edge_scale = b.weights (converted to T).
/// @throws logic_error as the span overload, and when b.indptr.size() != b.num_dst + 1 or
///         x.rows() != b.num_src().
template <typename T>
void sddmm(const block& b, const matrix<T>& a, const matrix<T>& x, bool scale_by_weights,
           std::span<T> out);

/// The SDDMM entry of every backend on views in ctx.space(): out[e] = scale[e] * <a[s], x[t]>
/// as above, over the CSR `c` (rows = destinations). Host and emulated: the reference loop.
/// CUDA (float32): sddmm_row_per_warp, within a relative 1e-5 (exact on integer data).
/// @param a [>= c.num_rows, d]; @param x [c.num_cols, d]; @param edge_scale [c.num_edges] or
///        empty for 1; @param out [c.num_edges], overwritten
/// @throws logic_error naming the operand on a space or shape mismatch, and on CUDA when
///         c.num_rows > c.num_cols (the kernel takes a block's shape).
template <typename T>
void sddmm(const exec_context& ctx, const csr_view& c, tensor_view<const T> a,
           tensor_view<const T> x, buffer_view<const T> edge_scale, buffer_view<T> out);

}  // namespace coopgnn
