// Edge-list cleaning shared by the converters (formats/formats.hpp) and the generators
// (runtime/graph/generate.hpp): the data layer (docs/design.md section 3.2).
#pragma once

#include <cstdint>
#include <vector>

#include "runtime/core/types.hpp"

namespace coopgnn {

/// Counts of what edge cleaning did. Invariant:
/// edges_final = edges_read - self_loops_dropped + reverse_edges_added - duplicates_removed.
struct edge_stats {
  std::int64_t edges_read = 0;           ///< edges in the input, as stored
  std::int64_t self_loops_dropped = 0;   ///< edges v -> v removed (only with drop_self_loops)
  std::int64_t reverse_edges_added = 0;  ///< one per non-loop edge when symmetrizing
  std::int64_t duplicates_removed = 0;   ///< repeated (src, dst) pairs removed after that
  std::int64_t edges_final = 0;          ///< edges in the output
};

/// Cleans a directed edge list in place: optionally drops self-loops, optionally adds the reverse
/// v -> u of every non-loop edge u -> v, then always removes duplicate (src, dst) pairs. The
/// output is sorted by (src, dst). Deterministic; O(E log E) time, O(E) extra memory.
/// @param src, dst  [E] vertex ids (equal lengths; not range-checked here)
/// @returns the counts; @throws logic_error when the lengths differ.
edge_stats clean_edges(std::vector<vid_t>& src, std::vector<vid_t>& dst, bool symmetrize,
                       bool drop_self_loops);

}  // namespace coopgnn
