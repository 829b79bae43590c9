// The throwing half of kernels/cuda_check.cuh, compiled by the C++ compiler (fmt available).
#ifdef COOPGNN_WITH_CUDA

#include <string>

#include "runtime/core/error.hpp"

namespace coopgnn::detail {

[[noreturn]] void throw_cuda_call(const char* library, const char* name, const char* what,
                                  const char* call, const char* file, int line) {
  std::string where = file;
  if (auto pos = where.rfind('/'); pos != std::string::npos) where = where.substr(pos + 1);
  throw cuda_error(
      fmt::format("{} error {} ({}) in {} [{}:{}]", library, name, what, call, where, line));
}

[[noreturn]] void throw_cuda_logic(const std::string& msg, const char* cond, const char* file,
                                   int line) {
  throw_logic(cond, file, line, msg);
}

}  // namespace coopgnn::detail

#endif  // COOPGNN_WITH_CUDA
