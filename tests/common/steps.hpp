// One training step over a global batch, summarised across PEs (docs/design.md section 8): the
// helpers the protocol tests of both backends share.
#pragma once

#include <map>
#include <set>
#include <utility>
#include <vector>

#include "pipeline/trainer.hpp"

namespace coopgnn::test {

/// The 700-vertex, 4-class synthetic task (12 features, mean degree 10, seed 3) and its CSC,
/// built once per process.
struct step_fixture {
  dataset ds;
  csc_graph g;
};
const step_fixture& protocol_data();
/// A heterogeneous task (docs/typed-sampling.md) built once per process: node types paper (300, 12
/// features, 4 classes, the target type), author (250) and subject (8), both featureless; relations
/// author:writes:paper, paper:written_by:author, subject:has:paper, paper:in:subject,
/// paper:cites:paper (1-4 authors per paper, one subject correlated with the class, about 3
/// homophilous citations), 60/20/20 split of the papers; its typed CSC.
const step_fixture& hetero_protocol_data();

/// What every PE of one step produced, merged: the sampled edges per layer, the logits by seed,
/// replica 0's all-reduced gradients (every replica's are checked to be identical), the summed
/// work and loss.
struct step_result {
  std::vector<std::multiset<std::pair<vid_t, vid_t>>> edges;  // [L]
  std::map<vid_t, std::vector<float>> logits;
  std::vector<float> grads;
  work_counters work;
  double loss = 0;
};

/// Builds a trainer for `cfg` on protocol_data() and runs one step (no update) on the first
/// cfg.batch_size seeds of epoch 1's order with minibatch index 5. Records gtest failures when a
/// seed is computed twice, a seed is missing or replicas' gradients differ.
step_result run_protocol_step(const train_config& cfg);
/// The same on a given global batch (seed vertices of protocol_data()) with minibatch `index`.
step_result run_protocol_step(const train_config& cfg, std::span<const vid_t> batch,
                              std::uint32_t index);
/// The same two on fixture `d`.
step_result run_protocol_step(const step_fixture& d, const train_config& cfg);
step_result run_protocol_step(const step_fixture& d, const train_config& cfg,
                              std::span<const vid_t> batch, std::uint32_t index);

/// Records gtest failures unless `a` has ref's seeds with the same logits (1e-5), weight
/// gradients (1e-4 of ref's largest, which must not be all zeros) and loss (1e-5 relative).
void expect_same_outputs(const step_result& a, const step_result& ref);

/// Trains `cfg` on protocol_data() for `epochs` epochs, evaluating after the last; returns the
/// train loss of every epoch and the last epoch's report.
std::pair<std::vector<double>, epoch_report> run_protocol_epochs(const train_config& cfg,
                                                                 int epochs);

/// The distinct edges of a layer.
std::set<std::pair<vid_t, vid_t>> as_set(const std::multiset<std::pair<vid_t, vid_t>>& m);

}  // namespace coopgnn::test
