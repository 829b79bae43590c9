// Per-PE stage clock (docs/design.md sections 6.5 and 10): times the spans of a step's
// stages without a stream synchronisation per stage. On the host and the emulated device a span
// is wall time (steady clock) between begin() and end(), the same number a scoped_timer gives; on
// the CUDA backend begin() and end() record CUDA events on the PE's compute stream and seconds()
// reads cudaEventElapsedTime once the step's single synchronisation has passed them, so a span is
// the time the compute stream spent between the two marks. Runtime code uses one clock on every
// backend; only this file's implementation knows the difference.
#pragma once

#include <chrono>
#include <cstddef>
#include <vector>

#include "runtime/core/exec_context.hpp"

struct CUevent_st;  // = cudaEvent_t's pointee (cuda_context.hpp)

namespace coopgnn {

/// Spans of one step on one PE, numbered from 0 in begin() order; reset() starts the next step.
/// Not thread-safe: a clock belongs to its PE thread. Events (CUDA) are created on first use and
/// reused by later steps; they are destroyed with the clock, which must be destroyed before the
/// cuda_context of `ctx`.
class stage_clock {
 public:
  /// @param ctx  the PE's context; on backend::cuda its cuda_context must outlive the clock
  explicit stage_clock(const exec_context& ctx) : ctx_(ctx) {}
  ~stage_clock();
  stage_clock(const stage_clock&) = delete;
  stage_clock& operator=(const stage_clock&) = delete;
  stage_clock(stage_clock&&) = delete;
  stage_clock& operator=(stage_clock&&) = delete;

  /// Marks the start of a new span (host: now; CUDA: an event recorded on ctx's compute stream,
  /// no synchronisation). @returns the span's index. @throws cuda_error when recording fails.
  int begin();
  /// Marks the end of span `i` (host: now; CUDA: an event on the compute stream, no
  /// synchronisation). @throws logic_error when `i` was not begun in this step or has ended.
  void end(int i);
  /// Seconds of span `i` (>= 0). CUDA: the compute stream must have passed the span's end (the
  /// caller synchronised it after end(i)); it does not synchronise itself.
  /// @throws logic_error when `i` has not ended; cuda_error when the events are not complete.
  [[nodiscard]] double seconds(int i) const;
  /// Spans begun in this step.
  [[nodiscard]] int spans() const { return used_; }
  /// Forgets this step's spans (keeps the CUDA events for the next step).
  void reset() { used_ = 0; }

 private:
  struct span {
    std::chrono::steady_clock::time_point t0{}, t1{};
    CUevent_st* start = nullptr;  // CUDA backend: events on the compute stream
    CUevent_st* stop = nullptr;
    bool ended = false;
  };
  exec_context ctx_;
  std::vector<span> spans_;
  int used_ = 0;
};

}  // namespace coopgnn
