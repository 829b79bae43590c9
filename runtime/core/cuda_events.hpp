// CUDA events for timing and stream order (docs/design.md sections 6.5, 6.7 and 10): the few calls
// stage_clock.cpp and stream_handover.cpp need,
// declared without CUDA headers so that .cpp files can include this in any build. Definitions
// live in cuda_context.cu and exist only in CUDA builds (COOPGNN_WITH_CUDA).
#pragma once

struct CUstream_st;
struct CUevent_st;

namespace coopgnn::cuda::detail {

/// cudaEventCreate (timing enabled) on the current device. @throws cuda_error.
CUevent_st* create_timing_event();
/// cudaEventDestroy; nullptr is ignored. Never throws (logs a failure to stderr).
void destroy_event(CUevent_st* e) noexcept;
/// cudaEventCreateWithFlags(cudaEventDisableTiming) on the current device: an event that only
/// orders streams (cheaper to record and wait on than a timing event). @throws cuda_error.
CUevent_st* create_ordering_event();
/// cudaStreamWaitEvent(s, e, 0): work enqueued on `s` after this call waits until the work
/// captured by the most recent cudaEventRecord of `e` has completed (at once when `e` was never
/// recorded). No host synchronisation; `e` may be destroyed or recorded again right after.
/// @throws cuda_error.
void stream_wait_event(CUstream_st* s, CUevent_st* e);
/// cudaEventRecord(e, s); no synchronisation. @throws cuda_error.
void record_event(CUevent_st* e, CUstream_st* s);
/// cudaEventElapsedTime(start, stop) in seconds (resolution about 0.5 us); both events must have
/// completed (the caller synchronised their stream). @throws cuda_error (cudaErrorNotReady when
/// they have not).
double elapsed_seconds(CUevent_st* start, CUevent_st* stop);

}  // namespace coopgnn::cuda::detail
