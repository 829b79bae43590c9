// Handing work prepared under one execution context to another's stream without a host wait
// (docs/design.md section 6.7: a batch prepared on the prefetch stream, computed on the compute
// stream). On the host and emulated backends, where kernels run as host code in program order,
// both classes do nothing.
#pragma once

#include <optional>
#include <utility>

#include "runtime/core/cuda_context.hpp"
#include "runtime/core/exec_context.hpp"
#include "runtime/core/free_stream.hpp"

struct CUevent_st;

namespace coopgnn {

/// The end of the work enqueued under one context up to a point, for another context's stream to
/// wait on. CUDA: an event (cudaEventDisableTiming) recorded on the first context's compute
/// stream (cudaEventRecord); wait() is cudaStreamWaitEvent on the second's. Move-only; the event
/// is destroyed with the object (cudaEventDestroy, which releases it once the device has reached
/// it, so destroying a handover after wait() is safe at any time).
class stream_handover {
 public:
  /// Nothing to wait for: wait() does nothing.
  stream_handover() = default;
  /// Marks everything enqueued so far under `from` (CUDA: records an event on its compute stream,
  /// with from's device current on the calling thread; no synchronisation). Host and emulated
  /// contexts: records nothing. @throws cuda_error when creating or recording the event fails.
  explicit stream_handover(const exec_context& from);
  ~stream_handover();
  stream_handover(stream_handover&& o) noexcept : event_(std::exchange(o.event_, nullptr)) {}
  stream_handover& operator=(stream_handover&& o) noexcept;
  stream_handover(const stream_handover&) = delete;
  stream_handover& operator=(const stream_handover&) = delete;

  /// Orders all work enqueued under `to` after this call behind the marked work (CUDA:
  /// cudaStreamWaitEvent on to's compute stream; the host does not wait). Without a mark, or on
  /// the host and emulated backends, does nothing. `to` must be on the marked context's device.
  /// @throws cuda_error.
  void wait(const exec_context& to) const;

 private:
  CUevent_st* event_ = nullptr;
};

/// While alive on the constructing thread, memory allocated under `from` (CUDA: stream-ordered on
/// its compute stream) and freed on this thread is freed stream-ordered on `to`'s compute stream
/// (cuda::free_stream_redirect). For a thread that computes batches prepared under `from` and
/// handed over with stream_handover::wait: their buffers are freed after its own reads. A
/// batch that was never handed over must be destroyed outside the scope (its free then stays
/// on `from`'s stream, after the writes). Host and emulated contexts, or `from` == `to`: does
/// nothing. Not nestable; destroy on the constructing thread.
class handed_over_frees {
 public:
  handed_over_frees(const exec_context& from, const exec_context& to) {
    if (from.cuda() != nullptr && to.cuda() != nullptr && from.cuda() != to.cuda()) {
      redirect_.emplace(from.cuda()->compute(), to.cuda()->compute());
    }
  }

 private:
  std::optional<cuda::free_stream_redirect> redirect_;
};

}  // namespace coopgnn
