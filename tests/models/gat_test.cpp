// GAT (conv_kind::gat, Velickovic et al., ICLR 2018) against a dense reference written here, its
// backward by central differences in double, the attention rows, zero in-degree and extreme
// logits (the bug classes of PyG #53 and DGL #2777). Cooperative(P) == single PE for GAT is in
// tests/pipeline/protocols_test.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "kernels/sparse/attention.hpp"
#include "kernels/sparse/edge_softmax.hpp"
#include "models/layers.hpp"
#include "tests/common/gradients.hpp"

namespace coopgnn::models {
namespace {

/// 3 destinations over 5 sources: dst 0 <- {1, 2, 3}; dst 1 <- {0, 4, 1} (1 is its own graph
/// self-loop); dst 2 <- {} (zero in-degree).
block tiny_block() {
  block b;
  b.num_dst = 3;
  b.src_ids = {10, 11, 12, 13, 14};
  b.indptr = {0, 3, 6, 6};
  b.indices = {1, 2, 3, 0, 4, 1};
  b.weights = {1.f / 3, 1.f / 3, 1.f / 3, 1.f / 3, 1.f / 3, 1.f / 3};
  b.src_degree = {3, 3, 0, 1, 1};
  return b;
}

matrix<double> random_matrix(std::int64_t r, std::int64_t c, std::uint64_t seed, double scale = 1) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> u(-scale, scale);
  matrix<double> m(r, c);
  for (std::int64_t i = 0; i < r; ++i)
    for (std::int64_t j = 0; j < c; ++j) m(i, j) = u(gen);
  return m;
}

/// Every parameter value, randomised (biases too, so they show in the output).
void randomise(parameter_set<double>& ps, std::uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  auto v = ps.values();
  for (std::size_t i = 0; i < v.size; ++i) v.data[i] = u(gen);
}

/// The GAT layer written out densely: per head k, z = h W, e_st = LeakyReLU(a_dst . z_s + a_src .
/// z_t) over N(s) = {s} (with self-loops) + the block's sources t != s of s, softmax, sum, then
/// concat or mean, + h_s W_res, + bias, ELU.
matrix<double> dense_gat(const block& b, const matrix<double>& h, const conv_layer<double>& l,
                         const parameter_set<double>& ps) {
  auto const& o = l.gat();
  auto const idx = l.param_indices();
  auto const w = ps.value(idx[0]);
  auto const ad = ps.value(idx[1]);
  auto const as = ps.value(idx[2]);
  auto const bias = ps.value(idx.back());
  std::int64_t const H = o.heads;
  std::int64_t const HF = w.cols;
  std::int64_t const F = HF / H;
  matrix<double> z(b.num_src(), HF);
  for (std::int64_t i = 0; i < b.num_src(); ++i)
    for (std::int64_t j = 0; j < HF; ++j)
      for (std::int64_t r = 0; r < h.cols(); ++r) z(i, j) += h(i, r) * w.data[r * HF + j];
  matrix<double> out(b.num_dst, l.out_dim());
  for (std::int64_t s = 0; s < b.num_dst; ++s) {
    std::vector<std::int64_t> nb;
    if (o.self_loops) nb.push_back(s);
    for (eid_t e = b.indptr[s]; e < b.indptr[s + 1]; ++e) {
      if (!(o.self_loops && b.indices[e] == s)) nb.push_back(b.indices[e]);
    }
    for (std::int64_t k = 0; k < H; ++k) {
      std::vector<double> sc;
      double mx = -1e300;
      for (auto t : nb) {
        double v = 0;
        for (std::int64_t f = 0; f < F; ++f)
          v += ad.data[k * F + f] * z(s, k * F + f) + as.data[k * F + f] * z(t, k * F + f);
        v = v > 0 ? v : o.negative_slope * v;
        sc.push_back(v);
        mx = std::max(mx, v);
      }
      double sum = 0;
      for (auto& v : sc) sum += (v = std::exp(v - mx));
      for (std::size_t n = 0; n < nb.size(); ++n) {
        for (std::int64_t f = 0; f < F; ++f) {
          double const m = sc[n] / sum * z(nb[n], k * F + f);
          if (o.concat) {
            out(s, k * F + f) += m;
          } else {
            out(s, f) += m / static_cast<double>(H);
          }
        }
      }
    }
    for (std::int64_t j = 0; j < l.out_dim(); ++j) {
      if (o.residual) {
        auto const wr = ps.value(idx[3]);
        for (std::int64_t r = 0; r < h.cols(); ++r)
          out(s, j) += h(s, r) * wr.data[r * l.out_dim() + j];
      }
      out(s, j) += bias.data[j];
      if (l.apply_relu() && out(s, j) <= 0) out(s, j) = std::exp(out(s, j)) - 1;
    }
  }
  return out;
}

struct gat_usecase {
  gat_options opt;
  std::int64_t out_dim;
  bool activated;
  float dropout;
};

class GatLayer : public ::testing::TestWithParam<gat_usecase> {};

TEST_P(GatLayer, ForwardMatchesTheDenseFormula) {
  auto u = GetParam();
  u.opt.attn_dropout = 0;
  exec_context const ctx(backend::host);
  parameter_set<double> ps;
  conv_layer<double> l(conv_kind::gat, 4, u.out_dim, 0, u.activated, 0.0f, ps, u.opt);
  ps.allocate(ctx);
  randomise(ps, 3);
  block const b = tiny_block();
  auto const h = random_matrix(5, 4, 4);
  conv_cache<double> c;
  auto const out = l.forward(ctx, view(b), host_view(h), step_key{}, &c);
  auto const ref = dense_gat(b, h, l, ps);
  ASSERT_EQ(out.rows(), 3);
  ASSERT_EQ(out.cols(), u.out_dim);
  double norm = 0;
  for (std::int64_t s = 0; s < 3; ++s) {
    for (std::int64_t j = 0; j < u.out_dim; ++j) {
      EXPECT_NEAR(out.view().host_row(s)[j], ref(s, j), 1e-12) << s << "," << j;
      norm += std::abs(ref(s, j));
    }
  }
  EXPECT_GT(norm, 0.1) << "vacuous reference";
  // Attention rows: every destination with an edge sums to 1 per head; the graph self-loop of
  // dst 1 (its edge 6 = local position 1 + 3 + 2 with the added loop) has weight 0.
  std::int64_t const ne = static_cast<std::int64_t>(c.softmax.size()) / u.opt.heads;
  std::vector<eid_t> ip = u.opt.self_loops ? std::vector<eid_t>{0, 4, 8, 9} : b.indptr;
  ASSERT_EQ(ne, ip.back());
  for (std::int64_t k = 0; k < u.opt.heads; ++k) {
    for (std::int64_t s = 0; s < 3; ++s) {
      if (ip[s] == ip[s + 1]) continue;
      double sum = 0;
      for (eid_t e = ip[s]; e < ip[s + 1]; ++e) sum += c.softmax.data()[k * ne + e];
      EXPECT_NEAR(sum, 1.0, 1e-12) << "head " << k << " dst " << s;
    }
    if (u.opt.self_loops) {
      EXPECT_EQ(c.softmax.data()[k * ne + 7], 0.0);
    }
  }
}

TEST_P(GatLayer, BackwardMatchesFiniteDifferences) {
  auto const u = GetParam();
  exec_context const ctx(backend::host);
  parameter_set<double> ps;
  conv_layer<double> l(conv_kind::gat, 4, u.out_dim, 1, u.activated, u.dropout, ps, u.opt);
  ps.allocate(ctx);
  randomise(ps, 5);
  block const b = tiny_block();
  auto h = random_matrix(5, 4, 6);
  auto const r = random_matrix(3, u.out_dim, 7);
  step_key const key{9, 2, true};  // dropout masks are fixed functions of the key
  auto loss = [&] {
    auto const out = l.forward(ctx, view(b), host_view(h), key, nullptr);
    double s = 0;
    for (std::int64_t i = 0; i < 3; ++i)
      for (std::int64_t j = 0; j < u.out_dim; ++j) s += out.view().host_row(i)[j] * r(i, j);
    return s;
  };
  conv_cache<double> c;
  (void)l.forward(ctx, view(b), host_view(h), key, &c);
  fill_zero(ctx, ps.grads());
  auto const gh = l.backward(ctx, view(b), host_view(r), c, true);
  matrix<double> gh_m(5, 4);
  for (std::int64_t i = 0; i < 5; ++i)
    for (std::int64_t j = 0; j < 4; ++j) gh_m(i, j) = gh.view().host_row(i)[j];
  test::expect_gradient("dL/dh", h, gh_m, loss, 1e-6);
  for (auto i : l.param_indices()) {
    auto v = ps.value(i);
    auto g = ps.grad(i);
    test::expect_gradient(ps.info(i).name, std::span<double>(v.data, v.size()),
                          std::span<const double>(g.data, g.size()), loss, 1e-6, 1e-6);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Gat, GatLayer,
    ::testing::Values(
        // 2 concatenated heads of 3, ELU, self-loops.
        gat_usecase{{2, true, 0.3f, 0.2f, false, true}, 6, true, 0.0f},
        // 2 averaged heads (the output layer), residual, input dropout.
        gat_usecase{{2, false, 0.0f, 0.2f, true, true}, 3, false, 0.25f},
        // 3 heads without self-loops (dst 2 has no edge at all), attention dropout.
        gat_usecase{{3, true, 0.4f, 0.1f, true, false}, 6, true, 0.0f}));

TEST(GatLayer, ZeroInDegreeDestinationGetsZeroNotNaN) {
  exec_context const ctx(backend::host);
  parameter_set<double> ps;
  gat_options o;
  o.heads = 2;
  o.self_loops = false;
  conv_layer<double> l(conv_kind::gat, 4, 4, 0, false, 0.0f, ps, o);
  ps.allocate(ctx);
  l.init(ctx, 1);  // zero bias
  block const b = tiny_block();
  auto const h = random_matrix(5, 4, 8);
  conv_cache<double> c;
  auto const out = l.forward(ctx, view(b), host_view(h), step_key{}, &c);
  for (std::int64_t j = 0; j < 4; ++j) EXPECT_EQ(out.view().host_row(2)[j], 0.0);
  auto const g = random_matrix(3, 4, 9);
  auto const gh = l.backward(ctx, view(b), host_view(g), c, true);
  for (std::int64_t i = 0; i < gh.size(); ++i) EXPECT_TRUE(std::isfinite(gh.view().data[i]));
}

TEST(GatLayer, ExtremeLogitsStayFinite) {
  // Kernel level: scores of +-1e4 in one row (exp would overflow without the max shift).
  exec_context const ctx(backend::host);
  std::vector<eid_t> ip{0, 3, 3};
  std::vector<float> sc{1e4f, -1e4f, 1e4f};
  std::vector<float> y(3);
  edge_softmax<float>(ip, sc, y);
  EXPECT_FLOAT_EQ(y[0], 0.5f);
  EXPECT_EQ(y[1], 0.0f);
  EXPECT_FLOAT_EQ(y[2], 0.5f);
  // Layer level: attention vectors scaled so that the scores reach ~1e4.
  parameter_set<float> ps;
  gat_options o;
  o.heads = 2;
  conv_layer<float> l(conv_kind::gat, 4, 4, 0, true, 0.0f, ps, o);
  ps.allocate(ctx);
  l.init(ctx, 2);
  for (std::size_t k : {l.param_indices()[1], l.param_indices()[2]}) {
    auto v = ps.value(k);
    for (std::int64_t i = 0; i < v.size(); ++i) v.data[i] = (i % 2 == 0 ? 1e4f : -1e4f);
  }
  block const b = tiny_block();
  matrix<float> h(5, 4);
  for (std::int64_t i = 0; i < 5; ++i)
    for (std::int64_t j = 0; j < 4; ++j) h(i, j) = static_cast<float>((i + 2 * j) % 3) - 1.0f;
  conv_cache<float> c;
  auto const out = l.forward(ctx, view(b), host_view(h), step_key{}, &c);
  double maxscore = 0;
  for (std::size_t e = 0; e < c.scores.size(); ++e) {
    if (std::isinf(c.scores.data()[e])) continue;  // masked graph self-loop
    maxscore = std::max(maxscore, std::abs(static_cast<double>(c.scores.data()[e])));
  }
  EXPECT_TRUE(std::isfinite(maxscore));
  EXPECT_GT(maxscore, 1e3);
  for (std::size_t e = 0; e < c.softmax.size(); ++e)
    EXPECT_TRUE(std::isfinite(c.softmax.data()[e]));
  for (std::int64_t i = 0; i < out.size(); ++i) EXPECT_TRUE(std::isfinite(out.view().data[i]));
  matrix<float> g(3, 4, std::vector<float>(12, 1.0f));
  auto const gh = l.backward(ctx, view(b), host_view(g), c, true);
  for (std::int64_t i = 0; i < gh.size(); ++i) EXPECT_TRUE(std::isfinite(gh.view().data[i]));
  for (std::size_t i = 0; i < ps.grads().size; ++i) EXPECT_TRUE(std::isfinite(ps.grads().data[i]));
}

TEST(GatLayer, RejectsBadOptions) {
  parameter_set<float> ps;
  gat_options o;
  o.heads = 3;
  EXPECT_THROW(conv_layer<float>(conv_kind::gat, 4, 4, 0, true, 0.0f, ps, o), logic_error);
  o.heads = 0;
  EXPECT_THROW(conv_layer<float>(conv_kind::gat, 4, 4, 0, true, 0.0f, ps, o), logic_error);
  o.heads = 2;
  o.negative_slope = -0.1f;
  EXPECT_THROW(conv_layer<float>(conv_kind::gat, 4, 4, 0, true, 0.0f, ps, o), logic_error);
  o.negative_slope = 0.2f;
  o.attn_dropout = 1.0f;
  EXPECT_THROW(conv_layer<float>(conv_kind::gat, 4, 4, 0, true, 0.0f, ps, o), logic_error);
  EXPECT_EQ(parse_conv_kind("gat"), conv_kind::gat);
  EXPECT_EQ(to_string(conv_kind::gat), "gat");
}

}  // namespace
}  // namespace coopgnn::models
