#include "runtime/core/error.hpp"

#include "runtime/core/assert.hpp"
#include "runtime/core/log.hpp"

namespace coopgnn::detail {
namespace {
std::string location(const char* file, int line) {
  std::string where = file;
  if (auto pos = where.rfind('/'); pos != std::string::npos) where = where.substr(pos + 1);
  return fmt::format("{}:{}", where, line);
}
}  // namespace

void throw_logic(const char* cond, const char* file, int line, const std::string& msg) {
  // The message is for the user; the location is for developers, in the debug log.
  if (log::enabled(log::level::debug)) {
    log::debug("check failed at {}{}{}", location(file, line), cond != nullptr ? ": " : "",
               cond != nullptr ? cond : "");
  }
  throw logic_error(msg);
}

void throw_internal(const char* cond, const char* file, int line, const std::string& msg) {
  throw internal_error(fmt::format("{} [{}, failed: {}]", msg, location(file, line), cond));
}

}  // namespace coopgnn::detail
