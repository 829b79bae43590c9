// Our SpMM and SDDMM kernels against cuSPARSE on a sampled-block-shaped input (fanout 10,
// ~100k destinations), measured in the same benchmark function (docs/design.md section 12:
// ratios against a baseline in the same run). Counters: ours_ms, cusparse_ms, speedup = cusparse_ms
// / ours_ms, and ours_GBps (bytes of the gathered rows, index and weight arrays over our time).
#include <benchmark/benchmark.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <functional>
#include <random>
#include <stdexcept>
#include <vector>

#include "kernels/sparse/sparse_cuda.hpp"
#include "runtime/core/device.hpp"

namespace {

using coopgnn::cuda::block_view;

void ok(cudaError_t st) {
  if (st != cudaSuccess) throw std::runtime_error(cudaGetErrorString(st));
}

template <typename T>
struct dev_vec {
  T* p = nullptr;
  explicit dev_vec(std::size_t n) {
    if (n > 0) ok(cudaMalloc(reinterpret_cast<void**>(&p), n * sizeof(T)));
  }
  explicit dev_vec(const std::vector<T>& h) : dev_vec(h.size()) {
    if (!h.empty()) ok(cudaMemcpy(p, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice));
  }
  ~dev_vec() {
    if (p != nullptr) (void)cudaFree(p);
  }
  dev_vec(const dev_vec&) = delete;
  dev_vec& operator=(const dev_vec&) = delete;
};

/// A sampled block: num_dst destinations with `fanout` in-edges each, sources drawn from a pool
/// of num_dst * 6 vertices (destinations first), Hajek weights 1 / fanout, random features.
struct bench_block {
  std::int64_t num_dst;
  std::int64_t num_src;
  std::int64_t d;
  dev_vec<std::int64_t> indptr;
  dev_vec<std::int64_t> indices;
  dev_vec<float> weights;
  dev_vec<float> x;
  block_view view;

  static std::vector<std::int64_t> make_indptr(std::int64_t num_dst, int fanout) {
    std::vector<std::int64_t> v(static_cast<std::size_t>(num_dst + 1));
    for (std::int64_t s = 0; s <= num_dst; ++s) v[s] = s * fanout;
    return v;
  }
  static std::vector<std::int64_t> make_indices(std::int64_t num_dst, std::int64_t num_src,
                                                int fanout) {
    std::mt19937_64 gen(42);
    std::vector<std::int64_t> v(static_cast<std::size_t>(num_dst * fanout));
    for (auto& t : v) t = static_cast<std::int64_t>(gen() % static_cast<std::uint64_t>(num_src));
    return v;
  }
  static std::vector<float> make_dense(std::int64_t n, std::uint64_t seed) {
    std::mt19937_64 gen(seed);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    std::vector<float> v(static_cast<std::size_t>(n));
    for (auto& f : v) f = u(gen);
    return v;
  }

  bench_block(std::int64_t dsts, int fanout, std::int64_t cols)
      : num_dst(dsts),
        num_src(dsts * 6),
        d(cols),
        indptr(make_indptr(dsts, fanout)),
        indices(make_indices(dsts, dsts * 6, fanout)),
        weights(std::vector<float>(static_cast<std::size_t>(dsts * fanout), 1.0f / fanout)),
        x(make_dense(dsts * 6 * cols, 7)) {
    view = {num_dst, num_src, num_dst * fanout, indptr.p, indices.p, weights.p};
  }
};

/// Milliseconds of one call of f on `stream`, by CUDA events.
double time_ms(cudaStream_t stream, const std::function<void()>& f) {
  cudaEvent_t start;
  cudaEvent_t stop;
  ok(cudaEventCreate(&start));
  ok(cudaEventCreate(&stop));
  ok(cudaEventRecord(start, stream));
  f();
  ok(cudaEventRecord(stop, stream));
  ok(cudaEventSynchronize(stop));
  float ms = 0.0f;
  ok(cudaEventElapsedTime(&ms, start, stop));
  ok(cudaEventDestroy(start));
  ok(cudaEventDestroy(stop));
  return ms;
}

bool have_device(benchmark::State& state) {
  if (coopgnn::query_devices().count > 0) return true;
  state.SkipWithError("no CUDA device");
  return false;
}

/// Runs ours and theirs alternately every iteration; manual time = ours.
void run_pair(benchmark::State& state, const bench_block& b, double bytes,
              const std::function<void(cudaStream_t)>& ours,
              const std::function<void(cudaStream_t)>& theirs) {
  cudaStream_t stream;
  ok(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  ours(stream);  // warm-up
  theirs(stream);
  ok(cudaStreamSynchronize(stream));
  double ours_total = 0.0;
  double theirs_total = 0.0;
  std::int64_t iters = 0;
  for (auto _ : state) {
    double const o = time_ms(stream, [&] { ours(stream); });
    double const t = time_ms(stream, [&] { theirs(stream); });
    state.SetIterationTime(o / 1e3);
    ours_total += o;
    theirs_total += t;
    ++iters;
  }
  ok(cudaStreamDestroy(stream));
  if (iters == 0) return;
  double const ours_ms = ours_total / static_cast<double>(iters);
  double const theirs_ms = theirs_total / static_cast<double>(iters);
  state.counters["ours_ms"] = ours_ms;
  state.counters["cusparse_ms"] = theirs_ms;
  state.counters["speedup"] = theirs_ms / ours_ms;
  state.counters["ours_GBps"] = bytes / (ours_ms * 1e6);
  state.counters["edges"] = static_cast<double>(b.view.num_edges);
}

void BM_spmm_vs_cusparse(benchmark::State& state) {
  if (!have_device(state)) return;
  try {
    bench_block const b(state.range(0), 10, state.range(1));
    dev_vec<float> y(static_cast<std::size_t>(b.num_dst * b.d));
    coopgnn::cuda::cusparse_handle handle;
    std::size_t const ws =
        coopgnn::cuda::spmm_cusparse_workspace_bytes(handle.get(), b.view, b.x.p, b.d, y.p);
    dev_vec<unsigned char> workspace(ws);
    double const e = static_cast<double>(b.view.num_edges);
    double const bytes =
        e * (static_cast<double>(b.d) * 4 + 12) + static_cast<double>(b.num_dst * b.d) * 4;
    run_pair(
        state, b, bytes, [&](cudaStream_t s) { coopgnn::cuda::spmm(b.view, b.x.p, b.d, y.p, s); },
        [&](cudaStream_t s) {
          coopgnn::cuda::spmm_cusparse(handle.get(), b.view, b.x.p, b.d, y.p, workspace.p, ws, s);
        });
  } catch (const std::exception& ex) {
    state.SkipWithError(ex.what());
  }
}

void BM_sddmm_vs_cusparse(benchmark::State& state) {
  if (!have_device(state)) return;
  try {
    bench_block const b(state.range(0), 10, state.range(1));
    dev_vec<float> out(static_cast<std::size_t>(b.view.num_edges));
    coopgnn::cuda::cusparse_handle handle;
    std::size_t const ws = coopgnn::cuda::sddmm_cusparse_workspace_bytes(handle.get(), b.view,
                                                                         b.x.p, b.x.p, b.d, out.p);
    dev_vec<unsigned char> workspace(ws);
    double const e = static_cast<double>(b.view.num_edges);
    double const bytes =
        e * (static_cast<double>(b.d) * 4 + 12) + static_cast<double>(b.num_dst * b.d) * 4;
    run_pair(
        state, b, bytes,
        [&](cudaStream_t s) { coopgnn::cuda::sddmm(b.view, b.x.p, b.x.p, b.d, false, out.p, s); },
        [&](cudaStream_t s) {
          coopgnn::cuda::sddmm_cusparse(handle.get(), b.view, b.x.p, b.x.p, b.d, out.p, workspace.p,
                                        ws, s);
        });
  } catch (const std::exception& ex) {
    state.SkipWithError(ex.what());
  }
}

BENCHMARK(BM_spmm_vs_cusparse)
    ->Args({100000, 128})
    ->Args({100000, 256})
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_sddmm_vs_cusparse)
    ->Args({100000, 128})
    ->Args({100000, 256})
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace
