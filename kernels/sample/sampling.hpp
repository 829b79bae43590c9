// The sampling entries of every backend (docs/design.md sections 2, 4 and 6): neighbour sampling,
// unique-and-compact, the owner split and the owners' deduplication on views in a PE's memory
// space. The host references are in sample.hpp (and sample.cpp), the CUDA kernels in
// sample_cuda.hpp; the cooperative and independent protocols (pipeline/minibatch.hpp)
// are written once on these entries.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/sample/block.hpp"
#include "kernels/sample/sample.hpp"
#include "runtime/core/exec_context.hpp"
#include "runtime/core/memory.hpp"
#include "runtime/graph/csc.hpp"

namespace coopgnn {

// ---- the entries of every backend (docs/design.md section 2) --------------------------------
// Each takes the PE's exec_context and views in its memory space, checks the spaces (logic_error
// naming the operand otherwise) and runs the host reference above (host and emulated backends;
// results are placed in the context's space) or the CUDA kernels of sample_cuda.hpp (bitwise the
// same results, synchronising the compute stream where sizes are known only on the device).

/// A CSC (csc_graph's arrays) in a memory space: the graph the sampling entries read there.
struct csc_buffers {
  vid_t num_nodes = 0;
  buffer<eid_t> indptr;            ///< [num_nodes + 1]
  buffer<vid_t> indices;           ///< [num_edges]
  buffer<std::int32_t> etype;      ///< [num_edges] relation per in-edge; empty when untyped
  std::int32_t num_relations = 1;  ///< R (csc_graph::num_relations)
  [[nodiscard]] csc_view view() const {
    return {num_nodes,
            static_cast<eid_t>(indices.size()),
            indptr.data(),
            indices.data(),
            indices.space(),
            num_relations,
            etype.empty() ? nullptr : etype.data()};
  }
};

/// A copy of `g` (with its edge types when typed) in ctx.space() (the host backend samples from
/// view(g) without one).
csc_buffers upload_graph(const exec_context& ctx, const csc_graph& g);

/// A sample of in-neighbours (sampled_neighbors' arrays and row layout) in a memory space.
struct sampled_buffers {
  buffer<eid_t> indptr;   ///< [num_seeds * R + 1] (R = 1 untyped; sampled_neighbors)
  buffer<vid_t> nbrs;     ///< [num_sampled]
  buffer<float> weights;  ///< [num_sampled]
};

/// sample_neighbors above, on any backend: the same rules, keys, row layout (n * R rows on a
/// typed graph) and order.
/// @param g      the graph in ctx.space(); @param seeds [n] ids in [0, |V|), in ctx.space()
/// @throws logic_error as the host version (on CUDA after a synchronisation).
sampled_buffers sample_neighbors(const exec_context& ctx, const csc_view& g,
                                 buffer_view<const vid_t> seeds, const sample_params& params);

/// The key of edge t -> s in an exclusion set: (uint64(t) << 32) | uint64(s).
/// @throws logic_error when an id is negative or >= 2^32.
std::uint64_t edge_exclusion_key(vid_t t, vid_t s);

/// The key of edge t -> s of relation r on a graph of R relations: edge_exclusion_key(t,
/// s R + r) (so R = 1 is the untyped key and typed keys of different relations differ).
/// @throws logic_error when r is outside [0, R) or s R + r or t is outside [0, 2^32).
std::uint64_t edge_exclusion_key(vid_t t, vid_t s, std::int32_t r, std::int32_t R);

/// Removes excluded edges from a sample (link prediction's target edges, DGL's `exclude`):
/// the sampled edge t -> seeds[i] of row q (t = nbrs[e], e in [indptr[q], indptr[q + 1]); row
/// q = i R + r holds seed i's relation-r edges, R = (indptr.size() - 1) / n, 1 untyped) is
/// dropped when edge_exclusion_key(t, seeds[i], r, R) is in `keys`; the kept edges of a row
/// keep their order and their weights are renormalised to sum 1 (w / sum of the kept w, the sum
/// in edge order in float: the Hajek estimator over what is left); a row left without edges has
/// none. Host and emulated: the reference loop. CUDA: cuda::exclude_edges, the same bits and
/// the same checks (on the device, read back with the kept count). Empty keys return a copy.
/// @param seeds [n] int64 in ctx.space(); @param sampled drawn for seeds, in ctx.space():
/// indptr [n R + 1] int64, nbrs [m] int64, weights [m] float32; @param keys [k] uint64
/// ascending and distinct, in ctx.space()
/// @throws logic_error (in this order) for an operand in another memory space, indptr without
///         n R + 1 offsets for a whole R >= 1, nbrs and weights of different sizes, keys not
///         ascending and distinct ("keys are not ascending and distinct at position i"), a row
///         q whose offsets are not a range within [0, m] ("row q of the sample has offsets
///         [b, e), ..."), or a sampled edge whose key does not exist (edge_exclusion_key's
///         message, for the first such edge); on CUDA the last three after its synchronisation.
sampled_buffers exclude_edges(const exec_context& ctx, buffer_view<const vid_t> seeds,
                              const sampled_buffers& sampled,
                              buffer_view<const std::uint64_t> keys);

/// A block (block.hpp) in a memory space.
struct block_buffers {
  std::int64_t num_dst = 0;
  buffer<vid_t> src_ids;            ///< [num_src]: dst first, then the other sources by id
  buffer<eid_t> indptr;             ///< [num_dst * num_relations + 1]
  buffer<std::int64_t> indices;     ///< [num_edges] local source index
  buffer<float> weights;            ///< [num_edges]
  buffer<std::int64_t> src_degree;  ///< [num_src] full-graph in-degree
  std::int32_t num_relations = 1;   ///< R rows per destination (block::num_relations)
  /// The view the layers take.
  [[nodiscard]] block_view view() const;
  /// Bytes held (working-set accounting).
  [[nodiscard]] std::int64_t bytes() const;
};

/// make_block above (unique-and-compact), on any backend: the host reference on the host and
/// emulated backends, cuda::make_block (the same checks on the device) on CUDA.
/// @param g    the graph in ctx.space()
/// @param dst  [n] distinct int64 ids in [0, |V|), in ctx.space(): the seeds `sampled` was
///             drawn for
/// @param sampled  in ctx.space(): indptr [n R + 1] int64, nbrs [m] int64 ids in [0, |V|),
///             weights [m] float32
/// @throws logic_error as the host version, with its messages and in its order: an operand in
///         another memory space, mismatched sizes ("... offsets (n R + 1 expected)", "the sample
///         has m neighbours, w weights and b by its offsets"), "destination v (position i) is
///         outside [0, |V|)", "sampled source v (edge e) is outside [0, |V|)", "destination v
///         appears twice" (on CUDA the last four after its first synchronisation).
block_buffers make_block(const exec_context& ctx, const csc_view& g, buffer_view<const vid_t> dst,
                         const sampled_buffers& sampled);

/// A host copy of a block (downloads; on the host a copy of the arrays).
block to_host(const exec_context& ctx, const block_buffers& b);
/// The block on the host, moved out without a copy when `b` is host memory.
block to_host(const exec_context& ctx, block_buffers&& b);
/// A copy of `b` (in any space) in ctx.space().
block_buffers copy_block(const exec_context& ctx, const block_buffers& b);
/// A copy of host block `b` in ctx.space(). @throws logic_error for an inconsistent block.
block_buffers upload_block(const exec_context& ctx, const block& b);

/// An id list split by owner PE (docs/design.md section 6.2, step 2): ids[perm[0 .. counts[0])] are
/// owned by PE 0, the next counts[1] by PE 1, and so on; within a PE, input order (stable).
struct owner_split {
  std::vector<std::int64_t> counts;  ///< [P] on the host
  buffer<std::int64_t> perm;         ///< [m] positions into ids, grouped by owner
  buffer<vid_t> sorted_ids;          ///< [m] ids[perm[i]]
};

/// Splits `ids` by owner.
/// @param owner_of  [|V|] owner PE per vertex (ownership::map()), in ctx.space()
/// @param num_pes   P in [1, 65535]; every owner_of entry must be < P
/// @param ids       [m] ids in [0, |V|), in ctx.space()
/// @throws logic_error naming the first id outside [0, |V|), or whose owner is not below P (on
///         CUDA after a synchronisation).
owner_split split_by_owner(const exec_context& ctx, buffer_view<const std::uint16_t> owner_of,
                           int num_pes, buffer_view<const vid_t> ids);

/// Sorted distinct ids and the position of every input id among them.
struct unique_ids {
  buffer<vid_t> unique;          ///< [k] ascending
  buffer<std::int64_t> inverse;  ///< [m] unique[inverse[i]] == ids[i]
};

/// The owner-side deduplication of cooperative sampling (docs/design.md section 6.2, step 2):
/// sort, unique, then a binary search per id. Deterministic; m = 0 gives empty outputs.
unique_ids unique_with_inverse(const exec_context& ctx, buffer_view<const vid_t> ids);

}  // namespace coopgnn
