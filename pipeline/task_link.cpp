// Link prediction (docs/design.md section 7.1): a batch of positive training pairs with keyed
// tail-corrupted negatives; the encoder's seeds are the pairs' endpoints, which reach the PE that
// scores a pair along the protocol's pairs route; the decoder scores the pairs and the loss is the
// binary cross-entropy over the B (1 + k) pairs.
#include <algorithm>
#include <numeric>

#include "kernels/dense/link_ops.hpp"
#include "runtime/core/error.hpp"
#include "runtime/core/nvtx.hpp"
#include "pipeline/step.hpp"

namespace coopgnn {

namespace {

/// One PE's share of a batch: its pairs, their scores and the decoder's cache.
class pairs_batch final : public task_batch {
 public:
  pairs_batch(link_batch lb, int negatives) : lb_(std::move(lb)), negatives_(negatives) {}

  std::int64_t forward(step_context& sc, const minibatch_protocol& protocol,
                       const prepared_batch& b, tensor<float>&& h) override {
    // The endpoints' rows reach the scoring PE, then the decoder scores the pairs.
    h = protocol.pull(sc, b, -1, "forward", std::move(h));
    z_rows_ = h.rows();
    src_ = upload<std::int64_t>(sc.ctx, lb_.src_rows);
    dst_ = upload<std::int64_t>(sc.ctx, lb_.dst_rows);
    rel_ = upload<std::int64_t>(sc.ctx, lb_.relations);
    scores_ = sc.model.decoder()->forward(sc.ctx, h.view(), src_.view(), dst_.view(), rel_.view(),
                                          &cache_);
    return cache_.bytes() + static_cast<std::int64_t>(h.bytes() + scores_.bytes());
  }

  tensor<float> backward(step_context& sc, const minibatch_protocol& protocol,
                         const prepared_batch& b, std::int64_t norm_items, double& loss) override {
    auto const pairs_total = static_cast<float>(norm_items * (1 + negatives_));
    buffer<float> const labels_placed = upload<float>(sc.ctx, lb_.labels);
    buffer<float> gs(sc.ctx, scores_.size());
    loss = bce_with_logits<float>(sc.ctx, scores_.view(), labels_placed.view(), 1.0f / pairs_total,
                                  gs.view());
    tensor<float> grad = sc.model.decoder()->backward(sc.ctx, gs.view(), src_.view(), dst_.view(),
                                                      rel_.view(), z_rows_, cache_);
    return protocol.push(sc, b, -1, "backward", std::move(grad));
  }

  void trace(const exec_context& ctx, const prepared_batch& /*b*/, pe_trace& tr) override {
    tr.seeds = lb_.targets;
    tr.logits = matrix<float>(static_cast<std::int64_t>(scores_.size()), 1,
                              download<float>(ctx, scores_.view()));
    tr.pairs = lb_.pairs;
    tr.pair_labels = lb_.labels;
  }

  [[nodiscard]] const link_batch& pairs() const { return lb_; }

 private:
  link_batch lb_;
  int negatives_;
  buffer<std::int64_t> src_, dst_, rel_;  // [m] the pairs' rows of z and relations
  buffer<float> scores_;                  // [m]
  std::int64_t z_rows_ = 0;
  models::decoder_cache<float> cache_;
};

class link_prediction_task final : public training_task {
 public:
  link_prediction_task(const dataset& ds, const csc_graph& g, const train_config& cfg)
      : ds_(ds), g_(g), cfg_(cfg) {
    COOPGNN_EXPECTS(ds.link.has_value(),
                    "dataset '{}' has no link-prediction task; make one with `coopgnn "
                    "split-edges`",
                    ds.name);
    if (ds.hetero) check_typed();
    COOPGNN_EXPECTS(!ds.link->train.empty(),
                    "dataset '{}': the link-prediction task has no "
                    "training pairs",
                    ds.name);
    COOPGNN_EXPECTS(cfg.negatives >= 1, "--negatives {} must be at least 1", cfg.negatives);
    COOPGNN_EXPECTS(!cfg.linear_head,
                    "--linear-head is for node classification; in link prediction the decoder "
                    "follows the last GNN layer (set its width with --out-dim)");
    COOPGNN_EXPECTS(cfg.topk >= 1, "--topk {} must be at least 1", cfg.topk);
    COOPGNN_EXPECTS(cfg.out_dim >= 0 && cfg.decoder_hidden >= 0,
                    "--out-dim {} and --decoder-hidden {} must be non-negative", cfg.out_dim,
                    cfg.decoder_hidden);
    // Fail now rather than after training when a set cannot be scored.
    for (const pair_set* set : {&ds.link->valid, &ds.link->test}) {
      if (!set->empty()) (void)link_metric_name(*ds.link, *set, cfg.topk);
    }
    COOPGNN_EXPECTS(!ds.link->user_item() || cfg.decoder == models::decoder_kind::dot,
                    "dataset '{}' is user-item data, evaluated by ranking every item: use "
                    "--decoder dot",
                    ds.name);
    items_.resize(static_cast<std::size_t>(ds.link->train.size()));
    std::iota(items_.begin(), items_.end(), vid_t{0});
  }

  const std::vector<vid_t>& items() const override { return items_; }

  void seeds(step_context& sc, const minibatch_protocol& protocol,
             std::span<const vid_t> global_batch, prepared_batch& b) const override {
    // The pairs this PE scores (cooperative: those whose source it owns) with their negatives;
    // the encoder's seeds are the endpoints it computes for the scorers.
    int const span = sc.meter.stage_begin();
    COOPGNN_NVTX_RANGE("sample/pairs");
    auto const& train = ds_.link->train;
    auto const mine = protocol.share(global_batch, sc.rank, sc.pes, [&](vid_t i) {
      COOPGNN_EXPECTS(i >= 0 && i < train.size(),
                      "link batch: positive {} is outside the {} training pairs", i, train.size());
      return train.src[static_cast<std::size_t>(i)];
    });
    auto pairs = std::make_unique<pairs_batch>(
        make_link_batch(*ds_.link, mine, cfg_.negatives, sc.run_seed, sc.batch_index, ds_.num_nodes,
                        ds_.hetero ? &*ds_.hetero : nullptr),
        cfg_.negatives);
    b.seeds = protocol.request(sc, pairs->pairs().targets, b.pair_route);
    b.task = std::move(pairs);
    sc.meter.mark_sent();
    sc.meter.stage_end(sc.meter.t.sample, sc.meter.cpu.sample, span);
  }

  std::vector<std::uint64_t> excluded(std::span<const vid_t> global_batch) const override {
    // --exclude: the global batch's positives (and reverses) leave every layer's sample, on every
    // PE alike. Typed: u -> v in the positive's relation r, and v -> u in r's reverse edge type
    // when the schema has one (reverse_edge_type). Untyped graphs are the case R = 1, r = 0,
    // whose key is the untyped key bit for bit.
    std::vector<std::uint64_t> keys;
    if (cfg_.exclude == exclude_kind::none) return keys;
    auto const& train = ds_.link->train;
    bool const typed = !train.relation.empty();
    std::int32_t const R = typed ? g_.num_relations : 1;
    for (vid_t i : global_batch) {
      auto const k = static_cast<std::size_t>(i);
      vid_t const u = train.src[k];
      vid_t const v = train.dst[k];
      std::int32_t const r = typed ? train.relation[k] : 0;
      keys.push_back(edge_exclusion_key(u, v, r, R));
      std::int64_t const rev = typed ? reverse_relation_[static_cast<std::size_t>(r)]
                               : cfg_.exclude == exclude_kind::reverse ? 0
                                                                       : -1;
      if (rev >= 0) keys.push_back(edge_exclusion_key(v, u, static_cast<std::int32_t>(rev), R));
    }
    std::sort(keys.begin(), keys.end());
    keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
    return keys;
  }

  std::string metric_name() const override { return link_task_metric_name(*ds_.link, cfg_.topk); }

  std::pair<link_eval, link_eval> evaluate(const models::gnn_model& model, const matrix<float>& x,
                                           int threads) const override {
    return evaluate_link_model(model, g_, x, *ds_.link, cfg_.topk, threads);
  }

 private:
  /// Typed link prediction: pairs carry their relation (validate_dataset checks them), the
  /// exclusion keys fit 32 bits, and each relation's reverse edge type is looked up.
  void check_typed() {
    auto const& h = *ds_.hetero;
    for (const pair_set* s : {&ds_.link->train, &ds_.link->valid, &ds_.link->test}) {
      COOPGNN_EXPECTS(s->relation.size() == s->src.size(),
                      "dataset '{}': a link set has {} pairs but {} relations (pairs of a "
                      "heterogeneous graph's task name their relation)",
                      ds_.name, s->src.size(), s->relation.size());
    }
    // Exclusion keys hold s R + r in 32 bits (edge_exclusion_key); the CUDA kernels do not
    // check it per edge, so the bound is checked here, once, for every backend.
    auto const R = static_cast<std::int64_t>(h.edge_types.size());
    COOPGNN_EXPECTS(
        cfg_.exclude == exclude_kind::none || ds_.num_nodes <= (std::int64_t{1} << 32) / R,
        "dataset '{}': --exclude {} keys (destination x {} relations + relation) "
        "need |V| x R <= 2^32, but |V| = {}; use --exclude none",
        ds_.name, to_string(cfg_.exclude), R, ds_.num_nodes);
    for (std::int64_t r = 0; r < R; ++r) {
      reverse_relation_.push_back(cfg_.exclude == exclude_kind::reverse ? reverse_edge_type(h, r)
                                                                        : -1);
    }
  }

  const dataset& ds_;
  const csc_graph& g_;
  train_config cfg_;
  std::vector<vid_t> items_;  // 0 .. |link.train| - 1
  // Typed graphs: the reverse edge type of each relation (reverse_edge_type; -1 none), whose
  // edges --exclude reverse also removes.
  std::vector<std::int64_t> reverse_relation_;
};

}  // namespace

std::unique_ptr<training_task> make_link_task(const dataset& ds, const csc_graph& g,
                                              const train_config& cfg) {
  return std::make_unique<link_prediction_task>(ds, g, cfg);
}

}  // namespace coopgnn
