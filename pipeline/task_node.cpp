// Node classification (docs/design.md section 6): the encoder's seeds are the batch's vertices,
// a linear head (or the last conv) gives their logits, and the loss is the softmax cross-entropy
// of their labels, normalised by the global batch.
#include <limits>

#include "kernels/dense/elementwise.hpp"
#include "models/metrics.hpp"
#include "runtime/core/error.hpp"
#include "pipeline/step.hpp"

namespace coopgnn {

namespace {

/// One PE's share of a batch: its seeds' logits and the head's cache.
class node_batch final : public task_batch {
 public:
  explicit node_batch(const dataset& ds) : ds_(ds) {}

  std::int64_t forward(step_context& sc, const minibatch_protocol& /*protocol*/,
                       const prepared_batch& b, tensor<float>&& h) override {
    if (auto* head = sc.model.head()) {
      models::step_key const sk{sc.run_seed, b.index, true};
      buffer_view<const vid_t> const seed_ids{b.blocks[0].src_ids, b.seeds.size(),
                                              b.blocks[0].space};
      logits_ = head->forward(sc.ctx, h.view(), seed_ids, sk, &head_cache_);
    } else {
      logits_ = std::move(h);
    }
    return static_cast<std::int64_t>(head_cache_.x.bytes() + logits_.bytes());
  }

  tensor<float> backward(step_context& sc, const minibatch_protocol& /*protocol*/,
                         const prepared_batch& b, std::int64_t norm_items, double& loss) override {
    std::vector<std::int64_t> labels(b.seeds.size());
    for (std::size_t i = 0; i < b.seeds.size(); ++i) labels[i] = ds_.labels[b.seeds[i]];
    buffer<std::int64_t> const labels_placed = to_space(sc.ctx, std::move(labels));
    tensor<float> grad(sc.ctx, logits_.rows(), logits_.cols());
    loss = softmax_cross_entropy<float>(sc.ctx, logits_.view(), labels_placed.view(),
                                        1.0f / static_cast<float>(norm_items), grad.view());
    if (auto* head = sc.model.head()) grad = head->backward(sc.ctx, grad.view(), head_cache_);
    return grad;
  }

  void trace(const exec_context& ctx, const prepared_batch& b, pe_trace& tr) override {
    tr.seeds = b.seeds;
    tr.logits = to_host(ctx, std::move(logits_));
  }

 private:
  const dataset& ds_;
  tensor<float> logits_;  // [seeds, C]
  models::linear_cache<float> head_cache_;
};

class node_task final : public training_task {
 public:
  node_task(const dataset& ds, const csc_graph& g, const train_config& cfg)
      : ds_(ds), g_(g), cfg_(cfg), items_(ds.train) {
    COOPGNN_EXPECTS(!ds.labels.empty() && ds.num_classes >= 2,
                    "dataset '{}' has no classification labels{}", ds.name,
                    ds.link ? " (it has a link-prediction task: --task link_prediction)" : "");
    COOPGNN_EXPECTS(!ds.train.empty(), "dataset '{}' has an empty training split", ds.name);
    for (vid_t v : ds.train) {
      COOPGNN_EXPECTS(ds.labels[v] >= 0, "training vertex {} has no label", v);
    }
  }

  const std::vector<vid_t>& items() const override { return items_; }

  void seeds(step_context& sc, const minibatch_protocol& protocol,
             std::span<const vid_t> global_batch, prepared_batch& b) const override {
    b.seeds = protocol.share(global_batch, sc.rank, sc.pes, [](vid_t v) { return v; });
    b.task = std::make_unique<node_batch>(ds_);
  }

  std::vector<std::uint64_t> excluded(std::span<const vid_t> /*global_batch*/) const override {
    return {};
  }

  std::string metric_name() const override {
    if (cfg_.macro_f1) return "macro_f1";
    return ds_.num_classes == 2 ? "roc_auc" : "accuracy";
  }

  std::pair<link_eval, link_eval> evaluate(const models::gnn_model& model, const matrix<float>& x,
                                           int threads) const override {
    auto const logits = model.infer_full(g_, x, threads);
    auto metric = [&](const std::vector<vid_t>& rows) {
      link_eval e;
      e.metric_name = metric_name();
      e.value = std::numeric_limits<double>::quiet_NaN();
      if (rows.empty()) return e;
      if (cfg_.macro_f1) {
        e.value = models::macro_f1(logits, ds_.labels, rows);
      } else if (ds_.num_classes == 2) {
        std::vector<float> scores;
        std::vector<std::int64_t> labels;
        for (vid_t v : rows) {
          scores.push_back(logits(v, 1) - logits(v, 0));
          labels.push_back(ds_.labels[v]);
        }
        e.value = models::roc_auc(scores, labels);
      } else {
        e.value = models::accuracy(logits, ds_.labels, rows);
      }
      return e;
    };
    return {metric(ds_.valid), metric(ds_.test)};
  }

 private:
  const dataset& ds_;
  const csc_graph& g_;
  train_config cfg_;
  std::vector<vid_t> items_;
};

}  // namespace

std::unique_ptr<training_task> make_node_task(const dataset& ds, const csc_graph& g,
                                              const train_config& cfg) {
  return std::make_unique<node_task>(ds, g, cfg);
}

}  // namespace coopgnn
