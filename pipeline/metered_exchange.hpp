// The per-step meter of a PE (stage clocks, traffic per layer and direction) and the one metered
// exchange every row, id and gradient exchange of a step goes through (docs/design.md sections
// 6.3 and 6.6). Internal to the pipeline's step (trainer.cpp, prepare.cpp, the protocol_* and
// task_* files); not part of the public interface.
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "runtime/comm/communicator.hpp"
#include "runtime/core/stage_clock.hpp"
#include "runtime/core/timer.hpp"
#include "pipeline/exchange.hpp"
#include "pipeline/trainer.hpp"

namespace coopgnn {

/// Stage clocks of one step on one PE. A stage is a span of the PE's stage_clock (wall time on
/// the host and the emulated device; CUDA events on the compute stream, so no stage synchronises):
/// stage_begin() opens it, stage_end() closes it, and settle(), after the step's one
/// synchronisation, adds each span less the time spent inside collectives during it to its slot.
/// That collective time goes to `communication` at stage_end (the communicators time their calls
/// on the host; a device communicator waits for its stream, so the wait is inside the call), and
/// its waiting part (comm_stats::wait_seconds) to `communication_wait` as well.
/// The CPU record gets the thread's CPU time of the stage less its CPU time inside collectives
/// (on the CUDA backend the host's enqueueing), and `cpu.communication` that collective CPU time
/// (comm_stats::cpu_seconds; waiting at a meeting uses none). Traffic is what this PE's communicators sent
/// to other PEs, attributed to a layer and direction by record(). Collective and kernel calls
/// are what the communicators and `contexts` (the PE's, each with its own tally) counted.
struct step_meter {
  step_meter(std::vector<const communicator*> c, stage_clock& clk,
             std::vector<const exec_context*> contexts = {})
      : clock(clk),
        comms(std::move(c)),
        ctxs(std::move(contexts)),
        cpu_mark(thread_cpu_seconds()),
        comm_mark(comm_seconds()),
        wait_mark(wait_seconds()),
        comm_cpu_mark(comm_cpu_seconds()),
        sent_mark(sent_bytes()),
        sent_start(sent_mark),
        allreduce_start(allreduce_bytes()),
        calls_start(alltoall_calls()),
        collectives_start(collectives()),
        collective_calls_start(collective_calls()),
        count_exchanges_start(count_exchanges()),
        kernel_calls_start(kernel_calls()) {
    clock.reset();  // a new step: its spans from 0
  }
  /// The sum of `field` of every metered communicator's stats.
  template <typename F>
  [[nodiscard]] auto total(F field) const {
    decltype(field(comm_stats{})) s{};
    for (auto const* c : comms) s += field(c->stats());
    return s;
  }
  [[nodiscard]] double comm_seconds() const {
    return total([](const comm_stats& s) { return s.seconds; });
  }
  [[nodiscard]] double wait_seconds() const {
    return total([](const comm_stats& s) { return s.wait_seconds; });
  }
  [[nodiscard]] double comm_cpu_seconds() const {
    return total([](const comm_stats& s) { return s.cpu_seconds; });
  }
  /// Whether every metered communicator measures its wait (communicator::measures_wait).
  [[nodiscard]] bool wait_measured() const {
    return std::all_of(comms.begin(), comms.end(),
                       [](const communicator* c) { return c->measures_wait(); });
  }
  [[nodiscard]] std::int64_t sent_bytes() const {
    return total([](const comm_stats& s) { return s.alltoall_bytes_sent; });
  }
  [[nodiscard]] std::int64_t alltoall_calls() const {
    return total([](const comm_stats& s) { return s.alltoall_calls; });
  }
  [[nodiscard]] std::int64_t collectives() const {
    return total([](const comm_stats& s) { return s.collectives; });
  }
  [[nodiscard]] std::int64_t allreduce_bytes() const {
    return total([](const comm_stats& s) { return s.allreduce_bytes; });
  }
  [[nodiscard]] std::int64_t collective_calls() const {
    return total([](const comm_stats& s) { return s.calls; });
  }
  [[nodiscard]] std::int64_t count_exchanges() const {
    return total([](const comm_stats& s) { return s.count_exchanges; });
  }
  /// Kernel entry calls of the metered contexts so far.
  [[nodiscard]] std::int64_t kernel_calls() const {
    std::int64_t k = 0;
    for (auto const* c : ctxs) k += c->kernel_calls();
    return k;
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
    double const now_wait = wait_seconds();
    t.communication_wait += now_wait - wait_mark;
    wait_mark = now_wait;
    // The thread's CPU time of the span less what it spent inside collectives, which goes to
    // cpu.communication: the CPU record's stages are exclusive, as the wall record's are.
    double const now_comm_cpu = comm_cpu_seconds();
    double const cc = now_comm_cpu - comm_cpu_mark;
    comm_cpu_mark = now_comm_cpu;
    cpu.communication += cc;
    double const now = thread_cpu_seconds();
    cpu_slot += std::max(0.0, now - cpu_mark - cc);
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
  /// The step's work counters `w` plus what the communicators counted since construction.
  [[nodiscard]] work_counters with_traffic(work_counters w) const {
    w.alltoall_bytes += sent_bytes() - sent_start;
    w.allreduce_bytes += allreduce_bytes() - allreduce_start;
    w.alltoall_calls += alltoall_calls() - calls_start;
    w.collectives += collectives() - collectives_start;
    w.collective_calls += collective_calls() - collective_calls_start;
    w.count_exchanges += count_exchanges() - count_exchanges_start;
    w.kernel_calls += kernel_calls() - kernel_calls_start;
    return w;
  }

  struct pending_stage {
    double* slot;  // member of t
    int span;      // of clock
    double comm;   // collective seconds inside the span
  };
  stage_clock& clock;
  std::vector<pending_stage> pending;
  std::vector<const communicator*> comms;
  std::vector<const exec_context*> ctxs;
  stage_seconds t;
  stage_seconds cpu;
  std::vector<layer_traffic> traffic;
  double cpu_mark;
  double comm_mark;
  double wait_mark;
  double comm_cpu_mark;
  std::int64_t sent_mark;
  std::int64_t sent_start;  // totals when the step began
  std::int64_t allreduce_start;
  std::int64_t calls_start;
  std::int64_t collectives_start;
  std::int64_t collective_calls_start;
  std::int64_t count_exchanges_start;
  std::int64_t kernel_calls_start;
  std::vector<layer_shape> layers;  // [L] filled by the forward pass
};

/// The one door of a step's exchanges: every exchange of docs/design.md section 6.3 (the
/// sampling and pair id exchanges, features, forward, backward, the pairs' rows and gradients,
/// the input-row gradients) goes through it, so that each is staged in the PE's
/// exchange_workspace, its bytes are attributed to (layer, direction) in the meter's traffic
/// record, and the step's largest send + receive staging is kept (pe_trace::staging_bytes).
/// Layer -1 is the link-prediction pairs' route. One per PE and step; not thread-safe.
class metered_exchange {
 public:
  /// @param ctx   the PE's compute context (rows live in ctx.space())
  /// @param rows  the communicator of ctx.space() (exchange.hpp)
  /// @param ws    the PE's staging, kept across steps
  metered_exchange(const exec_context& ctx, communicator& rows, exchange_workspace& ws,
                   step_meter& meter)
      : ctx_(ctx), rows_(rows), ws_(ws), meter_(meter) {}

  /// exchange_pull of `owner_rows` over `route` ([route.num_owner_rows, d] -> [num_requester_rows,
  /// d], ctx.space()); its bytes recorded as (layer, direction). @throws as exchange_pull.
  tensor<float> pull(const exchange_route& route, tensor<float>&& owner_rows, int layer,
                     const char* direction);
  /// exchange_push of `grads` over `route` ([num_requester_rows, d] -> [num_owner_rows, d]);
  /// recorded as (layer, direction). @throws as exchange_push.
  tensor<float> push(const exchange_route& route, tensor<float>&& grads, int layer,
                     const char* direction);
  /// Every PE's `ids` ([n] ctx.space()) and `rows` ([n, d] float32, ctx.space()), all-gathered
  /// in rank order (allgatherv_rows) on every PE; recorded as (layer, direction); the staging
  /// counted is P copies of what this PE sends plus everything it receives. Collective.
  std::pair<buffer<vid_t>, tensor<float>> allgather(buffer_view<const vid_t> ids,
                                                    tensor_view<const float> rows, int layer,
                                                    const char* direction);
  /// exchange_with_owners of host ids over the host communicator (`host`, `comm`), the id bytes
  /// recorded as (layer, "ids"). Collective. @throws as exchange_with_owners.
  owner_exchange request_ids(const exec_context& host, communicator& comm,
                             buffer_view<const std::uint16_t> owner_of,
                             buffer_view<const vid_t> ids, int layer);
  /// Records id bytes a sampling protocol sent by itself (minibatch::id_bytes, one per layer).
  void sampled_ids(std::span<const std::int64_t> id_bytes);
  /// The largest send + receive staging in bytes of the exchanges so far.
  [[nodiscard]] std::int64_t staging_bytes() const { return staging_; }

 private:
  void stage(const exchange_route& route, std::int64_t cols);
  const exec_context& ctx_;
  communicator& rows_;
  exchange_workspace& ws_;
  step_meter& meter_;
  std::int64_t staging_ = 0;
};

}  // namespace coopgnn
