// A sampled block (message-flow graph, MFG) of one GNN layer (DESIGN.md sections 4 and 6).
// nvcc compiles this header (sample.cu): it includes nothing beyond the standard library and
// types.hpp.
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

/// A non-owning view of a block in one memory space: what the model's layers and the kernel
/// entries take (a host `block`, or the device image of one, cuda::device_block). The arrays
/// have the sizes and invariants of `block`; src_degree is null when the block has none.
struct block_view {
  std::int64_t num_dst = 0;
  std::int64_t num_src = 0;
  std::int64_t num_edges = 0;
  const vid_t* src_ids = nullptr;            ///< [num_src]
  const eid_t* indptr = nullptr;             ///< [num_dst + 1]
  const std::int64_t* indices = nullptr;     ///< [num_edges]
  const float* weights = nullptr;            ///< [num_edges]
  const std::int64_t* src_degree = nullptr;  ///< [num_src] or null
  memory_space space = memory_space::host;
};

/// The host view of `b`.
/// @throws logic_error naming the array when the sizes are inconsistent (indptr not
///         [num_dst + 1], weights not [num_edges], src_degree neither empty nor [num_src],
///         num_dst outside [0, num_src]).
block_view view(const block& b);

}  // namespace coopgnn
