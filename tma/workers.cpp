#include "tma/workers.hpp"

#include <algorithm>

#include "cache/storage.hpp"
#include "runtime/core/error.hpp"
#include "runtime/graph/npy.hpp"
#include "pipeline/link.hpp"

namespace coopgnn::tma {

namespace {
/// `in` into `out`, which must have its size (the engine's buffers are sized by
/// num_parameters()).
void copy_exact(const char* what, std::span<const float> in, std::span<float> out) {
  COOPGNN_EXPECTS(out.size() == in.size(), "{}: {} values into a buffer of {}", what, in.size(),
                  out.size());
  std::copy(in.begin(), in.end(), out.begin());
}
}  // namespace

runtime_trainer::runtime_trainer(const dataset& ds, const csc_graph& g, const train_config& cfg,
                                 int slice, int slices, std::int64_t max_epochs)
    : trainer_(ds, g, cfg), slice_(slice), slices_(slices), max_epochs_(max_epochs) {
  COOPGNN_EXPECTS(slices >= 1 && slice >= 0 && slice < slices,
                  "runtime_trainer: slice {} of {} is not in [0, slices)", slice, slices);
  COOPGNN_EXPECTS(max_epochs >= 0, "--max-epochs must be >= 0, got {}", max_epochs);
  order_ = trainer_.epoch_order(1);
  auto const n = static_cast<std::int64_t>(order_.size());
  std::int64_t const G = static_cast<std::int64_t>(slices_) * cfg.batch_size;
  batches_per_epoch_ = epoch_batch_count(n, G, cfg.drop_last);  // short tail unless drop_last
  COOPGNN_EXPECTS(batches_per_epoch_ > 0,
                  "--drop-last: the {} slices' global batch of {} exceeds the {} training items",
                  slices_, G, n);
}

std::int64_t runtime_trainer::num_parameters() const { return trainer_.num_parameters(); }

bool runtime_trainer::done() const { return max_epochs_ > 0 && epoch_ > max_epochs_; }

std::vector<vid_t> runtime_trainer::next_batch(std::uint32_t& index, std::int64_t* global_len) {
  auto const n = static_cast<std::int64_t>(order_.size());
  std::int64_t const G = static_cast<std::int64_t>(slices_) * trainer_.config().batch_size;
  std::int64_t const lo = batch_ * G, hi = std::min(n, lo + G), len = hi - lo;
  index = static_cast<std::uint32_t>((epoch_ - 1) * batches_per_epoch_ + batch_);
  if (global_len != nullptr) *global_len = len;
  auto const a = lo + len * slice_ / slices_, b = lo + len * (slice_ + 1) / slices_;
  std::vector<vid_t> out(order_.begin() + a, order_.begin() + b);
  if (++batch_ == batches_per_epoch_) {
    batch_ = 0;
    ++epoch_;
    order_ = trainer_.epoch_order(static_cast<int>(epoch_));
  }
  return out;
}

double runtime_trainer::step() {
  std::uint32_t index = 0;
  auto const batch = next_batch(index);
  trainer_.step(batch, index, step_options{});
  return trainer_.last_loss();
}

double runtime_trainer::compute_gradients() {
  std::uint32_t index = 0;
  std::int64_t global = 0;
  auto const batch = next_batch(index, &global);
  step_options opt;
  opt.update = false;
  opt.normalise_by = global;  // the shares' gradients sum to the global batch's
  trainer_.step(batch, index, opt);
  return trainer_.last_loss();
}

void runtime_trainer::gradients(std::span<float> out) const {
  copy_exact("gradients", trainer_.gradients(), out);
}

void runtime_trainer::apply_gradients(std::span<const float> grads) {
  trainer_.apply_gradients(grads);
}

void runtime_trainer::parameters(std::span<float> out) const {
  copy_exact("parameters", trainer_.parameters(), out);
}

void runtime_trainer::set_parameters(std::span<const float> values) {
  trainer_.set_parameters(values);
}

runtime_server::runtime_server(const dataset& ds, const csc_graph& g, const train_config& cfg,
                               int correction_steps)
    : host_(backend::host), initial_(host_, model_config_for(ds, cfg)), steps_(correction_steps) {
  COOPGNN_EXPECTS(correction_steps >= 0, "--correction-steps must be >= 0, got {}",
                  correction_steps);
  // Only LLCG trains on the server: the other schemes need no PEs, feature table or graph copy.
  if (steps_ > 0) trainer_ = std::make_unique<runtime_trainer>(ds, g, cfg, 0, 1, 0);
}

std::int64_t runtime_server::num_parameters() const { return initial_.num_parameters(); }

void runtime_server::initial_parameters(std::span<float> out) {
  auto const v = initial_.params().values();
  copy_exact("initial_parameters", std::span<const float>(v.data, static_cast<std::size_t>(v.size)),
             out);
}

void runtime_server::correct(std::span<float> params) {
  if (!trainer_) return;  // no correction steps
  trainer_->set_parameters(params);
  for (int s = 0; s < steps_; ++s) {
    trainer_->step();
    ++done_;
  }
  trainer_->parameters(params);
}

link_scorer::link_scorer(const dataset& ds, const csc_graph& g, const train_config& cfg,
                         int threads)
    : ds_(ds), g_(g), cfg_(cfg), threads_(std::max(1, threads)), host_(backend::host) {
  COOPGNN_EXPECTS(ds.link.has_value(), "dataset '{}' has no link-prediction task", ds.name);
  if (!ds.features_in_memory() || ds.features_are_16bit()) {
    // Left in the file (--feature-storage mmap), or 16-bit: inference reads every row as
    // float32, so they are gathered (widened) once.
    COOPGNN_EXPECTS(ds.features_in_memory() || !ds.feature_file.empty(),
                    "dataset '{}' has no node features to evaluate on", ds.name);
    owned_x_ = feature_rows_float32(ds);
    COOPGNN_EXPECTS(owned_x_.rows() == ds.num_nodes,
                    "{}: features of shape [{}, {}] for {} vertices", ds.feature_file.string(),
                    owned_x_.rows(), owned_x_.cols(), ds.num_nodes);
  }
  model_ = std::make_unique<models::gnn_model>(host_, model_config_for(ds, cfg));
}

score link_scorer::operator()(std::span<const float> params, bool test) {
  model_->copy_parameters_from(params);
  const matrix<float>& x = owned_x_.rows() > 0 ? owned_x_ : ds_.features;
  auto [val, tst] = evaluate_link_model(*model_, g_, x, *ds_.link, cfg_.topk, threads_);
  const link_eval& e = test ? tst : val;
  return score{e.metric_name, e.value, e.all};
}

}  // namespace coopgnn::tma
