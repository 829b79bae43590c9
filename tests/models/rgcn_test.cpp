// R-GCN (conv_kind::rgcn, Schlichtkrull et al., ESWC 2018, eqs. 2-3) against a dense reference
// written here (per-relation neighbour means, W_r from the bases), its backward by central
// differences in double, a relation with no edge into a destination, typed-block checks.
// Cooperative(P) == single PE for R-GCN on a typed graph is in tests/pipeline.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "models/layers.hpp"
#include "tests/common/gradients.hpp"

namespace coopgnn::models {
namespace {

constexpr std::int32_t kR = 3;

/// A typed block: 3 destinations over 6 sources, R = 3 rows per destination (row s*3 + r).
/// dst 0: r0 <- {1, 2}, r1 <- {3}, r2 <- {};  dst 1: r0 <- {}, r1 <- {0, 4, 5}, r2 <- {2};
/// dst 2: no edge of any relation (zero in-degree). Weights 1 / |N_r(s)| (full neighbourhoods).
block typed_block() {
  block b;
  b.num_dst = 3;
  b.num_relations = kR;
  b.src_ids = {20, 21, 22, 23, 24, 25};
  b.indptr = {0, 2, 3, 3, 3, 6, 7, 7, 7, 7};
  b.indices = {1, 2, 3, 0, 4, 5, 2};
  b.weights = {0.5f, 0.5f, 1.f, 1.f / 3, 1.f / 3, 1.f / 3, 1.f};
  b.src_degree = {3, 4, 0, 1, 1, 1};
  return b;
}

matrix<double> random_matrix(std::int64_t r, std::int64_t c, std::uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  matrix<double> m(r, c);
  for (std::int64_t i = 0; i < r; ++i)
    for (std::int64_t j = 0; j < c; ++j) m(i, j) = u(gen);
  return m;
}

void randomise(parameter_set<double>& ps, std::uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  auto v = ps.values();
  for (std::size_t i = 0; i < v.size; ++i) v.data[i] = u(gen);
}

/// Eq. 2 written out: out_s = h_s W_0 + sum_r (1/|N_r(s)|) sum_{t in N_r(s)} h_t W_r + b, with
/// W_r = sum_b a_rb V_b (eq. 3) when the layer has bases; ReLU when activated. The neighbour
/// lists are the typed_block's, restated here (not read from the block).
matrix<double> dense_rgcn(const matrix<double>& h, const conv_layer<double>& l,
                          const parameter_set<double>& ps) {
  std::vector<std::vector<std::vector<std::int64_t>>> nbrs = {
      {{1, 2}, {3}, {}}, {{}, {0, 4, 5}, {2}}, {{}, {}, {}}};
  auto const& o = l.rgcn();
  auto const idx = l.param_indices();
  std::size_t k = 0;
  tensor_view<const double> w0;
  if (o.self_loop) w0 = ps.value(idx[k++]);
  auto const wrel = ps.value(idx[k++]);
  tensor_view<const double> coeff;
  if (o.num_bases > 0) coeff = ps.value(idx[k++]);
  auto const bias = ps.value(idx[k]);
  std::int64_t const in = l.in_dim(), od = l.out_dim();
  auto W = [&](std::int64_t r, std::int64_t i, std::int64_t j) {
    if (o.num_bases == 0) return wrel.data[(r * in + i) * od + j];
    double v = 0;
    for (std::int64_t b = 0; b < o.num_bases; ++b)
      v += coeff.data[r * o.num_bases + b] * wrel.data[(b * in + i) * od + j];
    return v;
  };
  matrix<double> out(3, od);
  for (std::int64_t s = 0; s < 3; ++s) {
    for (std::int64_t j = 0; j < od; ++j) {
      double v = bias.data[j];
      if (o.self_loop)
        for (std::int64_t i = 0; i < in; ++i) v += h(s, i) * w0.data[i * od + j];
      for (std::int64_t r = 0; r < kR; ++r) {
        auto const& n = nbrs[s][r];
        // 1 / |N_r(s)| as the block stores it: a float32 weight.
        double const c = static_cast<double>(1.0f / static_cast<float>(n.size()));
        for (auto t : n)
          for (std::int64_t i = 0; i < in; ++i) v += h(t, i) * W(r, i, j) * c;
      }
      out(s, j) = l.apply_relu() ? std::max(0.0, v) : v;
    }
  }
  return out;
}

struct rgcn_usecase {
  rgcn_options opt;
  bool activated;
  float dropout;
};

class RgcnLayer : public ::testing::TestWithParam<rgcn_usecase> {};

TEST_P(RgcnLayer, ForwardMatchesTheDenseFormula) {
  auto const u = GetParam();
  exec_context const ctx(backend::host);
  parameter_set<double> ps;
  conv_layer<double> l(conv_kind::rgcn, 4, 5, 0, u.activated, 0.0f, ps, {}, u.opt);
  ps.allocate(ctx);
  randomise(ps, 3);
  block const b = typed_block();
  auto const h = random_matrix(6, 4, 4);
  conv_cache<double> c;
  auto const out = l.forward(ctx, view(b), host_view(h), step_key{}, &c);
  auto const ref = dense_rgcn(h, l, ps);
  ASSERT_EQ(out.rows(), 3);
  ASSERT_EQ(out.cols(), 5);
  double norm = 0;
  for (std::int64_t s = 0; s < 3; ++s) {
    for (std::int64_t j = 0; j < 5; ++j) {
      EXPECT_NEAR(out.view().host_row(s)[j], ref(s, j), 1e-12) << s << "," << j;
      norm += std::abs(ref(s, j));
    }
  }
  EXPECT_GT(norm, 0.1) << "vacuous reference";
}

TEST_P(RgcnLayer, BackwardMatchesFiniteDifferences) {
  auto const u = GetParam();
  exec_context const ctx(backend::host);
  parameter_set<double> ps;
  conv_layer<double> l(conv_kind::rgcn, 4, 5, 1, u.activated, u.dropout, ps, {}, u.opt);
  ps.allocate(ctx);
  randomise(ps, 5);
  block const b = typed_block();
  auto h = random_matrix(6, 4, 6);
  auto const r = random_matrix(3, 5, 7);
  step_key const key{9, 2, true};
  auto loss = [&] {
    auto const out = l.forward(ctx, view(b), host_view(h), key, nullptr);
    double s = 0;
    for (std::int64_t i = 0; i < 3; ++i)
      for (std::int64_t j = 0; j < 5; ++j) s += out.view().host_row(i)[j] * r(i, j);
    return s;
  };
  conv_cache<double> c;
  (void)l.forward(ctx, view(b), host_view(h), key, &c);
  fill_zero(ctx, ps.grads());
  auto const gh = l.backward(ctx, view(b), host_view(r), c, true);
  matrix<double> gh_m(6, 4);
  for (std::int64_t i = 0; i < 6; ++i)
    for (std::int64_t j = 0; j < 4; ++j) gh_m(i, j) = gh.view().host_row(i)[j];
  test::expect_gradient("dL/dh", h, gh_m, loss, 1e-6);
  for (auto i : l.param_indices()) {
    auto v = ps.value(i);
    auto g = ps.grad(i);
    test::expect_gradient(ps.info(i).name, std::span<double>(v.data, v.size()),
                          std::span<const double>(g.data, g.size()), loss, 1e-6, 1e-6);
  }
  // The input layer: the same parameter gradients, no input gradient.
  std::vector<double> first(ps.grads().data, ps.grads().data + ps.grads().size);
  fill_zero(ctx, ps.grads());
  auto const none = l.backward(ctx, view(b), host_view(r), c, false);
  EXPECT_EQ(none.size(), 0);
  for (std::size_t i = 0; i < first.size(); ++i) EXPECT_EQ(ps.grads().data[i], first[i]) << i;
}

INSTANTIATE_TEST_SUITE_P(
    Rgcn, RgcnLayer,
    ::testing::Values(rgcn_usecase{{kR, 0, true}, true, 0.0f},   // full W_r, ReLU
                      rgcn_usecase{{kR, 2, true}, false, 0.3f},  // 2 bases, input dropout
                      rgcn_usecase{{kR, 4, false}, true, 0.0f},  // B > R, no self-loop weight
                      rgcn_usecase{{kR, 1, true}, true, 0.5f}));

TEST(RgcnLayer, DestinationWithoutEdgesGetsItsSelfTermOnly) {
  exec_context const ctx(backend::host);
  parameter_set<double> ps;
  conv_layer<double> l(conv_kind::rgcn, 4, 5, 0, false, 0.0f, ps, {}, {kR, 2, true});
  ps.allocate(ctx);
  randomise(ps, 11);
  block const b = typed_block();
  auto const h = random_matrix(6, 4, 12);
  auto const out = l.forward(ctx, view(b), host_view(h), step_key{}, nullptr);
  auto const idx = l.param_indices();
  auto const w0 = ps.value(idx[0]);
  auto const bias = ps.value(idx.back());
  for (std::int64_t j = 0; j < 5; ++j) {
    double v = bias.data[j];
    for (std::int64_t i = 0; i < 4; ++i) v += h(2, i) * w0.data[i * 5 + j];
    EXPECT_NEAR(out.view().host_row(2)[j], v, 1e-12);
    EXPECT_TRUE(std::isfinite(out.view().host_row(2)[j]));
  }
}

TEST(RgcnLayer, RefusesBlocksOfAnotherRelationCount) {
  exec_context const ctx(backend::host);
  parameter_set<double> ps;
  conv_layer<double> l(conv_kind::rgcn, 4, 5, 0, false, 0.0f, ps, {}, {2, 0, true});
  ps.allocate(ctx);
  block const b = typed_block();  // 3 relations
  auto const h = random_matrix(6, 4, 1);
  EXPECT_THROW((void)l.forward(ctx, view(b), host_view(h), step_key{}, nullptr), logic_error);
  // And an untyped layer refuses the typed block.
  parameter_set<double> ps2;
  conv_layer<double> sage(conv_kind::sage, 4, 5, 0, false, 0.0f, ps2);
  ps2.allocate(ctx);
  EXPECT_THROW((void)sage.forward(ctx, view(b), host_view(h), step_key{}, nullptr), logic_error);
  EXPECT_THROW(conv_layer<double>(conv_kind::rgcn, 4, 5, 0, false, 0.0f, ps2, {}, {0, 0, true}),
               logic_error);
}

TEST(RgcnLayer, BasesDecomposeTheRelationWeights) {
  // init: with bases, W_r = sum_b a_rb V_b, so the parameter count is B (in out) + R B, not
  // R in out; without, R in out.
  parameter_set<float> with, without;
  conv_layer<float> a(conv_kind::rgcn, 8, 6, 0, true, 0.0f, with, {}, {5, 2, true});
  conv_layer<float> b(conv_kind::rgcn, 8, 6, 0, true, 0.0f, without, {}, {5, 0, true});
  EXPECT_EQ(with.num_values(), 8 * 6 + 2 * 8 * 6 + 5 * 2 + 6);
  EXPECT_EQ(without.num_values(), 8 * 6 + 5 * 8 * 6 + 6);
}

}  // namespace
}  // namespace coopgnn::models
