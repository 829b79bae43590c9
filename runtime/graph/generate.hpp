// Synthetic datasets (docs/design.md section 3.2): Graph500 R-MAT, a
// degree-corrected stochastic block model with homophily and class-conditional features, and a
// synthetic learnable task attached to a structure-only graph. Every random draw is keyed
// (runtime/core/rng.hpp, purposes `generate` and `split`), so the output is a pure function of the
// options and the seed: same seed, same dataset, on any machine and thread count.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/core/types.hpp"
#include "runtime/graph/dataset.hpp"
#include "runtime/graph/edges.hpp"

namespace coopgnn {

namespace rng {
enum class purpose : std::uint32_t;  // runtime/core/rng.hpp
struct stream;
}  // namespace rng

/// Graph500 R-MAT (Kronecker) parameters.
struct rmat_options {
  int scale = 10;                 ///< |V| = 2^scale, 1 <= scale <= 32 (32-bit edge_rows targets)
  std::int64_t edge_factor = 16;  ///< edges drawn = edge_factor * |V| (before cleaning)
  double a = 0.57;                ///< quadrant probabilities; d = 1 - a - b - c
  double b = 0.19;
  double c = 0.19;
  std::uint64_t seed = 1;
  bool permute = true;          ///< relabel vertices by a keyed random permutation (Graph500)
  bool symmetrize = true;       ///< add reverse edges
  bool drop_self_loops = true;  ///< remove v -> v
};

/// Draws edge_factor * 2^scale R-MAT edges: for edge e and bit level l, a keyed uniform
/// u(seed, e, l) picks quadrant (0,0) if u < a, (0,1) if u < a+b, (1,0) if u < a+b+c, else (1,1),
/// setting bit l of source and destination. With `permute`, ids pass through a keyed random
/// permutation of [0, 2^scale) (Graph500 does this so that vertex id says nothing about degree).
/// Then clean_edges (duplicates are always removed). The dataset is structure-only, named
/// rmat_dataset_name(opt). Holds the edges twice while it expands them into src / dst
/// (generate_rmat_rows' 4 bytes per edge, then 16): generate_rmat_rows alone for large scales.
/// @param stats  optional: receives the cleaning counts
/// @throws logic_error for scale outside [1, 32], edge_factor < 1, or probabilities outside [0, 1]
///         or summing past 1.
dataset generate_rmat(const rmat_options& opt, edge_stats* stats = nullptr);

/// generate_rmat's edges (the same edges, in the same (src, dst) order) as compressed rows,
/// built by clean_edge_rows from the keyed draws without the edge list in memory: host memory
/// is 4 bytes per cleaned edge plus 16 per vertex (the rows and the permutation). Edge e is drawn
/// twice (once counting, once placing), so this takes about twice generate_rmat's drawing time
/// and none of its sorting of the whole list.
/// @throws logic_error as generate_rmat.
edge_rows generate_rmat_rows(const rmat_options& opt, edge_stats* stats = nullptr);

/// "rmat-s{scale}-ef{edge_factor}-seed{seed}": the name of generate_rmat's dataset.
std::string rmat_dataset_name(const rmat_options& opt);

/// Degree-corrected stochastic block model parameters.
struct sbm_options {
  std::int64_t nodes = 1000;
  std::int64_t classes = 4;
  double avg_degree = 10.0;       ///< expected directed degree after symmetrizing
  double homophily = 0.8;         ///< fraction of edges whose endpoints share a class
  double degree_exponent = 2.5;   ///< power-law exponent of propensities; <= 0: plain SBM
  std::int64_t feature_dim = 16;  ///< F
  double feature_noise = 0.0;     ///< noise std; <= 0 = auto sqrt(F / 2) (see generate_sbm)
  std::uint64_t seed = 1;
  double train_fraction = 0.6;
  double valid_fraction = 0.2;  ///< test = the rest
};

/// Generates a degree-corrected SBM with a node-classification task.
///  - classes: a keyed permutation dealt round-robin, so class sizes differ by at most one;
///  - propensities theta_v = (1 - u_v)^(-1 / (gamma - 1)) (Pareto, minimum 1), capped at sqrt(n);
///  - nodes * avg_degree / 2 undirected edges: source ~ theta; with probability h the destination
///    is drawn ~ theta within the source's class, otherwise from another class chosen in
///    proportion to its total theta, then ~ theta within it; then symmetrized, self-loops
///    dropped, duplicates removed, so the measured edge homophily is close to h;
///  - features x_v = (mu_{class(v)} + sigma * eps) / sqrt(1 + sigma^2), mu_c and eps standard
///    normal per dimension (unit variance per column), sigma = feature_noise (auto: sqrt(F / 2),
///    which puts two class means about one noise std from their midpoint: learnable, not trivial);
///  - split: a keyed permutation (purpose split) cut into train / valid / test by the fractions.
/// @throws logic_error for nodes < 1, classes < 1 or > nodes, avg_degree < 0, homophily outside
///         [0, 1], feature_dim < 0, or fractions outside [0, 1] summing past 1.
dataset generate_sbm(const sbm_options& opt, edge_stats* stats = nullptr);

/// Options of attach_synthetic_task beyond classes, feature_dim and seed.
struct synthetic_task_options {
  int smoothing_steps = 3;     ///< neighbour-averaging steps before the argmax
  double feature_noise = 0.0;  ///< noise std; <= 0 = auto sqrt(F / 2) as in generate_sbm
  double train_fraction = 0.6;
  double valid_fraction = 0.2;
  /// float32 (ds.features) or float16 (ds.features16: the float32 values rounded to nearest
  /// even, 2 bytes per element); bfloat16 is refused (.npy has no such dtype).
  feature_dtype feature_type = feature_dtype::float32;
};

/// Adds a learnable node-classification task to `ds` (usually structure-only; existing features,
/// labels and splits are replaced). Labels: every vertex draws C standard normals r_v; k times
/// h_v <- (h_v + sum over in-neighbours u of h_u) / (1 + in-degree(v)); then each of the C
/// columns is standardised and label(v) = argmax_c h_v[c]. Neighbouring vertices share smoothed
/// scores, so labels are homophilous and classes roughly balanced. Features: class-conditional
/// Gaussians as in generate_sbm, so a model learns from features and gains from neighbours.
/// Split: keyed permutation (purpose split) by the fractions. O(k (V + E) C + V F) time; host
/// memory: the distinct edges as edge_rows (4 bytes each), 2 |V| C doubles of scores (freed
/// before the features are made), then the features at opt.feature_type's width.
/// @throws logic_error for classes < 1, feature_dim < 1, an inconsistent `ds`, bad fractions, or
///         bfloat16 features.
void attach_synthetic_task(dataset& ds, std::int64_t classes, std::int64_t feature_dim,
                           std::uint64_t seed, const synthetic_task_options& opt = {});

/// attach_synthetic_task with the graph given as `rows` (generate_rmat_rows; ds.src / ds.dst are
/// not read and may be empty): the same labels, features and split, bit for bit, as
/// attach_synthetic_task on a dataset holding the edges of `rows`.
/// @throws logic_error as attach_synthetic_task, or when rows.num_nodes != ds.num_nodes.
void attach_synthetic_task(dataset& ds, const edge_rows& rows, std::int64_t classes,
                           std::int64_t feature_dim, std::uint64_t seed,
                           const synthetic_task_options& opt = {});

/// Replaces ds.train / valid / test by a keyed random vertex split: perm = keyed_permutation(
/// ds.num_nodes, seed, purpose split, 0); train = the first round(n * train) of perm, valid the
/// next round(n * valid) (at most what is left), test the rest; each part sorted ascending. Pure
/// function of (n, train, valid, seed).
/// @throws logic_error for fractions outside [0, 1] or summing past 1.
void keyed_split(dataset& ds, double train, double valid, std::uint64_t seed);

/// Row `id` of an [*, cols] matrix of keyed standard normals under stream `s`: column j is
/// Box-Muller normal j % 4 of rng::draw4(s, id, j / 4, 0). @param out [cols] host
void keyed_normal_row(rng::stream s, std::uint64_t id, std::int64_t cols, double* out);

/// A keyed random permutation of [0, n): Fisher-Yates where step i swaps with position
/// j = floor(u(seed, purpose, layer, i) * (i + 1)). Pure function of its arguments.
std::vector<vid_t> keyed_permutation(vid_t n, std::uint64_t seed, rng::purpose purpose,
                                     std::uint32_t layer);

}  // namespace coopgnn
