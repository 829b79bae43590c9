// Graph partitions for time-based model aggregation (docs/design.md section 7.2): Zhu et al.
// 2023, "Simplifying Distributed Neural Network Training on Massive Graphs: Randomized Partitions
// Improve Model Aggregation". Each of M trainers keeps the node-induced subgraph of its part;
// edges between parts are dropped.
//  - RandomTMA: every vertex independently and uniformly to one of M parts (random_parts);
//  - SuperTMA: METIS into N >> M mini-clusters (metis_clusters), the clusters dealt randomly to the
//    M parts (deal_clusters);
//  - PSGD-PA (the baseline): METIS with N = M, edge-balanced (metis_clusters, balance_edges).
// Part ids are int32 [|V|] in [0, M). Every function is a pure function of its arguments (keyed
// draws, METIS seeded), so the same inputs and seed give the same parts on every host.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "runtime/core/types.hpp"
#include "runtime/graph/dataset.hpp"

namespace coopgnn {

/// Whether this build links METIS (libmetis-dev; CMake option COOPGNN_METIS). Without it
/// metis_clusters throws and only random_parts and deal_clusters work.
bool metis_available();

/// RandomTMA (Zhu et al. 2023, section 3.2.2, "Randomized Node Partition"): part[v] =
/// floor(x_v * M / 2^64) with x_v the 64 bits of the Philox draw keyed by (seed,
/// rng::purpose::partition, layer 0) at counter (v, 0, 0): each vertex independently uniform over
/// [0, M) (bias below M / 2^64). The paper's code draws a float16 in [0, 1) per node; the integer
/// form has no rounding bias.
/// @param num_nodes |V| >= 0 (0: empty result); @param num_parts M >= 1.
/// @returns [|V|] int32 part ids in [0, M). O(|V|) time. Deterministic per seed, independent of
///          threads.
/// @throws logic_error "--parts ..." for M < 1, or "num_nodes ..." for |V| < 0.
std::vector<std::int32_t> random_parts(vid_t num_nodes, std::int32_t num_parts, std::uint64_t seed);

/// How metis_clusters calls METIS.
struct metis_options {
  /// PSGD-PA: vertex weight = degree in the symmetrised graph (self-loops and duplicates removed),
  /// so METIS balances the edges each part holds, as DGL's metis_partition(balance_edges=True)
  /// does in the reference (one constraint, in-degree of the symmetric graph). false: unit
  /// weights, vertex-balanced (SuperTMA's mini-clusters: DGL's ClusterGCN, balance_edges=False).
  /// A graph without edges falls back to unit weights (METIS needs a positive total weight).
  bool balance_edges = false;
  std::uint64_t seed = 1;  ///< METIS_OPTION_SEED = mix64(seed) mod 2^31
};

/// METIS 5.1 k-way (METIS_PartGraphKway, METIS_OBJTYPE_CUT: minimise the edge cut, default
/// imbalance tolerance 1.03 on the vertex weights, 0-based numbering) of the symmetrised graph
/// of the edge list src[e] -> dst[e]: every arc u -> v (u != v) becomes the undirected edge
/// {u, v}; self-loops and duplicates are dropped, as METIS requires. N = 1 assigns every vertex
/// to cluster 0 without calling METIS. Used with N >> M for SuperTMA (Zhu et al. 2023,
/// section 3.2.2, super-nodes) and with N = M, balance_edges for PSGD-PA (sections 3.3.2 and 4.1,
/// the baseline).
/// @param src, dst  [E] vertex ids in [0, num_nodes), equal lengths (host memory).
/// @param num_clusters N, 1 <= N <= |V|.
/// @returns [|V|] int32 cluster ids in [0, N); METIS may leave a cluster empty. Deterministic for
///          a given seed and METIS build. O(E log E) to build the graph plus METIS's time;
///          |V| + 1 + 2E int32 offsets, ids and weights (METIS's idx_t is 32 bits in Debian's
///          libmetis-dev).
/// @throws error (require_metis) in a build without METIS; logic_error "--clusters ..."
///         for N < 1 or N > |V|; for a graph whose |V| or 2E exceeds METIS's 32-bit idx_t; for
///         mismatched lengths or an id out of range; error "METIS ... failed" when METIS
///         returns an error code.
std::vector<std::int32_t> metis_clusters(vid_t num_nodes, std::span<const vid_t> src,
                                         std::span<const vid_t> dst, std::int32_t num_clusters,
                                         const metis_options& opt = {});

/// SuperTMA's dealing of N clusters to M parts (Zhu et al. 2023, section 3.2.2: super-nodes
/// randomly assigned to partitions; the way of the paper's public code,
/// https://github.com/amazon-science/random-tma): the cluster ids are shuffled (keyed_permutation
/// with rng::purpose::partition, layer 1), then cut into M consecutive groups, group k taking
/// q = floor(N / M) clusters plus one more when it is among the r = N mod M groups first in a
/// second keyed permutation of [0, M) (layer 2). The paper's code gives each of groups 0..M-2 an
/// extra cluster with probability r / M and the last group the remainder, so its counts can differ
/// by up to M - 1; here each group still gets the extra cluster with probability r / M, but
/// exactly r groups get one, so counts are q or q + 1 (within +-1 of N / M) for every draw.
/// @param num_clusters N >= M; @param num_parts M >= 1.
/// @returns [N] int32: the part of each cluster, in [0, M). O(N + M) time. Deterministic per seed.
/// @throws logic_error "--parts ..." for M < 1, "--clusters ..." for N < M.
std::vector<std::int32_t> deal_clusters(std::int32_t num_clusters, std::int32_t num_parts,
                                        std::uint64_t seed);

/// One part of a partition.
struct part_summary {
  std::int64_t vertices = 0;    ///< vertices with this part id
  std::int64_t kept_edges = 0;  ///< training edges with both endpoints in this part
  /// [C] labelled vertices per class (empty without labels; label -1 is not counted).
  std::vector<std::int64_t> class_counts;
  /// [F] mean feature row over the part's vertices (empty without features or when the part is
  /// empty).
  std::vector<double> feature_mean;
};

/// What a partition keeps, and how different its parts are.
struct partition_report {
  std::int32_t num_parts = 0;
  std::string edge_set;  ///< "link_train" (the link task's train positives) or "graph"
  std::int64_t total_edges = 0;
  std::int64_t kept_edges = 0;  ///< sum over parts
  double kept_ratio = 0;        ///< r = kept_edges / total_edges (1 when there are no edges)
  /// "class_tv": total variation 0.5 sum_c |p_a(c) - p_b(c)| of the parts' class histograms (each
  /// normalised over its labelled vertices); "feature_l2": Euclidean distance of the parts'
  /// feature means; "none": neither labels nor features.
  std::string distance_kind;
  double distance_max = 0;   ///< over unordered pairs of parts a < b that both have data
  double distance_mean = 0;  ///< 0 when there is no such pair (M = 1)
  std::int64_t distance_pairs = 0;
  std::vector<part_summary> parts;  ///< [M]
};

/// Summarises `parts` over `ds`. Training edges: ds.link->train (pairs u -> v) when the dataset
/// has a link task, else the graph's edges ds.src -> ds.dst (as stored: both directions of an
/// undirected edge, self-loops included). An edge is kept by part k when both endpoints have part
/// k (node-induced subgraph). Distances: class histograms when ds has labels (num_classes > 0),
/// else feature means when the features are in memory with F > 0 (16-bit ones widened per
/// element), else none; pairs where either
/// part has no labelled vertex (no vertex) are skipped.
/// @param parts [|V|] int32 part ids in [0, num_parts).
/// O(|V| F + E + M^2 max(C, F)) time. Does not validate `ds` (read_dataset does).
/// @throws logic_error "--parts ..." for num_parts < 1, and when parts.size() != |V| or an id lies
///         outside [0, num_parts).
partition_report partition_summary(const dataset& ds, std::span<const std::int32_t> parts,
                                   std::int32_t num_parts);

/// The node-induced subgraph of part `part` (Zhu et al. 2023, section 3.1: a TMA trainer's local
/// graph; the paper's code takes DGL's `g.subgraph(node_ids)`). With V_k = {v : parts[v] ==
/// part} in ascending id order, local id i is the i-th vertex of V_k (global_ids, when given,
/// receives [|V_k|] local -> global). The result, named "<ds.name>/part<part>", holds:
///  - edges src[e] -> dst[e] of ds with both endpoints in V_k, relabelled, in ds's order;
///  - features: rows V_k of ds.features (or of ds.features16, at 2 bytes per element, with
///    feature_type kept); when they were left in ds.feature_file (not in memory), only those rows
///    are read from the .npy (2-D C-ordered float32 or float16 [|V|, F]); F = 0 stays 0. The
///    result's features are always in memory (feature_file empty, feature_cols = F);
///  - labels restricted to V_k, num_classes unchanged; train/valid/test: their vertices in V_k,
///    relabelled, in ds's order;
///  - link task (when ds has one): the train positives with both endpoints in V_k, relabelled,
///    in ds's order; valid and test EMPTY (trainers do not evaluate; the TMA server scores the
///    full graph); user-item range remapped to [#{v in V_k : v < item_begin}, #{v in V_k : v <
///    item_end}) (V_k is sorted, so users stay first and items stay contiguous); when V_k holds
///    no item it becomes item_begin = item_end = 0 (not user-item; negatives are then drawn over
///    every vertex).
/// An id no vertex has gives the empty dataset (|V| = 0, no edges, F kept): METIS may leave a
/// part empty. O(|V| + E + |V_k| F) time; reads |V_k| F floats from the file when not in memory.
/// @param parts  [|V|] int32 part ids >= 0 (host memory), e.g. random_parts or run_partition
/// @param part   the part to keep, >= 0
/// @throws logic_error when parts.size() != |V|, part < 0, or a part id is negative (naming the
///         vertex); io_error naming the file when the left-in-file features cannot be read or
///         are not [|V|, F] C-ordered float32.
dataset induced_subgraph(const dataset& ds, std::span<const std::int32_t> parts, std::int32_t part,
                         std::vector<vid_t>* global_ids = nullptr);

/// The three schemes of the command line.
enum class partition_scheme { random, super, metis };

/// Parses "random", "super" or "metis". @throws logic_error "--scheme ..." otherwise.
partition_scheme parse_partition_scheme(const std::string& s);
/// The name parse_partition_scheme reads ("random", "super", "metis").
std::string to_string(partition_scheme s);

/// The SuperTMA cluster count of the paper's published runs (15000).
inline constexpr std::int64_t reference_super_clusters = 15000;

/// A run of one scheme over a dataset, as `coopgnn partition` asks for it.
struct partition_request {
  partition_scheme scheme = partition_scheme::random;
  std::int32_t num_parts = 0;                ///< M >= 1
  std::optional<std::int64_t> num_clusters;  ///< super: N; empty = default min(15000, |V| / 8)
  std::uint64_t seed = 1;
};

/// Throws coopgnn::error "--scheme WHAT needs METIS, which this build does not have ..." (how to
/// get it: libmetis-dev, tools/setup.sh, reconfigure) when metis_available() is false.
void require_metis(const std::string& what);

/// A partition with what produced it.
struct partition_result {
  std::vector<std::int32_t> parts;  ///< [|V|] part ids in [0, M)
  std::int64_t num_clusters = 0;    ///< METIS clusters (super: N; metis: M; random: 0)
  std::string clusters_reason;      ///< how N was chosen ("" for random)
  double seconds = 0;               ///< wall-clock time of the partitioning (not the summary)
};

/// Runs `req` over ds's graph (ds.src -> ds.dst: for a link-prediction dataset its training
/// graph): random_parts; super = metis_clusters(N) then deal_clusters(N, M); metis =
/// metis_clusters(M, balance_edges). Validates the request first.
/// @throws logic_error naming the option: "--parts" (M < 1, or M > |V| for metis and super),
///         "--clusters" (given for another scheme than super; N < M; N > |V|; the default
///         min(15000, |V| / 8) below M); error (require_metis) for super and metis in a build
///         without METIS, before any work.
partition_result run_partition(const dataset& ds, const partition_request& req);

/// What `coopgnn partition` left in its output directory, as a later run reads it back.
struct partition_files {
  std::vector<std::int32_t> parts;    ///< [|V|] part ids in [0, num_parts), from DIR/parts.npy
  std::optional<std::string> scheme;  ///< summary.json's "scheme" when the file has one
};

/// Reads DIR/parts.npy (a 1-D integer .npy, read as int32) and, when present, DIR/summary.json
/// (a JSON object; only its string "scheme" is used; any other content is ignored, a file that is
/// not JSON gives no scheme). The array is read only after read_npy's checks against the file
/// size, so its declared shape never drives an allocation.
/// @param num_nodes |V| of the dataset the parts are for; @param num_parts M >= 1.
/// @throws io_error naming DIR/parts.npy for every read_npy problem, a rank other than 1, a
///         length other than num_nodes ("N part ids for a dataset of |V| vertices"), and a part id
///         outside [0, num_parts) (naming the vertex).
partition_files read_partition_files(const std::filesystem::path& dir, vid_t num_nodes,
                                     std::int32_t num_parts);

}  // namespace coopgnn
