#include "runtime/graph/generate.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "runtime/core/error.hpp"
#include "runtime/core/half.hpp"
#include "runtime/core/rng.hpp"

namespace coopgnn {

namespace {

// Stream layers under rng::purpose::generate; distinct per decision so no two share draws.
constexpr std::uint32_t kRmatEdges = 0;
constexpr std::uint32_t kRmatPermutation = 1;
constexpr std::uint32_t kSbmClasses = 2;
constexpr std::uint32_t kSbmPropensity = 3;
constexpr std::uint32_t kSbmEdges = 4;
constexpr std::uint32_t kClassMeans = 5;
constexpr std::uint32_t kFeatureNoise = 6;
constexpr std::uint32_t kTaskScores = 7;

double unit(const r123::Philox4x32::ctr_type& w, int k) {
  return rng::uniform_double(w[2 * k], w[2 * k + 1]);
}

/// Four standard normals keyed by (s, id, sub): Box-Muller on the four words of one draw.
void normals4(rng::stream s, std::uint64_t id, std::uint32_t sub, double out[4]) {
  auto const w = rng::draw4(s, id, sub, 0);
  for (int k = 0; k < 2; ++k) {
    double const u1 = static_cast<double>(rng::to_unit(w[2 * k]));
    double const u2 = static_cast<double>(rng::to_unit(w[2 * k + 1]));
    double const r = std::sqrt(-2.0 * std::log(u1));
    out[2 * k] = r * std::cos(2.0 * std::numbers::pi * u2);
    out[2 * k + 1] = r * std::sin(2.0 * std::numbers::pi * u2);
  }
}

/// Row `id` of an [*, cols] matrix of keyed standard normals.
void normal_row(rng::stream s, std::uint64_t id, std::int64_t cols, double* out) {
  double buf[4];
  for (std::int64_t j = 0; j < cols; j += 4) {
    normals4(s, id, static_cast<std::uint32_t>(j / 4), buf);
    for (std::int64_t k = 0; k < 4 && j + k < cols; ++k) out[j + k] = buf[k];
  }
}

/// x_v = (mu_{cls[v]} + sigma * eps_v) / sqrt(1 + sigma^2) (sigma <= 0: sqrt(F / 2)). The
/// division gives every column unit variance over the classes, the scale GNN initialisations
/// expect, without changing the signal-to-noise ratio. Sets ds.features (float32) or
/// ds.features16 (float16: each float32 value rounded to nearest even, 2 bytes per element).
void class_features(dataset& ds, const std::vector<std::int64_t>& cls, std::int64_t classes,
                    std::int64_t f, double sigma, std::uint64_t seed, feature_dtype type) {
  COOPGNN_EXPECTS(type != feature_dtype::bfloat16,
                  "synthetic features: bfloat16 cannot be written to .npy (float32 or float16)");
  if (sigma <= 0) sigma = std::sqrt(static_cast<double>(f) / 2.0);
  double const unit = 1.0 / std::sqrt(1.0 + sigma * sigma);
  rng::stream const sm = rng::make_stream(seed, rng::purpose::generate, kClassMeans);
  rng::stream const sn = rng::make_stream(seed, rng::purpose::generate, kFeatureNoise);
  std::vector<double> mu(static_cast<std::size_t>(classes * f));
  for (std::int64_t c = 0; c < classes; ++c)
    normal_row(sm, static_cast<std::uint64_t>(c), f, &mu[c * f]);
  auto const n = static_cast<std::int64_t>(cls.size());
  bool const half = type == feature_dtype::float16;
  ds.features = half ? matrix<float>() : matrix<float>(n, f);
  ds.features16 = half ? matrix<std::uint16_t>(n, f) : matrix<std::uint16_t>();
  ds.feature_type = type;
  std::vector<double> eps(static_cast<std::size_t>(f));
  for (std::int64_t v = 0; v < n; ++v) {
    normal_row(sn, static_cast<std::uint64_t>(v), f, eps.data());
    const double* m = &mu[cls[v] * f];
    for (std::int64_t j = 0; j < f; ++j) {
      auto const x = static_cast<float>((m[j] + sigma * eps[j]) * unit);
      if (half) {
        ds.features16.row(v)[j] = float_to_half(x);
      } else {
        ds.features.row(v)[j] = x;
      }
    }
  }
}

void check_fractions(double train, double valid) {
  COOPGNN_EXPECTS(train >= 0 && valid >= 0 && train + valid <= 1.0 + 1e-12,
                  "split fractions train = {}, valid = {} must be in [0, 1] and sum to at most 1",
                  train, valid);
}

/// Index i with cum[i-1] <= x < cum[i] (cum inclusive prefix sums), clamped to the last index.
std::size_t pick(const std::vector<double>& cum, double x) {
  auto const it = std::upper_bound(cum.begin(), cum.end(), x);
  return std::min(static_cast<std::size_t>(it - cum.begin()), cum.size() - 1);
}

}  // namespace

void keyed_normal_row(rng::stream s, std::uint64_t id, std::int64_t cols, double* out) {
  normal_row(s, id, cols, out);
}

void keyed_split(dataset& ds, double train, double valid, std::uint64_t seed) {
  check_fractions(train, valid);
  vid_t const n = ds.num_nodes;
  std::vector<vid_t> const perm = keyed_permutation(n, seed, rng::purpose::split, 0);
  auto const ntrain = static_cast<std::size_t>(std::llround(static_cast<double>(n) * train));
  auto const nvalid =
      std::min(static_cast<std::size_t>(std::llround(static_cast<double>(n) * valid)),
               static_cast<std::size_t>(n) - ntrain);
  ds.train.assign(perm.begin(), perm.begin() + static_cast<std::ptrdiff_t>(ntrain));
  ds.valid.assign(perm.begin() + static_cast<std::ptrdiff_t>(ntrain),
                  perm.begin() + static_cast<std::ptrdiff_t>(ntrain + nvalid));
  ds.test.assign(perm.begin() + static_cast<std::ptrdiff_t>(ntrain + nvalid), perm.end());
  std::sort(ds.train.begin(), ds.train.end());
  std::sort(ds.valid.begin(), ds.valid.end());
  std::sort(ds.test.begin(), ds.test.end());
}

std::vector<vid_t> keyed_permutation(vid_t n, std::uint64_t seed, rng::purpose purpose,
                                     std::uint32_t layer) {
  COOPGNN_EXPECTS(n >= 0, "keyed_permutation: n = {} is negative", n);
  std::vector<vid_t> p(static_cast<std::size_t>(n));
  for (vid_t i = 0; i < n; ++i) p[i] = i;
  rng::stream const s = rng::make_stream(seed, purpose, layer);
  for (vid_t i = n - 1; i > 0; --i) {
    auto const w = rng::draw4(s, static_cast<std::uint64_t>(i), 0, 0);
    auto j = static_cast<vid_t>(unit(w, 0) * static_cast<double>(i + 1));
    j = std::min(j, i);
    std::swap(p[i], p[j]);
  }
  return p;
}

std::string rmat_dataset_name(const rmat_options& opt) {
  return fmt::format("rmat-s{}-ef{}-seed{}", opt.scale, opt.edge_factor, opt.seed);
}

edge_rows generate_rmat_rows(const rmat_options& opt, edge_stats* stats) {
  COOPGNN_EXPECTS(opt.scale >= 1 && opt.scale <= 32, "rmat: scale = {} must be in [1, 32]",
                  opt.scale);
  COOPGNN_EXPECTS(opt.edge_factor >= 1, "rmat: edge factor = {} must be at least 1",
                  opt.edge_factor);
  double const d = 1.0 - opt.a - opt.b - opt.c;
  COOPGNN_EXPECTS(opt.a >= 0 && opt.b >= 0 && opt.c >= 0 && d >= -1e-12,
                  "rmat: probabilities a = {}, b = {}, c = {} must be >= 0 with a + b + c <= 1",
                  opt.a, opt.b, opt.c);
  vid_t const n = vid_t{1} << opt.scale;
  std::int64_t const m = opt.edge_factor * n;
  std::vector<vid_t> perm;
  if (opt.permute) perm = keyed_permutation(n, opt.seed, rng::purpose::generate, kRmatPermutation);
  rng::stream const s = rng::make_stream(opt.seed, rng::purpose::generate, kRmatEdges);
  double const ab = opt.a + opt.b;
  double const abc = ab + opt.c;
  // Edge e is a pure function of (seed, e): each chunk is drawn again when clean_edge_rows asks.
  auto draw = [&](std::int64_t first, std::span<vid_t> src, std::span<vid_t> dst) {
    for (std::size_t i = 0; i < src.size(); ++i) {
      auto const e = static_cast<std::uint64_t>(first) + i;
      vid_t u = 0;
      vid_t v = 0;
      r123::Philox4x32::ctr_type w{};
      for (int l = 0; l < opt.scale; ++l) {
        if (l % 2 == 0) w = rng::draw4(s, e, static_cast<std::uint32_t>(l / 2), 0);
        double const x = unit(w, l % 2);
        vid_t const bit = vid_t{1} << l;
        if (x < opt.a) {
        } else if (x < ab) {
          v |= bit;
        } else if (x < abc) {
          u |= bit;
        } else {
          u |= bit;
          v |= bit;
        }
      }
      src[i] = opt.permute ? perm[u] : u;
      dst[i] = opt.permute ? perm[v] : v;
    }
  };
  return clean_edge_rows(n, m, draw, opt.symmetrize, opt.drop_self_loops, stats);
}

dataset generate_rmat(const rmat_options& opt, edge_stats* stats) {
  dataset ds;
  edge_rows const rows = generate_rmat_rows(opt, stats);
  ds.name = rmat_dataset_name(opt);
  ds.num_nodes = rows.num_nodes;
  expand_edge_rows(rows, ds.src, ds.dst);
  return ds;
}

dataset generate_sbm(const sbm_options& opt, edge_stats* stats) {
  COOPGNN_EXPECTS(opt.nodes >= 1, "sbm: nodes = {} must be at least 1", opt.nodes);
  COOPGNN_EXPECTS(opt.classes >= 1 && opt.classes <= opt.nodes,
                  "sbm: classes = {} must be in [1, nodes = {}]", opt.classes, opt.nodes);
  COOPGNN_EXPECTS(opt.avg_degree >= 0, "sbm: average degree = {} is negative", opt.avg_degree);
  COOPGNN_EXPECTS(opt.homophily >= 0 && opt.homophily <= 1, "sbm: homophily = {} not in [0, 1]",
                  opt.homophily);
  COOPGNN_EXPECTS(opt.feature_dim >= 0, "sbm: feature dimension = {} is negative", opt.feature_dim);
  check_fractions(opt.train_fraction, opt.valid_fraction);
  vid_t const n = opt.nodes;
  std::int64_t const nc = opt.classes;
  dataset ds;
  ds.name = fmt::format("sbm-n{}-c{}-h{}-seed{}", n, nc, opt.homophily, opt.seed);
  ds.num_nodes = n;
  ds.num_classes = nc;

  // Classes: keyed permutation dealt round-robin.
  ds.labels.assign(static_cast<std::size_t>(n), 0);
  {
    std::vector<vid_t> const perm =
        keyed_permutation(n, opt.seed, rng::purpose::generate, kSbmClasses);
    for (vid_t i = 0; i < n; ++i) ds.labels[perm[i]] = i % nc;
  }
  // Propensities.
  std::vector<double> theta(static_cast<std::size_t>(n), 1.0);
  if (opt.degree_exponent > 1.0) {
    rng::stream const s = rng::make_stream(opt.seed, rng::purpose::generate, kSbmPropensity);
    double const cap = std::sqrt(static_cast<double>(n));
    for (vid_t v = 0; v < n; ++v) {
      double const u = unit(rng::draw4(s, static_cast<std::uint64_t>(v), 0, 0), 0);
      theta[v] = std::min(cap, std::pow(1.0 - u, -1.0 / (opt.degree_exponent - 1.0)));
    }
  }
  std::vector<double> cum_all(static_cast<std::size_t>(n));
  std::vector<std::vector<vid_t>> members(static_cast<std::size_t>(nc));
  std::vector<std::vector<double>> cum_class(static_cast<std::size_t>(nc));
  std::vector<double> class_total(static_cast<std::size_t>(nc), 0.0);
  double total = 0;
  for (vid_t v = 0; v < n; ++v) {
    total += theta[v];
    cum_all[v] = total;
    auto const c = static_cast<std::size_t>(ds.labels[v]);
    class_total[c] += theta[v];
    members[c].push_back(v);
    cum_class[c].push_back(class_total[c]);
  }
  // Edges.
  auto const m =
      static_cast<std::int64_t>(std::llround(static_cast<double>(n) * opt.avg_degree / 2));
  ds.src.resize(static_cast<std::size_t>(m));
  ds.dst.resize(static_cast<std::size_t>(m));
  rng::stream const s = rng::make_stream(opt.seed, rng::purpose::generate, kSbmEdges);
  for (std::int64_t e = 0; e < m; ++e) {
    auto const w0 = rng::draw4(s, static_cast<std::uint64_t>(e), 0, 0);
    auto const w1 = rng::draw4(s, static_cast<std::uint64_t>(e), 1, 0);
    vid_t const u = static_cast<vid_t>(pick(cum_all, unit(w0, 0) * total));
    auto const cu = static_cast<std::size_t>(ds.labels[u]);
    std::size_t cv = cu;
    if (nc > 1 && unit(w0, 1) >= opt.homophily) {
      double x = unit(w1, 0) * (total - class_total[cu]);
      cv = cu == 0 ? 1 : 0;
      for (std::size_t c = 0; c < static_cast<std::size_t>(nc); ++c) {
        if (c == cu) continue;
        cv = c;
        if (x < class_total[c]) break;
        x -= class_total[c];
      }
    }
    std::size_t const k = pick(cum_class[cv], unit(w1, 1) * class_total[cv]);
    ds.src[e] = u;
    ds.dst[e] = members[cv][k];
  }
  edge_stats const st = clean_edges(ds.src, ds.dst, /*symmetrize=*/true, /*drop_self_loops=*/true);
  if (stats != nullptr) *stats = st;
  if (opt.feature_dim > 0) {
    class_features(ds, ds.labels, nc, opt.feature_dim, opt.feature_noise, opt.seed,
                   feature_dtype::float32);
  }
  keyed_split(ds, opt.train_fraction, opt.valid_fraction, opt.seed);
  return ds;
}

namespace {

/// The labels of attach_synthetic_task on the cleaned edges `rows` (out-rows sorted by target):
/// h_v <- (h_v + sum over in-neighbours u of h_u) / (1 + in-degree(v)), pushed along the rows in
/// ascending u, so that each h_v adds its in-neighbours in ascending source id, the order of a
/// CSC column (same sums, bit for bit). The score arrays (2 |V| C doubles) are freed on return.
std::vector<std::int64_t> smoothed_labels(const edge_rows& rows, std::int64_t classes,
                                          std::uint64_t seed, int steps) {
  vid_t const n = rows.num_nodes;
  auto const nc = static_cast<std::size_t>(classes);
  std::vector<eid_t> in_degree(static_cast<std::size_t>(n), 0);
  for (std::uint32_t v : rows.targets) ++in_degree[v];
  std::vector<double> h(static_cast<std::size_t>(n) * nc);
  rng::stream const s = rng::make_stream(seed, rng::purpose::generate, kTaskScores);
  for (vid_t v = 0; v < n; ++v) normal_row(s, static_cast<std::uint64_t>(v), classes, &h[v * nc]);
  std::vector<double> next(h.size());
  for (int step = 0; step < steps; ++step) {
    std::copy(h.begin(), h.end(), next.begin());
    for (vid_t u = 0; u < n; ++u) {
      const double* in = &h[u * nc];
      for (eid_t e = rows.offsets[u]; e < rows.offsets[u + 1]; ++e) {
        double* out = &next[static_cast<std::size_t>(rows.targets[e]) * nc];
        for (std::size_t c = 0; c < nc; ++c) out[c] += in[c];
      }
    }
    for (vid_t v = 0; v < n; ++v) {
      double const inv = 1.0 / static_cast<double>(1 + in_degree[v]);
      for (std::size_t c = 0; c < nc; ++c) next[v * nc + c] *= inv;
    }
    h.swap(next);
  }
  // Standardise each column, then argmax.
  for (std::size_t c = 0; c < nc; ++c) {
    double sum = 0;
    double sq = 0;
    for (vid_t v = 0; v < n; ++v) sum += h[v * nc + c];
    double const mean = sum / static_cast<double>(n);
    for (vid_t v = 0; v < n; ++v) sq += (h[v * nc + c] - mean) * (h[v * nc + c] - mean);
    double const sd = std::sqrt(sq / static_cast<double>(n));
    double const inv = sd > 0 ? 1.0 / sd : 1.0;
    for (vid_t v = 0; v < n; ++v) h[v * nc + c] = (h[v * nc + c] - mean) * inv;
  }
  std::vector<std::int64_t> labels(static_cast<std::size_t>(n), 0);
  for (vid_t v = 0; v < n; ++v) {
    const double* row = &h[v * nc];
    labels[v] = static_cast<std::int64_t>(std::max_element(row, row + nc) - row);
  }
  return labels;
}

}  // namespace

void attach_synthetic_task(dataset& ds, const edge_rows& rows, std::int64_t classes,
                           std::int64_t feature_dim, std::uint64_t seed,
                           const synthetic_task_options& opt) {
  COOPGNN_EXPECTS(classes >= 1, "synthetic task: classes = {} must be at least 1", classes);
  COOPGNN_EXPECTS(feature_dim >= 1, "synthetic task: feature dimension = {} must be at least 1",
                  feature_dim);
  COOPGNN_EXPECTS(opt.smoothing_steps >= 0, "synthetic task: smoothing steps = {} is negative",
                  opt.smoothing_steps);
  COOPGNN_EXPECTS(ds.num_nodes >= 1, "synthetic task: the graph has no nodes");
  COOPGNN_EXPECTS(rows.num_nodes == ds.num_nodes,
                  "synthetic task: the edge rows have {} vertices, the dataset {}", rows.num_nodes,
                  ds.num_nodes);
  check_fractions(opt.train_fraction, opt.valid_fraction);
  ds.labels = smoothed_labels(rows, classes, seed, opt.smoothing_steps);
  ds.num_classes = classes;
  class_features(ds, ds.labels, classes, feature_dim, opt.feature_noise, seed, opt.feature_type);
  keyed_split(ds, opt.train_fraction, opt.valid_fraction, seed);
}

void attach_synthetic_task(dataset& ds, std::int64_t classes, std::int64_t feature_dim,
                           std::uint64_t seed, const synthetic_task_options& opt) {
  // The graph's distinct edges, self-loops kept: the in-neighbours build_csc would list.
  edge_rows const rows = clean_edge_rows(
      ds.num_nodes, ds.num_edges(),
      [&](std::int64_t first, std::span<vid_t> s, std::span<vid_t> d) {
        std::copy_n(ds.src.begin() + first, s.size(), s.begin());
        std::copy_n(ds.dst.begin() + first, d.size(), d.begin());
      },
      /*symmetrize=*/false, /*drop_self_loops=*/false);
  attach_synthetic_task(ds, rows, classes, feature_dim, seed, opt);
}

}  // namespace coopgnn
