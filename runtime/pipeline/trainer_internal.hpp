// Internal to the trainer's translation units (trainer.cpp, trainer_devices.cpp): the per-PE state,
// what one step carries from sampling to the model, and the per-step stage clocks. Not part of
// the public interface.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

#include "runtime/core/stage_clock.hpp"
#include "runtime/core/timer.hpp"
#include "runtime/pipeline/exchange.hpp"
#include "runtime/pipeline/trainer.hpp"

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

/// Staging of one row exchange: what is sent plus what is received, in bytes.
inline std::int64_t staging_of(const exchange_route& route, std::int64_t cols) {
  return route.staging_rows() * cols * static_cast<std::int64_t>(sizeof(float));
}
}  // namespace detail

struct trainer::pe_state {
  /// @param compute  the context the PE's model, features and exchanges live in
  pe_state(int rank, const train_config& cfg, const exec_context& compute,
           const models::model_config& mc, std::shared_ptr<host_comm_group> group,
           const feature_table* features)
      : host_ctx(backend::host, rank, sampler_threads(cfg)),
        ctx(compute),
        clock(ctx),
        comm(std::move(group), rank),
        model(ctx, mc),
        opt(ctx, model.params(), detail::adam_options_of(cfg, &model)),
        store(features) {}
  exec_context host_ctx;  // host sampling (the host sampler's threads)
  exec_context ctx;       // host, emulated device, or this PE's CUDA device
  stage_clock clock;      // the step's stage spans, on ctx (events on the CUDA backend)
  host_communicator comm;
  models::gnn_model model;
  models::adam opt;
  feature_store store;
  stage_seconds seconds;                // accumulated over the epoch
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
  /// The communicator of ctx.space(): the device communicator on the CUDA backend, the host one
  /// for host and emulated memory.
  communicator& rows_comm() { return device_comm != nullptr ? *device_comm : comm; }
};

/// What one step carries from sampling to the model, in the PE's memory space.
struct trainer::step_batch {
  minibatch mb;                        // sampled in ctx.space(), or on the host and copied there
  std::vector<block> host_blocks;      // host copies of the blocks, for traces only
  std::vector<block_view> blocks;      // [L] sampling order, views of mb.blocks
  std::vector<exchange_route> routes;  // [L] cooperative: routes[l] serves blocks[l] sources
  std::vector<vid_t> input_host;       // off the host: the input ids copied there, for
                                       // host-tier loads
  std::int64_t sample_bytes = 0;       // blocks, plans and input ids (working set)
  /// The input ids as host memory: the minibatch's own on the host backend, else input_host.
  [[nodiscard]] std::span<const vid_t> input_ids_on_host() const {
    if (mb.input_nodes.space() == memory_space::host) return mb.input_nodes.host();
    return input_host;
  }
};

/// The graph and the owner map copied into one device's memory (or the emulated device's), for
/// sampling there; PEs sharing a device share the copy.
struct trainer::placed_graph {
  csc_buffers graph;
  buffer<std::uint16_t> owners;  // cooperative only
};

/// Stage clocks of one step on one PE. A stage is a span of the PE's stage_clock (wall time on
/// the host and the emulated device; CUDA events on the compute stream, so no stage synchronises):
/// stage_begin() opens it, stage_end() closes it, and settle(), after the step's one
/// synchronisation, adds each span less the time spent inside collectives during it to its slot.
/// That collective time goes to `communication` at stage_end (the communicators time their calls
/// on the host; a device communicator waits for its stream, so the wait is inside the call).
/// The CPU clock gets the thread's CPU time of the stage (collective copies included, waiting
/// not; on the CUDA backend the host's enqueueing). Traffic is what this PE's communicators sent
/// to other PEs, attributed to a layer and direction by record().
struct trainer::step_meter {
  step_meter(std::vector<const communicator*> c, stage_clock& clk)
      : clock(clk),
        comms(std::move(c)),
        cpu_mark(thread_cpu_seconds()),
        comm_mark(comm_seconds()),
        sent_mark(sent_bytes()),
        sent_start(sent_mark),
        allreduce_start(allreduce_bytes()),
        calls_start(alltoall_calls()),
        collectives_start(collectives()) {
    clock.reset();  // a new step: its spans from 0
  }
  [[nodiscard]] double comm_seconds() const {
    double s = 0;
    for (auto const* c : comms) s += c->stats().seconds;
    return s;
  }
  [[nodiscard]] std::int64_t sent_bytes() const {
    std::int64_t b = 0;
    for (auto const* c : comms) b += c->stats().alltoall_bytes_sent;
    return b;
  }
  [[nodiscard]] std::int64_t alltoall_calls() const {
    std::int64_t n = 0;
    for (auto const* c : comms) n += c->stats().alltoall_calls;
    return n;
  }
  [[nodiscard]] std::int64_t collectives() const {
    std::int64_t n = 0;
    for (auto const* c : comms) n += c->stats().collectives;
    return n;
  }
  [[nodiscard]] std::int64_t allreduce_bytes() const {
    std::int64_t b = 0;
    for (auto const* c : comms) b += c->stats().allreduce_bytes;
    return b;
  }
  /// Opens a stage's span. @returns its index for stage_end.
  [[nodiscard]] int stage_begin() { return clock.begin(); }
  /// Closes span `span` of the stage whose seconds go to `slot` (a member of t) at settle().
  void stage_end(double& slot, double& cpu_slot, int span) {
    clock.end(span);
    double const now_comm = comm_seconds();
    double const c = now_comm - comm_mark;
    comm_mark = now_comm;
    pending.push_back({&slot, span, c});
    t.communication += c;
    double const now = thread_cpu_seconds();
    cpu_slot += now - cpu_mark;
    cpu_mark = now;
  }
  /// Attributes the bytes sent since the last mark to (layer, direction).
  void record(int layer, const char* direction) {
    auto const now = sent_bytes();
    traffic.push_back({layer, direction, now - sent_mark});
    sent_mark = now;
  }
  void mark_sent() { sent_mark = sent_bytes(); }
  /// After the step's synchronisation (every span's end reached): each stage's span less its
  /// collective time, clamped at 0, into its slot.
  void settle() {
    for (auto const& p : pending) *p.slot += std::max(0.0, clock.seconds(p.span) - p.comm);
    pending.clear();
  }

  struct pending_stage {
    double* slot;  // member of t
    int span;      // of clock
    double comm;   // collective seconds inside the span
  };
  stage_clock& clock;
  std::vector<pending_stage> pending;
  std::vector<const communicator*> comms;
  stage_seconds t;
  stage_seconds cpu;
  std::vector<layer_traffic> traffic;
  double cpu_mark;
  double comm_mark;
  std::int64_t sent_mark;
  std::int64_t sent_start;  // totals when the step began
  std::int64_t allreduce_start;
  std::int64_t calls_start;
  std::int64_t collectives_start;
  std::vector<layer_shape> layers;  // [L] filled by the forward pass
};

}  // namespace coopgnn
