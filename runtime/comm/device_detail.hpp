// Internal helpers of the device communicators (peer_communicator, nccl_communicator): polling
// waits and failure handling (the rank-order sum is in rank_order_sum.hpp). CUDA builds only;
// not part of the public API. Include from .cpp files only (it uses fmt through error.hpp,
// which nvcc cannot compile).
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "runtime/comm/host_communicator.hpp"
#include "runtime/comm/rank_order_sum.hpp"
#include "runtime/core/cuda_context.hpp"
#include "runtime/core/error.hpp"

namespace coopgnn::comm_detail {

/// Calls `step()` until it returns true, never blocking in CUDA or NCCL: between rounds it
/// checks the group's abort flag and the deadline group.timeout() from the first round (none
/// when it is 0), and backs off (yield, then 20 us sleeps). On an abort or a timeout it calls
/// `on_fail()` (may be empty; e.g. ncclCommAbort), aborts the group and throws comm_error "<what>
/// on PE <rank>: ...". An exception from `step()` also runs on_fail() and aborts the group, then
/// propagates. After every round it clears a cudaErrorNotReady that the step's queries may have
/// left as the thread's last error (cuda_check.hpp, clear_not_ready).
void poll_until(host_comm_group& group, int rank, const char* what,
                const std::function<bool()>& step, const std::function<void()>& on_fail);

/// cudaStreamQuery(s): true when all work on `s` has finished, false while it runs (the pending
/// status is cleared from the thread's last error, see COOPGNN_CUDA_QUERY in cuda_check.hpp).
/// @throws cuda_error for any other status (an asynchronous fault of earlier work on `s`).
bool stream_done(cuda::stream_t s);

/// After a failed collective, copies or kernels may still be queued on ctx.comm() (they wait for
/// a peer that will never come, or finish late). Makes `caller` (the stream the collective was
/// ordered after) wait for them (records `scratch` on comm, `caller` waits), so that
/// stream-ordered frees of the caller's buffers on that stream cannot hand their memory out
/// while the comm stream still writes it. Never throws (failures are logged).
void join_comm_into(const cuda::cuda_context& ctx, cuda::stream_t caller,
                    cuda::event_t scratch) noexcept;

/// The stream a device collective is ordered after: `stream` itself.
/// @throws logic_error "<what> on PE <rank>: ..." for a null stream (the legacy default stream,
///         which this project never uses: it would serialise every PE's work).
cuda::stream_t caller_stream(cuda::stream_t stream, int rank, const char* what);

/// Runs one collective's body on PE `rank`. A comm_error passes through (after on_fail() and a
/// group abort, a no-op when the group already failed); any other exception (cuda_error, NCCL
/// failure) runs on_fail(), aborts the group with its message and is rethrown as comm_error
/// "<what> on PE <rank>: <message>". Thus a PE that fails never leaves its peers waiting.
template <class Body>
void guarded(host_comm_group& group, int rank, const char* what,
             const std::function<void()>& on_fail, Body&& body) {
  try {
    body();
  } catch (const comm_error& e) {
    if (on_fail) on_fail();
    group.abort(e.what());
    throw;
  } catch (const std::exception& e) {
    auto why = fmt::format("{} on PE {}: {}", what, rank, e.what());
    if (on_fail) on_fail();
    group.abort(why);
    throw comm_error(why);
  }
}

}  // namespace coopgnn::comm_detail
