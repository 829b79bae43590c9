// Errors and checks (docs/design.md section 1, core; section 12, "Errors").
//
// Every public entry point validates its inputs with COOPGNN_EXPECTS and throws a typed exception
// whose message names the offending argument, file or value. Nothing here aborts the process.
//
// A failed COOPGNN_EXPECTS or COOPGNN_FAIL is bad input (an option, a file, an argument of a
// public function): the message is the whole story, and what() holds it alone, so that a user
// never reads "[file.cpp:123, failed: cond]". The check's location goes to the debug log when it
// throws (COOPGNN_LOG_LEVEL=debug). An invariant of coopgnn's own code, whose failure is a bug
// whatever the input, is checked with COOPGNN_ASSERT (runtime/core/assert.hpp): its
// internal_error keeps the location in the message, for the bug report.
#pragma once

#include <fmt/format.h>

#include <stdexcept>
#include <string>

namespace coopgnn {

/// Base of every exception coopgnn throws.
class error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A violated precondition of a public function (bad argument, shape mismatch).
class logic_error : public error {
 public:
  using error::error;
};

/// Malformed or inconsistent input data: the message names the file and the problem.
class io_error : public error {
 public:
  using error::error;
};

/// A failed collective: a peer PE raised an error or the wait timed out.
class comm_error : public error {
 public:
  using error::error;
};

/// A CUDA runtime or library call failed.
class cuda_error : public error {
 public:
  using error::error;
};

namespace detail {
/// Throws logic_error(msg); first logs "check failed at FILE:LINE: COND" at level debug (FILE
/// without its folders; no ": COND" when cond is nullptr).
[[noreturn]] void throw_logic(const char* cond, const char* file, int line, const std::string& msg);
}  // namespace detail

}  // namespace coopgnn

/// Throws coopgnn::logic_error with the formatted message when `cond` is false.
#define COOPGNN_EXPECTS(cond, ...)                                                           \
  do {                                                                                       \
    if (!(cond)) [[unlikely]] {                                                              \
      ::coopgnn::detail::throw_logic(#cond, __FILE__, __LINE__, ::fmt::format(__VA_ARGS__)); \
    }                                                                                        \
  } while (0)

/// Throws coopgnn::logic_error unconditionally.
#define COOPGNN_FAIL(...) \
  ::coopgnn::detail::throw_logic(nullptr, __FILE__, __LINE__, ::fmt::format(__VA_ARGS__))

/// Throws coopgnn::io_error with the formatted message.
#define COOPGNN_IO_FAIL(...) throw ::coopgnn::io_error(::fmt::format(__VA_ARGS__))
