// Internal to the trainer's translation units (trainer.cpp, trainer_cuda.cpp): the per-PE state
// and the per-step stage clocks. Not part of the public interface.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "runtime/core/timer.hpp"
#include "runtime/pipeline/trainer.hpp"

namespace coopgnn {

namespace detail {
/// Adam options of a run.
inline models::adam_options adam_options_of(const train_config& cfg) {
  models::adam_options o;
  o.lr = cfg.lr;
  o.weight_decay = cfg.weight_decay;
  return o;
}

/// Staging of one row exchange: what is sent plus what is received, in bytes.
inline std::int64_t staging_of(const exchange_plan& plan, std::int64_t cols) {
  return static_cast<std::int64_t>(plan.send_perm.size() + plan.recv_inv.size()) * cols *
         static_cast<std::int64_t>(sizeof(float));
}
}  // namespace detail

struct trainer::pe_state {
  pe_state(int rank, const train_config& cfg, const models::model_config& mc,
           std::shared_ptr<host_comm_group> group, const feature_table* features)
      : ctx(backend::host, rank, cfg.sample_threads),
        comm(std::move(group), rank),
        model(mc),
        opt(model.params(), detail::adam_options_of(cfg)),
        store(features) {}
  exec_context ctx;
  host_communicator comm;
  models::gnn_model model;
  models::adam opt;
  feature_store store;
  stage_seconds seconds;       // accumulated over the epoch
  work_counters work;          // accumulated over the epoch
  double loss = 0;             // accumulated global-batch loss (identical on every PE)
  std::uint64_t run_seed = 0;  // PE 0's seed, broadcast at start (DESIGN.md section 4)
  communicator* device_comm = nullptr;  // CUDA backend: this PE's device communicator (dev_)
};

/// Stage clocks of one step on one PE. Stage time excludes the time spent inside collectives,
/// which goes to `communication`; the CPU clock gets the thread's CPU time of the stage
/// (collective copies included, waiting not). Traffic is what this PE's communicators sent to
/// other PEs, attributed to a layer and direction by record().
struct trainer::step_meter {
  explicit step_meter(std::vector<const communicator*> c)
      : comms(std::move(c)), cpu_mark(thread_cpu_seconds()), comm_mark(comm_seconds()),
        sent_mark(sent_bytes()), sent_start(sent_mark), allreduce_start(allreduce_bytes()) {}
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
  [[nodiscard]] std::int64_t allreduce_bytes() const {
    std::int64_t b = 0;
    for (auto const* c : comms) b += c->stats().allreduce_bytes;
    return b;
  }
  void stage_end(double& slot, double& cpu_slot, const scoped_timer& timer) {
    double const now_comm = comm_seconds();
    double const c = now_comm - comm_mark;
    comm_mark = now_comm;
    slot += std::max(0.0, timer.seconds() - c);
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

  std::vector<const communicator*> comms;
  stage_seconds t;
  stage_seconds cpu;
  std::vector<layer_traffic> traffic;
  double cpu_mark;
  double comm_mark;
  std::int64_t sent_mark;
  std::int64_t sent_start;       // totals when the step began
  std::int64_t allreduce_start;
};

}  // namespace coopgnn
