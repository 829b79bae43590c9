// The input checks of make_block and exclude_edges (sampling.hpp), written once: COOPGNN_HD
// predicates that the host references (sample.cpp) test before they throw and that the CUDA
// kernels (sample.cu) test per element, and the check word in which a kernel reports the first
// failure. A CUDA call folds every failure into one status word with atomicMin (check_word: the
// check's rank in the host's order, then the position), reads it back with the count it reads
// anyway, and throws the host's logic_error for the smallest word: the same first failure the
// host's loops meet. nvcc compiles this header: cstdint, string and types.hpp only.
#pragma once

#include <cstdint>
#include <string>

#include "runtime/core/hd.hpp"
#include "runtime/core/types.hpp"

namespace coopgnn {

/// True when v is a vertex id of a graph of n vertices: 0 <= v < n.
COOPGNN_HD constexpr bool id_in_range(vid_t v, vid_t n) { return v >= 0 && v < n; }

/// True when one row's offsets [begin, end) are a range of a sample of m edges:
/// 0 <= begin <= end <= m (so reading edges begin .. end - 1 stays in bounds).
COOPGNN_HD constexpr bool sample_row_in_bounds(eid_t begin, eid_t end, eid_t m) {
  return begin >= 0 && begin <= end && end <= m;
}

/// True when key `next` may follow key `prev` in an exclusion set (ascending, distinct).
COOPGNN_HD constexpr bool keys_ordered(std::uint64_t prev, std::uint64_t next) {
  return prev < next;
}

/// The first failed check of an edge-exclusion key (edge_exclusion_key, sampling.hpp), in the
/// order the host tests them.
enum class exclusion_key_fault : std::int32_t {
  none = 0,
  relation = 1,     ///< R < 1 or r outside [0, R)
  destination = 2,  ///< s R + r outside [0, 2^32) (s negative included)
  source = 3,       ///< t outside [0, 2^32)
};

/// Checks the key of edge t -> s of relation r on a graph of R relations: the key
/// (t << 32) | (s R + r) exists when R >= 1, 0 <= r < R, 0 <= s R + r < 2^32 and
/// 0 <= t < 2^32 (tested in that order, without overflow). R = 1, r = 0 is the untyped key.
COOPGNN_HD constexpr exclusion_key_fault exclusion_key_check(vid_t t, vid_t s, std::int32_t r,
                                                             std::int32_t R) {
  constexpr vid_t limit = vid_t{1} << 32;
  if (R < 1 || r < 0 || r >= R) return exclusion_key_fault::relation;
  if (s < 0 || s > (limit - 1 - r) / R) return exclusion_key_fault::destination;
  if (t < 0 || t >= limit) return exclusion_key_fault::source;
  return exclusion_key_fault::none;
}

/// The key (t << 32) | (s R + r), for arguments exclusion_key_check accepts (not checked).
COOPGNN_HD constexpr std::uint64_t exclusion_key(vid_t t, vid_t s, std::int32_t r, std::int32_t R) {
  return (static_cast<std::uint64_t>(t) << 32) | static_cast<std::uint64_t>(s * R + r);
}

/// The logic_error text of a failed key check (what edge_exclusion_key throws); empty for
/// none. Host only (defined in sample.cpp); the CUDA exclude_edges names a bad key with it.
std::string exclusion_key_message(exclusion_key_fault fault, vid_t t, vid_t s, std::int32_t r,
                                  std::int32_t R);

/// A failed check as one 64-bit word, ordered like the host's loops: (check << 56) | position
/// with check in [0, 255) the rank of the check in the host's order and position < 2^56 the
/// index the host's loop was at. The smallest word of a call (atomicMin) is the host's first
/// failure; check_word_none (all bits set, atomicMin's identity) means every check passed.
inline constexpr std::uint64_t check_word_none = ~std::uint64_t{0};
inline constexpr std::uint64_t check_position_mask = (std::uint64_t{1} << 56) - 1;
COOPGNN_HD constexpr std::uint64_t check_word(std::uint32_t check, std::uint64_t position) {
  return (static_cast<std::uint64_t>(check) << 56) | (position & check_position_mask);
}
/// The check and the position of a word other than check_word_none.
COOPGNN_HD constexpr std::uint32_t check_of(std::uint64_t word) {
  return static_cast<std::uint32_t>(word >> 56);
}
COOPGNN_HD constexpr std::uint64_t position_of(std::uint64_t word) {
  return word & check_position_mask;
}

}  // namespace coopgnn
