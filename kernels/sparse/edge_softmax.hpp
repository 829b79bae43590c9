// Softmax of edge scores over each destination's incoming edges (the attention normalisation of
// GAT, Velickovic et al., ICLR 2018, eq. 2), forward and backward. Host reference
// (docs/design.md sections 1 and 2).
//
// Edges are grouped by destination through a CSR offset array (a block's indptr). Per destination
// the sums run in edge order, so results are bitwise deterministic.
#pragma once

#include <cstdint>
#include <span>

#include "kernels/sparse/spmm.hpp"
#include "runtime/core/types.hpp"

namespace coopgnn {

/// For every destination s < num_dst, with E_s = [indptr[s], indptr[s + 1]) and
/// m_s = max_{e in E_s} scores[e] (subtracted so that exp never overflows):
///   out[e] = exp(scores[e] - m_s) / sum_{e' in E_s} exp(scores[e'] - m_s).
/// A destination without edges has nothing to write; each destination with edges sums to 1.
///
/// @param indptr  [num_dst + 1] edge offsets: indptr[0] == 0, non-decreasing,
///                indptr[num_dst] == num_edges
/// @param scores  [num_edges] unnormalised scores (host, dtype T); +-inf and NaN propagate as in
///                the formula (a destination whose scores are all -inf gets NaN)
/// @param out     [num_edges], overwritten
/// @throws logic_error naming the argument when indptr is malformed or scores/out do not have
///         indptr.back() entries.
/// Aliasing: out may be exactly scores (in place); no other overlap. Empty: num_edges == 0 writes
/// nothing. Deterministic. Explicitly instantiated for float and double.
template <typename T>
void edge_softmax(std::span<const eid_t> indptr, std::span<const T> scores, std::span<T> out);

/// Backward of edge_softmax: with y its output and g = dL/dy, for every destination s and
/// e in E_s:
///   grad_scores[e] = y[e] * (g[e] - sum_{e' in E_s} y[e'] * g[e']).
///
/// @param indptr       as edge_softmax
/// @param y            [num_edges] edge_softmax's output
/// @param grad_y       [num_edges] dL/dy
/// @param grad_scores  [num_edges] dL/dscores, overwritten
/// @throws logic_error naming the argument when indptr is malformed or an array does not have
///         indptr.back() entries.
/// Aliasing: grad_scores may be exactly grad_y (in place); no other overlap. Empty: nothing to
/// write. Deterministic (sums in edge order). Explicitly instantiated for float and double.
template <typename T>
void edge_softmax_backward(std::span<const eid_t> indptr, std::span<const T> y,
                           std::span<const T> grad_y, std::span<T> grad_scores);

/// The edge-softmax entries of every backend on views in ctx.space(), over the CSR `c` (rows =
/// destinations): the host references above on the host and emulated backends, the CUDA kernels
/// (edge_softmax_row_per_warp, float32, within a relative 1e-5) on the CUDA backend.
/// @param scores, out [c.num_edges] (out may be scores)
/// @throws logic_error naming the operand on a space or size mismatch.
template <typename T>
void edge_softmax(const exec_context& ctx, const csr_view& c, buffer_view<const T> scores,
                  buffer_view<T> out);
/// grad_scores[e] = y[e] * (grad_y[e] - sum_{e' of dst(e)} y[e'] grad_y[e']) on every backend.
template <typename T>
void edge_softmax_backward(const exec_context& ctx, const csr_view& c, buffer_view<const T> y,
                           buffer_view<const T> grad_y, buffer_view<T> grad_scores);

}  // namespace coopgnn
