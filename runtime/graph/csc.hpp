// In-memory graph: CSC of in-edges (DESIGN.md section 3).
#pragma once

#include <span>
#include <string>
#include <vector>

#include "runtime/core/types.hpp"

namespace coopgnn {

/// Compressed sparse columns of in-edges: the in-neighbours of vertex s are
/// indices[indptr[s] .. indptr[s+1]), sorted ascending. 64-bit offsets.
struct csc_graph {
  vid_t num_nodes = 0;
  std::vector<eid_t> indptr;   ///< [num_nodes + 1], indptr[0] = 0, non-decreasing
  std::vector<vid_t> indices;  ///< [num_edges], 0 <= indices[e] < num_nodes

  [[nodiscard]] eid_t num_edges() const { return static_cast<eid_t>(indices.size()); }
  /// In-degree of s (edges t -> s). No bounds check.
  [[nodiscard]] eid_t in_degree(vid_t s) const { return indptr[s + 1] - indptr[s]; }
  [[nodiscard]] std::span<const vid_t> in_neighbors(vid_t s) const {
    return {indices.data() + indptr[s], static_cast<std::size_t>(indptr[s + 1] - indptr[s])};
  }
};

/// A non-owning view of a CSC in one memory space (the host graph, or its copy on a device): what
/// the sampling kernel entries take. in_degree / in_neighbors read the arrays, so only host code
/// on host-readable memory may call them.
struct csc_view {
  vid_t num_nodes = 0;
  eid_t num_edges = 0;
  const eid_t* indptr = nullptr;   ///< [num_nodes + 1]
  const vid_t* indices = nullptr;  ///< [num_edges]
  memory_space space = memory_space::host;
  [[nodiscard]] eid_t in_degree(vid_t s) const { return indptr[s + 1] - indptr[s]; }
  [[nodiscard]] std::span<const vid_t> in_neighbors(vid_t s) const {
    return {indices + indptr[s], static_cast<std::size_t>(indptr[s + 1] - indptr[s])};
  }
};

/// The host view of `g`.
inline csc_view view(const csc_graph& g) {
  return {g.num_nodes, g.num_edges(), g.indptr.data(), g.indices.data(), memory_space::host};
}

/// Builds the CSC of in-edges from a directed edge list src[e] -> dst[e]. Neighbour lists come
/// out sorted; a repeated edge is kept once (so no sampler can pick it twice); self-loops stay.
/// @param src, dst  [E] vertex ids, equal lengths, each in [0, num_nodes)
/// @throws logic_error naming the first offending edge when an id is out of range or the lengths
///         differ. O(V + E) time, two passes (counting sort by dst, then per-list sort).
csc_graph build_csc(vid_t num_nodes, std::span<const vid_t> src, std::span<const vid_t> dst);

/// Validates a CSC: sizes, indptr[0] == 0, monotone offsets, ids in range. `what` names the
/// source (a file or argument) in the error message.
/// @throws io_error describing the first problem found.
void validate_csc(const csc_graph& g, const std::string& what);

}  // namespace coopgnn
