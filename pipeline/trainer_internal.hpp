// Internal to the trainer's translation units (trainer.cpp, prepare.cpp, trainer_devices.cpp): the
// per-PE state and the graph placed for device sampling (the step's stages: step.hpp). Not part
// of the public interface.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

#include "runtime/core/stage_clock.hpp"
#include "runtime/core/timer.hpp"
#include "pipeline/exchange.hpp"
#include "pipeline/step.hpp"
#include "pipeline/trainer.hpp"

namespace coopgnn {

namespace detail {
/// Adam options of a run for `model`'s parameters (cfg.weight_decay, on layer 0 only with
/// cfg.weight_decay_first_layer), or (model null) for the learnable input embeddings, decayed by
/// cfg.embedding_weight_decay alone (0 by default).
inline models::adam_options adam_options_of(const train_config& cfg,
                                            const models::gnn_model* model) {
  models::adam_options o;
  o.lr = cfg.lr;
  if (model == nullptr) {
    o.weight_decay = cfg.embedding_weight_decay;
    return o;
  }
  o.weight_decay = cfg.weight_decay;
  if (cfg.weight_decay_first_layer) o.decay_values = model->first_layer_values();
  return o;
}

}  // namespace detail

struct trainer::pe_state {
  /// @param compute  the context the PE's model, features and exchanges live in
  /// @param initial  null: the replica is initialised from mc.seed; otherwise a freshly built
  ///                 replica (of mc) whose values this one copies, the same bits without the
  ///                 draws (gnn_model's replica constructor)
  pe_state(int rank, const train_config& cfg, const exec_context& compute,
           const models::model_config& mc, std::shared_ptr<host_comm_group> group,
           const feature_table* features, const models::gnn_model* initial = nullptr)
      : host_ctx(backend::host, rank, sampler_threads(cfg)),
        ctx(compute),
        prefetch_ctx(compute),
        clock(ctx),
        comm(std::move(group), rank),
        model(initial != nullptr ? models::gnn_model(ctx, *initial) : models::gnn_model(ctx, mc)),
        opt(ctx, model.params(), detail::adam_options_of(cfg, &model)),
        store(features) {}
  exec_context host_ctx;  // host sampling (the host sampler's threads)
  exec_context ctx;       // host, emulated device, or this PE's CUDA device
  /// Where the prefetch thread prepares batches (docs/design.md section 6.7): ctx on the host and
  /// emulated backends; on CUDA a cuda_context of its own on the PE's device (its own streams and
  /// pool), set by setup_cuda_pes.
  exec_context prefetch_ctx;
  stage_clock clock;      // the step's stage spans, on ctx (events on the CUDA backend)
  host_communicator comm;
  models::gnn_model model;
  models::adam opt;
  feature_store store;
  stage_seconds seconds;                // accumulated over the epoch
  stage_seconds cpu_seconds;            // the thread's CPU time per stage, over the epoch
  work_counters work;                   // accumulated over the epoch
  double loss = 0;                      // accumulated global-batch loss (identical on every PE)
  std::uint64_t run_seed = 0;           // PE 0's seed, broadcast at start (docs/design.md 4.1)
  communicator* device_comm = nullptr;  // CUDA backend: this PE's device communicator (dev_)
  std::unique_ptr<models::embedding_table> emb;  // learnable input rows (embedding_dim > 0)
  /// Send and receive staging of the row exchanges (exchange_pull / exchange_push), kept across
  /// layers and steps so that it is allocated only when an exchange outgrows it.
  exchange_workspace exchange_ws;
  /// The global-batch loss of this PE's most recent step (trainer::last_loss); NaN before one.
  double last_loss = std::numeric_limits<double>::quiet_NaN();
  /// --prefetch > 0 (docs/design.md section 6.7): the prefetch thread's communicator (of a
  /// group apart from `comm`'s, so that its collectives never interleave with the PE thread's),
  /// its stage clock and its exchange staging; null / unused when the PE prepares serially.
  std::unique_ptr<host_communicator> prefetch_comm;
  /// CUDA backend with --prefetch: the prefetch thread's device communicator (of a group of its
  /// own, on prefetch_ctx's streams; trainer_devices.cpp); null otherwise.
  communicator* prefetch_device_comm = nullptr;
  std::unique_ptr<stage_clock> prefetch_clock;  // on prefetch_ctx
  exchange_workspace prefetch_ws;               // in prefetch_ctx's memory
  /// The communicator of ctx.space(): the device communicator on the CUDA backend, the host one
  /// for host and emulated memory.
  communicator& rows_comm() { return device_comm != nullptr ? *device_comm : comm; }
  /// The communicators a step meters: the host one, and the device one when there is one;
  /// `ahead`: the prefetch thread's.
  [[nodiscard]] std::vector<const communicator*> metered_comms(bool ahead = false) const {
    std::vector<const communicator*> c{ahead ? prefetch_comm.get() : &comm};
    communicator* const d = ahead ? prefetch_device_comm : device_comm;
    if (d != nullptr) c.push_back(d);
    return c;
  }
  /// The contexts whose kernel calls a step counts (each has its own tally).
  [[nodiscard]] std::vector<const exec_context*> metered_contexts() const {
    return {&ctx, &host_ctx};
  }
  /// What the stages of step `batch_index` (of `pes` PEs) use of this PE; `ahead`: those of the
  /// prefetch thread, which runs on prefetch_ctx and whose collectives go through prefetch_comm
  /// (and prefetch_device_comm on CUDA).
  step_context stage_context(int pes, std::uint32_t batch_index, step_meter& m,
                             metered_exchange& x, bool ahead = false) {
    communicator& rows = !ahead                          ? rows_comm()
                         : prefetch_device_comm != nullptr ? *prefetch_device_comm
                                                           : *prefetch_comm;
    return {.ctx = ahead ? prefetch_ctx : ctx,
            .host_ctx = host_ctx,
            .host_comm = ahead ? *prefetch_comm : comm,
            .rows_comm = rows,
            .rank = comm.rank(),
            .pes = pes,
            .run_seed = run_seed,
            .batch_index = batch_index,
            .model = model,
            .emb = emb.get(),
            .meter = m,
            .exchange = x};
  }
};

/// The graph and the owner map copied into one device's memory (or the emulated device's), for
/// sampling there; PEs sharing a device share the copy.
struct trainer::placed_graph {
  csc_buffers graph;
  buffer<std::uint16_t> owners;  // cooperative only
};

}  // namespace coopgnn
