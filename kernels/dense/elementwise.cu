// Element-wise ops and softmax cross-entropy on the device (declared in elementwise_cuda.hpp).
#include <cmath>

#include "kernels/cuda_check.cuh"
#include "kernels/cuda_launch.cuh"
#include "kernels/dense/elementwise_cuda.hpp"
#include "kernels/dense/reductions.cuh"
#include "runtime/core/cuda_launch.cuh"
#include "runtime/core/nvtx.hpp"

namespace coopgnn::cuda {
namespace detail {
namespace {

__global__ void bias_relu_per_thread(float* __restrict__ out, const float* __restrict__ bias,
                                     std::int64_t total, std::int64_t cols, bool relu) {
  for (std::int64_t i = global_thread(); i < total; i += thread_count()) {
    float const v = out[i] + bias[i % cols];
    out[i] = relu ? (v > 0.0f ? v : 0.0f) : v;
  }
}

__global__ void relu_backward_per_thread(const float* grad_out, const float* __restrict__ out,
                                         std::int64_t n, float* grad_in) {
  for (std::int64_t i = global_thread(); i < n; i += thread_count()) {
    grad_in[i] = out[i] > 0.0f ? grad_out[i] : 0.0f;
  }
}

/// One warp per row: max, log-sum-exp in double, row loss and gradient row.
__global__ void cross_entropy_row_per_warp(const float* __restrict__ logits,
                                           const std::int64_t* __restrict__ labels, std::int64_t n,
                                           std::int64_t classes, float scale,
                                           float* __restrict__ grad,
                                           double* __restrict__ row_loss) {
  int const lane = static_cast<int>(threadIdx.x) % warp_size;
  for (std::int64_t i = global_warp(); i < n; i += warp_count()) {
    const float* l = logits + i * classes;
    std::int64_t const y = labels[i];
    bool const valid = 0 <= y && y < classes;
    float mx = -INFINITY;
    for (std::int64_t j = lane; j < classes; j += warp_size) mx = fmaxf(mx, l[j]);
    mx = warp_max(mx);
    double sum = 0.0;
    for (std::int64_t j = lane; j < classes; j += warp_size) {
      sum += exp(static_cast<double>(l[j]) - static_cast<double>(mx));
    }
    sum = warp_sum(sum);
    double const lse = static_cast<double>(mx) + log(sum);
    if (lane == 0) row_loss[i] = valid ? lse - static_cast<double>(l[y]) : NAN;
    if (grad != nullptr) {
      for (std::int64_t j = lane; j < classes; j += warp_size) {
        double const p = exp(static_cast<double>(l[j]) - lse);
        double const v = valid ? static_cast<double>(scale) * (p - (j == y ? 1.0 : 0.0)) : NAN;
        grad[i * classes + j] = static_cast<float>(v);
      }
    }
  }
}

}  // namespace
}  // namespace detail

void bias_relu(float* out, const float* bias, std::int64_t rows, std::int64_t cols, bool relu,
               cudaStream_t stream) {
  COOPGNN_NVTX_RANGE("dense/bias_relu");
  COOPGNN_CU_EXPECTS(rows >= 0 && cols >= 0, "cuda::bias_relu: negative shape [", rows, ", ", cols,
                     "]");
  if (rows == 0 || cols == 0) return;
  COOPGNN_CU_EXPECTS(out != nullptr && bias != nullptr, "cuda::bias_relu: out or bias is null");
  COOPGNN_LAUNCH(detail::bias_relu_per_thread, detail::grid_for_threads(rows * cols),
                 detail::block_threads, 0, stream, out, bias, rows * cols, cols, relu);
}

void relu_backward(const float* grad_out, const float* out, std::int64_t n, float* grad_in,
                   cudaStream_t stream) {
  COOPGNN_NVTX_RANGE("dense/relu_backward");
  COOPGNN_CU_EXPECTS(n >= 0, "cuda::relu_backward: negative size n=", n);
  if (n == 0) return;
  COOPGNN_CU_EXPECTS(grad_out != nullptr && out != nullptr && grad_in != nullptr,
                     "cuda::relu_backward: a pointer is null for n = ", n);
  COOPGNN_LAUNCH(detail::relu_backward_per_thread, detail::grid_for_threads(n),
                 detail::block_threads, 0, stream, grad_out, out, n, grad_in);
}

void bias_grad_add(const float* g, std::int64_t rows, std::int64_t cols, float* bias_grad,
                   cudaStream_t stream) {
  COOPGNN_NVTX_RANGE("dense/bias_grad_add");
  COOPGNN_CU_EXPECTS(rows >= 0 && cols >= 0, "cuda::bias_grad_add: negative shape [", rows, ", ",
                     cols, "]");
  if (rows == 0 || cols == 0) return;
  COOPGNN_CU_EXPECTS(g != nullptr && bias_grad != nullptr,
                     "cuda::bias_grad_add: g or bias_grad is null");
  detail::col_sums_add(detail::matrix_term{g, cols}, rows, cols, bias_grad, stream);
}

void softmax_cross_entropy(const float* logits, const std::int64_t* labels, std::int64_t n,
                           std::int64_t classes, float scale, float* grad, double* row_loss,
                           float* loss, cudaStream_t stream) {
  COOPGNN_NVTX_RANGE("dense/softmax_cross_entropy");
  constexpr const char* fn = "cuda::softmax_cross_entropy";
  COOPGNN_CU_EXPECTS(n >= 0, fn, ": negative row count n=", n);
  COOPGNN_CU_EXPECTS(n == 0 || classes >= 1, fn, ": logits have ", n, " rows but ", classes,
                     " class columns");
  COOPGNN_CU_EXPECTS(loss != nullptr, fn, ": loss is null");
  if (n > 0) {
    COOPGNN_CU_EXPECTS(logits != nullptr && labels != nullptr && row_loss != nullptr, fn,
                       ": logits, labels or row_loss is null");
    COOPGNN_LAUNCH(detail::cross_entropy_row_per_warp, detail::grid_for_warps(n),
                   detail::block_threads, 0, stream, logits, labels, n, classes, scale, grad,
                   row_loss);
  }
  detail::store_loss_sum(row_loss, n, scale, loss, stream);
}

}  // namespace coopgnn::cuda
