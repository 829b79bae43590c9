// The trainer's CUDA backend (trainer.hpp, "Backends"; DESIGN.md section 6 on the device):
// per-PE contexts and device communicators, the device feature tables, the device model
// replicas, and sections 2-5 of a training step on the device.
#include "runtime/pipeline/trainer_internal.hpp"

#include <set>

#include "runtime/core/error.hpp"
#include "runtime/core/nvtx.hpp"

#ifdef COOPGNN_WITH_CUDA
#include <cuda_runtime_api.h>

#include "cache/gpu_cache.hpp"
#include "kernels/gather/gather_cuda.hpp"
#include "models/device_model.hpp"
#include "runtime/comm/device_comm.hpp"
#include "runtime/core/cuda_check.hpp"
#include "runtime/core/device.hpp"
#include "runtime/graph/npy.hpp"
#include "runtime/pipeline/exchange_cuda.hpp"
#include "runtime/pipeline/minibatch_cuda.hpp"
#endif

namespace coopgnn {

#ifdef COOPGNN_WITH_CUDA

struct trainer::device_state {
  std::vector<std::unique_ptr<cuda::cuda_context>> ctxs;  // [P], PE p on device p / K
  storage_tier tier = storage_tier::host;
  // Device tier: one copy per device ordinal (nullptr for devices without PEs); pinned tier:
  // one page-locked table at index 0, read by every device over UVA; host/mmap: empty.
  std::vector<std::unique_ptr<feature_table>> tables;
  std::vector<std::unique_ptr<communicator>> comms;                // [P]
  std::vector<std::unique_ptr<cuda::device_gnn_model>> models;     // [P]
  // Device sampling: the CSC and the owner map (cooperative) per device ordinal, allocated
  // from the first PE on that device (nullptr for devices without PEs).
  std::vector<std::unique_ptr<cuda::device_csc>> graphs;
  std::vector<std::unique_ptr<cuda::device_buffer<std::uint16_t>>> owner_maps;
  [[nodiscard]] const cuda::device_csc* graph_for(int pe) const {
    return graphs.at(device_of(pe)).get();
  }
  [[nodiscard]] const cuda::device_buffer<std::uint16_t>* owners_for(int pe) const {
    return owner_maps.at(device_of(pe)).get();
  }
  [[nodiscard]] std::size_t device_of(int pe) const {
    return static_cast<std::size_t>(ctxs.at(static_cast<std::size_t>(pe))->device());
  }
  // --cache-policy setassoc in front of a device or pinned table: the GPU cache, [P] (empty
  // otherwise; then the host feature_store's policy, if any, serves the host and mmap tiers).
  std::vector<std::unique_ptr<cuda::device_set_assoc_cache>> caches;

  [[nodiscard]] const feature_table* table_for(int pe) const {
    if (tier == storage_tier::pinned) return tables.at(0).get();
    return tables.at(device_of(pe)).get();
  }

  ~device_state() {
    // Peers may still read each other's buffers of a failed collective: let every stream drain
    // before any memory goes back (peer_communicator.hpp), then release in dependency order.
    for (auto& c : ctxs) {
      try {
        c->synchronize();
      } catch (const std::exception&) {  // the fault was reported by the step that hit it
      }
    }
    caches.clear();
    owner_maps.clear();
    graphs.clear();
    models.clear();
    comms.clear();
    tables.clear();
    ctxs.clear();
  }
};

void trainer::device_state_deleter::operator()(device_state* d) const noexcept { delete d; }

namespace {

/// Free memory of device `d` in bytes (cudaMemGetInfo); makes d current.
std::int64_t free_device_bytes(const cuda::cuda_context& ctx) {
  ctx.make_current();
  std::size_t free_b = 0, total_b = 0;
  COOPGNN_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
  return static_cast<std::int64_t>(free_b);
}

/// The "no bad id" value of a gather's first_bad slot.
constexpr unsigned long long kNoBadId = ~0ULL;

std::int64_t bytes_of(const cuda::device_matrix& m) {
  return m.size() * static_cast<std::int64_t>(sizeof(float));
}

std::int64_t bytes_of(const cuda::device_conv_cache& c) {
  return bytes_of(c.h) + bytes_of(c.mid) + bytes_of(c.out) +
         static_cast<std::int64_t>(c.keep.bytes() + c.edge_values.bytes());
}

matrix<float> to_host(const cuda::cuda_context& ctx, const cuda::device_matrix& m) {
  return matrix<float>(m.rows, m.cols, ctx.to_host(m.data));
}

}  // namespace

void trainer::setup_cuda_features() {
  int const P = cfg_.num_pes;
  int const K = cfg_.pes_per_gpu;
  COOPGNN_EXPECTS(K >= 1, "--pes-per-gpu must be at least 1, got {}", K);
  auto const info = query_devices();
  COOPGNN_EXPECTS(info.count > 0, "--backend cuda: no CUDA device ({})", info.reason);
  int const needed = (P + K - 1) / K;
  COOPGNN_EXPECTS(needed <= info.count,
                  "--pes {} with --pes-per-gpu {} needs {} CUDA devices, {} visible", P, K, needed,
                  info.count);
  dev_.reset(new device_state);
  for (int p = 0; p < P; ++p) {
    dev_->ctxs.push_back(std::make_unique<cuda::cuda_context>(p / K, p));
  }
  // Half of the free memory of the fullest device may hold the table (the rest: minibatches).
  std::int64_t device_budget = std::numeric_limits<std::int64_t>::max();
  for (auto const& c : dev_->ctxs) device_budget = std::min(device_budget, free_device_bytes(*c) / 2);
  auto forced = parse_storage_tier(cfg_.feature_storage);
  // setassoc is the GPU cache's policy: it fronts a device or pinned table on the device (and
  // the host/mmap tiers through its exact host reference). The host-only policies (lru, clock,
  // sieve, s3fifo) sit in front of host-readable storage (feature_store): with one of them and
  // --feature-storage auto the table stays on the host (or mapped) and loaded rows are copied.
  bool const cache = cfg_.cache_policy != "none" && cfg_.cache_policy != "setassoc";
  COOPGNN_EXPECTS(!cache || !forced || (*forced != storage_tier::device &&
                                        *forced != storage_tier::pinned),
                  "--cache-policy {} with --feature-storage {}: on the CUDA backend this policy "
                  "is a host cache in front of the host and mmap tiers; use --feature-storage "
                  "host, mmap or auto, or --cache-policy setassoc (the GPU cache)",
                  cfg_.cache_policy, cfg_.feature_storage);
  std::int64_t const table_bytes = ds_.num_nodes * ds_.feature_dim() * 4;
  if (cache && !forced) {
    dev_->tier = choose_storage_tier(backend::host, table_bytes, {0, default_host_budget_bytes()},
                                     std::nullopt, ds_.features_in_memory(),
                                     !ds_.feature_file.empty());
  } else {
    dev_->tier = choose_storage_tier(backend::cuda, table_bytes,
                                     {device_budget, default_host_budget_bytes()}, forced,
                                     ds_.features_in_memory(), !ds_.feature_file.empty());
  }
  if (dev_->tier == storage_tier::mmap || dev_->tier == storage_tier::host) {
    set_host_features(dev_->tier);
    return;
  }
  set_host_features(storage_tier::host);  // the matrix the device copies are made from
  const matrix<float>& m = ds_.features_in_memory() ? ds_.features : owned_features_;
  if (dev_->tier == storage_tier::pinned) {
    dev_->tables.push_back(feature_table::upload(m, storage_tier::pinned));
    return;
  }
  std::set<int> devices;
  for (auto const& c : dev_->ctxs) devices.insert(c->device());
  dev_->tables.resize(static_cast<std::size_t>(*devices.rbegin()) + 1);
  for (auto const& c : dev_->ctxs) {
    auto& slot = dev_->tables[static_cast<std::size_t>(c->device())];
    if (slot) continue;
    c->make_current();
    slot = feature_table::upload(m, storage_tier::device);
  }
}

void trainer::setup_cuda_pes() {
  std::vector<const cuda::cuda_context*> contexts;
  for (auto const& c : dev_->ctxs) contexts.push_back(c.get());
  dev_->comms = make_device_communicators(
      contexts, cfg_.device_comm,
      std::chrono::milliseconds(static_cast<std::int64_t>(cfg_.comm_timeout_s * 1e3)));
  for (std::size_t p = 0; p < pes_.size(); ++p) {
    pes_[p]->device_comm = dev_->comms[p].get();
    dev_->ctxs[p]->make_current();
    dev_->models.push_back(std::make_unique<cuda::device_gnn_model>(
        *dev_->ctxs[p], pes_[p]->model, detail::adam_options_of(cfg_)));
    std::size_t const dv = dev_->device_of(static_cast<int>(p));
    if (cfg_.sample_on_device) {
      if (dev_->graphs.size() <= dv) dev_->graphs.resize(dv + 1);
      if (dev_->owner_maps.size() <= dv) dev_->owner_maps.resize(dv + 1);
      if (!dev_->graphs[dv]) {
        dev_->graphs[dv] =
            std::make_unique<cuda::device_csc>(cuda::upload(*dev_->ctxs[p], g_));
        if (cfg_.mode == minibatch_mode::cooperative) {
          dev_->owner_maps[dv] = std::make_unique<cuda::device_buffer<std::uint16_t>>(
              cuda::upload_owners(*dev_->ctxs[p], owners_));
        }
        dev_->ctxs[p]->synchronize();  // the other PEs on this device use it from their streams
      }
    }
    if (cfg_.cache_policy == "setassoc" && cfg_.cache_rows > 0 &&
        (dev_->tier == storage_tier::device || dev_->tier == storage_tier::pinned)) {
      dev_->caches.push_back(std::make_unique<cuda::device_set_assoc_cache>(
          *dev_->ctxs[p], cfg_.cache_rows, ds_.feature_dim()));
    }
  }
}

void trainer::bind_device(int p) const {
  if (dev_) dev_->ctxs.at(static_cast<std::size_t>(p))->make_current();
}

void trainer::download_model(int pe) const {
  auto const& ctx = *dev_->ctxs.at(static_cast<std::size_t>(pe));
  ctx.make_current();
  dev_->models.at(static_cast<std::size_t>(pe))->download(pes_.at(static_cast<std::size_t>(pe))->model);
}

void trainer::sync_host_models() const {
  if (!dev_) return;
  for (int p = 0; p < cfg_.num_pes; ++p) download_model(p);
}

void trainer::pe_step_cuda(pe_state& pe, std::span<const vid_t> seeds, const batch_key& key,
                           std::int64_t global_batch_size, const step_options& opt,
                           step_meter& m, work_counters& w) {
  int const p = pe.comm.rank();
  auto const L = cfg_.fanouts.size();
  bool const coop = cfg_.mode == minibatch_mode::cooperative;
  auto const& ctx = *dev_->ctxs[static_cast<std::size_t>(p)];
  auto& model = *dev_->models[static_cast<std::size_t>(p)];
  communicator& dcomm = *pe.device_comm;
  auto const sync = [&] { cuda::detail::synchronize(ctx.compute()); };
  std::uint32_t const batch_index = key.batch;
  std::int64_t staging = 0;

  // 1. The minibatch on the device: blocks, exchange plans and input ids, sampled on the device
  //    or sampled on the host and copied over. `host` keeps what the host side needs: the plans
  //    (staging sizes), the input ids (host-tier loads, error messages) and, for traces or host
  //    sampling, the blocks.
  cuda::device_sampled_batch dsb;
  sampled_batch host;
  if (cfg_.sample_on_device) {
    auto const& graph = *dev_->graph_for(p);
    {
      scoped_timer timer(nullptr);
      COOPGNN_NVTX_RANGE("sample/minibatch");
      dsb = coop ? cuda::sample_cooperative(ctx, dcomm, graph, *dev_->owners_for(p), seeds, key)
                 : cuda::sample_independent(ctx, graph, seeds, key);
      // The host/mmap tiers load through the host feature store: they need the ids there.
      if (dev_->tier != storage_tier::device && dev_->tier != storage_tier::pinned) {
        host.input_nodes = ctx.to_host(dsb.input_nodes);
      }
      host.plans = std::move(dsb.host_plans);
      sync();
      m.stage_end(m.t.sample, m.cpu.sample, timer);
    }
    if (opt.trace != nullptr && opt.capture_edges) {  // outside the stage clocks
      for (auto const& b : dsb.blocks) host.blocks.push_back(cuda::to_host(ctx, b));
    }
    w += dsb.work;
    for (std::size_t l = 0; l < dsb.id_bytes.size(); ++l) {
      m.traffic.push_back({static_cast<int>(l), "ids", dsb.id_bytes[l]});
    }
    m.mark_sent();
  } else {
    host = sample_on_host(pe, seeds, key, m, w);
    scoped_timer timer(nullptr);
    COOPGNN_NVTX_RANGE("sample/upload");
    for (auto const& b : host.blocks) dsb.blocks.push_back(cuda::upload(ctx, b));
    for (std::size_t l = 0; coop && l < L; ++l) {
      std::int64_t const owner_rows = l + 1 < L
                                          ? host.blocks[l + 1].num_dst
                                          : static_cast<std::int64_t>(host.input_nodes.size());
      dsb.plans.push_back(cuda::upload(ctx, host.plans[l], owner_rows));
    }
    dsb.input_nodes = ctx.to_device(std::span<const vid_t>(host.input_nodes));
    sync();
    m.stage_end(m.t.sample, m.cpu.sample, timer);
  }
  auto const& blocks = dsb.blocks;
  auto const& plans = dsb.plans;
  auto const& sb = host;

  // 2. Feature loading: device or pinned table gathered on the device, or the host store (and
  //    its cache) copied over; then (cooperative) owner -> requester.
  cuda::device_matrix h;
  {
    scoped_timer timer(nullptr);
    COOPGNN_NVTX_RANGE("cache/load_features");
    auto const n = static_cast<std::int64_t>(dsb.input_nodes.size());
    h.rows = n;
    h.cols = ds_.feature_dim();
    if (dev_->tier == storage_tier::device || dev_->tier == storage_tier::pinned) {
      const feature_table* table = dev_->table_for(p);
      auto const& ids = dsb.input_nodes;
      cuda::table_view const tv{table->device_data(), table->rows(), table->cols(),
                                table->cols()};
      if (!dev_->caches.empty() && n > 0) {
        // GPU cache: hits copied by the lookup, misses gathered in place, then admitted.
        auto& cache = *dev_->caches[static_cast<std::size_t>(p)];
        h.data = ctx.allocate<float>(static_cast<std::size_t>(n * h.cols));
        auto miss_pos = ctx.allocate<std::int64_t>(static_cast<std::size_t>(n));
        auto const st = cache.lookup(ids.data(), n, h.data.data(), miss_pos.data(),
                                     ctx.compute());
        auto first_bad = ctx.to_device(std::span<const unsigned long long>(&kNoBadId, 1));
        cuda::gather_rows_at_async(tv, ids.data(), miss_pos.data(), st.misses, h.data.data(),
                                   first_bad.data(), ctx.compute());
        auto const bad = ctx.to_host(first_bad).at(0);  // synchronises compute()
        if (bad != kNoBadId) {
          vid_t v = 0;
          cuda::detail::copy_async(&v, ids.data() + bad, sizeof v, ctx.compute());
          sync();
          COOPGNN_FAIL("feature load: vertex {} at position {} is outside [0, {})", v, bad,
                       table->rows());
        }
        cache.admit(ids.data(), h.data.data(), miss_pos.data(), st.misses, ctx.compute());
        w.cache_hits += st.hits;
        w.cache_misses += st.misses;
      } else {
        h.data = cuda::gather_rows(ctx, tv, ids);  // synchronises compute(): checks the ids
        w.cache_misses += n;  // no cache: every row comes from storage
      }
    } else {
      auto const before = pe.store.stats();
      auto const rows = pe.store.load(sb.input_nodes);
      w.cache_hits += pe.store.stats().cache_hits - before.cache_hits;
      w.cache_misses += pe.store.stats().cache_misses - before.cache_misses;
      h.data = ctx.to_device(std::span<const float>(rows.values()));
    }
    w.feature_rows += n;
    w.feature_bytes += n * h.cols * static_cast<std::int64_t>(sizeof(float));
    if (coop) {
      staging = std::max(staging, detail::staging_of(sb.plans[L - 1], h.cols));
      h = cuda::exchange_pull(ctx, dcomm, plans[L - 1], h);
      m.record(static_cast<int>(L - 1), "features");
    }
    sync();
    m.stage_end(m.t.feature_load, m.cpu.feature_load, timer);
  }
  // Working set as the host backend counts it when the host sampled (blocks and plans on the
  // host); with device sampling, the device image (which also holds recv_pos and the push CSR).
  std::int64_t working_set = (cfg_.sample_on_device ? dsb.bytes() : host.bytes()) + bytes_of(h);

  // 3. Forward: model layer i consumes block L-1-i.
  models::step_key const sk{pe.run_seed, batch_index, true};
  std::vector<cuda::device_conv_cache> caches(L);
  cuda::device_linear_cache head_cache;
  cuda::device_matrix logits;
  auto const seeds_d = ctx.to_device(seeds);
  {
    scoped_timer timer(nullptr);
    COOPGNN_NVTX_RANGE("model/forward");
    for (std::size_t i = 0; i < L; ++i) {
      std::size_t const b = L - 1 - i;
      h = model.conv_forward(static_cast<int>(i), blocks[b], h, sk, &caches[i]);
      working_set += bytes_of(caches[i]);
      if (coop && b > 0) {
        staging = std::max(staging, detail::staging_of(sb.plans[b - 1], h.cols));
        h = cuda::exchange_pull(ctx, dcomm, plans[b - 1], h);
        m.record(static_cast<int>(b - 1), "forward");
      }
    }
    if (model.has_head()) {
      logits = model.head_forward(h, seeds_d.data(), sk, &head_cache);
    } else {
      logits = std::move(h);
    }
    working_set += bytes_of(head_cache.x) + bytes_of(logits);
    sync();
    m.stage_end(m.t.forward, m.cpu.forward, timer);
  }

  // 4. Loss on this PE's seeds, normalised by the global batch size; backward mirrors forward.
  std::vector<std::int64_t> labels(seeds.size());
  for (std::size_t i = 0; i < seeds.size(); ++i) labels[i] = ds_.labels[seeds[i]];
  auto const labels_d = ctx.to_device(std::span<const std::int64_t>(labels));
  double loss = 0;
  std::int64_t grad_peak = 0;
  {
    scoped_timer timer(nullptr);
    COOPGNN_NVTX_RANGE("model/backward");
    model.zero_grad();
    cuda::device_matrix grad;
    loss = model.loss(logits, labels_d, 1.0f / static_cast<float>(global_batch_size), &grad);
    if (model.has_head()) grad = model.head_backward(grad, head_cache);
    for (std::size_t ii = L; ii-- > 0;) {
      std::size_t const b = L - 1 - ii;
      // Layer 0 consumes the input features: no gradient flows further.
      grad = model.conv_backward(static_cast<int>(ii), blocks[b], grad, caches[ii], ii > 0);
      grad_peak = std::max(grad_peak, bytes_of(grad));
      if (b + 1 < L && coop) {
        staging = std::max(staging, detail::staging_of(sb.plans[b], grad.cols));
        grad = cuda::exchange_push(ctx, dcomm, plans[b], grad);
        m.record(static_cast<int>(b), "backward");
      }
    }
    sync();
    m.stage_end(m.t.backward, m.cpu.backward, timer);
  }

  // 5. Gradient all-reduce (device communicator, in place on the flat gradient buffer) and the
  //    same Adam step on every replica.
  double loss_sum = loss;
  {
    scoped_timer timer(nullptr);
    COOPGNN_NVTX_RANGE("comm/allreduce_gradients");
    dcomm.allreduce_sum(std::span<float>(model.grads(),
                                         static_cast<std::size_t>(model.num_parameters())));
    pe.comm.allreduce_sum(std::span<double>(&loss_sum, 1));
    m.stage_end(m.t.communication, m.cpu.communication, timer);
  }
  {
    scoped_timer timer(nullptr);
    COOPGNN_NVTX_RANGE("model/optimizer");
    if (opt.update) model.adam_step();
    sync();
    m.stage_end(m.t.optimizer, m.cpu.optimizer, timer);
  }
  matrix<float> logits_h;
  std::vector<float> grads_h;
  if (opt.trace != nullptr) {
    logits_h = to_host(ctx, logits);
    grads_h.resize(static_cast<std::size_t>(model.num_parameters()));
    if (!grads_h.empty()) {
      cuda::detail::copy_async(grads_h.data(), model.grads(), grads_h.size() * sizeof(float),
                               ctx.compute());
    }
    sync();
  }
  finish_step(pe, opt, m, w, seeds, sb.blocks, loss, loss_sum, std::move(logits_h),
              std::move(grads_h),
              working_set + grad_peak, staging);
}

#else  // host-only build: the CUDA backend does not exist

struct trainer::device_state {};

void trainer::device_state_deleter::operator()(device_state* d) const noexcept { delete d; }

void trainer::setup_cuda_features() {
  COOPGNN_FAIL("--backend cuda: this build has no CUDA backend (configure with nvcc available)");
}
void trainer::setup_cuda_pes() {
  COOPGNN_FAIL("--backend cuda: this build has no CUDA backend (configure with nvcc available)");
}
void trainer::bind_device(int /*p*/) const {}
void trainer::download_model(int /*pe*/) const {}
void trainer::sync_host_models() const {}
void trainer::pe_step_cuda(pe_state& /*pe*/, std::span<const vid_t> /*seeds*/,
                           const batch_key& /*key*/, std::int64_t /*global_batch_size*/,
                           const step_options& /*opt*/, step_meter& /*m*/,
                           work_counters& /*w*/) {
  COOPGNN_FAIL("--backend cuda: this build has no CUDA backend");
}

#endif  // COOPGNN_WITH_CUDA

}  // namespace coopgnn
