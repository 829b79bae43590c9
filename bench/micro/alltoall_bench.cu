// All-to-all-v bandwidth of the device communicators (docs/design.md section 6.3,
// the row exchanges of cooperative minibatching): P PEs, one thread each, exchange `seg` bytes
// with every peer through make_device_communicators (NCCL when the PEs have distinct GPUs, the
// peer-copy communicator when they share one). Reported in the same run against a device-to-
// device cudaMemcpy of the same bytes on one stream (ratio_vs_d2d): on one GPU that is the
// ceiling of the peer-copy path; across NVLink GPUs the ratio shows the link against HBM.
// Counters: alltoall_GBps (bytes that cross PEs per second), d2d_GBps, ratio_vs_d2d, and
// us_per_call (microseconds per all-to-all call; with 64-byte segments that is the call's fixed
// cost, the cost model's nccl_latency_us), pes, gpus (1 when the PEs share GPU 0).
#include <benchmark/benchmark.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <barrier>
#include <chrono>
#include <exception>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include "bench/micro/cuda_bench_util.hpp"
#include "runtime/comm/device_comm.hpp"
#include "runtime/core/cuda_context.hpp"

namespace coopgnn::bench {
namespace {

void alltoall_body(benchmark::State& state) {
  auto const seg = static_cast<std::int64_t>(state.range(0));  // bytes per (sender, receiver)
  auto const P = static_cast<int>(state.range(1));
  int devices = 0;
  COOPGNN_CUDA_CHECK(cudaGetDeviceCount(&devices));
  // One PE per GPU when there are enough, else all PEs share GPU 0 (the single-GPU machine).
  bool const spread = devices >= P;
  std::vector<std::unique_ptr<cuda::cuda_context>> ctxs;
  std::vector<const cuda::cuda_context*> cps;
  for (int p = 0; p < P; ++p) {
    ctxs.push_back(std::make_unique<cuda::cuda_context>(spread ? p : 0, p));
    cps.push_back(ctxs.back().get());
  }
  // Every context drains before any buffer, communicator or pool goes back, also when the body
  // throws (peer_communicator.hpp: peers may still read a failed call's buffers).
  struct drain_all {
    std::vector<std::unique_ptr<cuda::cuda_context>>& c;
    ~drain_all() {
      for (auto& x : c) {
        try {
          x->synchronize();
        } catch (...) {  // reported by the call that failed
        }
      }
    }
  } const drain{ctxs};
  auto comms = make_device_communicators(cps, "auto");
  std::vector<cuda::device_buffer<std::byte>> send, recv;
  for (int p = 0; p < P; ++p) {
    ctxs[p]->make_current();
    send.push_back(ctxs[p]->allocate<std::byte>(static_cast<std::size_t>(seg * P)));
    recv.push_back(ctxs[p]->allocate<std::byte>(static_cast<std::size_t>(seg * P)));
    COOPGNN_CUDA_CHECK(cudaMemsetAsync(send.back().data(), 1, send.back().bytes(),
                                       ctxs[p]->compute()));
    ctxs[p]->synchronize();
  }
  std::vector<std::int64_t> const bytes(static_cast<std::size_t>(P), seg);
  // One all-to-all on persistent-per-call threads: each PE thread binds its device, waits at a
  // barrier, then times its own call; the exchange takes as long as its slowest PE. Thread
  // start-up is outside the timed region. A failing PE aborts the group so that no peer hangs.
  auto exchange = [&]() -> double {
    std::vector<std::exception_ptr> err(static_cast<std::size_t>(P));
    std::vector<double> secs(static_cast<std::size_t>(P), 0.0);
    std::barrier go(P);
    {
      std::vector<std::jthread> threads;
      for (int p = 0; p < P; ++p) {
        threads.emplace_back([&, p] {
          auto const q = static_cast<std::size_t>(p);
          bool arrived = false;
          try {
            ctxs[q]->make_current();
            go.arrive_and_wait();
            arrived = true;
            auto const t0 = std::chrono::steady_clock::now();
            comms[q]->alltoallv(send[q].data(), bytes, recv[q].data(), bytes);
            secs[q] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
          } catch (...) {
            err[q] = std::current_exception();
            if (!arrived) go.arrive_and_drop();
            comms[q]->abort("alltoall bench: a PE failed");
          }
        });
      }
    }
    for (auto& e : err) {
      if (e) std::rethrow_exception(e);
    }
    return *std::max_element(secs.begin(), secs.end());
  };
  exchange();  // warm-up: peer access, first-touch of the pools
  // Baseline: the bytes that cross PEs, P (P - 1) seg, as one device-to-device copy on PE 0.
  // (The peer-copy path also copies each PE's own segment inside the call; it is not counted.)
  double const moved = static_cast<double>(seg) * P * (P - 1);
  ctxs[0]->make_current();
  auto base_src = ctxs[0]->allocate<std::byte>(static_cast<std::size_t>(moved));
  auto base_dst = ctxs[0]->allocate<std::byte>(static_cast<std::size_t>(moved));
  event_timer timer;
  double a2a_s = 0, copy_s = 0;
  for (auto _ : state) {
    double const t = exchange();
    state.SetIterationTime(t);
    a2a_s += t;
    ctxs[0]->make_current();
    timer.start(ctxs[0]->compute());
    COOPGNN_CUDA_CHECK(cudaMemcpyAsync(base_dst.data(), base_src.data(),
                                       static_cast<std::size_t>(moved), cudaMemcpyDeviceToDevice,
                                       ctxs[0]->compute()));
    copy_s += timer.stop(ctxs[0]->compute());
  }
  auto const n = static_cast<double>(state.iterations());
  double const a2a_gbps = moved * n / a2a_s * 1e-9;
  double const copy_gbps = moved * n / copy_s * 1e-9;
  state.counters["alltoall_GBps"] = a2a_gbps;
  state.counters["d2d_GBps"] = copy_gbps;
  state.counters["ratio_vs_d2d"] = a2a_gbps / copy_gbps;
  state.counters["us_per_call"] = a2a_s / n * 1e6;
  state.counters["pes"] = P;
  state.counters["gpus"] = spread ? P : 1;
  state.SetBytesProcessed(static_cast<std::int64_t>(moved * n));
  for (auto& c : ctxs) c->synchronize();
  // Buffers before communicators before contexts (cuda_context.hpp, peer_communicator.hpp).
  base_src.reset();
  base_dst.reset();
  for (int p = 0; p < P; ++p) {
    ctxs[p]->make_current();
    send[p].reset();
    recv[p].reset();
  }
  comms.clear();
}

void alltoall(benchmark::State& state) {
  guarded(state, [&] { alltoall_body(state); });
}
BENCHMARK(alltoall)
    ->Args({64, 2})
    ->Args({64, 4})
    ->Args({1 << 20, 2})
    ->Args({1 << 20, 4})
    ->Args({16 << 20, 4})
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace coopgnn::bench
