// CUDA versions of the graph-attention ops (host references and contracts:
// kernels/sparse/attention.hpp). Includable from plain C++ and nvcc: only the CUDA runtime API and
// fixed-width integers, no fmt. Raw float32 device pointers, 64-bit indices, a stream; nothing
// allocates, synchronises or keeps state; bad sizes or null pointers throw logic_error before any
// launch, a failed launch throws cuda_error. Empty operands launch nothing. Every reduction runs
// in the host reference's order with explicit round-to-nearest intrinsics (no FMA), so results
// are bitwise equal to the host (elu: within a relative 1e-6, expf). Index values are not checked
// (block invariants).
#pragma once

#ifdef COOPGNN_WITH_CUDA

#include <cuda_runtime_api.h>

#include <cstdint>

namespace coopgnn::cuda {

/// indptr2[s] = indptr[s] + s (s <= rows); indices2[indptr2[s]] = s, then row s's edges.
/// One warp per row (add_self_loops_row_per_warp).
void add_self_loops(const std::int64_t* indptr, const std::int64_t* indices, std::int64_t rows,
                    std::int64_t* indptr2, std::int64_t* indices2, cudaStream_t stream);

/// out[i, k] = sum_f x[i, kF + f] a[kF + f]: one thread per (i, k).
void attention_project(const float* x, const float* a, std::int64_t n, std::int64_t heads,
                       std::int64_t f, float* out, cudaStream_t stream);

/// grad_x[i, j] += g[i, j / F] a[j] (grad_x may be null) and grad_a[j] += sum_i g[i, j / F]
/// x[i, j] (i ascending): one thread per element, one thread per column.
void attention_project_backward(const float* x, const float* a, const float* g, std::int64_t n,
                                std::int64_t heads, std::int64_t f, float* grad_x, float* grad_a,
                                cudaStream_t stream);

/// scores[k E + e] = leaky(el[s, k] + er[t, k]) (-inf for masked later self-loops): one warp per
/// row, lanes over (edge, head) pairs.
void attention_scores(const std::int64_t* indptr, const std::int64_t* indices, std::int64_t rows,
                      std::int64_t num_edges, const float* el, const float* er, std::int64_t heads,
                      float slope, bool mask_self_loops, float* scores, cudaStream_t stream);

/// grad_el[s, k] += sum_{e of s} gz (thread per (s, k)); grad_er[t, k] += sum over the
/// transposed CSR (t_indptr, t_edges from group_by_value; thread per (t, k), ascending e).
void attention_scores_backward(const std::int64_t* indptr, std::int64_t rows, std::int64_t cols,
                               std::int64_t num_edges, const std::int64_t* t_indptr,
                               const std::int64_t* t_edges, const float* scores, const float* grad,
                               std::int64_t heads, float slope, float* grad_el, float* grad_er,
                               cudaStream_t stream);

/// Keyed attention dropout (attention.hpp): one thread per (edge, head quad).
void attention_dropout(const std::int64_t* indptr, const std::int64_t* indices, std::int64_t rows,
                       std::int64_t num_edges, const std::int64_t* src_ids, std::int64_t heads,
                       std::uint64_t run_seed, std::uint32_t batch, std::uint32_t layer_index,
                       float p, float scale, float* alpha, std::uint8_t* keep, cudaStream_t stream);

/// y[s, j] = sum_{e of s} alpha[(j / F) E + e] x[t, j]: one warp per row, lanes over columns.
void attention_aggregate(const std::int64_t* indptr, const std::int64_t* indices, std::int64_t rows,
                         std::int64_t num_edges, const float* alpha, const float* x,
                         std::int64_t heads, std::int64_t f, float* y, cudaStream_t stream);

/// grad_alpha[k E + e] = sum_f g[s, kF + f] x[t, kF + f] (one warp per row, lanes over (edge,
/// head)); grad_x[t, j] += over the transposed CSR (one warp per source, lanes over columns;
/// skipped when grad_x is null).
void attention_aggregate_backward(const std::int64_t* indptr, const std::int64_t* indices,
                                  std::int64_t rows, std::int64_t cols, std::int64_t num_edges,
                                  const std::int64_t* t_indptr, const std::int64_t* t_edges,
                                  const float* alpha, const float* x, const float* g,
                                  std::int64_t heads, std::int64_t f, float* grad_alpha,
                                  float* grad_x, cudaStream_t stream);

/// x = x > 0 ? x : expf(x) - 1 in place; grad_in = y > 0 ? grad_out : grad_out (y + 1).
void elu_inplace(float* x, std::int64_t n, cudaStream_t stream);
void elu_backward(const float* grad_out, const float* y, std::int64_t n, float* grad_in,
                  cudaStream_t stream);

}  // namespace coopgnn::cuda

#endif  // COOPGNN_WITH_CUDA
