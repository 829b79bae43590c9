#include "runtime/core/error.hpp"

namespace coopgnn::detail {

void throw_logic(const char* cond, const char* file, int line, const std::string& msg) {
  // The user-facing message comes first; the location helps developers and is kept short.
  std::string where = file;
  if (auto pos = where.rfind('/'); pos != std::string::npos) where = where.substr(pos + 1);
  if (cond != nullptr) {
    throw logic_error(fmt::format("{} [{}:{}, failed: {}]", msg, where, line, cond));
  }
  throw logic_error(fmt::format("{} [{}:{}]", msg, where, line));
}

}  // namespace coopgnn::detail
