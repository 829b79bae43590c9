// Host-side row parallelism of the host kernels (DESIGN.md section 2: results never depend on
// the thread count).
#pragma once

#include <algorithm>
#include <cstdint>
#include <exception>
#include <thread>
#include <vector>

namespace coopgnn {

/// Runs f(row_begin, row_end) over [0, n) cut into min(threads, n) contiguous ranges, one
/// std::thread each (the caller's thread takes the first); threads < 1 counts as 1, and n <= 0
/// or one range calls f(0, n) on the calling thread. Rethrows the first exception (lowest range)
/// after joining every thread.
template <typename F>
void parallel_rows(std::int64_t n, int threads, F&& f) {
  std::int64_t const t = std::clamp<std::int64_t>(threads, 1, std::max<std::int64_t>(n, 1));
  if (t == 1) {
    f(std::int64_t{0}, n);
    return;
  }
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(t));
  auto run = [&](std::int64_t w) {
    try {
      f(n * w / t, n * (w + 1) / t);
    } catch (...) {
      errors[static_cast<std::size_t>(w)] = std::current_exception();
    }
  };
  {
    std::vector<std::jthread> pool;
    pool.reserve(static_cast<std::size_t>(t - 1));
    for (std::int64_t w = 1; w < t; ++w) pool.emplace_back(run, w);
    run(0);
  }  // jthreads join here
  for (auto& e : errors) {
    if (e) std::rethrow_exception(e);
  }
}

}  // namespace coopgnn
