// Host communicator: self-verifying all-to-all data (nccl-tests style), empty sends, all-reduce
// determinism, and failure propagation instead of hangs.
#include "runtime/comm/host_communicator.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <stdexcept>
#include <string>
#include <thread>

#include "runtime/core/error.hpp"

namespace coopgnn {
namespace {

void run_group(int P, const std::function<void(communicator&)>& body,
               std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
  auto group = std::make_shared<host_comm_group>(P, timeout);
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(P));
  {
    std::vector<std::jthread> ts;
    for (int p = 0; p < P; ++p) {
      ts.emplace_back([&, p] {
        host_communicator c(group, p);
        try {
          body(c);
        } catch (...) {
          errors[p] = std::current_exception();
          group->abort("test body failed");
        }
      });
    }
  }
  for (auto& e : errors) {
    if (e) std::rethrow_exception(e);
  }
}

// value sent from PE p to PE q, element i: a function every receiver can check.
std::int64_t f(int p, int q, std::int64_t i) { return p * 1000000 + q * 1000 + i; }

class AlltoallTest : public ::testing::TestWithParam<int> {};

TEST_P(AlltoallTest, DeliversSelfVerifyingData) {
  int const P = GetParam();
  run_group(P, [P](communicator& c) {
    int const p = c.rank();
    // PE p sends (p + q) % 3 elements to PE q: includes empty segments.
    std::vector<std::int64_t> counts(P), send;
    for (int q = 0; q < P; ++q) {
      counts[q] = (p + q) % 3;
      for (std::int64_t i = 0; i < counts[q]; ++i) send.push_back(f(p, q, i));
    }
    std::vector<std::int64_t> recv_counts;
    auto const recv = alltoallv<std::int64_t>(c, send, counts, recv_counts);
    std::size_t o = 0;
    for (int q = 0; q < P; ++q) {
      ASSERT_EQ(recv_counts[q], (q + p) % 3);
      for (std::int64_t i = 0; i < recv_counts[q]; ++i) ASSERT_EQ(recv[o++], f(q, p, i));
    }
    ASSERT_EQ(o, recv.size());
    std::int64_t expected_sent = 0;
    for (int q = 0; q < P; ++q) {
      if (q != p) expected_sent += counts[q] * 8;
    }
    EXPECT_EQ(c.stats().alltoall_bytes_sent, expected_sent);
  });
}

TEST_P(AlltoallTest, AllreduceIsIdenticalOnEveryPe) {
  int const P = GetParam();
  std::vector<std::vector<float>> results(static_cast<std::size_t>(P));
  run_group(P, [&](communicator& c) {
    std::vector<float> v(37);
    for (std::size_t i = 0; i < v.size(); ++i)
      v[i] = 0.1f * static_cast<float>(c.rank() + 1) + 1e-7f * static_cast<float>(i);
    c.allreduce_sum(std::span<float>(v));
    results[c.rank()] = v;
    std::vector<std::int64_t> n = {c.rank() + 1};
    c.allreduce_sum(std::span<std::int64_t>(n));
    EXPECT_EQ(n[0], static_cast<std::int64_t>(P) * (P + 1) / 2);
  });
  for (int p = 1; p < P; ++p) EXPECT_EQ(results[p], results[0]);
  float expected = 0;
  for (int p = 0; p < P; ++p) expected += 0.1f * static_cast<float>(p + 1);
  EXPECT_NEAR(results[0][0], expected, 1e-5f);
}

TEST_P(AlltoallTest, BroadcastFromRoot) {
  int const P = GetParam();
  run_group(P, [P](communicator& c) {
    std::uint64_t v = c.rank() == P - 1 ? 0xC0FFEEULL : 0;
    c.broadcast(std::as_writable_bytes(std::span<std::uint64_t>(&v, 1)), P - 1);
    EXPECT_EQ(v, 0xC0FFEEULL);
  });
}

INSTANTIATE_TEST_SUITE_P(Pes, AlltoallTest, ::testing::Values(1, 2, 3, 4, 8, 37, 300));

TEST(HostCommunicator, BackToBackCollectivesWithStragglersKeepEveryResult) {
  // The collectives hand results through one shared buffer of the group and have no meeting
  // after the last copy, so a PE that leaves early starts the next collective while others are
  // still copying. Rounds of every collective with changing sizes, each PE delayed differently
  // in each round: every result is checked against values written here.
  int const P = 9, rounds = 60;
  run_group(P, [&](communicator& c) {
    int const p = c.rank();
    for (int r = 0; r < rounds; ++r) {
      if ((p * 7 + r * 3) % 5 == 0) std::this_thread::sleep_for(std::chrono::microseconds(200));
      if ((p + r) % 4 == 0) std::this_thread::yield();
      // All-reduce, small (one meeting) or large (reduce-scatter + all-gather), of p + r + i.
      std::size_t const n = r % 3 == 0 ? 9000 + static_cast<std::size_t>(r) : 5 + r % 7;
      std::vector<std::int64_t> v(n);
      for (std::size_t i = 0; i < n; ++i) v[i] = p + r + static_cast<std::int64_t>(i);
      c.allreduce_sum(std::span<std::int64_t>(v));
      for (std::size_t i = 0; i < n; ++i) {
        ASSERT_EQ(v[i], P * (P - 1) / 2 + P * (r + static_cast<std::int64_t>(i)))
            << "round " << r << " element " << i;
      }
      // Counts: PE p sends 100 p + q + r to PE q.
      std::vector<std::int64_t> send(P), recv(P, -1);
      for (int q = 0; q < P; ++q) send[q] = 100 * p + q + r;
      c.alltoall(send, recv);
      for (int q = 0; q < P; ++q) ASSERT_EQ(recv[q], 100 * q + p + r) << "round " << r;
      // Broadcast of r + 1 values from root r % P.
      std::vector<std::int64_t> b(static_cast<std::size_t>(r) + 1, p == r % P ? 1000 + r : -1);
      c.broadcast(b.data(), b.data(), b.size(), datatype::int64, r % P, nullptr);
      ASSERT_EQ(b, std::vector<std::int64_t>(b.size(), 1000 + r)) << "round " << r;
    }
  });
}

TEST(HostCommunicator, CountsEveryCollectiveCallOnMoreThanOnePe) {
  for (int P : {1, 3}) {
    run_group(P, [P](communicator& c) {
      std::vector<std::int64_t> const send(static_cast<std::size_t>(P), 0);
      std::vector<std::int64_t> recv(static_cast<std::size_t>(P), 0);
      c.alltoall(send, recv);
      c.alltoallv(nullptr, send, nullptr, recv);
      c.alltoallv_agreed(nullptr, send, nullptr, recv);
      std::vector<float> x(4, 1.0f);
      c.allreduce_sum(std::span<float>(x));
      std::vector<std::byte> b(8);
      c.broadcast(b, 0);
      c.barrier();
      // Six calls on P > 1 PEs (the counts alltoall included); none on one PE.
      EXPECT_EQ(c.stats().collectives, P > 1 ? 6 : 0) << "P=" << P;
      EXPECT_EQ(c.stats().alltoall_calls, 2) << "alltoall_calls counts the all-to-all-v only";
    });
  }
}

TEST_P(AlltoallTest, AlltoallvWithCountsTellsTheReceiverItsCounts) {
  // float32 elements: PE p sends (p + 2 q) % 4 of them to PE q (empty segments included); the
  // receiver does not know its counts and learns them in the one call.
  int const P = GetParam();
  run_group(P, [P](communicator& c) {
    int const p = c.rank();
    std::vector<std::int64_t> counts(P);
    std::vector<float> send;
    for (int q = 0; q < P; ++q) {
      counts[q] = (p + 2 * q) % 4;
      for (std::int64_t i = 0; i < counts[q]; ++i) send.push_back(static_cast<float>(f(p, q, i)));
    }
    std::vector<std::int64_t> recv_counts(P, -1);
    std::vector<float> recv;
    int allocations = 0;
    c.alltoallv_with_counts(
        send.data(), counts, recv_counts,
        [&](std::int64_t n) -> void* {
          ++allocations;
          recv.assign(static_cast<std::size_t>(n), -1.0f);
          return recv.data();
        },
        datatype::float32, nullptr);
    EXPECT_EQ(allocations, 1);
    std::size_t o = 0;
    for (int q = 0; q < P; ++q) {
      ASSERT_EQ(recv_counts[q], (q + 2 * p) % 4) << "from PE " << q;
      for (std::int64_t i = 0; i < recv_counts[q]; ++i) {
        ASSERT_EQ(recv[o++], static_cast<float>(f(q, p, i)));
      }
    }
    EXPECT_EQ(o, recv.size());
    std::int64_t expected_sent = 0;
    for (int q = 0; q < P; ++q) {
      if (q != p) expected_sent += counts[q] * 4;
    }
    EXPECT_EQ(c.stats().alltoall_bytes_sent, expected_sent);
  });
}

TEST(HostCommunicator, CountsRidingWithTheDataAreAnOperationButNoCall) {
  for (int P : {1, 2, 3}) {
    run_group(P, [P](communicator& c) {
      std::vector<std::int64_t> const send(static_cast<std::size_t>(P), 0);
      std::vector<std::int64_t> recv(static_cast<std::size_t>(P), 0);
      c.alltoall(send, recv);                            // 1 call, 1 operation, 1 counts exchange
      c.alltoallv_agreed(nullptr, send, nullptr, recv);  // 1 call, 1 operation
      c.alltoallv_with_counts(
          nullptr, send, recv, [](std::int64_t) -> void* { return nullptr; }, datatype::uint8,
          nullptr);  // 1 call, 2 operations (the counts and the data), no counts exchange call
      EXPECT_EQ(c.stats().calls, P > 1 ? 3 : 0) << "P=" << P;
      EXPECT_EQ(c.stats().collectives, P > 1 ? 4 : 0) << "P=" << P;
      EXPECT_EQ(c.stats().count_exchanges, P > 1 ? 1 : 0) << "P=" << P;
      EXPECT_EQ(c.stats().alltoall_calls, 2);
    });
  }
}

TEST(HostCommunicator, AlltoallvWithCountsAllocatorFailureFailsTheGroup) {
  // PE 1's allocator throws: PE 1 gets its own exception back (after PE 0 has stopped reading
  // its send), and PE 0 fails with comm_error at its next collective at the latest.
  auto group = std::make_shared<host_comm_group>(2, std::chrono::seconds(20));
  std::vector<std::exception_ptr> errors(2);
  {
    std::vector<std::jthread> ts;
    for (int p = 0; p < 2; ++p) {
      ts.emplace_back([&, p] {
        host_communicator c(group, p);
        try {
          std::vector<std::int64_t> const counts = {2, 2};
          std::vector<std::int64_t> recv_counts(2);
          std::vector<std::int64_t> const send = {1, 2, 3, 4};
          std::vector<std::int64_t> recv;
          c.alltoallv_with_counts(
              send.data(), counts, recv_counts,
              [&](std::int64_t n) -> void* {
                if (p == 1) throw std::runtime_error("no memory for the ids");
                recv.resize(static_cast<std::size_t>(n));
                return recv.data();
              },
              datatype::int64, nullptr);
          c.barrier();
        } catch (...) {
          errors[static_cast<std::size_t>(p)] = std::current_exception();
        }
      });
    }
  }
  ASSERT_TRUE(errors[0] && errors[1]);
  EXPECT_THROW(std::rethrow_exception(errors[0]), comm_error);
  try {
    std::rethrow_exception(errors[1]);
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "no memory for the ids");
  }
  EXPECT_TRUE(group->aborted());
}

TEST(HostCommunicator, FailedPeerRaisesInsteadOfHanging) {
  auto const t0 = std::chrono::steady_clock::now();
  EXPECT_THROW(run_group(3,
                         [](communicator& c) {
                           if (c.rank() == 1) throw io_error("PE 1 exploded");
                           c.barrier();
                           c.barrier();
                         }),
               std::exception);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(10));
}

TEST(HostCommunicator, MissingPeerTimesOut) {
  auto group = std::make_shared<host_comm_group>(2, std::chrono::milliseconds(200));
  host_communicator c(group, 0);
  EXPECT_THROW(c.barrier(), comm_error);
  EXPECT_TRUE(group->aborted());
}

TEST(HostCommunicator, MismatchedSizesAreAnError) {
  EXPECT_THROW(run_group(2,
                         [](communicator& c) {
                           std::vector<float> v(c.rank() == 0 ? 3 : 4, 1.0f);
                           c.allreduce_sum(std::span<float>(v));
                         }),
               comm_error);
  EXPECT_THROW(host_comm_group(0), logic_error);
}

TEST(HostCommunicator, BroadcastSizeMismatchFailsEveryPeAndNoneCopies) {
  // PE 2 passes 4 bytes where the root (PE 0) and PE 1 pass 8. Every PE must raise, and PE 1
  // must not copy from the root's buffer (the root may already have left with its error).
  std::vector<int> raised(3, 0);
  std::vector<std::uint8_t> pe1(8, 7);
  run_group(3, [&](communicator& c) {
    std::vector<std::uint8_t> root_data(8, 42);
    std::vector<std::uint8_t> small(4, 7);
    std::span<std::byte> data =
        c.rank() == 0   ? std::as_writable_bytes(std::span<std::uint8_t>(root_data))
        : c.rank() == 1 ? std::as_writable_bytes(std::span<std::uint8_t>(pe1))
                        : std::as_writable_bytes(std::span<std::uint8_t>(small));
    try {
      c.broadcast(data, 0);
    } catch (const comm_error& e) {
      raised[static_cast<std::size_t>(c.rank())] = 1;
      EXPECT_NE(std::string(e.what()).find("broadcast size mismatch"), std::string::npos)
          << e.what();
    }
  });
  EXPECT_EQ(raised, (std::vector<int>{1, 1, 1}));
  EXPECT_EQ(pe1, std::vector<std::uint8_t>(8, 7));
}

TEST(HostCommunicator, AlltoallvCountMismatchFailsEveryPe) {
  // PE 0 expects 8 bytes from PE 1, which sends none; PE 1's own expectations hold. Both PEs
  // must end with comm_error, and PE 1 must not read PE 0's buffer after PE 0 has left.
  EXPECT_THROW(run_group(2,
                         [](communicator& c) {
                           std::vector<std::int64_t> send(2, 0), recv(2, 0);
                           std::vector<std::byte> sbuf(16), rbuf(16);
                           if (c.rank() == 0) recv[1] = 8;
                           c.alltoallv(sbuf.data(), send, rbuf.data(), recv);
                           c.barrier();
                         }),
               comm_error);
}

TEST(HostCommunicator, AbortThroughTheInterfaceStopsPeersWithItsReason) {
  auto group = std::make_shared<host_comm_group>(2, std::chrono::seconds(20));
  host_communicator a(group, 0), b(group, 1);
  communicator& iface = a;
  iface.abort("PE 0 gave up");
  try {
    b.barrier();
    FAIL() << "expected comm_error";
  } catch (const comm_error& e) {
    EXPECT_NE(std::string(e.what()).find("PE 0 gave up"), std::string::npos) << e.what();
  }
  EXPECT_EQ(group->reason(), "PE 0 gave up");
  group->abort("second reason");  // the first reason is kept
  EXPECT_EQ(group->reason(), "PE 0 gave up");
}

TEST(HostCommGroup, PublishedSlotsAreVisibleBetweenWaits) {
  // The rendezvous the device communicators build on: publish, wait, read peers, wait.
  int const P = 3;
  auto group = std::make_shared<host_comm_group>(P, std::chrono::seconds(20));
  std::vector<int> seen(P * P, -1);
  {
    std::vector<std::jthread> ts;
    for (int p = 0; p < P; ++p) {
      ts.emplace_back([&, p] {
        int const mine = 100 + p;
        group->publish(p, &mine);
        group->wait(p);
        for (int q = 0; q < P; ++q) seen[p * P + q] = *static_cast<const int*>(group->published(q));
        group->wait(p);  // `mine` stays alive until every peer has read it
      });
    }
  }
  for (int p = 0; p < P; ++p) {
    for (int q = 0; q < P; ++q) EXPECT_EQ(seen[p * P + q], 100 + q);
  }
  EXPECT_EQ(group->timeout(), std::chrono::seconds(20));
}

TEST(HostCommunicator, WaitForALatePeIsWaitNotTransfer) {
  // PE 2 holds back until its three peers have arrived at a collective's first meeting, then
  // sleeps 150 ms before it joins: each peer's wait_seconds grows by at least those 150 ms
  // (its arrival came before the sleep began), while its transfer (seconds - wait_seconds)
  // and its CPU time (cpu_seconds) stay below half of it; the late PE itself waits less than
  // that. Every kind of collective,
  // the large all-reduce with its two meetings included.
  int const P = 4, late = 2;
  double const delay = 0.150;
  auto group = std::make_shared<host_comm_group>(P, std::chrono::seconds(20));
  std::vector<std::string> failures(P);
  std::vector<std::function<void(communicator&)>> const calls = {
      [](communicator& c) { c.barrier(); },
      [](communicator& c) {
        std::vector<std::int64_t> send(P, 1), recv(P);
        c.alltoall(send, recv);
      },
      [](communicator& c) {
        std::vector<std::int64_t> const counts(P, 16);
        std::vector<std::byte> send(16 * P), recv(16 * P);
        c.alltoallv(send.data(), counts, recv.data(), counts);
      },
      [](communicator& c) {
        std::vector<float> send(3 * P, 1.0f);
        std::vector<std::int64_t> const counts(P, 3);
        std::vector<std::int64_t> recv_counts;
        (void)alltoallv<float>(c, send, counts, recv_counts);
      },
      [](communicator& c) {
        std::vector<float> x(8, 1.0f);  // one meeting
        c.allreduce_sum(std::span<float>(x));
      },
      [](communicator& c) {
        std::vector<float> x(100000, 1.0f);  // reduce-scatter + all-gather: two meetings
        c.allreduce_sum(std::span<float>(x));
      },
      [](communicator& c) {
        std::vector<std::byte> b(64);
        c.broadcast(b, 1);
      },
  };
  {
    std::vector<std::jthread> ts;
    for (int p = 0; p < P; ++p) {
      ts.emplace_back([&, p] {
        host_communicator c(group, p);
        try {
          for (std::size_t k = 0; k < calls.size(); ++k) {
            auto const before = c.stats();
            if (p == late) {
              while (group->arrived() < P - 1) std::this_thread::yield();
              std::this_thread::sleep_for(std::chrono::duration<double>(delay));
            }
            calls[k](c);
            double const wait = c.stats().wait_seconds - before.wait_seconds;
            double const wall = c.stats().seconds - before.seconds;
            double const transfer = wall - wait;
            // A waiting PE sleeps at the meeting: its CPU time in the call stays far below the
            // 150 ms it waited, and no PE's CPU time exceeds its wall time in the call.
            double const cpu = c.stats().cpu_seconds - before.cpu_seconds;
            bool const ok = (p == late ? wait < delay / 2 && transfer < delay / 2
                                       : wait >= delay && transfer < delay / 2) &&
                            cpu >= 0 && cpu < delay / 2 && cpu <= wall + 1e-3;
            if (!ok) {
              failures[p] += fmt::format("collective {}: wait {} s, transfer {} s, cpu {} s; ", k,
                                         wait, transfer, cpu);
            }
          }
        } catch (const std::exception& e) {
          failures[p] += e.what();
          group->abort("test body failed");
        }
      });
    }
  }
  for (int p = 0; p < P; ++p) EXPECT_EQ(failures[p], "") << "PE " << p;
}

}  // namespace
}  // namespace coopgnn
