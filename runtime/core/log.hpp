// Diagnostics of the runtime (docs/design.md section 1, core): one line per message on stderr,
// "coopgnn [<prefix>]: <level>: <message>" (without a prefix "coopgnn: error: ...", the form of
// the command line's own errors), filtered by a level. Everything that is not the
// program's result (tables and JSON stay on stdout) goes through here.
//
//   log::warn("cusparseDestroy failed: {}", why);   // fmt-style formatting
//   log::set_prefix("PE 3");                        // by whoever starts a PE thread or rank
//
// The threshold comes from the environment variable COOPGNN_LOG_LEVEL (error, warn, info or
// debug; default info), read once; set_level overrides it. Each line is written with one
// fwrite under a process-wide mutex and flushed, so lines of different threads never interleave.
// Logging never throws (a failed format or write is dropped), so destructors may log.
#pragma once

#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#if !defined(__CUDACC__)  // nvcc cannot compile fmt: .cu files use write() with a ready string
#include <fmt/format.h>
#endif

namespace coopgnn::log {

/// Severity, most severe first: a message is written when its level <= the threshold.
enum class level { error = 0, warn = 1, info = 2, debug = 3 };

/// "error", "warn", "info" or "debug".
[[nodiscard]] std::string_view to_string(level l);

/// Parses "error", "warn", "info" or "debug" (the COOPGNN_LOG_LEVEL values); nullopt otherwise.
[[nodiscard]] std::optional<level> parse_level(std::string_view text);

/// The process-wide threshold. Its first use reads COOPGNN_LOG_LEVEL; an unset or empty variable
/// means info, and a value parse_level rejects means info after one error line naming the
/// variable and its value. Thread-safe.
[[nodiscard]] level threshold();

/// Replaces the threshold for the whole process (thread-safe; wins over COOPGNN_LOG_LEVEL).
void set_level(level l);

/// Whether a message of level `l` is written now (l <= threshold()).
[[nodiscard]] bool enabled(level l);

/// Sets the calling thread's prefix, e.g. "PE 3" or "rank 1"; empty for none (the default).
/// Each thread has its own (thread-local): a PE thread or an MPI rank's main thread sets it once
/// when it starts.
void set_prefix(std::string prefix);

/// The calling thread's prefix (empty when none was set).
[[nodiscard]] const std::string& prefix();

/// Redirects every later line to `out` (stderr by default; tests pass a temporary file) and
/// returns the previous destination. `out` must stay open while it is in use. Thread-safe.
std::FILE* set_output(std::FILE* out);

/// Writes "coopgnn [<prefix>]: <level>: <message>\n" (no brackets without a prefix; a message
/// ending in a newline gets no second one) as one fwrite under the process-wide mutex, then
/// flushes, if enabled(l). Never throws.
void write(level l, std::string_view message) noexcept;

#if !defined(__CUDACC__)
/// Formats `fmt_text` with `args` (fmt syntax) and writes it at level `l` when enabled(l); the
/// arguments are not formatted otherwise. A format error is dropped, never thrown.
template <class... Args>
void print(level l, fmt::format_string<Args...> fmt_text, Args&&... args) noexcept {
  if (!enabled(l)) return;
  try {
    write(l, fmt::format(fmt_text, std::forward<Args>(args)...));
  } catch (...) {  // a diagnostic must not turn into a failure (destructors log)
  }
}

template <class... Args>
void error(fmt::format_string<Args...> f, Args&&... args) noexcept {
  print(level::error, f, std::forward<Args>(args)...);
}
template <class... Args>
void warn(fmt::format_string<Args...> f, Args&&... args) noexcept {
  print(level::warn, f, std::forward<Args>(args)...);
}
template <class... Args>
void info(fmt::format_string<Args...> f, Args&&... args) noexcept {
  print(level::info, f, std::forward<Args>(args)...);
}
template <class... Args>
void debug(fmt::format_string<Args...> f, Args&&... args) noexcept {
  print(level::debug, f, std::forward<Args>(args)...);
}
#endif

}  // namespace coopgnn::log
