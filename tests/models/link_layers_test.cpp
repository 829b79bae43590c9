// Link-prediction layers (docs/design.md section 7.1): norm_activation (LayerNorm, PReLU) and both
// decoders against formulas written here and central finite differences in double; the embedding
// table's lazy Adam touches exactly the rows a step read.
#include "models/link_layers.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "kernels/dense/link_ops.hpp"
#include "models/embedding.hpp"
#include "models/model.hpp"
#include "runtime/core/error.hpp"
#include "tests/common/gradients.hpp"

namespace coopgnn::models {
namespace {

using test::expect_gradient;

matrix<double> random_matrix(std::int64_t rows, std::int64_t cols, std::uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  matrix<double> m(rows, cols);
  for (double& v : m.values()) v = u(gen);
  return m;
}

double dot(const matrix<double>& a, const matrix<double>& b) {
  double s = 0;
  for (std::size_t i = 0; i < a.values().size(); ++i) s += a.values()[i] * b.values()[i];
  return s;
}

/// Every parameter of `ps` randomised (so PReLU slopes and LayerNorm gains are not trivial).
void randomise(parameter_set<double>& ps, std::uint64_t seed, double lo = 0.2) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> u(lo, 1.2);
  for (double& v : ps.values().host()) v = u(gen);
}

TEST(norm_activation, forward_matches_formulas) {
  exec_context const ctx;
  parameter_set<double> ps;
  norm_activation<double> na(5, true, activation_kind::prelu, 3, ps);
  ps.allocate(ctx);
  na.init(ctx);
  ASSERT_EQ(ps.count(), 3u);
  EXPECT_EQ(ps.info(0).name, "ln3.gamma");
  EXPECT_EQ(ps.info(2).name, "prelu3.alpha");
  randomise(ps, 4);
  auto const x = random_matrix(4, 5, 1);
  auto const y = std::move(na.forward(ctx, host_view(x), nullptr)).release_host();
  auto const gamma = ps.value(0).flat().host();
  auto const beta = ps.value(1).flat().host();
  double const alpha = ps.value(2).flat().host()[0];
  for (std::int64_t i = 0; i < 4; ++i) {
    double mu = 0, var = 0;
    for (std::int64_t j = 0; j < 5; ++j) mu += x(i, j) / 5;
    for (std::int64_t j = 0; j < 5; ++j) var += (x(i, j) - mu) * (x(i, j) - mu) / 5;
    for (std::int64_t j = 0; j < 5; ++j) {
      double const n = (x(i, j) - mu) / std::sqrt(var + 1e-5) * gamma[j] + beta[j];
      EXPECT_NEAR(y(i, j), n > 0 ? n : alpha * n, 1e-12);
    }
  }
}

TEST(norm_activation, backward_matches_finite_differences) {
  for (bool ln : {false, true}) {
    for (auto act : {activation_kind::relu, activation_kind::prelu}) {
      if (!ln && act == activation_kind::relu) continue;  // the conv's own ReLU
      SCOPED_TRACE(std::string(ln ? "layernorm+" : "") + to_string(act));
      exec_context const ctx;
      parameter_set<double> ps;
      norm_activation<double> na(6, ln, act, 0, ps);
      ps.allocate(ctx);
      na.init(ctx);
      randomise(ps, 8);
      auto x = random_matrix(5, 6, 2);
      auto const r = random_matrix(5, 6, 3);
      auto loss = [&] {
        return dot(r, std::move(na.forward(ctx, host_view(x), nullptr)).release_host());
      };
      norm_activation_cache<double> cache;
      (void)na.forward(ctx, host_view(x), &cache);
      fill_zero(ctx, ps.grads());
      auto const gx = std::move(na.backward(ctx, host_view(r), cache)).release_host();
      expect_gradient("d/dx", x, gx, loss);
      for (std::size_t i = 0; i < ps.count(); ++i) {
        auto const g = ps.grad(i).flat().host();
        std::vector<double> const analytic(g.begin(), g.end());
        expect_gradient("d/d" + ps.info(i).name, ps.value(i).flat().host(), analytic, loss);
      }
    }
  }
}

TEST(link_decoder, dot_scores_and_mlp_formula) {
  exec_context const ctx;
  auto const z = random_matrix(6, 4, 5);
  std::vector<std::int64_t> const src = {0, 0, 5, 3, 2};
  std::vector<std::int64_t> const dst = {1, 4, 5, 0, 2};
  {
    parameter_set<double> ps;
    link_decoder<double> dec(decoder_kind::dot, 4, 0, 9, ps);
    ps.allocate(ctx);
    EXPECT_EQ(ps.count(), 0u);
    auto const s = dec.forward(ctx, host_view(z), host_view(src), host_view(dst), nullptr);
    for (std::size_t i = 0; i < src.size(); ++i) {
      double e = 0;
      for (std::int64_t j = 0; j < 4; ++j) e += z(src[i], j) * z(dst[i], j);
      EXPECT_NEAR(s.host()[i], e, 1e-12);
    }
  }
  parameter_set<double> ps;
  link_decoder<double> dec(decoder_kind::mlp, 4, 3, 9, ps);
  ps.allocate(ctx);
  dec.init(ctx, 1);
  randomise(ps, 6);
  ASSERT_EQ(ps.count(), 5u);  // W1, b1, alpha, w2, b2
  auto const s = dec.forward(ctx, host_view(z), host_view(src), host_view(dst), nullptr);
  auto const w1 = ps.value(0);
  auto const b1 = ps.value(1).flat().host();
  double const alpha = ps.value(2).flat().host()[0];
  auto const w2 = ps.value(3);
  double const b2 = ps.value(4).flat().host()[0];
  for (std::size_t i = 0; i < src.size(); ++i) {
    double e = b2;
    for (std::int64_t o = 0; o < 3; ++o) {
      double a = b1[o];
      for (std::int64_t j = 0; j < 4; ++j) a += z(src[i], j) * z(dst[i], j) * w1.host_row(j)[o];
      e += (a > 0 ? a : alpha * a) * w2.host_row(o)[0];
    }
    EXPECT_NEAR(s.host()[i], e, 1e-12);
  }
  EXPECT_THROW(dec.forward(ctx, host_view(z), host_view(std::vector<std::int64_t>{6}),
                           host_view(std::vector<std::int64_t>{0}), nullptr),
               logic_error);
}

TEST(link_decoder, backward_matches_finite_differences) {
  for (auto kind : {decoder_kind::dot, decoder_kind::mlp}) {
    SCOPED_TRACE(to_string(kind));
    exec_context const ctx;
    parameter_set<double> ps;
    link_decoder<double> dec(kind, 4, 5, 2, ps);
    ps.allocate(ctx);
    dec.init(ctx, 3);
    // Signed weights: some PReLU inputs are negative, so the slope's gradient is not zero.
    if (kind == decoder_kind::mlp) randomise(ps, 11, -1.0);
    auto z = random_matrix(7, 4, 12);
    // Row 6 is read by no pair: its gradient must be zero. Row 0 is read several times.
    std::vector<std::int64_t> const src = {0, 0, 1, 3, 2, 0};
    std::vector<std::int64_t> const dst = {1, 4, 5, 0, 2, 0};
    auto const r = random_matrix(6, 1, 13);
    auto loss = [&] {
      auto const s = dec.forward(ctx, host_view(z), host_view(src), host_view(dst), nullptr);
      double l = 0;
      for (std::size_t i = 0; i < src.size(); ++i)
        l += r(static_cast<std::int64_t>(i), 0) * s.host()[i];
      return l;
    };
    decoder_cache<double> cache;
    (void)dec.forward(ctx, host_view(z), host_view(src), host_view(dst), &cache);
    fill_zero(ctx, ps.grads());
    std::vector<double> const gs(r.values().begin(), r.values().end());
    auto const gz =
        std::move(dec.backward(ctx, host_view(gs), host_view(src), host_view(dst), 7, cache))
            .release_host();
    for (std::int64_t j = 0; j < 4; ++j) EXPECT_EQ(gz(6, j), 0.0);
    expect_gradient("d/dz", z, gz, loss);
    for (std::size_t i = 0; i < ps.count(); ++i) {
      auto const g = ps.grad(i).flat().host();
      std::vector<double> const analytic(g.begin(), g.end());
      expect_gradient("d/d" + ps.info(i).name, ps.value(i).flat().host(), analytic, loss);
    }
  }
}

TEST(link_decoder, distmult_matches_a_dense_reference) {
  // s_i = sum_k z[u_i, k] W[r_i, k] z[v_i, k] (Yang et al. 2015), written out here.
  exec_context const ctx;
  parameter_set<double> ps;
  link_decoder<double> dec(decoder_kind::distmult, 4, 0, 6, ps, 3);
  ps.allocate(ctx);
  dec.init(ctx, 1);
  ASSERT_EQ(ps.count(), 1u);
  EXPECT_EQ(ps.info(0).name, "distmult6.relation");
  EXPECT_EQ(ps.info(0).rows, 3);
  EXPECT_EQ(ps.info(0).cols, 4);
  EXPECT_EQ(dec.num_relations(), 3);
  auto const z = random_matrix(6, 4, 5);
  std::vector<std::int64_t> const src = {0, 0, 5, 3, 2, 1};
  std::vector<std::int64_t> const dst = {1, 4, 5, 0, 2, 1};
  std::vector<std::int64_t> const rel = {0, 2, 1, 2, 0, 1};
  {
    // All-ones diagonals at initialisation: the dot product.
    auto const s =
        dec.forward(ctx, host_view(z), host_view(src), host_view(dst), host_view(rel), nullptr);
    for (std::size_t i = 0; i < src.size(); ++i) {
      double e = 0;
      for (std::int64_t j = 0; j < 4; ++j) e += z(src[i], j) * z(dst[i], j);
      EXPECT_NEAR(s.host()[i], e, 1e-12);
    }
  }
  randomise(ps, 7, -1.0);
  auto const w = ps.value(0);
  auto const s =
      dec.forward(ctx, host_view(z), host_view(src), host_view(dst), host_view(rel), nullptr);
  bool differs = false;
  for (std::size_t i = 0; i < src.size(); ++i) {
    double e = 0, d = 0;
    for (std::int64_t j = 0; j < 4; ++j) {
      e += z(src[i], j) * w.host_row(rel[i])[j] * z(dst[i], j);
      d += z(src[i], j) * z(dst[i], j);
    }
    EXPECT_NEAR(s.host()[i], e, 1e-12) << "pair " << i;
    differs = differs || std::abs(e - d) > 1e-6;
  }
  EXPECT_TRUE(differs) << "the relation weights changed nothing";
  // No relations: relation 0 for every pair.
  auto const s0 = dec.forward(ctx, host_view(z), host_view(src), host_view(dst), nullptr);
  for (std::size_t i = 0; i < src.size(); ++i) {
    double e = 0;
    for (std::int64_t j = 0; j < 4; ++j) e += z(src[i], j) * w.host_row(0)[j] * z(dst[i], j);
    EXPECT_NEAR(s0.host()[i], e, 1e-12);
  }
  // A relation outside [0, R) and a relation list of the wrong length are refused.
  std::vector<std::int64_t> bad = rel;
  bad[3] = 3;
  EXPECT_THROW(
      dec.forward(ctx, host_view(z), host_view(src), host_view(dst), host_view(bad), nullptr),
      logic_error);
  std::vector<std::int64_t> const short_rel = {0, 1};
  EXPECT_THROW(
      dec.forward(ctx, host_view(z), host_view(src), host_view(dst), host_view(short_rel), nullptr),
      logic_error);
  parameter_set<double> ps2;
  EXPECT_THROW(link_decoder<double>(decoder_kind::distmult, 4, 0, 6, ps2, 0), logic_error);
  EXPECT_EQ(parse_decoder_kind("distmult"), decoder_kind::distmult);
  EXPECT_EQ(to_string(decoder_kind::distmult), "distmult");
  EXPECT_THROW(parse_decoder_kind("transe"), logic_error);
}

TEST(link_decoder, distmult_backward_matches_finite_differences) {
  exec_context const ctx;
  parameter_set<double> ps;
  link_decoder<double> dec(decoder_kind::distmult, 4, 0, 2, ps, 3);
  ps.allocate(ctx);
  dec.init(ctx, 3);
  randomise(ps, 11, -1.0);
  auto z = random_matrix(7, 4, 12);
  // Row 6 is read by no pair; relation 1 by two pairs, relation 2 by none (zero gradient).
  std::vector<std::int64_t> const src = {0, 0, 1, 3, 2, 0};
  std::vector<std::int64_t> const dst = {1, 4, 5, 0, 2, 0};
  std::vector<std::int64_t> const rel = {0, 1, 0, 1, 0, 0};
  auto const r = random_matrix(6, 1, 13);
  auto loss = [&] {
    auto const s =
        dec.forward(ctx, host_view(z), host_view(src), host_view(dst), host_view(rel), nullptr);
    double l = 0;
    for (std::size_t i = 0; i < src.size(); ++i)
      l += r(static_cast<std::int64_t>(i), 0) * s.host()[i];
    return l;
  };
  decoder_cache<double> cache;
  (void)dec.forward(ctx, host_view(z), host_view(src), host_view(dst), host_view(rel), &cache);
  fill_zero(ctx, ps.grads());
  std::vector<double> const gs(r.values().begin(), r.values().end());
  auto const gz = std::move(dec.backward(ctx, host_view(gs), host_view(src), host_view(dst),
                                         host_view(rel), 7, cache))
                      .release_host();
  for (std::int64_t j = 0; j < 4; ++j) EXPECT_EQ(gz(6, j), 0.0);
  expect_gradient("d/dz", z, gz, loss);
  auto const g = ps.grad(0).flat().host();
  for (std::int64_t j = 0; j < 4; ++j) EXPECT_EQ(g[2 * 4 + j], 0.0) << "relation 2 is unused";
  std::vector<double> const analytic(g.begin(), g.end());
  expect_gradient("d/dW", ps.value(0).flat().host(), analytic, loss);
}

TEST(embedding_table, gradient_into_the_table_matches_finite_differences) {
  // The path an embedding row's gradient takes in a link-prediction step, in double: table rows
  // gathered for the block's sources, a SAGE layer, the MLP decoder on pairs, BCE; the table's
  // gradient is the layer's input gradient scatter-added by id (what the trainer hands to
  // embedding_table::apply). Rows 2 and 4 are read by nothing: zero gradient.
  exec_context const ctx;
  std::vector<vid_t> const src = {0, 1, 1, 2, 2, 3, 4, 5, 5, 0};
  std::vector<vid_t> const dst = {1, 0, 2, 1, 3, 2, 5, 4, 0, 5};
  block const b = full_neighbor_block(build_csc(6, src, dst));
  std::vector<std::int64_t> const ids = {3, 0, 7, 5, 1, 6};  // table row of block source i
  auto table = random_matrix(8, 4, 21);
  parameter_set<double> ps;
  conv_layer<double> conv(conv_kind::sage, 4, 3, 0, false, 0.0f, ps);
  link_decoder<double> dec(decoder_kind::mlp, 3, 5, 2, ps);
  ps.allocate(ctx);
  conv.init(ctx, 4);
  dec.init(ctx, 4);
  randomise(ps, 22, -1.0);
  std::vector<std::int64_t> const ps_src = {0, 0, 1, 4, 5};
  std::vector<std::int64_t> const ps_dst = {1, 3, 2, 5, 5};
  std::vector<double> const labels = {1, 0, 1, 0, 1};
  auto gather = [&] {
    matrix<double> x(6, 4);
    for (std::int64_t i = 0; i < 6; ++i) {
      for (std::int64_t j = 0; j < 4; ++j) x(i, j) = table(ids[static_cast<std::size_t>(i)], j);
    }
    return x;
  };
  auto loss = [&] {
    auto const x = gather();
    auto const z = conv.forward(ctx, view(b), host_view(x), step_key{}, nullptr);
    auto const sc = dec.forward(ctx, z.view(), host_view(ps_src), host_view(ps_dst), nullptr);
    return bce_with_logits<double>(ctx, sc.view(), host_view(labels), 0.2, {});
  };
  auto const x = gather();
  conv_cache<double> cc;
  decoder_cache<double> dc;
  auto const z = conv.forward(ctx, view(b), host_view(x), step_key{}, &cc);
  auto const sc = dec.forward(ctx, z.view(), host_view(ps_src), host_view(ps_dst), &dc);
  std::vector<double> gs(5);
  (void)bce_with_logits<double>(ctx, sc.view(), host_view(labels), 0.2, host_view(gs));
  fill_zero(ctx, ps.grads());
  auto const gz =
      dec.backward(ctx, host_view(std::as_const(gs)), host_view(ps_src), host_view(ps_dst), 6, dc);
  auto const gx = conv.backward(ctx, view(b), gz.view(), cc, true);
  matrix<double> gtable(8, 4);
  scatter_add_rows<double>(ctx, gx.view(), host_view(ids), host_view(gtable));
  for (std::int64_t j = 0; j < 4; ++j) {
    EXPECT_EQ(gtable(2, j), 0.0);
    EXPECT_EQ(gtable(4, j), 0.0);
  }
  expect_gradient("d/dtable", table, gtable, loss);
}

TEST(embedding_table, lazy_adam_moves_only_touched_rows) {
  exec_context const ctx;
  adam_options opt;
  opt.lr = 0.1f;
  opt.weight_decay = 0.0f;
  embedding_table t(ctx, 6, 3, 7, 1u << 20, opt);
  matrix<float> const before = t.to_host_matrix();
  // Keyed init, standard deviation 0.1: |value| <= sqrt(3) * 0.1.
  for (float v : before.values()) EXPECT_LE(std::abs(v), std::sqrt(3.0f) * 0.1f + 1e-6f);
  std::vector<vid_t> const ids = {4, 1, 4};
  matrix<float> g(3, 3);
  for (std::int64_t i = 0; i < 3; ++i) {
    for (std::int64_t j = 0; j < 3; ++j) g(i, j) = static_cast<float>(i + 1) * (j % 2 ? 1 : -1);
  }
  auto const rows = t.gather(host_view(ids));
  for (std::int64_t j = 0; j < 3; ++j) EXPECT_EQ(rows.view().host_row(0)[j], before(4, j));
  t.apply(host_view(ids), host_view(std::as_const(g)));
  matrix<float> const after = t.to_host_matrix();
  for (std::int64_t r = 0; r < 6; ++r) {
    for (std::int64_t j = 0; j < 3; ++j) {
      if (r == 1 || r == 4) {
        // First Adam step: the update is -lr * sign(g) (m / bc1 = g, sqrt(v / bc2) = |g|).
        double const grad = r == 4 ? g(0, j) + g(2, j) : g(1, j);
        EXPECT_NEAR(after(r, j), before(r, j) - 0.1 * (grad > 0 ? 1 : -1), 1e-6);
      } else {
        EXPECT_EQ(after(r, j), before(r, j)) << "untouched row " << r << " moved";
      }
    }
  }
  // A second step with no ids moves nothing (the gradient was cleared).
  t.apply(host_view(std::vector<vid_t>{}), tensor_view<const float>{nullptr, 0, 3});
  EXPECT_EQ(t.to_host_matrix().values(), after.values());
}

TEST(embedding_table, frozen_rows_are_not_stored_gather_zeros_and_never_move) {
  // Heterogeneous inputs: rows [1, 3) are a featured type's (read from its feature table), the
  // others learn.
  exec_context const ctx;
  adam_options opt;
  opt.lr = 0.1f;
  opt.weight_decay = 0.5f;  // decay would move a frozen row if it were touched
  embedding_table t(ctx, 6, 2, 7, 1u << 20, opt, {{1, 3}});
  embedding_table const plain(ctx, 6, 2, 7, 1u << 20, opt);
  EXPECT_EQ(t.rows(), 6);
  EXPECT_EQ(t.stored_rows(), 4);
  EXPECT_EQ(t.first_moment().rows, 4);
  matrix<float> const before = t.to_host_matrix();
  matrix<float> const unfrozen = plain.to_host_matrix();
  for (std::int64_t r = 0; r < 6; ++r) {
    for (std::int64_t j = 0; j < 2; ++j) {
      bool const frozen = r == 1 || r == 2;
      // A learnt row starts where it would without frozen rows; a frozen one reads zero.
      EXPECT_EQ(before(r, j), frozen ? 0.f : unfrozen(r, j)) << "row " << r;
      if (!frozen) EXPECT_NE(before(r, j), 0.f);
    }
  }
  std::vector<vid_t> const ids = {2, 0, 1, 4, 2, 5};
  tensor<float> const got = t.gather(host_view(ids));
  matrix<float> const rows = download<float>(ctx, got.view());
  EXPECT_EQ(rows(0, 0), 0.f);  // id 2: frozen
  EXPECT_EQ(rows(1, 1), unfrozen(0, 1));
  EXPECT_EQ(rows(3, 0), unfrozen(4, 0));
  matrix<float> g(6, 2);
  for (std::int64_t i = 0; i < 6; ++i) g(i, 0) = 1.f, g(i, 1) = -1.f;
  t.apply(host_view(ids), host_view(std::as_const(g)));
  matrix<float> const after = t.to_host_matrix();
  for (std::int64_t r = 0; r < 6; ++r) {
    for (std::int64_t j = 0; j < 2; ++j) {
      bool const frozen = r == 1 || r == 2;
      bool const touched = r == 0 || r == 4 || r == 5;
      if (frozen || !touched) {
        EXPECT_EQ(after(r, j), before(r, j)) << "row " << r;
      } else {
        EXPECT_NE(after(r, j), before(r, j)) << "row " << r;
      }
    }
  }
  // A checkpoint round trip at every id: the frozen ids' rows are ignored.
  embedding_table u(ctx, 6, 2, 9, 1u << 20, opt, {{1, 3}});
  matrix<float> const m = t.expand(t.first_moment()), v = t.expand(t.second_moment());
  u.restore(after.values(), m.values(), v.values(), t.steps());
  EXPECT_EQ(u.to_host_matrix().values(), after.values());
  EXPECT_THROW(embedding_table(ctx, 6, 2, 7, 1u << 20, opt, {{1, 3}, {2, 4}}),
               logic_error);                                                          // overlap
  EXPECT_THROW(embedding_table(ctx, 6, 2, 7, 1u << 20, opt, {{5, 7}}), logic_error);  // past end
  EXPECT_THROW((void)t.gather(host_view(std::vector<vid_t>{6})), logic_error);
}

}  // namespace
}  // namespace coopgnn::models
