// A stack of graph convolutions with an optional linear head (docs/design.md section 1, models;
// section 6, the per-layer forward and backward the minibatch protocols drive). One model for
// every backend: it lives in the memory space of the exec_context it is built on (host, a CUDA
// device, or the emulated device) and runs its layers through the kernel entries there.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "kernels/sample/block.hpp"
#include "models/layers.hpp"
#include "models/link_layers.hpp"
#include "runtime/core/exec_context.hpp"
#include "runtime/core/matrix.hpp"
#include "runtime/core/memory.hpp"
#include "runtime/graph/csc.hpp"

namespace coopgnn::models {

/// The shape and seeds of a gnn_model.
struct model_config {
  conv_kind kind = conv_kind::sage;
  std::int64_t in_dim = 0;       ///< input feature width
  std::int64_t hidden = 0;       ///< width of every hidden representation
  std::int64_t num_classes = 0;  ///< logits width
  int num_layers = 0;            ///< graph convolutions, >= 1
  bool linear_head = false;      ///< add a linear hidden -> num_classes layer after the convs
  float dropout = 0.0f;          ///< p in [0, 1) on the input of every conv and of the head
  std::uint64_t seed = 0;        ///< initialisation seed (rng::purpose::init)
  /// After every hidden conv (those followed by an activation): LayerNorm before the activation
  /// (the TMA paper's Conv -> LayerNorm -> PReLU -> Dropout).
  bool layer_norm = false;
  activation_kind activation = activation_kind::relu;  ///< of every hidden conv
  /// Link prediction: the edge decoder scoring pairs of the encoder's outputs (num_classes is
  /// then the embedding width); empty for node classification.
  std::optional<decoder_kind> decoder;
  std::int64_t decoder_hidden = 0;  ///< mlp decoder width, >= 1 with decoder mlp
  /// distmult decoder: its relation diagonals [decoder_relations, num_classes], one per edge
  /// type of the graph (1 untyped); the pairs' relation indices are edge-type indices.
  std::int64_t decoder_relations = 1;
  /// GAT (kind gat): hidden convs concatenate `heads` heads of `hidden` features each (their
  /// output, and the next layer's input, is heads * hidden wide); the last conv (without a head)
  /// averages `out_heads` heads of num_classes (the paper's output layer, eq. 6). attention
  /// dropout, slope, residual and self-loops as gat_options.
  gat_options gat;
  std::int64_t out_heads = 1;
  /// R-GCN (kind rgcn): relations, bases and self-loop weight of every conv (rgcn_options); the
  /// blocks must be typed with rgcn.num_relations rows per destination.
  rgcn_options rgcn;
};

/// The full-neighbour block of a graph: every vertex is a destination and a source in id order
/// (src_ids = dst = 0..n-1), edges are the CSC in-edges in CSC order, weights[e] = 1 / d_s for
/// edges into s (d_s = in-degree), src_degree = in-degrees. A GCN layer on it computes exactly the
/// full-batch layer D^-1/2 (A + I) D^-1/2 H W + b, a SAGE layer the full neighbourhood mean.
/// Typed graph (R = g.num_relations): num_relations = R, row s * R + r holds s's in-edges of
/// relation r (CSC order), weights 1 / d_r(s) (R-GCN's 1 / |N_r(s)|), src_degree = the total
/// in-degree; the untyped layout for R = 1.
/// @param g  a valid CSC (see validate_csc); O(V R log d + E) time, copies the edges.
/// @returns  a block with num_dst = num_src = g.num_nodes. Empty graph: an empty block.
block full_neighbor_block(const csc_graph& g);

/// What one layer of a gnn_model (its conv and, on hidden layers with LayerNorm or PReLU, the
/// norm_activation after it) keeps for backward.
struct layer_cache {
  conv_cache<float> conv;
  norm_activation_cache<float> post;
  [[nodiscard]] std::int64_t bytes() const { return conv.bytes() + post.bytes(); }
};

/// What gnn_model::forward keeps for backward: one cache per layer and the head's.
struct model_cache {
  std::vector<layer_cache> convs;
  linear_cache<float> head;
};

/// The parameters a gnn_model of some model_config has, from the shapes alone.
struct model_layout {
  std::vector<param_info> tensors;  ///< names, [rows, cols] and offsets, in params() order
  /// Sum of rows x cols: the model's num_parameters(); INT64_MAX when it does not fit 64 bits
  /// (parameter_set::add saturates; such a model can never be allocated).
  std::int64_t num_values = 0;
  std::int64_t first_layer_values = 0;  ///< gnn_model::first_layer_values()
};

/// What gnn_model(ctx, config) would register, without allocating or initialising anything:
/// the constructor's checks and layer registrations are this very code (register_layers in
/// model.cpp), so the layout is the model's. Host only, O(num_layers); allocates only the
/// names. For size checks before a model exists (train --dry-run, the run's memory check, a
/// saved model's manifest against its tensors).
/// @throws logic_error as the constructor does (a width < 1, num_layers < 1, dropout outside
///         [0, 1), GAT heads < 1 or hidden x heads beyond 64 bits, the layers' own checks).
model_layout layout_of(const model_config& config);

/// num_layers graph convolutions (layer 0 consumes the input features) and an optional linear
/// head, float32, in the memory space of its context.
///
/// Widths (GAT: hidden stands for heads * hidden, see model_config::gat): conv 0 maps in_dim ->
/// hidden, convs in between hidden -> hidden; the last conv maps to num_classes without a head (and
/// then has no ReLU), to hidden with a head (ReLU after every conv). Dropout p on the input of
/// every conv and of the head. Layer i (conv) has layer_index i, the head has layer_index
/// num_layers: they key dropout masks and initialisation (from config.seed) separately. With
/// layer_norm or activation prelu, every conv followed by an activation computes without ReLU and a
/// norm_activation (layer_index i) follows it. With a decoder (link prediction) a link_decoder
/// (layer_index num_layers + 1) scores pairs of the outputs. All parameters share one parameter_set
/// (params()): each conv then its norm_activation, in layer order, then the head, then the decoder.
class gnn_model {
 public:
  /// Builds the layers, allocates the parameters in ctx.space() and initialises them (computed
  /// on the host from config.seed and copied, so every backend starts from the same bits).
  /// @param ctx  the PE's context; its resources must outlive the model
  /// @throws logic_error naming the field when a width is < 1, num_layers < 1, or dropout is
  ///         outside [0, 1); cuda_error when the device pool is exhausted.
  gnn_model(const exec_context& ctx, const model_config& config);
  /// A replica of `initial`: its config's layers, parameters allocated in ctx.space(), values
  /// copied from `initial` instead of drawn, gradients zero. For a freshly built `initial` this
  /// is bit for bit gnn_model(ctx, initial.config()) (initialisation depends on config.seed
  /// alone), without the draws: what P replicas of one model need. Same memory rules and
  /// errors as copy_parameters_from; synchronises when it copies from device memory.
  gnn_model(const exec_context& ctx, const gnn_model& initial);

  [[nodiscard]] const model_config& config() const { return config_; }
  [[nodiscard]] const exec_context& context() const { return ctx_; }
  [[nodiscard]] int num_layers() const { return static_cast<int>(convs_.size()); }
  /// Conv layer i in [0, num_layers()); @throws logic_error for an out-of-range i.
  conv_layer<float>& layer(int i);
  const conv_layer<float>& layer(int i) const;
  /// Layer i's forward: conv i, then its norm_activation when it has one.
  /// @param b, h_src, key as conv_layer::forward; @param cache filled for backward when not null
  tensor<float> forward_layer(int i, const exec_context& ctx, const block_view& b,
                              tensor_view<const float> h_src, const step_key& key,
                              layer_cache* cache) const;
  /// Backward of forward_layer: ADDS the layer's parameter gradients, returns dL/dh_src (empty
  /// when input_grad is false).
  tensor<float> backward_layer(int i, const exec_context& ctx, const block_view& b,
                               tensor_view<const float> grad_out, const layer_cache& cache,
                               bool input_grad);
  /// The norm_activation after conv i, or nullptr.
  const norm_activation<float>* post(int i) const;
  /// The link decoder, or nullptr for node classification.
  link_decoder<float>* decoder() { return decoder_ ? &*decoder_ : nullptr; }
  const link_decoder<float>* decoder() const { return decoder_ ? &*decoder_ : nullptr; }
  /// The linear head, or nullptr when config.linear_head is false.
  linear_layer<float>* head() { return head_ ? &*head_ : nullptr; }
  const linear_layer<float>* head() const { return head_ ? &*head_ : nullptr; }

  /// Every parameter: values and gradients in two flat buffers (convs in order, then the head).
  parameter_set<float>& params() { return params_; }
  const parameter_set<float>& params() const { return params_; }
  /// Sets every gradient to zero.
  void zero_grad();
  /// Total number of trainable scalars.
  [[nodiscard]] std::int64_t num_parameters() const { return params_.num_values(); }
  /// How many leading values of params() belong to layer 0 (conv 0 and its norm_activation):
  /// the prefix that adam_options::decay_values selects for first-layer weight decay (Kipf &
  /// Welling, ICLR 2017, section 5.3).
  [[nodiscard]] std::int64_t first_layer_values() const { return first_layer_values_; }

  /// Parameter values copied from `other` (same configuration, any memory space): e.g. a host
  /// replica receives a device replica's weights for evaluation. Synchronises when it downloads.
  /// @throws logic_error when the parameter layouts differ (the message names the first one).
  void copy_parameters_from(const gnn_model& other);
  /// Parameter values copied from `values` (host memory, num_parameters() floats, flat in
  /// params() order, as parameter_set::values() lays them out) into the model's space, e.g. the
  /// TMA server's host model receiving an averaged replica. Synchronises the model's context.
  /// @throws logic_error naming both sizes when values.size() != num_parameters().
  void copy_parameters_from(std::span<const float> values);

  /// Minibatch forward on one PE: blocks[i] is consumed by conv i (blocks[0] is the input side,
  /// i.e. the reverse of sampling order); blocks[i + 1].num_src must equal blocks[i].num_dst.
  /// @param blocks  [num_layers] views in the model's space
  /// @param x       [blocks[0].num_src, in_dim] input features of blocks[0]'s sources
  /// @param key     dropout key (training flag, run seed, batch)
  /// @param cache   when not null, filled for backward
  /// @returns       logits [blocks.back().num_dst, num_classes]
  /// @throws logic_error when blocks.size() != num_layers() or shapes do not chain.
  tensor<float> forward(std::span<const block_view> blocks, tensor_view<const float> x,
                        const step_key& key, model_cache* cache) const;

  /// Backward of forward: ADDS every parameter's gradient for dL/dlogits = grad_logits
  /// [blocks.back().num_dst, num_classes]; returns dL/dx [blocks[0].num_src, in_dim] when
  /// input_grad, else an empty tensor.
  /// @throws logic_error on a shape mismatch with blocks or cache.
  tensor<float> backward(std::span<const block_view> blocks, tensor_view<const float> grad_logits,
                         const model_cache& cache, bool input_grad = true);

  /// Layer-wise full-neighbour inference over all vertices (no dropout): every layer runs on
  /// full_neighbor_block(g) over all vertices, then the head (both copied to the model's space
  /// when it is not the host).
  /// @param features  [g.num_nodes, in_dim] host matrix
  /// @param threads   >= 1: host kernels split their rows over this many threads; each row is
  ///                  computed by the same code, so the result is identical for any count
  /// @returns logits [g.num_nodes, num_classes] on the host
  /// @throws logic_error on a feature shape mismatch or threads < 1.
  matrix<float> infer_full(const csc_graph& g, const matrix<float>& features, int threads) const;

  gnn_model(const gnn_model&) = delete;
  gnn_model& operator=(const gnn_model&) = delete;

 private:
  exec_context ctx_;
  model_config config_;
  parameter_set<float> params_;
  std::int64_t first_layer_values_ = 0;
  std::vector<conv_layer<float>> convs_;
  std::vector<std::optional<norm_activation<float>>> posts_;  // [num_layers]
  std::optional<linear_layer<float>> head_;
  std::optional<link_decoder<float>> decoder_;
};

}  // namespace coopgnn::models
