// The stages that prepare a batch before it computes (docs/design.md section 6.6): this PE's
// seeds, sampling where the PE's graph is placed, and the input rows, gathered into the
// prepared_batch that trainer::pe_step's compute stages consume. Written once for every backend,
// protocol and task: the protocol samples and routes, the task names the seeds.
#include "runtime/core/error.hpp"
#include "runtime/core/nvtx.hpp"
#include "pipeline/trainer_internal.hpp"

namespace coopgnn {

prepared_batch trainer::prepare(step_context& sc, pe_state& pe, std::span<const vid_t> global_batch,
                                const step_options& opt, bool load) {
  prepared_batch b;
  b.index = sc.batch_index;
  // 1. This PE's seeds: the task's items it takes (by the protocol) and the encoder's seeds.
  task_->seeds(sc, *protocol_, global_batch, b);
  // 2. Sampling, then storage rows (or embedding rows) for the input nodes.
  sample(sc, pe, task_->excluded(global_batch), opt, b);
  if (ds_.hetero) count_by_type(*ds_.hetero, sc.ctx, b.mb, b.work);
  if (load) load_features(sc, pe, b);
  return b;
}

prepared_batch trainer::prepare_ahead(pe_state& pe, std::span<const vid_t> global_batch,
                                      std::uint32_t batch_index) {
  // The prefetch thread's own context (on CUDA its own streams and pool), meter, clock, staging
  // and communicators: nothing the PE thread touches while it computes an earlier batch.
  // Its kernel calls are counted apart, for the batch it prepares (the PE thread's step meter
  // would otherwise see them in the step it runs meanwhile).
  bind_device(pe.comm.rank());  // the worker thread's current device is the PE's (CUDA)
  exec_context const tally = pe.prefetch_ctx.with_own_tally();
  kernel_call_tally_scope const counted(tally);
  step_meter m(pe.metered_comms(true), *pe.prefetch_clock, {&tally});
  communicator& rows =
      pe.prefetch_device_comm != nullptr ? *pe.prefetch_device_comm : *pe.prefetch_comm;
  metered_exchange x(pe.prefetch_ctx, rows, pe.prefetch_ws, m);
  step_context sc = pe.stage_context(cfg_.num_pes, batch_index, m, x, true);
  // Learnt input rows change in every step's optimizer: they are read by the step that
  // computes the batch, after the previous step's update (docs/design.md section 6.7).
  prepared_batch b = prepare(sc, pe, global_batch, step_options{}, pe.emb == nullptr);
  // The step's stream waits for this mark before it reads the batch (CUDA: an event on the
  // prefetch stream; the PE thread does not wait on the host).
  b.handover = stream_handover(pe.prefetch_ctx);
  // Every span has ended, so the stage seconds can be read (the host and emulated clocks: a
  // no-op). A host wait of the prefetch thread on its own stream only.
  synchronize(pe.prefetch_ctx);
  m.settle();
  b.work = m.with_traffic(std::move(b.work));
  b.ahead = prepare_record{m.t, m.cpu, std::move(m.traffic), x.staging_bytes()};
  return b;
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

void trainer::sample(step_context& sc, pe_state& pe, std::span<const std::uint64_t> excluded,
                     const step_options& opt, prepared_batch& b) {
  step_meter& m = sc.meter;
  const exec_context& ctx = sc.ctx;
  // Where the protocol runs: the PE's own space when its graph is there, else the host.
  const placed_graph* pg = graphs_[static_cast<std::size_t>(sc.rank)].get();
  bool const here = ctx.space() == memory_space::host || pg != nullptr;
  const exec_context& sctx = here ? ctx : pe.host_ctx;
  communicator& scomm = here ? sc.rows_comm : sc.host_comm;
  csc_view const graph = pg != nullptr ? pg->graph.view() : view(g_);
  buffer_view<const std::uint16_t> const owner_of =
      pg != nullptr ? pg->owners.view() : host_view(owners_.map());
  {
    int const span = m.stage_begin();
    COOPGNN_NVTX_RANGE("sample/minibatch");
    buffer<vid_t> const seeds_placed = upload<vid_t>(sctx, std::span<const vid_t>(b.seeds));
    buffer<std::uint64_t> const excluded_placed = upload<std::uint64_t>(sctx, excluded);
    batch_key const key{cfg_.sampler,
                        cfg_.fanouts,
                        pe.run_seed,
                        b.index,
                        {cfg_.batch_dependency, cfg_.layer_dependency},
                        excluded_placed.view(),
                        cfg_.relation_fanouts};
    b.mb = protocol_->sample(sctx, scomm, graph, owner_of, seeds_placed.view(), key);
    if (!here) {
      // Sampled on the host for a device PE: the blocks and input ids go to the device.
      for (auto& blk : b.mb.blocks) blk = copy_block(ctx, blk);
      for (auto& pl : b.mb.plans) pl = copy_plan(ctx, pl);
      buffer<vid_t> ids = clone<vid_t>(ctx, b.mb.input_nodes.view());
      b.input_host = std::move(b.mb.input_nodes).release_host();
      b.mb.input_nodes = std::move(ids);
    } else if (ctx.space() != memory_space::host && !device_tier() && features_) {
      // The host and mmap tiers load through the host feature store: the ids go there.
      b.input_host = download<vid_t>(ctx, b.mb.input_nodes.view());
    }
    m.stage_end(m.t.sample, m.cpu.sample, span);
  }
  b.work += b.mb.work;
  sc.exchange.sampled_ids(b.mb.id_bytes);
  b.working_set = b.mb.bytes();
  if (opt.trace != nullptr && opt.capture_edges) {  // outside the stage clocks
    for (auto const& blk : b.mb.blocks) b.host_blocks.push_back(to_host(ctx, blk));
  }
  // The routes of the protocol's exchanges, in the PE's space.
  int const span = m.stage_begin();
  COOPGNN_NVTX_RANGE("sample/routes");
  for (auto const& blk : b.mb.blocks) b.blocks.push_back(blk.view());
  b.routes = protocol_->routes(ctx, b.mb);
  m.stage_end(m.t.sample, m.cpu.sample, span);
}

void trainer::load_features(step_context& sc, pe_state& pe, prepared_batch& b) {
  step_meter& m = sc.meter;
  int const span = m.stage_begin();
  COOPGNN_NVTX_RANGE("cache/load_features");
  tensor<float> h;
  work_counters& w = b.work;
  if (pe.emb) {
    h = pe.emb->gather(b.mb.input_nodes.view());
    if (ds_.hetero) {
      // Featured types' rows from their tables at the stored width; learnt rows at 4 bytes.
      std::vector<vid_t> copied;
      std::span<const vid_t> const ids =
          host_readable<vid_t>(sc.ctx, b.mb.input_nodes.view(), copied);
      std::int64_t const featured = add_typed_feature_rows(sc.ctx, ids, h.view());
      std::int64_t learnt = 0;
      for (std::size_t t = 0; t < ds_.hetero->node_types.size(); ++t) {
        if (!b.work.rows_per_type.empty() && !typed_features_[t]) {
          learnt += b.work.rows_per_type[t];
        }
      }
      w.feature_bytes += featured + learnt * h.cols() * static_cast<std::int64_t>(sizeof(float));
    } else {
      w.feature_bytes += h.rows() * h.cols() * static_cast<std::int64_t>(sizeof(float));
    }
  } else {
    if (device_tier()) {
      h = load_device_tier(sc.ctx, pe, b, w);
    } else {
      auto const before = pe.store.stats();
      matrix<float> rows = pe.store.load(b.input_ids_on_host());
      w.cache_hits += pe.store.stats().cache_hits - before.cache_hits;
      w.cache_misses += pe.store.stats().cache_misses - before.cache_misses;
      h = to_space(sc.ctx, std::move(rows));
    }
    // At the stored width: 2 bytes per element for a float16 / bfloat16 table (the rows are
    // widened to float32 by the gather, after they were read).
    w.feature_bytes += h.rows() * features_->row_bytes();
  }
  w.feature_rows += h.rows();
  // Owner -> requester (cooperative) for the input layer's sources.
  auto const last = static_cast<int>(b.blocks.size()) - 1;
  b.inputs = protocol_->pull(sc, b, last, "features", std::move(h));
  m.stage_end(m.t.feature_load, m.cpu.feature_load, span);
  b.working_set += static_cast<std::int64_t>(b.inputs.bytes());
  b.loaded = true;
}

}  // namespace coopgnn
