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

/// CPU time consumed by the calling thread (seconds, CLOCK_THREAD_CPUTIME_ID). Unlike wall time
/// it does not grow while the thread waits or is descheduled, so it measures a PE's own compute
/// when several PE threads share fewer cores.
inline double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

}  // namespace coopgnn
