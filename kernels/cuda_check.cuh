// Checking macros for the .cu files of the kernels layer (STYLE.md "Errors": every CUDA, cuBLAS
// and cuSPARSE call and every launch is checked and throws with the call text, file and line;
// public entry points validate their arguments). Internal to the kernels layer.
//
// fmt does not compile under nvcc here (its consteval format checks), so this header is free of
// fmt and runtime/core/error.hpp: messages are concatenated with detail::cat, and the throwing
// functions live in kernels/cuda_check.cpp, compiled by the C++ compiler.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cusparse.h>

#include <sstream>
#include <string>

namespace coopgnn::detail {

/// Throws coopgnn::cuda_error "<library> error <name> (<what>) in <call> [file:line]".
[[noreturn]] void throw_cuda_call(const char* library, const char* name, const char* what,
                                  const char* call, const char* file, int line);

/// Throws coopgnn::logic_error with the message, like COOPGNN_EXPECTS.
[[noreturn]] void throw_cuda_logic(const std::string& msg, const char* cond, const char* file,
                                   int line);

/// The arguments streamed one after the other into a string.
template <typename... Args>
std::string cat(const Args&... args) {
  std::ostringstream os;
  (os << ... << args);
  return os.str();
}

}  // namespace coopgnn::detail

/// Throws coopgnn::logic_error with the concatenated message when `cond` is false.
#define COOPGNN_CU_EXPECTS(cond, ...)                                                           \
  do {                                                                                          \
    if (!(cond)) [[unlikely]] {                                                                 \
      ::coopgnn::detail::throw_cuda_logic(::coopgnn::detail::cat(__VA_ARGS__), #cond, __FILE__, \
                                          __LINE__);                                            \
    }                                                                                           \
  } while (0)

/// Throws coopgnn::cuda_error when a CUDA runtime call does not return cudaSuccess.
#define COOPGNN_CUDA_TRY(call)                                                             \
  do {                                                                                     \
    cudaError_t const coopgnn_st_ = (call);                                                \
    if (coopgnn_st_ != cudaSuccess) [[unlikely]] {                                         \
      ::coopgnn::detail::throw_cuda_call("CUDA", cudaGetErrorName(coopgnn_st_),            \
                                         cudaGetErrorString(coopgnn_st_), #call, __FILE__, \
                                         __LINE__);                                        \
    }                                                                                      \
  } while (0)

/// Checks the launch just made (cudaGetLastError); `kernel` names it in the message.
#define COOPGNN_CUDA_CHECK_LAUNCH(kernel)                                                       \
  do {                                                                                          \
    cudaError_t const coopgnn_st_ = cudaGetLastError();                                         \
    if (coopgnn_st_ != cudaSuccess) [[unlikely]] {                                              \
      ::coopgnn::detail::throw_cuda_call("CUDA", cudaGetErrorName(coopgnn_st_),                 \
                                         cudaGetErrorString(coopgnn_st_), "launch of " #kernel, \
                                         __FILE__, __LINE__);                                   \
    }                                                                                           \
  } while (0)

/// Throws coopgnn::cuda_error when a cuBLAS call does not return CUBLAS_STATUS_SUCCESS.
#define COOPGNN_CUBLAS_TRY(call)                                                              \
  do {                                                                                        \
    cublasStatus_t const coopgnn_st_ = (call);                                                \
    if (coopgnn_st_ != CUBLAS_STATUS_SUCCESS) [[unlikely]] {                                  \
      ::coopgnn::detail::throw_cuda_call("cuBLAS", cublasGetStatusName(coopgnn_st_),          \
                                         cublasGetStatusString(coopgnn_st_), #call, __FILE__, \
                                         __LINE__);                                           \
    }                                                                                         \
  } while (0)

/// Throws coopgnn::cuda_error when a cuSPARSE call does not return CUSPARSE_STATUS_SUCCESS.
#define COOPGNN_CUSPARSE_TRY(call)                                                             \
  do {                                                                                         \
    cusparseStatus_t const coopgnn_st_ = (call);                                               \
    if (coopgnn_st_ != CUSPARSE_STATUS_SUCCESS) [[unlikely]] {                                 \
      ::coopgnn::detail::throw_cuda_call("cuSPARSE", cusparseGetErrorName(coopgnn_st_),        \
                                         cusparseGetErrorString(coopgnn_st_), #call, __FILE__, \
                                         __LINE__);                                            \
    }                                                                                          \
  } while (0)
