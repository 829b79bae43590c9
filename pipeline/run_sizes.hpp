// What a training run's options ask it to allocate, from shapes alone (docs/design.md section
// 10.1, "Sizes before allocation"): the model's parameters and optimizer state, learnt input
// embeddings and one step's link-prediction pairs, each with the option (or dataset field) that
// sizes it. `train` (with or without --dry-run), `compare` and `tma` check it before anything of
// that size exists, so an impossible request names its option instead of ending in bad_alloc.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/graph/csc.hpp"
#include "runtime/graph/dataset.hpp"
#include "pipeline/config.hpp"

namespace coopgnn {

/// One host allocation of a run and what sizes it.
struct run_allocation {
  std::string name;    ///< "the model", "the learnt embeddings", "the link pairs"
  std::string option;  ///< "--hidden 2000000", "--embedding-dim 64", "num_classes 7 of task ..."
  std::string what;    ///< how the bytes follow from the shapes, for the message
  std::uint64_t bytes = 0;  ///< host bytes, saturating at UINT64_MAX
};

/// A run's option-sized allocations (host memory), computed without allocating them.
struct run_footprint {
  /// The model's trainable scalars (models::layout_of(model_config_for(ds, cfg)).num_values;
  /// INT64_MAX when the shapes overflow 64 bits; 0 when the input width or the class count is 0,
  /// a run the trainer refuses).
  std::int64_t parameters = 0;
  /// Bytes of one replica with its optimizer state: parameters x 4 float32 (value, gradient,
  /// Adam's m and v) = 16 bytes each.
  std::uint64_t model_bytes = 0;
  /// Replicas in host memory: P on the host and emulated backends, 1 on CUDA (the host copy
  /// evaluation reads; the PEs' replicas live on their devices).
  std::int64_t host_replicas = 0;
  /// --embedding-dim D > 0: learnt rows one PE holds (every PE holds the whole table, |V| rows,
  /// in both modes: models::embedding_table is a full replica per PE) and their bytes, rows x D
  /// x 3 float32 (value, Adam's m and v). Typed graphs: the featureless types' rows, each PE all
  /// of them, at D or the featured width.
  std::int64_t embedding_rows = 0;
  std::uint64_t embedding_bytes = 0;
  /// Link prediction: the tails a negative is drawn from (the items on user-item data, a
  /// relation's destination type on typed data, else every vertex); 0 for node classification.
  std::int64_t negative_tails = 0;
  /// Batches a PE holds prepared at once: 1 + --prefetch N on the host and emulated backends
  /// (the step's batch and the N the prefetch thread prepares ahead, docs/design.md section
  /// 6.7), 1 on CUDA (which prepares serially).
  std::int64_t prepared_batches = 1;
  /// Link prediction: the pairs of prepared_batches steps over all PEs, prepared_batches x
  /// min(B, |train pairs|) x (1 + --negatives), at kLinkPairBytes each.
  std::uint64_t link_pair_bytes = 0;
  /// With the graph only (else 0): an upper bound on one prepared minibatch of one PE, bytes:
  /// seeds n = ceil(min(B, |train|) / P) (link prediction: x (2 + --negatives)), capped at |V|;
  /// per layer of fanout f (-1: the graph's largest in-degree), edges min(n f, |E|) at 12 bytes
  /// (source id and weight), sources n' = min(n (1 + f), |V|) at 16 bytes (id and degree), and
  /// the layer's output, its cache and its gradient, n x hidden x heads x 4 bytes x 3; then the
  /// input rows n' x F x 4 bytes x 2 (rows and their dropout copy), F the input width.
  std::uint64_t batch_bytes = 0;
  /// The bound on the input layer's rows of one such minibatch (n' of the last layer).
  std::int64_t input_rows = 0;
  /// prepared_batches x batch_bytes (saturating): what one PE's prepared minibatches take.
  std::uint64_t minibatch_bytes = 0;
  /// The host parts above that are not zero, largest first.
  std::vector<run_allocation> parts;
  /// Their sum (saturating).
  [[nodiscard]] std::uint64_t host_bytes() const;
};

/// Bytes a link-prediction pair takes in a step's batch (make_link_batch): source and
/// destination rows (2 x 8), label (4), the pair itself (2 x 8) and its two entries in the
/// target map (2 x 16 at a load factor of 1/2).
inline constexpr std::uint64_t kLinkPairBytes = 68;

/// The footprint of training `cfg` on `ds` (cfg.num_pes resolved); with `g` (ds's CSC, as
/// trained) also the minibatch bound (batch_bytes). Host only, O(num_layers + relations)
/// (O(|V|) with g, for its largest in-degree); allocates nothing that scales with the options.
/// The minibatches are not among `parts` (an upper bound, reported by --dry-run only).
/// @throws logic_error as model_config_for and models::layout_of do (a bad width or layer count).
run_footprint run_footprint_of(const dataset& ds, const train_config& cfg,
                               const csc_graph* g = nullptr);

/// Refuses, before anything of that size is allocated:
///   - link prediction with --negatives K above the footprint's negative_tails:
///     "--negatives K exceeds the N candidate tails of dataset 'X' (...)";
///   - a footprint whose host_bytes() exceed host_memory_limit(): the message names the largest
///     part's option and its bytes against the memory there is (memory_shortfall).
/// @throws logic_error as described; nothing otherwise.
void check_run_footprint(const dataset& ds, const train_config& cfg);

}  // namespace coopgnn
