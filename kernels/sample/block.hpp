// A sampled block (message-flow graph, MFG) of one GNN layer (DESIGN.md sections 4 and 6).
#pragma once

#include <cstdint>
#include <vector>

#include "runtime/core/types.hpp"

namespace coopgnn {

/// Edges t -> s of one layer, compacted to local indices. The destination vertices are a prefix
/// of the source list (seeds first), so the layer can read a destination's own row.
///
/// Invariants (checked by validate_block in tests):
///  - src_ids.size() = num_src >= num_dst; src_ids unique; src_ids[i] for i < num_dst are the dst;
///  - indptr [num_dst + 1], CSR by destination; indices[e] in [0, num_src);
///  - within a destination, edges are in the order of the graph's CSC neighbour list;
///  - weights[e] = Hajek-normalised 1 / pi_ts: they sum to 1 per destination with >= 1 edge;
///  - dst_degree / src_degree hold full-graph in-degrees (GCN normalisation).
struct block {
  std::int64_t num_dst = 0;
  std::vector<vid_t> src_ids;            ///< [num_src] global ids, destinations first
  std::vector<eid_t> indptr;             ///< [num_dst + 1]
  std::vector<std::int64_t> indices;     ///< [num_edges] local source index
  std::vector<float> weights;            ///< [num_edges] Hajek weights
  std::vector<std::int64_t> src_degree;  ///< [num_src] full-graph in-degree of each source

  [[nodiscard]] std::int64_t num_src() const { return static_cast<std::int64_t>(src_ids.size()); }
  [[nodiscard]] std::int64_t num_edges() const { return static_cast<std::int64_t>(indices.size()); }
};

}  // namespace coopgnn
