#include "pipeline/run_sizes.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "models/model.hpp"
#include "runtime/core/error.hpp"
#include "runtime/core/memory_limit.hpp"
#include "pipeline/link.hpp"
#include "pipeline/trainer.hpp"

namespace coopgnn {

namespace {

constexpr std::uint64_t kSaturated = std::numeric_limits<std::uint64_t>::max();

std::uint64_t saturating_mul(std::uint64_t a, std::uint64_t b) {
  std::uint64_t r = 0;
  return __builtin_mul_overflow(a, b, &r) ? kSaturated : r;
}

std::uint64_t saturating_add(std::uint64_t a, std::uint64_t b) {
  std::uint64_t r = 0;
  return __builtin_add_overflow(a, b, &r) ? kSaturated : r;
}

/// The option or dataset field behind the model's widest dimension, with its value: what a
/// model too large for the memory is blamed on.
std::string widest_dimension(const dataset& ds, const train_config& cfg,
                             const models::model_config& mc) {
  bool const gat = cfg.model == models::conv_kind::gat;
  std::vector<std::pair<std::int64_t, std::string>> dims;
  dims.emplace_back(gat ? cfg.hidden * cfg.heads : cfg.hidden,
                    gat ? fmt::format("--hidden {} --heads {}", cfg.hidden, cfg.heads)
                        : fmt::format("--hidden {}", cfg.hidden));
  dims.emplace_back(mc.in_dim, cfg.embedding_dim > 0
                                   ? fmt::format("--embedding-dim {}", cfg.embedding_dim)
                                   : fmt::format("the input feature width {} of dataset '{}'",
                                                 mc.in_dim, ds.name));
  if (cfg.task == task_kind::link_prediction) {
    if (cfg.out_dim > 0) dims.emplace_back(cfg.out_dim, fmt::format("--out-dim {}", cfg.out_dim));
    if (mc.decoder == models::decoder_kind::mlp && cfg.decoder_hidden > 0) {
      dims.emplace_back(cfg.decoder_hidden, fmt::format("--decoder-hidden {}", cfg.decoder_hidden));
    }
  } else {
    dims.emplace_back(mc.num_classes,
                      fmt::format("num_classes {} of dataset '{}' (task '{}' of its metadata.yaml)",
                                  mc.num_classes, ds.name, ds.task_name));
  }
  // The first of the widest wins: --hidden before a feature width or class count of equal size.
  auto const it = std::max_element(dims.begin(), dims.end(),
                                   [](const auto& a, const auto& b) { return a.first < b.first; });
  return it->second;
}

/// The tails a negative of `ds`'s link task is drawn from (make_link_batch): the items on
/// user-item data, the widest destination type of a relation on typed data, else every vertex.
std::int64_t negative_tails_of(const dataset& ds) {
  const link_task& t = *ds.link;
  if (t.user_item()) return t.item_end - t.item_begin;
  if (!t.train.relation.empty() && ds.hetero) {
    std::int64_t most = 0;
    for (std::size_t r = 0; r < ds.hetero->edge_types.size(); ++r) {
      auto const [lo, hi] = relation_tail_range(*ds.hetero, static_cast<std::int64_t>(r));
      most = std::max<std::int64_t>(most, hi - lo);
    }
    return most;
  }
  return ds.num_nodes;
}

/// run_footprint::batch_bytes, input_rows and minibatch_bytes (their docstrings give the bound);
/// `in_dim` is the model's input width.
void minibatch_bound(const dataset& ds, const csc_graph& g, const train_config& cfg,
                     std::int64_t in_dim, run_footprint& f) {
  eid_t const max_degree = max_in_degree(g);
  auto const n_total = static_cast<double>(ds.num_nodes);
  // A global batch is at most the training set (the last short batch aside).
  auto const train_items = static_cast<double>(cfg.task == task_kind::link_prediction && ds.link
                                                   ? ds.link->train.size()
                                                   : static_cast<std::int64_t>(ds.train.size()));
  double const global =
      std::min(static_cast<double>(cfg.batch_size),
               train_items > 0 ? train_items : static_cast<double>(cfg.batch_size));
  double n = std::ceil(global / static_cast<double>(std::max(cfg.num_pes, 1)));
  if (cfg.task == task_kind::link_prediction) n *= 2.0 + cfg.negatives;
  n = std::min(n, n_total);
  double bytes = 0;
  double const width =
      std::max(static_cast<double>(cfg.hidden) * static_cast<double>(cfg.heads), 1.0);
  for (int fan_out : cfg.fanouts) {
    double const fan = fan_out < 0 ? static_cast<double>(max_degree) : static_cast<double>(fan_out);
    double const edges = std::min(n * fan, static_cast<double>(g.num_edges()));
    double const src = std::min(n * (1 + fan), n_total);
    bytes += edges * 12 + src * 16;  // block: source id + weight per edge, ids and degrees
    bytes += n * width * 4 * 3;      // the layer's output, its cache and its gradient
    n = src;
  }
  bytes += n * static_cast<double>(std::max<std::int64_t>(in_dim, 1)) * 4 * 2;  // rows, dropout
  // Options far beyond any machine give more than 64 bits of bytes: saturate.
  f.batch_bytes = bytes < 1.8e19 ? static_cast<std::uint64_t>(bytes) : kSaturated;
  f.input_rows = static_cast<std::int64_t>(n);
  f.minibatch_bytes =
      saturating_mul(f.batch_bytes, static_cast<std::uint64_t>(f.prepared_batches));
}

}  // namespace

std::uint64_t run_footprint::host_bytes() const {
  std::uint64_t total = 0;
  for (const run_allocation& p : parts) total = saturating_add(total, p.bytes);
  return total;
}

run_footprint run_footprint_of(const dataset& ds, const train_config& cfg, const csc_graph* g) {
  run_footprint f;
  auto const P = static_cast<std::uint64_t>(std::max(cfg.num_pes, 1));
  // The prefetch thread prepares --prefetch batches ahead of the step's (host and emulated).
  f.prepared_batches = 1 + (cfg.compute_backend == backend::cuda ? 0 : std::max(cfg.prefetch, 0));
  models::model_config const mc = model_config_for(ds, cfg);
  // No input width (a dataset without features and no --embedding-dim) or no classes: there is
  // no model to size, and the trainer refuses the run with its own message.
  f.parameters = mc.in_dim >= 1 && mc.num_classes >= 1 ? models::layout_of(mc).num_values : 0;
  f.model_bytes = saturating_bytes(f.parameters, 4 * sizeof(float));
  f.host_replicas = cfg.compute_backend == backend::cuda ? 1 : static_cast<std::int64_t>(P);
  std::uint64_t const model_host =
      saturating_mul(f.model_bytes, static_cast<std::uint64_t>(f.host_replicas));
  f.parts.push_back(
      {"the model", widest_dimension(ds, cfg, mc),
       fmt::format("the model ({}, {} layers, input width {}) has {} parameters; {} {} of it at "
                   "16 bytes a parameter (value, gradient and Adam's two moments, float32)",
                   models::to_string(cfg.model), mc.num_layers, mc.in_dim, f.parameters,
                   f.host_replicas, f.host_replicas == 1 ? "host copy" : "PE replicas"),
       model_host});
  if (ds.hetero) {
    // Typed graphs: the featureless types' rows are learnt at the input width, and every PE holds
    // the whole table (models/embedding.hpp; the featured types' rows take no memory there).
    const hetero_schema& h = *ds.hetero;
    std::uint64_t learnt = 0;
    for (std::int64_t t = 0; t < h.num_node_types(); ++t) {
      if (h.feature_dim(t) == 0) {
        learnt += static_cast<std::uint64_t>(std::max<vid_t>(h.count(t), 0));
      }
    }
    std::int64_t const width = cfg.embedding_dim > 0 ? cfg.embedding_dim : hetero_input_dim(ds);
    if (learnt > 0 && width > 0) {
      f.embedding_rows = static_cast<std::int64_t>(learnt);
      f.embedding_bytes = saturating_mul(saturating_mul(learnt, static_cast<std::uint64_t>(width)),
                                         3 * sizeof(float));
      f.parts.push_back(
          {"the learnt embeddings of the featureless node types",
           cfg.embedding_dim > 0 ? fmt::format("--embedding-dim {}", cfg.embedding_dim)
                                 : fmt::format("the input width {}", width),
           fmt::format("learnt rows of the featureless types: {} PEs x {} rows x {} columns x "
                       "12 bytes (value and Adam's two moments, float32)",
                       P, learnt, width),
           saturating_mul(f.embedding_bytes, P)});
    }
  } else if (cfg.embedding_dim > 0) {
    // Every PE holds the whole table in both modes (models::embedding_table, one per replica).
    auto const rows = static_cast<std::uint64_t>(std::max<vid_t>(ds.num_nodes, 0));
    f.embedding_rows = static_cast<std::int64_t>(rows);
    f.embedding_bytes = saturating_mul(
        saturating_mul(rows, static_cast<std::uint64_t>(cfg.embedding_dim)), 3 * sizeof(float));
    f.parts.push_back(
        {"the learnt embeddings", fmt::format("--embedding-dim {}", cfg.embedding_dim),
         fmt::format("learnt input rows: {} PEs x {} rows x {} columns x 12 bytes (value and "
                     "Adam's two moments, float32)",
                     P, rows, cfg.embedding_dim),
         saturating_mul(f.embedding_bytes, P)});
  }
  if (cfg.task == task_kind::link_prediction && ds.link) {
    f.negative_tails = negative_tails_of(ds);
    auto const positives = static_cast<std::uint64_t>(
        std::min<std::int64_t>(cfg.batch_size, static_cast<std::int64_t>(ds.link->train.size())));
    std::uint64_t const pairs =
        saturating_mul(positives, 1 + static_cast<std::uint64_t>(std::max(cfg.negatives, 0)));
    auto const prepared = static_cast<std::uint64_t>(f.prepared_batches);
    f.link_pair_bytes = saturating_mul(saturating_mul(pairs, kLinkPairBytes), prepared);
    f.parts.push_back(
        {"the link pairs", fmt::format("--negatives {}", cfg.negatives),
         fmt::format("{} link pairs: {} positives x (1 + {} negatives) x {} bytes",
                     prepared == 1 ? std::string("one step's")
                                   : fmt::format("{} prepared steps' (--prefetch {})", prepared,
                                                 cfg.prefetch),
                     positives, cfg.negatives, kLinkPairBytes),
         f.link_pair_bytes});
  }
  if (g != nullptr) minibatch_bound(ds, *g, cfg, mc.in_dim, f);
  std::erase_if(f.parts, [](const run_allocation& p) { return p.bytes == 0; });
  std::stable_sort(
      f.parts.begin(), f.parts.end(),
      [](const run_allocation& a, const run_allocation& b) { return a.bytes > b.bytes; });
  return f;
}

void check_run_footprint(const dataset& ds, const train_config& cfg) {
  run_footprint const f = run_footprint_of(ds, cfg);
  if (f.negative_tails > 0 && cfg.negatives > f.negative_tails) {
    throw logic_error(fmt::format(
        "--negatives {} exceeds the {} candidate tails of dataset '{}' ({}) that a positive's "
        "negatives are drawn from; use --negatives {} or fewer",
        cfg.negatives, f.negative_tails, ds.name,
        ds.link->user_item() ? "its items"
        : ds.hetero          ? "the largest destination node type of a relation"
                             : "its vertices",
        f.negative_tails));
  }
  if (f.parts.empty()) return;
  std::uint64_t const total = f.host_bytes();
  memory_limit const lim = host_memory_limit();
  std::string const why = memory_shortfall(total, f.parts.front().what, lim);
  if (why.empty()) return;
  std::string others;  // the other parts, which the total includes
  for (std::size_t i = 1; i < f.parts.size(); ++i) {
    others += fmt::format("{}{} for {} ({})", i == 1 ? "" : ", ", format_bytes(f.parts[i].bytes),
                          f.parts[i].name, f.parts[i].option);
  }
  throw logic_error(fmt::format(
      "{}: the run needs {}{}; use a smaller value", f.parts.front().option, why,
      others.empty() ? std::string() : fmt::format(" (the total includes {})", others)));
}

}  // namespace coopgnn
