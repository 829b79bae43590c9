// The trainer's CUDA resources (trainer.hpp, "Backends"): per-PE cuda_contexts, device
// communicators, the device feature tables and GPU caches, and the two step stages that only
// exist on a GPU (device sampling, the device and pinned tiers' gather). Everything else of a
// step is trainer::pe_step, the same for every backend.
#include <fmt/ranges.h>

#include <cmath>
#include <cstdlib>
#include <set>

#include "runtime/core/assert.hpp"
#include "runtime/core/error.hpp"
#include "runtime/core/nvtx.hpp"
#include "pipeline/trainer_internal.hpp"

#ifdef COOPGNN_WITH_CUDA
#include <cuda_runtime_api.h>

#include "cache/gpu_cache.hpp"
#include "kernels/gather/gather_cuda.hpp"
#include "runtime/comm/device_comm.hpp"
#include "runtime/core/cuda_check.hpp"
#include "runtime/core/device.hpp"
#include "runtime/graph/npy.hpp"
#endif

namespace coopgnn {

#ifdef COOPGNN_WITH_CUDA

struct trainer::device_state {
  std::vector<std::unique_ptr<cuda::cuda_context>> ctxs;  // [P], PE p on devices[p / K]
  storage_tier tier = storage_tier::host;
  // Device tier: one copy per device ordinal (nullptr for devices without PEs); pinned tier:
  // one page-locked table at index 0, read by every device over UVA; host/mmap: empty.
  std::vector<std::unique_ptr<feature_table>> tables;
  std::vector<std::unique_ptr<communicator>> comms;  // [P]
  // --prefetch > 0 (docs/design.md section 6.7): [P] the prefetch thread's context of PE p (on
  // PE p's device, with streams and a pool of its own) and its device communicator, of a group
  // apart from `comms`; empty otherwise.
  std::vector<std::unique_ptr<cuda::cuda_context>> prefetch_ctxs;
  std::vector<std::unique_ptr<communicator>> prefetch_comms;
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
    for (auto* set : {&prefetch_ctxs, &ctxs}) {
      for (auto& c : *set) {
        try {
          c->synchronize();
        } catch (const std::exception&) {  // the fault was reported by the step that hit it
        }
      }
    }
    caches.clear();
    prefetch_comms.clear();
    comms.clear();
    tables.clear();
    prefetch_ctxs.clear();
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

}  // namespace

void trainer::setup_cuda_features() {
  int const P = cfg_.num_pes;
  int const K = cfg_.pes_per_gpu;
  COOPGNN_EXPECTS(K >= 1, "--pes-per-gpu must be at least 1, got {}", K);
  auto const info = query_devices();
  COOPGNN_EXPECTS(info.count > 0, "--backend cuda: no CUDA device ({})", info.reason);
  int const needed = (P + K - 1) / K;
  std::vector<int> ordinals = cfg_.devices;  // [needed] the device of PEs k K .. k K + K - 1
  if (ordinals.empty()) {
    COOPGNN_EXPECTS(needed <= info.count,
                    "--pes {} with --pes-per-gpu {} needs {} CUDA devices, {} visible", P, K,
                    needed, info.count);
    for (int d = 0; d < needed; ++d) ordinals.push_back(d);
  } else {
    COOPGNN_EXPECTS(static_cast<int>(ordinals.size()) == needed,
                    "--pes {} with --pes-per-gpu {} runs on {} CUDA devices, but {} were given "
                    "([{}])",
                    P, K, needed, ordinals.size(), fmt::join(ordinals, ","));
    std::set<int> seen;
    for (int d : ordinals) {
      COOPGNN_EXPECTS(
          d >= 0 && d < info.count,
          "CUDA device {} (of the devices [{}] given to this process's PEs) does not "
          "exist: {} visible{}",
          d, fmt::join(ordinals, ","), info.count,
          std::getenv("CUDA_VISIBLE_DEVICES") != nullptr
              ? fmt::format(" (CUDA_VISIBLE_DEVICES={})", std::getenv("CUDA_VISIBLE_DEVICES"))
              : std::string());
      COOPGNN_EXPECTS(seen.insert(d).second,
                      "CUDA device {} is given twice in [{}]: --pes-per-gpu says how many PEs "
                      "share one device",
                      d, fmt::join(ordinals, ","));
    }
  }
  dev_.reset(new device_state);
  for (int p = 0; p < P; ++p) {
    dev_->ctxs.push_back(
        std::make_unique<cuda::cuda_context>(ordinals[static_cast<std::size_t>(p / K)], p));
    dev_->ctxs.back()->set_tf32_math(cfg_.gemm == gemm_math::tf32);  // --gemm-math
  }
  if (cfg_.embedding_dim > 0) return;  // learnable embeddings: no feature table
  // Half of the free memory of the fullest device may hold the table (the rest: minibatches).
  std::int64_t device_budget = std::numeric_limits<std::int64_t>::max();
  for (auto const& c : dev_->ctxs)
    device_budget = std::min(device_budget, free_device_bytes(*c) / 2);
  auto const forced = cfg_.feature_storage;
  // setassoc is the GPU cache's policy: it fronts a device or pinned table on the device (and
  // the host/mmap tiers through its exact host reference). The host-only policies (lru, clock,
  // sieve, s3fifo) sit in front of host-readable storage (feature_store): with one of them and
  // --feature-storage auto the table stays on the host (or mapped) and loaded rows are copied.
  bool const cache = cfg_.cache_policy != cache_policy_kind::none &&
                     cfg_.cache_policy != cache_policy_kind::setassoc;
  COOPGNN_EXPECTS(
      !cache || !forced || (*forced != storage_tier::device && *forced != storage_tier::pinned),
      "--cache-policy {} with --feature-storage {}: on the CUDA backend this policy "
      "is a host cache in front of the host and mmap tiers; use --feature-storage "
      "host, mmap or auto, or --cache-policy setassoc (the GPU cache)",
      to_string(cfg_.cache_policy), to_string(*forced));
  std::int64_t const table_bytes = ds_.num_nodes * ds_.feature_row_bytes();  // stored width
  if (cache && !forced) {
    dev_->tier =
        choose_storage_tier(backend::host, table_bytes, {0, default_host_budget_bytes()},
                            std::nullopt, ds_.features_in_memory(), !ds_.feature_file.empty());
  } else {
    dev_->tier = choose_storage_tier(backend::cuda, table_bytes,
                                     {device_budget, default_host_budget_bytes()}, forced,
                                     ds_.features_in_memory(), !ds_.feature_file.empty());
  }
  if (dev_->tier == storage_tier::mmap || dev_->tier == storage_tier::host) {
    set_host_features(dev_->tier);
    return;
  }
  set_host_features(storage_tier::host);   // the table the device copies are made from
  const feature_table& host = *features_;  // at its stored width: 16-bit stays 16-bit
  if (dev_->tier == storage_tier::pinned) {
    dev_->tables.push_back(feature_table::upload(host, storage_tier::pinned));
    return;
  }
  std::set<int> devices;
  for (auto const& c : dev_->ctxs) devices.insert(c->device());
  dev_->tables.resize(static_cast<std::size_t>(*devices.rbegin()) + 1);
  for (auto const& c : dev_->ctxs) {
    auto& slot = dev_->tables[static_cast<std::size_t>(c->device())];
    if (slot) continue;
    c->make_current();
    slot = feature_table::upload(host, storage_tier::device);
  }
}

void trainer::setup_cuda_pes() {
  std::vector<const cuda::cuda_context*> contexts;
  for (auto const& c : dev_->ctxs) contexts.push_back(c.get());
  dev_->comms = make_device_communicators(
      contexts, to_string(cfg_.device_comm),
      std::chrono::milliseconds(static_cast<std::int64_t>(std::ceil(cfg_.comm_timeout_s * 1e3))));
  if (cfg_.prefetch > 0) {
    // The prefetch threads' device exchanges go through a peer-copy group of their own, whatever
    // --device-comm the steps use: NCCL's kernels block until their peers arrive, and NCCL does
    // not allow two threads to drive two communicators on one device at once (its documentation,
    // "Thread Safety" and "Using multiple NCCL communicators concurrently"): the PE thread's and
    // the prefetch thread's collectives would interleave differently on different devices and
    // could deadlock. Peer copies are copy-engine work with a host rendezvous: they never wait
    // on the device for a peer (docs/design.md section 6.7).
    std::vector<const cuda::cuda_context*> ahead;
    for (auto const& c : dev_->ctxs) {
      dev_->prefetch_ctxs.push_back(std::make_unique<cuda::cuda_context>(c->device(), c->pe()));
      ahead.push_back(dev_->prefetch_ctxs.back().get());
      ahead.back()->set_tf32_math(cfg_.gemm == gemm_math::tf32);  // as the PE's, should it GEMM
      // The step frees handed-over batches on the compute stream: the pool must not make the
      // prefetch stream wait for that stream to reuse such memory (an internal dependency would
      // put the next prepare behind the running step); it grows or reuses completed frees.
      int no = 0;
      COOPGNN_CUDA_CHECK(cudaMemPoolSetAttribute(ahead.back()->pool(),
                                                 cudaMemPoolReuseAllowInternalDependencies, &no));
    }
    dev_->prefetch_comms = make_device_communicators(
        ahead, to_string(device_comm_choice::peer),
        std::chrono::milliseconds(static_cast<std::int64_t>(std::ceil(cfg_.comm_timeout_s * 1e3))));
  }
  for (std::size_t p = 0; p < pes_.size(); ++p) {
    pes_[p]->device_comm = dev_->comms[p].get();
    if (!dev_->prefetch_ctxs.empty()) {
      pes_[p]->prefetch_ctx = exec_context(*dev_->prefetch_ctxs[p], pe_thread_budget(cfg_));
      pes_[p]->prefetch_device_comm = dev_->prefetch_comms[p].get();
    }
    dev_->ctxs[p]->make_current();
    if (cfg_.cache_policy == cache_policy_kind::setassoc && cfg_.cache_rows > 0 &&
        (dev_->tier == storage_tier::device || dev_->tier == storage_tier::pinned)) {
      // At the table's width: a 16-bit table's rows stay 16-bit in the GPU cache too.
      dev_->caches.push_back(std::make_unique<cuda::device_set_assoc_cache>(
          *dev_->ctxs[p], cfg_.cache_rows, ds_.feature_dim(), set_assoc_policy::default_ways,
          ds_.feature_type));
    }
  }
}

void trainer::bind_device(int p) const {
  if (dev_) dev_->ctxs.at(static_cast<std::size_t>(p))->make_current();
}

std::vector<std::int64_t> trainer::peak_device_memory() const {
  std::vector<std::int64_t> peaks;
  if (!dev_) return peaks;
  for (std::size_t p = 0; p < dev_->ctxs.size(); ++p) {
    auto const& c = dev_->ctxs[p];
    c->synchronize();  // frees enqueued by the epoch have happened
    auto peak = static_cast<std::int64_t>(c->peak_used_bytes());
    if (!dev_->prefetch_ctxs.empty()) {
      // --prefetch: the prefetch context's pool too (the sum of the two peaks: an upper bound
      // of the PE's peak, which the two pools do not record together).
      dev_->prefetch_ctxs[p]->synchronize();
      peak += static_cast<std::int64_t>(dev_->prefetch_ctxs[p]->peak_used_bytes());
    }
    peaks.push_back(peak);
  }
  return peaks;
}

void trainer::reset_peak_device_memory() const {
  if (!dev_) return;
  for (auto const& c : dev_->ctxs) c->reset_peak_used();
  for (auto const& c : dev_->prefetch_ctxs) c->reset_peak_used();
}

trainer::~trainer() {
  // Device memory of the replicas, graphs and staging goes back before the contexts: drain every
  // stream first (peers may still read each other's buffers of a failed collective), then the
  // members are destroyed in reverse order of declaration, dev_ (the contexts) last.
  if (!dev_) return;
  for (auto* set : {&dev_->prefetch_ctxs, &dev_->ctxs}) {
    for (auto& c : *set) {
      try {
        c->synchronize();
      } catch (const std::exception&) {  // the fault was reported by the step that hit it
      }
    }
  }
}

exec_context trainer::compute_context(int p) const {
  if (dev_)
    return exec_context(*dev_->ctxs.at(static_cast<std::size_t>(p)), pe_thread_budget(cfg_));
  return exec_context(cfg_.compute_backend, p, pe_thread_budget(cfg_));
}

bool trainer::device_tier() const {
  return dev_ && (dev_->tier == storage_tier::device || dev_->tier == storage_tier::pinned);
}

bool trainer::device_cache_holds_rows() const { return dev_ && !dev_->caches.empty(); }

tensor<float> trainer::load_device_tier(const exec_context& on, pe_state& pe,
                                        const prepared_batch& in, work_counters& w) {
  int const p = pe.comm.rank();
  COOPGNN_ASSERT(on.cuda() != nullptr, "load_device_tier needs a CUDA context");
  auto const& ctx = *on.cuda();  // the compute context, or the prefetch context ahead
  auto const sync = [&] { cuda::detail::synchronize(ctx.compute()); };
  const feature_table* table = dev_->table_for(p);
  auto const n = static_cast<std::int64_t>(in.mb.input_nodes.size());
  std::int64_t const cols = table->cols();
  cuda::table_view const tv{table->device_data(), table->rows(), table->cols(), table->cols(),
                            table->dtype()};
  const vid_t* ids = in.mb.input_nodes.data();
  auto out = ctx.allocate<float>(static_cast<std::size_t>(n * cols));
  auto first_bad = ctx.to_device(std::span<const unsigned long long>(&kNoBadId, 1));
  // The gather writes the smallest position of an id outside the table; reading it synchronises.
  auto check_ids = [&] {
    auto const bad = ctx.to_host(first_bad).at(0);
    if (bad == kNoBadId) return;
    vid_t v = 0;
    cuda::detail::copy_async(&v, ids + bad, sizeof v, ctx.compute());
    sync();
    COOPGNN_FAIL("feature load: vertex {} at position {} is outside [0, {})", v, bad,
                 table->rows());
  };
  if (!dev_->caches.empty() && n > 0) {
    // GPU cache: hits copied by the lookup, misses gathered in place, then admitted.
    auto& cache = *dev_->caches[static_cast<std::size_t>(p)];
    auto miss_pos = ctx.allocate<std::int64_t>(static_cast<std::size_t>(n));
    auto const st = cache.lookup(ids, n, out.data(), miss_pos.data(), ctx.compute());
    cuda::gather_rows_at_async(tv, ids, miss_pos.data(), st.misses, out.data(), first_bad.data(),
                               ctx.compute());
    check_ids();
    cache.admit(ids, out.data(), miss_pos.data(), st.misses, ctx.compute());
    w.cache_hits += st.hits;
    w.cache_misses += st.misses;
  } else {
    cuda::gather_rows_async(tv, ids, n, out.data(), first_bad.data(), ctx.compute());
    check_ids();
    w.cache_misses += n;  // no cache: every row comes from storage
  }
  return tensor<float>(buffer<float>::adopt(std::move(out)), n, cols);
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
trainer::~trainer() = default;
std::vector<std::int64_t> trainer::peak_device_memory() const { return {}; }
void trainer::reset_peak_device_memory() const {}
exec_context trainer::compute_context(int p) const {
  return exec_context(cfg_.compute_backend, p, pe_thread_budget(cfg_));
}
bool trainer::device_tier() const { return false; }
bool trainer::device_cache_holds_rows() const { return false; }
tensor<float> trainer::load_device_tier(const exec_context& /*on*/, pe_state& /*pe*/,
                                        const prepared_batch& /*in*/, work_counters& /*w*/) {
  COOPGNN_FAIL("--backend cuda: this build has no CUDA backend");
}

#endif  // COOPGNN_WITH_CUDA

}  // namespace coopgnn
