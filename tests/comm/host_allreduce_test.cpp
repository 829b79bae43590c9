// The host communicator's all-reduce against a rank-order sum the test computes itself: bitwise
// equal on every PE for P = 1, 2, 3, 5, 7, 64, 129, 256 and 300 and counts below P, not
// divisible by P, odd and empty, on both sides of the size where the sum moves from one thread
// to every PE (small sums are made by one PE at the meeting, large ones are a reduce-scatter +
// all-gather); in place and out of place through the type-erased call; float, double and int64;
// and the stream and datatype checks of the type-erased core.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "runtime/comm/host_communicator.hpp"
#include "runtime/core/error.hpp"
#include "tests/common/pes.hpp"

namespace coopgnn {
namespace {

/// PE p's value at element i: magnitudes from 1e-3 to 1e7 and alternating signs, so that the
/// float sum depends on the order of its terms (checked below).
template <class T>
T value(int p, std::size_t i) {
  if constexpr (std::is_integral_v<T>) {
    return static_cast<T>((p + 1) * 1000003LL -
                          static_cast<std::int64_t>(i) * (p % 3 == 0 ? 7 : -5));
  } else {
    double const mag = std::pow(10.0, static_cast<double>((p * 7 + static_cast<int>(i)) % 11) - 3);
    double const sign = (p + static_cast<int>(i)) % 2 == 0 ? 1.0 : -1.0;
    return static_cast<T>(sign * mag *
                          (1.0 + 0.013 * static_cast<double>(p) + 1e-4 * static_cast<double>(i)));
  }
}

/// The rank-order sum ((T{} + x_0) + x_1) + ... + x_{P-1}, element by element.
template <class T>
std::vector<T> rank_order_sum(int P, std::size_t n) {
  std::vector<T> sum(n, T{});
  for (int p = 0; p < P; ++p) {
    for (std::size_t i = 0; i < n; ++i) sum[i] += value<T>(p, i);
  }
  return sum;
}

template <class T>
bool bitwise_equal(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() &&
         (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0);
}

struct usecase {
  int pes;
  std::size_t count;
};

std::vector<usecase> usecases() {
  std::vector<usecase> out;
  for (int P : {1, 2, 3, 5, 7, 64, 129, 256, 300}) {
    // 1001 and 5003 put P x count on both sides of 32768 for most P.
    for (std::size_t n : {std::size_t{0}, std::size_t{1}, static_cast<std::size_t>(P) - 1,
                          static_cast<std::size_t>(P) + 1, 3 * static_cast<std::size_t>(P) + 2,
                          std::size_t{1001}, std::size_t{5003}}) {
      out.push_back({P, n});
    }
  }
  return out;
}

/// Runs the all-reduce of value<T> on P PEs (in place or through the type-erased call out of
/// place) and returns every PE's result.
template <class T>
std::vector<std::vector<T>> allreduce_on_pes(int P, std::size_t n, bool in_place) {
  auto group = std::make_shared<host_comm_group>(P, std::chrono::seconds(60));
  std::vector<std::vector<T>> results(static_cast<std::size_t>(P));
  test::on_pes(P, [&](int p) {
    host_communicator c(group, p);
    try {
      std::vector<T> mine(n);
      for (std::size_t i = 0; i < n; ++i) mine[i] = value<T>(p, i);
      if (in_place) {
        c.allreduce_sum(std::span<T>(mine));
        results[static_cast<std::size_t>(p)] = mine;
      } else {
        std::vector<T> out(n, T{-1});
        c.allreduce_sum(mine.data(), out.data(), n, datatype_of<T>(), nullptr);
        std::vector<T> again(n);
        for (std::size_t i = 0; i < n; ++i) again[i] = value<T>(p, i);
        EXPECT_TRUE(bitwise_equal(mine, again)) << "the send buffer was modified";
        results[static_cast<std::size_t>(p)] = out;
      }
    } catch (...) {
      group->abort("test body failed");
      throw;
    }
  });
  return results;
}

template <class T>
void expect_rank_order(bool in_place) {
  for (auto const& u : usecases()) {
    SCOPED_TRACE("P=" + std::to_string(u.pes) + " count=" + std::to_string(u.count) +
                 (in_place ? " in place" : " out of place"));
    auto const expected = rank_order_sum<T>(u.pes, u.count);
    auto const results = allreduce_on_pes<T>(u.pes, u.count, in_place);
    for (int p = 0; p < u.pes; ++p) {
      EXPECT_TRUE(bitwise_equal(results[static_cast<std::size_t>(p)], expected)) << "PE " << p;
    }
  }
}

TEST(HostAllreduce, FloatIsBitwiseTheRankOrderSum) { expect_rank_order<float>(true); }
TEST(HostAllreduce, DoubleIsBitwiseTheRankOrderSum) { expect_rank_order<double>(true); }
TEST(HostAllreduce, Int64IsTheExactSum) { expect_rank_order<std::int64_t>(true); }
TEST(HostAllreduce, OutOfPlaceLeavesTheInputAndMatches) {
  expect_rank_order<float>(false);
  expect_rank_order<std::int64_t>(false);
}

TEST(HostAllreduce, TheTestDataIsOrderSensitive) {
  // Otherwise the bitwise comparisons above could not tell a rank-order sum from another order.
  int const P = 7;
  std::size_t const n = 1001;
  auto const forward = rank_order_sum<float>(P, n);
  std::vector<float> backward(n, 0.0f);
  for (int p = P - 1; p >= 0; --p) {
    for (std::size_t i = 0; i < n; ++i) backward[i] += value<float>(p, i);
  }
  EXPECT_FALSE(bitwise_equal(forward, backward));
  std::size_t nonzero = 0;
  for (float x : forward) nonzero += x != 0.0f ? 1 : 0;
  EXPECT_GT(nonzero, n / 2);
}

TEST(HostAllreduce, CountsTheContributedBytesOnce) {
  auto group = std::make_shared<host_comm_group>(3, std::chrono::seconds(20));
  test::on_pes(3, [&](int p) {
    host_communicator c(group, p);
    std::vector<double> v(5, 1.0);
    c.allreduce_sum(std::span<double>(v));
    EXPECT_EQ(v, std::vector<double>(5, 3.0));
    EXPECT_EQ(c.stats().allreduce_bytes, 40);
    EXPECT_EQ(c.stats().collectives, 1);
  });
}

TEST(HostCommunicatorCore, RejectsAStreamAndUnsummableBytes) {
  auto group = std::make_shared<host_comm_group>(1, std::chrono::seconds(20));
  host_communicator c(group, 0);
  std::vector<float> v(3, 1.0f);
  auto* const not_null = reinterpret_cast<cuda::stream_t>(std::uintptr_t{0x10});
  try {
    c.allreduce_sum(std::span<float>(v), not_null);
    FAIL() << "expected logic_error";
  } catch (const logic_error& e) {
    EXPECT_NE(std::string(e.what()).find("takes no stream"), std::string::npos) << e.what();
  }
  std::vector<std::byte> b(4);
  try {
    c.allreduce_sum(b.data(), b.data(), b.size(), datatype::uint8, nullptr);
    FAIL() << "expected logic_error";
  } catch (const logic_error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot be summed"), std::string::npos) << e.what();
  }
}

TEST(HostCommunicatorCore, TypedAlltoallvAndBroadcastCarryTheirDatatype) {
  // The type-erased calls count in elements of their datatype: 2 doubles to every peer.
  int const P = 3;
  auto group = std::make_shared<host_comm_group>(P, std::chrono::seconds(20));
  test::on_pes(P, [&](int p) {
    host_communicator c(group, p);
    std::vector<double> send(2 * P), recv(2 * P, -1.0);
    for (int q = 0; q < P; ++q) {
      send[2 * q] = 100.0 * p + q;
      send[2 * q + 1] = -(100.0 * p + q);
    }
    std::vector<std::int64_t> const counts(P, 2);
    c.alltoallv(send.data(), counts, recv.data(), counts, datatype::float64, nullptr);
    for (int q = 0; q < P; ++q) {
      EXPECT_EQ(recv[2 * q], 100.0 * q + p);
      EXPECT_EQ(recv[2 * q + 1], -(100.0 * q + p));
    }
    EXPECT_EQ(c.stats().alltoall_bytes_sent, 2 * 8 * (P - 1));
    std::vector<std::int64_t> root{7, 8, 9}, got(3, 0);
    c.broadcast(root.data(), got.data(), 3, datatype::int64, 1, nullptr);
    EXPECT_EQ(got, (std::vector<std::int64_t>{7, 8, 9}));
  });
}

}  // namespace
}  // namespace coopgnn
