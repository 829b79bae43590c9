// Host-side row parallelism of the host kernels (docs/design.md section 2: results never depend on
// the thread count).
//
// Each calling thread (a PE thread, the main thread) owns one persistent pool of worker threads,
// created on its first parallel call and grown to the largest thread count it has asked for; the
// workers sleep on a condition variable between calls and are joined when the calling thread
// exits. A call costs a wake-up (a few microseconds), not a thread creation. Pools are never
// shared between calling threads, so P PE threads with a budget of b threads each run at most
// P x b threads, whatever the kernels do. A call made from inside a parallel region (a worker, or
// the caller while its region runs) runs sequentially on that thread: no nesting, no deadlock.
#pragma once

#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace coopgnn {
namespace detail {

/// The persistent workers of one calling thread (see the file comment). Not for direct use:
/// parallel_rows is the interface.
class row_pool {
 public:
  row_pool() = default;
  row_pool(const row_pool&) = delete;
  row_pool& operator=(const row_pool&) = delete;
  ~row_pool() {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    wake_.notify_all();
    for (auto& w : workers_) w.join();
  }

  /// Runs job(w) for w in [1, t) on workers and job(0) on the calling thread; returns when all
  /// have finished. job must not throw (parallel_rows wraps it).
  template <typename Job>
  void run(std::int64_t t, Job& job) {
    grow(static_cast<std::size_t>(t - 1));
    {
      std::lock_guard lock(mu_);
      job_ = &job;
      call_ = [](void* j, std::int64_t w) { (*static_cast<Job*>(j))(w); };
      tasks_ = t - 1;
      pending_ = t - 1;
      ++generation_;
    }
    wake_.notify_all();
    job(0);
    std::unique_lock lock(mu_);
    done_.wait(lock, [&] { return pending_ == 0; });
    job_ = nullptr;
  }

 private:
  void grow(std::size_t n) {
    while (workers_.size() < n) {
      std::int64_t const id = static_cast<std::int64_t>(workers_.size()) + 1;
      workers_.emplace_back([this, id] { loop(id); });
    }
  }

  void loop(std::int64_t id);

  std::mutex mu_;
  std::condition_variable wake_;
  std::condition_variable done_;
  std::vector<std::thread> workers_;
  void* job_ = nullptr;
  void (*call_)(void*, std::int64_t) = nullptr;
  std::int64_t tasks_ = 0;    // workers 1..tasks_ take part in the current generation
  std::int64_t pending_ = 0;  // of those, how many have not finished
  std::uint64_t generation_ = 0;
  bool stop_ = false;
};

/// True on a thread that is inside a parallel_rows region (a worker, or a caller running its
/// share): nested calls then run sequentially.
inline thread_local bool in_parallel_region = false;

inline void row_pool::loop(std::int64_t id) {
  in_parallel_region = true;
  std::uint64_t seen = 0;
  std::unique_lock lock(mu_);
  for (;;) {
    wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
    if (stop_) return;
    seen = generation_;
    if (id > tasks_) continue;
    void* const job = job_;
    auto const call = call_;
    lock.unlock();
    call(job, id);
    lock.lock();
    if (--pending_ == 0) done_.notify_one();
  }
}

/// The calling thread's pool (created on first use, joined at thread exit).
inline row_pool& this_thread_pool() {
  thread_local row_pool pool;
  return pool;
}

}  // namespace detail

/// Runs f(row_begin, row_end) over [0, n) cut into t contiguous ranges, range w being
/// [n * w / t, n * (w + 1) / t), with t = min(threads, n / min_rows) clamped to >= 1: at least
/// min_rows rows per range, so small problems stay on the calling thread (callers pass the rows
/// that make about 10-50 microseconds of work). Range 0 runs on the calling thread, the others on
/// its persistent pool (see the file comment); threads < 1 and min_rows < 1 count as 1; n <= 0
/// or t == 1 calls f(0, n) on the calling thread, as does any call nested inside another
/// parallel_rows region. f must give the same result for any split (the kernels' contract:
/// rows independent, fixed order within a row). Rethrows the first exception (lowest range)
/// after every range has finished.
template <typename F>
void parallel_rows(std::int64_t n, int threads, F&& f, std::int64_t min_rows = 1) {
  std::int64_t const by_size = std::max<std::int64_t>(n, 1) / std::max<std::int64_t>(min_rows, 1);
  std::int64_t const t = std::clamp<std::int64_t>(std::min<std::int64_t>(threads, by_size), 1,
                                                  std::max<std::int64_t>(n, 1));
  if (t == 1 || detail::in_parallel_region) {
    f(std::int64_t{0}, n);
    return;
  }
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(t));
  auto job = [&](std::int64_t w) {
    try {
      f(n * w / t, n * (w + 1) / t);
    } catch (...) {
      errors[static_cast<std::size_t>(w)] = std::current_exception();
    }
  };
  detail::in_parallel_region = true;
  detail::this_thread_pool().run(t, job);
  detail::in_parallel_region = false;
  for (auto& e : errors) {
    if (e) std::rethrow_exception(e);
  }
}

/// The min_rows argument of parallel_rows for rows that cost about `work_per_row` scalar
/// operations each: enough rows for about 32768 operations per range (a few tens of
/// microseconds), so that waking a worker pays for itself.
inline std::int64_t rows_for_work(std::int64_t work_per_row) {
  constexpr std::int64_t min_work = 32768;
  return std::max<std::int64_t>(1, min_work / std::max<std::int64_t>(work_per_row, 1));
}

}  // namespace coopgnn
