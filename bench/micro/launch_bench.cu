// Kernel launch cost on one stream (docs/design.md section 6.5: the cost model's
// kernel_launch_us, what each kernel of a step pays besides its bytes and FLOPs).
//   kernel_launch/<kernels>: `kernels` back-to-back launches of an empty one-block kernel on one
//                            stream, timed by CUDA events around the whole burst; counter
//                            us_per_kernel (microseconds per launch on a busy stream, the
//                            launch throughput the model's per-kernel charge stands for) and
//                            us_launch_sync (one launch followed by cudaStreamSynchronize, the
//                            round trip of a lone kernel, averaged over 100).
// Without a device the benchmark reports SkipWithError("no CUDA device").
#include <benchmark/benchmark.h>
#include <cuda_runtime.h>

#include <chrono>
#include <cstdint>

#include "bench/micro/cuda_bench_util.hpp"
#include "runtime/core/cuda_check.hpp"
#include "runtime/core/cuda_context.hpp"

namespace coopgnn::bench {
namespace {

__global__ void empty_kernel() {}

void kernel_launch_body(benchmark::State& state) {
  auto const kernels = static_cast<int>(state.range(0));
  cuda::cuda_context ctx(0);
  cudaStream_t const s = ctx.compute();
  empty_kernel<<<1, 32, 0, s>>>();  // warm-up: module load
  COOPGNN_CUDA_CHECK(cudaGetLastError());
  COOPGNN_CUDA_CHECK(cudaStreamSynchronize(s));
  event_timer timer;
  double burst_s = 0;
  for (auto _ : state) {
    timer.start(s);
    for (int k = 0; k < kernels; ++k) empty_kernel<<<1, 32, 0, s>>>();
    COOPGNN_CUDA_CHECK(cudaGetLastError());
    double const t = timer.stop(s);
    state.SetIterationTime(t);
    burst_s += t;
  }
  constexpr int lone = 100;
  auto const t0 = std::chrono::steady_clock::now();
  for (int k = 0; k < lone; ++k) {
    empty_kernel<<<1, 32, 0, s>>>();
    COOPGNN_CUDA_CHECK(cudaStreamSynchronize(s));
  }
  double const lone_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  auto const n = static_cast<double>(state.iterations());
  state.counters["us_per_kernel"] = burst_s / (n * kernels) * 1e6;
  state.counters["us_launch_sync"] = lone_s / lone * 1e6;
}
void kernel_launch(benchmark::State& state) {
  guarded(state, [&] { kernel_launch_body(state); });
}
BENCHMARK(kernel_launch)->Arg(1000)->UseManualTime()->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace coopgnn::bench
