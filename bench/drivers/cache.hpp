// `coopgnn bench cache` (docs/design.md section 9): per-PE feature-cache miss rate against
// dependent minibatching's kappa, cache size, minibatch mode and PE count, on the exact
// feature-load trace a training run produces. Output format: docs/results-schema.md, section
// `cache`.
//
// Sources: Balin, LaSalle & Catalyurek, "Cooperative Minibatching in Graph Neural Networks"
// (TMLR 2025), section 3.2 and Figure 4 (miss rate vs kappa for several cache sizes);
// docs/design.md sections 4.3 (dependent minibatching) and 6 (which vertices each PE loads).
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <vector>

#include "bench/drivers/results.hpp"
#include "kernels/sample/sample.hpp"
#include "runtime/core/exec_context.hpp"
#include "runtime/graph/csc.hpp"
#include "pipeline/config.hpp"

namespace coopgnn::bench {

/// What `coopgnn bench cache` sweeps. Defaults are the command's defaults.
struct cache_options {
  sampler_kind sampler = sampler_kind::labor;
  std::vector<int> fanouts = {10, 10, 10};          ///< [L] seeds' layer first
  std::int64_t batch_size = 1024;                   ///< global batch B
  std::vector<std::int64_t> kappas = {1, 4, 16, 64, 256, 0};  ///< 0 = never refresh
  std::vector<double> fractions = {0.05, 0.1, 0.2};  ///< cache rows per PE / |V|
  std::vector<minibatch_mode> modes = {minibatch_mode::cooperative, minibatch_mode::independent};
  std::vector<int> pes = {1, 4};
  std::vector<std::string> policies = {"lru"};  ///< names of make_cache_policy
  bool layer_dependency = false;
  /// Epochs replayed per kappa (batch indices continue across epochs); 0 = auto: the fewest
  /// epochs that give at least 100 global batches (Cora at B = 1024 has one batch per epoch).
  int epochs = 0;
  std::int64_t batches = 0;  ///< stop after this many global batches per kappa (0 = all epochs)
  /// The first `warmup` batches fill the caches but are not counted (steady-state miss rate).
  std::int64_t warmup = 0;
  std::uint64_t seed = 0;   ///< run seed: epoch order, ownership and sampling, as in `train`
  int sample_threads = 1;   ///< host threads of the sampler (no effect on results)
};

/// @throws logic_error naming the command-line option for: an empty list, a kappa < 0, a
///   fraction outside [0, 1], a P < 1, an unknown policy, a value given twice, batch size < 1,
///   epochs < 0, batches < 0, warmup < 0, sample threads < 1, an empty or invalid fanout list, a sampler
///   other than LABOR with a kappa other than 1.
void validate(const cache_options& o);

/// One point of the sweep, counts summed over PEs and batches.
struct cache_row {
  std::string policy;
  std::int64_t kappa = 1;  ///< 0 = never
  double fraction = 0;
  std::int64_t cache_rows = 0;  ///< per PE: floor(fraction |V|)
  std::string mode;
  int pes = 1;
  std::int64_t batches = 0;   ///< counted batches (after the warm-up)
  std::int64_t seeds = 0;     ///< training seeds over the counted batches
  std::int64_t requests = 0;  ///< feature rows the PEs asked their caches for
  std::int64_t hits = 0;
  std::int64_t misses = 0;  ///< rows read from storage
  double miss_rate = 0;     ///< misses / requests (0 when nothing was requested)
  double rows_per_seed = 0;         ///< requests / seeds
  double miss_bytes_per_seed = 0;   ///< misses * feature_dim * 4 / seeds (bytes from storage)
};

struct cache_result {
  std::vector<cache_row> rows;  ///< policy, kappa, fraction, mode, P order (as given)
  int epochs = 0;               ///< epochs replayed (o.epochs, or the automatic choice)
  std::int64_t batches_per_kappa = 0;  ///< batches replayed per kappa, warm-up included
  std::int64_t warmup = 0;             ///< of which not counted
  double seconds = 0;
};

/// Called after every kappa: kappa, kappas done, kappas in total.
using cache_progress = std::function<void(std::int64_t, std::int64_t, std::int64_t)>;

/// Replays the feature loads of `epochs` training epochs for every (kappa, mode, P) and feeds each
/// PE's load of each batch, as one batch (cache_policy::access_batch), into a fresh per-PE cache
/// of every (policy, fraction); hits and misses of the first o.warmup batches are not counted. The trace is exactly the trainer's (trainer.hpp): global batches
/// from epoch_order(train, seed, e), minibatch index (e - 1) * batches_per_epoch + b, keys
/// {sampler, fanouts, seed, index, {kappa, layer_dependency}};
///  - independent: PE p samples global[B p / P, B (p + 1) / P) alone and loads the sources of
///    its last block, in block order;
///  - cooperative: PE p loads S^L_p, the sorted vertices it owns (ownership(|V|, P, seed)) among
///    the last-layer sources of the global batch. Keyed sampling makes the union of the PEs'
///    S^L_p equal the sources of the global batch sampled alone (docs/design.md section 4.1;
///    checked against the trainer's own counters by the tests), so one sample serves every P.
/// No features are read and nothing is trained.
/// @param g            CSC of in-edges
/// @param train        [N] training vertices (the seeds), N >= 1
/// @param feature_dim  F, for bytes per seed
/// @throws logic_error from validate() or for an empty `train`.
/// Deterministic apart from `seconds`.
cache_result run_cache_bench(const exec_context& ctx, const csc_graph& g,
                             std::span<const vid_t> train, std::int64_t feature_dim,
                             const cache_options& o, const cache_progress& progress = {});

/// The JSON object of docs/results-schema.md, section `cache`.
nlohmann::ordered_json cache_to_json(const result_header& h, const cache_options& o,
                                     const cache_result& r);

/// The CSV of the rows: header "policy,kappa,fraction,cache_rows,mode,pes,batches,seeds,
/// requests,hits,misses,miss_rate,rows_per_seed,miss_bytes_per_seed".
std::string cache_to_csv(const cache_result& r);

/// A readable console table (miss rate per kappa as columns) plus, per (policy, fraction, mode,
/// P), the ratio miss_rate(kappa = 1) / miss_rate(largest finite kappa).
std::string format_cache_table(const cache_options& o, const cache_result& r);

/// "never" for 0, else the number.
std::string kappa_name(std::int64_t kappa);

}  // namespace coopgnn::bench
