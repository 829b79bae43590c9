// A stack of graph convolutions with an optional linear head (DESIGN.md section 1, "models";
// section 6, the per-layer forward and backward the minibatch protocols drive).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "kernels/sample/block.hpp"
#include "models/layers.hpp"
#include "runtime/core/matrix.hpp"
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
};

/// The full-neighbour block of a graph: every vertex is a destination and a source in id order
/// (src_ids = dst = 0..n-1), edges are the CSC in-edges in CSC order, weights[e] = 1 / d_s for
/// edges into s (d_s = in-degree), src_degree = in-degrees. A GCN layer on it computes exactly the
/// full-batch layer D^-1/2 (A + I) D^-1/2 H W + b, a SAGE layer the full neighbourhood mean.
/// @param g  a valid CSC (see validate_csc); O(V + E) time, copies the edges.
/// @returns  a block with num_dst = num_src = g.num_nodes. Empty graph: an empty block.
block full_neighbor_block(const csc_graph& g);

/// What gnn_model::forward keeps for backward: one cache per conv and the head's.
struct model_cache {
  std::vector<conv_cache<float>> convs;
  linear_cache<float> head;
};

/// num_layers graph convolutions (layer 0 consumes the input features) and an optional linear
/// head, float32 on the host.
///
/// Widths: conv 0 maps in_dim -> hidden, convs in between hidden -> hidden; the last conv maps to
/// num_classes without a head (and then has no ReLU), to hidden with a head (ReLU after every
/// conv). Dropout p on the input of every conv and of the head. Layer i (conv) has layer_index i,
/// the head has layer_index num_layers: they key dropout masks and initialisation (from
/// config.seed) separately.
class gnn_model {
 public:
  /// Builds and initialises the layers.
  /// @throws logic_error naming the field when a width is < 1, num_layers < 1, or dropout is
  ///         outside [0, 1).
  explicit gnn_model(const model_config& config);

  [[nodiscard]] const model_config& config() const { return config_; }
  [[nodiscard]] int num_layers() const { return static_cast<int>(convs_.size()); }
  /// Conv layer i in [0, num_layers()); @throws logic_error for an out-of-range i.
  conv_layer<float>& layer(int i);
  const conv_layer<float>& layer(int i) const;
  /// The linear head, or nullptr when config.linear_head is false.
  linear_layer<float>* head() { return head_ ? &*head_ : nullptr; }
  const linear_layer<float>* head() const { return head_ ? &*head_ : nullptr; }

  /// Every parameter, convs in order then the head. Pointers stay valid while the model lives
  /// (the model is neither copyable nor movable).
  std::vector<parameter<float>*> params();
  /// Sets every gradient to zero.
  void zero_grad();
  /// Total number of trainable scalars.
  [[nodiscard]] std::int64_t num_parameters() const;

  /// Minibatch forward on one PE: blocks[i] is consumed by conv i (blocks[0] is the input side,
  /// i.e. the reverse of sampling order); blocks[i + 1].num_src() must equal blocks[i].num_dst.
  /// @param x      [blocks[0].num_src(), in_dim] input features of blocks[0]'s sources
  /// @param key    dropout key (training flag, run seed, batch)
  /// @param cache  when not null, filled for backward
  /// @returns      logits [blocks.back().num_dst, num_classes]
  /// @throws logic_error when blocks.size() != num_layers() or shapes do not chain.
  matrix<float> forward(std::span<const block> blocks, const matrix<float>& x, const step_key& key,
                        model_cache* cache) const;

  /// Backward of forward: ADDS every parameter's gradient for dL/dlogits = grad_logits
  /// [blocks.back().num_dst, num_classes]; returns dL/dx [blocks[0].num_src(), in_dim].
  /// @throws logic_error on a shape mismatch with blocks or cache.
  matrix<float> backward(std::span<const block> blocks, const matrix<float>& grad_logits,
                         const model_cache& cache);

  /// Layer-wise full-neighbour inference over all vertices (no dropout): every layer runs on
  /// full_neighbor_block(g) over all vertices, then the head.
  /// @param features  [g.num_nodes, in_dim]
  /// @param threads   >= 1: destination (and source-transform) rows split across std::threads;
  ///                  each row is computed by the same code, so the result is identical for any
  ///                  thread count
  /// @returns logits [g.num_nodes, num_classes]
  /// @throws logic_error on a feature shape mismatch or threads < 1.
  matrix<float> infer_full(const csc_graph& g, const matrix<float>& features, int threads) const;

  gnn_model(const gnn_model&) = delete;
  gnn_model& operator=(const gnn_model&) = delete;

 private:
  model_config config_;
  std::vector<conv_layer<float>> convs_;
  std::optional<linear_layer<float>> head_;
};

}  // namespace coopgnn::models
