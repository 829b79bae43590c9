// Neighbour sampling on the host backend (the reference; sampling.hpp has the entries of every
// backend, sample_cuda.hpp the CUDA kernels; nvcc compiles this header): uniform without
// replacement (NS) and LABOR-0 (docs/design.md section 4.2; LABOR: Balin & Catalyurek,
// "Layer-Neighbor Sampling", NeurIPS 2023, section 3, Poisson form). The CUDA backend
// (sample_cuda.hpp) implements the same rules with the same keys, so both return identical samples.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "kernels/sample/block.hpp"
#include "kernels/sample/labor_variate.hpp"
#include "runtime/core/exec_context.hpp"
#include "runtime/graph/csc.hpp"

namespace coopgnn {

enum class sampler_kind { ns, labor };

/// Parses "ns" or "labor". @throws logic_error naming the value otherwise.
sampler_kind parse_sampler_kind(const std::string& name);
std::string to_string(sampler_kind k);

/// What one layer of sampling decides and under which key.
struct sample_params {
  sampler_kind kind = sampler_kind::ns;
  int fanout = 10;              ///< k >= 1, or -1 = keep every in-neighbour (typed graphs: also 0)
  std::uint64_t run_seed = 0;   ///< the run seed (identical on every PE)
  std::uint32_t layer = 0;      ///< layer index l (0 = next to the seeds)
  std::uint32_t batch = 0;      ///< global minibatch index i (counts across epochs)
  labor_dependency dependency;  ///< LABOR only: kappa and layer dependency (plain by default)
  /// Typed graphs: k_r per relation r, [R] (R = the graph's num_relations), each -1 (all), 0
  /// (relation not sampled: empty rows) or >= 1; empty = `fanout` for every relation.
  std::vector<int> relation_fanouts;
};

/// The fanout k_r of every relation of a graph with `num_relations` = R relations under
/// `params`: params.relation_fanouts when set, else params.fanout R times.
/// @param typed  whether the graph is typed (csc_graph::typed): k_r = 0 is allowed only then
/// @throws logic_error when relation_fanouts has neither 0 nor R entries, or naming a fanout
///         (and its relation) that is < -1, or 0 on an untyped graph.
std::vector<int> fanouts_per_relation(const sample_params& params, std::int32_t num_relations,
                                      bool typed);

/// Sampled in-neighbours per row. Untyped graph: row i = seed i. Typed graph with R relations:
/// n * R rows, row i * R + r = seed i's sampled in-neighbours of relation r (so seed i's rows
/// are i * R .. i * R + R - 1, contiguous). Within a row, nbrs[indptr[q] .. indptr[q+1]) are
/// global ids in the order of the graph's CSC column (typed: the relation segment, ascending
/// source id), each with its Hajek weight.
struct sampled_neighbors {
  std::vector<eid_t> indptr;   ///< [num_rows + 1], num_rows = num_seeds * R (R = 1 untyped)
  std::vector<vid_t> nbrs;     ///< [num_sampled] global source ids
  std::vector<float> weights;  ///< [num_sampled] Hajek-normalised 1 / pi_ts (sum 1 per row)
};

/// Samples in-neighbours of every seed.
///
/// NS: seed s with in-degree d keeps min(k, d) neighbours. For d > k, Floyd's algorithm with
///   keyed draws (ns_floyd.hpp, ns_floyd_select): for j = d - k .. d - 1, r = a uniform integer
///   in [0, j] from the 64-bit draw (words 0, 1 of rng::draw4(stream(run_seed, ns, layer),
///   id = s, sub = j, batch)) by multiply-high (relative bias <= 2^-32); position r is kept if
///   new, else j. A uniformly random k-subset, kept positions output ascending; O(k) draws per
///   seed whatever d. Weight 1 / min(k, d).
/// LABOR-0: one variate per candidate neighbour vertex t, r_t = uniform(stream(run_seed, labor,
///   layer), id = t, sub = 0, batch), shared by every seed; s keeps t -> s iff r_t <= k / d_s
///   (float arithmetic). Expected min(k, d) per seed. Weight 1 / (number kept by s). O(d).
/// fanout -1: every in-neighbour, weight 1 / d.
/// Typed graphs (g.typed(), R = g.num_relations; csc_graph docs the layout): row i * R + r
///   samples the relation-r segment [b, e) of seed s = seeds[i] (relation_segment,
///   relation_segment.hpp), d_r = e - b, with k_r = fanouts_per_relation(params)[r]:
///   NS: keeps min(k_r, d_r) positions by the rule above on the segment, except that the draws'
///     sub-index is the position within the whole column, sub = (b - indptr[s]) + j
///     (ns_floyd_select's offset), so different relations draw different keys; weight
///     1 / min(k_r, d_r).
///   LABOR: the same variate r_t (keyed by the source t only, shared across seeds and
///     relations); row (s, r) keeps t iff r_t <= float(k_r) / float(d_r); weight
///     1 / (kept in the row).
///   k_r = -1 or d_r <= k_r: the whole segment, weight 1 / d_r; k_r = 0: an empty row.
///   With R = 1 (etype all 0) the sample is bit for bit the untyped sample of the same graph.
/// Host cost: NS O(k) Philox draws plus an O(k log k) sort per seed with d > k, O(d) copies
///   otherwise; counts are known, so indptr is one prefix sum and seeds write their slots in
///   place (scratch: k + ns_floyd_table_size(k) u32 per thread). LABOR O(d) per seed, variates
///   memoised per vertex (a thread-local float array over |V| when |V| <= max(2^22, 8 x the
///   thread's candidates), kept edges in per-thread buffers concatenated in seed order.
///
/// @param ctx    host backend; ctx.threads() threads split the seeds (result independent of it)
/// @param g      CSC of in-edges
/// @param seeds  [n] vertex ids in [0, g.num_nodes); duplicates allowed (sampled identically)
/// @throws logic_error for a seed outside [0, |V|) or of in-degree >= 2^32, fanout < -1 or 0
///         on an untyped graph, relation_fanouts without R entries, kappa < 0, or the CUDA
///         backend in a build without CUDA. Empty seeds give an empty result (indptr {0}).
///         Deterministic: a pure function of (g, seeds, params).
sampled_neighbors sample_neighbors(const exec_context& ctx, const csc_graph& g,
                                   std::span<const vid_t> seeds, const sample_params& params);

/// Unique-and-compact (docs/design.md section 4.2): the block whose destinations are `dst` (kept
/// first, in order) and whose other sources are the sampled neighbours not in `dst`, sorted by id.
/// One id -> local index map (a thread-local array over the vertices, reset after use, when
/// |V| <= max(2^22, 8 (n + E)); else a hash table): O(n + E) expected plus ordering the others.
/// Edge e of destination i points at the local index of its source. src_degree from `g` (the
/// total in-degree over every relation). Typed graphs: the sample has n * R rows (R =
/// g.num_relations) and the block gets num_relations = R, indptr [n * R + 1] = the sample's
/// (row i * R + r: destination i, relation r; block.hpp).
/// @param dst      [n] distinct vertex ids (the seeds of this layer), host memory
/// @param sampled  the result of sample_neighbors for exactly `dst`, host memory
/// @throws logic_error, in this order, if R < 1, the sizes disagree (indptr not [n * R + 1];
///         nbrs, weights and indptr.back() not equal), a destination is outside [0, |V|)
///         (named with its position), a sampled source is (named with its edge) or `dst` has a
///         duplicate. The checks are sample_checks.hpp's, shared with cuda::make_block.
///         Deterministic.
block make_block(const csc_graph& g, std::span<const vid_t> dst, const sampled_neighbors& sampled);

}  // namespace coopgnn
