// CUDA graph-attention ops (declared in attention_cuda.hpp; host references and contracts in
// kernels/sparse/attention.hpp). The additions and products use round-to-nearest intrinsics in
// the host's order, so nvcc cannot contract them into FMAs: those steps give the host's bits.
// The exponential does not: CUDA's expf (elu_per_thread) may differ from glibc's in the last
// bits, so the ELU forward and whatever follows it match the host within the parity harness's
// relative tolerance for the GAT ops (tests/common/parity.cpp), not bitwise.
#include <cmath>
#include <cstdint>

#include "kernels/cuda_check.cuh"
#include "kernels/cuda_launch.cuh"
#include "kernels/sparse/attention_cuda.hpp"
#include "runtime/core/cuda_launch.cuh"
#include "runtime/core/nvtx.hpp"
#include "runtime/core/rng.hpp"

namespace coopgnn::cuda {
namespace detail {
namespace {

/// Largest s in [0, n) with indptr[s] <= e: the row of edge e.
__device__ inline std::int64_t row_of(const std::int64_t* indptr, std::int64_t n, std::int64_t e) {
  std::int64_t lo = 0;
  std::int64_t hi = n;
  while (hi - lo > 1) {
    std::int64_t const mid = lo + (hi - lo) / 2;
    if (indptr[mid] <= e) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  return lo;
}

__global__ void add_self_loops_row_per_warp(const std::int64_t* __restrict__ indptr,
                                            const std::int64_t* __restrict__ indices,
                                            std::int64_t rows, std::int64_t* __restrict__ ip2,
                                            std::int64_t* __restrict__ ix2) {
  int const lane = static_cast<int>(threadIdx.x) % warp_size;
  if (global_warp() == 0 && lane == 0) ip2[0] = 0;
  for (std::int64_t s = global_warp(); s < rows; s += warp_count()) {
    std::int64_t const e0 = indptr[s];
    std::int64_t const e1 = indptr[s + 1];
    if (lane == 0) {
      ix2[e0 + s] = s;
      ip2[s + 1] = e1 + s + 1;
    }
    for (std::int64_t e = e0 + lane; e < e1; e += warp_size) ix2[e + s + 1] = indices[e];
  }
}

__global__ void project_per_thread(const float* __restrict__ x, const float* __restrict__ a,
                                   std::int64_t n, std::int64_t heads, std::int64_t f,
                                   float* __restrict__ out) {
  std::int64_t const cols = heads * f;
  for (std::int64_t t = global_thread(); t < n * heads; t += thread_count()) {
    std::int64_t const i = t / heads;
    std::int64_t const k = t % heads;
    float acc = 0.0f;
    for (std::int64_t j = k * f; j < (k + 1) * f; ++j) {
      acc = __fadd_rn(acc, __fmul_rn(x[i * cols + j], a[j]));
    }
    out[t] = acc;
  }
}

__global__ void project_grad_x_per_thread(const float* __restrict__ a, const float* __restrict__ g,
                                          std::int64_t n, std::int64_t heads, std::int64_t f,
                                          float* __restrict__ grad_x) {
  std::int64_t const cols = heads * f;
  for (std::int64_t t = global_thread(); t < n * cols; t += thread_count()) {
    std::int64_t const i = t / cols;
    std::int64_t const j = t % cols;
    grad_x[t] = __fadd_rn(grad_x[t], __fmul_rn(g[i * heads + j / f], a[j]));
  }
}

__global__ void project_grad_a_per_column(const float* __restrict__ x, const float* __restrict__ g,
                                          std::int64_t n, std::int64_t heads, std::int64_t f,
                                          float* __restrict__ grad_a) {
  std::int64_t const cols = heads * f;
  for (std::int64_t j = global_thread(); j < cols; j += thread_count()) {
    float acc = 0.0f;
    for (std::int64_t i = 0; i < n; ++i) {
      acc = __fadd_rn(acc, __fmul_rn(g[i * heads + j / f], x[i * cols + j]));
    }
    grad_a[j] = __fadd_rn(grad_a[j], acc);
  }
}

__global__ void scores_row_per_warp(const std::int64_t* __restrict__ indptr,
                                    const std::int64_t* __restrict__ indices, std::int64_t rows,
                                    std::int64_t ne, const float* __restrict__ el,
                                    const float* __restrict__ er, std::int64_t heads, float slope,
                                    bool mask, float* __restrict__ scores) {
  int const lane = static_cast<int>(threadIdx.x) % warp_size;
  for (std::int64_t s = global_warp(); s < rows; s += warp_count()) {
    std::int64_t const e0 = indptr[s];
    std::int64_t const n = (indptr[s + 1] - e0) * heads;
    for (std::int64_t idx = lane; idx < n; idx += warp_size) {
      std::int64_t const e = e0 + idx / heads;
      std::int64_t const k = idx % heads;
      std::int64_t const t = indices[e];
      float const z = __fadd_rn(el[s * heads + k], er[t * heads + k]);
      bool const masked = mask && t == s && e != e0;
      scores[k * ne + e] = masked ? -INFINITY : (z > 0.0f ? z : __fmul_rn(slope, z));
    }
  }
}

__device__ inline float leaky_grad(const float* scores, const float* grad, std::int64_t i,
                                   float slope) {
  float const g = grad[i];
  return scores[i] > 0.0f ? g : __fmul_rn(g, slope);
}

__global__ void scores_grad_el_per_thread(const std::int64_t* __restrict__ indptr,
                                          std::int64_t rows, std::int64_t ne,
                                          const float* __restrict__ scores,
                                          const float* __restrict__ grad, std::int64_t heads,
                                          float slope, float* __restrict__ grad_el) {
  for (std::int64_t t = global_thread(); t < rows * heads; t += thread_count()) {
    std::int64_t const s = t / heads;
    std::int64_t const k = t % heads;
    float acc = 0.0f;
    for (std::int64_t e = indptr[s]; e < indptr[s + 1]; ++e) {
      acc = __fadd_rn(acc, leaky_grad(scores, grad, k * ne + e, slope));
    }
    grad_el[t] = __fadd_rn(grad_el[t], acc);
  }
}

__global__ void scores_grad_er_per_thread(const std::int64_t* __restrict__ t_indptr,
                                          const std::int64_t* __restrict__ t_edges,
                                          std::int64_t cols, std::int64_t ne,
                                          const float* __restrict__ scores,
                                          const float* __restrict__ grad, std::int64_t heads,
                                          float slope, float* __restrict__ grad_er) {
  for (std::int64_t t = global_thread(); t < cols * heads; t += thread_count()) {
    std::int64_t const src = t / heads;
    std::int64_t const k = t % heads;
    float acc = 0.0f;
    for (std::int64_t q = t_indptr[src]; q < t_indptr[src + 1]; ++q) {
      acc = __fadd_rn(acc, leaky_grad(scores, grad, k * ne + t_edges[q], slope));
    }
    grad_er[t] = __fadd_rn(grad_er[t], acc);
  }
}

__global__ void dropout_edge_quad_per_thread(
    const std::int64_t* __restrict__ indptr, const std::int64_t* __restrict__ indices,
    std::int64_t rows, std::int64_t ne, const std::int64_t* __restrict__ src_ids,
    std::int64_t heads, std::uint64_t run_seed, std::uint32_t batch, std::uint32_t layer_index,
    float p, float scale, float* __restrict__ alpha, std::uint8_t* __restrict__ keep) {
  std::int64_t const quads = (heads + 3) / 4;
  for (std::int64_t t = global_thread(); t < ne * quads; t += thread_count()) {
    std::int64_t const e = t / quads;
    std::int64_t const q = t % quads;
    std::int64_t const s = row_of(indptr, rows, e);
    rng::stream const st = rng::make_stream(run_seed, rng::purpose::attention_dropout,
                                            64 * layer_index + static_cast<std::uint32_t>(q));
    auto const w = rng::draw4(st, static_cast<std::uint64_t>(src_ids[s]),
                              static_cast<std::uint32_t>(src_ids[indices[e]]), batch);
    for (std::int64_t k = 4 * q; k < 4 * q + 4 && k < heads; ++k) {
      bool const kept = rng::to_unit(w[static_cast<int>(k - 4 * q)]) >= p;
      keep[k * ne + e] = kept ? 1 : 0;
      alpha[k * ne + e] = kept ? __fmul_rn(alpha[k * ne + e], scale) : 0.0f;
    }
  }
}

__global__ void aggregate_row_per_warp(const std::int64_t* __restrict__ indptr,
                                       const std::int64_t* __restrict__ indices, std::int64_t rows,
                                       std::int64_t ne, const float* __restrict__ alpha,
                                       const float* __restrict__ x, std::int64_t heads,
                                       std::int64_t f, float* __restrict__ y) {
  int const lane = static_cast<int>(threadIdx.x) % warp_size;
  std::int64_t const cols = heads * f;
  for (std::int64_t s = global_warp(); s < rows; s += warp_count()) {
    for (std::int64_t j = lane; j < cols; j += warp_size) {
      std::int64_t const k = j / f;
      float acc = 0.0f;
      for (std::int64_t e = indptr[s]; e < indptr[s + 1]; ++e) {
        acc = __fadd_rn(acc, __fmul_rn(alpha[k * ne + e], x[indices[e] * cols + j]));
      }
      y[s * cols + j] = acc;
    }
  }
}

__global__ void aggregate_grad_alpha_row_per_warp(const std::int64_t* __restrict__ indptr,
                                                  const std::int64_t* __restrict__ indices,
                                                  std::int64_t rows, std::int64_t ne,
                                                  const float* __restrict__ x,
                                                  const float* __restrict__ g, std::int64_t heads,
                                                  std::int64_t f, float* __restrict__ grad_alpha) {
  int const lane = static_cast<int>(threadIdx.x) % warp_size;
  std::int64_t const cols = heads * f;
  for (std::int64_t s = global_warp(); s < rows; s += warp_count()) {
    std::int64_t const e0 = indptr[s];
    std::int64_t const n = (indptr[s + 1] - e0) * heads;
    for (std::int64_t idx = lane; idx < n; idx += warp_size) {
      std::int64_t const e = e0 + idx / heads;
      std::int64_t const k = idx % heads;
      const float* xr = x + indices[e] * cols;
      const float* gr = g + s * cols;
      float acc = 0.0f;
      for (std::int64_t j = k * f; j < (k + 1) * f; ++j)
        acc = __fadd_rn(acc, __fmul_rn(gr[j], xr[j]));
      grad_alpha[k * ne + e] = acc;
    }
  }
}

__global__ void aggregate_grad_x_row_per_warp(
    const std::int64_t* __restrict__ indptr, std::int64_t rows, std::int64_t cols_src,
    std::int64_t ne, const std::int64_t* __restrict__ t_indptr,
    const std::int64_t* __restrict__ t_edges, const float* __restrict__ alpha,
    const float* __restrict__ g, std::int64_t heads, std::int64_t f, float* __restrict__ grad_x) {
  int const lane = static_cast<int>(threadIdx.x) % warp_size;
  std::int64_t const cols = heads * f;
  for (std::int64_t t = global_warp(); t < cols_src; t += warp_count()) {
    std::int64_t const q0 = t_indptr[t];
    std::int64_t const q1 = t_indptr[t + 1];
    if (q0 == q1) continue;
    for (std::int64_t j = lane; j < cols; j += warp_size) {
      std::int64_t const k = j / f;
      float acc = 0.0f;
      for (std::int64_t q = q0; q < q1; ++q) {
        std::int64_t const e = t_edges[q];
        std::int64_t const s = row_of(indptr, rows, e);
        acc = __fadd_rn(acc, __fmul_rn(alpha[k * ne + e], g[s * cols + j]));
      }
      grad_x[t * cols + j] = __fadd_rn(grad_x[t * cols + j], acc);
    }
  }
}

__global__ void elu_per_thread(float* __restrict__ x, std::int64_t n) {
  for (std::int64_t i = global_thread(); i < n; i += thread_count()) {
    float const v = x[i];
    x[i] = v > 0.0f ? v : __fsub_rn(expf(v), 1.0f);
  }
}

__global__ void elu_backward_per_thread(const float* grad_out, const float* __restrict__ y,
                                        std::int64_t n, float* grad_in) {
  for (std::int64_t i = global_thread(); i < n; i += thread_count()) {
    float const v = y[i];
    float const g = grad_out[i];
    grad_in[i] = v > 0.0f ? g : __fmul_rn(g, __fadd_rn(v, 1.0f));
  }
}

void check_sizes(const char* fn, std::int64_t rows, std::int64_t num_edges, std::int64_t heads) {
  COOPGNN_CU_EXPECTS(rows >= 0 && num_edges >= 0 && heads >= 1, fn, ": bad sizes rows=", rows,
                     ", num_edges=", num_edges, ", heads=", heads);
}

}  // namespace
}  // namespace detail

void add_self_loops(const std::int64_t* indptr, const std::int64_t* indices, std::int64_t rows,
                    std::int64_t* indptr2, std::int64_t* indices2, cudaStream_t stream) {
  COOPGNN_NVTX_RANGE("sparse/add_self_loops");
  constexpr const char* fn = "cuda::add_self_loops";
  COOPGNN_CU_EXPECTS(rows >= 0, fn, ": negative rows=", rows);
  COOPGNN_CU_EXPECTS(indptr != nullptr && indptr2 != nullptr, fn, ": an indptr is null");
  if (rows == 0) {
    COOPGNN_CUDA_CHECK(cudaMemsetAsync(indptr2, 0, sizeof(std::int64_t), stream));
    return;
  }
  COOPGNN_CU_EXPECTS(indices2 != nullptr, fn, ": indices2 is null");
  COOPGNN_LAUNCH(detail::add_self_loops_row_per_warp, detail::grid_for_warps(rows),
                 detail::block_threads, 0, stream, indptr, indices, rows, indptr2, indices2);
}

void attention_project(const float* x, const float* a, std::int64_t n, std::int64_t heads,
                       std::int64_t f, float* out, cudaStream_t stream) {
  COOPGNN_NVTX_RANGE("sparse/attention_project");
  constexpr const char* fn = "cuda::attention_project";
  detail::check_sizes(fn, n, 0, heads);
  if (n == 0) return;
  COOPGNN_CU_EXPECTS(x != nullptr && a != nullptr && out != nullptr, fn, ": a pointer is null");
  COOPGNN_LAUNCH(detail::project_per_thread, detail::grid_for_threads(n * heads),
                 detail::block_threads, 0, stream, x, a, n, heads, f, out);
}

void attention_project_backward(const float* x, const float* a, const float* g, std::int64_t n,
                                std::int64_t heads, std::int64_t f, float* grad_x, float* grad_a,
                                cudaStream_t stream) {
  COOPGNN_NVTX_RANGE("sparse/attention_project_backward");
  constexpr const char* fn = "cuda::attention_project_backward";
  detail::check_sizes(fn, n, 0, heads);
  if (n == 0 || f == 0) return;
  COOPGNN_CU_EXPECTS(x != nullptr && a != nullptr && g != nullptr && grad_a != nullptr, fn,
                     ": a pointer is null");
  if (grad_x != nullptr) {
    COOPGNN_LAUNCH(detail::project_grad_x_per_thread, detail::grid_for_threads(n * heads * f),
                   detail::block_threads, 0, stream, a, g, n, heads, f, grad_x);
  }
  COOPGNN_LAUNCH(detail::project_grad_a_per_column, detail::grid_for_threads(heads * f),
                 detail::block_threads, 0, stream, x, g, n, heads, f, grad_a);
}

void attention_scores(const std::int64_t* indptr, const std::int64_t* indices, std::int64_t rows,
                      std::int64_t num_edges, const float* el, const float* er, std::int64_t heads,
                      float slope, bool mask_self_loops, float* scores, cudaStream_t stream) {
  COOPGNN_NVTX_RANGE("sparse/attention_scores");
  constexpr const char* fn = "cuda::attention_scores";
  detail::check_sizes(fn, rows, num_edges, heads);
  if (num_edges == 0) return;
  COOPGNN_CU_EXPECTS(indptr != nullptr && indices != nullptr && el != nullptr && er != nullptr &&
                         scores != nullptr,
                     fn, ": a pointer is null");
  COOPGNN_LAUNCH(detail::scores_row_per_warp, detail::grid_for_warps(rows), detail::block_threads,
                 0, stream, indptr, indices, rows, num_edges, el, er, heads, slope, mask_self_loops,
                 scores);
}

void attention_scores_backward(const std::int64_t* indptr, std::int64_t rows, std::int64_t cols,
                               std::int64_t num_edges, const std::int64_t* t_indptr,
                               const std::int64_t* t_edges, const float* scores, const float* grad,
                               std::int64_t heads, float slope, float* grad_el, float* grad_er,
                               cudaStream_t stream) {
  COOPGNN_NVTX_RANGE("sparse/attention_scores_backward");
  constexpr const char* fn = "cuda::attention_scores_backward";
  detail::check_sizes(fn, rows, num_edges, heads);
  if (num_edges == 0) return;
  COOPGNN_CU_EXPECTS(indptr != nullptr && t_indptr != nullptr && t_edges != nullptr &&
                         scores != nullptr && grad != nullptr && grad_el != nullptr &&
                         grad_er != nullptr,
                     fn, ": a pointer is null");
  COOPGNN_LAUNCH(detail::scores_grad_el_per_thread, detail::grid_for_threads(rows * heads),
                 detail::block_threads, 0, stream, indptr, rows, num_edges, scores, grad, heads,
                 slope, grad_el);
  COOPGNN_LAUNCH(detail::scores_grad_er_per_thread, detail::grid_for_threads(cols * heads),
                 detail::block_threads, 0, stream, t_indptr, t_edges, cols, num_edges, scores, grad,
                 heads, slope, grad_er);
}

void attention_dropout(const std::int64_t* indptr, const std::int64_t* indices, std::int64_t rows,
                       std::int64_t num_edges, const std::int64_t* src_ids, std::int64_t heads,
                       std::uint64_t run_seed, std::uint32_t batch, std::uint32_t layer_index,
                       float p, float scale, float* alpha, std::uint8_t* keep,
                       cudaStream_t stream) {
  COOPGNN_NVTX_RANGE("sparse/attention_dropout");
  constexpr const char* fn = "cuda::attention_dropout";
  detail::check_sizes(fn, rows, num_edges, heads);
  COOPGNN_CU_EXPECTS(p >= 0.0f && p < 1.0f, fn, ": p = ", p, " is outside [0, 1)");
  if (num_edges == 0) return;
  COOPGNN_CU_EXPECTS(indptr != nullptr && indices != nullptr && src_ids != nullptr &&
                         alpha != nullptr && keep != nullptr,
                     fn, ": a pointer is null");
  std::int64_t const quads = (heads + 3) / 4;
  COOPGNN_LAUNCH(detail::dropout_edge_quad_per_thread, detail::grid_for_threads(num_edges * quads),
                 detail::block_threads, 0, stream, indptr, indices, rows, num_edges, src_ids, heads,
                 run_seed, batch, layer_index, p, scale, alpha, keep);
}

void attention_aggregate(const std::int64_t* indptr, const std::int64_t* indices, std::int64_t rows,
                         std::int64_t num_edges, const float* alpha, const float* x,
                         std::int64_t heads, std::int64_t f, float* y, cudaStream_t stream) {
  COOPGNN_NVTX_RANGE("sparse/attention_aggregate");
  constexpr const char* fn = "cuda::attention_aggregate";
  detail::check_sizes(fn, rows, num_edges, heads);
  if (rows == 0 || f == 0) return;
  COOPGNN_CU_EXPECTS(indptr != nullptr && y != nullptr, fn, ": indptr or y is null");
  COOPGNN_CU_EXPECTS(num_edges == 0 || (indices != nullptr && alpha != nullptr && x != nullptr), fn,
                     ": an edge or source operand is null");
  COOPGNN_LAUNCH(detail::aggregate_row_per_warp, detail::grid_for_warps(rows),
                 detail::block_threads, 0, stream, indptr, indices, rows, num_edges, alpha, x,
                 heads, f, y);
}

void attention_aggregate_backward(const std::int64_t* indptr, const std::int64_t* indices,
                                  std::int64_t rows, std::int64_t cols, std::int64_t num_edges,
                                  const std::int64_t* t_indptr, const std::int64_t* t_edges,
                                  const float* alpha, const float* x, const float* g,
                                  std::int64_t heads, std::int64_t f, float* grad_alpha,
                                  float* grad_x, cudaStream_t stream) {
  COOPGNN_NVTX_RANGE("sparse/attention_aggregate_backward");
  constexpr const char* fn = "cuda::attention_aggregate_backward";
  detail::check_sizes(fn, rows, num_edges, heads);
  if (num_edges == 0) return;
  COOPGNN_CU_EXPECTS(indptr != nullptr && indices != nullptr && alpha != nullptr && x != nullptr &&
                         g != nullptr && grad_alpha != nullptr,
                     fn, ": a pointer is null");
  COOPGNN_LAUNCH(detail::aggregate_grad_alpha_row_per_warp, detail::grid_for_warps(rows),
                 detail::block_threads, 0, stream, indptr, indices, rows, num_edges, x, g, heads, f,
                 grad_alpha);
  if (grad_x == nullptr || f == 0) return;
  COOPGNN_CU_EXPECTS(t_indptr != nullptr && t_edges != nullptr, fn, ": the transposed CSR is null");
  COOPGNN_LAUNCH(detail::aggregate_grad_x_row_per_warp, detail::grid_for_warps(cols),
                 detail::block_threads, 0, stream, indptr, rows, cols, num_edges, t_indptr, t_edges,
                 alpha, g, heads, f, grad_x);
}

void elu_inplace(float* x, std::int64_t n, cudaStream_t stream) {
  COOPGNN_NVTX_RANGE("dense/elu");
  COOPGNN_CU_EXPECTS(n >= 0 && (n == 0 || x != nullptr), "cuda::elu_inplace: bad operand n=", n);
  if (n == 0) return;
  COOPGNN_LAUNCH(detail::elu_per_thread, detail::grid_for_threads(n), detail::block_threads, 0,
                 stream, x, n);
}

void elu_backward(const float* grad_out, const float* y, std::int64_t n, float* grad_in,
                  cudaStream_t stream) {
  COOPGNN_NVTX_RANGE("dense/elu_backward");
  COOPGNN_CU_EXPECTS(
      n >= 0 && (n == 0 || (grad_out != nullptr && y != nullptr && grad_in != nullptr)),
      "cuda::elu_backward: bad operand n=", n);
  if (n == 0) return;
  COOPGNN_LAUNCH(detail::elu_backward_per_thread, detail::grid_for_threads(n),
                 detail::block_threads, 0, stream, grad_out, y, n, grad_in);
}

}  // namespace coopgnn::cuda
