// Neighbour sampling, unique-and-compact and the owner split on the CUDA backend
// (docs/design.md sections 2, 4, 5 and 6).
//
// Parity rule: for the same graph, seeds and sample_params these functions return exactly what
// the host functions of sample.hpp return (same edges, same order, same weights bit for bit),
// because every draw is keyed on what it decides (rng.hpp) and LABOR's dependent variates use
// portable_math.hpp. The host functions are the reference; tests/kernels/sample_gpu_test.cpp
// compares the two.
//
// Includable from .cpp files in any build (no CUDA headers); the definitions (sample.cu) exist
// only in CUDA builds. All work runs on ctx.compute(); every function that returns sizes known
// only on the device synchronises that stream (noted per function). Device memory comes from
// ctx's pool.
#pragma once

#include <cstdint>
#include <type_traits>
#include <vector>

#include "kernels/sample/block.hpp"
#include "kernels/sample/sample.hpp"
#include "runtime/core/cuda_context.hpp"
#include "runtime/graph/csc.hpp"
#include "runtime/graph/ownership.hpp"

namespace coopgnn::cuda {

/// A CSC of in-edges in device memory (same layout as csc_graph: 64-bit offsets and ids; typed
/// columns sorted by (relation, source)).
struct device_csc {
  vid_t num_nodes = 0;
  device_buffer<eid_t> indptr;        ///< [num_nodes + 1]
  device_buffer<vid_t> indices;       ///< [num_edges]
  device_buffer<std::int32_t> etype;  ///< [num_edges] relation per in-edge; empty untyped
  std::int32_t num_relations = 1;     ///< R
  [[nodiscard]] eid_t num_edges() const { return static_cast<eid_t>(indices.size()); }
};

/// A non-owning view of `size()` elements of T in device memory: what the kernels read. Converts
/// from a device_buffer; data()/size()/bytes() as the buffer's.
template <class T>
class device_span {
 public:
  device_span() = default;
  device_span(T* data, std::size_t size) : data_(data), size_(size) {}
  template <class U>
  requires std::is_same_v<const U, T> || std::is_same_v<U, T> device_span(
      const device_buffer<U>& b)  // NOLINT(google-explicit-constructor)
      : data_(b.data()), size_(b.size()) {}
  [[nodiscard]] T* data() const { return data_; }
  [[nodiscard]] std::size_t size() const { return size_; }
  [[nodiscard]] std::size_t bytes() const { return size_ * sizeof(T); }
  [[nodiscard]] bool empty() const { return size_ == 0; }

 private:
  T* data_ = nullptr;
  std::size_t size_ = 0;
};

/// A device CSC without ownership (device_csc or a view of another copy). Typed when etype is
/// non-empty or num_relations > 1 (csc_graph::typed).
struct device_csc_view {
  vid_t num_nodes = 0;
  device_span<const eid_t> indptr;
  device_span<const vid_t> indices;
  device_span<const std::int32_t> etype;  ///< [num_edges] or empty (untyped)
  std::int32_t num_relations = 1;
  device_csc_view() = default;
  device_csc_view(vid_t n, device_span<const eid_t> ip, device_span<const vid_t> ix,
                  device_span<const std::int32_t> et = {}, std::int32_t r = 1)
      : num_nodes(n), indptr(ip), indices(ix), etype(et), num_relations(r) {}
  device_csc_view(const device_csc& g)  // NOLINT(google-explicit-constructor)
      : num_nodes(g.num_nodes),
        indptr(g.indptr),
        indices(g.indices),
        etype(g.etype),
        num_relations(g.num_relations) {}
  [[nodiscard]] eid_t num_edges() const { return static_cast<eid_t>(indices.size()); }
  [[nodiscard]] bool typed() const { return !etype.empty() || num_relations > 1; }
};

/// Copies `g` (indptr, indices and, when typed, etype and num_relations) to the device on
/// ctx.compute() (asynchronous for the host once the pageable source has been staged).
/// @throws cuda_error when out of device memory.
device_csc upload(const cuda_context& ctx, const csc_graph& g);

/// sampled_neighbors in device memory: indptr [n + 1] int64, nbrs [num_sampled] int64,
/// weights [num_sampled] float32.
struct device_sampled_neighbors {
  device_buffer<eid_t> indptr;
  device_buffer<vid_t> nbrs;
  device_buffer<float> weights;
};

/// Device version of coopgnn::sample_neighbors (sample.hpp), with the same rules and row layout
/// (rows q = i * R + r, R = g.num_relations; untyped R = 1, row = seed): row q samples the
/// relation segment [b, e) of seed s = seeds[i] (relation_segment; the whole column untyped),
/// d = e - b, with fanout k = fanouts_per_relation(params)[r]:
///   NS:      d > k >= 1 keeps the k positions of ns_floyd_select (ns_floyd.hpp: Floyd's
///            algorithm with keyed draws, the host sampler's very function, offset b -
///            indptr[s]), ascending;
///   LABOR-0: keeps neighbour t iff labor_variate(plan, t) <= float(k) / float(d);
///   k = -1 or d <= k: every neighbour of the segment; k = 0 (typed only): none. Weights
///   1 / (kept count of the row), float.
/// Schedule: one thread per row finds its segment; NS: counts min(k, d) are known, so one scan
/// gives the offsets and one thread per row writes its slots (O(k) draws per row; k > 32 uses
/// 4 k u32 of hash scratch per row, 16 bytes per output edge). LABOR: one thread per candidate
/// edge (so a seed of degree 2^20 is spread over the whole GPU); kept edges are compacted with
/// an exclusive scan, which keeps the neighbour-list order. The R fanouts are copied to the
/// device (R ints, pageable).
/// @param g      device CSC
/// @param seeds  [n] device int64 vertex ids in [0, g.num_nodes); duplicates allowed
/// @throws logic_error (after a stream synchronisation) naming the first seed outside
///         [0, |V|) or with in-degree >= 2^32; logic_error as fanouts_per_relation or for
///         kappa < 0; cuda_error for CUDA failures. n = 0 gives indptr {0} and empty outputs.
/// Host round trips (each synchronises ctx.compute()): NS one (the sampled edge count, which
/// sizes the outputs), LABOR two (the candidate count, which sizes the keep flags, and the kept
/// count); the seeds' validation rides along with the first (one device status word).
/// Deterministic.
device_sampled_neighbors sample_neighbors(const cuda_context& ctx, device_csc_view g,
                                          device_span<const vid_t> seeds,
                                          const sample_params& params);

/// A device sample without ownership (what make_block reads).
struct device_sampled_view {
  device_span<const eid_t> indptr;
  device_span<const vid_t> nbrs;
  device_span<const float> weights;
  device_sampled_view() = default;
  device_sampled_view(device_span<const eid_t> ip, device_span<const vid_t> n,
                      device_span<const float> w)
      : indptr(ip), nbrs(n), weights(w) {}
  device_sampled_view(const device_sampled_neighbors& s)  // NOLINT(google-explicit-constructor)
      : indptr(s.indptr), nbrs(s.nbrs), weights(s.weights) {}
};

/// Device version of coopgnn::exclude_edges (sampling.hpp): one thread per row q (seed q / R,
/// relation q % R; R = 1 untyped) counts the kept edges (binary search of key
/// (t << 32 | (s R + r)) in the sorted `keys`), an exclusive scan places them, a second pass
/// writes them with weights w / (sum of kept w) in edge order (correctly rounded float
/// operations: the host's bits). Synchronises once (the kept total; the input checks ride
/// along in the same status read, sample_checks.hpp).
/// @param seeds    [n] device int64 ids
/// @param sampled  device sample of n R rows: indptr [n R + 1] int64, nbrs [m] int64,
///                 weights [m] float32
/// @param keys     [k] device uint64 keys, ascending and distinct
/// @param R        rows per seed, >= 1
/// All operands in ctx's device memory, ordered on ctx.compute().
/// @throws logic_error, with the host's message, for R < 1 or indptr not [n R + 1], nbrs and
///         weights of different sizes, and (after the synchronisation, in the host's order)
///         `keys` not ascending and distinct (naming the first position), a row whose offsets
///         are not a range within [0, m] (naming the row and its offsets), or a sampled edge
///         without a key (edge_exclusion_key's message: a relation, s R + r or t outside its
///         range); cuda_error on a failed launch or copy. No kernel reads out of bounds on
///         bad input.
device_sampled_neighbors exclude_edges(const cuda_context& ctx, device_span<const vid_t> seeds,
                                       device_sampled_view sampled,
                                       device_span<const std::uint64_t> keys, std::int32_t R);

/// Copies a device sample to the host (synchronises ctx.compute()).
sampled_neighbors to_host(const cuda_context& ctx, const device_sampled_neighbors& s);

/// A block (block.hpp) in device memory; num_dst and num_relations on the host.
struct device_block {
  std::int64_t num_dst = 0;
  std::int32_t num_relations = 1;          ///< R rows per destination (block::num_relations)
  device_buffer<vid_t> src_ids;            ///< [num_src]: dst first, then the other sources
  device_buffer<eid_t> indptr;             ///< [num_dst * num_relations + 1]
  device_buffer<std::int64_t> indices;     ///< [num_edges] local source index
  device_buffer<float> weights;            ///< [num_edges]
  device_buffer<std::int64_t> src_degree;  ///< [num_src] full-graph in-degree
};

/// Device unique-and-compact, identical to coopgnn::make_block (sample.hpp): sources are `dst`
/// in order, then the sampled neighbours that are not destinations, unique and sorted by id;
/// indices[e] is the local index of nbrs[e]. Sort-based: CUB radix sort of (dst, position) for
/// the destination lookup, select + radix sort + unique for the other sources, and a binary
/// search per edge.
/// @param g        device CSC
/// @param dst      [n] device int64 ids in [0, |V|), distinct: the seeds `sampled` was drawn for
/// @param sampled  the result of sample_neighbors for exactly `dst` (n * R rows, R =
///                 g.num_relations; the block gets num_relations = R): indptr [n R + 1] int64,
///                 nbrs [m] int64 ids in [0, |V|), weights [m] float32
/// @throws logic_error with the host's message (make_block, sample.hpp) when R < 1 or
///         sampled.indptr.size() != n * R + 1, and (after the first synchronisation, in the
///         host's order) when nbrs, weights and the last offset disagree, a destination is
///         outside [0, |V|) (naming it and its position), a sampled source is (naming it and
///         its edge) or a destination appears twice; cuda_error for CUDA failures. No kernel
///         reads out of bounds on bad input. Synchronises ctx.compute() once for the number of
///         sources that are not destinations (CUB's item count; the checks ride along) and,
///         when there are any, once more for the number of unique ones (it sizes src_ids).
///         Deterministic.
device_block make_block(const cuda_context& ctx, device_csc_view g, device_span<const vid_t> dst,
                        device_sampled_view sampled);

/// Copies a device block to the host (synchronises ctx.compute()).
block to_host(const cuda_context& ctx, const device_block& b);

/// The owner map of `owners` in device memory: [|V|] uint16 PE ids.
device_buffer<std::uint16_t> upload_owners(const cuda_context& ctx, const ownership& owners);

/// An id list split by owner PE (docs/design.md section 6.2, step 2): ids[perm[0 .. counts[0])] are
/// owned by PE 0, the next counts[1] by PE 1, and so on; within a PE, input order (stable).
struct device_owner_split {
  std::vector<std::int64_t> counts;  ///< [P] host copy of the per-PE counts
  device_buffer<std::int64_t> perm;  ///< [m] positions into ids, grouped by owner
  device_buffer<vid_t> sorted_ids;   ///< [m] ids[perm[i]]
};

/// Splits `ids` by owner on the device: a stable CUB radix sort of (owner, position) and a
/// per-PE histogram. Matches the host reference of split_by_owner (sample.cpp) exactly.
/// @param owner_of  [|V|] device owner map (upload_owners)
/// @param num_pes   P in [1, 65535], as in the ownership the map came from
/// @param ids       [m] device ids in [0, |V|)
/// @throws logic_error for P out of range or (after a synchronisation) naming the first id
///         outside [0, |V|). Synchronises ctx.compute() once. m = 0 gives zero counts.
device_owner_split split_by_owner(const cuda_context& ctx,
                                  device_span<const std::uint16_t> owner_of, int num_pes,
                                  device_span<const vid_t> ids);

/// Sorted distinct ids and the position of every input id among them.
struct device_unique {
  device_buffer<vid_t> unique;          ///< [k] distinct ids, ascending
  device_buffer<std::int64_t> inverse;  ///< [m] unique[inverse[i]] == ids[i]
};

/// Owner-side deduplication of cooperative sampling (docs/design.md section 6.2, step 2: S^{l+1}_p
/// is the sorted set of requested ids, recv_inv maps each request to its row), identical to the
/// host's std::sort + std::unique + std::lower_bound in sample_cooperative. CUB radix sort and
/// unique, then a binary search per id.
/// @param ids  [m] device int64 ids (any values; duplicates expected)
/// @throws cuda_error for CUDA failures. m = 0 gives empty outputs. Synchronises ctx.compute()
///         once (the number of distinct ids). Deterministic.
device_unique unique_with_inverse(const cuda_context& ctx, device_span<const vid_t> ids);

/// labor_variate(plan, t) evaluated on the device for every t in `vertices` ([m] device
/// int64): out [m] float. Used to check host/device bit parity of the variates (and by tools
/// that inspect them). Asynchronous on ctx.compute().
device_buffer<float> labor_variates(const cuda_context& ctx, const labor_variate_plan& plan,
                                    device_span<const vid_t> vertices);

}  // namespace coopgnn::cuda
