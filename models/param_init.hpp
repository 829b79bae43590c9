// Internal to models/: parameter initialisation and the dropped-out layer input shared by the
// layers (layers.cpp) and the decoders (decoder.cpp). Instantiated for float and double.
#pragma once

#include <cstdint>

#include "models/layers.hpp"

namespace coopgnn::models::detail {

/// Glorot-uniform values of parameter `i` (Glorot & Bengio 2010, eq. 16): element (r, c) of
/// matrix `which` of layer `layer_index` is (2u - 1) sqrt(6 / (rows + cols)) with u from
/// rng::draw4(make_stream(seed, purpose::init, layer_index), r, c, which); computed on the host,
/// copied into the set's space; the gradient is cleared. fan_sum > 0 replaces rows + cols (a
/// stack of matrices drawn with each one's own fan_in + fan_out, e.g. R-GCN's [R in, out]).
template <typename T>
void glorot_uniform(const exec_context& ctx, parameter_set<T>& ps, std::size_t i,
                    std::uint64_t seed, std::uint32_t layer_index, std::uint32_t which,
                    std::int64_t fan_sum = 0);

/// Zero value and gradient of parameter i (biases).
template <typename T>
void zero_param(const exec_context& ctx, parameter_set<T>& ps, std::size_t i);

/// The input a layer computes from: x after keyed dropout when `drop` (mask and scale into
/// keep / keep_scale, the dropped rows into kept), else x itself (copied into kept only when
/// keep_copy).
template <typename T>
tensor_view<const T> layer_input(const exec_context& ctx, tensor_view<const T> x,
                                 buffer_view<const vid_t> ids, const step_key& key,
                                 std::uint32_t layer_index, float p, bool drop, bool keep_copy,
                                 tensor<T>& kept, buffer<std::uint8_t>& keep, T& keep_scale);

/// dL/d(pre-activation) of a layer whose output `out` went through ReLU when `apply_relu`:
/// relu'(out) * grad_out computed into `owned` (same shape), else grad_out itself.
template <typename T>
tensor_view<const T> relu_grad(const exec_context& ctx, tensor_view<const T> grad_out,
                               tensor_view<const T> out, bool apply_relu, tensor<T>& owned);

/// A block's Hajek weights as values of type T: the block's own float array for T = float; a
/// converted copy for T = double (the host reference's double precision, host code only).
template <typename T>
struct edge_weights {
  buffer<T> owned;
  buffer_view<const T> view;
};

/// The weights of `b` as T (see edge_weights). @throws logic_error for T = double off the host.
template <typename T>
edge_weights<T> weights_of(const exec_context& ctx, const block_view& b);

}  // namespace coopgnn::models::detail
