// A capture window of training steps for a CUDA profiler (docs/profiling.md; `train
// --profile-steps A:B`): cudaProfilerStart / cudaProfilerStop around global steps A..B, so that
// `nsys profile --capture-range=cudaProfilerApi` records only those steps. Kept apart from
// nvtx.hpp, which every kernel includes.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>

namespace coopgnn::nvtx {

/// cudaProfilerStart() (start true) or cudaProfilerStop() (start false): the calls that
/// `nsys profile --capture-range=cudaProfilerApi` brackets a capture with. Process-wide; call
/// between steps, with no kernel in flight.
/// @throws cuda_error naming the call when it fails; logic_error in a build without CUDA.
void cuda_profiler(bool start);

/// "A:B" of `train --profile-steps` as the inclusive global step window [A, B].
/// @throws logic_error naming `option` and `text` unless text is two decimal integers
///         0 <= A <= B joined by ':'.
std::pair<std::int64_t, std::int64_t> parse_profile_steps(const std::string& text,
                                                          const std::string& option);

/// A window of global training steps [first, last]: the trainer calls before_step(s) just
/// before global step s starts and after_step(s) just after it ended, each at a point where
/// every PE is between steps. The hook is called with true before step `first` and with false
/// after step `last`, at no other step. A default-constructed window, or one with first < 0,
/// never calls it. A run resumed past `first` never starts the capture.
class profile_window {
 public:
  /// The action at a window edge: true = start capturing, false = stop.
  using hook = std::function<void(bool start)>;
  profile_window() = default;
  /// @param h  the action; empty = cuda_profiler when `cuda` is true, nothing otherwise (the
  ///           host and emulated backends have nothing for a CUDA profiler to capture)
  /// @throws logic_error when first >= 0 and last < first.
  profile_window(std::int64_t first, std::int64_t last, hook h, bool cuda);
  /// Called before global step `step` (0-based, counted over epochs): calls the hook with true
  /// when step == first. Throws what the hook throws (cuda_error from cudaProfilerStart).
  void before_step(std::int64_t step) const;
  /// Called after global step `step`: calls the hook with false when step == last. Throws what
  /// the hook throws (cuda_error from cudaProfilerStop).
  void after_step(std::int64_t step) const;

 private:
  std::int64_t first_ = -1;
  std::int64_t last_ = -1;
  hook hook_;
};

}  // namespace coopgnn::nvtx
