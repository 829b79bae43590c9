#include "runtime/graph/generate_hetero.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "runtime/core/error.hpp"
#include "runtime/core/half.hpp"
#include "runtime/core/rng.hpp"
#include "runtime/graph/generate.hpp"

namespace coopgnn {

namespace {

// Stream layers under rng::purpose::generate, above generate.cpp's (0..7).
constexpr std::uint32_t kWrites = 32;
constexpr std::uint32_t kAffiliations = 33;
constexpr std::uint32_t kPaperClasses = 34;
constexpr std::uint32_t kClassMeans = 35;
constexpr std::uint32_t kFeatureNoise = 36;

/// A skewed id in [0, n): floor(n u^2), u the keyed uniform of (s, id, sub).
vid_t skewed(rng::stream s, std::uint64_t id, std::uint32_t sub, vid_t n) {
  auto const w = rng::draw4(s, id, sub, 0);
  double const u = rng::uniform_double(w[0], w[1]);
  return std::min(n - 1, static_cast<vid_t>(static_cast<double>(n) * u * u));
}

/// Appends the edges (pairs, local ids) of relation r and of its reverse r + 1, both shifted to
/// global ids: src type at `so`, dst type at `d_off`.
void add_relation_pair(dataset& ds, hetero_schema& h, std::vector<std::pair<vid_t, vid_t>>& pairs,
                       vid_t so, vid_t d_off, std::int32_t r) {
  std::sort(pairs.begin(), pairs.end());
  pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
  for (auto [s, d] : pairs) {
    ds.src.push_back(s + so);
    ds.dst.push_back(d + d_off);
    h.edge_type.push_back(r);
  }
  for (auto& p : pairs) std::swap(p.first, p.second);
  std::sort(pairs.begin(), pairs.end());
  for (auto [d, s] : pairs) {
    ds.src.push_back(d + d_off);
    ds.dst.push_back(s + so);
    h.edge_type.push_back(r + 1);
  }
  std::vector<std::pair<vid_t, vid_t>>().swap(pairs);
}

}  // namespace

dataset generate_hetero(const hetero_options& opt, edge_stats* stats) {
  COOPGNN_EXPECTS(opt.scale >= 1 && opt.scale <= 34, "hetero: scale = {} must be in [1, 34]",
                  opt.scale);
  vid_t const P = vid_t{1} << opt.scale;
  vid_t const A = opt.authors >= 0 ? opt.authors : std::max<vid_t>(1, P >> 4);
  vid_t const I = opt.institutions >= 0 ? opt.institutions : std::max<vid_t>(1, P >> 10);
  COOPGNN_EXPECTS(A >= 1 && I >= 1, "hetero: --authors {} and --institutions {} must be >= 1", A,
                  I);
  COOPGNN_EXPECTS(opt.cites_factor >= 1 && opt.authors_per_paper >= 1,
                  "hetero: --cites-factor {} and --authors-per-paper {} must be >= 1",
                  opt.cites_factor, opt.authors_per_paper);
  COOPGNN_EXPECTS(opt.feature_dim >= 1 && opt.classes >= 1,
                  "hetero: --feature-dim {} and --classes {} must be >= 1", opt.feature_dim,
                  opt.classes);
  COOPGNN_EXPECTS(opt.train_fraction >= 0 && opt.valid_fraction >= 0 &&
                      opt.train_fraction + opt.valid_fraction <= 1.0 + 1e-12,
                  "hetero: split fractions train = {}, valid = {} must be in [0, 1] and sum to "
                  "at most 1",
                  opt.train_fraction, opt.valid_fraction);

  // Citations: R-MAT over the papers (global ids 0 .. P-1), relation 0.
  rmat_options ro;
  ro.scale = opt.scale;
  ro.edge_factor = opt.cites_factor;
  ro.seed = opt.seed;
  dataset ds = generate_rmat(ro, stats);
  ds.name =
      fmt::format("hetero-s{}-a{}-i{}-f{}-seed{}", opt.scale, A, I, opt.feature_dim, opt.seed);
  ds.num_nodes = P + A + I;
  hetero_schema h;
  h.node_types = {"paper", "author", "institution"};
  h.node_offsets = {0, P, P + A, P + A + I};
  h.edge_types = {"paper:cites:paper", "author:writes:paper", "paper:rev_writes:author",
                  "author:affiliated_with:institution", "institution:rev_affiliated_with:author"};
  h.edge_type.assign(ds.src.size(), 0);

  // Authorship and affiliation, each with its reverse.
  {
    rng::stream const s = rng::make_stream(opt.seed, rng::purpose::generate, kWrites);
    std::vector<std::pair<vid_t, vid_t>> pairs;
    pairs.reserve(static_cast<std::size_t>(P * opt.authors_per_paper));
    for (vid_t p = 0; p < P; ++p) {
      for (std::int64_t j = 0; j < opt.authors_per_paper; ++j) {
        pairs.emplace_back(
            skewed(s, static_cast<std::uint64_t>(p), static_cast<std::uint32_t>(j), A), p);
      }
    }
    add_relation_pair(ds, h, pairs, P, 0, 1);
  }
  {
    rng::stream const s = rng::make_stream(opt.seed, rng::purpose::generate, kAffiliations);
    std::vector<std::pair<vid_t, vid_t>> pairs;
    pairs.reserve(static_cast<std::size_t>(A));
    for (vid_t a = 0; a < A; ++a)
      pairs.emplace_back(a, skewed(s, static_cast<std::uint64_t>(a), 0, I));
    add_relation_pair(ds, h, pairs, P, P + A, 3);
  }

  // Paper labels and float16 class-conditional features, one row at a time.
  ds.num_classes = opt.classes;
  ds.labels.assign(static_cast<std::size_t>(ds.num_nodes), -1);
  rng::stream const sc = rng::make_stream(opt.seed, rng::purpose::generate, kPaperClasses);
  for (vid_t p = 0; p < P; ++p) {
    auto const w = rng::draw4(sc, static_cast<std::uint64_t>(p), 0, 0);
    ds.labels[static_cast<std::size_t>(p)] = std::min<std::int64_t>(
        opt.classes - 1, static_cast<std::int64_t>(rng::uniform_double(w[0], w[1]) *
                                                   static_cast<double>(opt.classes)));
  }
  std::int64_t const F = opt.feature_dim;
  double const sigma = std::sqrt(static_cast<double>(F) / 2.0);
  double const unit = 1.0 / std::sqrt(1.0 + sigma * sigma);
  rng::stream const sm = rng::make_stream(opt.seed, rng::purpose::generate, kClassMeans);
  rng::stream const sn = rng::make_stream(opt.seed, rng::purpose::generate, kFeatureNoise);
  std::vector<double> mu(static_cast<std::size_t>(opt.classes * F));
  for (std::int64_t c = 0; c < opt.classes; ++c)
    keyed_normal_row(sm, static_cast<std::uint64_t>(c), F, &mu[static_cast<std::size_t>(c * F)]);
  matrix<std::uint16_t> x(P, F);
  std::vector<double> eps(static_cast<std::size_t>(F));
  for (vid_t p = 0; p < P; ++p) {
    keyed_normal_row(sn, static_cast<std::uint64_t>(p), F, eps.data());
    const double* m = &mu[static_cast<std::size_t>(ds.labels[static_cast<std::size_t>(p)] * F)];
    std::uint16_t* row = x.row(p);
    for (std::int64_t j = 0; j < F; ++j) {
      row[j] = float_to_half_exact(static_cast<float>((m[j] + sigma * eps[j]) * unit));
    }
  }
  h.features.assign(3, matrix<float>());
  h.features16.assign(3, matrix<std::uint16_t>());
  h.features16[0] = std::move(x);
  h.feature_types = {feature_dtype::float16, feature_dtype::float32, feature_dtype::float32};
  h.feature_names = {"feat", "", ""};
  h.target_type = "paper";

  // The split of the papers.
  dataset papers;
  papers.num_nodes = P;
  keyed_split(papers, opt.train_fraction, opt.valid_fraction, opt.seed);
  ds.train = std::move(papers.train);
  ds.valid = std::move(papers.valid);
  ds.test = std::move(papers.test);
  ds.task_name = "node_classification";
  ds.hetero = std::move(h);
  return ds;
}

}  // namespace coopgnn
