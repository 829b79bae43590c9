// Element-wise ops and softmax cross-entropy on the device (declared in elementwise_cuda.hpp).
#include <cmath>

#include "kernels/cuda_check.cuh"
#include "kernels/cuda_launch.cuh"
#include "kernels/dense/elementwise_cuda.hpp"
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

constexpr int kTile = 32;  // columns per block and row lanes per column

/// Block (kTile x kTile threads) per 32 columns: thread (lane r, column c) sums rows r, r + 32, ...
/// ascending; thread r == 0 then adds the 32 partials in lane order.
__global__ void col_sums_tile_per_block(const float* __restrict__ g, std::int64_t rows,
                                        std::int64_t cols, float* __restrict__ bias_grad) {
  __shared__ float partial[kTile][kTile + 1];
  int const c = static_cast<int>(threadIdx.x);
  int const r = static_cast<int>(threadIdx.y);
  for (std::int64_t tile = blockIdx.x; tile * kTile < cols; tile += gridDim.x) {
    std::int64_t const j = tile * kTile + c;
    float acc = 0.0f;
    if (j < cols) {
      for (std::int64_t i = r; i < rows; i += kTile) acc += g[i * cols + j];
    }
    partial[r][c] = acc;
    __syncthreads();
    if (r == 0 && j < cols) {
      float total = 0.0f;
      for (int k = 0; k < kTile; ++k) total += partial[k][c];
      bias_grad[j] += total;
    }
    __syncthreads();
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

constexpr int kSumThreads = 256;

/// One block: thread t sums row_loss[t], row_loss[t + 256], ... ascending, then a shared-memory
/// tree in a fixed order; *loss = scale * total.
__global__ void sum_single_block(const double* __restrict__ row_loss, std::int64_t n, float scale,
                                 float* __restrict__ loss) {
  __shared__ double part[kSumThreads];
  int const t = static_cast<int>(threadIdx.x);
  double acc = 0.0;
  for (std::int64_t i = t; i < n; i += kSumThreads) acc += row_loss[i];
  part[t] = acc;
  __syncthreads();
  for (int half = kSumThreads / 2; half > 0; half /= 2) {
    if (t < half) part[t] += part[t + half];
    __syncthreads();
  }
  if (t == 0) *loss = static_cast<float>(static_cast<double>(scale) * part[0]);
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
  std::int64_t const tiles = (cols + detail::kTile - 1) / detail::kTile;
  auto const grid = static_cast<unsigned>(std::min<std::int64_t>(tiles, detail::max_grid));
  COOPGNN_LAUNCH(detail::col_sums_tile_per_block, grid, dim3(detail::kTile, detail::kTile), 0,
                 stream, g, rows, cols, bias_grad);
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
  if (n == 0) {
    COOPGNN_CUDA_CHECK(cudaMemsetAsync(loss, 0, sizeof(float), stream));
    return;
  }
  COOPGNN_CU_EXPECTS(logits != nullptr && labels != nullptr && row_loss != nullptr, fn,
                     ": logits, labels or row_loss is null");
  COOPGNN_LAUNCH(detail::cross_entropy_row_per_warp, detail::grid_for_warps(n),
                 detail::block_threads, 0, stream, logits, labels, n, classes, scale, grad,
                 row_loss);
  COOPGNN_LAUNCH(detail::sum_single_block, 1, detail::kSumThreads, 0, stream, row_loss, n, scale,
                 loss);
}

}  // namespace coopgnn::cuda
