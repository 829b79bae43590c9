// Helpers shared by the CUDA microbenchmarks (bench/micro/*.cu): event timing and the guard
// that turns a missing device or an error into a skipped benchmark. Included only by .cu files.
#pragma once

#include <benchmark/benchmark.h>
#include <cuda_runtime.h>

#include <exception>

#include "runtime/core/cuda_check.hpp"
#include "runtime/core/device.hpp"

namespace coopgnn::bench {

/// A pair of CUDA events timing work enqueued between start() and stop() on one stream.
class event_timer {
 public:
  event_timer() {
    COOPGNN_CUDA_CHECK(cudaEventCreate(&start_));
    COOPGNN_CUDA_CHECK(cudaEventCreate(&stop_));
  }
  ~event_timer() {
    COOPGNN_CUDA_CHECK_NO_THROW(cudaEventDestroy(start_));
    COOPGNN_CUDA_CHECK_NO_THROW(cudaEventDestroy(stop_));
  }
  event_timer(const event_timer&) = delete;
  event_timer& operator=(const event_timer&) = delete;
  void start(cudaStream_t s) { COOPGNN_CUDA_CHECK(cudaEventRecord(start_, s)); }
  /// Records the stop event, waits for it and returns the elapsed seconds.
  double stop(cudaStream_t s) {
    COOPGNN_CUDA_CHECK(cudaEventRecord(stop_, s));
    COOPGNN_CUDA_CHECK(cudaEventSynchronize(stop_));
    float ms = 0;
    COOPGNN_CUDA_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
    return ms * 1e-3;
  }

 private:
  cudaEvent_t start_ = nullptr;
  cudaEvent_t stop_ = nullptr;
};

/// Runs `body` when a device is present; a missing device or a thrown error becomes
/// SkipWithError, never a crash.
template <class Body>
void guarded(benchmark::State& state, Body body) {
  if (query_devices().count == 0) {
    state.SkipWithError("no CUDA device");
    return;
  }
  try {
    body();
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
}

}  // namespace coopgnn::bench
