// Host edge softmax: hand-computed values, an independent naive formula (no max subtraction, in
// long double), overflow safety, finite-difference check of the backward, empty blocks,
// zero-degree destinations and shape errors.
#include "kernels/sparse/edge_softmax.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "runtime/core/error.hpp"

namespace coopgnn {
namespace {

TEST(edge_softmax, hand_computed) {
  // dst 0: no edges; dst 1: scores (0, ln 3) -> (1/4, 3/4); dst 2: one edge -> 1.
  std::vector<eid_t> const indptr{0, 0, 2, 3};
  std::vector<double> const scores{0.0, std::log(3.0), -7.5};
  std::vector<double> out(3, -1.0);
  edge_softmax<double>(indptr, scores, out);
  EXPECT_NEAR(out[0], 0.25, 1e-15);
  EXPECT_NEAR(out[1], 0.75, 1e-15);
  EXPECT_EQ(out[2], 1.0);
}

TEST(edge_softmax, large_scores_do_not_overflow) {
  std::vector<eid_t> const indptr{0, 3};
  std::vector<float> const scores{1000.0f, 1000.0f, -1000.0f};
  std::vector<float> out(3);
  edge_softmax<float>(indptr, scores, out);
  EXPECT_FLOAT_EQ(out[0], 0.5f);
  EXPECT_FLOAT_EQ(out[1], 0.5f);
  EXPECT_EQ(out[2], 0.0f);
}

/// Random CSR: destination 0 has no edges, destination 1 has 40 (more than a warp), the others
/// 0..6; scores in [-3, 3).
struct random_case {
  std::vector<eid_t> indptr;
  std::vector<double> scores;
};

random_case make_case(std::int64_t num_dst, std::uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> u(-3.0, 3.0);
  random_case c;
  c.indptr.push_back(0);
  for (std::int64_t s = 0; s < num_dst; ++s) {
    std::int64_t const deg = s == 0 ? 0 : (s == 1 ? 40 : std::int64_t(gen() % 7));
    for (std::int64_t k = 0; k < deg; ++k) c.scores.push_back(u(gen));
    c.indptr.push_back(static_cast<eid_t>(c.scores.size()));
  }
  return c;
}

TEST(edge_softmax, matches_naive_formula) {
  random_case const c = make_case(50, 7);
  std::vector<double> out(c.scores.size());
  edge_softmax<double>(c.indptr, c.scores, out);
  std::vector<float> const scores_f(c.scores.begin(), c.scores.end());
  std::vector<float> out_f(c.scores.size());
  edge_softmax<float>(c.indptr, scores_f, out_f);
  for (std::size_t s = 0; s + 1 < c.indptr.size(); ++s) {
    long double denom = 0;
    for (eid_t e = c.indptr[s]; e < c.indptr[s + 1]; ++e)
      denom += std::exp((long double)c.scores[e]);
    long double total = 0;
    for (eid_t e = c.indptr[s]; e < c.indptr[s + 1]; ++e) {
      double const expect = static_cast<double>(std::exp((long double)c.scores[e]) / denom);
      EXPECT_NEAR(out[e], expect, 1e-14) << "edge " << e;
      EXPECT_NEAR(out_f[e], expect, 1e-6) << "edge " << e;
      total += out[e];
    }
    if (c.indptr[s + 1] > c.indptr[s]) {
      EXPECT_NEAR(static_cast<double>(total), 1.0, 1e-14);
    }
  }
}

TEST(edge_softmax, backward_matches_hand_formula_and_finite_differences) {
  random_case const c = make_case(20, 9);
  std::size_t const m = c.scores.size();
  std::mt19937_64 gen(3);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<double> g(m);
  for (double& v : g) v = u(gen);
  std::vector<double> y(m);
  edge_softmax<double>(c.indptr, c.scores, y);
  std::vector<double> grad(m);
  edge_softmax_backward<double>(c.indptr, y, g, grad);

  // L(scores) = sum_e g[e] * softmax(scores)[e]; central differences with step h.
  auto loss = [&](const std::vector<double>& sc) {
    std::vector<double> yy(m);
    edge_softmax<double>(c.indptr, sc, yy);
    double l = 0;
    for (std::size_t e = 0; e < m; ++e) l += g[e] * yy[e];
    return l;
  };
  double const h = 1e-6;
  int nonzero = 0;
  for (std::size_t e = 0; e < m; ++e) {
    auto plus = c.scores;
    auto minus = c.scores;
    plus[e] += h;
    minus[e] -= h;
    double const fd = (loss(plus) - loss(minus)) / (2 * h);
    EXPECT_NEAR(grad[e], fd, 1e-8) << "edge " << e;
    if (std::abs(grad[e]) > 1e-6) ++nonzero;
  }
  EXPECT_GT(nonzero, static_cast<int>(m / 2));

  // Hand-computed: y = (1/4, 3/4), g = (1, 0): dot = 1/4, grad = (1/4 * 3/4, 3/4 * -1/4).
  std::vector<eid_t> const ip{0, 2};
  std::vector<double> const yy{0.25, 0.75};
  std::vector<double> gg{1.0, 0.0};
  std::vector<double> gs(2);
  edge_softmax_backward<double>(ip, yy, gg, gs);
  EXPECT_DOUBLE_EQ(gs[0], 0.1875);
  EXPECT_DOUBLE_EQ(gs[1], -0.1875);
  // In place (grad_scores == grad_y) gives the same.
  edge_softmax_backward<double>(ip, yy, gg, gg);
  EXPECT_EQ(gg, gs);
}

TEST(edge_softmax, in_place_forward) {
  random_case c = make_case(10, 2);
  std::vector<double> out(c.scores.size());
  edge_softmax<double>(c.indptr, c.scores, out);
  edge_softmax<double>(c.indptr, c.scores, c.scores);
  EXPECT_EQ(c.scores, out);
}

TEST(edge_softmax, empty_and_zero_degree) {
  std::vector<eid_t> const only_zero{0};
  std::vector<float> none;
  EXPECT_NO_THROW(edge_softmax<float>(only_zero, none, none));
  EXPECT_NO_THROW(edge_softmax_backward<float>(only_zero, none, none, none));
  std::vector<eid_t> const no_edges{0, 0, 0};
  EXPECT_NO_THROW(edge_softmax<float>(no_edges, none, none));
  EXPECT_NO_THROW(edge_softmax_backward<float>(no_edges, none, none, none));
}

TEST(edge_softmax, rejects_bad_shapes) {
  std::vector<eid_t> const indptr{0, 2, 3};
  std::vector<float> const s3(3, 0.0f);
  std::vector<float> o3(3);
  std::vector<float> o2(2);
  EXPECT_THROW(edge_softmax<float>(indptr, s3, o2), logic_error);
  EXPECT_THROW(edge_softmax<float>(indptr, std::vector<float>(4, 0.0f), o3), logic_error);
  EXPECT_THROW(edge_softmax<float>(std::vector<eid_t>{}, s3, o3), logic_error);
  EXPECT_THROW(edge_softmax<float>(std::vector<eid_t>{1, 3}, s3, o3), logic_error);
  EXPECT_THROW(edge_softmax<float>(std::vector<eid_t>{0, 2, 1, 3}, s3, o3), logic_error);
  EXPECT_THROW(edge_softmax_backward<float>(indptr, s3, std::vector<float>(2), o3), logic_error);
  EXPECT_THROW(edge_softmax_backward<float>(indptr, s3, s3, o2), logic_error);
  try {
    edge_softmax_backward<float>(indptr, s3, s3, o2);
    FAIL() << "no exception";
  } catch (const logic_error& e) {
    EXPECT_NE(std::string(e.what()).find("grad_scores"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace coopgnn
