// Shared pieces of the reader fuzz targets (tests/fuzz/README.md): one entry macro that becomes
// libFuzzer's LLVMFuzzerTestOneInput in the fuzz build (COOPGNN_FUZZ, clang) and a registered
// function of the corpus replay driver in the ordinary build, a per-process scratch directory,
// and a small multi-file container so one input can describe a whole dataset directory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/core/error.hpp"

namespace coopgnn::fuzz {

/// One fuzz target: calls a reader on `data` and returns 0. A reader rejecting the input with
/// coopgnn::error is fine (the target catches it); any other exception escapes and is a bug.
using target_fn = int (*)(const std::uint8_t* data, std::size_t size);

/// Registers `fn` under `name` for the replay driver (replay_main.cpp), which replays
/// tests/fuzz/corpus/NAME/*. `name` must outlive the process (a string literal). Returns true
/// (so it can initialise a static); never throws other than std::bad_alloc.
bool register_target(const char* name, target_fn fn);

/// One entry of targets(): the name given to register_target and the target.
struct registered_target {
  const char* name;
  target_fn fn;
};
/// The registered targets, in registration order (static-initialisation order across files).
std::vector<registered_target>& targets();

/// Sets the process-wide limits the targets run under (COOPGNN_MEMORY_LIMIT = 16 MiB, far below
/// libFuzzer's -rss_limit_mb=2048, so a declared size that passes the readers' checks still
/// cannot exhaust the fuzzer). Idempotent; called by every target before its first input.
void init_process();

/// A fresh, empty directory `name` under this process's scratch directory (created on first use
/// under /dev/shm when writable, else $TMPDIR or /tmp; removed at exit). Everything in it from the
/// previous input is removed.
/// @throws std::filesystem::filesystem_error when the directory cannot be created.
std::filesystem::path fresh_dir(std::string_view name);

/// `name` in this process's scratch directory (for single-file targets: cheaper than fresh_dir).
std::filesystem::path scratch_file(std::string_view name);

/// Writes `bytes` to `file` (creating parent directories), replacing it. Never throws for an
/// unwritable path: when a parent cannot be created (an ancestor is a file) nothing is written,
/// so the reader under test finds the file missing.
void write_file(const std::filesystem::path& file, std::span<const std::uint8_t> bytes);
void write_file(const std::filesystem::path& file, std::string_view bytes);
/// Copies `from` over `to` through the standard streams, which retry a read or write that a
/// signal interrupted (EINTR); std::filesystem::copy_file throws on one, and libFuzzer's timers
/// send signals. An unreadable `from` writes an empty `to`.
void copy_file(const std::filesystem::path& from, const std::filesystem::path& to);

/// One file of a container input.
struct member {
  std::string name;  ///< relative path, sanitised: [A-Za-z0-9._-] components, no "..", depth <= 3
  std::string_view bytes;
};

/// Splits a container input: a sequence of "=== NAME\n" lines each followed by that file's raw
/// bytes up to the next "\n=== " (the newline before a marker belongs to the marker). Text before
/// the first marker is ignored; members whose name does not sanitise are dropped; at most 16.
std::vector<member> split_container(std::string_view input);

/// Writes the members of `input` (split_container) under `dir`. @returns how many were written.
std::size_t write_container(const std::filesystem::path& dir, std::string_view input);

/// Runs f; an io_error or logic_error (any coopgnn::error) is a reader rejecting its input, which
/// is fine. Everything else propagates (to libFuzzer as a crash, to the replay driver as a
/// failure).
template <typename F>
void rejecting_ok(F&& f) {
  try {
    f();
  } catch (const ::coopgnn::error&) {
  }
}

/// The body of a directory target: writes the container `data` to fresh_dir(name) and calls
/// read(dir) under rejecting_ok. @returns 0.
template <typename F>
int on_container_dir(std::string_view name, const std::uint8_t* data, std::size_t size, F&& read) {
  std::filesystem::path const dir = fresh_dir(name);
  write_container(dir, std::string_view(reinterpret_cast<const char*>(data), size));
  rejecting_ok([&] { read(dir); });
  return 0;
}

}  // namespace coopgnn::fuzz

/// Defines fuzz target NAME: `COOPGNN_FUZZ_TARGET(npy) { ... use data, size ...; return 0; }`.
#ifdef COOPGNN_LIBFUZZER
#define COOPGNN_FUZZ_TARGET(NAME)                                                     \
  static int coopgnn_fuzz_##NAME(const std::uint8_t* data, std::size_t size);         \
  extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) { \
    ::coopgnn::fuzz::init_process();                                                  \
    return coopgnn_fuzz_##NAME(data, size);                                           \
  }                                                                                   \
  static int coopgnn_fuzz_##NAME(const std::uint8_t* data, std::size_t size)
#else
#define COOPGNN_FUZZ_TARGET(NAME)                                             \
  static int coopgnn_fuzz_##NAME(const std::uint8_t* data, std::size_t size); \
  [[maybe_unused]] static const bool coopgnn_fuzz_registered_##NAME =         \
      ::coopgnn::fuzz::register_target(#NAME, &coopgnn_fuzz_##NAME);          \
  static int coopgnn_fuzz_##NAME(const std::uint8_t* data, std::size_t size)
#endif

namespace coopgnn::fuzz {

/// Writes the arrays of a fixed 8-vertex dataset into `dir` (every path the metadata and link
/// corpora refer to): edges.npy int64 [2, 10], edges.csv, feat.npy float32 [8, 3], label.npy int64
/// [8], {train,valid,test}_seeds.npy int64 [2], {train,valid,test}_labels.npy int64 [2],
/// pairs.npy int64 [4, 2], pair_labels.npy int64 [4], pair_indexes.npy int64 [4], neg.npy int64
/// [4, 2]. No metadata.yaml. @throws io_error when a file cannot be written (write_npy).
void write_fixed_arrays(const std::filesystem::path& dir);

}  // namespace coopgnn::fuzz
