// CUDA events for timing (docs/design.md sections 6.5 and 10): the few calls stage_clock.cpp needs,
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
/// cudaEventRecord(e, s); no synchronisation. @throws cuda_error.
void record_event(CUevent_st* e, CUstream_st* s);
/// cudaEventElapsedTime(start, stop) in seconds (resolution about 0.5 us); both events must have
/// completed (the caller synchronised their stream). @throws cuda_error (cudaErrorNotReady when
/// they have not).
double elapsed_seconds(CUevent_st* start, CUevent_st* stop);

}  // namespace coopgnn::cuda::detail
