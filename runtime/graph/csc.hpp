// In-memory graph: CSC of in-edges (docs/design.md section 3.3).
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "runtime/core/types.hpp"
#include "runtime/graph/edges.hpp"

namespace coopgnn {

/// Compressed sparse columns of in-edges: the in-neighbours of vertex s are
/// indices[indptr[s] .. indptr[s+1]). 64-bit offsets.
///
/// Untyped (etype empty, num_relations = 1): a column is sorted by source id.
/// Typed (a heterogeneous graph, etype set, R = num_relations >= 1): etype[e] in [0, R) is the
/// relation of in-edge e and a column is sorted by (relation, source id), so column s is R
/// consecutive relation segments (relation_segment, kernels/sample/relation_segment.hpp, finds
/// segment r). (src, dst, relation) is an edge at most once; the same (src, dst) under two
/// relations is two edges.
struct csc_graph {
  vid_t num_nodes = 0;
  std::vector<eid_t> indptr;        ///< [num_nodes + 1], indptr[0] = 0, non-decreasing
  std::vector<vid_t> indices;       ///< [num_edges], 0 <= indices[e] < num_nodes
  std::int32_t num_relations = 1;   ///< R >= 1 (1 when untyped)
  std::vector<std::int32_t> etype;  ///< [num_edges] relation of each in-edge; empty when untyped

  /// A heterogeneous graph (etype set, or R > 1 with no edges): samples have R rows per seed
  /// and a relation fanout may be 0.
  [[nodiscard]] bool typed() const { return !etype.empty() || num_relations > 1; }

  [[nodiscard]] eid_t num_edges() const { return static_cast<eid_t>(indices.size()); }
  /// In-degree of s (edges t -> s). No bounds check.
  [[nodiscard]] eid_t in_degree(vid_t s) const { return indptr[s + 1] - indptr[s]; }
  [[nodiscard]] std::span<const vid_t> in_neighbors(vid_t s) const {
    return {indices.data() + indptr[s], static_cast<std::size_t>(indptr[s + 1] - indptr[s])};
  }
};

/// A non-owning view of a CSC in one memory space (the host graph, or its copy on a device): what
/// the sampling kernel entries take. in_degree / in_neighbors read the arrays, so only host code
/// on host-readable memory may call them. Typed when etype is non-null (csc_graph's layout).
struct csc_view {
  vid_t num_nodes = 0;
  eid_t num_edges = 0;
  const eid_t* indptr = nullptr;   ///< [num_nodes + 1]
  const vid_t* indices = nullptr;  ///< [num_edges]
  memory_space space = memory_space::host;
  std::int32_t num_relations = 1;       ///< R >= 1
  const std::int32_t* etype = nullptr;  ///< [num_edges] relation per in-edge, or null (untyped)
  /// As csc_graph::typed.
  [[nodiscard]] bool typed() const { return etype != nullptr || num_relations > 1; }
  [[nodiscard]] eid_t in_degree(vid_t s) const { return indptr[s + 1] - indptr[s]; }
  [[nodiscard]] std::span<const vid_t> in_neighbors(vid_t s) const {
    return {indices + indptr[s], static_cast<std::size_t>(indptr[s + 1] - indptr[s])};
  }
};

/// The host view of `g`.
inline csc_view view(const csc_graph& g) {
  return {g.num_nodes,
          g.num_edges(),
          g.indptr.data(),
          g.indices.data(),
          memory_space::host,
          g.num_relations,
          g.etype.empty() ? nullptr : g.etype.data()};
}

/// Builds the CSC of in-edges from a directed edge list src[e] -> dst[e]. Neighbour lists come
/// out sorted; a repeated edge is kept once (so no sampler can pick it twice); self-loops stay.
/// @param src, dst  [E] vertex ids, equal lengths, each in [0, num_nodes)
/// @throws logic_error naming the first offending edge when an id is out of range or the lengths
///         differ. O(V + E) time, two passes (counting sort by dst, then per-list sort).
csc_graph build_csc(vid_t num_nodes, std::span<const vid_t> src, std::span<const vid_t> dst);

/// build_csc over the `num_edges` edges that `edges` streams in chunks (edges.hpp), asked for
/// twice: once counting in-degrees, once placing each source straight into its column (a
/// counting sort into the final arrays). Host memory: the CSC (8 bytes per edge and per vertex)
/// plus one chunk; the edge list itself is never held. Same result as build_csc on the list.
/// @throws logic_error as build_csc, or what `edges` throws.
csc_graph build_csc(vid_t num_nodes, std::int64_t num_edges, const edge_chunk_source& edges);

/// The CSC of the edges in `edge_file`, a (2, E) integer .npy (edges/edges.npy of a dataset
/// directory), read a chunk at a time (npy_two_row_reader) by the streaming build_csc: the file
/// is read twice and never held, so host memory is the CSC alone.
/// @throws io_error naming the file for a bad header or shape, a read failure, a value that does
///         not convert to int64, or a vertex id outside [0, num_nodes) ("FILE: edge source index
///         I = V is out of range: ids must be < |V| = N", as read_dataset says it).
csc_graph read_edge_csc(vid_t num_nodes, const std::filesystem::path& edge_file);

/// Builds the typed CSC of a heterogeneous graph (see csc_graph): edge e is src[e] -> dst[e] of
/// relation edge_type[e] (hetero_schema::edge_type). Columns are sorted by (relation, source
/// id); a repeated (src, dst, relation) is kept once; self-loops stay. The result has
/// num_relations = R and etype [E'] (E' <= E after deduplication), even for R = 1.
/// @param src, dst   [E] vertex ids in [0, num_nodes), equal lengths
/// @param edge_type  [E] relation of each edge, in [0, num_relations)
/// @param num_relations R >= 1
/// @throws logic_error naming the first offending edge (an id out of range, a relation outside
///         [0, R)), or when the lengths differ or R < 1. O(V + E log d) time.
csc_graph build_csc(vid_t num_nodes, std::span<const vid_t> src, std::span<const vid_t> dst,
                    std::span<const std::int32_t> edge_type, std::int32_t num_relations);

/// The largest in-degree of `g` (edges after build_csc's deduplication; a typed graph counts
/// every relation), 0 for a graph without vertices. O(V).
eid_t max_in_degree(const csc_graph& g);

/// Validates a CSC: sizes, indptr[0] == 0, monotone offsets, ids in range; num_relations >= 1,
/// and when etype is present: [num_edges] entries in [0, num_relations), each column sorted by
/// (relation, source id) without a repeated pair; untyped graphs must have num_relations = 1.
/// `what` names the source (a file or argument) in the error message.
/// @throws io_error describing the first problem found.
void validate_csc(const csc_graph& g, const std::string& what);

}  // namespace coopgnn
