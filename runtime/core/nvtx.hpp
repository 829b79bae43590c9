// NVTX ranges and names (docs/design.md section 12, "NVTX": one domain "coopgnn", ranges named
// `stage/detail` such as "sample/ns" or "gather/features", PE threads and streams named "pe3",
// "pe3/compute"). In builds without CUDA every helper compiles to nothing; with CUDA a range costs
// one call into the NVTX stub when no tool is attached.
#pragma once

#include <string>

#include "runtime/core/cuda_context.hpp"

#if defined(COOPGNN_WITH_CUDA) && !defined(NVTX_DISABLE)
#include <nvtx3/nvtx3.hpp>
#define COOPGNN_HAVE_NVTX 1
#endif

namespace coopgnn::nvtx {

/// The single NVTX domain of coopgnn.
struct domain {
  static constexpr char const* name{"coopgnn"};
};

#if defined(COOPGNN_HAVE_NVTX)
/// RAII range in the coopgnn domain: pushed by the constructor, popped by the destructor.
using scoped_range = ::nvtx3::scoped_range_in<domain>;
/// A range name registered once (cheaper than a string per push).
using registered_string = ::nvtx3::registered_string_in<domain>;
#else
struct scoped_range {
  explicit scoped_range(const char*) {}
  explicit scoped_range(const std::string&) {}
};
#endif

/// Names the calling OS thread in NVTX tools ("pe3"). No-op without CUDA.
void name_thread(const std::string& name);

/// Names a CUDA stream in NVTX tools ("pe3/compute"). No-op without CUDA.
void name_stream(cuda::stream_t s, const std::string& name);

}  // namespace coopgnn::nvtx

/// Opens a range `name` (a string literal, `stage/detail`) until the end of the enclosing scope.
#if defined(COOPGNN_HAVE_NVTX)
#define COOPGNN_NVTX_CONCAT_(a, b) a##b
#define COOPGNN_NVTX_CONCAT(a, b) COOPGNN_NVTX_CONCAT_(a, b)
#define COOPGNN_NVTX_RANGE(name)                                                             \
  static ::coopgnn::nvtx::registered_string const COOPGNN_NVTX_CONCAT(coopgnn_nvtx_name_,    \
                                                                      __LINE__){name};       \
  ::coopgnn::nvtx::scoped_range const COOPGNN_NVTX_CONCAT(coopgnn_nvtx_range_, __LINE__) {   \
    COOPGNN_NVTX_CONCAT(coopgnn_nvtx_name_, __LINE__)                                        \
  }
#else
#define COOPGNN_NVTX_RANGE(name) \
  do {                           \
  } while (0)
#endif
