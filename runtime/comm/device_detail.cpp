// Polling waits of the device communicators (declared in device_detail.hpp).
#if defined(COOPGNN_WITH_CUDA)
#include "runtime/comm/device_detail.hpp"

#include <cuda_runtime_api.h>

#include <chrono>
#include <thread>

#include "runtime/core/cuda_check.hpp"

namespace coopgnn::comm_detail {

void poll_until(host_comm_group& group, int rank, const char* what,
                const std::function<bool()>& step, const std::function<void()>& on_fail) {
  bool const bounded = group.timeout().count() > 0;  // 0 = no deadline
  auto const deadline = std::chrono::steady_clock::now() + group.timeout();
  auto fail = [&](const std::string& why) {
    auto msg = fmt::format("{} on PE {}: {}", what, rank, why);
    if (on_fail) on_fail();
    group.abort(msg);
    throw comm_error(msg);
  };
  for (int round = 0;; ++round) {
    bool done = false;
    try {
      done = step();
    } catch (const std::exception& e) {
      if (on_fail) on_fail();
      group.abort(fmt::format("{} on PE {}: {}", what, rank, e.what()));
      throw;
    }
    // A step may query completion inside a library (NCCL's asynchronous-error polling queries
    // its own events): whatever it left, a pending cudaErrorNotReady must not reach the next
    // checked launch on this thread.
    ::coopgnn::detail::clear_not_ready();
    if (done) return;
    if (group.aborted()) fail("aborted: " + group.reason());
    if (bounded && std::chrono::steady_clock::now() > deadline) {
      fail(fmt::format(
          "timed out after {:.3g} s: the device work did not finish (a peer is missing or hung; "
          "--peer-timeout sets the limit)",
          static_cast<double>(group.timeout().count()) / 1e3));
    }
    // Small messages finish in microseconds: spin briefly, then back off.
    if (round < 64) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(20));
    }
  }
}

bool stream_done(cuda::stream_t s) { return COOPGNN_CUDA_QUERY(cudaStreamQuery(s)); }

void join_comm_into(const cuda::cuda_context& ctx, cuda::stream_t caller,
                    cuda::event_t scratch) noexcept {
  if (scratch == nullptr || caller == nullptr) return;
  COOPGNN_CUDA_CHECK_NO_THROW(cudaEventRecord(scratch, ctx.comm()));
  COOPGNN_CUDA_CHECK_NO_THROW(cudaStreamWaitEvent(caller, scratch, 0));
}

cuda::stream_t caller_stream(cuda::stream_t stream, int rank, const char* what) {
  COOPGNN_EXPECTS(stream != nullptr,
                  "{} on PE {}: a device collective needs the stream its inputs were produced on "
                  "(got the null stream)",
                  what, rank);
  return stream;
}

}  // namespace coopgnn::comm_detail
#endif
