// parallel_rows on the calling thread's persistent pool: the ranges it cuts, min_rows keeping
// small problems on the caller, nested calls running sequentially, exceptions rethrown (lowest
// range first), the same workers reused across calls, and pools private to each calling thread.
#include "runtime/core/parallel.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <latch>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace coopgnn {
namespace {

std::vector<std::pair<std::int64_t, std::int64_t>> ranges_of(std::int64_t n, int threads,
                                                             std::int64_t min_rows = 1) {
  std::mutex mu;
  std::vector<std::pair<std::int64_t, std::int64_t>> r;
  parallel_rows(
      n, threads,
      [&](std::int64_t b, std::int64_t e) {
        std::lock_guard lock(mu);
        r.emplace_back(b, e);
      },
      min_rows);
  std::sort(r.begin(), r.end());
  return r;
}

TEST(ParallelRows, CutsContiguousRangesCoveringEveryRowOnce) {
  using v = std::vector<std::pair<std::int64_t, std::int64_t>>;
  EXPECT_EQ(ranges_of(10, 3), (v{{0, 3}, {3, 6}, {6, 10}}));  // [n w / t, n (w + 1) / t)
  EXPECT_EQ(ranges_of(2, 5), (v{{0, 1}, {1, 2}}));            // never more ranges than rows
  EXPECT_EQ(ranges_of(0, 4), (v{{0, 0}}));                    // empty: one call on the caller
  EXPECT_EQ(ranges_of(7, 0), (v{{0, 7}}));                    // threads < 1 counts as 1
  EXPECT_EQ(ranges_of(100, 4, 30), (v{{0, 33}, {33, 66}, {66, 100}}));  // >= 30 rows each
  EXPECT_EQ(ranges_of(100, 4, 60), (v{{0, 100}}));                      // too small to split
}

TEST(ParallelRows, RunsRangeZeroOnTheCallerAndReusesItsWorkers) {
  auto const caller = std::this_thread::get_id();
  std::set<std::thread::id> workers;
  for (int call = 0; call < 50; ++call) {
    std::mutex mu;
    std::thread::id first;
    parallel_rows(3, 3, [&](std::int64_t b, std::int64_t) {
      std::lock_guard lock(mu);
      if (b == 0)
        first = std::this_thread::get_id();
      else
        workers.insert(std::this_thread::get_id());
    });
    EXPECT_EQ(first, caller);
  }
  EXPECT_EQ(workers.size(), 2u) << "50 calls of 3 ranges use the same 2 pool threads";
  EXPECT_EQ(workers.count(caller), 0u);
}

TEST(ParallelRows, NestedCallsRunSequentiallyInsideTheRange) {
  std::atomic<int> inner_calls{0};
  std::atomic<bool> inner_split{false};
  parallel_rows(4, 4, [&](std::int64_t, std::int64_t) {
    auto const me = std::this_thread::get_id();
    parallel_rows(8, 4, [&](std::int64_t b, std::int64_t e) {
      ++inner_calls;
      if (b != 0 || e != 8 || std::this_thread::get_id() != me) inner_split = true;
    });
  });
  EXPECT_EQ(inner_calls.load(), 4);
  EXPECT_FALSE(inner_split.load());
}

TEST(ParallelRows, RethrowsTheLowestRangesExceptionAfterAllFinish) {
  std::atomic<int> finished{0};
  try {
    parallel_rows(3, 3, [&](std::int64_t b, std::int64_t) {
      ++finished;
      if (b >= 1) throw std::runtime_error("range " + std::to_string(b));
    });
    FAIL() << "expected an exception";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "range 1");
  }
  EXPECT_EQ(finished.load(), 3);
  // The pool still works after a failed call.
  EXPECT_EQ(ranges_of(4, 2).size(), 2u);
}

TEST(ParallelRows, EachCallingThreadHasItsOwnPool) {
  // Two threads calling at once each get their own workers: no range runs on the other
  // caller's pool, and neither waits for the other.
  // Both callers (and so both pools, which live as long as their caller thread) stay alive until
  // each has finished its calls: thread ids are unique only among threads alive at once, and a
  // caller that ended early could pass its ids on to the other's workers.
  std::mutex mu;
  std::set<std::thread::id> seen[2];
  std::latch both_done(2);
  auto caller = [&](int c) {
    for (int i = 0; i < 20; ++i) {
      parallel_rows(2, 2, [&](std::int64_t, std::int64_t) {
        std::lock_guard lock(mu);
        seen[c].insert(std::this_thread::get_id());
      });
    }
    both_done.arrive_and_wait();
  };
  std::thread a(caller, 0), b(caller, 1);
  a.join();
  b.join();
  EXPECT_EQ(seen[0].size(), 2u);
  EXPECT_EQ(seen[1].size(), 2u);
  for (auto id : seen[0]) EXPECT_EQ(seen[1].count(id), 0u);
}

}  // namespace
}  // namespace coopgnn
