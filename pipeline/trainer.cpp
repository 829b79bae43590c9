#include "pipeline/trainer.hpp"

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
#include <system_error>
#include <thread>

#include "kernels/dense/link_ops.hpp"
#include "models/layers.hpp"
#include "runtime/comm/fault_injection.hpp"
#include "runtime/core/error.hpp"
#include "runtime/core/log.hpp"
#include "runtime/core/memory_limit.hpp"
#include "runtime/core/nvtx.hpp"
#include "runtime/core/profile_window.hpp"
#include "runtime/core/rng.hpp"
#include "runtime/core/timer.hpp"
#include "runtime/graph/npy.hpp"
#include "pipeline/prefetcher.hpp"
#include "runtime/core/stream_handover.hpp"
#include "pipeline/trainer_internal.hpp"

namespace coopgnn {

namespace {

/// The init stream of the embedding table (models use layer indices 0..num_layers + 2).
constexpr std::uint32_t kEmbeddingLayerIndex = 1U << 20;

}  // namespace

std::int64_t hetero_input_dim(const dataset& ds) {
  COOPGNN_EXPECTS(ds.hetero.has_value(), "hetero_input_dim: dataset '{}' is not heterogeneous",
                  ds.name);
  std::int64_t width = 0;
  std::string first;
  for (std::int64_t t = 0; t < ds.hetero->num_node_types(); ++t) {
    std::int64_t const cols = ds.hetero->feature_dim(t);
    auto const& name = ds.hetero->node_types[static_cast<std::size_t>(t)];
    if (cols == 0) continue;
    COOPGNN_EXPECTS(width == 0 || cols == width,
                    "dataset '{}': node types '{}' and '{}' have features of widths {} and {}; "
                    "the R-GCN input takes one width for every type",
                    ds.name, first, name, width, cols);
    if (width == 0) first = name;
    width = cols;
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
  if (cfg.model == models::conv_kind::rgcn && cfg.num_bases > 0) {
    // Eq. 3 shares B bases among the R relations: B > R holds more weights than one full
    // weight per relation and buys nothing (DGL's RelGraphConv falls back to R there).
    COOPGNN_EXPECTS(cfg.num_bases <= mc.rgcn.num_relations,
                    "--num-bases {} exceeds the {} relation{} of dataset '{}': bases share weights "
                    "only when there are at most as many as relations (Schlichtkrull et al., eq. "
                    "3); use --num-bases {} or fewer, or 0 for one full weight per relation",
                    cfg.num_bases, mc.rgcn.num_relations, mc.rgcn.num_relations == 1 ? "" : "s",
                    ds.name, mc.rgcn.num_relations);
  }
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

namespace {

/// check_training_run's body: `run` is the trainer's copy of the configuration, completed where
/// the dataset decides (a typed graph's learnt width); returns the checked training task.
std::unique_ptr<training_task> checked_task(const dataset& ds, const csc_graph& g,
                                            const train_config& cfg, train_config& run) {
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
    if (run.embedding_dim == 0) run.embedding_dim = F;
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
  COOPGNN_EXPECTS(!cfg.fanouts.empty(), "--fanouts needs at least one layer");
  // Every option's range and the rules between options: the option table's one check.
  validate_train_config(cfg);
  bool const link = cfg.task == task_kind::link_prediction;
  COOPGNN_EXPECTS(ds.feature_dim() > 0 || run.embedding_dim > 0,
                  "dataset '{}' has no node features; learn embeddings with --embedding-dim D, "
                  "or attach features with `coopgnn generate task`",
                  ds.name);
  COOPGNN_EXPECTS(g.num_nodes == ds.num_nodes, "graph has {} vertices, dataset {}", g.num_nodes,
                  ds.num_nodes);
  auto task = link ? make_link_task(ds, g, cfg) : make_node_task(ds, g, cfg);
  COOPGNN_EXPECTS(!(cfg.drop_last && cfg.wrap_around),
                  "--drop-last and wrap_around both set: an epoch's tail is either dropped or "
                  "filled, not both");
  COOPGNN_EXPECTS(
      !cfg.drop_last || static_cast<std::int64_t>(task->items().size()) >= cfg.batch_size,
      "--drop-last with --batch-size {} above the {} training {} leaves no batch in "
      "an epoch",
      cfg.batch_size, task->items().size(), link ? "pairs" : "vertices");
  // Learnt embeddings replace the feature table: there is nothing for a cache to hold.
  COOPGNN_EXPECTS(cfg.cache_policy == cache_policy_kind::none || run.embedding_dim == 0,
                  "--cache-policy {}: there is no feature table to cache with --embedding-dim",
                  to_string(cfg.cache_policy));
  (void)model_config_for(ds, run);  // the decomposition's checks (--num-bases, --num-blocks)
  return task;
}

}  // namespace

void check_training_run(const dataset& ds, const csc_graph& g, const train_config& cfg) {
  train_config run = cfg;
  (void)checked_task(ds, g, cfg, run);
}

trainer::trainer(const dataset& ds, const csc_graph& g, const train_config& cfg)
    : ds_(ds), g_(g), cfg_(cfg) {
  // Every check before anything is allocated: check_training_run's, which --dry-run runs too.
  task_ = checked_task(ds, g, cfg, cfg_);
  if (cfg.mode == minibatch_mode::cooperative) {
    // Typed graphs: every PE owns its share of every node type (docs/design.md section 5).
    owners_ = ds.hetero ? ownership(ds.num_nodes, cfg.num_pes, cfg.seed, ds.hetero->node_offsets)
                        : ownership(ds.num_nodes, cfg.num_pes, cfg.seed);
    protocol_ = make_cooperative_protocol(owners_);
  } else {
    protocol_ = make_independent_protocol();
  }
  (void)fault_injection::from_env();  // a malformed COOPGNN_FAULT_INJECT fails here, not mid-run
  group_ = std::make_shared<host_comm_group>(
      cfg.num_pes,
      std::chrono::milliseconds(static_cast<std::int64_t>(std::ceil(cfg.comm_timeout_s * 1e3))));
  auto const mc = model_config_for(ds, cfg_);
  // The feature table's tier. Host backend: host, or the mapped .npy file. CUDA backend:
  // setup_cuda_features picks device, pinned, host or mmap and makes the device copies. With
  // learnable embeddings there is no feature table.
  bool const table = cfg_.embedding_dim == 0;
  if (ds.hetero) set_typed_features();
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
    // Every replica starts from the same weights (initialisation is keyed on mc.seed alone):
    // on the host, PEs after the first copy PE 0's instead of drawing them again (hundreds of
    // PEs would draw hundreds of times). CUDA replicas (one per device) draw their own.
    const models::gnn_model* initial =
        p > 0 && cfg.compute_backend != backend::cuda ? &pes_[0]->model : nullptr;
    pes_.push_back(std::make_unique<pe_state>(p, cfg, compute_context(p), mc, group_,
                                              features_.get(), initial));
    if (cfg.cache_policy != cache_policy_kind::none) {  // with a table (checked_task)
      pes_.back()->store.set_cache(make_cache_policy(to_string(cfg.cache_policy), cfg.cache_rows));
    }
    if (!table) {
      // Every replica starts from the same table (keyed init) under a layer index no model
      // layer uses. Featured types' rows are frozen: not stored, their features are read from
      // the type's table at its width (add_typed_feature_rows), never updated.
      std::vector<models::embedding_table::row_range> frozen;
      for (std::size_t t = 0; t < typed_features_.size(); ++t) {
        if (typed_features_[t]) {
          frozen.emplace_back(ds.hetero->node_offsets[t], ds.hetero->node_offsets[t + 1]);
        }
      }
      pes_.back()->emb = std::make_unique<models::embedding_table>(
          pes_.back()->ctx, ds.num_nodes, cfg_.embedding_dim, cfg.seed, kEmbeddingLayerIndex,
          detail::adam_options_of(cfg, nullptr), std::move(frozen));
    }
  }
  if (cfg.compute_backend == backend::cuda) setup_cuda_pes();
  place_graphs();
  if (prefetch_depth() > 0) {
    // The prefetch threads' collectives go through a group of their own (docs/design.md 6.7);
    // on CUDA their device communicators and contexts were made by setup_cuda_pes.
    prefetch_group_ = std::make_shared<host_comm_group>(cfg.num_pes, group_->timeout());
    for (auto& pe : pes_) {
      pe->prefetch_comm = std::make_unique<host_communicator>(prefetch_group_, pe->comm.rank());
      pe->prefetch_clock = std::make_unique<stage_clock>(pe->prefetch_ctx);
    }
  }
  // Every PE must key sampling and dropout on the same seed: PE 0's is broadcast.
  pes_[0]->run_seed = cfg.seed;
  run_pes([](pe_state& pe) {
    pe.comm.broadcast(std::as_writable_bytes(std::span<std::uint64_t>(&pe.run_seed, 1)), 0);
  });
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

std::string trainer::metric_name() const { return task_->metric_name(); }

const models::embedding_table* trainer::embeddings(int pe) const { return pes_.at(pe)->emb.get(); }

std::int64_t trainer::batches_per_epoch() const {
  return epoch_batch_count(static_cast<std::int64_t>(task_->items().size()), cfg_.batch_size,
                           cfg_.drop_last);
}

std::vector<vid_t> trainer::epoch_order(int epoch) const {
  return coopgnn::epoch_order(task_->items(), cfg_.seed, epoch);
}

std::vector<vid_t> trainer::epoch_batch(std::span<const vid_t> order, std::int64_t index) const {
  return coopgnn::epoch_batch(order, cfg_.batch_size, index, cfg_.wrap_around);
}

void trainer::run_pes(const std::function<void(pe_state&)>& body) {
  std::vector<std::exception_ptr> errors(pes_.size());
  std::mutex mu;
  std::condition_variable cv;
  std::vector<char> finished(pes_.size(), 0);
  std::string spawn_failure;  // a PE thread the system would not start
  {
    std::vector<std::jthread> threads;
    for (std::size_t p = 0; p < pes_.size(); ++p) {
      try {
        threads.emplace_back([&, p] {
          nvtx::name_thread(fmt::format("pe{}", p));
          log::set_prefix(fmt::format("PE {}", p));
          try {
            bind_device(static_cast<int>(p));
            body(*pes_[p]);
          } catch (const std::exception& e) {
            errors[p] = std::current_exception();
            auto const why = fmt::format("PE {} failed: {}", p, e.what());
            group_->abort(why);
            abort_prefetch(why);
            if (pes_[p]->device_comm != nullptr) pes_[p]->device_comm->abort(why);
          }
          {
            std::lock_guard lk(mu);
            finished[p] = 1;
          }
          cv.notify_all();
        });
      } catch (const std::system_error& e) {
        // The PEs already started wait in a collective for this one: fail their group so they
        // return, and wait only for them.
        spawn_failure = fmt::format(
            "--pes {}: starting the thread of PE {} failed ({}); each PE is a thread with its own "
            "stack: run fewer PEs, or raise the limits on threads and memory (ulimit -u, -v; a "
            "smaller ulimit -s makes each thread's stack smaller)",
            pes_.size(), p, e.what());
        group_->abort(spawn_failure);
        abort_prefetch(spawn_failure);
        {
          std::lock_guard lk(mu);
          for (std::size_t q = p; q < pes_.size(); ++q) finished[q] = 1;
        }
        break;
      }
    }
    exit_if_hung(mu, cv, finished);
  }
  if (!spawn_failure.empty()) COOPGNN_FAIL("{}", spawn_failure);
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
    std::fflush(stdout);
    log::error(
        "PE{} {} still running {:.3g} s (--peer-timeout) after the run failed ({}): hung; "
        "exiting without waiting for {}",
        hung.size() == 1 ? "" : "s", fmt::join(hung, ", "),
        static_cast<double>(limit.count()) / 1e3, group_->reason(),
        hung.size() == 1 ? "it" : "them");
    std::_Exit(1);
  }
}

void trainer::pe_step(pe_state& pe, std::span<const vid_t> global_batch, std::uint32_t batch_index,
                      const step_options& opt, prepared_batch* ready) {
  auto const L = cfg_.fanouts.size();
  auto const B = static_cast<std::int64_t>(global_batch.size());
  // The loss's normaliser: the batch, or the larger batch it is a share of (GGS over MPI).
  COOPGNN_EXPECTS(opt.normalise_by == 0 || opt.normalise_by >= B,
                  "step_options::normalise_by {} is below the batch's {} items", opt.normalise_by,
                  B);
  auto const norm_B = opt.normalise_by > 0 ? opt.normalise_by : B;
  const exec_context& ctx = pe.ctx;
  communicator& rows = pe.rows_comm();
  step_meter m(pe.metered_comms(), pe.clock, pe.metered_contexts());
  metered_exchange x(ctx, rows, pe.exchange_ws, m);
  step_context sc = pe.stage_context(cfg_.num_pes, batch_index, m, x);

  // 1-2. Seeds, sampling and the input rows: a value the compute stages consume (prepared
  //      here, or ahead on the prefetch thread: its measures join this step's).
  prepared_batch b = ready != nullptr ? std::move(*ready) : prepare(sc, pe, global_batch, opt);
  b.handover.wait(ctx);  // prepared ahead on CUDA: this stream waits for the prefetch stream
  if (b.ahead) {
    m.t += b.ahead->t;
    m.cpu += b.ahead->cpu;
    m.traffic = std::move(b.ahead->traffic);
  }
  if (!b.loaded) load_features(sc, pe, b);
  step_record r{.work = std::move(b.work), .working_set = b.working_set};

  // 3. Forward: model layer i consumes block L-1-i; its rows go to the next layer's requesters;
  //    then the task's head or decoder.
  models::step_key const sk{pe.run_seed, batch_index, true};
  std::vector<models::layer_cache> caches(L);
  {
    int const span = m.stage_begin();
    COOPGNN_NVTX_RANGE("model/forward");
    tensor<float> h = std::move(b.inputs);
    for (std::size_t i = 0; i < L; ++i) {
      std::size_t const l = L - 1 - i;
      h = pe.model.forward_layer(static_cast<int>(i), ctx, b.blocks[l], h.view(), sk, &caches[i]);
      auto const& conv = pe.model.layer(static_cast<int>(i));
      m.layers.push_back({static_cast<int>(l), b.blocks[l].num_dst, b.blocks[l].num_src,
                          b.blocks[l].num_edges, conv.in_dim(), conv.out_dim(),
                          conv.transform_first(), i > 0 || sc.learns_inputs()});
      r.working_set += caches[i].bytes();
      if (l > 0) h = protocol_->pull(sc, b, static_cast<int>(l - 1), "forward", std::move(h));
    }
    r.working_set += b.task->forward(sc, *protocol_, b, std::move(h));
    m.stage_end(m.t.forward, m.cpu.forward, span);
  }

  // 4. Loss on this PE's share, normalised by the global batch; backward mirrors forward, and
  //    learnable input rows' gradients go where the protocol applies them.
  std::int64_t grad_peak = 0;
  embedding_gradients input_grads;
  {
    int const span = m.stage_begin();
    COOPGNN_NVTX_RANGE("model/backward");
    pe.model.zero_grad();
    tensor<float> grad = b.task->backward(sc, *protocol_, b, norm_B, r.loss);
    for (std::size_t i = L; i-- > 0;) {
      std::size_t const l = L - 1 - i;
      // Layer 0 consumes the input rows: a gradient flows further only into embeddings.
      grad = pe.model.backward_layer(static_cast<int>(i), ctx, b.blocks[l], grad.view(), caches[i],
                                     i > 0 || sc.learns_inputs());
      grad_peak = std::max(grad_peak, static_cast<std::int64_t>(grad.bytes()));
      if (l + 1 < L)
        grad = protocol_->push(sc, b, static_cast<int>(l), "backward", std::move(grad));
    }
    input_grads = protocol_->route_embedding_gradients(sc, b, std::move(grad));
    m.stage_end(m.t.backward, m.cpu.backward, span);
  }
  r.working_set += grad_peak;

  // 5. Gradient and loss all-reduce (in place, on the communicator of the PE's space), then the
  //    same Adam step on every replica.
  {
    int const span = m.stage_begin();
    COOPGNN_NVTX_RANGE("comm/allreduce_gradients");
    COOPGNN_EXPECTS(rows.serves(ctx), "PE {}: its communicator does not move its memory", sc.rank);
    auto const grads = pe.model.params().grads();
    rows.allreduce_sum(std::span<float>(grads.data, grads.size));
    r.loss_sum = allreduce_loss(pe, r.loss, batch_index);
    m.stage_end(m.t.communication, m.cpu.communication, span);  // all of it is communication
  }
  {
    int const span = m.stage_begin();
    COOPGNN_NVTX_RANGE("model/optimizer");
    if (opt.update) {
      pe.opt.step();
      input_grads.apply(pe.emb.get());
    }
    m.stage_end(m.t.optimizer, m.cpu.optimizer, span);
  }
  r.staging = std::max(x.staging_bytes(), b.ahead ? b.ahead->staging : std::int64_t{0});
  finish_step(pe, opt, m, b, r);
}

double trainer::allreduce_loss(pe_state& pe, double share, std::uint32_t batch_index) const {
  buffer<double> placed = upload<double>(pe.ctx, std::span<const double>(&share, 1));
  pe.rows_comm().allreduce_sum(std::span<double>(placed.data(), 1));
  double const loss_sum = download<double>(pe.ctx, placed.view()).at(0);
  // The all-reduced loss is the same on every PE, so every PE stops here together (no PE is
  // left in a collective). Anomaly detection in PyTorch's spirit: never a silently ruined
  // model. This PE's own share names who produced it.
  if (std::isfinite(loss_sum)) return loss_sum;
  auto const nb = std::max<std::int64_t>(1, batches_per_epoch());
  throw error(fmt::format(
      "training diverged: the loss of epoch {} batch {} (minibatch {}) is {}, PE {}'s share "
      "{}; lower --lr or check the features (--allow-nonfinite skips the load check)",
      batch_index / nb + 1, batch_index % nb, batch_index, loss_sum, pe.comm.rank(), share));
}

void trainer::finish_step(pe_state& pe, const step_options& opt, step_meter& m, prepared_batch& b,
                          const step_record& r) {
  // The step's one synchronisation: every stage span has ended on the PE's stream (CUDA).
  synchronize(pe.ctx);
  m.settle();
  work_counters const w = m.with_traffic(r.work);
  pe.seconds += m.t;
  pe.cpu_seconds += m.cpu;
  pe.work += w;
  pe.loss += r.loss_sum;
  pe.last_loss = r.loss_sum;

  if (opt.trace == nullptr) return;
  auto const L = b.host_blocks.size();
  pe_trace& tr = (*opt.trace)[static_cast<std::size_t>(pe.comm.rank())];
  tr.edges.assign(L, {});
  for (std::size_t l = 0; l < L && opt.capture_edges; ++l) {
    block const& blk = b.host_blocks[l];
    std::int64_t const R = blk.num_relations;  // typed blocks: R rows per destination
    for (std::int64_t s = 0; s < blk.num_dst; ++s) {
      for (eid_t e = blk.indptr[s * R]; e < blk.indptr[(s + 1) * R]; ++e) {
        tr.edges[l].emplace_back(blk.src_ids[blk.indices[e]], blk.src_ids[s]);
      }
    }
  }
  b.task->trace(pe.ctx, b, tr);
  tr.grads = download<float>(pe.ctx, pe.model.params().grads());
  tr.work = w;
  tr.loss = r.loss;
  tr.seconds = m.t;
  tr.cpu_seconds = m.cpu;
  tr.traffic = std::move(m.traffic);
  tr.layers = std::move(m.layers);
  tr.parameters = static_cast<std::int64_t>(pe.model.params().grads().size);
  tr.working_set_bytes = r.working_set;
  tr.staging_bytes = r.staging;
}

void trainer::step(std::span<const vid_t> global_batch, std::uint32_t batch_index,
                   const step_options& opt) {
  if (opt.trace != nullptr) opt.trace->assign(static_cast<std::size_t>(cfg_.num_pes), {});
  run_pes([&](pe_state& pe) { pe_step(pe, global_batch, batch_index, opt); });
}

int trainer::prefetch_depth() const { return cfg_.prefetch; }

void trainer::abort_prefetch(const std::string& why) {
  if (prefetch_group_) prefetch_group_->abort(why);
  for (auto& pe : pes_) {
    if (pe->prefetch_device_comm != nullptr) pe->prefetch_device_comm->abort(why);
  }
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
  // Cooperative: row r is current on its owner's replica only; independent: replicas are equal.
  // Featured types' rows (heterogeneous graphs) are their features.
  matrix<float> all = protocol_->assemble(pes_.size(), [&](std::size_t q) {
    bind_device(static_cast<int>(q));
    return pes_[q]->emb->to_host_matrix();
  });
  if (ds_.hetero) fill_typed_feature_rows(all);
  return all;
}

namespace {
/// Host threads for evaluation: on the CUDA backend the host's cores are otherwise idle.
int eval_threads(bool cuda, int pes) {
  return cuda ? std::max(1, static_cast<int>(std::thread::hardware_concurrency())) : pes;
}
}  // namespace

std::pair<link_eval, link_eval> trainer::evaluate_task(int pe) const {
  const models::gnn_model& model = host_model(pe);
  return task_->evaluate(model, inference_input(pe), eval_threads(dev_ != nullptr, cfg_.num_pes));
}

std::pair<double, double> trainer::evaluate(int pe) const {
  COOPGNN_EXPECTS(cfg_.task == task_kind::node_classification,
                  "trainer::evaluate is node classification's; use evaluate_link");
  auto const [val, test] = evaluate_task(pe);
  return {val.value, test.value};
}

std::pair<link_eval, link_eval> trainer::evaluate_link(int pe) const {
  COOPGNN_EXPECTS(cfg_.task == task_kind::link_prediction,
                  "trainer::evaluate_link needs a link-prediction run");
  return evaluate_task(pe);
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
    pe->cpu_seconds = {};
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
  int const depth = prefetch_depth();
  scoped_timer wall(nullptr);
  run_pes([&](pe_state& pe) {
    using fault_injection::plan;
    auto const index_of = [&](std::int64_t b) {
      return static_cast<std::uint32_t>((epoch - 1) * nb + b);
    };
    // --prefetch: batches b + 1 .. b + depth are prepared on the prefetch thread while b
    // computes. Every PE asks for the same batches at the same points (here, after the step
    // barrier), so the prefetch threads' collectives match; asked-for batches a stop leaves
    // unused are still prepared on every PE, then dropped (docs/design.md 6.7).
    std::optional<batch_prefetcher> ahead;
    if (depth > 0) {
      ahead.emplace(fmt::format("PE {} prefetch", pe.comm.rank()),
                    [this](const std::string& why) { abort_prefetch(why); });
    }
    // On CUDA the batches handed over are freed on the compute stream, after the step's reads
    // (the free on the prefetch stream would let that stream reuse the memory while the step
    // still reads it). Declared after `ahead`, so batches asked for and never handed over
    // (a stop) are destroyed after it, with their frees on the prefetch stream.
    std::optional<handed_over_frees> frees;
    if (depth > 0) frees.emplace(pe.prefetch_ctx, pe.ctx);
    std::int64_t asked = from.next_batch;
    for (std::int64_t b = from.next_batch; b < nb; ++b) {
      auto const index = index_of(b);
      for (; ahead && asked < nb && asked <= b + depth; ++asked) {
        ahead->submit([this, &pe, batch = epoch_batch(order, asked), i = index_of(asked)] {
          return prepare_ahead(pe, batch, i);
        });
      }
      fault_injection::at_step(plan::target::pe, pe.comm.rank(), index, released);  // test-only
      std::optional<prepared_batch> ready;
      if (ahead) ready = ahead->next();
      pe_step(pe, epoch_batch(order, b), index, step_options{}, ready ? &*ready : nullptr);
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
    rep.cpu_seconds.max_with(pe->cpu_seconds);
    rep.work += pe->work;
    for (const communicator* c : pe->metered_comms()) {
      rep.communication_wait_measured = rep.communication_wait_measured && c->measures_wait();
    }
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
    auto [val, test] = evaluate_task(0);
    rep.val_metric = val.value;
    rep.test_metric = test.value;
    rep.val_metrics = std::move(val.all);
    rep.test_metrics = std::move(test.all);
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
  auto table = [&](auto view_of) {
    return protocol_->assemble(pes_.size(), [&](std::size_t q) {
      bind_device(static_cast<int>(q));
      const pe_state& pe = *pes_[q];
      return pe.emb->expand(view_of(*pe.emb));
    });
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
