// Error reporting behind cuda_check.hpp (compiled by the host compiler, so it can use fmt).
#if defined(COOPGNN_WITH_CUDA)
#include "runtime/core/cuda_check.hpp"

#include "runtime/core/error.hpp"
#include "runtime/core/log.hpp"

namespace coopgnn::detail {

namespace {
std::string basename_of(const char* file) {
  std::string where = file;
  if (auto pos = where.rfind('/'); pos != std::string::npos) where = where.substr(pos + 1);
  return where;
}
}  // namespace

void throw_cuda(cudaError_t status, const char* call, const char* file, int line) {
  (void)cudaGetLastError();  // clear a non-sticky error so the next check starts clean
  throw cuda_error(fmt::format("{} failed [{}:{}]: {}: {}", call, basename_of(file), line,
                               cudaGetErrorName(status), cudaGetErrorString(status)));
}

void log_cuda(cudaError_t status, const char* call, const char* file, int line) noexcept {
  (void)cudaGetLastError();
  log::error("{} failed [{}:{}]: {}: {}", call, basename_of(file), line, cudaGetErrorName(status),
             cudaGetErrorString(status));
}

void throw_library(const char* library, int status, const char* call, const char* file,
                   int line) {
  throw cuda_error(
      fmt::format("{} failed [{}:{}]: {} status {}", call, basename_of(file), line, library, status));
}

void throw_logic_message(const std::string& message, const char* file, int line) {
  throw logic_error(fmt::format("{} [{}:{}]", message, basename_of(file), line));
}

}  // namespace coopgnn::detail
#endif
