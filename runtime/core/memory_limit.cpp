#include "runtime/core/memory_limit.hpp"

#include <sys/resource.h>

#include <charconv>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>

#include "runtime/core/error.hpp"

namespace coopgnn {

memory_limit host_memory_limit() {
  if (const char* env = std::getenv("COOPGNN_MEMORY_LIMIT"); env != nullptr && *env != '\0') {
    std::uint64_t v = 0;
    const char* const end = env + std::strlen(env);
    auto [p, ec] = std::from_chars(env, end, v);
    if (ec == std::errc() && p == end) return {v, "COOPGNN_MEMORY_LIMIT"};
  }
  memory_limit lim;  // unknown until a source gives a number
  std::ifstream f("/proc/meminfo");
  std::string key;
  std::uint64_t kb = 0;
  std::string unit;
  while (f >> key >> kb >> unit) {
    if (key == "MemAvailable:") {
      lim = {kb * 1024, "MemAvailable in /proc/meminfo"};
      break;
    }
  }
  // The address-space limit (ulimit -v) bounds every mapping of this process, whatever memory
  // the machine has: what is left of it is the other bound.
  rlimit as{};
  if (getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY) {
    auto const cap = static_cast<std::uint64_t>(as.rlim_cur);
    std::int64_t const mapped = read_process_memory().address_space_bytes;
    std::uint64_t const used = mapped > 0 ? static_cast<std::uint64_t>(mapped) : 0;
    std::uint64_t const left = cap > used ? cap - used : 0;
    if (left < lim.bytes) {
      lim = {left, fmt::format("the address-space limit RLIMIT_AS (ulimit -v) of {} bytes less "
                               "the {} bytes this process has mapped",
                               cap, used)};
    }
  }
  return lim;
}

process_memory read_process_memory() {
  process_memory m;
  std::ifstream f("/proc/self/status");
  std::string line;
  auto kb_of = [&](std::string_view rest) -> std::int64_t {
    while (!rest.empty() && (rest.front() == ' ' || rest.front() == '\t')) rest.remove_prefix(1);
    std::int64_t kb = -1;
    auto [p, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), kb);
    return ec == std::errc() && kb >= 0 ? kb * 1024 : -1;
  };
  while (std::getline(f, line)) {
    std::string_view const l(line);
    if (l.starts_with("VmRSS:")) m.rss_bytes = kb_of(l.substr(6));
    if (l.starts_with("VmHWM:")) m.peak_rss_bytes = kb_of(l.substr(6));
    if (l.starts_with("VmSize:")) m.address_space_bytes = kb_of(l.substr(7));
  }
  return m;
}

std::uint64_t saturating_bytes(std::int64_t count, std::uint64_t elem_bytes) {
  if (count <= 0) return 0;
  auto const c = static_cast<std::uint64_t>(count);
  if (elem_bytes != 0 && c > std::numeric_limits<std::uint64_t>::max() / elem_bytes) {
    return std::numeric_limits<std::uint64_t>::max();
  }
  return c * elem_bytes;
}

std::string format_bytes(std::uint64_t b) {
  auto const d = static_cast<double>(b);
  constexpr double kKiB = 1024.0;
  if (d >= kKiB * kKiB * kKiB * kKiB)
    return fmt::format("{:.2f} TiB", d / (kKiB * kKiB * kKiB * kKiB));
  if (d >= kKiB * kKiB * kKiB) return fmt::format("{:.2f} GiB", d / (kKiB * kKiB * kKiB));
  if (d >= kKiB * kKiB) return fmt::format("{:.2f} MiB", d / (kKiB * kKiB));
  if (d >= kKiB) return fmt::format("{:.2f} KiB", d / kKiB);
  return fmt::format("{} B", b);
}

std::string memory_shortfall(std::uint64_t bytes, std::string_view why, const memory_limit& lim) {
  // A size that overflows 64 bits is refused even where the memory is unknown.
  if (bytes <= lim.bytes && bytes != std::numeric_limits<std::uint64_t>::max()) return {};
  std::string const need = bytes == std::numeric_limits<std::uint64_t>::max()
                               ? std::string(">= 2^64")
                               : fmt::format("{}", bytes);
  return fmt::format(
      "{} bytes ({}; {}) but only {} bytes ({}) of memory are available ({}; "
      "COOPGNN_MEMORY_LIMIT sets another bound)",
      need, format_bytes(bytes), why, lim.bytes, format_bytes(lim.bytes), lim.source);
}

void check_declared_bytes(std::string_view file, std::string_view key, std::uint64_t value,
                          std::uint64_t bytes, std::string_view why) {
  std::string const short_by = memory_shortfall(bytes, why, host_memory_limit());
  if (short_by.empty()) return;
  COOPGNN_IO_FAIL("{}: {} = {} needs {}: the value is probably wrong", file, key, value, short_by);
}

}  // namespace coopgnn
