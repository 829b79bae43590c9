// Element-wise device ops and the softmax cross-entropy loss the layers need on the CUDA backend
// (docs/design.md section 2; the host versions are the bias/ReLU, dropout and GCN steps and
// softmax_cross_entropy of models/layers.{hpp,cpp}, and models::adam). Includable from plain C++:
// needs only the CUDA runtime API.
//
// Raw float32 row-major device pointers, sizes, a stream; no allocation, no synchronisation, no
// global state. Bad sizes or null pointers throw coopgnn::logic_error before any launch; a failed
// launch throws coopgnn::cuda_error. Empty inputs launch nothing.
#pragma once

#ifdef COOPGNN_WITH_CUDA

#include <cuda_runtime_api.h>

#include <cstdint>

#include "kernels/dense/adam_params.hpp"

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

// ---- model ops (models/device_model.cpp; definitions in model_ops.cu) --------------------------

/// Keyed dropout, the device version of apply_dropout in models/layers.cpp: for i < rows,
/// j < cols, with w = rng::draw4(rng::make_stream(run_seed, purpose::dropout, layer_index),
/// ids[i], j / 4, batch):
///   keep[i, j] = rng::to_unit(w[j % 4]) >= p;  y[i, j] = keep[i, j] ? x[i, j] * scale : 0.
/// The mask equals models::dropout_keeps bit for bit (same Philox words) and y equals the host
/// (one float multiply). One thread per four consecutive columns of a row (one Philox call).
/// @param x      [rows, cols] device float32; y [rows, cols] device, may be exactly x (in place)
/// @param ids    [rows] device int64 global vertex ids keying the rows
/// @param keep   [rows * cols] device uint8, overwritten with 1 (kept) or 0
/// @param p      in [0, 1); scale = 1 / (1 - p) computed by the caller as the host does
/// @throws logic_error on negative sizes, p outside [0, 1), cols >= 2^34 (the column quad is a
///         32-bit counter word) or a null pointer with rows * cols > 0; cuda_error.
/// Empty: nothing launched. Deterministic.
void dropout_forward(const float* x, const std::int64_t* ids, std::int64_t rows, std::int64_t cols,
                     std::uint64_t run_seed, std::uint32_t batch, std::uint32_t layer_index,
                     float p, float scale, float* y, std::uint8_t* keep, cudaStream_t stream);

/// g[e] = keep[e] ? g[e] * scale : 0 for e < n, in place (dropout_backward in models/layers.cpp).
/// @param g [n] device float32; @param keep [n] device uint8 from dropout_forward
/// Bitwise equal to the host. @throws logic_error on n < 0 or a null pointer; cuda_error.
void dropout_backward(float* g, const std::uint8_t* keep, std::int64_t n, float scale,
                      cudaStream_t stream);

/// GCN edge coefficients (gcn_edge_values in models/layers.cpp): for s < num_dst and e in
/// [indptr[s], indptr[s+1]), with d = src_degree converted to float,
///   out[e] = weights[e] * d[s] / sqrt((d[s] + 1) * (d[indices[e]] + 1))
/// evaluated in float with the host's operation order and no FMA contraction: bitwise equal to
/// the host. One warp per destination, lanes over its edges (gcn_edge_values_row_per_warp).
/// @param indptr [num_dst + 1], indices/weights/out [indptr[num_dst]], src_degree [num_src]:
///        device; indices are not range-checked (block invariants)
/// @throws logic_error on num_dst < 0 or null pointers; cuda_error. Empty: nothing launched.
void gcn_edge_values(const std::int64_t* indptr, const std::int64_t* indices, const float* weights,
                     const std::int64_t* src_degree, std::int64_t num_dst, float* out,
                     cudaStream_t stream);

/// The GCN self term (add_gcn_self in models/layers.cpp), also its own backward:
///   y[s, j] += (1 / float(src_degree[s] + 1)) * x[s, j]   for s < rows, j < cols
/// with one float multiply and one add (no FMA): bitwise equal to the host.
/// @param x [>= rows, cols] and y [>= rows, cols] row-major device float32 (row strides = cols);
///        y must not overlap x. @param src_degree [>= rows] device int64
/// @throws logic_error on negative sizes or null pointers; cuda_error. Empty: nothing launched.
void gcn_self_add(const std::int64_t* src_degree, const float* x, std::int64_t rows,
                  std::int64_t cols, float* y, cudaStream_t stream);

using coopgnn::adam_step_params;  ///< kernels/dense/adam_params.hpp

/// One Adam update per element (models::adam::step), for e < n:
///   g = grad[e] + wd * value[e];  mn = b1 m[e] + (1 - b1) g;  vn = b2 v[e] + (1 - b2) g g
///   m[e] = float(mn); v[e] = float(vn); value[e] = float(value[e] - lr (mn / bc1) /
///   (sqrt(vn / bc2) + eps))
/// in double with the host's operation order and explicit round-to-nearest intrinsics (no FMA):
/// bitwise equal to the host for equal inputs. One thread per element (adam_per_thread).
/// @param value, m, v [n] device float32, updated; @param grad [n] device float32
/// @throws logic_error on n < 0 or null pointers; cuda_error. Empty: nothing launched.
void adam_step(float* value, const float* grad, float* m, float* v, std::int64_t n,
               const adam_step_params& params, cudaStream_t stream);

}  // namespace coopgnn::cuda

#endif  // COOPGNN_WITH_CUDA
