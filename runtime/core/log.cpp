// The logger (log.hpp).
#include "runtime/core/log.hpp"

#include <atomic>
#include <cstdlib>
#include <mutex>

namespace coopgnn::log {
namespace {

constexpr int unset = -1;

// The process's logger state: a sink shared by every thread must be process-wide.
std::atomic<int> level_{unset};
std::mutex write_mu_;
std::FILE* out_ = nullptr;  // guarded by write_mu_; nullptr = stderr

thread_local std::string prefix_;

level level_from_env() {
  const char* env = std::getenv("COOPGNN_LOG_LEVEL");
  if (env == nullptr || *env == '\0') return level::info;
  if (auto l = parse_level(env)) return *l;
  std::lock_guard lk(write_mu_);
  std::fprintf(out_ != nullptr ? out_ : stderr,
               "coopgnn: error: COOPGNN_LOG_LEVEL='%s': expected error, warn, info or debug; "
               "using info\n",
               env);
  return level::info;
}

}  // namespace

std::string_view to_string(level l) {
  switch (l) {
    case level::error:
      return "error";
    case level::warn:
      return "warn";
    case level::info:
      return "info";
    case level::debug:
      return "debug";
  }
  return "info";
}

std::optional<level> parse_level(std::string_view text) {
  for (level l : {level::error, level::warn, level::info, level::debug}) {
    if (text == to_string(l)) return l;
  }
  return std::nullopt;
}

level threshold() {
  int l = level_.load(std::memory_order_relaxed);
  if (l == unset) {
    int const from_env = static_cast<int>(level_from_env());
    // A concurrent set_level (or another first use) wins: keep what is there.
    level_.compare_exchange_strong(l, from_env);
    l = level_.load(std::memory_order_relaxed);
  }
  return static_cast<level>(l);
}

void set_level(level l) { level_.store(static_cast<int>(l), std::memory_order_relaxed); }

bool enabled(level l) { return static_cast<int>(l) <= static_cast<int>(threshold()); }

void set_prefix(std::string prefix) { prefix_ = std::move(prefix); }

const std::string& prefix() { return prefix_; }

std::FILE* set_output(std::FILE* out) {
  std::lock_guard lk(write_mu_);
  std::FILE* const before = out_ != nullptr ? out_ : stderr;
  out_ = out;
  return before;
}

void write(level l, std::string_view message) noexcept {
  if (!enabled(l)) return;
  try {
    std::string line = "coopgnn";
    if (!prefix_.empty()) {
      line += " [";
      line += prefix_;
      line += ']';
    }
    line += ": ";
    line += to_string(l);
    line += ": ";
    line += message;
    if (line.back() != '\n') line += '\n';
    std::lock_guard lk(write_mu_);
    std::FILE* const out = out_ != nullptr ? out_ : stderr;
    std::fwrite(line.data(), 1, line.size(), out);
    std::fflush(out);
  } catch (...) {  // out of memory while building the line: drop it
  }
}

}  // namespace coopgnn::log
