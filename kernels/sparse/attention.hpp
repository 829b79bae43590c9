// The multi-head graph-attention ops of GAT (Velickovic et al., ICLR 2018, eqs. 1-5) over a CSR
// by destination (a block's adjacency, kernels/sparse/spmm.hpp): self-loop insertion, the
// attention projections a^T W h per head, the per-edge LeakyReLU scores, keyed attention dropout
// and the per-head weighted aggregation, each with its backward. The edge softmax between scores
// and aggregation is kernels/sparse/edge_softmax.hpp, run once per head.
//
// Layouts (H heads of F features each):
//   node arrays   row-major [n, H * F]: head k owns columns [k F, (k + 1) F)
//   node scores   row-major [n, H]
//   edge arrays   head-major [H * E]: (head k, edge e) at k * E + e, so head k's values are one
//                 contiguous [E] slice that edge_softmax takes as is
//
// One entry per op for every backend (docs/design.md section 2): operands in ctx.space()
// (logic_error naming the operand otherwise); the host reference (backends host and emulated; rows
// in ascending order, edges in CSR order, features ascending, so results are bitwise
// deterministic) or the CUDA kernel of attention_cuda.hpp on ctx's compute stream (float32 only;
// the same summation orders with explicit round-to-nearest intrinsics: bitwise equal to the
// host). Nothing synchronises; temporaries (the transposed CSR of the backward scatters) come
// from ctx's pool. Empty operands do nothing. Explicitly instantiated for float and double.
#pragma once

#include <cstdint>

#include "kernels/dense/elementwise.hpp"
#include "kernels/sparse/spmm.hpp"
#include "runtime/core/exec_context.hpp"
#include "runtime/core/memory.hpp"
#include "runtime/core/types.hpp"

namespace coopgnn {

/// A CSR with one self-loop in front of every row's edges (owning, in one memory space).
struct self_loop_csr {
  std::int64_t num_rows = 0;
  std::int64_t num_cols = 0;
  buffer<eid_t> indptr;          ///< [num_rows + 1]
  buffer<std::int64_t> indices;  ///< [E + num_rows]
  [[nodiscard]] csr_view view() const {
    return {num_rows,      num_cols,       static_cast<std::int64_t>(indices.size()),
            indptr.data(), indices.data(), indptr.space()};
  }
};

/// Row s of the result is (s, then the edges of row s of `c` in their order): indptr'[s] =
/// indptr[s] + s, indices'[indptr'[s]] = s. For a block (destinations are the first num_dst
/// sources) this is GAT's self-attention edge of every destination (section 2.1: "including i").
/// @param c  [rows, cols] CSR in ctx.space(), rows <= cols
/// @throws logic_error on a space mismatch or rows > cols. Allocates the result from ctx.
self_loop_csr add_self_loops(const exec_context& ctx, const csr_view& c);

/// Attention projection per head: out[i, k] = sum_{f < F} x[i, k F + f] * a[k F + f] (f
/// ascending), F = x.cols / heads (the a^T W h halves of eq. 1 for every node).
/// @param x [n, heads * F]; @param a [heads * F]; @param out [n, heads], overwritten
/// @throws logic_error when heads < 1, x.cols is not a multiple of heads, or a shape mismatches.
template <typename T>
void attention_project(const exec_context& ctx, tensor_view<const T> x, buffer_view<const T> a,
                       std::int64_t heads, tensor_view<T> out);

/// Backward of attention_project for g = dL/dout [n, heads]:
///   grad_x[i, k F + f] += g[i, k] * a[k F + f]          (skipped when grad_x.data is null)
///   grad_a[k F + f]    += sum_i g[i, k] * x[i, k F + f] (i ascending, from zero, then added)
/// @throws logic_error as attention_project and when grad_x/grad_a shapes differ from x/a.
template <typename T>
void attention_project_backward(const exec_context& ctx, tensor_view<const T> x,
                                buffer_view<const T> a, tensor_view<const T> g,
                                tensor_view<T> grad_x, buffer_view<T> grad_a);

/// Per-edge LeakyReLU scores (eq. 1 with the concatenation split into two dot products): for row
/// s, edge e of s with source t = indices[e], head k,
///   z = el[s, k] + er[t, k];  scores[k E + e] = z > 0 ? z : slope * z,
/// except that, with mask_self_loops, an edge t == s that is not the first of its row gets -inf
/// (weight 0 after the softmax: a graph self-loop next to the one add_self_loops put first).
/// @param c  [rows, cols] CSR; @param el [>= rows, H]; @param er [cols, H]; @param slope >= 0
/// @param scores [H * E], overwritten
/// @throws logic_error on a shape or space mismatch, el/er widths that differ, or slope < 0.
template <typename T>
void attention_scores(const exec_context& ctx, const csr_view& c, tensor_view<const T> el,
                      tensor_view<const T> er, T slope, bool mask_self_loops,
                      buffer_view<T> scores);

/// Backward of attention_scores for grad = dL/dscores [H * E]: gz = grad * (scores > 0 ? 1 :
/// slope) (the LeakyReLU derivative from its output, valid for slope >= 0; a masked edge has grad
/// 0 from the softmax), then
///   grad_el[s, k] += sum_{e of s} gz[k E + e]                 (edge order)
///   grad_er[t, k] += sum_{e: indices[e] == t} gz[k E + e]     (ascending e)
/// @param grad_el [>= rows, H] accumulated; @param grad_er [cols, H] accumulated
/// @throws logic_error on a shape or space mismatch.
template <typename T>
void attention_scores_backward(const exec_context& ctx, const csr_view& c,
                               buffer_view<const T> scores, buffer_view<const T> grad, T slope,
                               tensor_view<T> grad_el, tensor_view<T> grad_er);

/// Keyed attention dropout on normalised coefficients (section 3.3: "dropout ... applied to the
/// normalized attention coefficients"): for row s, edge e (source t), head k, with
///   w = rng::draw4(rng::make_stream(key.run_seed, purpose::attention_dropout,
///                                   64 * key.layer_index + k / 4),
///                  src_ids[s], uint32(src_ids[t]), key.batch),
/// keep[k E + e] = to_unit(w[k % 4]) >= p and alpha[k E + e] = keep ? alpha * scale : 0, in
/// place. The mask is a pure function of (global destination, global source, head, batch), so
/// every PE and backend drops the same edges (docs/design.md section 4.1). Backward:
/// dropout_backward(g viewed as [H, E], keep, scale).
/// @param src_ids [cols] global ids (destinations first); @param p in [0, 1); scale = 1 / (1 - p)
/// @param alpha [H * E] in place; @param keep [H * E] uint8, overwritten
/// @throws logic_error on a size or space mismatch, p outside [0, 1) or more than 256 heads.
template <typename T>
void attention_dropout(const exec_context& ctx, const csr_view& c, buffer_view<const vid_t> src_ids,
                       std::int64_t heads, const dropout_key& key, float p, T scale,
                       buffer_view<T> alpha, buffer_view<std::uint8_t> keep);

/// Per-head weighted aggregation (eq. 4 before the nonlinearity): for row s, head k, f < F,
///   y[s, k F + f] = sum_{e of s} alpha[k E + e] * x[indices[e], k F + f]
/// from zero in edge order (a row without edges gets zeros).
/// @param alpha [H * E]; @param x [cols, H F]; @param y [rows, H F], overwritten, not x
/// @throws logic_error on a shape or space mismatch.
template <typename T>
void attention_aggregate(const exec_context& ctx, const csr_view& c, buffer_view<const T> alpha,
                         tensor_view<const T> x, std::int64_t heads, tensor_view<T> y);

/// Backward of attention_aggregate for g = dL/dy [rows, H F]:
///   grad_alpha[k E + e] = sum_{f} g[s, k F + f] * x[t, k F + f]    (f ascending; overwritten)
///   grad_x[t, k F + f] += sum_{e: indices[e] == t} alpha[k E + e] * g[s, k F + f]  (ascending e;
///                         skipped when grad_x.data is null)
/// @throws logic_error on a shape or space mismatch.
template <typename T>
void attention_aggregate_backward(const exec_context& ctx, const csr_view& c,
                                  buffer_view<const T> alpha, tensor_view<const T> x,
                                  tensor_view<const T> g, std::int64_t heads,
                                  buffer_view<T> grad_alpha, tensor_view<T> grad_x);

/// ELU (Clevert et al., ICLR 2016; GAT's hidden nonlinearity, section 3.3), in place:
/// x = x > 0 ? x : exp(x) - 1.
template <typename T>
void elu_inplace(const exec_context& ctx, tensor_view<T> x);

/// Backward of elu_inplace from its output y: grad_in = y > 0 ? grad_out : grad_out * (y + 1)
/// (exp(x) = y + 1). grad_in may be exactly grad_out.
template <typename T>
void elu_backward(const exec_context& ctx, tensor_view<const T> grad_out, tensor_view<const T> y,
                  tensor_view<T> grad_in);

}  // namespace coopgnn
