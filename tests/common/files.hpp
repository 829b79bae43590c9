// Temporary directories and small file helpers shared by the I/O tests.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <type_traits>

#include "runtime/core/error.hpp"

namespace coopgnn::test {

/// A fresh directory under the system temp dir, removed (with its contents) on destruction.
/// Names are unique per process and instance, so parallel ctest processes never collide.
class temp_dir {
 public:
  temp_dir();
  ~temp_dir();
  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;
  [[nodiscard]] const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& s) const { return path_ / s; }

 private:
  std::filesystem::path path_;
};

/// Writes `bytes` to `p`, creating parent directories.
void write_text(const std::filesystem::path& p, const std::string& bytes);

/// The whole content of `p` ("" if it cannot be read).
std::string read_text(const std::filesystem::path& p);

/// Runs f and returns the message of the E it throws (io_error unless told; E = error catches
/// every coopgnn exception), or "<no io_error thrown>" ("<no error thrown>" for other E).
template <typename E = io_error, typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  return std::is_same_v<E, io_error> ? "<no io_error thrown>" : "<no error thrown>";
}

/// Sets (or, with nullptr, unsets) an environment variable for the scope, restoring it after.
/// Not thread-safe (setenv): for single-threaded tests such as COOPGNN_MEMORY_LIMIT ones.
class scoped_env {
 public:
  scoped_env(const char* name, const char* value);
  ~scoped_env();
  scoped_env(const scoped_env&) = delete;
  scoped_env& operator=(const scoped_env&) = delete;

 private:
  std::string name_;
  std::string old_;
  bool had_ = false;
};

/// Runs f (returning std::string) in a forked child whose address space may grow by at most
/// `extra_bytes` beyond the parent's (RLIMIT_AS), and returns what f returned. A child that dies,
/// or throws (std::bad_alloc from an allocation over the limit included), gives "<child failed:
/// ...>". Proves that f allocates nothing large. Under AddressSanitizer or ThreadSanitizer (whose
/// shadow memory needs a huge address space) f runs in this process without the limit.
std::string in_limited_child(std::uint64_t extra_bytes, const std::function<std::string()>& f);

}  // namespace coopgnn::test
