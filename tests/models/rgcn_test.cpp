// R-GCN (conv_kind::rgcn, Schlichtkrull et al., ESWC 2018, eqs. 2-3) against a dense reference
// written here (per-relation neighbour means, W_r from the bases), its backward by central
// differences in double, a relation with no edge into a destination, typed-block checks.
// Cooperative(P) == single PE for R-GCN on a typed graph is in tests/pipeline.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
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
    if (o.num_blocks > 0) {
      // Eq. 4: W_r = diag(Q_r1, ..., Q_rB); Q_rb is rows r in + b ib .. of the [R in, ob]
      // parameter, and W_r[i, j] is zero unless i and j fall in the same block.
      std::int64_t const ib = in / o.num_blocks, ob = od / o.num_blocks;
      if (i / ib != j / ob) return 0.0;
      return wrel.data[(r * in + i) * ob + j % ob];
    }
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
  std::int64_t out = 5;  // output width (block-diagonal cases: a multiple of the blocks)
};

class RgcnLayer : public ::testing::TestWithParam<rgcn_usecase> {};

TEST_P(RgcnLayer, ForwardMatchesTheDenseFormula) {
  auto const u = GetParam();
  exec_context const ctx(backend::host);
  parameter_set<double> ps;
  conv_layer<double> l(conv_kind::rgcn, 4, u.out, 0, u.activated, 0.0f, ps, {}, u.opt);
  ps.allocate(ctx);
  randomise(ps, 3);
  block const b = typed_block();
  auto const h = random_matrix(6, 4, 4);
  conv_cache<double> c;
  auto const out = l.forward(ctx, view(b), host_view(h), step_key{}, &c);
  auto const ref = dense_rgcn(h, l, ps);
  ASSERT_EQ(out.rows(), 3);
  ASSERT_EQ(out.cols(), u.out);
  double norm = 0;
  for (std::int64_t s = 0; s < 3; ++s) {
    for (std::int64_t j = 0; j < u.out; ++j) {
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
  conv_layer<double> l(conv_kind::rgcn, 4, u.out, 1, u.activated, u.dropout, ps, {}, u.opt);
  ps.allocate(ctx);
  randomise(ps, 5);
  block const b = typed_block();
  auto h = random_matrix(6, 4, 6);
  auto const r = random_matrix(3, u.out, 7);
  step_key const key{9, 2, true};
  auto loss = [&] {
    auto const out = l.forward(ctx, view(b), host_view(h), key, nullptr);
    double s = 0;
    for (std::int64_t i = 0; i < 3; ++i)
      for (std::int64_t j = 0; j < u.out; ++j) s += out.view().host_row(i)[j] * r(i, j);
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
  // Backward accumulates into a non-zero gradient (the blocks' gather adds to what is there).
  for (std::size_t i = 0; i < first.size(); ++i) ps.grads().data[i] = 0.25 * double(i % 7 + 1);
  (void)l.backward(ctx, view(b), host_view(r), c, false);
  for (std::size_t i = 0; i < first.size(); ++i)
    EXPECT_NEAR(ps.grads().data[i], 0.25 * double(i % 7 + 1) + first[i], 1e-12) << i;
}

INSTANTIATE_TEST_SUITE_P(
    Rgcn, RgcnLayer,
    ::testing::Values(rgcn_usecase{{kR, 0, true}, true, 0.0f},   // full W_r, ReLU
                      rgcn_usecase{{kR, 2, true}, false, 0.3f},  // 2 bases, input dropout
                      rgcn_usecase{{kR, 4, false}, true, 0.0f},  // B > R, no self-loop weight
                      rgcn_usecase{{kR, 1, true}, true, 0.5f},
                      // Block-diagonal (eq. 4): 2 blocks of [2, 3]; 4 blocks of [1, 2]; one
                      // block (a full W_r through the expansion path).
                      rgcn_usecase{{kR, 0, true, 2}, true, 0.0f, 6},
                      rgcn_usecase{{kR, 0, false, 4}, false, 0.3f, 8},
                      rgcn_usecase{{kR, 0, true, 1}, true, 0.0f, 5}));

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

TEST(RgcnLayer, BlocksMustDivideTheWidthsAndExcludeBases) {
  parameter_set<double> ps;
  EXPECT_THROW(conv_layer<double>(conv_kind::rgcn, 4, 5, 0, false, 0.0f, ps, {}, {kR, 0, true, 2}),
               logic_error);  // out 5
  EXPECT_THROW(conv_layer<double>(conv_kind::rgcn, 6, 4, 0, false, 0.0f, ps, {}, {kR, 0, true, 4}),
               logic_error);  // in 6
  EXPECT_THROW(conv_layer<double>(conv_kind::rgcn, 4, 4, 0, false, 0.0f, ps, {}, {kR, 2, true, 2}),
               logic_error);  // bases and blocks
  EXPECT_THROW(conv_layer<double>(conv_kind::rgcn, 4, 4, 0, false, 0.0f, ps, {}, {kR, 0, true, -1}),
               logic_error);
  try {
    conv_layer<double>(conv_kind::rgcn, 4, 5, 0, false, 0.0f, ps, {}, {kR, 0, true, 2});
    ADD_FAILURE() << "no error";
  } catch (const logic_error& e) {
    EXPECT_NE(std::string(e.what()).find("diagonal blocks"), std::string::npos) << e.what();
  }
}

TEST(RgcnLayer, BlockDiagonalWeightsAreZeroOffTheBlocks) {
  // One block entry set, every other parameter zero: W_1[2, 3 + 1] = 1 is the only non-zero of
  // the expanded weights, so exactly one output column can be non-zero (checked against values
  // computed here from the typed_block's relation-1 neighbours, not through dense_rgcn).
  exec_context const ctx(backend::host);
  parameter_set<double> ps;
  conv_layer<double> l(conv_kind::rgcn, 4, 6, 0, false, 0.0f, ps, {}, {kR, 0, false, 2});
  ps.allocate(ctx);
  fill_zero(ctx, ps.values());
  auto const q = ps.value(l.param_indices()[0]);  // [R 4, 3]
  ASSERT_EQ(q.rows, kR * 4);
  ASSERT_EQ(q.cols, 3);
  q.data[(1 * 4 + 2) * 3 + 1] = 1.0;  // relation 1, block 1 (rows 2..3), W_1[2, 3 + 1] = 1
  block const b = typed_block();
  auto const h = random_matrix(6, 4, 21);
  auto const out = l.forward(ctx, view(b), host_view(h), step_key{}, nullptr);
  // Relation-1 neighbours: dst 0 <- {3} (weight 1), dst 1 <- {0, 4, 5} (weight 1/3), dst 2
  // none: out[s, 4] = sum_t w h[t, 2]; every other output is zero.
  double const want0 = h(3, 2);
  double const want1 = (h(0, 2) + h(4, 2) + h(5, 2)) * double(1.0f / 3.0f);
  for (std::int64_t s = 0; s < 3; ++s) {
    for (std::int64_t j = 0; j < 6; ++j) {
      double const want = j != 4 ? 0.0 : s == 0 ? want0 : s == 1 ? want1 : 0.0;
      EXPECT_NEAR(out.view().host_row(s)[j], want, 1e-12) << s << "," << j;
    }
  }
}

TEST(RgcnLayer, BasesDecomposeTheRelationWeights) {
  // init: with bases, W_r = sum_b a_rb V_b, so the parameter count is B (in out) + R B, not
  // R in out; without, R in out.
  parameter_set<float> with, without;
  conv_layer<float> a(conv_kind::rgcn, 8, 6, 0, true, 0.0f, with, {}, {5, 2, true});
  conv_layer<float> b(conv_kind::rgcn, 8, 6, 0, true, 0.0f, without, {}, {5, 0, true});
  EXPECT_EQ(with.num_values(), 8 * 6 + 2 * 8 * 6 + 5 * 2 + 6);
  EXPECT_EQ(without.num_values(), 8 * 6 + 5 * 8 * 6 + 6);
  // Blocks: R B (in / B)(out / B) = R in out / B.
  parameter_set<float> blocks;
  conv_layer<float> c(conv_kind::rgcn, 8, 6, 0, true, 0.0f, blocks, {}, {5, 0, true, 2});
  EXPECT_EQ(blocks.num_values(), 8 * 6 + 5 * 2 * 4 * 3 + 6);
}

}  // namespace
}  // namespace coopgnn::models
