// GNN layers with hand-written forward and backward on sampled blocks (DESIGN.md section 1,
// "models"; section 4, "Layers on sampled blocks"; section 6, forward/backward per layer).
//
// Host implementations built on the dense and sparse kernels. Every random decision (dropout,
// initialisation) is keyed by global ids through runtime/core/rng.hpp, so the same vertex gets the
// same mask on every PE and any thread count gives the same bits.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "kernels/sample/block.hpp"
#include "runtime/core/matrix.hpp"
#include "runtime/core/types.hpp"

namespace coopgnn::models {

/// A trainable tensor and the gradient accumulated for it (same shape as value).
template <typename T>
struct parameter {
  std::string name;  ///< e.g. "sage0.w_self", unique within a model
  matrix<T> value;
  matrix<T> grad;
};

/// What keys a training step's dropout masks (DESIGN.md section 4): the run seed and the global
/// minibatch index; with training == false no dropout is applied.
struct step_key {
  std::uint64_t run_seed = 0;
  std::uint32_t batch = 0;
  bool training = false;
};

/// Graph convolution flavour of conv_layer.
enum class conv_kind {
  sage,  ///< GraphSAGE-mean (Hamilton et al., NeurIPS 2017, eq. 1 with concat replaced by two
         ///< weight matrices): h_s W_self + mean_t(h_t) W_neigh + b
  gcn,   ///< GCN (Kipf & Welling, ICLR 2017, eq. 2), symmetric normalisation with self-loops
};

/// Whether dropout keeps element (vertex, column) of the input of layer `layer_index` in minibatch
/// `batch`: rng::to_unit(w[column % 4]) >= p with w = rng::draw4(make_stream(run_seed,
/// purpose::dropout, layer_index), vertex, column / 4, batch): one Philox call serves four
/// consecutive columns. A pure function of its arguments (never of a row position, thread or PE).
/// @param vertex  global vertex id; @param column feature column (< 2^32); @param p in [0, 1)
bool dropout_keeps(std::uint64_t run_seed, std::uint32_t batch, std::uint32_t layer_index,
                   vid_t vertex, std::int64_t column, float p);

/// What conv_layer::forward keeps for backward. Public so that tests and the pipeline can look
/// at intermediate values; treat as opaque otherwise.
template <typename T>
struct conv_cache {
  matrix<T> h;                     ///< [num_src, in_dim] input after dropout (a copy)
  std::vector<std::uint8_t> keep;  ///< [num_src * in_dim] dropout mask, empty when none applied
  T keep_scale = T{1};             ///< 1 / (1 - p) for kept elements
  matrix<T> mid;                   ///< aggregate [num_dst, in_dim] or transform [num_src, out]
  matrix<T> out;                   ///< [num_dst, out_dim] layer output (after ReLU)
  std::vector<T> edge_values;      ///< [num_edges] GCN edge coefficients (empty for SAGE)
};

/// One graph convolution over a sampled block (message-flow graph).
///
/// forward, for destination s < b.num_dst (t ranges over the block's edges t -> s, w_e =
/// b.weights[e], d = b.src_degree, full-graph in-degrees):
///   1. dropout on h_src if key.training && p > 0: element (i, j) kept iff
///      dropout_keeps(key.run_seed, key.batch, layer_index, b.src_ids[i], j, p), kept values
///      multiplied by 1 / (1 - p);
///   2. SAGE: out[s] = h[s] W_self + (sum_e w_e h[t]) W_neigh + bias  (a dst without edges
///      aggregates 0);
///      GCN:  out[s] = (1 / (d_s + 1)) h[s] W + sum_e w_e d_s / sqrt((d_s + 1)(d_t + 1)) h[t] W
///            + bias. With every in-edge kept and w_e = 1/d_s this is exactly the full-batch GCN
///            row of D^-1/2 (A + I) D^-1/2 H W; with sampling the Hajek weights reweight the kept
///            edges (DESIGN.md section 4). A dst with d_s = 0 gets only the self term.
///   3. ReLU if apply_relu.
/// Transform-then-aggregate is used when in_dim > out_dim, aggregate-then-transform otherwise:
/// the same math, chosen from the dimensions only.
///
/// Parameters: SAGE "sage<l>.w_self" [in, out], "sage<l>.w_neigh" [in, out], "sage<l>.bias"
/// [1, out]; GCN "gcn<l>.weight" [in, out], "gcn<l>.bias" [1, out] (l = layer_index).
/// Explicitly instantiated for float and double.
template <typename T>
class conv_layer {
 public:
  /// @param in_dim, out_dim  feature widths, >= 1
  /// @param layer_index      keys dropout masks and initialisation; unique within a model
  /// @param dropout          p in [0, 1), applied to the layer's input
  /// @throws logic_error naming the argument when a width is < 1 or p is outside [0, 1).
  /// Parameters start zero; call init.
  conv_layer(conv_kind kind, std::int64_t in_dim, std::int64_t out_dim, std::uint32_t layer_index,
             bool apply_relu, float dropout);

  /// Glorot-uniform weights (Glorot & Bengio, AISTATS 2010, eq. 16: U(-a, a), a = sqrt(6 / (in +
  /// out))), zero bias. Element (r, c) of the k-th weight matrix of this layer is drawn from
  /// rng::draw4(make_stream(seed, purpose::init, layer_index), r, c, k): a pure function of the
  /// key. Clears the gradients.
  void init(std::uint64_t seed);

  /// The layer's output for the block's destinations (see the class comment for the formula).
  /// @param b      the block; indptr [num_dst + 1], indices/weights [num_edges], src_ids
  ///               [num_src] (read only for dropout), src_degree [num_src] (GCN only)
  /// @param h_src  [b.num_src(), in_dim] source features, destinations first
  /// @param key    dropout key; no dropout unless key.training
  /// @param cache  when not null, filled with what backward needs (previous content replaced)
  /// @returns      [b.num_dst, out_dim]
  /// @throws logic_error naming the argument on a shape mismatch or a malformed block (indptr,
  ///         index range, weights or src_degree sizes, negative degree).
  /// Single-threaded, deterministic; allocates the output and intermediates on the host. The
  /// result equals infer(b, h_src, threads) bit for bit when no dropout is applied.
  matrix<T> forward(const block& b, const matrix<T>& h_src, const step_key& key,
                    conv_cache<T>* cache) const;

  /// Backward of forward: returns dL/dh_src [b.num_src(), in_dim] (through dropout, so it is the
  /// gradient with respect to forward's h_src argument) and ADDS dL/dW and dL/dbias into the
  /// parameters' grad.
  /// @param b         the same block that forward saw
  /// @param grad_out  [b.num_dst, out_dim] dL/d(output)
  /// @param cache     filled by forward on (b, h_src)
  /// @throws logic_error on a shape mismatch between grad_out, cache and block.
  /// Deterministic (fixed summation orders).
  matrix<T> backward(const block& b, const matrix<T>& grad_out, const conv_cache<T>& cache);

  /// forward without dropout and cache, destination rows split across `threads` std::threads
  /// (threads >= 1). Each row is computed by the same code whatever the split, so the result is
  /// identical for every thread count. @throws logic_error as forward, or for threads < 1.
  matrix<T> infer(const block& b, const matrix<T>& h_src, int threads) const;

  /// The layer's parameters (pointers stay valid while the layer lives and is not moved).
  std::vector<parameter<T>*> params();

  [[nodiscard]] conv_kind kind() const { return kind_; }
  [[nodiscard]] std::int64_t in_dim() const { return in_dim_; }
  [[nodiscard]] std::int64_t out_dim() const { return out_dim_; }
  [[nodiscard]] std::uint32_t layer_index() const { return layer_index_; }
  [[nodiscard]] bool apply_relu() const { return apply_relu_; }
  [[nodiscard]] float dropout() const { return dropout_; }
  /// True when forward transforms before aggregating (in_dim > out_dim).
  [[nodiscard]] bool transform_first() const { return in_dim_ > out_dim_; }

 private:
  void check_block(const block& b, const matrix<T>& h_src, const char* fn) const;
  void compute(const block& b, const matrix<T>& h, int threads, matrix<T>& mid,
               std::vector<T>& edge_values, matrix<T>& out) const;

  conv_kind kind_;
  std::int64_t in_dim_;
  std::int64_t out_dim_;
  std::uint32_t layer_index_;
  bool apply_relu_;
  float dropout_;
  parameter<T> w_self_;   // SAGE: W_self; GCN: W
  parameter<T> w_neigh_;  // SAGE only
  parameter<T> bias_;
};

/// What linear_layer::forward keeps for backward.
template <typename T>
struct linear_cache {
  matrix<T> x;                     ///< [n, in_dim] input after dropout (a copy)
  std::vector<std::uint8_t> keep;  ///< dropout mask, empty when none applied
  T keep_scale = T{1};
};

/// y = dropout(x) W + b, no activation (an MLP head). Dropout as in conv_layer, keyed by the
/// global ids of the rows. Parameters "linear<l>.weight" [in, out] and "linear<l>.bias" [1, out].
/// Explicitly instantiated for float and double.
template <typename T>
class linear_layer {
 public:
  /// @throws logic_error when a width is < 1 or dropout is outside [0, 1).
  linear_layer(std::int64_t in_dim, std::int64_t out_dim, std::uint32_t layer_index, float dropout);

  /// Glorot-uniform weight keyed as conv_layer::init (stream (seed, init, layer_index), matrix 0),
  /// zero bias, cleared gradients.
  void init(std::uint64_t seed);

  /// @param x        [n, in_dim]
  /// @param row_ids  [n] global vertex ids of x's rows: they key the dropout mask; only read
  ///                 when key.training && p > 0 (may be empty otherwise)
  /// @param cache    when not null, filled for backward
  /// @returns        [n, out_dim]
  /// @throws logic_error on a shape mismatch or a row_ids size != n while dropout applies.
  matrix<T> forward(const matrix<T>& x, std::span<const vid_t> row_ids, const step_key& key,
                    linear_cache<T>* cache) const;

  /// Returns dL/dx [n, in_dim] and ADDS dL/dW, dL/dbias into the parameters' grad.
  /// @param grad_out [n, out_dim]. @throws logic_error on a shape mismatch with the cache.
  matrix<T> backward(const matrix<T>& grad_out, const linear_cache<T>& cache);

  /// forward without dropout, rows split across `threads` (>= 1); identical for any count.
  matrix<T> infer(const matrix<T>& x, int threads) const;

  std::vector<parameter<T>*> params();
  [[nodiscard]] std::int64_t in_dim() const { return in_dim_; }
  [[nodiscard]] std::int64_t out_dim() const { return out_dim_; }
  [[nodiscard]] std::uint32_t layer_index() const { return layer_index_; }
  [[nodiscard]] float dropout() const { return dropout_; }

 private:
  std::int64_t in_dim_;
  std::int64_t out_dim_;
  std::uint32_t layer_index_;
  float dropout_;
  parameter<T> weight_;
  parameter<T> bias_;
};

/// Softmax cross-entropy: returns scale * sum_i -log softmax(logits_i)[labels_i], computed with a
/// log-sum-exp shifted by the row maximum (no overflow), accumulated in double in row order.
/// @param logits  [n, C], C >= 1
/// @param labels  [n], each in [0, C)
/// @param scale   e.g. 1 / global batch size (DESIGN.md section 6, step 5)
/// @param grad    when not null, resized to [n, C] and set to scale * (softmax(logits_i) -
///                onehot(labels_i)); may not alias logits
/// @throws logic_error when labels.size() != n, C < 1 with n > 0, or a label is outside [0, C)
///         (the message names the row and value).
/// Empty: n == 0 returns 0 and grad becomes [0, C]. Deterministic. Instantiated for float/double.
template <typename T>
T softmax_cross_entropy(const matrix<T>& logits, std::span<const std::int64_t> labels, T scale,
                        matrix<T>* grad);

}  // namespace coopgnn::models
