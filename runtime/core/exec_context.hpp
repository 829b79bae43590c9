// Per-PE execution context (DESIGN.md section 1, core): which backend runs kernels, and how many
// host threads a kernel may use. The CUDA backend adds its device, streams, library handles and
// memory pool here; runtime and model code only ever pass the context through.
#pragma once

#include "runtime/core/types.hpp"

namespace coopgnn {

/// Execution resources of one PE. Nothing in it is global; each PE thread owns one.
class exec_context {
 public:
  /// @param b        backend executing kernels (host is always available)
  /// @param pe       PE rank, used for names and logging
  /// @param threads  host threads a kernel may use (>= 1); results never depend on it
  explicit exec_context(backend b = backend::host, int pe = 0, int threads = 1)
      : backend_(b), pe_(pe), threads_(threads < 1 ? 1 : threads) {}

  [[nodiscard]] backend get_backend() const { return backend_; }
  [[nodiscard]] int pe() const { return pe_; }
  [[nodiscard]] int threads() const { return threads_; }

 private:
  backend backend_;
  int pe_;
  int threads_;
};

}  // namespace coopgnn
