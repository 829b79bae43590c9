// The TMA engine's workers over the single-node runtime (pipeline/trainer.hpp): a trainer
// rank trains its local graph with P PEs (either protocol, either backend); the server's worker
// owns the initial weights and LLCG's correction steps on the full training graph; score_link
// evaluates an aggregate on the server's evaluator thread. No MPI here.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "runtime/graph/csc.hpp"
#include "runtime/graph/dataset.hpp"
#include "pipeline/config.hpp"
#include "pipeline/trainer.hpp"
#include "tma/evaluator.hpp"
#include "tma/tma.hpp"

namespace coopgnn::tma {

/// Global batches of a run, cut the same way on every rank: epoch e's items in trainer order
/// (the keyed shuffle of trainer::epoch_order), global batch b = order[b G, min((b + 1) G, N))
/// with G = slices * cfg.batch_size, batch index (e - 1) * ceil(N / G) + b; this rank takes slice
/// `slice` of it, items [len slice / slices, len (slice + 1) / slices) (the independent protocol's
/// split of a batch across PEs, so GGS over M ranks sees the batches one process with M
/// independent PEs sees). compute_gradients normalises this slice's loss by the global batch
/// (step_options::normalise_by), so the sum of the M slices' gradients is exactly the gradient a
/// process with M independent PEs computes for the global batch.
class runtime_trainer final : public trainer_worker {
 public:
  /// @param ds, g       this rank's graph (a part's induced subgraph, or the full graph for GGS),
  ///                    kept by reference
  /// @param slice, slices  0 <= slice < slices; averaging schemes: 0, 1
  /// @param max_epochs  epoch budget; 0 = unlimited (the time limit ends the run)
  /// @throws logic_error as trainer's constructor, or for a bad slice.
  runtime_trainer(const dataset& ds, const csc_graph& g, const train_config& cfg, int slice,
                  int slices, std::int64_t max_epochs);
  [[nodiscard]] std::int64_t num_parameters() const override;
  [[nodiscard]] bool done() const override;
  [[nodiscard]] std::int64_t epoch() const override { return epoch_; }
  double step() override;
  double compute_gradients() override;
  void gradients(std::span<float> out) const override;
  void apply_gradients(std::span<const float> grads) override;
  void parameters(std::span<float> out) const override;
  void set_parameters(std::span<const float> values) override;
  [[nodiscard]] trainer& runtime() { return trainer_; }

 private:
  /// This rank's items of the next global batch and its index; advances the epoch.
  /// global_len: the global batch's item count.
  std::vector<vid_t> next_batch(std::uint32_t& index, std::int64_t* global_len = nullptr);
  trainer trainer_;
  int slice_, slices_;
  std::int64_t max_epochs_;
  std::int64_t epoch_ = 1;
  std::int64_t batch_ = 0;
  std::int64_t batches_per_epoch_ = 0;
  std::vector<vid_t> order_;
};

/// The server's worker: a host model of the run's layout (model_config_for, initialised from
/// cfg.seed) provides the initial weights every trainer starts from; for LLCG
/// (correction_steps > 0) a trainer over the full training graph runs `correction_steps`
/// optimizer steps of its own Adam on successive global batches of the full graph (cyclically
/// over its epochs) starting from the mean (Ramezani et al. 2022, server correction, as in the
/// TMA paper's code). With correction_steps = 0 no trainer is built and correct() changes nothing.
class runtime_server final : public server_worker {
 public:
  runtime_server(const dataset& ds, const csc_graph& g, const train_config& cfg,
                 int correction_steps);
  [[nodiscard]] std::int64_t num_parameters() const override;
  void initial_parameters(std::span<float> out) override;
  void correct(std::span<float> params) override;
  [[nodiscard]] std::int64_t correction_steps_done() const { return done_; }

 private:
  exec_context host_;
  models::gnn_model initial_;
  std::unique_ptr<runtime_trainer> trainer_;  // LLCG only
  int steps_;
  std::int64_t done_ = 0;
};

/// Scores parameters on the full graph's validation (or test) pairs: a host model of the
/// run's layout (model_config_for) takes the parameters, then evaluate_link_model (layer-wise
/// full-neighbour embeddings, MRR against the fixed negatives, ...). Thread-safe per instance
/// when each thread has its own (the evaluator thread and the final test).
class link_scorer {
 public:
  /// Features left in their .npy (--feature-storage mmap) are read once, here.
  /// @throws logic_error when the dataset has no link task or no features; io_error for an
  ///         unreadable feature file.
  link_scorer(const dataset& ds, const csc_graph& g, const train_config& cfg, int threads);
  /// @param test  score the test set instead of the validation set
  score operator()(std::span<const float> params, bool test = false);

 private:
  const dataset& ds_;
  const csc_graph& g_;
  train_config cfg_;
  int threads_;
  exec_context host_;  // the model's context (host memory)
  std::unique_ptr<models::gnn_model> model_;
  matrix<float> owned_x_;  // the features when the dataset left them in their file
};

}  // namespace coopgnn::tma
