// Held-out edge splits for link prediction (`coopgnn split-edges`, docs/design.md section 7.1): the
// training graph plus a link_task whose validation and test sets hold the removed edges with K
// fixed negatives each, in GraphBolt's grouped layout (seeds, labels, indexes; dataset.hpp).
// Every random decision is a keyed draw (runtime/core/rng.hpp, purpose split), so the output is
// a pure function of the input dataset and the seed.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "runtime/core/rng.hpp"
#include "runtime/core/types.hpp"
#include "runtime/graph/dataset.hpp"

namespace coopgnn {

/// Out-neighbour lists with duplicates removed and each list ascending (self-loops kept), for
/// O(log d) edge tests. Built on the host; O(E log E) time, O(V + E) memory.
struct out_adjacency {
  std::vector<std::int64_t> offsets;  ///< [|V| + 1]: targets of v at [offsets[v], offsets[v+1])
  std::vector<vid_t> targets;         ///< [distinct arcs] ascending within each list

  [[nodiscard]] vid_t num_nodes() const { return static_cast<vid_t>(offsets.size()) - 1; }
  /// Distinct out-neighbours of u, u itself included when it has a self-loop.
  [[nodiscard]] std::span<const vid_t> neighbours(vid_t u) const;
  /// Position of arc u -> v in `targets`, or -1 when there is no such edge.
  [[nodiscard]] std::int64_t find(vid_t u, vid_t v) const;
  [[nodiscard]] bool has_edge(vid_t u, vid_t v) const { return find(u, v) >= 0; }
};

/// The out_adjacency of the directed edge list src[e] -> dst[e] over n vertices.
/// @throws logic_error when the lengths differ or an id is outside [0, n).
out_adjacency build_out_adjacency(vid_t n, std::span<const vid_t> src, std::span<const vid_t> dst);

/// Tail-corrupted negatives for link-prediction evaluation: for a query with source u, k distinct
/// vertices w drawn uniformly from A(u) = { w in [0, |V|) : w != u, u -> w not an edge of
/// `full` }, so every k-subset of A(u) is equally likely (the TMA paper's evaluation protocol:
/// 1000 negatives per positive excluding the source and true edges of the full graph, fixed
/// across runs). The draws are keyed by (seed, purpose split, query id): a pure function of
/// those and of A(u), whatever the calling order or thread. Rejection sampling while
/// |A(u)| > 2k (expected < 2 draws per negative), otherwise a keyed partial Fisher-Yates over
/// the enumerated A(u). Not thread-safe (one scratch array per sampler).
class negative_sampler {
 public:
  /// `full` must outlive the sampler.
  negative_sampler(const out_adjacency& full, std::uint64_t seed);

  /// Appends k negatives of source u for query `query` to `out` (in draw order).
  /// @throws io_error "vertex U has only M candidate negatives ..." when |A(u)| < k.
  void draw(vid_t u, std::int64_t k, std::uint64_t query, std::vector<vid_t>& out);

  /// |A(u)|: vertices other than u that u has no edge to.
  [[nodiscard]] std::int64_t candidates(vid_t u) const;

 private:
  const out_adjacency& full_;
  rng::stream stream_;
  std::vector<std::uint64_t> stamp_;  ///< [|V|] the draw call that last picked w (dedup)
  std::uint64_t epoch_ = 0;           ///< draw calls so far
  std::vector<vid_t> pool_;           ///< enumerated A(u) for the dense case
};

/// How split-edges chooses held-out edges.
enum class split_scheme {
  random,  ///< a keyed random fraction of the edges (undirected pairs when symmetric)
  tma,     ///< one outgoing edge per node (Zhu et al. 2023, section 4.1)
};

/// Options of split_edges.
struct split_options {
  split_scheme scheme = split_scheme::random;
  /// random: train / validation / test fractions of the candidate edges (sum 1). tma: ignored.
  std::array<double, 3> fractions = {0.85, 0.05, 0.10};
  /// Negatives per held-out positive; -1 = the scheme's default (random 100, as OGB's link
  /// benchmarks rank each positive against 100 or more; tma 1000, as the TMA paper); 0 = none
  /// (positives only, labels and indexes empty).
  std::int64_t negatives = -1;
  bool keep_reverse = false;  ///< keep v -> u in the training graph when u -> v is held out
  std::uint64_t seed = 1;
  std::string name;  ///< output dataset name ("" = the input's)
  /// Typed datasets: the relation "src_type:relation:dst_type" whose edges are split
  /// (split_typed_edges); empty for untyped datasets.
  std::string relation;
};

/// What split_edges did, for the command line to print.
struct split_report {
  bool symmetric = false;          ///< every edge u -> v had its reverse v -> u
  std::int64_t candidates = 0;     ///< random: pairs (or arcs) eligible; tma: eligible nodes
  std::int64_t skipped_nodes = 0;  ///< tma: eligible nodes left without a removable edge
  std::int64_t train = 0;          ///< link.train positives
  std::int64_t valid = 0;          ///< held-out validation positives
  std::int64_t test = 0;           ///< held-out test positives
  std::int64_t negatives = 0;      ///< negatives per held-out positive
  std::int64_t edges_in = 0;       ///< edges of the input graph (as stored)
  std::int64_t edges_out = 0;      ///< edges of the training graph, each once
  /// Edges of the input that repeat an earlier one (count_repeated_edges): the training graph
  /// holds each edge once, as the graph `train` builds from the input does.
  std::int64_t repeats_removed = 0;
};

/// Splits the edges of `in` into a training graph and held-out validation/test positives.
///
/// Candidates: when the graph is symmetric (every u -> v has v -> u) the undirected pairs
/// {u, v}, u < v, each held out as a whole; otherwise the distinct arcs u -> v. On a symmetric
/// graph a pair's positive is stored as u -> v or v -> u by a fair coin keyed by (seed, u, v)
/// (purpose split, layer kOrient), in link.train as in the held-out sets, so that the head whose
/// tail is corrupted is not always the lower id. Self-loops are never held out and never positives;
/// they stay in the training graph.
///  * random: a keyed permutation (purpose split, layer kSplitOrder) of the candidates in
///    (u, v) order; the first round(f_valid C) go to validation, the next round(f_test C) to
///    test, the rest train.
///  * tma: "randomly selecting and removing one outgoing edge per node in the validation / test
///    splits of node classification" (Zhu et al. 2023, section 4.1): the nodes of in.valid
///    (in.test) give one validation (test) edge each; when `in` has no vertex split, every node
///    goes to validation or test by a keyed fair coin. A node qualifies when it has at least 2
///    distinct out-neighbours other than itself in the full graph, so it keeps at least one
///    training edge. Nodes are taken in id order; node u removes one edge u -> v drawn uniformly
///    (keyed by u) among those whose removal leaves u, and v when the reverse goes too, with at
///    least one outgoing training edge and whose reverse is not already held out; a node with
///    none is skipped (report.skipped_nodes).
/// Held-out arcs (every copy) leave the training graph, and so does their reverse v -> u unless
/// opt.keep_reverse. The training graph keeps the input's edge order and duplicates otherwise.
/// link.train: the candidates not held out (symmetric: each undirected edge once, oriented by the
/// coin; directed: every distinct non-loop arc left in the training graph), ascending by
/// (min(u, v), max(u, v)).
/// link.valid / link.test: held-out positives ascending by (min(u, v), max(u, v)) (tma: by node),
/// each query =
/// the positive (label 1) followed by its K negatives (label 0) from negative_sampler keyed by
/// the candidate index (random) or the node id (tma), indexes 0, 1, ... per set.
/// Node features, labels and the vertex split of `in` are carried over; in.link is replaced.
/// @throws io_error for fractions that are negative or do not sum to 1 (within 1e-6), for
///         negatives < -1, for an empty candidate set, and when a source has fewer than K
///         candidate negatives.
dataset split_edges(const dataset& in, const split_options& opt, split_report* report = nullptr);

/// split_edges for one relation of a heterogeneous dataset (in.hetero; opt.relation names an
/// edge type "s:rel:d"), scheme random only: a typed link task whose pairs all carry relation
/// r = opt.relation's index.
/// Candidates: the distinct arcs u -> v (u != v) of relation r, in (u, v) order; when r is its
/// own reverse (reverse_edge_type(r) == r: s == d and no other "s:*:s" type) and v -> u is also
/// an arc of r, the pair is one candidate {u, v} stored as u -> v with u < v. A keyed
/// permutation (as split_edges) cuts them by opt.fractions. Held-out arcs (every copy) leave the
/// training graph, and so do their reverses v -> u in reverse_edge_type(r) unless
/// opt.keep_reverse; other relations are untouched. link.train: the candidates not held out.
/// Negatives: K distinct tails per query drawn uniformly from the destination type d's global
/// ids [lo, hi) minus u and minus every w with u -> w in relation r of the FULL graph; keyed by
/// (seed, purpose split, query = candidate index): rejection while the candidates are more than
/// 2K, else a keyed partial Fisher-Yates over the enumerated candidates.
/// Features, labels, the vertex split and the schema are carried over (edge_type filtered with
/// the edges); in.link is replaced.
/// @throws io_error for an unknown relation (the message lists the edge types), the tma scheme,
///         fractions as split_edges, an empty candidate set, a source with fewer than K
///         candidate negatives; logic_error as reverse_edge_type for an ambiguous reverse.
dataset split_typed_edges(const dataset& in, const split_options& opt,
                          split_report* report = nullptr);

}  // namespace coopgnn
