// Invariants of coopgnn's own code (docs/design.md section 12, "Errors"): a failed
// COOPGNN_ASSERT is a bug whatever the input, so its message keeps the check's source location
// for the report. Bad input is checked with COOPGNN_EXPECTS (runtime/core/error.hpp) instead.
#pragma once

#include <string>

#include "runtime/core/error.hpp"

namespace coopgnn {

/// A broken invariant of coopgnn's own code (COOPGNN_ASSERT): a bug, not bad input. what() is
/// "MESSAGE [file.cpp:LINE, failed: COND]".
class internal_error : public error {
 public:
  using error::error;
};

namespace detail {
/// Throws internal_error("MSG [FILE:LINE, failed: COND]") (FILE without its folders).
[[noreturn]] void throw_internal(const char* cond, const char* file, int line,
                                 const std::string& msg);
}  // namespace detail

}  // namespace coopgnn

/// Throws coopgnn::internal_error with the formatted message and the location when `cond` is
/// false. For invariants only; a check of input uses COOPGNN_EXPECTS.
#define COOPGNN_ASSERT(cond, ...)                                                               \
  do {                                                                                          \
    if (!(cond)) [[unlikely]] {                                                                 \
      ::coopgnn::detail::throw_internal(#cond, __FILE__, __LINE__, ::fmt::format(__VA_ARGS__)); \
    }                                                                                           \
  } while (0)
