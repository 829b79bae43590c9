// Internal helpers of the kernel entries (docs/design.md section 2): every public entry takes the
// PE's exec_context and views, checks that each operand lives in the context's memory space,
// then runs the host reference (backend host or emulated) or the CUDA kernel (backend cuda) on
// the context's compute stream. Include from the kernels' .cpp files only.
#pragma once

#include <initializer_list>
#include <type_traits>
#include <utility>

#include "runtime/core/error.hpp"
#include "runtime/core/exec_context.hpp"
#include "runtime/core/memory.hpp"

namespace coopgnn::detail {

/// Checks each named operand's space against the context (see expect_space).
inline void expect_spaces(const exec_context& ctx, const char* fn,
                          std::initializer_list<std::pair<const char*, memory_space>> operands) {
  for (auto const& [name, space] : operands) expect_space(ctx, space, fn, name);
}

/// Throws logic_error "<fn>: <an> is [r, c] but <bn> is [r, c]" unless a and b have one shape.
template <typename T>
void expect_same_shape(const char* fn, tensor_view<const T> a, const char* an,
                       tensor_view<const T> b, const char* bn) {
  COOPGNN_EXPECTS(a.rows == b.rows && a.cols == b.cols, "{}: {} is [{}, {}] but {} is [{}, {}]", fn,
                  an, a.rows, a.cols, bn, b.rows, b.cols);
}

/// The CUDA kernels compute in float32: any other element type on the CUDA backend is an error.
template <class T>
void expect_cuda_type(const char* fn) {
  if constexpr (!std::is_same_v<T, float>) {
    COOPGNN_FAIL("{}: the CUDA backend computes in float32 only (float64 is a host reference)", fn);
  }
}

/// Fails for the CUDA backend in a build without CUDA (a cuda exec_context cannot exist there,
/// so reaching this is a programming error).
[[noreturn]] inline void no_cuda_build(const char* fn) {
  COOPGNN_FAIL("{}: this build has no CUDA backend", fn);
}

/// The CUDA branch of an entry in a build without CUDA: dispatch() fails with no_cuda_build.
struct no_cuda_branch {};

}  // namespace coopgnn::detail

/// Wraps the CUDA callable of detail::dispatch: the callable itself in CUDA builds, a
/// no_cuda_branch in host-only builds, where the `cuda::` functions it calls are not declared.
#ifdef COOPGNN_WITH_CUDA
#define COOPGNN_CUDA_BRANCH(...) __VA_ARGS__
#else
#define COOPGNN_CUDA_BRANCH(...) ::coopgnn::detail::no_cuda_branch {}
#endif

namespace coopgnn::detail {

/// The host/CUDA choice of a kernel entry (after the entry's checks): returns on_host() when
/// ctx runs kernels as host code (backend host or emulated), on_cuda() on the CUDA backend.
/// Both callables return the entry's result type. On the CUDA backend of a build without CUDA
/// (on_cuda is a no_cuda_branch) it throws logic_error "<fn>: this build has no CUDA backend"
/// (unreachable in practice: a cuda exec_context cannot be made there). Pass on_cuda through
/// COOPGNN_CUDA_BRANCH(...). Counts one kernel call on ctx (exec_context::kernel_calls).
template <class Cuda, class Host>
decltype(auto) dispatch(const exec_context& ctx, const char* fn, Cuda&& on_cuda, Host&& on_host) {
  ctx.count_kernel_call();
  if (ctx.runs_on_host()) return std::forward<Host>(on_host)();
  if constexpr (std::is_same_v<std::remove_cvref_t<Cuda>, no_cuda_branch>) {
    no_cuda_build(fn);
  } else {
    return std::forward<Cuda>(on_cuda)();
  }
}

}  // namespace coopgnn::detail
