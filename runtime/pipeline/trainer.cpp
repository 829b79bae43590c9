#include "runtime/pipeline/trainer.hpp"

#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <exception>
#include <limits>
#include <mutex>
#include <numeric>
#include <optional>
#include <thread>

#include "kernels/dense/elementwise.hpp"
#include "kernels/dense/link_ops.hpp"
#include "models/layers.hpp"
#include "models/metrics.hpp"
#include "runtime/comm/fault_injection.hpp"
#include "runtime/core/error.hpp"
#include "runtime/core/memory_limit.hpp"
#include "runtime/core/nvtx.hpp"
#include "runtime/core/profile_window.hpp"
#include "runtime/core/rng.hpp"
#include "runtime/core/timer.hpp"
#include "runtime/graph/npy.hpp"
#include "runtime/pipeline/trainer_internal.hpp"

namespace coopgnn {

namespace {

/// The init stream of the embedding table (models use layer indices 0..num_layers + 2).
constexpr std::uint32_t kEmbeddingLayerIndex = 1U << 20;

/// Cooperative: row r of the table `get(q)` assembled from its owner q's replica.
template <typename Get>
matrix<float> owner_rows(std::size_t pes, const ownership& owners, Get&& get) {
  matrix<float> table = get(0);
  for (std::size_t q = 1; q < pes; ++q) {
    matrix<float> const mine = get(q);
    for (vid_t r = 0; r < table.rows(); ++r) {
      if (owners.owner(r) == static_cast<int>(q)) {
        std::copy_n(&mine(r, 0), table.cols(), &table(r, 0));
      }
    }
  }
  return table;
}

/// The step's input rows per node type and sampled edges per relation (work_counters).
void count_by_type(const hetero_schema& h, const exec_context& ctx, const minibatch& mb,
                   work_counters& w) {
  // Read in place on the host; copies where the minibatch lives on a device (ids and offsets
  // only: an accounting cost typed runs pay, untyped runs never).
  auto const T = h.node_types.size();
  auto const R = h.edge_types.size();
  w.rows_per_type.assign(T, 0);
  w.edges_per_relation.assign(R, 0);
  std::vector<vid_t> id_copy;
  auto const ids = host_readable<vid_t>(ctx, mb.input_nodes.view(), id_copy);
  for (vid_t v : ids) ++w.rows_per_type[static_cast<std::size_t>(h.type_of(v))];
  // Relations merged (untyped blocks of a typed dataset): no per-relation split to count.
  if (!mb.blocks.empty() && mb.blocks.front().num_relations == 1 && R > 1) {
    w.edges_per_relation.clear();
    return;
  }
  for (auto const& b : mb.blocks) {
    std::vector<eid_t> ip_copy;
    auto const ip = host_readable<eid_t>(ctx, b.indptr.view(), ip_copy);
    auto const rows = static_cast<std::size_t>(b.num_dst) * R;
    COOPGNN_EXPECTS(static_cast<std::int32_t>(R) == b.num_relations && ip.size() == rows + 1,
                    "count_by_type: a block of {} rows per destination for {} relations",
                    b.num_relations, R);
    for (std::size_t row = 0; row < rows; ++row)
      w.edges_per_relation[row % R] += ip[row + 1] - ip[row];
  }
}

}  // namespace

std::int64_t hetero_input_dim(const dataset& ds) {
  COOPGNN_EXPECTS(ds.hetero.has_value(), "hetero_input_dim: dataset '{}' is not heterogeneous",
                  ds.name);
  std::int64_t width = 0;
  std::string first;
  for (std::size_t t = 0; t < ds.hetero->node_types.size(); ++t) {
    auto const& x = ds.hetero->features[t];
    if (x.cols() == 0) continue;
    COOPGNN_EXPECTS(width == 0 || x.cols() == width,
                    "dataset '{}': node types '{}' and '{}' have features of widths {} and {}; "
                    "the R-GCN input takes one width for every type",
                    ds.name, first, ds.hetero->node_types[t], width, x.cols());
    if (width == 0) first = ds.hetero->node_types[t];
    width = x.cols();
  }
  return width;
}

models::model_config model_config_for(const dataset& ds, const train_config& cfg) {
  models::model_config mc;
  bool const link = cfg.task == task_kind::link_prediction;
  mc.kind = cfg.model;
  mc.in_dim = cfg.embedding_dim > 0 ? cfg.embedding_dim
              : ds.hetero           ? hetero_input_dim(ds)
                                    : ds.feature_dim();
  mc.hidden = cfg.hidden;
  mc.num_classes = link ? (cfg.out_dim > 0 ? cfg.out_dim : cfg.hidden) : ds.num_classes;
  mc.layer_norm = cfg.layer_norm;
  mc.activation = cfg.activation;
  if (link) {
    mc.decoder = cfg.decoder;
    mc.decoder_hidden = cfg.decoder_hidden > 0 ? cfg.decoder_hidden : cfg.hidden;
    // DistMult: one diagonal per edge type of the graph (the pairs' relation indices are
    // edge-type indices); 1 on untyped graphs.
    mc.decoder_relations =
        ds.hetero ? static_cast<std::int64_t>(ds.hetero->edge_types.size()) : std::int64_t{1};
  }
  mc.num_layers = static_cast<int>(cfg.fanouts.size());
  mc.linear_head = cfg.linear_head;
  mc.dropout = cfg.dropout;
  mc.seed = cfg.seed;
  mc.gat.heads = cfg.heads;
  mc.gat.attn_dropout = cfg.attn_dropout;
  mc.gat.negative_slope = cfg.negative_slope;
  mc.gat.residual = cfg.residual;
  mc.out_heads = cfg.out_heads;
  mc.rgcn.num_relations =
      ds.hetero ? static_cast<std::int32_t>(ds.hetero->edge_types.size()) : std::int32_t{1};
  mc.rgcn.num_bases = cfg.num_bases;
  mc.rgcn.num_blocks = cfg.num_blocks;
  if (cfg.num_blocks > 0) {
    // Eq. 4's blocks split every conv's input and output widths (models/layers.hpp): say which
    // width does not divide, by option, before the layer's own check.
    COOPGNN_EXPECTS(cfg.num_bases == 0,
                    "--num-blocks {} and --num-bases {}: choose one decomposition", cfg.num_blocks,
                    cfg.num_bases);
    for (int l = 0; l < mc.num_layers; ++l) {
      bool const last = l + 1 == mc.num_layers;
      std::int64_t const in = l == 0 ? mc.in_dim : mc.hidden;
      std::int64_t const out = last && !mc.linear_head ? mc.num_classes : mc.hidden;
      COOPGNN_EXPECTS(in % cfg.num_blocks == 0 && out % cfg.num_blocks == 0,
                      "--num-blocks {}: R-GCN layer {} is {} -> {} wide, and both widths must be "
                      "multiples of it (input: the feature width; hidden: --hidden; output: the "
                      "class count, or --hidden with --linear-head)",
                      cfg.num_blocks, l, in, out);
    }
  }
  return mc;
}

trainer::trainer(const dataset& ds, const csc_graph& g, const train_config& cfg)
    : ds_(ds), g_(g), cfg_(cfg) {
  if (ds.hetero) {
    // Typed graphs (docs/typed-sampling.md): R-GCN on the typed CSC; every input row comes from one
    // table of the featured types' width: their features (frozen) or learnable embeddings. The
    // untyped models run on the relations-merged view (an untyped CSC of the same edges: bench
    // modes' GCN baseline for R-GCN), with the same input table.
    bool const merged = cfg.model != models::conv_kind::rgcn;
    COOPGNN_EXPECTS(!merged || (!g.typed() && cfg.relation_fanouts.empty()),
                    "dataset '{}' is heterogeneous ({} node types, {} edge types): train it with "
                    "--model rgcn (--model {} takes untyped graphs: give it the relations-merged "
                    "untyped CSC, build_csc(num_nodes, src, dst), without relation fanouts)",
                    ds.name, ds.hetero->node_types.size(), ds.hetero->edge_types.size(),
                    models::to_string(cfg.model));
    COOPGNN_EXPECTS(!merged || cfg.task == task_kind::node_classification,
                    "dataset '{}': link prediction on a heterogeneous graph takes --model rgcn "
                    "(its pairs carry their relation; the relations-merged view has none)",
                    ds.name);
    if (cfg.task == task_kind::link_prediction && ds.link) {
      // Typed link prediction: pairs carry their relation (validate_dataset checks them).
      for (const pair_set* s : {&ds.link->train, &ds.link->valid, &ds.link->test}) {
        COOPGNN_EXPECTS(s->relation.size() == s->src.size(),
                        "dataset '{}': a link set has {} pairs but {} relations (pairs of a "
                        "heterogeneous graph's task name their relation)",
                        ds.name, s->src.size(), s->relation.size());
      }
      // Exclusion keys hold s R + r in 32 bits (edge_exclusion_key); the CUDA kernels do not
      // check it per edge, so the bound is checked here, once, for every backend.
      auto const R = static_cast<std::int64_t>(ds.hetero->edge_types.size());
      COOPGNN_EXPECTS(
          cfg.exclude == exclude_kind::none || ds.num_nodes <= (std::int64_t{1} << 32) / R,
          "dataset '{}': --exclude {} keys (destination x {} relations + relation) "
          "need |V| x R <= 2^32, but |V| = {}; use --exclude none",
          ds.name, to_string(cfg.exclude), R, ds.num_nodes);
      for (std::size_t r = 0; r < ds.hetero->edge_types.size(); ++r) {
        reverse_relation_.push_back(
            cfg.exclude == exclude_kind::reverse
                ? reverse_edge_type(*ds.hetero, static_cast<std::int64_t>(r))
                : -1);
      }
    }
    COOPGNN_EXPECTS(
        merged || (g.num_relations == static_cast<std::int32_t>(ds.hetero->edge_types.size()) &&
                   (g.typed() || g.num_edges() == 0)),
        "dataset '{}' has {} edge types but its graph {} relations (build it with the "
        "edge types: build_csc(..., edge_type, R))",
        ds.name, ds.hetero->edge_types.size(), g.num_relations);
    std::int64_t const F = hetero_input_dim(ds);
    COOPGNN_EXPECTS(F > 0 || cfg.embedding_dim > 0,
                    "dataset '{}': no node type has features; learn them with --embedding-dim D",
                    ds.name);
    COOPGNN_EXPECTS(F == 0 || cfg.embedding_dim == 0 || cfg.embedding_dim == F,
                    "--embedding-dim {}: the featured node types of dataset '{}' are {} wide, and "
                    "the featureless types' embeddings take the same width (leave it out)",
                    cfg.embedding_dim, ds.name, F);
    if (cfg_.embedding_dim == 0) cfg_.embedding_dim = F;
  } else {
    COOPGNN_EXPECTS(!g.typed(), "the graph has {} relations but dataset '{}' is untyped",
                    g.num_relations, ds.name);
  }
  if (!cfg.relation_fanouts.empty()) {
    COOPGNN_EXPECTS(cfg.relation_fanouts.size() ==
                        cfg.fanouts.size() * static_cast<std::size_t>(g.num_relations),
                    "relation fanouts: {} entries for {} layers x {} relations",
                    cfg.relation_fanouts.size(), cfg.fanouts.size(), g.num_relations);
  }
  COOPGNN_EXPECTS(cfg.num_pes >= 1, "--pes must be at least 1, got {}", cfg.num_pes);
  COOPGNN_EXPECTS(cfg.batch_size >= 1, "--batch-size must be at least 1, got {}", cfg.batch_size);
  COOPGNN_EXPECTS(!cfg.fanouts.empty(), "--fanouts needs at least one layer");
  for (int f : cfg.fanouts) {
    COOPGNN_EXPECTS(f >= -1, "--fanouts: {} is not a count >= 0 or -1 (all neighbours)", f);
  }
  COOPGNN_EXPECTS(cfg.hidden >= 1, "--hidden must be at least 1, got {}", cfg.hidden);
  COOPGNN_EXPECTS(cfg.dropout >= 0.0f && cfg.dropout < 1.0f, "--dropout {} is outside [0, 1)",
                  cfg.dropout);
  COOPGNN_EXPECTS(cfg.epochs >= 0, "--epochs must be non-negative, got {}", cfg.epochs);
  bool const link = cfg.task == task_kind::link_prediction;
  COOPGNN_EXPECTS(cfg.embedding_dim >= 0, "--embedding-dim {} is negative", cfg.embedding_dim);
  COOPGNN_EXPECTS(ds.feature_dim() > 0 || cfg_.embedding_dim > 0,
                  "dataset '{}' has no node features; learn embeddings with --embedding-dim D, "
                  "or attach features with `coopgnn generate task`",
                  ds.name);
  COOPGNN_EXPECTS(g.num_nodes == ds.num_nodes, "graph has {} vertices, dataset {}", g.num_nodes,
                  ds.num_nodes);
  if (link) {
    COOPGNN_EXPECTS(ds.link.has_value(),
                    "dataset '{}' has no link-prediction task; make one with `coopgnn "
                    "split-edges`",
                    ds.name);
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
  } else {
    COOPGNN_EXPECTS(!ds.labels.empty() && ds.num_classes >= 2,
                    "dataset '{}' has no classification labels{}", ds.name,
                    ds.link ? " (it has a link-prediction task: --task link_prediction)" : "");
    COOPGNN_EXPECTS(!ds.train.empty(), "dataset '{}' has an empty training split", ds.name);
    for (vid_t v : ds.train) {
      COOPGNN_EXPECTS(ds.labels[v] >= 0, "training vertex {} has no label", v);
    }
    items_ = ds.train;
  }
  COOPGNN_EXPECTS(!(cfg.drop_last && cfg.wrap_around),
                  "--drop-last and wrap_around both set: an epoch's tail is either dropped or "
                  "filled, not both");
  COOPGNN_EXPECTS(!cfg.drop_last || static_cast<std::int64_t>(items_.size()) >= cfg.batch_size,
                  "--drop-last with --batch-size {} above the {} training {} leaves no batch in "
                  "an epoch",
                  cfg.batch_size, items_.size(), link ? "pairs" : "vertices");
  if (cfg.mode == minibatch_mode::cooperative) {
    // Typed graphs: every PE owns its share of every node type (docs/design.md section 5).
    owners_ = ds.hetero ? ownership(ds.num_nodes, cfg.num_pes, cfg.seed, ds.hetero->node_offsets)
                        : ownership(ds.num_nodes, cfg.num_pes, cfg.seed);
  }
  COOPGNN_EXPECTS(cfg.comm_timeout_s >= 0 && cfg.comm_timeout_s <= 1e9,
                  "--peer-timeout {} s must be in [0, 1e9] (0 = wait forever)", cfg.comm_timeout_s);
  (void)fault_injection::from_env();  // a malformed COOPGNN_FAULT_INJECT fails here, not mid-run
  group_ = std::make_shared<host_comm_group>(
      cfg.num_pes,
      std::chrono::milliseconds(static_cast<std::int64_t>(std::ceil(cfg.comm_timeout_s * 1e3))));
  auto const mc = model_config_for(ds, cfg_);
  // The feature table's tier. Host backend: host, or the mapped .npy file. CUDA backend:
  // setup_cuda_features picks device, pinned, host or mmap and makes the device copies. With
  // learnable embeddings there is no feature table.
  bool const table = cfg_.embedding_dim == 0;
  if (cfg.compute_backend == backend::cuda) {
    setup_cuda_features();
  } else if (table) {
    auto const tier = choose_storage_tier(backend::host, ds.num_nodes * ds.feature_row_bytes(),
                                          {0, default_host_budget_bytes()}, cfg.feature_storage,
                                          ds.features_in_memory(), !ds.feature_file.empty());
    set_host_features(tier);
  }
  if (table) {
    COOPGNN_EXPECTS(features_->rows() == ds.num_nodes && features_->cols() == ds.feature_dim() &&
                        features_->dtype() == ds.feature_type,
                    "{}: the mapped features are [{}, {}] {}, the dataset's [{}, {}] {}",
                    ds.feature_file.string(), features_->rows(), features_->cols(),
                    to_string(features_->dtype()), ds.num_nodes, ds.feature_dim(),
                    to_string(ds.feature_type));
  }
  for (int p = 0; p < cfg.num_pes; ++p) {
    bind_device(p);  // a replica's parameters are allocated and initialised on its device
    pes_.push_back(
        std::make_unique<pe_state>(p, cfg, compute_context(p), mc, group_, features_.get()));
    if (cfg.cache_policy != cache_policy_kind::none) {
      COOPGNN_EXPECTS(table,
                      "--cache-policy {}: there is no feature table to cache with "
                      "--embedding-dim",
                      to_string(cfg.cache_policy));
      pes_.back()->store.set_cache(make_cache_policy(to_string(cfg.cache_policy), cfg.cache_rows));
    }
    if (!table) {
      // Every replica starts from the same table (keyed init) under a layer index no model
      // layer uses.
      pes_.back()->emb = std::make_unique<models::embedding_table>(
          pes_.back()->ctx, ds.num_nodes, cfg_.embedding_dim, cfg.seed, kEmbeddingLayerIndex,
          detail::adam_options_of(cfg, nullptr));
      if (ds.hetero) {
        // Featured types: their rows are their features, never updated.
        for (std::size_t t = 0; t < ds.hetero->node_types.size(); ++t) {
          if (ds.hetero->features[t].cols() == 0) continue;
          pes_.back()->emb->set_frozen_rows(ds.hetero->node_offsets[t], ds.hetero->features[t]);
        }
      }
    }
  }
  if (cfg.compute_backend == backend::cuda) setup_cuda_pes();
  place_graphs();
  COOPGNN_EXPECTS(cfg.batch_dependency >= 0,
                  "--batch-dependency {} is negative: 0 = never refresh, 1 = independent batches",
                  cfg.batch_dependency);
  // Every PE must key sampling and dropout on the same seed: PE 0's is broadcast.
  pes_[0]->run_seed = cfg.seed;
  run_pes([](pe_state& pe) {
    pe.comm.broadcast(std::as_writable_bytes(std::span<std::uint64_t>(&pe.run_seed, 1)), 0);
  });
}

void trainer::set_host_features(storage_tier tier) {
  if (tier == storage_tier::mmap) {
    features_ = feature_table::map_npy(ds_.feature_file);
    return;
  }
  if (ds_.features_are_16bit()) {
    // 16-bit features stay 16-bit in host memory (read at their width when left in the file).
    if (!ds_.features_in_memory() && owned_features16_.rows() == 0) {
      auto a = read_npy_bits16(ds_.feature_file);
      owned_features16_ =
          matrix<std::uint16_t>(ds_.num_nodes, ds_.feature_dim(), std::move(a.data));
    }
    features_ = feature_table::borrow(ds_.features_in_memory() ? ds_.features16 : owned_features16_,
                                      ds_.feature_type);
    return;
  }
  if (!ds_.features_in_memory() && owned_features_.rows() == 0) {
    // Left in the file by read_dataset: load it now.
    auto a = read_npy<float>(ds_.feature_file);
    owned_features_ = matrix<float>(ds_.num_nodes, ds_.feature_dim(), std::move(a.data));
  }
  features_ = feature_table::borrow(ds_.features_in_memory() ? ds_.features : owned_features_);
}

const models::gnn_model& trainer::model(int pe) const { return pes_.at(pe)->model; }
models::gnn_model& trainer::model(int pe) { return pes_.at(pe)->model; }

const models::gnn_model& trainer::host_model(int pe) const {
  const models::gnn_model& replica = pes_.at(pe)->model;
  if (replica.params().space() == memory_space::host) return replica;
  if (!host_copy_) {
    host_copy_ = std::make_unique<models::gnn_model>(exec_context(backend::host), replica.config());
  }
  bind_device(pe);
  host_copy_->copy_parameters_from(replica);
  return *host_copy_;
}

std::string trainer::metric_name() const {
  if (cfg_.task == task_kind::link_prediction) return link_task_metric_name(*ds_.link, cfg_.topk);
  if (cfg_.macro_f1) return "macro_f1";
  return ds_.num_classes == 2 ? "roc_auc" : "accuracy";
}

const models::embedding_table* trainer::embeddings(int pe) const { return pes_.at(pe)->emb.get(); }

std::int64_t epoch_batch_count(std::int64_t items, std::int64_t batch_size, bool drop_last) {
  COOPGNN_EXPECTS(items >= 0, "epoch_batch_count: {} items is negative", items);
  COOPGNN_EXPECTS(batch_size >= 1, "--batch-size must be at least 1, got {}", batch_size);
  return drop_last ? items / batch_size : (items + batch_size - 1) / batch_size;
}

std::vector<vid_t> epoch_batch(std::span<const vid_t> order, std::int64_t batch_size,
                               std::int64_t index, bool wrap_around) {
  COOPGNN_EXPECTS(batch_size >= 1, "--batch-size must be at least 1, got {}", batch_size);
  COOPGNN_EXPECTS(index >= 0, "epoch_batch: batch index {} is negative", index);
  auto const n = static_cast<std::int64_t>(order.size());
  if (wrap_around) {
    auto const b = std::min(batch_size, n);
    std::vector<vid_t> batch(static_cast<std::size_t>(b));
    // index * b in 128 bits, so that no index overflows before the reduction mod n.
    auto const start = static_cast<std::int64_t>(
        (static_cast<unsigned __int128>(index) * static_cast<unsigned __int128>(b)) %
        static_cast<unsigned __int128>(std::max<std::int64_t>(n, 1)));
    for (std::int64_t i = 0; i < b; ++i) batch[i] = order[(start + i) % n];
    return batch;
  }
  auto const count = epoch_batch_count(n, batch_size, false);
  COOPGNN_EXPECTS(index < count,
                  "epoch_batch: batch {} of an epoch of {} items in batches of {} "
                  "(it holds {})",
                  index, n, batch_size, count);
  auto const lo = index * batch_size, hi = std::min(n, lo + batch_size);
  return {order.begin() + lo, order.begin() + hi};
}

std::int64_t trainer::batches_per_epoch() const {
  return epoch_batch_count(static_cast<std::int64_t>(items_.size()), cfg_.batch_size,
                           cfg_.drop_last);
}

std::vector<vid_t> epoch_order(std::span<const vid_t> train, std::uint64_t seed, int epoch) {
  auto const st = rng::make_stream(seed, rng::purpose::shuffle, 0);
  std::vector<std::pair<std::uint64_t, vid_t>> keyed;
  keyed.reserve(train.size());
  for (vid_t v : train) {
    auto const r =
        rng::draw4(st, static_cast<std::uint64_t>(v), 0, static_cast<std::uint32_t>(epoch));
    keyed.emplace_back((static_cast<std::uint64_t>(r[0]) << 32) | r[1], v);
  }
  std::sort(keyed.begin(), keyed.end());
  std::vector<vid_t> order;
  order.reserve(keyed.size());
  for (auto const& kv : keyed) order.push_back(kv.second);
  return order;
}

std::vector<vid_t> trainer::epoch_order(int epoch) const {
  return coopgnn::epoch_order(items_, cfg_.seed, epoch);
}

std::vector<vid_t> trainer::epoch_batch(std::span<const vid_t> order, std::int64_t index) const {
  return coopgnn::epoch_batch(order, cfg_.batch_size, index, cfg_.wrap_around);
}

void trainer::run_pes(const std::function<void(pe_state&)>& body) {
  std::vector<std::exception_ptr> errors(pes_.size());
  std::mutex mu;
  std::condition_variable cv;
  std::vector<char> finished(pes_.size(), 0);
  {
    std::vector<std::jthread> threads;
    for (std::size_t p = 0; p < pes_.size(); ++p) {
      threads.emplace_back([&, p] {
        nvtx::name_thread(fmt::format("pe{}", p));
        try {
          bind_device(static_cast<int>(p));
          body(*pes_[p]);
        } catch (const std::exception& e) {
          errors[p] = std::current_exception();
          auto const why = fmt::format("PE {} failed: {}", p, e.what());
          group_->abort(why);
          if (pes_[p]->device_comm != nullptr) pes_[p]->device_comm->abort(why);
        }
        {
          std::lock_guard lk(mu);
          finished[p] = 1;
        }
        cv.notify_all();
      });
    }
    exit_if_hung(mu, cv, finished);
  }
  // Prefer the root cause over the comm_errors it caused on the peers.
  std::exception_ptr first;
  for (auto& e : errors) {
    if (!e) continue;
    try {
      std::rethrow_exception(e);
    } catch (const comm_error&) {
      if (!first) first = e;
    } catch (...) {
      std::rethrow_exception(e);
    }
  }
  if (first) std::rethrow_exception(first);
}

// A PE still running one peer timeout after the group failed is hung: it never reaches the
// collective that would raise, so its thread cannot be joined. Report it and end the process.
void trainer::exit_if_hung(std::mutex& mu, std::condition_variable& cv,
                           const std::vector<char>& finished) const {
  auto const limit = group_->timeout();
  std::unique_lock lk(mu);
  std::optional<std::chrono::steady_clock::time_point> failed_at;
  auto const all = [&] { return std::all_of(finished.begin(), finished.end(), std::identity{}); };
  while (!cv.wait_for(lk, std::chrono::milliseconds(50), all)) {
    if (limit.count() == 0 || !group_->aborted()) continue;  // --peer-timeout 0: no limit
    auto const now = std::chrono::steady_clock::now();
    if (!failed_at) failed_at = now;
    if (now - *failed_at <= limit) continue;
    std::vector<std::size_t> hung;
    for (std::size_t p = 0; p < finished.size(); ++p) {
      if (finished[p] == 0) hung.push_back(p);
    }
    std::fprintf(stderr,
                 "coopgnn: error: PE%s %s still running %.3g s (--peer-timeout) after the run "
                 "failed (%s): hung; exiting without waiting for %s\n",
                 hung.size() == 1 ? "" : "s", fmt::format("{}", fmt::join(hung, ", ")).c_str(),
                 static_cast<double>(limit.count()) / 1e3, group_->reason().c_str(),
                 hung.size() == 1 ? "it" : "them");
    std::fflush(stdout);
    std::fflush(stderr);
    std::_Exit(1);
  }
}

link_batch trainer::link_pairs(const pe_state& pe, std::span<const vid_t> global_batch,
                               std::uint32_t batch_index) const {
  int const P = cfg_.num_pes;
  int const p = pe.comm.rank();
  auto const B = static_cast<std::int64_t>(global_batch.size());
  std::vector<vid_t> mine;
  if (cfg_.mode == minibatch_mode::cooperative) {
    for (vid_t i : global_batch) {
      COOPGNN_EXPECTS(i >= 0 && i < ds_.link->train.size(),
                      "link batch: positive {} is outside the {} training pairs", i,
                      ds_.link->train.size());
      if (owners_.owner(ds_.link->train.src[static_cast<std::size_t>(i)]) == p) mine.push_back(i);
    }
  } else {
    auto const lo = B * p / P, hi = B * (p + 1) / P;
    mine.assign(global_batch.begin() + lo, global_batch.begin() + hi);
  }
  return make_link_batch(*ds_.link, mine, cfg_.negatives, pe.run_seed, batch_index, ds_.num_nodes,
                         ds_.hetero ? &*ds_.hetero : nullptr);
}

void trainer::pe_step(pe_state& pe, std::span<const vid_t> global_batch, std::uint32_t batch_index,
                      const step_options& opt) {
  int const P = cfg_.num_pes;
  int const p = pe.comm.rank();
  auto const L = cfg_.fanouts.size();
  bool const coop = cfg_.mode == minibatch_mode::cooperative;
  bool const link = cfg_.task == task_kind::link_prediction;
  auto const B = static_cast<std::int64_t>(global_batch.size());
  // The loss's normaliser: the batch, or the larger batch it is a share of (GGS over MPI).
  COOPGNN_EXPECTS(opt.normalise_by == 0 || opt.normalise_by >= B,
                  "step_options::normalise_by {} is below the batch's {} items", opt.normalise_by,
                  B);
  auto const norm_B = opt.normalise_by > 0 ? opt.normalise_by : B;
  const exec_context& ctx = pe.ctx;
  communicator& rows = pe.rows_comm();
  std::vector<const communicator*> comms{&pe.comm};
  if (pe.device_comm != nullptr) comms.push_back(pe.device_comm);
  step_meter m(std::move(comms), pe.clock);
  work_counters w;
  std::int64_t staging = 0;

  // 1. This PE's seeds. Node classification: the batch's vertices it owns (cooperative) or its
  //    slice (independent). Link prediction: the distinct endpoints of the pairs it scores
  //    (independent), or the endpoints any PE asked it for (cooperative; the pairs' route).
  std::vector<vid_t> seeds;
  link_batch lb;
  exchange_route pair_route;
  if (link) {
    int const span = m.stage_begin();
    COOPGNN_NVTX_RANGE("sample/pairs");
    lb = link_pairs(pe, global_batch, batch_index);
    if (coop) {
      // The pairs are host data: their endpoints go to the owners over the host communicator,
      // and the route is placed in the PE's space for the row exchanges.
      owner_exchange x = exchange_with_owners(pe.host_ctx, pe.comm, host_view(owners_.map()),
                                              host_view(std::as_const(lb.targets)));
      m.traffic.push_back({-1, "ids", x.id_bytes});
      seeds = std::move(x.owned).release_host();
      pair_route = make_route(ctx, copy_plan(ctx, x.plan), static_cast<std::int64_t>(seeds.size()));
    } else {
      seeds = lb.targets;
    }
    m.mark_sent();
    m.stage_end(m.t.sample, m.cpu.sample, span);
  } else if (coop) {
    for (vid_t v : global_batch) {
      if (owners_.owner(v) == p) seeds.push_back(v);
    }
  } else {
    auto const lo = B * p / P, hi = B * (p + 1) / P;
    seeds.assign(global_batch.begin() + lo, global_batch.begin() + hi);
  }
  batch_key const key{cfg_.sampler,
                      cfg_.fanouts,
                      pe.run_seed,
                      batch_index,
                      {cfg_.batch_dependency, cfg_.layer_dependency},
                      {},
                      cfg_.relation_fanouts};
  // Link prediction with --exclude: the global batch's positives (and reverses) leave every
  // layer's sample, on every PE alike.
  std::vector<std::uint64_t> excluded;
  if (link && cfg_.exclude != exclude_kind::none) {
    // Typed: u -> v in the positive's relation r, and v -> u in r's reverse edge type when the
    // schema has one (reverse_edge_type).
    // Untyped graphs are the case R = 1, r = 0, whose key is the untyped key bit for bit.
    bool const typed = !ds_.link->train.relation.empty();
    std::int32_t const R = typed ? g_.num_relations : 1;
    for (vid_t i : global_batch) {
      auto const k = static_cast<std::size_t>(i);
      vid_t const u = ds_.link->train.src[k];
      vid_t const v = ds_.link->train.dst[k];
      std::int32_t const r = typed ? ds_.link->train.relation[k] : 0;
      excluded.push_back(edge_exclusion_key(u, v, r, R));
      std::int64_t const rev = typed ? reverse_relation_[static_cast<std::size_t>(r)]
                               : cfg_.exclude == exclude_kind::reverse ? 0
                                                                       : -1;
      if (rev >= 0) excluded.push_back(edge_exclusion_key(v, u, static_cast<std::int32_t>(rev), R));
    }
    std::sort(excluded.begin(), excluded.end());
    excluded.erase(std::unique(excluded.begin(), excluded.end()), excluded.end());
  }
  step_batch in;
  sample(pe, seeds, key, excluded, opt, m, w, in);
  auto const& blocks = in.blocks;
  if (ds_.hetero) count_by_type(*ds_.hetero, ctx, in.mb, w);

  // 2. Feature loading: storage rows (or embedding rows) for the input nodes, then
  //    (cooperative) owner -> requester.
  tensor<float> h;
  {
    int const span = m.stage_begin();
    COOPGNN_NVTX_RANGE("cache/load_features");
    h = pe.emb ? pe.emb->gather(in.mb.input_nodes.view()) : load_features(pe, in, w);
    w.feature_rows += h.rows();
    // At the stored width: 2 bytes per element for a float16 / bfloat16 table (the rows are
    // widened to float32 by the gather, after they were read).
    w.feature_bytes += h.rows() * (pe.emb ? h.cols() * static_cast<std::int64_t>(sizeof(float))
                                          : features_->row_bytes());
    if (coop) {
      staging = std::max(staging, detail::staging_of(in.routes[L - 1], h.cols()));
      h = exchange_pull(ctx, rows, in.routes[L - 1], std::move(h), &pe.exchange_ws);
      m.record(static_cast<int>(L - 1), "features");
    }
    m.stage_end(m.t.feature_load, m.cpu.feature_load, span);
  }
  std::int64_t working_set = in.sample_bytes + static_cast<std::int64_t>(h.bytes());

  // 3. Forward: model layer i consumes block L-1-i; then the head (node classification) or the
  //    endpoints' rows reach the scoring PE and the decoder scores the pairs (link prediction).
  models::step_key const sk{pe.run_seed, batch_index, true};
  std::vector<models::layer_cache> caches(L);
  models::linear_cache<float> head_cache;
  models::decoder_cache<float> dec_cache;
  tensor<float> logits;
  buffer<std::int64_t> pair_src, pair_dst, pair_rel;
  buffer<float> scores;
  std::int64_t z_rows = 0;
  buffer_view<const vid_t> const seed_ids{blocks[0].src_ids, seeds.size(), blocks[0].space};
  {
    int const span = m.stage_begin();
    COOPGNN_NVTX_RANGE("model/forward");
    for (std::size_t i = 0; i < L; ++i) {
      std::size_t const b = L - 1 - i;
      h = pe.model.forward_layer(static_cast<int>(i), ctx, blocks[b], h.view(), sk, &caches[i]);
      auto const& conv = pe.model.layer(static_cast<int>(i));
      m.layers.push_back({static_cast<int>(b), blocks[b].num_dst, blocks[b].num_src,
                          blocks[b].num_edges, conv.in_dim(), conv.out_dim(),
                          conv.transform_first(), i > 0 || pe.emb != nullptr});
      working_set += caches[i].bytes();
      if (coop && b > 0) {
        staging = std::max(staging, detail::staging_of(in.routes[b - 1], h.cols()));
        h = exchange_pull(ctx, rows, in.routes[b - 1], std::move(h), &pe.exchange_ws);
        m.record(static_cast<int>(b - 1), "forward");
      }
    }
    if (link) {
      if (coop) {
        staging = std::max(staging, detail::staging_of(pair_route, h.cols()));
        h = exchange_pull(ctx, rows, pair_route, std::move(h), &pe.exchange_ws);
        m.record(-1, "forward");
      }
      z_rows = h.rows();
      pair_src = upload<std::int64_t>(ctx, lb.src_rows);
      pair_dst = upload<std::int64_t>(ctx, lb.dst_rows);
      pair_rel = upload<std::int64_t>(ctx, lb.relations);
      scores = pe.model.decoder()->forward(ctx, h.view(), pair_src.view(), pair_dst.view(),
                                           pair_rel.view(), &dec_cache);
      working_set += dec_cache.bytes() + static_cast<std::int64_t>(h.bytes() + scores.bytes());
    } else if (auto* head = pe.model.head()) {
      logits = head->forward(ctx, h.view(), seed_ids, sk, &head_cache);
    } else {
      logits = std::move(h);
    }
    working_set += static_cast<std::int64_t>(head_cache.x.bytes() + logits.bytes());
    m.stage_end(m.t.forward, m.cpu.forward, span);
  }

  // 4. Loss on this PE's seeds (or pairs), normalised by the global batch's seeds (or pairs);
  //    backward mirrors forward.
  double loss = 0;
  std::int64_t grad_peak = 0;
  tensor<float> input_grad;  // with embeddings: dL/d(input rows), one row per input node
  {
    int const span = m.stage_begin();
    COOPGNN_NVTX_RANGE("model/backward");
    pe.model.zero_grad();
    tensor<float> grad;
    if (link) {
      auto const pairs_total = static_cast<float>(norm_B * (1 + cfg_.negatives));
      buffer<float> const labels_placed = upload<float>(ctx, lb.labels);
      buffer<float> gs(ctx, scores.size());
      loss = bce_with_logits<float>(ctx, scores.view(), labels_placed.view(), 1.0f / pairs_total,
                                    gs.view());
      grad = pe.model.decoder()->backward(ctx, gs.view(), pair_src.view(), pair_dst.view(),
                                          pair_rel.view(), z_rows, dec_cache);
      if (coop) {
        grad = exchange_push(ctx, rows, pair_route, std::move(grad), &pe.exchange_ws);
        m.record(-1, "backward");
      }
    } else {
      std::vector<std::int64_t> labels(seeds.size());
      for (std::size_t i = 0; i < seeds.size(); ++i) labels[i] = ds_.labels[seeds[i]];
      buffer<std::int64_t> const labels_placed = to_space(ctx, std::move(labels));
      grad = tensor<float>(ctx, logits.rows(), logits.cols());
      loss = softmax_cross_entropy<float>(ctx, logits.view(), labels_placed.view(),
                                          1.0f / static_cast<float>(norm_B), grad.view());
      if (auto* head = pe.model.head()) grad = head->backward(ctx, grad.view(), head_cache);
    }
    for (std::size_t ii = L; ii-- > 0;) {
      std::size_t const b = L - 1 - ii;
      // Layer 0 consumes the input rows: a gradient flows further only into embeddings.
      grad = pe.model.backward_layer(static_cast<int>(ii), ctx, blocks[b], grad.view(), caches[ii],
                                     ii > 0 || pe.emb != nullptr);
      grad_peak = std::max(grad_peak, static_cast<std::int64_t>(grad.bytes()));
      if (b + 1 < L && coop) {
        staging = std::max(staging, detail::staging_of(in.routes[b], grad.cols()));
        grad = exchange_push(ctx, rows, in.routes[b], std::move(grad), &pe.exchange_ws);
        m.record(static_cast<int>(b), "backward");
      }
    }
    if (pe.emb && coop) {
      // The input rows' gradients go back to the PE that loaded them.
      grad = exchange_push(ctx, rows, in.routes[L - 1], std::move(grad), &pe.exchange_ws);
      m.record(static_cast<int>(L - 1), "features_backward");
    }
    if (pe.emb) input_grad = std::move(grad);
    m.stage_end(m.t.backward, m.cpu.backward, span);
  }

  // 5. Gradient all-reduce (in place, on the communicator of the PE's space) and the same Adam
  //    step on every replica.
  double loss_sum = loss;
  buffer<vid_t> emb_ids;
  buffer<float> emb_grads;
  {
    int const span = m.stage_begin();
    COOPGNN_NVTX_RANGE("comm/allreduce_gradients");
    // Gradients and the loss through the same communicator, in the PE's space.
    COOPGNN_EXPECTS(rows.serves(ctx), "PE {}: its communicator does not move its memory", p);
    auto const grads = pe.model.params().grads();
    rows.allreduce_sum(std::span<float>(grads.data, grads.size));
    if (pe.emb && !coop) {
      // Independent: every PE's (input id, gradient row) pairs on every PE, so the replicas
      // apply the same list. (Cooperative: a PE's input rows are its own, owner-partitioned.)
      m.mark_sent();
      emb_ids = allgatherv_rows<vid_t>(ctx, rows, in.mb.input_nodes.view());
      emb_grads = allgatherv_rows<float>(ctx, rows, input_grad.view().flat(), input_grad.cols());
      m.record(static_cast<int>(L - 1), "embedding_allgather");
      // Staging: P copies of what this PE sends, plus everything it receives.
      auto const sent = static_cast<std::int64_t>(input_grad.bytes() + in.mb.input_nodes.bytes());
      staging = std::max(staging,
                         P * sent + static_cast<std::int64_t>(emb_ids.bytes() + emb_grads.bytes()));
    }
    buffer<double> loss_placed = upload<double>(ctx, std::span<const double>(&loss_sum, 1));
    rows.allreduce_sum(std::span<double>(loss_placed.data(), 1));
    loss_sum = download<double>(ctx, loss_placed.view()).at(0);
    // The all-reduced loss is the same on every PE, so every PE stops here together (no PE is
    // left in a collective). Anomaly detection in PyTorch's spirit: never a silently ruined
    // model. This PE's own share names who produced it.
    if (!std::isfinite(loss_sum)) {
      auto const nb = std::max<std::int64_t>(1, batches_per_epoch());
      throw error(fmt::format(
          "training diverged: the loss of epoch {} batch {} (minibatch {}) is {}, PE {}'s share "
          "{}; lower --lr or check the features (--allow-nonfinite skips the load check)",
          batch_index / nb + 1, batch_index % nb, batch_index, loss_sum, p, loss));
    }
    m.stage_end(m.t.communication, m.cpu.communication, span);  // all of it is communication
  }
  {
    int const span = m.stage_begin();
    COOPGNN_NVTX_RANGE("model/optimizer");
    if (opt.update) {
      pe.opt.step();
      if (pe.emb && coop) {
        // The owner updates its rows only: S^L_p is owned by p, so the replicas' updated rows
        // are disjoint and the owners' rows are the table (embedding_values()).
        pe.emb->apply(in.mb.input_nodes.view(), input_grad.view());
      } else if (pe.emb) {
        auto const n = static_cast<std::int64_t>(emb_ids.size());
        pe.emb->apply(emb_ids.view(), tensor_view<const float>{emb_grads.data(), n, pe.emb->dim(),
                                                               emb_grads.space()});
      }
    }
    m.stage_end(m.t.optimizer, m.cpu.optimizer, span);
  }
  matrix<float> logits_h;
  std::vector<float> grads_h;
  if (opt.trace != nullptr) {
    logits_h = link ? matrix<float>(static_cast<std::int64_t>(scores.size()), 1,
                                    download<float>(ctx, scores.view()))
                    : to_host(ctx, std::move(logits));
    grads_h = download<float>(ctx, pe.model.params().grads());
    auto& tr = (*opt.trace)[static_cast<std::size_t>(p)];
    tr.pairs = lb.pairs;
    tr.pair_labels = lb.labels;
  }
  finish_step(pe, opt, m, w,
              link ? std::span<const vid_t>(lb.targets) : std::span<const vid_t>(seeds),
              in.host_blocks, loss, loss_sum, std::move(logits_h), std::move(grads_h),
              working_set + grad_peak, staging);
}

void trainer::place_graphs() {
  graphs_.assign(pes_.size(), nullptr);
  if (!cfg_.sample_on_device) return;
  bool const coop = cfg_.mode == minibatch_mode::cooperative;
  // PEs of one device share a copy: keyed by the CUDA device, or one for the emulated device.
  std::vector<std::pair<int, std::shared_ptr<placed_graph>>> by_device;
  for (std::size_t p = 0; p < pes_.size(); ++p) {
    const exec_context& ctx = pes_[p]->ctx;
    if (ctx.space() == memory_space::host) continue;
    int const device = ctx.cuda() != nullptr ? ctx.cuda()->device() : -1;
    std::shared_ptr<placed_graph> shared;
    for (auto const& [d, pg] : by_device) {
      if (d == device) shared = pg;
    }
    if (!shared) {
      bind_device(static_cast<int>(p));
      shared = std::make_shared<placed_graph>();
      shared->graph = upload_graph(ctx, g_);
      if (coop) shared->owners = upload<std::uint16_t>(ctx, owners_.map());
      synchronize(ctx);  // the other PEs on this device read it from their streams
      by_device.emplace_back(device, shared);
    }
    graphs_[p] = shared;
  }
}

void trainer::sample(pe_state& pe, std::span<const vid_t> seeds, const batch_key& key0,
                     std::span<const std::uint64_t> excluded, const step_options& opt,
                     step_meter& m, work_counters& w, step_batch& in) {
  auto const L = cfg_.fanouts.size();
  bool const coop = cfg_.mode == minibatch_mode::cooperative;
  int const p = pe.comm.rank();
  const exec_context& ctx = pe.ctx;
  // Where the protocol runs: the PE's own space when its graph is there, else the host.
  const placed_graph* pg = graphs_[static_cast<std::size_t>(p)].get();
  bool const here = ctx.space() == memory_space::host || pg != nullptr;
  const exec_context& sctx = here ? ctx : pe.host_ctx;
  communicator& scomm = here ? pe.rows_comm() : pe.comm;
  csc_view const graph = pg != nullptr ? pg->graph.view() : view(g_);
  buffer_view<const std::uint16_t> const owner_of =
      pg != nullptr ? pg->owners.view() : host_view(owners_.map());
  {
    int const span = m.stage_begin();
    COOPGNN_NVTX_RANGE("sample/minibatch");
    buffer<vid_t> const seeds_placed = upload<vid_t>(sctx, seeds);
    buffer<std::uint64_t> const excluded_placed = upload<std::uint64_t>(sctx, excluded);
    batch_key key = key0;
    key.excluded = excluded_placed.view();
    in.mb = coop ? sample_cooperative(sctx, scomm, graph, owner_of, seeds_placed.view(), key)
                 : sample_independent(sctx, graph, seeds_placed.view(), key);
    if (!here) {
      // Sampled on the host for a device PE: the blocks and input ids go to the device.
      for (auto& b : in.mb.blocks) b = copy_block(ctx, b);
      for (auto& pl : in.mb.plans) pl = copy_plan(ctx, pl);
      buffer<vid_t> ids = clone<vid_t>(ctx, in.mb.input_nodes.view());
      in.input_host = std::move(in.mb.input_nodes).release_host();
      in.mb.input_nodes = std::move(ids);
    } else if (ctx.space() != memory_space::host && !device_tier() && features_) {
      // The host and mmap tiers load through the host feature store: the ids go there.
      in.input_host = download<vid_t>(ctx, in.mb.input_nodes.view());
    }
    m.stage_end(m.t.sample, m.cpu.sample, span);
  }
  w += in.mb.work;
  for (std::size_t l = 0; l < in.mb.id_bytes.size(); ++l) {
    m.traffic.push_back({static_cast<int>(l), "ids", in.mb.id_bytes[l]});
  }
  m.mark_sent();
  in.sample_bytes = in.mb.bytes();
  if (opt.trace != nullptr && opt.capture_edges) {  // outside the stage clocks
    for (auto const& b : in.mb.blocks) in.host_blocks.push_back(to_host(ctx, b));
  }
  // The routes of the cooperative exchanges, in the PE's space.
  int const span = m.stage_begin();
  COOPGNN_NVTX_RANGE("sample/routes");
  for (auto const& b : in.mb.blocks) in.blocks.push_back(b.view());
  for (std::size_t l = 0; coop && l < L; ++l) {
    std::int64_t const owner_rows = l + 1 < L ? in.mb.blocks[l + 1].num_dst
                                              : static_cast<std::int64_t>(in.mb.input_nodes.size());
    in.routes.push_back(make_route(ctx, std::move(in.mb.plans[l]), owner_rows));
  }
  m.stage_end(m.t.sample, m.cpu.sample, span);
}

tensor<float> trainer::load_features(pe_state& pe, const step_batch& in, work_counters& w) {
  if (device_tier()) return load_device_tier(pe, in, w);
  auto const before = pe.store.stats();
  matrix<float> rows = pe.store.load(in.input_ids_on_host());
  w.cache_hits += pe.store.stats().cache_hits - before.cache_hits;
  w.cache_misses += pe.store.stats().cache_misses - before.cache_misses;
  return to_space(pe.ctx, std::move(rows));
}

void trainer::finish_step(pe_state& pe, const step_options& opt, step_meter& m,
                          const work_counters& w0, std::span<const vid_t> seeds,
                          std::span<const block> blocks, double loss, double loss_sum,
                          matrix<float> logits, std::vector<float> grads, std::int64_t working_set,
                          std::int64_t staging) {
  // The step's one synchronisation: every stage span has ended on the PE's stream (CUDA).
  synchronize(pe.ctx);
  m.settle();
  work_counters w = w0;
  w.alltoall_bytes += m.sent_bytes() - m.sent_start;
  w.allreduce_bytes += m.allreduce_bytes() - m.allreduce_start;
  w.alltoall_calls += m.alltoall_calls() - m.calls_start;
  w.collectives += m.collectives() - m.collectives_start;
  pe.seconds += m.t;
  pe.work += w;
  pe.loss += loss_sum;
  pe.last_loss = loss_sum;

  if (opt.trace == nullptr) return;
  auto const L = blocks.size();
  pe_trace& tr = (*opt.trace)[static_cast<std::size_t>(pe.comm.rank())];
  tr.edges.assign(L, {});
  for (std::size_t l = 0; l < L && opt.capture_edges; ++l) {
    block const& blk = blocks[l];
    std::int64_t const R = blk.num_relations;  // typed blocks: R rows per destination
    for (std::int64_t s = 0; s < blk.num_dst; ++s) {
      for (eid_t e = blk.indptr[s * R]; e < blk.indptr[(s + 1) * R]; ++e) {
        tr.edges[l].emplace_back(blk.src_ids[blk.indices[e]], blk.src_ids[s]);
      }
    }
  }
  tr.seeds.assign(seeds.begin(), seeds.end());
  tr.logits = std::move(logits);
  tr.grads = std::move(grads);
  tr.work = w;
  tr.loss = loss;
  tr.seconds = m.t;
  tr.cpu_seconds = m.cpu;
  tr.traffic = std::move(m.traffic);
  tr.layers = std::move(m.layers);
  tr.parameters = static_cast<std::int64_t>(pe.model.params().grads().size);
  tr.working_set_bytes = working_set;
  tr.staging_bytes = staging;
}

void trainer::step(std::span<const vid_t> global_batch, std::uint32_t batch_index,
                   const step_options& opt) {
  if (opt.trace != nullptr) opt.trace->assign(static_cast<std::size_t>(cfg_.num_pes), {});
  run_pes([&](pe_state& pe) { pe_step(pe, global_batch, batch_index, opt); });
}

std::int64_t trainer::num_parameters() const { return pes_.at(0)->model.num_parameters(); }

double trainer::last_loss() const { return pes_.at(0)->last_loss; }

std::vector<float> trainer::parameters() const {
  bind_device(0);
  return download<float>(pes_[0]->ctx, pes_[0]->model.params().values());
}

std::vector<float> trainer::gradients() const {
  bind_device(0);
  return download<float>(pes_[0]->ctx, pes_[0]->model.params().grads());
}

void trainer::set_parameters(std::span<const float> values) {
  COOPGNN_EXPECTS(static_cast<std::int64_t>(values.size()) == num_parameters(),
                  "trainer::set_parameters: {} values for the model's {} parameters", values.size(),
                  num_parameters());
  run_pes([&](pe_state& pe) { pe.model.copy_parameters_from(values); });
}

void trainer::apply_gradients(std::span<const float> grads) {
  COOPGNN_EXPECTS(cfg_.embedding_dim == 0,
                  "trainer::apply_gradients: with --embedding-dim {} the embedding table is "
                  "updated inside the step; use step(update = true)",
                  cfg_.embedding_dim);
  COOPGNN_EXPECTS(static_cast<std::int64_t>(grads.size()) == num_parameters(),
                  "trainer::apply_gradients: {} gradients for the model's {} parameters",
                  grads.size(), num_parameters());
  run_pes([&](pe_state& pe) {
    copy<float>(pe.ctx, pe.model.params().grads(), host_view(grads));
    pe.opt.step();  // the update of pe_step's optimizer stage
    synchronize(pe.ctx);
  });
}

matrix<float> trainer::embedding_values() const {
  COOPGNN_EXPECTS(pes_.at(0)->emb != nullptr, "trainer::embedding_values: no --embedding-dim");
  auto get = [&](std::size_t q) {
    bind_device(static_cast<int>(q));
    return pes_[q]->emb->to_host_matrix();
  };
  // Cooperative: row r is current on its owner's replica only; independent: replicas are equal.
  if (cfg_.mode != minibatch_mode::cooperative) return get(0);
  return owner_rows(pes_.size(), owners_, get);
}

matrix<float> trainer::inference_input(int pe) const {
  if (pes_.at(pe)->emb) return embedding_values();
  if (ds_.features_in_memory() && !ds_.features_are_16bit()) return ds_.features;
  if (owned_features_.rows() > 0) return owned_features_;
  // Layer-wise inference reads every row: gathered once from the mapped file, or widened from
  // a 16-bit table for the evaluation's duration (the table itself stays 16-bit).
  std::vector<vid_t> all(static_cast<std::size_t>(ds_.num_nodes));
  std::iota(all.begin(), all.end(), vid_t{0});
  return features_->gather(all);
}

namespace {
/// Host threads for evaluation: on the CUDA backend the host's cores are otherwise idle.
int eval_threads(bool cuda, int pes) {
  return cuda ? std::max(1, static_cast<int>(std::thread::hardware_concurrency())) : pes;
}
}  // namespace

std::pair<double, double> trainer::evaluate(int pe) const {
  COOPGNN_EXPECTS(cfg_.task == task_kind::node_classification,
                  "trainer::evaluate is node classification's; use evaluate_link");
  const models::gnn_model& model = host_model(pe);
  matrix<float> const x = inference_input(pe);
  auto const logits = model.infer_full(g_, x, eval_threads(dev_ != nullptr, cfg_.num_pes));
  auto metric = [&](const std::vector<vid_t>& rows) -> double {
    if (rows.empty()) return std::numeric_limits<double>::quiet_NaN();
    if (cfg_.macro_f1) return models::macro_f1(logits, ds_.labels, rows);
    if (ds_.num_classes == 2) {
      std::vector<float> scores;
      std::vector<std::int64_t> labels;
      for (vid_t v : rows) {
        scores.push_back(logits(v, 1) - logits(v, 0));
        labels.push_back(ds_.labels[v]);
      }
      return models::roc_auc(scores, labels);
    }
    return models::accuracy(logits, ds_.labels, rows);
  };
  return {metric(ds_.valid), metric(ds_.test)};
}

std::pair<link_eval, link_eval> trainer::evaluate_link(int pe) const {
  COOPGNN_EXPECTS(cfg_.task == task_kind::link_prediction,
                  "trainer::evaluate_link needs a link-prediction run");
  return evaluate_link_model(host_model(pe), g_, inference_input(pe), *ds_.link, cfg_.topk,
                             eval_threads(dev_ != nullptr, cfg_.num_pes));
}

epoch_report trainer::run_epoch(int epoch, bool evaluate_now,
                                const std::function<void(std::int64_t, std::int64_t)>& progress) {
  return run_epoch(epoch_position{.epoch = epoch}, evaluate_now, progress, {}, nullptr);
}

epoch_report trainer::run_epoch(const epoch_position& from, bool evaluate_now,
                                const std::function<void(std::int64_t, std::int64_t)>& progress,
                                const std::function<bool()>& stop, epoch_position* at) {
  int const epoch = from.epoch;
  auto const nb = batches_per_epoch();
  COOPGNN_EXPECTS(from.next_batch >= 0 && from.next_batch <= nb,
                  "run_epoch: epoch {} resumes at batch {} of {}", epoch, from.next_batch, nb);
  epoch_report rep;
  rep.mode = to_string(cfg_.mode);
  rep.backend = to_string(cfg_.compute_backend);
  rep.pes = cfg_.num_pes;
  rep.epoch = epoch;
  rep.metric_name = metric_name();
  rep.task = to_string(cfg_.task);
  for (auto& pe : pes_) {
    pe->seconds = {};
    pe->work = {};
    pe->loss = from.loss_sum;  // the same on every PE, as the all-reduced losses are
  }
  pes_[0]->work = from.work;  // reports sum the PEs' counters: the sum is what matters
  reset_peak_device_memory();
  auto const order = epoch_order(epoch);
  // After every batch the PEs meet; the last to arrive asks stop() once for all of them, so
  // they leave the loop together (no PE is left waiting in a collective). The meeting is a
  // group wait: a PE that fails aborts the group (run_pes) and one that hangs is timed out by
  // --peer-timeout, so the others raise instead of waiting here forever.
  bool stopping = false;
  std::int64_t done = from.next_batch;
  nvtx::profile_window const window(cfg_.profile_first, cfg_.profile_last, cfg_.profile_hook,
                                    cfg_.compute_backend == backend::cuda);
  if (done < nb) window.before_step((epoch - 1) * nb + done);
  std::function<void()> const decide = [&] {
    window.after_step((epoch - 1) * nb + done);
    ++done;
    stopping = stop && done < nb && stop();
    if (!stopping && done < nb) window.before_step((epoch - 1) * nb + done);
  };
  std::function<bool()> const released = [this] { return group_->aborted(); };
  scoped_timer wall(nullptr);
  run_pes([&](pe_state& pe) {
    using fault_injection::plan;
    for (std::int64_t b = from.next_batch; b < nb; ++b) {
      auto const index = static_cast<std::uint32_t>((epoch - 1) * nb + b);
      fault_injection::at_step(plan::target::pe, pe.comm.rank(), index, released);  // test-only
      pe_step(pe, epoch_batch(order, b), index, step_options{});
      if (progress && pe.comm.rank() == 0) progress(b + 1, nb);
      fault_injection::at_step(plan::target::pe, pe.comm.rank(), index, released, plan::point::end);
      group_->wait(pe.comm.rank(), "step barrier", decide);
      if (stopping) break;
    }
  });
  rep.epoch_seconds = wall.seconds();
  rep.batches = done;
  if (ds_.hetero) {
    rep.node_types = ds_.hetero->node_types;
    rep.relations = ds_.hetero->edge_types;
  }
  for (auto& pe : pes_) {
    rep.seconds.max_with(pe->seconds);
    rep.work += pe->work;
  }
  if (at != nullptr) *at = epoch_position{epoch, done, pes_[0]->loss, rep.work};
  rep.train_loss = nb > 0 ? pes_[0]->loss / static_cast<double>(nb) : 0.0;
  rep.peak_device_bytes = peak_device_memory();
  rep.val_metric = rep.test_metric = std::numeric_limits<double>::quiet_NaN();
  auto const with_rss = [](epoch_report&& r) {
    auto const m = read_process_memory();
    r.peak_rss_bytes = m.peak_rss_bytes;
    r.rss_bytes = m.rss_bytes;
    return std::move(r);
  };
  if (done < nb) return with_rss(std::move(rep));  // stopped: the epoch is not over
  if (evaluate_now || (cfg_.eval_every > 0 && epoch % cfg_.eval_every == 0)) {
    scoped_timer et(nullptr);
    if (cfg_.task == task_kind::link_prediction) {
      auto [val, test] = evaluate_link(0);
      rep.val_metric = val.value;
      rep.test_metric = test.value;
      rep.val_metrics = std::move(val.all);
      rep.test_metrics = std::move(test.all);
    } else {
      std::tie(rep.val_metric, rep.test_metric) = evaluate(0);
    }
    rep.eval_seconds = et.seconds();
  }
  return with_rss(std::move(rep));
}

trainer_state trainer::state() const {
  trainer_state s;
  bind_device(0);
  const pe_state& pe0 = *pes_[0];
  s.params = download<float>(pe0.ctx, pe0.model.params().values());
  s.adam_m = download<float>(pe0.ctx, pe0.opt.first_moment());
  s.adam_v = download<float>(pe0.ctx, pe0.opt.second_moment());
  s.adam_steps = pe0.opt.steps();
  if (!pe0.emb) return s;
  bool const coop = cfg_.mode == minibatch_mode::cooperative;
  auto table = [&](auto view_of) {
    auto get = [&](std::size_t q) {
      bind_device(static_cast<int>(q));
      const pe_state& pe = *pes_[q];
      return download<float>(pe.ctx, view_of(*pe.emb));
    };
    return coop ? owner_rows(pes_.size(), owners_, get) : get(0);
  };
  s.emb = table([](const models::embedding_table& e) { return e.values(); });
  s.emb_m = table([](const models::embedding_table& e) { return e.first_moment(); });
  s.emb_v = table([](const models::embedding_table& e) { return e.second_moment(); });
  s.emb_steps = pe0.emb->steps();
  return s;
}

void trainer::restore(const trainer_state& s) {
  auto const n = static_cast<std::size_t>(num_parameters());
  COOPGNN_EXPECTS(s.params.size() == n && s.adam_m.size() == n && s.adam_v.size() == n,
                  "trainer::restore: params, adam_m and adam_v hold {}, {} and {} values; the "
                  "model has {} parameters",
                  s.params.size(), s.adam_m.size(), s.adam_v.size(), n);
  bool const has_emb = pes_[0]->emb != nullptr;
  COOPGNN_EXPECTS(has_emb == (s.emb.rows() > 0),
                  "trainer::restore: the state {} an embedding table, the run {}",
                  s.emb.rows() > 0 ? "holds" : "has no", has_emb ? "learns one" : "does not");
  if (has_emb) {
    auto const& e = *pes_[0]->emb;
    for (const matrix<float>* t : {&s.emb, &s.emb_m, &s.emb_v}) {
      COOPGNN_EXPECTS(t->rows() == e.rows() && t->cols() == e.dim(),
                      "trainer::restore: an embedding array is [{}, {}], the table [{}, {}]",
                      t->rows(), t->cols(), e.rows(), e.dim());
    }
  }
  run_pes([&](pe_state& pe) {
    pe.model.copy_parameters_from(s.params);
    pe.opt.restore(s.adam_m, s.adam_v, s.adam_steps);
    if (pe.emb) {
      auto flat = [](const matrix<float>& m) {
        return std::span<const float>(m.data(), static_cast<std::size_t>(m.rows() * m.cols()));
      };
      pe.emb->restore(flat(s.emb), flat(s.emb_m), flat(s.emb_v), s.emb_steps);
    }
  });
}

}  // namespace coopgnn
