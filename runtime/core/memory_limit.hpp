// Limits on allocations whose size a file declares (docs/design.md section 3.1): a count read from
// a file (an .npy shape, a zip member's uncompressed size, metadata.yaml's graph.nodes[0].num,
// OGB's num-node-list, the largest vertex id of an edge list) never drives an allocation before it
// is checked against the file size (where the file bounds it) and against the memory there is.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace coopgnn {

/// The memory a reader may allocate for arrays sized by a file, and where the number came from.
struct memory_limit {
  std::uint64_t bytes = UINT64_MAX;  ///< UINT64_MAX when unknown (then nothing is refused)
  /// "COOPGNN_MEMORY_LIMIT", "MemAvailable in /proc/meminfo" or "the address-space limit
  /// RLIMIT_AS (ulimit -v) of N bytes less the M bytes this process has mapped"
  std::string source;
};

/// The environment variable COOPGNN_MEMORY_LIMIT (a decimal byte count; for tests, fuzzers and
/// users who want a smaller bound) when it is set and parses; else the smaller of MemAvailable
/// of /proc/meminfo and what the address-space limit leaves (getrlimit(RLIMIT_AS), `ulimit -v`,
/// less this process's VmSize), with `source` naming the one that applied; unknown (UINT64_MAX)
/// when neither is known (no /proc/meminfo and no address-space limit). Units: bytes (kB of
/// /proc times 1024). Reads the environment, the limit and /proc on every call (no cached
/// state). Never throws: an unparsable COOPGNN_MEMORY_LIMIT or an unreadable /proc file falls
/// through to the other sources.
memory_limit host_memory_limit();

/// This process's memory (Linux /proc/self/status), bytes; -1 where unknown.
struct process_memory {
  std::int64_t rss_bytes = -1;            ///< VmRSS: resident now
  std::int64_t peak_rss_bytes = -1;       ///< VmHWM: the high watermark of VmRSS since the start
  std::int64_t address_space_bytes = -1;  ///< VmSize: mapped now (what RLIMIT_AS bounds)
};
/// Reads VmRSS, VmHWM and VmSize (kB times 1024) from /proc/self/status on every call. Never
/// throws: a missing file or field leaves -1.
process_memory read_process_memory();

/// count * elem_bytes (elements times bytes per element = bytes), saturating at UINT64_MAX
/// instead of wrapping; a negative count gives 0. Never throws.
std::uint64_t saturating_bytes(std::int64_t count, std::uint64_t elem_bytes);

/// `bytes` for a message: "17 B" below 1 KiB, else "1.50 KiB", "12.00 MiB", "3.00 GiB" or
/// "16.00 TiB" (binary units, 1 KiB = 1024 B, two decimals; TiB is the largest unit).
std::string format_bytes(std::uint64_t bytes);

/// The reason `bytes` cannot be allocated, or "" when they can: when `bytes` exceed lim.bytes
/// (or are UINT64_MAX, a saturated product, even with no known limit),
///   "BYTES bytes (SIZE; WHY) but only LIMIT bytes (SIZE) of memory are available (SOURCE;
///    COOPGNN_MEMORY_LIMIT sets another bound)"
/// for a message "X needs <this>". `why` says what the bytes are for. Never throws beyond
/// bad_alloc; allocates only the message.
std::string memory_shortfall(std::uint64_t bytes, std::string_view why, const memory_limit& lim);

/// Refuses a declared size before anything is allocated: when `bytes` exceeds
/// host_memory_limit() (or is UINT64_MAX, a saturated product, even with no known limit), throws
/// io_error
///   "FILE: KEY = VALUE needs BYTES bytes (SIZE; WHY) but only LIMIT bytes (SIZE) of memory are
///    available (SOURCE; COOPGNN_MEMORY_LIMIT sets another bound): the value is probably wrong"
/// `file` names the file, `key` the field or key holding the value ("graph.nodes[0].num",
/// "uncompressed size"), `why` what the bytes are for ("16 bytes per node: ..."). No-op
/// otherwise. Allocates nothing large; never reads the file.
void check_declared_bytes(std::string_view file, std::string_view key, std::uint64_t value,
                          std::uint64_t bytes, std::string_view why);

}  // namespace coopgnn
