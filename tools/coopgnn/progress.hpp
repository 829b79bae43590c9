// Progress of long loops (an epoch's batches) on stderr, for people and for logs alike.
#pragma once

#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>

namespace coopgnn::cli {

/// Seconds between progress lines when stderr is not a terminal (train, compare, tma).
inline constexpr double kProgressLineSeconds = 10.0;

/// "LABEL DONE/TOTAL (P%) RATE/s ETA T": one progress line without a newline, e.g.
/// "epoch 3/10 120/500 (24%) 12.3/s ETA 31 s". The rate is done / elapsed_s (items per second,
/// omitted with the ETA while elapsed_s <= 0 or done == 0); the ETA is (total - done) / rate in
/// seconds, as "<1 s", "31 s", "4 min 05 s" or "2 h 03 min". total <= 0 prints "LABEL DONE".
/// Does not throw beyond std::bad_alloc.
std::string format_progress(const std::string& label, std::int64_t done, std::int64_t total,
                            double elapsed_s);

/// Reports a loop's progress on `out` (stderr in the CLI):
/// - on a terminal, a bar redrawn in place at every update, with the rate and the ETA, and erased
///   when the loop completes;
/// - otherwise (stderr redirected to a log or a pipe), one format_progress line, newline
///   terminated, when at least `interval_s` seconds passed since the loop started or since the
///   previous line, so that a long epoch shows in a log while it runs and a short one prints
///   nothing (its summary line follows anyway).
/// The clock is injectable (seconds, monotonic) for tests; the default is steady_clock.
class progress_reporter {
 public:
  /// @param enabled  false: update() does nothing (--no-progress, --quiet)
  /// @param terminal whether `out` is a terminal (the CLI passes isatty(fileno(stderr)))
  /// @param interval_s seconds between lines when not a terminal (> 0)
  progress_reporter(std::string label, bool enabled, bool terminal, double interval_s,
                    std::FILE* out, std::function<double()> now = {});

  /// Records that `done` of `total` items are done (done <= total; called after each item).
  void update(std::int64_t done, std::int64_t total);

 private:
  std::string label_;
  bool enabled_;
  bool terminal_;
  double interval_s_;
  std::FILE* out_;
  std::function<double()> now_;
  double start_ = 0;
  double last_line_ = 0;
};

}  // namespace coopgnn::cli
