// Element-wise device ops and the softmax cross-entropy loss the layers need on the CUDA backend
// (DESIGN.md section 2; the host versions are the bias/ReLU steps and softmax_cross_entropy of
// models/layers.{hpp,cpp}). Includable from plain C++: needs only the CUDA runtime API.
//
// Raw float32 row-major device pointers, sizes, a stream; no allocation, no synchronisation, no
// global state. Bad sizes or null pointers throw coopgnn::logic_error before any launch; a failed
// launch throws coopgnn::cuda_error. Empty inputs launch nothing.
#pragma once

#ifdef COOPGNN_WITH_CUDA

#include <cuda_runtime_api.h>

#include <cstdint>

namespace coopgnn::cuda {

/// out[i, j] = relu?(out[i, j] + bias[j]) for i < rows, j < cols, relu(v) = v > 0 ? v : 0.
/// @param out   [rows, cols] device, updated in place
/// @param bias  [cols] device
/// Elementwise, bitwise equal to the host (models/layers.cpp bias_activation).
void bias_relu(float* out, const float* bias, std::int64_t rows, std::int64_t cols, bool relu,
               cudaStream_t stream);

/// grad_in[i] = out[i] > 0 ? grad_out[i] : 0 for i < n (the ReLU derivative taken at the output).
/// @param grad_out, out, grad_in  [n] device; grad_in may be exactly grad_out (in place)
/// Bitwise equal to the host.
void relu_backward(const float* grad_out, const float* out, std::int64_t n, float* grad_in,
                   cudaStream_t stream);

/// bias_grad[j] += sum_{i < rows} g[i, j] (column sums, the bias gradient).
/// @param g          [rows, cols] device
/// @param bias_grad  [cols] device, accumulated into
/// Deterministic without atomics: one block per 32 columns, 32 row lanes each summing rows
/// i = lane (mod 32) in ascending order, then the 32 partials added in lane order. The order
/// differs from the host's ascending sum: exact on integer-valued data, otherwise within a
/// relative 1e-5 of the host for rows up to 1e6 (col_sums_tile_per_block).
void bias_grad_add(const float* g, std::int64_t rows, std::int64_t cols, float* bias_grad,
                   cudaStream_t stream);

/// Softmax cross-entropy, the device version of models::softmax_cross_entropy:
///   row_loss[i] = logsumexp(logits[i, :]) - logits[i, labels[i]] (max-shifted, in double),
///   *loss = scale * sum_i row_loss[i] (summed in a fixed order, then rounded to float),
///   grad[i, j] = scale * (softmax(logits[i, :])[j] - [j == labels[i]])   (when grad != null).
/// @param logits    [n, classes] device; @param labels [n] device int64
/// @param row_loss  [n] device double workspace (overwritten)
/// @param loss      one device float, overwritten (0 when n == 0)
/// @param grad      [n, classes] device or null; must not overlap logits
/// Labels are not checked on the device: a label outside [0, classes) gives a NaN row loss and a
/// NaN gradient row (so the total is NaN) instead of an exception.
/// @throws logic_error when n < 0, classes < 1 with n > 0, or a needed pointer is null.
/// Deterministic; within a relative 1e-6 of the host (exp/log differ in the last bits).
void softmax_cross_entropy(const float* logits, const std::int64_t* labels, std::int64_t n,
                           std::int64_t classes, float scale, float* grad, double* row_loss,
                           float* loss, cudaStream_t stream);

}  // namespace coopgnn::cuda

#endif  // COOPGNN_WITH_CUDA
