// Wall-clock timing of pipeline stages (seconds, steady clock).
#pragma once

#include <chrono>

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

}  // namespace coopgnn
