// What a training run's options ask it to allocate, from shapes alone (docs/design.md section
// 10.1, "Sizes before allocation"): the model's parameters and optimizer state, learnt input
// embeddings and one step's link-prediction pairs, each with the option (or dataset field) that
// sizes it. `train` (with or without --dry-run), `compare` and `tma` check it before anything of
// that size exists, so an impossible request names its option instead of ending in bad_alloc.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

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
  /// --embedding-dim D > 0: learnt rows one PE holds (cooperative: ceil(|V| / P), its share;
  /// independent: |V|) and their bytes, rows x D x 3 float32 (value, Adam's m and v). Typed
  /// graphs: the featureless types' rows, each PE all of them, at D or the featured width.
  std::int64_t embedding_rows = 0;
  std::uint64_t embedding_bytes = 0;
  /// Link prediction: the tails a negative is drawn from (the items on user-item data, a
  /// relation's destination type on typed data, else every vertex); 0 for node classification.
  std::int64_t negative_tails = 0;
  /// Link prediction: one step's pairs over all PEs, min(B, |train pairs|) x (1 + --negatives),
  /// at kLinkPairBytes each.
  std::uint64_t link_pair_bytes = 0;
  /// The host parts above that are not zero, largest first.
  std::vector<run_allocation> parts;
  /// Their sum (saturating).
  [[nodiscard]] std::uint64_t host_bytes() const;
};

/// Bytes a link-prediction pair takes in a step's batch (make_link_batch): source and
/// destination rows (2 x 8), label (4), the pair itself (2 x 8) and its two entries in the
/// target map (2 x 16 at a load factor of 1/2).
inline constexpr std::uint64_t kLinkPairBytes = 68;

/// The footprint of training `cfg` on `ds` (cfg.num_pes resolved). Host only, O(num_layers +
/// relations); allocates nothing that scales with the options.
/// @throws logic_error as model_config_for and models::layout_of do (a bad width or layer count).
run_footprint run_footprint_of(const dataset& ds, const train_config& cfg);

/// Refuses, before anything of that size is allocated:
///   - link prediction with --negatives K above the footprint's negative_tails:
///     "--negatives K exceeds the N candidate tails of dataset 'X' (...)";
///   - a footprint whose host_bytes() exceed host_memory_limit(): the message names the largest
///     part's option and its bytes against the memory there is (memory_shortfall).
/// @throws logic_error as described; nothing otherwise.
void check_run_footprint(const dataset& ds, const train_config& cfg);

}  // namespace coopgnn
