// Device communicators (runtime/comm/device_comm.hpp): the peer-copy communicator with 1, 2 and 4
// PE threads sharing device 0, and NCCL with one device per PE when the machine has two or
// more. Oracles: the host_communicator on the same data (alltoallv, broadcast), a host loop in
// rank order (allreduce, bitwise), self-verifying values f(p, q, i) (nccl-tests habit), and
// failure propagation within a short timeout instead of a hang.
#include <gtest/gtest.h>

#include "tests/common/gpu.hpp"

#if defined(COOPGNN_WITH_CUDA)
#include <cuda_runtime_api.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "runtime/comm/device_comm.hpp"
#include "runtime/comm/host_communicator.hpp"
#include "runtime/comm/nccl_communicator.hpp"
#include "runtime/comm/peer_communicator.hpp"
#include "runtime/core/cuda_context.hpp"
#include "runtime/core/device.hpp"
#include "runtime/core/error.hpp"

namespace coopgnn {
namespace {

using body_t = std::function<void(communicator&, const cuda::cuda_context&)>;

/// Runs `body` on one thread per PE, PE p on devices[p], with the communicators of
/// make_device_communicators(option). A body that throws aborts the group (as PE threads
/// should); the errors come back per PE.
std::vector<std::exception_ptr> run_device_group(
    const std::vector<int>& devices, std::string_view option, const body_t& body,
    std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
  std::vector<std::unique_ptr<cuda::cuda_context>> contexts;
  std::vector<const cuda::cuda_context*> ptrs;
  for (std::size_t p = 0; p < devices.size(); ++p) {
    contexts.push_back(std::make_unique<cuda::cuda_context>(devices[p], static_cast<int>(p),
                                                            std::uint64_t{64} << 20));
    ptrs.push_back(contexts.back().get());
  }
  auto comms = make_device_communicators(ptrs, option, timeout);
  std::vector<std::exception_ptr> errors(devices.size());
  {
    std::vector<std::jthread> threads;
    for (std::size_t p = 0; p < devices.size(); ++p) {
      threads.emplace_back([&, p] {
        try {
          contexts[p]->make_current();
          body(*comms[p], *contexts[p]);
        } catch (const std::exception& e) {
          errors[p] = std::current_exception();
          comms[p]->abort(e.what());
        }
      });
    }
  }
  comms.clear();  // before the contexts whose streams they use
  // After a failed collective, a PE's comm stream may still copy from a peer's buffers (peer
  // kind). Drain every context before destroying any, so that no pool is released while
  // another PE's queued copy still reads it (a fault there would poison device 0 for the
  // tests that follow). Finite: every queued wait is on an event that was recorded.
  for (auto const& ctx : contexts) {
    try {
      ctx->synchronize();
    } catch (const std::exception& e) {
      ADD_FAILURE() << "PE " << ctx->pe() << " device work failed: " << e.what();
    }
  }
  return errors;
}

void rethrow_first(const std::vector<std::exception_ptr>& errors) {
  for (auto const& e : errors) {
    if (e) std::rethrow_exception(e);
  }
}

/// Every PE failed, and every PE but `culprit` (the one whose body threw; -1 for none) with
/// comm_error.
void expect_comm_errors(const std::vector<std::exception_ptr>& errors, int culprit = -1) {
  for (std::size_t p = 0; p < errors.size(); ++p) {
    ASSERT_TRUE(errors[p]) << "PE " << p << " did not fail";
    if (static_cast<int>(p) != culprit) {
      EXPECT_THROW(std::rethrow_exception(errors[p]), comm_error) << "PE " << p;
    }
  }
}

/// Same data through host_communicators: the oracle of the device runs.
void run_host_group(int pes, const std::function<void(communicator&)>& body) {
  auto group = std::make_shared<host_comm_group>(pes, std::chrono::seconds(20));
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(pes));
  {
    std::vector<std::jthread> threads;
    for (int p = 0; p < pes; ++p) {
      threads.emplace_back([&, p] {
        host_communicator c(group, p);
        try {
          body(c);
        } catch (const std::exception& e) {
          errors[p] = std::current_exception();
          c.abort(e.what());
        }
      });
    }
  }
  rethrow_first(errors);
}

/// Enqueues a host function that sleeps for `d` on stream s: device work behind it waits.
void stall(cuda::stream_t s, std::chrono::milliseconds d) {
  static_assert(sizeof(std::chrono::milliseconds::rep) <= sizeof(void*));
  auto* arg = reinterpret_cast<void*>(static_cast<std::intptr_t>(d.count()));
  ASSERT_EQ(cudaLaunchHostFunc(
                s,
                [](void* ms) {
                  std::this_thread::sleep_for(
                      std::chrono::milliseconds(reinterpret_cast<std::intptr_t>(ms)));
                },
                arg),
            cudaSuccess);
}

// Value sent from PE p to PE q, element i.
std::int64_t f(int p, int q, std::int64_t i) { return p * 1000000 + q * 1000 + i; }

// PE p sends counts[q] elements to PE q: uneven, with empty segments (and one of 33 elements).
std::vector<std::int64_t> counts_of(int p, int pes) {
  std::vector<std::int64_t> counts(static_cast<std::size_t>(pes));
  for (int q = 0; q < pes; ++q) {
    int const k = (p + 2 * q + 1) % 4;  // 1 PE: one element to itself; 2 and 4 PEs: zeros too
    counts[q] = k == 3 ? 33 : k;
  }
  return counts;
}

std::vector<std::int64_t> send_of(int p, int pes) {
  std::vector<std::int64_t> send;
  auto const counts = counts_of(p, pes);
  for (int q = 0; q < pes; ++q) {
    for (std::int64_t i = 0; i < counts[q]; ++i) send.push_back(f(p, q, i));
  }
  return send;
}

template <typename T>
std::vector<std::int64_t> bytes_of(const std::vector<std::int64_t>& counts) {
  std::vector<std::int64_t> b(counts.size());
  for (std::size_t q = 0; q < counts.size(); ++q) b[q] = counts[q] * std::int64_t{sizeof(T)};
  return b;
}

// Values whose float sum depends on the order: 1e8 swallows small addends unless they come first.
float value_of(int p, std::size_t i) {
  float const big = (p % 2 == 1) ? 1.0e8f : 0.0f;
  return big + 0.37f * static_cast<float>(p + 1) + 1.0e-3f * static_cast<float>(i % 97);
}

/// alltoallv_with_counts of send_of() through `c` (the receiver allocates on the compute stream
/// once it knows its counts), then an agreed alltoallv back with the counts transposed (NCCL
/// returns it enqueued, ordered before the compute stream's later work); returns what PE
/// c.rank() received first, after checking that the reply returned its own send exactly.
std::vector<std::int64_t> device_alltoallv_with_counts(communicator& c,
                                                       const cuda::cuda_context& ctx) {
  int const p = c.rank(), pes = c.size();
  auto const send = send_of(p, pes);
  auto const counts = counts_of(p, pes);
  std::vector<std::int64_t> recv_counts(static_cast<std::size_t>(pes), -1);
  auto d_send = ctx.to_device(std::span<const std::int64_t>(send));
  cuda::device_buffer<std::int64_t> d_recv;
  int allocations = 0;
  c.alltoallv_with_counts(
      d_send.data(), counts, recv_counts,
      [&](std::int64_t n) -> void* {
        ++allocations;
        d_recv = ctx.allocate<std::int64_t>(static_cast<std::size_t>(n));
        return d_recv.data();
      },
      datatype::int64, ctx.compute());
  EXPECT_EQ(allocations, 1);
  for (int q = 0; q < pes; ++q) EXPECT_EQ(recv_counts[q], counts_of(q, pes)[p]) << "from " << q;
  auto d_back = ctx.allocate<std::int64_t>(send.size());
  c.alltoallv_agreed(d_recv.data(), recv_counts, d_back.data(), counts, datatype::int64,
                     ctx.compute());
  EXPECT_EQ(ctx.to_host(d_back), send) << "the reply of a request returns it";
  return ctx.to_host(d_recv);
}

/// The device alltoallv of send_of() through `c`; returns what PE c.rank() received.
std::vector<std::int64_t> device_alltoallv(communicator& c, const cuda::cuda_context& ctx) {
  int const p = c.rank(), pes = c.size();
  auto const send = send_of(p, pes);
  auto const counts = counts_of(p, pes);
  std::vector<std::int64_t> recv_counts(static_cast<std::size_t>(pes));
  c.alltoall(counts, recv_counts);
  std::int64_t total = 0;
  for (auto n : recv_counts) total += n;
  auto d_send = ctx.to_device(std::span<const std::int64_t>(send));
  auto d_recv = ctx.allocate<std::int64_t>(static_cast<std::size_t>(total));
  c.alltoallv(reinterpret_cast<const std::byte*>(d_send.data()), bytes_of<std::int64_t>(counts),
              reinterpret_cast<std::byte*>(d_recv.data()), bytes_of<std::int64_t>(recv_counts));
  return ctx.to_host(d_recv);
}

class PeerCommTest : public ::testing::TestWithParam<int> {};

TEST_P(PeerCommTest, AlltoallvEqualsTheHostCommunicator) {
  COOPGNN_REQUIRE_DEVICE();
  int const pes = GetParam();
  std::vector<std::vector<std::int64_t>> host_recv(pes), device_recv(pes);
  std::vector<std::int64_t> host_sent(pes), device_sent(pes);
  run_host_group(pes, [&](communicator& c) {
    std::vector<std::int64_t> recv_counts;
    auto const send = send_of(c.rank(), pes);
    host_recv[c.rank()] = alltoallv<std::int64_t>(c, send, counts_of(c.rank(), pes), recv_counts);
    host_sent[c.rank()] = c.stats().alltoall_bytes_sent;
  });
  rethrow_first(run_device_group(std::vector<int>(pes, 0), "peer",
                                 [&](communicator& c, const cuda::cuda_context& ctx) {
                                   ASSERT_NE(dynamic_cast<peer_communicator*>(&c), nullptr);
                                   device_recv[c.rank()] = device_alltoallv(c, ctx);
                                   device_sent[c.rank()] = c.stats().alltoall_bytes_sent;
                                 }));
  std::size_t total = 0;
  for (int p = 0; p < pes; ++p) {
    EXPECT_EQ(device_recv[p], host_recv[p]) << "PE " << p;
    EXPECT_EQ(device_sent[p], host_sent[p]) << "PE " << p;
    total += host_recv[p].size();
  }
  EXPECT_GT(total, 0u);  // the oracle is not empty
  // Self-verifying too: PE p got f(q, p, i) from each q, in source order.
  for (int p = 0; p < pes; ++p) {
    std::size_t o = 0;
    for (int q = 0; q < pes; ++q) {
      for (std::int64_t i = 0; i < counts_of(q, pes)[p]; ++i) {
        ASSERT_EQ(device_recv[p][o++], f(q, p, i)) << "PE " << p << " from " << q;
      }
    }
    EXPECT_EQ(o, device_recv[p].size());
  }
}

TEST_P(PeerCommTest, AllreduceSumsInRankOrderBitwise) {
  COOPGNN_REQUIRE_DEVICE();
  int const pes = GetParam();
  std::size_t const n = 1057;  // not a multiple of a block
  std::vector<float> expected(n, 0.0f);
  std::vector<double> expected_d(n, 0.0);
  for (std::size_t i = 0; i < n; ++i) {
    for (int p = 0; p < pes; ++p) {  // the oracle: a host loop in rank order
      expected[i] += value_of(p, i);
      expected_d[i] += static_cast<double>(value_of(p, i)) * 1e-3;
    }
  }
  std::vector<std::vector<float>> got(pes);
  rethrow_first(run_device_group(std::vector<int>(pes, 0), "auto",
                                 [&](communicator& c, const cuda::cuda_context& ctx) {
                                   int const p = c.rank();
                                   std::vector<float> v(n);
                                   std::vector<double> vd(n);
                                   for (std::size_t i = 0; i < n; ++i) {
                                     v[i] = value_of(p, i);
                                     vd[i] = static_cast<double>(value_of(p, i)) * 1e-3;
                                   }
                                   auto d = ctx.to_device(std::span<const float>(v));
                                   c.allreduce_sum(std::span<float>(d.data(), d.size()));
                                   got[p] = ctx.to_host(d);
                                   auto dd = ctx.to_device(std::span<const double>(vd));
                                   c.allreduce_sum(std::span<double>(dd.data(), dd.size()));
                                   auto const hd = ctx.to_host(dd);
                                   for (std::size_t i = 0; i < n; ++i) {
                                     ASSERT_EQ(std::bit_cast<std::uint64_t>(hd[i]),
                                               std::bit_cast<std::uint64_t>(expected_d[i]))
                                         << "double element " << i;
                                   }
                                   std::vector<std::int64_t> k = {p + 1, -p, std::int64_t{1} << 40};
                                   auto dk = ctx.to_device(std::span<const std::int64_t>(k));
                                   c.allreduce_sum(std::span<std::int64_t>(dk.data(), dk.size()));
                                   auto const hk = ctx.to_host(dk);
                                   EXPECT_EQ(hk[0], std::int64_t{pes} * (pes + 1) / 2);
                                   EXPECT_EQ(hk[1], -std::int64_t{pes} * (pes - 1) / 2);
                                   EXPECT_EQ(hk[2], std::int64_t{pes} << 40);
                                   auto empty = ctx.allocate<float>(0);
                                   c.allreduce_sum(std::span<float>(empty.data(), 0));
                                 }));
  for (int p = 0; p < pes; ++p) {
    ASSERT_EQ(got[p].size(), n);
    for (std::size_t i = 0; i < n; ++i) {
      ASSERT_EQ(std::bit_cast<std::uint32_t>(got[p][i]), std::bit_cast<std::uint32_t>(expected[i]))
          << "PE " << p << " element " << i;
    }
  }
}

TEST_P(PeerCommTest, BroadcastFromTheLastPe) {
  COOPGNN_REQUIRE_DEVICE();
  int const pes = GetParam();
  rethrow_first(run_device_group(
      std::vector<int>(pes, 0), "peer", [&](communicator& c, const cuda::cuda_context& ctx) {
        std::vector<std::int64_t> v(77);
        for (std::size_t i = 0; i < v.size(); ++i) {
          v[i] = c.rank() == pes - 1 ? f(pes - 1, 0, static_cast<std::int64_t>(i)) : -1;
        }
        auto d = ctx.to_device(std::span<const std::int64_t>(v));
        c.broadcast(std::span<std::byte>(reinterpret_cast<std::byte*>(d.data()), d.bytes()),
                    pes - 1);
        auto const h = ctx.to_host(d);
        for (std::size_t i = 0; i < h.size(); ++i) {
          ASSERT_EQ(h[i], f(pes - 1, 0, static_cast<std::int64_t>(i)));
        }
        c.barrier();
      }));
}

INSTANTIATE_TEST_SUITE_P(SharedDevice0, PeerCommTest, ::testing::Values(1, 2, 4));

TEST(PeerComm, AFailedPeRaisesCommErrorOnTheOthers) {
  COOPGNN_REQUIRE_DEVICE();
  auto const t0 = std::chrono::steady_clock::now();
  auto const errors = run_device_group(
      {0, 0, 0, 0}, "peer",
      [](communicator& c, const cuda::cuda_context& ctx) {
        if (c.rank() == 2) throw io_error("PE 2 exploded");
        (void)device_alltoallv(c, ctx);
        c.barrier();
      },
      std::chrono::seconds(20));
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(10));  // abort, not timeout
  expect_comm_errors(errors, 2);
}

TEST(PeerComm, AMissingPeTimesOut) {
  COOPGNN_REQUIRE_DEVICE();
  auto const t0 = std::chrono::steady_clock::now();
  auto const errors = run_device_group(
      {0, 0}, "peer",
      [](communicator& c, const cuda::cuda_context& ctx) {
        if (c.rank() == 1) return;  // never joins: no exception, no abort
        (void)device_alltoallv(c, ctx);
      },
      std::chrono::milliseconds(300));
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(10));
  ASSERT_TRUE(errors[0]);
  EXPECT_THROW(std::rethrow_exception(errors[0]), comm_error);
  EXPECT_FALSE(errors[1]);
}

TEST(PeerComm, MismatchedCountsFailEveryPe) {
  COOPGNN_REQUIRE_DEVICE();
  auto const errors =
      run_device_group({0, 0}, "peer", [](communicator& c, const cuda::cuda_context& ctx) {
        auto buf = ctx.allocate<std::byte>(16);
        std::vector<std::int64_t> send(2, 0), recv(2, 0);
        if (c.rank() == 0) recv[1] = 8;  // PE 1 sends nothing
        c.alltoallv(buf.data(), send, buf.data() + 8, recv);
        c.barrier();
      });
  expect_comm_errors(errors);
}

TEST(PeerComm, StalledDeviceWorkTimesOutInsteadOfHanging) {
  // PE 1's compute stream is stalled for 3 s: its send buffer is not ready, so its peers' copies
  // wait on the device. Their polled waits (1 s timeout) must fail with comm_error.
  COOPGNN_REQUIRE_DEVICE();
  auto const t0 = std::chrono::steady_clock::now();
  auto const errors = run_device_group(
      {0, 0, 0}, "peer",
      [](communicator& c, const cuda::cuda_context& ctx) {
        if (c.rank() == 1) stall(ctx.compute(), std::chrono::seconds(3));
        (void)device_alltoallv(c, ctx);
      },
      std::chrono::seconds(1));
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(30));
  expect_comm_errors(errors);
}

// ---- NCCL: one device per PE ----------------------------------------------------------------

std::vector<int> distinct_devices() {
  int const count = query_devices().count;
  std::vector<int> devices;
  for (int d = 0; d < std::min(count, 4); ++d) devices.push_back(d);
  return devices;
}

#define COOPGNN_REQUIRE_TWO_DEVICES()                                                             \
  COOPGNN_REQUIRE_DEVICE();                                                                       \
  if (query_devices().count < 2) {                                                                \
    GTEST_SKIP() << "NCCL needs one device per PE and this machine has " << query_devices().count \
                 << " device(s); the peer-copy tests cover one";                                  \
  }

/// Every collective of the communicators make_device_communicators(option) builds for
/// `devices` against the host oracles: alltoallv (host_communicator), allreduce (a rank-order
/// sum, bitwise), broadcast from the last PE, barrier. After each polled wait the thread's
/// last CUDA error must be clear: a cudaErrorNotReady left there by a completion query would
/// make the next checked kernel launch throw "device not ready".
void check_collectives(const std::vector<int>& devices, std::string_view option,
                       bool expect_nccl) {
  int const pes = static_cast<int>(devices.size());
  std::vector<std::vector<std::int64_t>> host_recv(pes);
  run_host_group(pes, [&](communicator& c) {
    std::vector<std::int64_t> recv_counts;
    host_recv[c.rank()] =
        alltoallv<std::int64_t>(c, send_of(c.rank(), pes), counts_of(c.rank(), pes), recv_counts);
  });
  std::size_t const n = 1057;
  std::vector<float> expected(n, 0.0f);
  for (std::size_t i = 0; i < n; ++i) {
    for (int p = 0; p < pes; ++p) expected[i] += value_of(p, i);
  }
  int const root = pes - 1;
  rethrow_first(
      run_device_group(devices, option, [&](communicator& c, const cuda::cuda_context& ctx) {
        if (expect_nccl) {
          ASSERT_NE(dynamic_cast<nccl_communicator*>(&c), nullptr);
        }
        EXPECT_EQ(device_alltoallv(c, ctx), host_recv[c.rank()]);
        EXPECT_EQ(cudaPeekAtLastError(), cudaSuccess) << "after alltoallv";
        EXPECT_EQ(device_alltoallv_with_counts(c, ctx), host_recv[c.rank()]);
        EXPECT_EQ(cudaPeekAtLastError(), cudaSuccess) << "after alltoallv_with_counts";
        std::vector<float> v(n);
        for (std::size_t i = 0; i < n; ++i) v[i] = value_of(c.rank(), i);
        auto d = ctx.to_device(std::span<const float>(v));
        c.allreduce_sum(std::span<float>(d.data(), d.size()));
        EXPECT_EQ(cudaPeekAtLastError(), cudaSuccess) << "after allreduce";
        auto const h = ctx.to_host(d);
        for (std::size_t i = 0; i < n; ++i) {
          ASSERT_EQ(std::bit_cast<std::uint32_t>(h[i]), std::bit_cast<std::uint32_t>(expected[i]));
        }
        std::vector<std::int64_t> b(5, c.rank() == root ? 42 : 0);
        auto db = ctx.to_device(std::span<const std::int64_t>(b));
        c.broadcast(std::span<std::byte>(reinterpret_cast<std::byte*>(db.data()), db.bytes()),
                    root);
        EXPECT_EQ(cudaPeekAtLastError(), cudaSuccess) << "after broadcast";
        EXPECT_EQ(ctx.to_host(db), std::vector<std::int64_t>(5, 42));
        c.barrier();
        EXPECT_EQ(cudaPeekAtLastError(), cudaSuccess) << "after barrier";
      }));
}

TEST(NcclComm, AlltoallvAllreduceBroadcastMatchTheHostOracles) {
  COOPGNN_REQUIRE_TWO_DEVICES();
  check_collectives(distinct_devices(), "auto", true);
}

// One GPU is enough for NCCL with one rank: init, group calls (the alltoallv is a group of
// sends and receives), the asynchronous-error polling and abort-free teardown all run, which
// the multi-rank tests above cannot do on a one-GPU machine.
TEST(NcclComm, OneRankRunsEveryCollective) {
  COOPGNN_REQUIRE_DEVICE();
  check_collectives({0}, "nccl", true);
}

// The peer-copy communicator's polled waits leave no pending error either (1 and 4 PEs on
// device 0, the first launch after a collective is where the stale "not ready" surfaced).
TEST(PeerComm, NoPendingErrorAfterPolledWaits) {
  COOPGNN_REQUIRE_DEVICE();
  check_collectives({0}, "peer", false);
  check_collectives({0, 0, 0, 0}, "peer", false);
}

TEST(NcclComm, AFailedPeRaisesCommErrorOnTheOthers) {
  COOPGNN_REQUIRE_TWO_DEVICES();
  auto const devices = distinct_devices();
  auto const t0 = std::chrono::steady_clock::now();
  auto const errors = run_device_group(
      devices, "nccl",
      [](communicator& c, const cuda::cuda_context& ctx) {
        if (c.rank() == 1) throw io_error("PE 1 exploded");
        (void)device_alltoallv(c, ctx);
      },
      std::chrono::seconds(20));
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(15));
  expect_comm_errors(errors, 1);
}

TEST(NcclComm, ASharedDeviceIsRefused) {
  COOPGNN_REQUIRE_DEVICE();
  cuda::cuda_context a(0, 0), b(0, 1);
  std::vector<const cuda::cuda_context*> both = {&a, &b};
  EXPECT_THROW((void)make_device_communicators(both, "nccl"), logic_error);
}

// Last on purpose: it aborts NCCL with kernels in flight (and one queued behind the stall).
TEST(NcclComm, AStalledPeTimesOutAndAbortsInFlightNccl) {
  // PE 1's compute stream is stalled for 3 s, so its NCCL kernels start late while its peers'
  // are already running: with a 1 s timeout, every PE's polled wait must give up, abort its
  // NCCL communicator with kernels in flight and throw comm_error.
  COOPGNN_REQUIRE_TWO_DEVICES();
  auto const devices = distinct_devices();
  auto const t0 = std::chrono::steady_clock::now();
  auto const errors = run_device_group(
      devices, "nccl",
      [](communicator& c, const cuda::cuda_context& ctx) {
        auto buf = ctx.allocate<float>(1 << 16);
        if (c.rank() == 1) stall(ctx.compute(), std::chrono::seconds(3));
        c.allreduce_sum(std::span<float>(buf.data(), buf.size()));
      },
      std::chrono::seconds(1));
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(60));
  expect_comm_errors(errors);
}

}  // namespace
}  // namespace coopgnn

#else
TEST(DeviceComm, Skipped) { GTEST_SKIP() << "no CUDA device: built without CUDA"; }
#endif
