// The layers link prediction adds (docs/design.md section 7.1): PReLU and LayerNorm for the
// TMA paper's hidden-layer order Conv -> LayerNorm -> PReLU -> Dropout, and the edge decoders
// (dot product; an MLP on the Hadamard product). Written once for every backend, like
// models/layers.hpp: parameters in a parameter_set of the context's space, every step a kernel
// entry (kernels/dense/link_ops.hpp, gemm, gather). Explicitly instantiated for float and double
// (double: host and emulated backends only, for finite-difference tests).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "models/layers.hpp"

namespace coopgnn::models {

/// What a hidden layer applies after its convolution (the TMA paper's encoders: Conv ->
/// LayerNorm -> PReLU -> Dropout, dropout being the next layer's input dropout).
enum class activation_kind {
  relu,   ///< max(x, 0)
  prelu,  ///< PReLU with one learnable slope per layer (He et al., ICCV 2015; PyTorch's default)
};
std::string to_string(activation_kind k);
/// Parses "relu" or "prelu". @throws logic_error naming the value and the accepted names.
activation_kind parse_activation_kind(const std::string& name);

/// Edge decoder of link prediction.
enum class decoder_kind {
  dot,  ///< s(u, v) = <z_u, z_v>
  mlp,  ///< s(u, v) = w2 . PReLU(W1 (z_u * z_v) + b1) + b2 (the TMA paper's default decoder)
  /// s(u, r, v) = sum_k z_u[k] w_r[k] z_v[k], one learnt diagonal w_r per relation (Yang et al.,
  /// ICLR 2015, "Embedding entities and relations for learning and inference in knowledge
  /// bases", eq. 3 with diagonal M_r; Schlichtkrull et al. 2018 sec. 4, R-GCN's decoder)
  distmult,
};
std::string to_string(decoder_kind k);
/// Parses "dot", "mlp" or "distmult". @throws logic_error naming the value and the accepted names.
decoder_kind parse_decoder_kind(const std::string& name);

/// What norm_activation::forward keeps for backward.
template <typename T>
struct norm_activation_cache {
  tensor<T> x;     ///< [n, d] the input (LayerNorm's input, or the activation's without it)
  tensor<T> pre;   ///< [n, d] the activation's input (LayerNorm's output); empty without norm
  buffer<T> mean;  ///< [n] LayerNorm statistics
  buffer<T> rstd;  ///< [n]
  tensor<T> out;   ///< [n, d] the output (ReLU's backward reads it)
  [[nodiscard]] std::int64_t bytes() const {
    return static_cast<std::int64_t>(x.bytes() + pre.bytes() + mean.bytes() + rstd.bytes() +
                                     out.bytes());
  }
};

/// y = act(LayerNorm(x)) (LayerNorm optional), row-wise over [n, d]:
///   LayerNorm (Ba, Kiros & Hinton 2016): (x - mean) / sqrt(var + 1e-5) * gamma + beta, biased
///   variance, gamma = 1 and beta = 0 at initialisation;
///   act: ReLU, or PReLU with slope alpha (0.25 at initialisation, PyTorch's default).
/// Parameters: "ln<l>.gamma" [1, d], "ln<l>.beta" [1, d] with the norm; "prelu<l>.alpha" [1, 1]
/// with PReLU (l = layer_index).
template <typename T>
class norm_activation {
 public:
  /// @throws logic_error when dim < 1 or params is already allocated.
  norm_activation(std::int64_t dim, bool layer_norm, activation_kind act, std::uint32_t layer_index,
                  parameter_set<T>& params);
  /// gamma = 1, beta = 0, alpha = 0.25; gradients cleared.
  void init(const exec_context& ctx);
  /// @param x [n, dim] in ctx.space(); @param cache filled for backward when not null
  /// @returns [n, dim]. @throws logic_error on a shape or space mismatch.
  tensor<T> forward(const exec_context& ctx, tensor_view<const T> x,
                    norm_activation_cache<T>* cache) const;
  /// Returns dL/dx and ADDS the parameters' gradients. @param grad_out [n, dim]
  /// @throws logic_error on a shape mismatch with the cache.
  tensor<T> backward(const exec_context& ctx, tensor_view<const T> grad_out,
                     const norm_activation_cache<T>& cache);

  [[nodiscard]] std::int64_t dim() const { return dim_; }
  [[nodiscard]] bool layer_norm() const { return layer_norm_; }
  [[nodiscard]] activation_kind activation() const { return act_; }

 private:
  std::int64_t dim_;
  bool layer_norm_;
  activation_kind act_;
  parameter_set<T>* params_;
  std::size_t gamma_ = 0, beta_ = 0, alpha_ = 0;
};

/// What link_decoder::forward keeps for backward.
template <typename T>
struct decoder_cache {
  tensor<T> zu, zv;        ///< [m, d] the endpoints' rows
  linear_cache<T> l1, l2;  ///< mlp
  tensor<T> pre;           ///< mlp: [m, hidden] W1 x + b1 (PReLU's input)
  tensor<T> wr;            ///< distmult: [m, d] the pairs' relation diagonals w_{r_i}
  [[nodiscard]] std::int64_t bytes() const {
    return static_cast<std::int64_t>(zu.bytes() + zv.bytes() + pre.bytes() + wr.bytes()) +
           l1.bytes() + l2.bytes();
  }
};

/// Scores pairs of rows of an embedding matrix z [n, d]: pair i is (z[src[i]], z[dst[i]]), of
/// relation rel[i] on a typed graph.
///   dot: s_i = <z_u, z_v>;
///   mlp: s_i = PReLU((z_u * z_v) W1 + b1) w2 + b2, W1 [d, hidden], w2 [hidden, 1], one PReLU
///        slope (0.25 at init); linears Glorot-uniform, zero biases (the TMA paper's decoder);
///   distmult: s_i = sum_k z_u[k] W[rel_i, k] z_v[k], W [num_relations, d] (row r = the diagonal
///        of relation r), all ones at init (the dot decoder's scores; Yang et al. 2015).
///        Written on gather_rows, hadamard, row_dot (forward) and scale_rows, scatter_add_rows
///        (backward: dz_u = g w_r * z_v, dz_v = g z_u * w_r, dW[r] += g z_u * z_v), so every
///        backend runs the same steps.
/// Parameters: mlp: "linear<l>.weight"/"linear<l>.bias" for W1 (l = layer_index) and for w2
/// (l = layer_index + 1), "prelu<l>.alpha" (l = layer_index); distmult: "distmult<l>.relation"
/// [num_relations, d] (l = layer_index). No dropout inside.
template <typename T>
class link_decoder {
 public:
  /// @param dim     d, the encoder's output width, >= 1
  /// @param hidden  mlp width, >= 1 (ignored otherwise)
  /// @param num_relations  distmult: relations R >= 1 (the graph's edge types; 1 untyped);
  ///                ignored otherwise
  /// @throws logic_error on a width or relation count < 1 or an allocated params.
  link_decoder(decoder_kind kind, std::int64_t dim, std::int64_t hidden, std::uint32_t layer_index,
               parameter_set<T>& params, std::int64_t num_relations = 1);
  /// Keyed Glorot init of the linears (as conv_layer::init), alpha = 0.25; distmult: W = 1.
  /// No-op for dot.
  void init(const exec_context& ctx, std::uint64_t seed);

  /// @param z     [n, dim] in ctx.space()
  /// @param src, dst  [m] int64 row indices into z, in ctx.space() (host: an index outside
  ///              [0, n) throws logic_error naming it; CUDA: the caller guarantees them)
  /// @param cache filled for backward when not null
  /// @returns scores [m] in ctx.space()
  buffer<T> forward(const exec_context& ctx, tensor_view<const T> z,
                    buffer_view<const std::int64_t> src, buffer_view<const std::int64_t> dst,
                    decoder_cache<T>* cache) const;
  /// forward with the pairs' relations: @param rel [m] int64 in [0, num_relations), in
  /// ctx.space() (distmult; empty = relation 0 for every pair; ignored by dot and mlp).
  /// Host: a relation outside throws logic_error naming it.
  buffer<T> forward(const exec_context& ctx, tensor_view<const T> z,
                    buffer_view<const std::int64_t> src, buffer_view<const std::int64_t> dst,
                    buffer_view<const std::int64_t> rel, decoder_cache<T>* cache) const;

  /// ADDS the parameters' gradients for dL/ds = grad_scores [m] and returns dL/dz [n, dim]
  /// (zero rows for rows no pair reads; every pair's source term is added, in pair order,
  /// then every destination term: deterministic, the same on every backend).
  /// @param n  z's row count in forward
  tensor<T> backward(const exec_context& ctx, buffer_view<const T> grad_scores,
                     buffer_view<const std::int64_t> src, buffer_view<const std::int64_t> dst,
                     std::int64_t n, const decoder_cache<T>& cache);
  /// backward with the pairs' relations (the `rel` given to forward): distmult also ADDS
  /// dW[rel_i] += g_i z_u * z_v in pair order (deterministic, every backend alike).
  tensor<T> backward(const exec_context& ctx, buffer_view<const T> grad_scores,
                     buffer_view<const std::int64_t> src, buffer_view<const std::int64_t> dst,
                     buffer_view<const std::int64_t> rel, std::int64_t n,
                     const decoder_cache<T>& cache);

  [[nodiscard]] decoder_kind kind() const { return kind_; }
  [[nodiscard]] std::int64_t dim() const { return dim_; }
  [[nodiscard]] std::int64_t hidden() const { return hidden_; }
  [[nodiscard]] std::int64_t num_relations() const { return num_relations_; }

 private:
  decoder_kind kind_;
  std::int64_t dim_;
  std::int64_t hidden_;
  std::uint32_t layer_index_;
  parameter_set<T>* params_;
  std::vector<linear_layer<T>> linears_;  // mlp: W1, w2
  std::size_t alpha_ = 0;
  std::int64_t num_relations_ = 1;
  std::size_t rel_weight_ = 0;  // distmult: [num_relations, dim]
};

}  // namespace coopgnn::models
