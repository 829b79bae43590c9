// `coopgnn bench sample` (README "Command line"): the speed of multi-layer minibatch sampling alone
// on the host backend. Per layer l of a batch: sample_neighbors of the layer's seeds (keys {run
// seed, layer l, batch index}), then make_block (unique-and-compact), whose sources are the next
// layer's seeds; nothing else (no features, no training). Output format: docs/results-schema.md,
// section `sample`. The peer comparison is bench/graphbolt_sampler_baseline.py (DGL GraphBolt on
// the same seed batches, exported with --seeds-out).
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

namespace coopgnn::bench {

/// What `coopgnn bench sample` measures. Defaults are the command's defaults.
struct sample_rate_options {
  sampler_kind sampler = sampler_kind::ns;
  std::vector<int> fanouts = {10, 10, 10};  ///< [L] seeds' layer first; -1 = all neighbours
  std::int64_t batch_size = 1024;           ///< B
  std::int64_t batches = 20;                ///< batches per repeat (the same batches every repeat)
  int repeats = 3;                          ///< timed passes over the batches; medians reported
  std::uint64_t seed = 0;                   ///< run seed: batch order (epoch_order) and sampling
  int sample_threads = 1;                   ///< host threads of sample_neighbors
};

/// @throws logic_error naming the command-line option for an empty fanout list, a fanout 0 or
///   < -1, batch size < 1, batches < 1, repeats < 1 or sample threads < 1.
void validate(const sample_rate_options& o);

/// The seed batches: batch t (t = 0 .. o.batches - 1) of epoch e = t / nb + 1 (nb = ceil(N / B)
/// batches per epoch) is order[b B, min((b + 1) B, N)), b = t mod nb, order = epoch_order(train,
/// o.seed, e) (the trainer's batches and minibatch indices, trainer.hpp); its sampling key uses
/// minibatch index t. @param train [N] seeds, N >= 1. @throws logic_error for an empty train.
std::vector<std::vector<vid_t>> sample_rate_batches(std::span<const vid_t> train,
                                                    const sample_rate_options& o);

/// Counts and times of one layer summed over the batches; times are medians over the repeats.
struct sample_rate_layer {
  int layer = 0;
  int fanout = 0;
  std::int64_t seeds = 0;       ///< destinations sampled (this layer's seeds), summed over batches
  std::int64_t edges = 0;       ///< sampled edges
  std::int64_t sources = 0;     ///< block sources (the next layer's seeds)
  double sample_seconds = 0;    ///< median over repeats of the summed sample_neighbors time
  double block_seconds = 0;     ///< median over repeats of the summed make_block time
  double seconds = 0;           ///< median over repeats of sample + block
  double edges_per_second = 0;  ///< edges / seconds
  double seeds_per_second = 0;  ///< seeds / seconds
  double sample_edges_per_second = 0;  ///< edges / sample_seconds (sampling without compaction)
};

struct sample_rate_result {
  std::vector<sample_rate_layer> layers;  ///< [L]
  std::int64_t batches = 0;
  std::int64_t seeds = 0;     ///< layer-0 seeds (the batches' sizes summed)
  std::int64_t edges = 0;     ///< sampled edges of every layer
  double seconds = 0;         ///< median over repeats of the whole pass (every layer, every batch)
  double sample_seconds = 0;  ///< median over repeats of the summed sampling time
  double block_seconds = 0;   ///< median over repeats of the summed compaction time
  double edges_per_second = 0;         ///< edges / seconds
  double seeds_per_second = 0;         ///< seeds / seconds (minibatch seeds, layer 0)
  std::vector<double> repeat_seconds;  ///< [repeats] whole-pass time of every repeat
  double wall_seconds = 0;             ///< the whole measurement
};

/// Called after every repeat: repeats done, repeats in total, that repeat's seconds.
using sample_rate_progress = std::function<void(int, int, double)>;

/// Samples every batch of `batches` o.repeats times, layer by layer (sample_neighbors with
/// ctx.threads() threads, then make_block; the block's sources seed the next layer), timing each
/// call with the steady clock. Counts are the same every repeat (keyed sampling) and checked so.
/// @param ctx      host backend (ctx.threads() = the sampler's threads)
/// @param g        CSC of in-edges
/// @param batches  from sample_rate_batches (or any seed lists; batch t has minibatch index t)
/// @throws logic_error from validate(), for a non-host backend, or when a repeat's counts differ.
/// Deterministic apart from the times.
sample_rate_result run_sample_rate_bench(const exec_context& ctx, const csc_graph& g,
                                         const std::vector<std::vector<vid_t>>& batches,
                                         const sample_rate_options& o,
                                         const sample_rate_progress& progress = {});

/// The JSON object of docs/results-schema.md, section `sample`.
nlohmann::ordered_json sample_rate_to_json(const result_header& h, const sample_rate_options& o,
                                           const sample_rate_result& r);

/// The CSV of the layers plus a "total" row: header "layer,fanout,seeds,edges,sources,
/// sample_seconds,block_seconds,seconds,edges_per_second,seeds_per_second,
/// sample_edges_per_second".
std::string sample_rate_to_csv(const sample_rate_result& r);

/// A readable console table of the same.
std::string format_sample_rate_table(const sample_rate_result& r);

/// The batches as text, one batch a line, ids separated by spaces (what --seeds-out writes and
/// bench/graphbolt_sampler_baseline.py reads).
std::string seed_batches_to_text(const std::vector<std::vector<vid_t>>& batches);

}  // namespace coopgnn::bench
