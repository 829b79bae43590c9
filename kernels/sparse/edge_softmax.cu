// CUDA edge softmax, forward and backward (declared in sparse_cuda.hpp; host reference
// kernels/sparse/edge_softmax.hpp).
#include <cmath>

#include "kernels/cuda_check.cuh"
#include "kernels/cuda_launch.cuh"
#include "kernels/sparse/sparse_cuda.hpp"
#include "runtime/core/cuda_launch.cuh"
#include "runtime/core/nvtx.hpp"

namespace coopgnn::cuda {
namespace detail {
namespace {

/// One warp per destination: max, sum of shifted exponentials, then the normalised values. Each
/// element is read and written by the same lane, so out may be scores.
__global__ void edge_softmax_row_per_warp(const std::int64_t* __restrict__ indptr,
                                          std::int64_t num_dst, const float* scores, float* out) {
  int const lane = static_cast<int>(threadIdx.x) % warp_size;
  for (std::int64_t s = global_warp(); s < num_dst; s += warp_count()) {
    std::int64_t const e0 = indptr[s];
    std::int64_t const e1 = indptr[s + 1];
    if (e0 == e1) continue;
    float mx = -INFINITY;
    for (std::int64_t e = e0 + lane; e < e1; e += warp_size) mx = fmaxf(mx, scores[e]);
    mx = warp_max(mx);
    float sum = 0.0f;
    for (std::int64_t e = e0 + lane; e < e1; e += warp_size) sum += expf(scores[e] - mx);
    sum = warp_sum(sum);
    for (std::int64_t e = e0 + lane; e < e1; e += warp_size) out[e] = expf(scores[e] - mx) / sum;
  }
}

/// One warp per destination: dot = sum y * g, then grad[e] = y[e] * (g[e] - dot).
__global__ void edge_softmax_backward_row_per_warp(const std::int64_t* __restrict__ indptr,
                                                   std::int64_t num_dst,
                                                   const float* __restrict__ y, const float* grad_y,
                                                   float* grad_scores) {
  int const lane = static_cast<int>(threadIdx.x) % warp_size;
  for (std::int64_t s = global_warp(); s < num_dst; s += warp_count()) {
    std::int64_t const e0 = indptr[s];
    std::int64_t const e1 = indptr[s + 1];
    float dot = 0.0f;
    for (std::int64_t e = e0 + lane; e < e1; e += warp_size) dot += y[e] * grad_y[e];
    dot = warp_sum(dot);
    for (std::int64_t e = e0 + lane; e < e1; e += warp_size) {
      grad_scores[e] = y[e] * (grad_y[e] - dot);
    }
  }
}

void check_args(const char* fn, const std::int64_t* indptr, std::int64_t num_dst,
                std::int64_t num_edges, const void* in, const void* out) {
  COOPGNN_CU_EXPECTS(num_dst >= 0 && num_edges >= 0, fn, ": negative size num_dst=", num_dst,
                     ", num_edges=", num_edges);
  COOPGNN_CU_EXPECTS(indptr != nullptr, fn, ": indptr is null");
  COOPGNN_CU_EXPECTS(num_edges == 0 || (in != nullptr && out != nullptr), fn,
                     ": an edge array is null for ", num_edges, " edges");
}

}  // namespace
}  // namespace detail

void edge_softmax(const std::int64_t* indptr, std::int64_t num_dst, std::int64_t num_edges,
                  const float* scores, float* out, cudaStream_t stream) {
  COOPGNN_NVTX_RANGE("sparse/edge_softmax");
  detail::check_args("cuda::edge_softmax", indptr, num_dst, num_edges, scores, out);
  if (num_edges == 0 || num_dst == 0) return;
  COOPGNN_LAUNCH(detail::edge_softmax_row_per_warp, detail::grid_for_warps(num_dst),
                 detail::block_threads, 0, stream, indptr, num_dst, scores, out);
}

void edge_softmax_backward(const std::int64_t* indptr, std::int64_t num_dst, std::int64_t num_edges,
                           const float* y, const float* grad_y, float* grad_scores,
                           cudaStream_t stream) {
  COOPGNN_NVTX_RANGE("sparse/edge_softmax_backward");
  constexpr const char* fn = "cuda::edge_softmax_backward";
  detail::check_args(fn, indptr, num_dst, num_edges, grad_y, grad_scores);
  COOPGNN_CU_EXPECTS(num_edges == 0 || y != nullptr, fn, ": y is null");
  if (num_edges == 0 || num_dst == 0) return;
  COOPGNN_LAUNCH(detail::edge_softmax_backward_row_per_warp, detail::grid_for_warps(num_dst),
                 detail::block_threads, 0, stream, indptr, num_dst, y, grad_y, grad_scores);
}

}  // namespace coopgnn::cuda
