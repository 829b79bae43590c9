// CUDA microbenchmarks of sampling and feature gather (docs/design.md section 12: ratios against a
// baseline measured in the same function; section 6.5, HBM and PCIe ceilings).
//   sample_ns_fanout10/<scale>:   NS fanout 10 on a device-resident R-MAT graph of 2^scale
//                                 vertices; counter edges_per_second (sampled edges / s).
//   gather_device/<row bytes>:    device table gather, counters gather_GBps, d2d_GBps and
//                                 ratio_vs_d2d (cudaMemcpy device-to-device of the same bytes).
//   gather_uva/<row bytes>:       pinned host table read in place (UVA), counters gather_GBps,
//                                 h2d_GBps and ratio_vs_h2d (pinned cudaMemcpy host-to-device).
// Times come from CUDA events on the stream doing the work (UseManualTime). Without a device
// every benchmark reports SkipWithError("no CUDA device").
#include <benchmark/benchmark.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <exception>
#include <memory>
#include <vector>

#include "bench/micro/cuda_bench_util.hpp"
#include "bench/micro/rmat_graph.hpp"
#include "kernels/gather/gather_cuda.hpp"
#include "kernels/sample/sample_cuda.hpp"
#include "runtime/core/cuda_check.hpp"
#include "runtime/core/cuda_context.hpp"
#include "runtime/core/device.hpp"

namespace coopgnn::bench {
namespace {

void sample_ns_fanout10_body(benchmark::State& state) {
  auto const scale = static_cast<int>(state.range(0));
  auto const& g = rmat_graph(scale);
  cuda::cuda_context ctx(0);
  auto const dg = cuda::upload(ctx, g);
  auto const seeds = bench_seeds(g.num_nodes, 16384, 1);
  auto const dseeds = ctx.to_device(std::span<const vid_t>(seeds));
  event_timer timer;
  std::int64_t edges = 0;
  std::uint32_t batch = 0;
  for (auto _ : state) {
    timer.start(ctx.compute());
    auto const s = cuda::sample_neighbors(ctx, dg, dseeds, {sampler_kind::ns, 10, 1, 0, batch++});
    state.SetIterationTime(timer.stop(ctx.compute()));
    edges += static_cast<std::int64_t>(s.nbrs.size());
  }
  state.counters["edges_per_second"] =
      benchmark::Counter(static_cast<double>(edges), benchmark::Counter::kIsRate);
  state.counters["graph_edges"] = static_cast<double>(g.num_edges());
}
void sample_ns_fanout10(benchmark::State& state) {
  guarded(state, [&] { sample_ns_fanout10_body(state); });
}
BENCHMARK(sample_ns_fanout10)->Arg(18)->Arg(24)->UseManualTime()->Unit(benchmark::kMillisecond);

/// Shared body: gather `m` rows of `row_bytes` from `table` (device-accessible) on stream s,
/// and in the same loop copy the same number of bytes with `baseline` (a cudaMemcpyAsync).
template <class Baseline>
void gather_vs_copy(benchmark::State& state, const cuda::cuda_context& ctx, cudaStream_t s,
                    const cuda::table_view& table, std::int64_t m, Baseline baseline,
                    const char* baseline_name, const char* ratio_name, int max_blocks) {
  auto const ids = bench_seeds(table.rows, m, 2);
  auto const dids = ctx.to_device(std::span<const vid_t>(ids), s);
  auto out = ctx.allocate<float>(static_cast<std::size_t>(m * table.cols), s);
  auto bad = ctx.allocate<unsigned long long>(1, s);
  COOPGNN_CUDA_CHECK(cudaMemsetAsync(bad.data(), 0xFF, sizeof(unsigned long long), s));
  event_timer timer;
  double gather_s = 0, copy_s = 0;
  double const bytes = static_cast<double>(m * table.cols) * sizeof(float);
  for (auto _ : state) {
    timer.start(s);
    cuda::gather_rows_async(table, dids.data(), m, out.data(), bad.data(), s, max_blocks);
    double const t = timer.stop(s);
    state.SetIterationTime(t);
    gather_s += t;
    timer.start(s);
    baseline(out.data(), bytes);
    copy_s += timer.stop(s);
  }
  auto const n = static_cast<double>(state.iterations());
  double const gather_gbps = bytes * n / gather_s * 1e-9;
  double const copy_gbps = bytes * n / copy_s * 1e-9;
  state.counters["gather_GBps"] = gather_gbps;
  state.counters[baseline_name] = copy_gbps;
  state.counters[ratio_name] = gather_gbps / copy_gbps;
  state.SetBytesProcessed(static_cast<std::int64_t>(bytes * n));
}

void gather_device_body(benchmark::State& state) {
  std::int64_t const cols = state.range(0) / 4;
  std::int64_t const rows = (std::int64_t{1} << 30) / state.range(0);  // a 1 GiB table
  std::int64_t const m = std::int64_t{1} << 18;
  cuda::cuda_context ctx(0);
  auto table = ctx.allocate<float>(static_cast<std::size_t>(rows * cols));
  COOPGNN_CUDA_CHECK(cudaMemsetAsync(table.data(), 0, table.bytes(), ctx.compute()));
  auto src = ctx.allocate<float>(static_cast<std::size_t>(m * cols));
  COOPGNN_CUDA_CHECK(cudaMemsetAsync(src.data(), 0, src.bytes(), ctx.compute()));
  cudaStream_t const s = ctx.compute();
  gather_vs_copy(
      state, ctx, s, {table.data(), rows, cols, cols}, m,
      [&](float* dst, double bytes) {
        COOPGNN_CUDA_CHECK(cudaMemcpyAsync(dst, src.data(), static_cast<std::size_t>(bytes),
                                           cudaMemcpyDeviceToDevice, s));
      },
      "d2d_GBps", "ratio_vs_d2d", 0);
}
void gather_device(benchmark::State& state) {
  guarded(state, [&] { gather_device_body(state); });
}
BENCHMARK(gather_device)->Arg(64)->Arg(256)->Arg(512)->Arg(1024)->UseManualTime();

void gather_uva_body(benchmark::State& state) {
  std::int64_t const cols = state.range(0) / 4;
  std::int64_t const rows = (std::int64_t{1} << 28) / state.range(0);  // a 256 MiB pinned table
  std::int64_t const m = std::int64_t{1} << 16;
  cuda::cuda_context ctx(0);
  cuda::pinned_buffer<float> table(static_cast<std::size_t>(rows * cols));
  cuda::pinned_buffer<float> staging(static_cast<std::size_t>(m * cols));
  for (auto& x : table.span()) x = 1.0f;
  for (auto& x : staging.span()) x = 1.0f;
  cudaStream_t const s = ctx.h2d();
  gather_vs_copy(
      state, ctx, s, {table.device_data(), rows, cols, cols}, m,
      [&](float* dst, double bytes) {
        COOPGNN_CUDA_CHECK(cudaMemcpyAsync(dst, staging.data(), static_cast<std::size_t>(bytes),
                                           cudaMemcpyHostToDevice, s));
      },
      "h2d_GBps", "ratio_vs_h2d", 0);
}
void gather_uva(benchmark::State& state) {
  guarded(state, [&] { gather_uva_body(state); });
}
BENCHMARK(gather_uva)->Arg(64)->Arg(256)->Arg(512)->Arg(1024)->UseManualTime();

}  // namespace
}  // namespace coopgnn::bench
