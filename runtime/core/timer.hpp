// Wall-clock timing of pipeline stages (seconds, steady clock).
#pragma once

#include <chrono>
#include <ctime>

namespace coopgnn {

/// Adds the elapsed wall time (seconds) of its scope to `*acc` on destruction.
class scoped_timer {
 public:
  explicit scoped_timer(double* acc) : acc_(acc), t0_(std::chrono::steady_clock::now()) {}
  ~scoped_timer() {
    if (acc_ != nullptr) *acc_ += seconds();
  }
  scoped_timer(const scoped_timer&) = delete;
  scoped_timer& operator=(const scoped_timer&) = delete;
  [[nodiscard]] double seconds() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
  }

 private:
  double* acc_;
  std::chrono::steady_clock::time_point t0_;
};

inline double thread_cpu_seconds();

/// Adds the elapsed wall time of its scope to `*wall` and the calling thread's CPU time in it
/// (thread_cpu_seconds) to `*cpu`, seconds, on destruction. Where the two differ, the thread
/// was blocked (waiting on a futex, the device) or runnable without a core.
class scoped_wall_cpu_timer {
 public:
  scoped_wall_cpu_timer(double* wall, double* cpu)
      : wall_(wall), cpu_(cpu), cpu0_(thread_cpu_seconds()) {}
  ~scoped_wall_cpu_timer() {
    *wall_ += t_.seconds();
    *cpu_ += thread_cpu_seconds() - cpu0_;
  }
  scoped_wall_cpu_timer(const scoped_wall_cpu_timer&) = delete;
  scoped_wall_cpu_timer& operator=(const scoped_wall_cpu_timer&) = delete;

 private:
  double* wall_;
  double* cpu_;
  double cpu0_;
  scoped_timer t_{nullptr};
};

/// CPU time consumed by the calling thread (seconds, CLOCK_THREAD_CPUTIME_ID). Unlike wall time
/// it does not grow while the thread waits or is descheduled, so it measures a PE's own compute
/// when several PE threads share fewer cores.
inline double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

}  // namespace coopgnn
