// Link-prediction and TMA layer ops on the device (declared in link_ops_cuda.hpp; the host
// references are in link_ops.cpp).
#include <cmath>

#include "kernels/cuda_check.cuh"
#include "kernels/cuda_launch.cuh"
#include "kernels/dense/link_ops_cuda.hpp"
#include "kernels/dense/reductions.cuh"
#include "runtime/core/cuda_launch.cuh"
#include "runtime/core/nvtx.hpp"

namespace coopgnn::cuda {
namespace detail {
namespace {

/// Warp per row: lane k sums columns k, k + 32, ... ascending, then the warp butterfly.
__global__ void row_dot_row_per_warp(const float* __restrict__ a, const float* __restrict__ b,
                                     std::int64_t m, std::int64_t d, float* __restrict__ out) {
  int const lane = static_cast<int>(threadIdx.x) % warp_size;
  for (std::int64_t i = global_warp(); i < m; i += warp_count()) {
    float acc = 0.0f;
    for (std::int64_t j = lane; j < d; j += warp_size) acc += a[i * d + j] * b[i * d + j];
    acc = warp_sum(acc);
    if (lane == 0) out[i] = acc;
  }
}

__global__ void scale_rows_per_thread(const float* __restrict__ s, const float* x, std::int64_t m,
                                      std::int64_t d, float* y) {
  for (std::int64_t e = global_thread(); e < m * d; e += thread_count()) y[e] = s[e / d] * x[e];
}

__global__ void hadamard_per_thread(const float* a, const float* b, std::int64_t n, float* out) {
  for (std::int64_t e = global_thread(); e < n; e += thread_count()) out[e] = a[e] * b[e];
}

/// Warp per output row r, lanes over columns: out[r, j] += x[positions[p], j] for p ascending.
__global__ void scatter_add_row_per_warp(const float* __restrict__ x, std::int64_t d,
                                         const std::int64_t* __restrict__ offsets,
                                         const std::int64_t* __restrict__ positions, std::int64_t n,
                                         float* __restrict__ out) {
  int const lane = static_cast<int>(threadIdx.x) % warp_size;
  for (std::int64_t r = global_warp(); r < n; r += warp_count()) {
    std::int64_t const p0 = offsets[r];
    std::int64_t const p1 = offsets[r + 1];
    if (p0 == p1) continue;
    for (std::int64_t j = lane; j < d; j += warp_size) {
      float acc = out[r * d + j];
      for (std::int64_t p = p0; p < p1; ++p) acc += x[positions[p] * d + j];
      out[r * d + j] = acc;
    }
  }
}

__global__ void prelu_forward_per_thread(const float* x, std::int64_t total, std::int64_t d,
                                         const float* __restrict__ alpha, bool per_channel,
                                         float* y) {
  for (std::int64_t e = global_thread(); e < total; e += thread_count()) {
    float const v = x[e];
    float const a = alpha[per_channel ? e % d : 0];
    y[e] = v > 0.0f ? v : a * v;
  }
}

__global__ void prelu_grad_in_per_thread(const float* grad_out, const float* __restrict__ x,
                                         std::int64_t total, std::int64_t d,
                                         const float* __restrict__ alpha, bool per_channel,
                                         float* grad_in) {
  for (std::int64_t e = global_thread(); e < total; e += thread_count()) {
    float const g = grad_out[e];
    grad_in[e] = x[e] > 0.0f ? g : alpha[per_channel ? e % d : 0] * g;
  }
}

/// The PReLU slope term of element (i, j): x <= 0 ? x g : 0.
struct prelu_slope_term {
  const float* grad_out;
  const float* x;
  std::int64_t d;
  __device__ float operator()(std::int64_t i, std::int64_t j) const {
    float const v = x[i * d + j];
    return v <= 0.0f ? v * grad_out[i * d + j] : 0.0f;
  }
};

/// The LayerNorm gamma term grad_out[i, j] xh[i, j] with xh = (x - mean[i]) rstd[i].
struct layer_norm_gamma_term {
  const float* grad_out;
  const float* x;
  const float* mean;
  const float* rstd;
  std::int64_t d;
  __device__ float operator()(std::int64_t i, std::int64_t j) const {
    float const xh = (x[i * d + j] - mean[i]) * rstd[i];
    return grad_out[i * d + j] * xh;
  }
};

/// The PReLU slope term of flat element e (one shared slope).
struct prelu_flat_term {
  const float* grad_out;
  const float* x;
  __device__ float operator()(std::int64_t e) const {
    return x[e] <= 0.0f ? x[e] * grad_out[e] : 0.0f;
  }
};

/// *target += total.
struct add_to {
  float* target;
  __device__ void operator()(float total) const { *target += total; }
};

/// Warp per row: mean and biased variance in double, then y in float.
__global__ void layer_norm_row_per_warp(const float* __restrict__ x, std::int64_t m, std::int64_t d,
                                        const float* __restrict__ gamma,
                                        const float* __restrict__ beta, float eps,
                                        float* __restrict__ y, float* __restrict__ mean,
                                        float* __restrict__ rstd) {
  int const lane = static_cast<int>(threadIdx.x) % warp_size;
  auto const dd = static_cast<double>(d);
  for (std::int64_t i = global_warp(); i < m; i += warp_count()) {
    const float* xr = x + i * d;
    double sum = 0.0;
    for (std::int64_t j = lane; j < d; j += warp_size) sum += static_cast<double>(xr[j]);
    double const mu = warp_sum(sum) / dd;
    double sq = 0.0;
    for (std::int64_t j = lane; j < d; j += warp_size) {
      double const c = static_cast<double>(xr[j]) - mu;
      sq += c * c;
    }
    double const var = warp_sum(sq) / dd;
    auto const mu_t = static_cast<float>(mu);
    auto const rs_t = static_cast<float>(1.0 / sqrt(var + static_cast<double>(eps)));
    if (lane == 0) {
      mean[i] = mu_t;
      rstd[i] = rs_t;
    }
    for (std::int64_t j = lane; j < d; j += warp_size) {
      y[i * d + j] = (xr[j] - mu_t) * rs_t * gamma[j] + beta[j];
    }
  }
}

/// Warp per row: the two row means in double, then grad_in. Each lane reads and writes only its
/// own columns, so grad_in may be grad_out.
__global__ void layer_norm_grad_in_row_per_warp(const float* grad_out, const float* __restrict__ x,
                                                std::int64_t m, std::int64_t d,
                                                const float* __restrict__ gamma,
                                                const float* __restrict__ mean,
                                                const float* __restrict__ rstd, float* grad_in) {
  int const lane = static_cast<int>(threadIdx.x) % warp_size;
  auto const dd = static_cast<double>(d);
  for (std::int64_t i = global_warp(); i < m; i += warp_count()) {
    const float* xr = x + i * d;
    const float* gr = grad_out + i * d;
    float const mu = mean[i];
    float const rs = rstd[i];
    double c1 = 0.0;
    double c2 = 0.0;
    for (std::int64_t j = lane; j < d; j += warp_size) {
      float const xh = (xr[j] - mu) * rs;
      float const gy = gr[j] * gamma[j];
      c1 += static_cast<double>(gy);
      c2 += static_cast<double>(gy) * static_cast<double>(xh);
    }
    c1 = warp_sum(c1) / dd;
    c2 = warp_sum(c2) / dd;
    for (std::int64_t j = lane; j < d; j += warp_size) {
      float const xh = (xr[j] - mu) * rs;
      auto const gy = static_cast<double>(gr[j] * gamma[j]);
      grad_in[i * d + j] =
          static_cast<float>(static_cast<double>(rs) * (gy - c1 - static_cast<double>(xh) * c2));
    }
  }
}

__global__ void bce_per_thread(const float* __restrict__ logits, const float* __restrict__ labels,
                               std::int64_t n, float scale, float* __restrict__ grad,
                               double* __restrict__ row_loss) {
  for (std::int64_t i = global_thread(); i < n; i += thread_count()) {
    auto const x = static_cast<double>(logits[i]);
    auto const y = static_cast<double>(labels[i]);
    row_loss[i] = fmax(x, 0.0) - x * y + log1p(exp(-fabs(x)));
    if (grad != nullptr) {
      double const sig = x >= 0.0 ? 1.0 / (1.0 + exp(-x)) : exp(x) / (1.0 + exp(x));
      grad[i] = static_cast<float>(static_cast<double>(scale) * (sig - y));
    }
  }
}

__global__ void adam_rows_per_thread(float* __restrict__ value, const float* __restrict__ grad,
                                     float* __restrict__ m, float* __restrict__ v, std::int64_t d,
                                     const std::int64_t* __restrict__ rows, std::int64_t num_rows,
                                     adam_step_params a) {
  for (std::int64_t t = global_thread(); t < num_rows * d; t += thread_count()) {
    std::int64_t const e = rows[t / d] * d + t % d;
    adam_element(value[e], grad[t], m[e], v[e], a);  // grad is compact: row t / d of rows
  }
}

}  // namespace
}  // namespace detail

void row_dot(const float* a, const float* b, std::int64_t m, std::int64_t d, float* out,
             cudaStream_t stream) {
  COOPGNN_NVTX_RANGE("dense/row_dot");
  COOPGNN_CU_EXPECTS(m >= 0 && d >= 0, "cuda::row_dot: negative shape [", m, ", ", d, "]");
  if (m == 0) return;
  COOPGNN_CU_EXPECTS(out != nullptr && (d == 0 || (a != nullptr && b != nullptr)),
                     "cuda::row_dot: a, b or out is null for [", m, ", ", d, "]");
  COOPGNN_LAUNCH(detail::row_dot_row_per_warp, detail::grid_for_warps(m), detail::block_threads, 0,
                 stream, a, b, m, d, out);
}

void scale_rows(const float* s, const float* x, std::int64_t m, std::int64_t d, float* y,
                cudaStream_t stream) {
  COOPGNN_NVTX_RANGE("dense/scale_rows");
  COOPGNN_CU_EXPECTS(m >= 0 && d >= 0, "cuda::scale_rows: negative shape [", m, ", ", d, "]");
  if (m == 0 || d == 0) return;
  COOPGNN_CU_EXPECTS(s != nullptr && x != nullptr && y != nullptr,
                     "cuda::scale_rows: s, x or y is null");
  COOPGNN_LAUNCH(detail::scale_rows_per_thread, detail::grid_for_threads(m * d),
                 detail::block_threads, 0, stream, s, x, m, d, y);
}

void hadamard(const float* a, const float* b, std::int64_t n, float* out, cudaStream_t stream) {
  COOPGNN_NVTX_RANGE("dense/hadamard");
  COOPGNN_CU_EXPECTS(n >= 0, "cuda::hadamard: negative size n=", n);
  if (n == 0) return;
  COOPGNN_CU_EXPECTS(a != nullptr && b != nullptr && out != nullptr,
                     "cuda::hadamard: a, b or out is null for n = ", n);
  COOPGNN_LAUNCH(detail::hadamard_per_thread, detail::grid_for_threads(n), detail::block_threads, 0,
                 stream, a, b, n, out);
}

void scatter_add_rows(const float* x, std::int64_t d, const std::int64_t* offsets,
                      const std::int64_t* positions, std::int64_t n, float* out,
                      cudaStream_t stream) {
  COOPGNN_NVTX_RANGE("dense/scatter_add_rows");
  COOPGNN_CU_EXPECTS(n >= 0 && d >= 0, "cuda::scatter_add_rows: negative size n=", n, " d=", d);
  if (n == 0 || d == 0) return;
  COOPGNN_CU_EXPECTS(x != nullptr && offsets != nullptr && positions != nullptr && out != nullptr,
                     "cuda::scatter_add_rows: x, offsets, positions or out is null");
  COOPGNN_LAUNCH(detail::scatter_add_row_per_warp, detail::grid_for_warps(n), detail::block_threads,
                 0, stream, x, d, offsets, positions, n, out);
}

void prelu_forward(const float* x, std::int64_t m, std::int64_t d, const float* alpha,
                   bool per_channel, float* y, cudaStream_t stream) {
  COOPGNN_NVTX_RANGE("dense/prelu_forward");
  COOPGNN_CU_EXPECTS(m >= 0 && d >= 0, "cuda::prelu_forward: negative shape [", m, ", ", d, "]");
  if (m == 0 || d == 0) return;
  COOPGNN_CU_EXPECTS(x != nullptr && alpha != nullptr && y != nullptr,
                     "cuda::prelu_forward: x, alpha or y is null");
  COOPGNN_LAUNCH(detail::prelu_forward_per_thread, detail::grid_for_threads(m * d),
                 detail::block_threads, 0, stream, x, m * d, d, alpha, per_channel, y);
}

void prelu_backward(const float* grad_out, const float* x, std::int64_t m, std::int64_t d,
                    const float* alpha, bool per_channel, float* grad_in, float* alpha_grad,
                    cudaStream_t stream) {
  COOPGNN_NVTX_RANGE("dense/prelu_backward");
  COOPGNN_CU_EXPECTS(m >= 0 && d >= 0, "cuda::prelu_backward: negative shape [", m, ", ", d, "]");
  if (m == 0 || d == 0) return;
  COOPGNN_CU_EXPECTS(grad_out != nullptr && x != nullptr && alpha != nullptr &&
                         grad_in != nullptr && alpha_grad != nullptr,
                     "cuda::prelu_backward: a pointer is null");
  // The slope sums read grad_out before grad_in (possibly the same memory) is written.
  if (per_channel) {
    detail::col_sums_add(detail::prelu_slope_term{grad_out, x, d}, m, d, alpha_grad, stream);
  } else {
    COOPGNN_LAUNCH((detail::sum_single_block<float, detail::prelu_flat_term, detail::add_to>), 1,
                   detail::sum_threads, 0, stream, detail::prelu_flat_term{grad_out, x}, m * d,
                   detail::add_to{alpha_grad});
  }
  COOPGNN_LAUNCH(detail::prelu_grad_in_per_thread, detail::grid_for_threads(m * d),
                 detail::block_threads, 0, stream, grad_out, x, m * d, d, alpha, per_channel,
                 grad_in);
}

void layer_norm_forward(const float* x, std::int64_t m, std::int64_t d, const float* gamma,
                        const float* beta, float eps, float* y, float* mean, float* rstd,
                        cudaStream_t stream) {
  COOPGNN_NVTX_RANGE("dense/layer_norm_forward");
  constexpr const char* fn = "cuda::layer_norm_forward";
  COOPGNN_CU_EXPECTS(m >= 0 && d >= 0, fn, ": negative shape [", m, ", ", d, "]");
  if (m == 0) return;
  COOPGNN_CU_EXPECTS(d >= 1, fn, ": ", m, " rows without columns");
  COOPGNN_CU_EXPECTS(x != nullptr && gamma != nullptr && beta != nullptr && y != nullptr &&
                         mean != nullptr && rstd != nullptr,
                     fn, ": a pointer is null");
  COOPGNN_LAUNCH(detail::layer_norm_row_per_warp, detail::grid_for_warps(m), detail::block_threads,
                 0, stream, x, m, d, gamma, beta, eps, y, mean, rstd);
}

void layer_norm_backward(const float* grad_out, const float* x, std::int64_t m, std::int64_t d,
                         const float* gamma, const float* mean, const float* rstd, float* grad_in,
                         float* gamma_grad, float* beta_grad, cudaStream_t stream) {
  COOPGNN_NVTX_RANGE("dense/layer_norm_backward");
  constexpr const char* fn = "cuda::layer_norm_backward";
  COOPGNN_CU_EXPECTS(m >= 0 && d >= 0, fn, ": negative shape [", m, ", ", d, "]");
  if (m == 0) return;
  COOPGNN_CU_EXPECTS(d >= 1, fn, ": ", m, " rows without columns");
  COOPGNN_CU_EXPECTS(grad_out != nullptr && x != nullptr && gamma != nullptr && mean != nullptr &&
                         rstd != nullptr && grad_in != nullptr && gamma_grad != nullptr &&
                         beta_grad != nullptr,
                     fn, ": a pointer is null");
  // Parameter gradients first: they read grad_out, which grad_in may overwrite.
  detail::col_sums_add(detail::layer_norm_gamma_term{grad_out, x, mean, rstd, d}, m, d, gamma_grad,
                       stream);
  detail::col_sums_add(detail::matrix_term{grad_out, d}, m, d, beta_grad, stream);
  COOPGNN_LAUNCH(detail::layer_norm_grad_in_row_per_warp, detail::grid_for_warps(m),
                 detail::block_threads, 0, stream, grad_out, x, m, d, gamma, mean, rstd, grad_in);
}

void bce_with_logits(const float* logits, const float* labels, std::int64_t n, float scale,
                     float* grad, double* row_loss, float* loss, cudaStream_t stream) {
  COOPGNN_NVTX_RANGE("dense/bce_with_logits");
  constexpr const char* fn = "cuda::bce_with_logits";
  COOPGNN_CU_EXPECTS(n >= 0, fn, ": negative size n=", n);
  COOPGNN_CU_EXPECTS(loss != nullptr, fn, ": loss is null");
  if (n > 0) {
    COOPGNN_CU_EXPECTS(logits != nullptr && labels != nullptr && row_loss != nullptr, fn,
                       ": logits, labels or row_loss is null");
    COOPGNN_LAUNCH(detail::bce_per_thread, detail::grid_for_threads(n), detail::block_threads, 0,
                   stream, logits, labels, n, scale, grad, row_loss);
  }
  detail::store_loss_sum(row_loss, n, scale, loss, stream);
}

void adam_update_rows(float* value, const float* grad, float* m, float* v, std::int64_t d,
                      const std::int64_t* rows, std::int64_t num_rows,
                      const adam_step_params& params, cudaStream_t stream) {
  COOPGNN_NVTX_RANGE("dense/adam_update_rows");
  COOPGNN_CU_EXPECTS(d >= 0 && num_rows >= 0, "cuda::adam_update_rows: negative size d=", d,
                     " rows=", num_rows);
  if (d == 0 || num_rows == 0) return;
  COOPGNN_CU_EXPECTS(
      value != nullptr && grad != nullptr && m != nullptr && v != nullptr && rows != nullptr,
      "cuda::adam_update_rows: a pointer is null");
  COOPGNN_LAUNCH(detail::adam_rows_per_thread, detail::grid_for_threads(num_rows * d),
                 detail::block_threads, 0, stream, value, grad, m, v, d, rows, num_rows, params);
}

}  // namespace coopgnn::cuda
