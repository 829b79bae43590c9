// Device versions of the link-prediction and TMA layer ops of kernels/dense/link_ops.hpp
// (docs/design.md section 2; the host references are in link_ops.cpp). Includable from plain C++:
// needs only the CUDA runtime API.
//
// Raw float32 row-major device pointers, sizes, a stream; no allocation, no synchronisation, no
// global state. Bad sizes or null pointers throw coopgnn::logic_error before any launch; a failed
// launch throws coopgnn::cuda_error. Empty inputs launch nothing. Index values are not checked.
#pragma once

#ifdef COOPGNN_WITH_CUDA

#include <cuda_runtime_api.h>

#include <cstdint>

#include "kernels/dense/adam_params.hpp"

namespace coopgnn::cuda {

/// out[i] = sum_{j < d} a[i, j] b[i, j] for i < m. One warp per row (row_dot_row_per_warp): lane
/// k sums j = k (mod 32) ascending, then a warp butterfly; exact on integer data, otherwise
/// within a relative 1e-5 of the host's ascending sum. d == 0 writes zeros.
/// @param a, b [m, d] device; @param out [m] device, overwritten
void row_dot(const float* a, const float* b, std::int64_t m, std::int64_t d, float* out,
             cudaStream_t stream);

/// y[i, j] = s[i] * x[i, j]. @param s [m]; @param x, y [m, d] device (y may be exactly x). Bitwise.
void scale_rows(const float* s, const float* x, std::int64_t m, std::int64_t d, float* y,
                cudaStream_t stream);

/// out[e] = a[e] * b[e] for e < n. @param a, b, out [n] device (out may be exactly a or b).
/// Bitwise.
void hadamard(const float* a, const float* b, std::int64_t n, float* out, cudaStream_t stream);

/// out[r, :] += x[positions[p], :] for p in [offsets[r], offsets[r + 1]) ascending, r < n: the
/// scatter-add of rows by id as a gather over the ids grouped by value (group_by_value), so each
/// element adds its terms in the host's order: bitwise equal. One warp per output row, lanes over
/// columns (scatter_add_row_per_warp); rows without positions are not touched.
/// @param x [m, d] device; @param offsets [n + 1], positions [offsets[n]] device int64
/// @param out [n, d] device, accumulated into; must not overlap x
void scatter_add_rows(const float* x, std::int64_t d, const std::int64_t* offsets,
                      const std::int64_t* positions, std::int64_t n, float* out,
                      cudaStream_t stream);

/// y[i, j] = x > 0 ? x : alpha[c] x with c = per_channel ? j : 0. Bitwise.
/// @param x, y [m, d] device (y may be exactly x); @param alpha [d] or [1] device
void prelu_forward(const float* x, std::int64_t m, std::int64_t d, const float* alpha,
                   bool per_channel, float* y, cudaStream_t stream);

/// grad_in[i, j] = x > 0 ? g : alpha[c] g (bitwise), and alpha_grad[c] += the sum of
/// (x <= 0 ? x g : 0) over the elements of channel c: per channel, one block per 32 columns with
/// 32 row lanes (column sums as bias_grad_add); shared slope, one block of 256 threads each
/// summing elements t (mod 256) then a fixed tree. Exact on integer data, otherwise within a
/// relative 1e-5 of the host. The sums read grad_out before grad_in is written.
/// @param grad_out, x, grad_in [m, d] device (grad_in may be exactly grad_out)
/// @param alpha, alpha_grad [d] (per_channel) or [1] device
void prelu_backward(const float* grad_out, const float* x, std::int64_t m, std::int64_t d,
                    const float* alpha, bool per_channel, float* grad_in, float* alpha_grad,
                    cudaStream_t stream);

/// Layer normalisation of each row (link_ops.hpp layer_norm_forward): one warp per row
/// (layer_norm_row_per_warp); mean and the biased variance in double (lane partials, warp
/// butterfly), mean[i] = float(mu), rstd[i] = float(1 / sqrt(var + eps)), then
/// y = (x - mean[i]) rstd[i] gamma[j] + beta[j] in float. Within a relative 1e-5 of the host.
/// @param x, y [m, d] device (y must not overlap x); @param gamma, beta [d]; @param mean, rstd [m]
/// @throws logic_error also when m > 0 and d < 1.
void layer_norm_forward(const float* x, std::int64_t m, std::int64_t d, const float* gamma,
                        const float* beta, float eps, float* y, float* mean, float* rstd,
                        cudaStream_t stream);

/// Backward of layer_norm_forward (link_ops.hpp layer_norm_backward): gamma_grad and beta_grad by
/// column sums first (one block per 32 columns, as bias_grad_add), then grad_in with one warp per
/// row, the two row means in double. Within a relative 1e-5 of the host.
/// @param grad_out, x, grad_in [m, d] device (grad_in must not overlap x; it may be exactly
///        grad_out); @param gamma, gamma_grad, beta_grad [d]; @param mean, rstd [m]
void layer_norm_backward(const float* grad_out, const float* x, std::int64_t m, std::int64_t d,
                         const float* gamma, const float* mean, const float* rstd, float* grad_in,
                         float* gamma_grad, float* beta_grad, cudaStream_t stream);

/// Binary cross-entropy with logits: row_loss[i] = max(x, 0) - x y + log1p(exp(-|x|)) in double
/// (one thread per element), *loss = float(scale * sum_i row_loss[i]) summed by one block in a
/// fixed order, and grad[i] = float(scale (sigmoid(x_i) - y_i)) when grad != null. Labels are not
/// checked. Within a relative 1e-6 of the host.
/// @param logits, labels [n] device; @param grad [n] device or null
/// @param row_loss [n] device double workspace; @param loss one device float (0 when n == 0)
void bce_with_logits(const float* logits, const float* labels, std::int64_t n, float scale,
                     float* grad, double* row_loss, float* loss, cudaStream_t stream);

/// adam_element (adam_params.hpp) on value[r, j], grad[k, j], m[r, j], v[r, j] for r = rows[k],
/// k < num_rows and j < d: bitwise equal to the host. One thread per element
/// (adam_rows_per_thread). Rows must be distinct and in range (not checked).
/// @param value, m, v [n, d] device; @param grad [num_rows, d] device (compact);
/// @param rows [num_rows] device int64
void adam_update_rows(float* value, const float* grad, float* m, float* v, std::int64_t d,
                      const std::int64_t* rows, std::int64_t num_rows,
                      const adam_step_params& params, cudaStream_t stream);

}  // namespace coopgnn::cuda

#endif  // COOPGNN_WITH_CUDA
