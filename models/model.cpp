#include "models/model.hpp"

#include <numeric>

#include "runtime/core/error.hpp"

namespace coopgnn::models {

block full_neighbor_block(const csc_graph& g) {
  COOPGNN_EXPECTS(g.num_nodes >= 0 && static_cast<vid_t>(g.indptr.size()) == g.num_nodes + 1,
                  "full_neighbor_block: graph has {} nodes but indptr has {} offsets", g.num_nodes,
                  g.indptr.size());
  COOPGNN_EXPECTS(g.indptr.back() == g.num_edges(),
                  "full_neighbor_block: indptr ends at {} but the graph has {} edges",
                  g.indptr.back(), g.num_edges());
  block b;
  b.num_dst = g.num_nodes;
  b.src_ids.resize(static_cast<std::size_t>(g.num_nodes));
  std::iota(b.src_ids.begin(), b.src_ids.end(), vid_t{0});
  b.indptr = g.indptr;
  b.indices.assign(g.indices.begin(), g.indices.end());
  b.weights.resize(g.indices.size());
  b.src_degree.resize(static_cast<std::size_t>(g.num_nodes));
  for (vid_t s = 0; s < g.num_nodes; ++s) {
    eid_t const d = g.in_degree(s);
    b.src_degree[static_cast<std::size_t>(s)] = d;
    float const w = d > 0 ? static_cast<float>(1.0 / static_cast<double>(d)) : 0.0f;
    for (eid_t e = g.indptr[s]; e < g.indptr[s + 1]; ++e)
      b.weights[static_cast<std::size_t>(e)] = w;
  }
  return b;
}

gnn_model::gnn_model(const model_config& config) : config_(config) {
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
  convs_.reserve(static_cast<std::size_t>(config.num_layers));
  for (int i = 0; i < config.num_layers; ++i) {
    bool const last = i + 1 == config.num_layers;
    std::int64_t const in = i == 0 ? config.in_dim : config.hidden;
    std::int64_t const out = last && !config.linear_head ? config.num_classes : config.hidden;
    bool const relu = !last || config.linear_head;
    convs_.emplace_back(config.kind, in, out, static_cast<std::uint32_t>(i), relu, config.dropout);
    convs_.back().init(config.seed);
  }
  if (config.linear_head) {
    head_.emplace(config.hidden, config.num_classes, static_cast<std::uint32_t>(config.num_layers),
                  config.dropout);
    head_->init(config.seed);
  }
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

std::vector<parameter<float>*> gnn_model::params() {
  std::vector<parameter<float>*> all;
  for (auto& c : convs_) {
    for (auto* p : c.params()) all.push_back(p);
  }
  if (head_) {
    for (auto* p : head_->params()) all.push_back(p);
  }
  return all;
}

void gnn_model::zero_grad() {
  for (auto* p : params()) p->grad.fill(0.0f);
}

std::int64_t gnn_model::num_parameters() const {
  // The widths determine the count (params() hands out mutable pointers; no need for them here).
  std::int64_t total = 0;
  for (const auto& c : convs_) {
    std::int64_t const mats = c.kind() == conv_kind::sage ? 2 : 1;
    total += mats * c.in_dim() * c.out_dim() + c.out_dim();
  }
  if (head_) total += head_->in_dim() * head_->out_dim() + head_->out_dim();
  return total;
}

matrix<float> gnn_model::forward(std::span<const block> blocks, const matrix<float>& x,
                                 const step_key& key, model_cache* cache) const {
  COOPGNN_EXPECTS(static_cast<int>(blocks.size()) == num_layers(),
                  "gnn_model::forward: {} blocks for {} layers", blocks.size(), num_layers());
  for (std::size_t i = 0; i + 1 < blocks.size(); ++i) {
    COOPGNN_EXPECTS(blocks[i + 1].num_src() == blocks[i].num_dst,
                    "gnn_model::forward: block {} has {} destinations but block {} has {} sources",
                    i, blocks[i].num_dst, i + 1, blocks[i + 1].num_src());
  }
  if (cache != nullptr) cache->convs.resize(convs_.size());
  matrix<float> h;
  const matrix<float>* in = &x;
  for (std::size_t i = 0; i < convs_.size(); ++i) {
    h = convs_[i].forward(blocks[i], *in, key, cache != nullptr ? &cache->convs[i] : nullptr);
    in = &h;
  }
  if (!head_) return h;
  const block& last = blocks.back();
  std::span<const vid_t> const ids(last.src_ids.data(), static_cast<std::size_t>(last.num_dst));
  return head_->forward(h, ids, key, cache != nullptr ? &cache->head : nullptr);
}

matrix<float> gnn_model::backward(std::span<const block> blocks, const matrix<float>& grad_logits,
                                  const model_cache& cache) {
  COOPGNN_EXPECTS(
      static_cast<int>(blocks.size()) == num_layers() && cache.convs.size() == convs_.size(),
      "gnn_model::backward: {} blocks and {} conv caches for {} layers", blocks.size(),
      cache.convs.size(), num_layers());
  matrix<float> g = head_ ? head_->backward(grad_logits, cache.head) : grad_logits;
  for (std::size_t i = convs_.size(); i-- > 0;) {
    g = convs_[i].backward(blocks[i], g, cache.convs[i]);
  }
  return g;
}

matrix<float> gnn_model::infer_full(const csc_graph& g, const matrix<float>& features,
                                    int threads) const {
  COOPGNN_EXPECTS(features.rows() == g.num_nodes && features.cols() == config_.in_dim,
                  "gnn_model::infer_full: features are [{}, {}], expected [{}, {}]",
                  features.rows(), features.cols(), g.num_nodes, config_.in_dim);
  COOPGNN_EXPECTS(threads >= 1, "gnn_model::infer_full: threads = {} must be >= 1", threads);
  block const full = full_neighbor_block(g);
  matrix<float> h;
  const matrix<float>* in = &features;
  for (const auto& c : convs_) {
    h = c.infer(full, *in, threads);
    in = &h;
  }
  if (head_) return head_->infer(h, threads);
  return h;
}

}  // namespace coopgnn::models
