// Element-wise ops of the GNN layers, the softmax cross-entropy loss and the Adam update: one
// entry per op for every backend (docs/design.md section 2). Each entry checks that its operands
// live in ctx.space() (logic_error naming the operand otherwise) and runs the host reference
// (elementwise.cpp; backends host and emulated) or the CUDA kernel of elementwise_cuda.hpp on
// ctx's compute stream (backend cuda, float32 only; asynchronous unless stated). The CUDA kernels
// are bitwise equal to the host references except where a tolerance is stated.
//
// Shapes are those of the views; `rows`/`cols` below are the views' fields. Empty operands do
// nothing. None of them allocates.
#pragma once

#include <cstdint>

#include "kernels/dense/adam_params.hpp"
#include "kernels/sample/block.hpp"
#include "runtime/core/exec_context.hpp"
#include "runtime/core/memory.hpp"
#include "runtime/core/types.hpp"

namespace coopgnn {

/// out[i, j] = relu?(out[i, j] + bias[j]), relu(v) = v > 0 ? v : 0.
/// @param out   [rows, cols], in place; @param bias [cols]
/// Host: rows split over ctx.threads() (same bits for any count). Bitwise equal on CUDA.
/// @throws logic_error on a size or space mismatch.
template <typename T>
void bias_activation(const exec_context& ctx, tensor_view<T> out, buffer_view<const T> bias,
                     bool relu);

/// grad_in[e] = out[e] > 0 ? grad_out[e] : 0 (the ReLU derivative taken at the output).
/// @param grad_out, out, grad_in  same shape; grad_in may be exactly grad_out. Bitwise on CUDA.
template <typename T>
void relu_backward(const exec_context& ctx, tensor_view<const T> grad_out, tensor_view<const T> out,
                   tensor_view<T> grad_in);

/// bias_grad[j] += sum_i g[i, j] (the bias gradient). Host: rows in ascending order. CUDA: a
/// fixed lane-strided order (exact on integer data, else within a relative 1e-5).
/// @param g [rows, cols]; @param bias_grad [cols], accumulated into
template <typename T>
void bias_grad_add(const exec_context& ctx, tensor_view<const T> g, buffer_view<T> bias_grad);

/// What keys a dropout mask (docs/design.md section 4.4): the run seed, the global minibatch index
/// and the layer index (models::dropout_keeps).
struct dropout_key {
  std::uint64_t run_seed = 0;
  std::uint32_t batch = 0;
  std::uint32_t layer_index = 0;
};

/// Keyed dropout: with w = rng::draw4(make_stream(run_seed, purpose::dropout, layer_index),
/// ids[i], j / 4, batch), keep[i, j] = to_unit(w[j % 4]) >= p and y[i, j] = keep ? x[i, j] *
/// scale : 0 (one Philox call per four columns of a row; the mask is a pure function of the
/// vertex, never of the row position or PE). Bitwise equal on CUDA.
/// @param x, y  [rows, cols] (y may be exactly x); @param ids [rows] global vertex ids
/// @param keep  [rows * cols] uint8, overwritten; @param p in [0, 1); scale = 1 / (1 - p)
/// @throws logic_error on size/space mismatches or p outside [0, 1).
template <typename T>
void dropout_forward(const exec_context& ctx, tensor_view<const T> x, buffer_view<const vid_t> ids,
                     const dropout_key& key, float p, T scale, tensor_view<T> y,
                     buffer_view<std::uint8_t> keep);

/// g[e] = keep[e] ? g[e] * scale : 0, in place (the backward of dropout_forward). Bitwise on CUDA.
template <typename T>
void dropout_backward(const exec_context& ctx, tensor_view<T> g,
                      buffer_view<const std::uint8_t> keep, T scale);

/// GCN edge coefficients (Kipf & Welling 2017 with the Hajek reweighting of docs/design.md
/// section 4.4): for destination s and edge e of s, with d = src_degree,
///   out[e] = weights[e] * d[s] / sqrt((d[s] + 1) * (d[indices[e]] + 1))
/// evaluated in T with this operation order (no FMA). Bitwise equal on CUDA.
/// @param b    the block (indptr, indices, weights, src_degree); @param out [b.num_edges]
template <typename T>
void gcn_edge_values(const exec_context& ctx, const block_view& b, buffer_view<T> out);

/// The GCN self term, also its own backward: y[s, j] += (1 / (src_degree[s] + 1)) * x[s, j] for
/// s < y.rows (x has at least y.rows rows, same cols). Bitwise equal on CUDA.
/// @param src_degree [>= y.rows] int64
template <typename T>
void gcn_self_add(const exec_context& ctx, buffer_view<const std::int64_t> src_degree,
                  tensor_view<const T> x, tensor_view<T> y);

/// Softmax cross-entropy: returns scale * sum_i (logsumexp(logits_i) - logits_i[labels_i])
/// (max-shifted, accumulated in double in row order) and, when grad.data is not null, writes
/// grad = scale * (softmax(logits_i) - onehot(labels_i)).
/// @param logits [n, C]; @param labels [n] int64 in [0, C); @param grad [n, C] or empty
/// Host: a label outside [0, C) throws logic_error naming the row and value. CUDA: labels are not
/// checked (NaN instead), the value is within a relative 1e-6 of the host's, and the call
/// synchronises the compute stream (the value is copied to the host).
template <typename T>
T softmax_cross_entropy(const exec_context& ctx, tensor_view<const T> logits,
                        buffer_view<const std::int64_t> labels, T scale, tensor_view<T> grad);

/// One Adam update per element (Kingma & Ba 2015, Algorithm 1; models::adam):
///   g = grad + wd value; m = b1 m + (1 - b1) g; v = b2 v + (1 - b2) g^2 (in double)
///   value = float(value - lr (m / bc1) / (sqrt(v / bc2) + eps)); m, v stored as float.
/// (adam_element of adam_params.hpp, shared with the CUDA kernel and adam_update_rows.)
/// Bitwise equal on CUDA. @param value, grad, m, v [n] float32.
void adam_update(const exec_context& ctx, buffer_view<float> value, buffer_view<const float> grad,
                 buffer_view<float> m, buffer_view<float> v, const adam_step_params& params);

}  // namespace coopgnn
