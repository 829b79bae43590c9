// Checking macros for CUDA runtime, cuBLAS and cuSPARSE calls (docs/design.md section 12, "Errors";
// RAFT's RAFT_CUDA_TRY habit). Include only from .cu files or from .cpp files of a CUDA build: it
// needs the CUDA runtime headers. It deliberately does not include error.hpp: fmt 9's headers do
// not compile under nvcc, so CUDA translation units report errors through the functions below
// (defined in cuda_check.cpp), which throw coopgnn::cuda_error / coopgnn::logic_error.
#pragma once

#include <cuda_runtime_api.h>

#include <string>

namespace coopgnn::detail {

/// Throws coopgnn::cuda_error "<call> failed at <file>:<line>: <cudaErrorName>: <string>" after
/// clearing the runtime's last error (so the next check starts clean).
[[noreturn]] void throw_cuda(cudaError_t status, const char* call, const char* file, int line);

/// Logs the same message to stderr and returns; for destructors, which must not throw.
void log_cuda(cudaError_t status, const char* call, const char* file, int line) noexcept;

/// The runtime's last-error state after a completion query: cudaStreamQuery and cudaEventQuery
/// return cudaErrorNotReady while work runs, and the runtime also records it as the calling
/// thread's last error, so the next cudaGetLastError (every checked kernel launch, CUB) would
/// report "device not ready" for a launch that is fine. Clears the last error when, and only
/// when, it is cudaErrorNotReady (a real error stays for the next check to report). Never throws.
inline void clear_not_ready() noexcept {
  if (cudaPeekAtLastError() == cudaErrorNotReady) (void)cudaGetLastError();
}

/// Interprets the status `status` of a non-blocking completion query (cudaStreamQuery,
/// cudaEventQuery) named `call`: true for cudaSuccess (all work done); false for
/// cudaErrorNotReady (still running), after calling `clear_not_ready_fn()` so that the pending
/// status does not linger as the thread's last error (PyTorch's stream query does the same);
/// any other status throws coopgnn::cuda_error through throw_cuda (an asynchronous fault of
/// earlier work). `clear_not_ready_fn` is injectable for tests; production passes
/// clear_not_ready.
template <class ClearNotReady>
bool query_completed(cudaError_t status, const char* call, const char* file, int line,
                     ClearNotReady&& clear_not_ready_fn) {
  if (status == cudaSuccess) return true;
  if (status == cudaErrorNotReady) {
    clear_not_ready_fn();
    return false;
  }
  throw_cuda(status, call, file, line);
}

/// Throws cuda_error for a failed library call (cuBLAS, cuSPARSE) with its numeric status.
[[noreturn]] void throw_library(const char* library, int status, const char* call,
                                const char* file, int line);

/// Throws coopgnn::logic_error "<message> [<file>:<line>]": input validation in .cu files.
[[noreturn]] void throw_logic_message(const std::string& message, const char* file, int line);

}  // namespace coopgnn::detail

/// In CUDA translation units: throws coopgnn::logic_error with `message` (a std::string
/// expression) when `cond` is false. .cpp files use COOPGNN_EXPECTS with its formatting.
#define COOPGNN_CUDA_EXPECTS(cond, message)                                          \
  do {                                                                               \
    if (!(cond)) [[unlikely]] {                                                      \
      ::coopgnn::detail::throw_logic_message((message), __FILE__, __LINE__);         \
    }                                                                                \
  } while (0)

/// Evaluates a CUDA runtime call; on failure throws coopgnn::cuda_error naming the call, file,
/// line and the CUDA error string.
#define COOPGNN_CUDA_CHECK(call)                                                \
  do {                                                                          \
    cudaError_t const coopgnn_status_ = (call);                                 \
    if (coopgnn_status_ != cudaSuccess) [[unlikely]] {                          \
      ::coopgnn::detail::throw_cuda(coopgnn_status_, #call, __FILE__, __LINE__); \
    }                                                                           \
  } while (0)

/// Non-throwing variant for destructors: logs the failure to stderr.
#define COOPGNN_CUDA_CHECK_NO_THROW(call)                                      \
  do {                                                                         \
    cudaError_t const coopgnn_status_ = (call);                                \
    if (coopgnn_status_ != cudaSuccess) [[unlikely]] {                         \
      ::coopgnn::detail::log_cuda(coopgnn_status_, #call, __FILE__, __LINE__); \
    }                                                                          \
  } while (0)

/// Checks the launch of the kernel just enqueued (cudaGetLastError): launch configuration and
/// argument errors. Asynchronous faults surface at the next synchronising check.
#define COOPGNN_CUDA_CHECK_LAUNCH() COOPGNN_CUDA_CHECK(cudaGetLastError())

/// cuBLAS / cuSPARSE calls: any status other than 0 (…_STATUS_SUCCESS) throws cuda_error.
#define COOPGNN_LIBRARY_CHECK(library, call)                                                 \
  do {                                                                                       \
    int const coopgnn_status_ = static_cast<int>(call);                                      \
    if (coopgnn_status_ != 0) [[unlikely]] {                                                 \
      ::coopgnn::detail::throw_library(library, coopgnn_status_, #call, __FILE__, __LINE__); \
    }                                                                                        \
  } while (0)
#define COOPGNN_CUBLAS_CHECK(call) COOPGNN_LIBRARY_CHECK("cuBLAS", call)
#define COOPGNN_CUSPARSE_CHECK(call) COOPGNN_LIBRARY_CHECK("cuSPARSE", call)

/// A completion query that never leaves cudaErrorNotReady behind: COOPGNN_CUDA_QUERY(
/// cudaStreamQuery(s)) is true when the work is done, false while it runs, and throws
/// coopgnn::cuda_error for any other status. Every poll site uses it (runtime/comm).
#define COOPGNN_CUDA_QUERY(call)                                          \
  ::coopgnn::detail::query_completed((call), #call, __FILE__, __LINE__, \
                                     ::coopgnn::detail::clear_not_ready)
