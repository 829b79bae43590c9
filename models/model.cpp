#include "models/model.hpp"

#include <numeric>

#include "kernels/sample/relation_segment.hpp"
#include "kernels/sample/sampling.hpp"
#include "runtime/core/error.hpp"

namespace coopgnn::models {

block full_neighbor_block(const csc_graph& g) {
  COOPGNN_EXPECTS(g.num_nodes >= 0 && static_cast<vid_t>(g.indptr.size()) == g.num_nodes + 1,
                  "full_neighbor_block: graph has {} nodes but indptr has {} offsets", g.num_nodes,
                  g.indptr.size());
  COOPGNN_EXPECTS(g.indptr.back() == g.num_edges(),
                  "full_neighbor_block: indptr ends at {} but the graph has {} edges",
                  g.indptr.back(), g.num_edges());
  COOPGNN_EXPECTS(g.num_relations >= 1 && (g.etype.empty() || g.etype.size() == g.indices.size()),
                  "full_neighbor_block: {} relations and {} edge types for {} edges",
                  g.num_relations, g.etype.size(), g.indices.size());
  std::int32_t const R = g.num_relations;
  const std::int32_t* etype = g.etype.empty() ? nullptr : g.etype.data();
  block b;
  b.num_dst = g.num_nodes;
  b.num_relations = R;
  b.src_ids.resize(static_cast<std::size_t>(g.num_nodes));
  std::iota(b.src_ids.begin(), b.src_ids.end(), vid_t{0});
  b.indices.assign(g.indices.begin(), g.indices.end());
  b.weights.resize(g.indices.size());
  b.src_degree.resize(static_cast<std::size_t>(g.num_nodes));
  // Row s * R + r is relation r's segment of column s (the whole column untyped): CSC order,
  // so indptr is the segment boundaries and the edges stay in place.
  b.indptr.assign(static_cast<std::size_t>(g.num_nodes) * R + 1, 0);
  for (vid_t s = 0; s < g.num_nodes; ++s) {
    b.src_degree[static_cast<std::size_t>(s)] = g.in_degree(s);
    for (std::int32_t r = 0; r < R; ++r) {
      edge_range const seg = relation_segment(g.indptr.data(), etype, s, r);
      auto const q = static_cast<std::size_t>(s) * R + r;
      b.indptr[q + 1] = seg.end;
      eid_t const d = seg.size();
      float const w = d > 0 ? static_cast<float>(1.0 / static_cast<double>(d)) : 0.0f;
      for (eid_t e = seg.begin; e < seg.end; ++e) b.weights[static_cast<std::size_t>(e)] = w;
    }
  }
  return b;
}

namespace {

/// The constructor's checks and layer registrations (shapes only, nothing allocated): the one
/// place a gnn_model's parameter layout is decided, shared by gnn_model and layout_of.
/// @returns the values of layer 0 (first_layer_values).
std::int64_t register_layers(const model_config& config, parameter_set<float>& params,
                             std::vector<conv_layer<float>>& convs,
                             std::vector<std::optional<norm_activation<float>>>& posts,
                             std::optional<linear_layer<float>>& head,
                             std::optional<link_decoder<float>>& decoder) {
  std::int64_t first = 0;
  COOPGNN_EXPECTS(config.num_layers >= 1, "gnn_model: num_layers = {} must be >= 1",
                  config.num_layers);
  COOPGNN_EXPECTS(config.in_dim >= 1, "gnn_model: in_dim = {} must be >= 1", config.in_dim);
  COOPGNN_EXPECTS(config.num_classes >= 1, "gnn_model: num_classes = {} must be >= 1",
                  config.num_classes);
  bool const needs_hidden = config.num_layers > 1 || config.linear_head;
  COOPGNN_EXPECTS(!needs_hidden || config.hidden >= 1, "gnn_model: hidden = {} must be >= 1",
                  config.hidden);
  COOPGNN_EXPECTS(config.dropout >= 0.0f && config.dropout < 1.0f,
                  "gnn_model: dropout = {} is outside [0, 1)", config.dropout);
  convs.reserve(static_cast<std::size_t>(config.num_layers));
  bool const custom_post = config.layer_norm || config.activation != activation_kind::relu;
  bool const gat = config.kind == conv_kind::gat;
  COOPGNN_EXPECTS(!gat || (config.gat.heads >= 1 && config.out_heads >= 1),
                  "gnn_model: heads = {} and out_heads = {} must be >= 1", config.gat.heads,
                  config.out_heads);
  // The width of every hidden representation (GAT: concatenated heads).
  std::int64_t hidden = config.hidden;
  COOPGNN_EXPECTS(!gat || !__builtin_mul_overflow(config.hidden, config.gat.heads, &hidden),
                  "gnn_model: hidden = {} x heads = {} does not fit 64 bits", config.hidden,
                  config.gat.heads);
  for (int i = 0; i < config.num_layers; ++i) {
    bool const last = i + 1 == config.num_layers;
    std::int64_t const in = i == 0 ? config.in_dim : hidden;
    bool const to_classes = last && !config.linear_head;
    std::int64_t const out = to_classes ? config.num_classes : hidden;
    bool const activated = !last || config.linear_head;
    gat_options go = config.gat;
    if (to_classes) {
      go.heads = config.out_heads;
      go.concat = false;
    }
    convs.emplace_back(config.kind, in, out, static_cast<std::uint32_t>(i),
                       activated && !custom_post, config.dropout, params, go, config.rgcn);
    posts.emplace_back();
    if (activated && custom_post) {
      posts.back().emplace(out, config.layer_norm, config.activation, static_cast<std::uint32_t>(i),
                           params);
    }
    if (i == 0) first = params.num_values();
  }
  if (config.linear_head) {
    head.emplace(hidden, config.num_classes, static_cast<std::uint32_t>(config.num_layers),
                 config.dropout, params);
  }
  if (config.decoder) {
    decoder.emplace(*config.decoder, config.num_classes, config.decoder_hidden,
                    static_cast<std::uint32_t>(config.num_layers + 1), params,
                    config.decoder_relations);
  }
  return first;
}

}  // namespace

model_layout layout_of(const model_config& config) {
  parameter_set<float> params;
  std::vector<conv_layer<float>> convs;
  std::vector<std::optional<norm_activation<float>>> posts;
  std::optional<linear_layer<float>> head;
  std::optional<link_decoder<float>> decoder;
  model_layout l;
  l.first_layer_values = register_layers(config, params, convs, posts, head, decoder);
  l.tensors = params.infos();
  l.num_values = params.num_values();
  return l;
}

gnn_model::gnn_model(const exec_context& ctx, const model_config& config)
    : ctx_(ctx), config_(config) {
  first_layer_values_ = register_layers(config, params_, convs_, posts_, head_, decoder_);
  params_.allocate(ctx_);
  for (auto& c : convs_) c.init(ctx_, config.seed);
  for (auto& p : posts_) {
    if (p) p->init(ctx_);
  }
  if (head_) head_->init(ctx_, config.seed);
  if (decoder_) decoder_->init(ctx_, config.seed);
}

gnn_model::gnn_model(const exec_context& ctx, const gnn_model& initial)
    : ctx_(ctx), config_(initial.config_) {
  first_layer_values_ = register_layers(config_, params_, convs_, posts_, head_, decoder_);
  params_.allocate(ctx_);  // values and gradients zero
  copy_parameters_from(initial);
}

tensor<float> gnn_model::forward_layer(int i, const exec_context& ctx, const block_view& b,
                                       tensor_view<const float> h_src, const step_key& key,
                                       layer_cache* cache) const {
  tensor<float> h = layer(i).forward(ctx, b, h_src, key, cache != nullptr ? &cache->conv : nullptr);
  const norm_activation<float>* p = post(i);
  if (p == nullptr) return h;
  return p->forward(ctx, h.view(), cache != nullptr ? &cache->post : nullptr);
}

tensor<float> gnn_model::backward_layer(int i, const exec_context& ctx, const block_view& b,
                                        tensor_view<const float> grad_out, const layer_cache& cache,
                                        bool input_grad) {
  auto& p = posts_.at(static_cast<std::size_t>(i));
  if (!p) return layer(i).backward(ctx, b, grad_out, cache.conv, input_grad);
  tensor<float> const g = p->backward(ctx, grad_out, cache.post);
  return layer(i).backward(ctx, b, g.view(), cache.conv, input_grad);
}

const norm_activation<float>* gnn_model::post(int i) const {
  COOPGNN_EXPECTS(i >= 0 && i < num_layers(), "gnn_model::post: index {} outside [0, {})", i,
                  num_layers());
  auto const& p = posts_[static_cast<std::size_t>(i)];
  return p ? &*p : nullptr;
}

conv_layer<float>& gnn_model::layer(int i) {
  COOPGNN_EXPECTS(i >= 0 && i < num_layers(), "gnn_model::layer: index {} outside [0, {})", i,
                  num_layers());
  return convs_[static_cast<std::size_t>(i)];
}

const conv_layer<float>& gnn_model::layer(int i) const {
  COOPGNN_EXPECTS(i >= 0 && i < num_layers(), "gnn_model::layer: index {} outside [0, {})", i,
                  num_layers());
  return convs_[static_cast<std::size_t>(i)];
}

void gnn_model::zero_grad() { fill_zero(ctx_, params_.grads()); }

void gnn_model::copy_parameters_from(const gnn_model& other) {
  auto const& mine = params_.infos();
  auto const& theirs = other.params_.infos();
  COOPGNN_EXPECTS(mine.size() == theirs.size(),
                  "gnn_model::copy_parameters_from: {} parameters here, {} in the source",
                  mine.size(), theirs.size());
  for (std::size_t i = 0; i < mine.size(); ++i) {
    COOPGNN_EXPECTS(mine[i].name == theirs[i].name && mine[i].rows == theirs[i].rows &&
                        mine[i].cols == theirs[i].cols,
                    "gnn_model::copy_parameters_from: parameter {} is '{}' [{}, {}] here but "
                    "'{}' [{}, {}] in the source",
                    i, mine[i].name, mine[i].rows, mine[i].cols, theirs[i].name, theirs[i].rows,
                    theirs[i].cols);
  }
  // A copy involving device memory runs under the device side's context.
  const exec_context& ctx = params_.space() == memory_space::device ? ctx_ : other.ctx_;
  copy<float>(ctx, params_.values(), other.params_.values());
}

void gnn_model::copy_parameters_from(std::span<const float> values) {
  COOPGNN_EXPECTS(static_cast<std::int64_t>(values.size()) == num_parameters(),
                  "gnn_model::copy_parameters_from: {} values for the model's {} parameters",
                  values.size(), num_parameters());
  copy<float>(ctx_, params_.values(), host_view(values));
  synchronize(ctx_);  // `values` may be released or overwritten once this returns
}

tensor<float> gnn_model::forward(std::span<const block_view> blocks, tensor_view<const float> x,
                                 const step_key& key, model_cache* cache) const {
  COOPGNN_EXPECTS(static_cast<int>(blocks.size()) == num_layers(),
                  "gnn_model::forward: {} blocks for {} layers", blocks.size(), num_layers());
  for (std::size_t i = 0; i + 1 < blocks.size(); ++i) {
    COOPGNN_EXPECTS(blocks[i + 1].num_src == blocks[i].num_dst,
                    "gnn_model::forward: block {} has {} destinations but block {} has {} sources",
                    i, blocks[i].num_dst, i + 1, blocks[i + 1].num_src);
  }
  if (cache != nullptr) cache->convs.resize(convs_.size());
  tensor<float> h;
  tensor_view<const float> in = x;
  for (std::size_t i = 0; i < convs_.size(); ++i) {
    h = forward_layer(static_cast<int>(i), ctx_, blocks[i], in, key,
                      cache != nullptr ? &cache->convs[i] : nullptr);
    in = h.view();
  }
  if (!head_) return h;
  const block_view& last = blocks.back();
  buffer_view<const vid_t> const ids{last.src_ids, static_cast<std::size_t>(last.num_dst),
                                     last.space};
  return head_->forward(ctx_, h.view(), ids, key, cache != nullptr ? &cache->head : nullptr);
}

tensor<float> gnn_model::backward(std::span<const block_view> blocks,
                                  tensor_view<const float> grad_logits, const model_cache& cache,
                                  bool input_grad) {
  COOPGNN_EXPECTS(
      static_cast<int>(blocks.size()) == num_layers() && cache.convs.size() == convs_.size(),
      "gnn_model::backward: {} blocks and {} conv caches for {} layers", blocks.size(),
      cache.convs.size(), num_layers());
  tensor<float> g;
  tensor_view<const float> gv = grad_logits;
  if (head_) {
    g = head_->backward(ctx_, grad_logits, cache.head);
    gv = g.view();
  }
  for (std::size_t i = convs_.size(); i-- > 0;) {
    tensor<float> next = backward_layer(static_cast<int>(i), ctx_, blocks[i], gv, cache.convs[i],
                                        i > 0 || input_grad);
    g = std::move(next);
    gv = g.view();
  }
  return g;
}

matrix<float> gnn_model::infer_full(const csc_graph& g, const matrix<float>& features,
                                    int threads) const {
  COOPGNN_EXPECTS(features.rows() == g.num_nodes && features.cols() == config_.in_dim,
                  "gnn_model::infer_full: features are [{}, {}], expected [{}, {}]",
                  features.rows(), features.cols(), g.num_nodes, config_.in_dim);
  COOPGNN_EXPECTS(threads >= 1, "gnn_model::infer_full: threads = {} must be >= 1", threads);
  exec_context const ctx = ctx_.with_threads(threads);
  block const full = full_neighbor_block(g);
  // The block and the features where the model computes: views on the host, copies elsewhere.
  block_view bv = view(full);
  block_buffers placed;
  tensor<float> x_placed;
  tensor_view<const float> x = host_view(features);
  if (ctx.space() != memory_space::host) {
    placed = upload_block(ctx, full);
    bv = placed.view();
    x_placed = upload<float>(ctx, features);
    x = x_placed.view();
  }
  tensor<float> h;
  tensor_view<const float> in = x;
  step_key const none{};
  for (int i = 0; i < num_layers(); ++i) {
    h = forward_layer(i, ctx, bv, in, none, nullptr);
    in = h.view();
  }
  if (head_) h = head_->forward(ctx, in, {}, none, nullptr);
  return to_host(ctx, std::move(h));
}

}  // namespace coopgnn::models
