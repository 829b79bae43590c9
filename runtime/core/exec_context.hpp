// Per-PE execution context (docs/design.md sections 1 and 2): which backend runs kernels,
// where the PE's memory lives, how many host threads a host kernel may use, and, on the CUDA
// backend, the PE's cuda_context (device, streams, library handles, memory pool). Runtime and
// model code only ever pass the context through; kernel entries dispatch on it.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "runtime/core/types.hpp"

namespace coopgnn {

namespace cuda {
class cuda_context;
}  // namespace cuda

/// "host", "cuda" or "emulated" (the --backend names).
std::string to_string(backend b);

/// Execution resources of one PE. Nothing in it is global; each PE thread owns one. Cheap to
/// copy (it refers to the cuda_context, which must outlive every copy). A context and its
/// copies share one tally of the kernel entries run on them (kernel_calls).
class exec_context {
 public:
  /// A host or emulated-device context.
  /// @param b        backend::host or backend::emulated (backend::cuda needs a cuda_context:
  ///                 use the other constructor; passing it here throws logic_error)
  /// @param pe       PE rank, used for names and logging
  /// @param threads  host threads a host kernel may use (< 1 counts as 1); results never depend
  ///                 on it
  explicit exec_context(backend b = backend::host, int pe = 0, int threads = 1);

  /// A CUDA context: kernels run on `cuda`'s device and compute stream, memory comes from its
  /// pool. `cuda` must outlive the exec_context and its copies.
  explicit exec_context(const cuda::cuda_context& cuda, int threads = 1);

  [[nodiscard]] backend get_backend() const { return backend_; }
  [[nodiscard]] int pe() const { return pe_; }
  [[nodiscard]] int threads() const { return threads_; }
  /// host for backend::host, device for backend::cuda and backend::emulated.
  [[nodiscard]] memory_space space() const {
    return backend_ == backend::host ? memory_space::host : memory_space::device;
  }
  /// True when kernels run as host code (backend::host and backend::emulated).
  [[nodiscard]] bool runs_on_host() const { return backend_ != backend::cuda; }
  /// The PE's CUDA resources; nullptr unless get_backend() == backend::cuda.
  [[nodiscard]] const cuda::cuda_context* cuda() const { return cuda_; }
  /// The same context with another host thread count (e.g. evaluation uses every core).
  [[nodiscard]] exec_context with_threads(int threads) const {
    exec_context c = *this;
    c.threads_ = threads < 1 ? 1 : threads;
    return c;
  }

  /// Kernel entry calls run on this context and its copies since it was made: one per call of
  /// a kernel entry (detail::dispatch in kernels/dispatch.hpp), whichever backend runs it (on
  /// CUDA an entry is one or a few launches: a multi-pass sort counts one). Thread-safe.
  [[nodiscard]] std::int64_t kernel_calls() const {
    return kernel_calls_->load(std::memory_order_relaxed);
  }
  /// Adds one to kernel_calls() (kernels/dispatch.hpp), or to the tally of the
  /// kernel_call_tally_scope alive on the calling thread, if any. Thread-safe.
  void count_kernel_call() const {
    (redirect_ != nullptr ? redirect_ : kernel_calls_.get())
        ->fetch_add(1, std::memory_order_relaxed);
  }
  /// The same context with a tally of its own, starting at 0 (what a kernel_call_tally_scope
  /// counts into).
  [[nodiscard]] exec_context with_own_tally() const {
    exec_context c = *this;
    c.kernel_calls_ = std::make_shared<std::atomic<std::int64_t>>(0);
    return c;
  }

 private:
  backend backend_;
  int pe_;
  int threads_;
  const cuda::cuda_context* cuda_ = nullptr;
  std::shared_ptr<std::atomic<std::int64_t>> kernel_calls_ =
      std::make_shared<std::atomic<std::int64_t>>(0);
  // The tally of the kernel_call_tally_scope alive on this thread (nullptr: none).
  static inline thread_local std::atomic<std::int64_t>* redirect_ = nullptr;
  friend class kernel_call_tally_scope;
};

/// While alive, every kernel call made on the constructing thread, on whatever context, is
/// counted in `target`'s tally instead of its own context's. A PE's prefetch thread prepares a
/// later batch on the PE's contexts while the PE thread computes: its calls belong to the batch
/// it prepares, not to the step that is running (docs/design.md section 6.7). Not nestable;
/// `target` must outlive the scope. Destroy on the constructing thread.
class kernel_call_tally_scope {
 public:
  explicit kernel_call_tally_scope(const exec_context& target)
      : previous_(exec_context::redirect_) {
    exec_context::redirect_ = target.kernel_calls_.get();
  }
  ~kernel_call_tally_scope() { exec_context::redirect_ = previous_; }
  kernel_call_tally_scope(const kernel_call_tally_scope&) = delete;
  kernel_call_tally_scope& operator=(const kernel_call_tally_scope&) = delete;

 private:
  std::atomic<std::int64_t>* previous_;
};

}  // namespace coopgnn
