// A sampled block (message-flow graph, MFG) of one GNN layer (docs/design.md sections 4.2 and 6).
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
///  - indptr [num_dst * num_relations + 1], CSR by row: row i * R + r (R = num_relations) holds
///    destination i's edges of relation r (R = 1: the untyped block, one row per destination);
///    a destination's edges are rows i * R .. i * R + R - 1, contiguous; indices[e] in
///    [0, num_src);
///  - within a row, edges are in the order of the graph's CSC neighbour list;
///  - weights[e] = Hajek-normalised 1 / pi_ts: they sum to 1 per row with >= 1 edge (typed: per
///    destination and relation, R-GCN's 1 / |N_r(v)| with every edge kept);
///  - dst_degree / src_degree hold full-graph in-degrees (GCN normalisation).
struct block {
  std::int64_t num_dst = 0;
  std::int32_t num_relations = 1;        ///< R >= 1 rows per destination (typed graphs)
  std::vector<vid_t> src_ids;            ///< [num_src] global ids, destinations first
  std::vector<eid_t> indptr;             ///< [num_dst * num_relations + 1]
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
  const eid_t* indptr = nullptr;             ///< [num_dst * num_relations + 1]
  const std::int64_t* indices = nullptr;     ///< [num_edges]
  const float* weights = nullptr;            ///< [num_edges]
  const std::int64_t* src_degree = nullptr;  ///< [num_src] or null
  memory_space space = memory_space::host;
  std::int32_t num_relations = 1;  ///< R rows per destination (see block)
  /// Rows of the CSR: num_dst * num_relations.
  [[nodiscard]] std::int64_t num_rows() const { return num_dst * num_relations; }
};

/// The host view of `b`.
/// @throws logic_error naming the array when the sizes are inconsistent (indptr not
///         [num_dst * num_relations + 1], num_relations < 1, weights not [num_edges], src_degree neither empty nor [num_src],
///         num_dst outside [0, num_src]).
block_view view(const block& b);

}  // namespace coopgnn
