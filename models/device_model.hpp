// The GNN model on the CUDA backend: the device image of models::gnn_model (DESIGN.md section 1,
// "models"; section 6, the per-layer forward and backward the minibatch protocols drive). The
// host classes of models/layers.hpp and models/model.hpp are the reference: every method here
// computes the same formula (same dropout masks, same GCN coefficients, same Adam step) with the
// device kernels of kernels/dense and kernels/sparse, so host and device agree within the float
// tolerances those kernels document (cuBLAS and the warp reductions sum in other orders).
//
// Includable from .cpp files in any build (no CUDA headers); the definitions exist only in CUDA
// builds (COOPGNN_WITH_CUDA). Every method enqueues its work on ctx.compute() of the context the
// model was built on and returns without synchronising, unless it says otherwise. Device memory
// comes from that context's pool. Not thread-safe: one model per PE thread.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/sample/sample_cuda.hpp"
#include "models/model.hpp"
#include "models/optimizer.hpp"
#include "runtime/core/cuda_context.hpp"

namespace coopgnn::cuda {

/// A row-major float32 matrix [rows, cols] in device memory (data.size() == rows * cols).
struct device_matrix {
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  device_buffer<float> data;
  [[nodiscard]] std::int64_t size() const { return rows * cols; }
};

/// What conv_forward keeps for conv_backward (the device conv_cache of models/layers.hpp).
struct device_conv_cache {
  device_matrix h;                    ///< [num_src, in_dim] input after dropout
  device_buffer<std::uint8_t> keep;   ///< [num_src * in_dim] dropout mask (empty: none applied)
  float keep_scale = 1.0f;            ///< 1 / (1 - p)
  device_matrix mid;                  ///< aggregate [num_dst, in] or transform [num_src, out]
  device_matrix out;                  ///< [num_dst, out_dim] layer output (after ReLU)
  device_buffer<float> edge_values;   ///< [num_edges] GCN edge coefficients (empty for SAGE)
};

/// What head_forward keeps for head_backward.
struct device_linear_cache {
  device_matrix x;                   ///< [n, in_dim] input after dropout
  device_buffer<std::uint8_t> keep;  ///< dropout mask (empty: none applied)
  float keep_scale = 1.0f;
};

/// A gnn_model replica on one device with its Adam state.
///
/// Parameters live in ONE flat device buffer in gnn_model::params() order (each parameter's
/// values row-major, back to back), gradients in a second flat buffer of the same layout, so a
/// single all-reduce covers every gradient (DESIGN.md section 6, step 5) and the Adam moments m
/// and v in two more. Layer i's parameters and formulas are those of host.layer(i), the head's
/// those of host.head() (see models/layers.hpp for the exact math of forward and backward).
class device_gnn_model {
 public:
  /// Copies the configuration and the CURRENT parameter values of `host` to ctx's device (so a
  /// host model initialised from a seed gives the same starting weights), zeroes the gradients
  /// and the Adam moments. Synchronises ctx.compute() once (the host values are pageable).
  /// @param ctx   the PE's context; must outlive the model
  /// @param host  the reference model (not kept)
  /// @param adam  optimizer options, as models::adam takes them
  /// @throws logic_error for invalid Adam options (the messages of models::adam);
  ///         cuda_error when out of device memory.
  device_gnn_model(const cuda_context& ctx, const models::gnn_model& host,
                   const models::adam_options& adam);
  ~device_gnn_model();
  device_gnn_model(const device_gnn_model&) = delete;
  device_gnn_model& operator=(const device_gnn_model&) = delete;

  [[nodiscard]] const models::model_config& config() const;
  [[nodiscard]] int num_layers() const;
  [[nodiscard]] bool has_head() const;
  /// Total number of trainable scalars (= host.num_parameters()).
  [[nodiscard]] std::int64_t num_parameters() const;

  /// Flat device gradient buffer [num_parameters()], gnn_model::params() order. The trainer
  /// all-reduces it in place between backward and adam_step.
  [[nodiscard]] float* grads();
  /// Flat device parameter values [num_parameters()], same order.
  [[nodiscard]] const float* values() const;

  /// Sets every gradient to zero (cudaMemsetAsync).
  void zero_grad();

  /// Conv layer i on a block: the device version of host.layer(i).forward(b, h_src, key, cache).
  /// Dropout masks are dropout_keeps(key.run_seed, key.batch, i, b.src_ids[row], column, p)
  /// computed on the device (same Philox words as the host).
  /// @param b      the block on the device (src_ids, indptr, indices, weights; src_degree for GCN)
  /// @param h_src  [b.num_src(), in_dim]
  /// @param cache  when not null, filled for conv_backward
  /// @returns      [b.num_dst, out_dim]
  /// @throws logic_error for i out of range or a shape mismatch (the message names both);
  ///         cuda_error for failed launches or library calls.
  device_matrix conv_forward(int i, const device_block& b, const device_matrix& h_src,
                             const models::step_key& key, device_conv_cache* cache) const;

  /// Backward of conv_forward: ADDS dL/dW and dL/dbias of layer i into grads() and, when
  /// `input_grad` is true, returns dL/dh_src [b.num_src(), in_dim] (through dropout); otherwise
  /// returns an empty matrix (layer 0 of a minibatch needs no input gradient).
  /// @param grad_out  [b.num_dst, out_dim]
  /// @throws logic_error on shape mismatches with b and cache; cuda_error.
  device_matrix conv_backward(int i, const device_block& b, const device_matrix& grad_out,
                              const device_conv_cache& cache, bool input_grad);

  /// The linear head: device version of host.head()->forward(x, row_ids, key, cache).
  /// @param row_ids  [x.rows] device global ids keying the dropout mask (read only when
  ///                 key.training && p > 0)
  /// @throws logic_error when the model has no head or on a shape mismatch; cuda_error.
  device_matrix head_forward(const device_matrix& x, const vid_t* row_ids,
                             const models::step_key& key, device_linear_cache* cache) const;

  /// Backward of head_forward: ADDS the head's gradients into grads(), returns dL/dx.
  device_matrix head_backward(const device_matrix& grad_out, const device_linear_cache& cache);

  /// Softmax cross-entropy of `logits` against `labels` (cuda::softmax_cross_entropy): returns
  /// scale * sum of the row losses, and writes the gradient [n, C] to *grad when not null.
  /// Synchronises ctx.compute() (the loss value is copied to the host).
  /// @param labels  [logits.rows] device int64 in [0, C)
  /// @throws logic_error on a size mismatch; cuda_error.
  double loss(const device_matrix& logits, const device_buffer<std::int64_t>& labels, float scale,
              device_matrix* grad) const;

  /// One Adam step (models::adam's exact formula, evaluated in double per element, bias
  /// corrections computed on the host) on values() from grads(). Elements are independent, so
  /// replicas given bitwise-equal gradients stay bitwise equal.
  void adam_step();

  /// Copies the current parameter values into `host` (same configuration), e.g. to evaluate
  /// with the host's full-neighbour inference. Synchronises ctx.compute().
  /// @throws logic_error when host's configuration differs; cuda_error.
  void download(models::gnn_model& host) const;

 private:
  struct impl;
  impl* impl_;
};

}  // namespace coopgnn::cuda
