// Checking helpers for the .cu files of the kernels layer: the checks of runtime/core/cuda_check.hpp
// (every CUDA, cuBLAS and cuSPARSE call and every launch throws with the call text, file and line)
// plus COOPGNN_CU_EXPECTS, argument validation with a message built from several parts.
// fmt does not compile under nvcc 13 (its consteval format checks), so messages are concatenated
// with detail::cat. Internal to the kernels layer.
#pragma once

#include <cublas_v2.h>
#include <cusparse.h>

#include <sstream>
#include <string>

#include "runtime/core/cuda_check.hpp"

namespace coopgnn::detail {

/// The arguments streamed one after the other into a string.
template <typename... Args>
std::string cat(const Args&... args) {
  std::ostringstream os;
  (os << ... << args);
  return os.str();
}

}  // namespace coopgnn::detail

/// Throws coopgnn::logic_error with the concatenated message when `cond` is false.
#define COOPGNN_CU_EXPECTS(cond, ...) \
  COOPGNN_CUDA_EXPECTS(cond, ::coopgnn::detail::cat(__VA_ARGS__))
