// Edge-list cleaning shared by the converters (formats/formats.hpp) and the generators
// (runtime/graph/generate.hpp): the data layer (docs/design.md section 3.2).
#pragma once

#include <cstdint>
#include <functional>
#include <span>
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

/// A cleaned directed edge list in compressed rows: the edges sorted by (src, dst) without
/// repeats, row u (the edges leaving u) being targets[offsets[u] .. offsets[u + 1]). Host memory,
/// 8 bytes per vertex plus 4 per edge (32-bit targets, so num_nodes <= 2^32); the [2, E] int64
/// form of the same edges takes 16 bytes per edge.
struct edge_rows {
  vid_t num_nodes = 0;
  std::vector<eid_t> offsets;          ///< [num_nodes + 1], offsets[0] = 0, non-decreasing
  std::vector<std::uint32_t> targets;  ///< [E] destinations, ascending within each row

  [[nodiscard]] eid_t num_edges() const { return static_cast<eid_t>(targets.size()); }
};

/// Produces edges [first, first + src.size()) of an edge list into src / dst (host buffers of
/// equal length); called in consecutive chunks, and must give the same edges each time it is
/// asked for the same range (a pure function of the edge index, such as a keyed generator).
using edge_chunk_source =
    std::function<void(std::int64_t first, std::span<vid_t> src, std::span<vid_t> dst)>;

/// Edges per chunk of for_each_edge_chunk: 1 Mi (16 MiB of int64 buffers).
inline constexpr std::int64_t edge_chunk_edges = std::int64_t{1} << 20;

/// Streams edges [0, num_edges) of `source` in consecutive chunks of edge_chunk_edges (the last
/// shorter) through two buffers it owns, calling f(first, src, dst) on each after `source` filled
/// it. Host memory: the two buffers. Exceptions of `source` or `f` propagate.
void for_each_edge_chunk(std::int64_t num_edges, const edge_chunk_source& source,
                         const std::function<void(std::int64_t first, std::span<const vid_t> src,
                                                  std::span<const vid_t> dst)>& f);

/// clean_edges without the edge list in memory: the `num_drawn` edges that `draw` produces are
/// streamed twice in chunks (first counting each row's edges, then placing them straight into
/// their row: a counting sort into the final arrays), then each row is sorted and its repeats
/// dropped in place. Same edges, order and counts as clean_edges on the whole list. Peak host
/// memory: the result plus one chunk (a few MB); O(E + V + sum of d log d) time, deterministic.
/// @param num_nodes  every id must be in [0, num_nodes); num_nodes <= 2^32
/// @throws logic_error for num_nodes outside [0, 2^32], num_drawn < 0, or a drawn id outside
///         [0, num_nodes) (naming the edge).
edge_rows clean_edge_rows(vid_t num_nodes, std::int64_t num_drawn, const edge_chunk_source& draw,
                          bool symmetrize, bool drop_self_loops, edge_stats* stats = nullptr);

/// Writes the edges of `rows` into src / dst (resized to E): the form dataset::src / dst hold.
void expand_edge_rows(const edge_rows& rows, std::vector<vid_t>& src, std::vector<vid_t>& dst);

/// Cleans a directed edge list in place: optionally drops self-loops, optionally adds the reverse
/// v -> u of every non-loop edge u -> v, then always removes duplicate (src, dst) pairs. The
/// output is sorted by (src, dst). Deterministic; runs clean_edge_rows over the list with
/// |V| = largest id + 1, so the extra memory is 8 bytes per vertex plus 4 per output edge.
/// @param src, dst  [E] vertex ids in [0, 2^32) (equal lengths)
/// @returns the counts; @throws logic_error when the lengths differ or an id is negative or
///          not below 2^32.
edge_stats clean_edges(std::vector<vid_t>& src, std::vector<vid_t>& dst, bool symmetrize,
                       bool drop_self_loops);

}  // namespace coopgnn
