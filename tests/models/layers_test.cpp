// Layers: forward against formulas written out here, every backward against central finite
// differences in double (DESIGN.md section 8), GCN against a dense normalised adjacency, and
// dropout masks keyed by global vertex id.
#include "models/layers.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "models/model.hpp"
#include "runtime/core/error.hpp"
#include "runtime/graph/csc.hpp"

namespace coopgnn::models {
namespace {

// ---- fixtures --------------------------------------------------------------------------------

/// A hand-made block: 4 destinations, 9 sources with scattered global ids.
///   dst 0: no edges, full-graph degree 0
///   dst 1: an edge from every source (itself included): the many-edge destination
///   dst 2: edges from sources 4 and 0;  dst 3: one edge from source 8
/// Hajek-style weights: random positive, normalised to sum 1 per destination. Full-graph degrees
/// are at least the sampled counts.
block hand_block(std::uint64_t seed) {
  block b;
  b.num_dst = 4;
  b.src_ids = {40, 7, 93, 12, 5, 61, 88, 23, 70};
  b.indptr = {0, 0, 9, 11, 12};
  b.indices = {0, 1, 2, 3, 4, 5, 6, 7, 8, 4, 0, 8};
  b.src_degree = {0, 12, 2, 5, 3, 1, 7, 4, 2};
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> u(0.2, 1.0);
  b.weights.resize(b.indices.size());
  for (std::int64_t s = 0; s < b.num_dst; ++s) {
    double sum = 0;
    std::vector<double> w;
    for (eid_t e = b.indptr[s]; e < b.indptr[s + 1]; ++e) {
      w.push_back(u(gen));
      sum += w.back();
    }
    for (eid_t e = b.indptr[s]; e < b.indptr[s + 1]; ++e) {
      b.weights[e] = static_cast<float>(w[e - b.indptr[s]] / sum);
    }
  }
  return b;
}

matrix<double> random_matrix(std::int64_t rows, std::int64_t cols, std::uint64_t seed,
                             double lo = -1.0, double hi = 1.0) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  matrix<double> m(rows, cols);
  for (double& v : m.values()) v = u(gen);
  return m;
}

double dot(const matrix<double>& a, const matrix<double>& b) {
  double s = 0;
  for (std::size_t i = 0; i < a.values().size(); ++i) s += a.values()[i] * b.values()[i];
  return s;
}

double norm(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x * x;
  return std::sqrt(s);
}

/// Central differences of loss() with respect to every element of `var`, compared norm-wise with
/// the analytic gradient: ||analytic - numeric|| / max(||analytic||, ||numeric||).
void expect_gradient(const std::string& what, matrix<double>& var, const matrix<double>& analytic,
                     const std::function<double()>& loss, double h = 1e-6) {
  SCOPED_TRACE(what);
  ASSERT_EQ(var.rows(), analytic.rows());
  ASSERT_EQ(var.cols(), analytic.cols());
  std::vector<double> numeric(var.values().size());
  for (std::size_t i = 0; i < numeric.size(); ++i) {
    double const v = var.values()[i];
    var.values()[i] = v + h;
    double const lp = loss();
    var.values()[i] = v - h;
    double const lm = loss();
    var.values()[i] = v;
    numeric[i] = (lp - lm) / (2 * h);
  }
  std::vector<double> diff(numeric.size());
  for (std::size_t i = 0; i < numeric.size(); ++i) diff[i] = analytic.values()[i] - numeric[i];
  double const scale = std::max(norm(analytic.values()), norm(numeric));
  ASSERT_GT(scale, 1e-8) << "gradient is all zero: the check would be vacuous";
  EXPECT_LT(norm(diff) / scale, 1e-6);
}

parameter<double>& find_param(std::vector<parameter<double>*> ps, const std::string& suffix) {
  for (auto* p : ps) {
    if (p->name.size() >= suffix.size() &&
        p->name.compare(p->name.size() - suffix.size(), suffix.size(), suffix) == 0) {
      return *p;
    }
  }
  throw std::runtime_error("no parameter " + suffix);
}

// ---- conv forward against the formulas --------------------------------------------------------

struct conv_usecase {
  conv_kind kind;
  std::int64_t in_dim;
  std::int64_t out_dim;
  bool relu;
  float dropout;
};

std::string describe(const conv_usecase& u) {
  return std::string(u.kind == conv_kind::sage ? "sage" : "gcn") + " " + std::to_string(u.in_dim) +
         "->" + std::to_string(u.out_dim) + (u.relu ? " relu" : "") +
         " p=" + std::to_string(u.dropout);
}

std::vector<conv_usecase> conv_usecases() {
  std::vector<conv_usecase> all;
  for (conv_kind k : {conv_kind::sage, conv_kind::gcn}) {
    for (auto [in, out] : {std::pair<std::int64_t, std::int64_t>{5, 3}, {3, 5}}) {
      for (bool relu : {false, true}) {
        for (float p : {0.0f, 0.4f}) all.push_back({k, in, out, relu, p});
      }
    }
  }
  return all;
}

/// out[s] written from the formulas of the brief (no dropout).
matrix<double> conv_reference(const conv_usecase& u, const block& b, const matrix<double>& h,
                              conv_layer<double>& layer) {
  auto ps = layer.params();
  matrix<double> out(b.num_dst, u.out_dim);
  for (std::int64_t s = 0; s < b.num_dst; ++s) {
    std::vector<double> self(u.in_dim, 0.0);
    std::vector<double> agg(u.in_dim, 0.0);
    double const ds = static_cast<double>(b.src_degree[s]);
    for (std::int64_t j = 0; j < u.in_dim; ++j) {
      self[j] = u.kind == conv_kind::gcn ? h(s, j) / (ds + 1) : h(s, j);
    }
    for (eid_t e = b.indptr[s]; e < b.indptr[s + 1]; ++e) {
      std::int64_t const t = b.indices[e];
      double c = b.weights[e];
      if (u.kind == conv_kind::gcn) {
        double const dt = static_cast<double>(b.src_degree[t]);
        c = c * ds / std::sqrt((ds + 1) * (dt + 1));
      }
      for (std::int64_t j = 0; j < u.in_dim; ++j) agg[j] += c * h(t, j);
    }
    for (std::int64_t o = 0; o < u.out_dim; ++o) {
      double v = find_param(ps, ".bias").value(0, o);
      for (std::int64_t j = 0; j < u.in_dim; ++j) {
        if (u.kind == conv_kind::sage) {
          v += self[j] * find_param(ps, ".w_self").value(j, o) +
               agg[j] * find_param(ps, ".w_neigh").value(j, o);
        } else {
          v += (self[j] + agg[j]) * find_param(ps, ".weight").value(j, o);
        }
      }
      out(s, o) = u.relu ? std::max(v, 0.0) : v;
    }
  }
  return out;
}

void randomise_bias(conv_layer<double>& layer, std::uint64_t seed) {
  auto& bias = find_param(layer.params(), ".bias");
  bias.value = random_matrix(1, bias.value.cols(), seed);
}

TEST(conv_layer, forward_matches_formulas_in_both_orders) {
  block const b = hand_block(1);
  for (auto const& u : conv_usecases()) {
    if (u.dropout > 0) continue;
    SCOPED_TRACE(describe(u));
    conv_layer<double> layer(u.kind, u.in_dim, u.out_dim, 2, u.relu, 0.0f);
    layer.init(77);
    randomise_bias(layer, 5);
    EXPECT_EQ(layer.transform_first(), u.in_dim > u.out_dim);
    auto const h = random_matrix(b.num_src(), u.in_dim, 3);
    auto const out = layer.forward(b, h, step_key{1, 0, true}, nullptr);
    auto const ref = conv_reference(u, b, h, layer);
    ASSERT_EQ(out.rows(), b.num_dst);
    ASSERT_EQ(out.cols(), u.out_dim);
    bool any = false;
    for (std::int64_t i = 0; i < out.size(); ++i) {
      EXPECT_NEAR(out.values()[i], ref.values()[i], 1e-12);
      any = any || ref.values()[i] != 0.0;
    }
    EXPECT_TRUE(any);
    // The threaded inference path computes every row the same way: same bits.
    for (std::int64_t threads : {1, 2, 3}) {
      auto const inf = layer.infer(b, h, static_cast<int>(threads));
      EXPECT_EQ(inf.values(), out.values()) << "threads " << threads;
    }
  }
}

// ---- conv backward by finite differences -----------------------------------------------------

TEST(conv_layer, backward_matches_finite_differences) {
  block const b = hand_block(2);
  step_key const key{12345, 7, true};
  for (auto const& u : conv_usecases()) {
    SCOPED_TRACE(describe(u));
    conv_layer<double> layer(u.kind, u.in_dim, u.out_dim, 1, u.relu, u.dropout);
    layer.init(31);
    randomise_bias(layer, 8);
    auto h = random_matrix(b.num_src(), u.in_dim, 4);
    auto const r = random_matrix(b.num_dst, u.out_dim, 6);  // L = sum R .* out
    auto loss = [&] { return dot(r, layer.forward(b, h, key, nullptr)); };

    conv_cache<double> cache;
    layer.forward(b, h, key, &cache);
    EXPECT_EQ(cache.keep.empty(), u.dropout == 0.0f);
    for (auto* p : layer.params()) p->grad.fill(0.0);
    auto const gh = layer.backward(b, r, cache);
    expect_gradient("d/dh_src", h, gh, loss);
    for (auto* p : layer.params()) {
      matrix<double> const analytic = p->grad;
      expect_gradient("d/d" + p->name, p->value, analytic, loss);
    }
    // backward accumulates into grad.
    std::vector<matrix<double>> once;
    for (auto* p : layer.params()) once.push_back(p->grad);
    layer.backward(b, r, cache);
    auto ps = layer.params();
    for (std::size_t i = 0; i < ps.size(); ++i) {
      for (std::int64_t e = 0; e < once[i].size(); ++e) {
        // Accumulated product by product into grad: equal up to rounding.
        EXPECT_NEAR(ps[i]->grad.values()[e], 2 * once[i].values()[e],
                    1e-13 * std::max(1.0, std::abs(once[i].values()[e])));
      }
    }
  }
}

TEST(conv_layer, float_instantiation_agrees_with_double) {
  block const b = hand_block(3);
  for (conv_kind k : {conv_kind::sage, conv_kind::gcn}) {
    conv_layer<double> ld(k, 6, 4, 0, true, 0.0f);
    conv_layer<float> lf(k, 6, 4, 0, true, 0.0f);
    ld.init(5);
    lf.init(5);
    auto const hd = random_matrix(b.num_src(), 6, 9);
    matrix<float> hf(hd.rows(), hd.cols());
    for (std::int64_t i = 0; i < hd.size(); ++i)
      hf.values()[i] = static_cast<float>(hd.values()[i]);
    auto const od = ld.forward(b, hd, {}, nullptr);
    auto const of = lf.forward(b, hf, {}, nullptr);
    for (std::int64_t i = 0; i < od.size(); ++i) EXPECT_NEAR(of.values()[i], od.values()[i], 1e-5);
  }
}

// ---- GCN on the full-neighbour block equals D^-1/2 (A + I) D^-1/2 H W + b ----------------------

TEST(conv_layer, gcn_full_block_equals_dense_normalised_adjacency) {
  // Undirected: 0-1, 0-2, 1-2, 2-3, 3-4, 2-4; vertex 5 isolated. Degrees 2, 2, 4, 2, 2, 0.
  std::vector<vid_t> const u = {0, 0, 1, 2, 3, 2};
  std::vector<vid_t> const v = {1, 2, 2, 3, 4, 4};
  std::vector<vid_t> src;
  std::vector<vid_t> dst;
  for (std::size_t e = 0; e < u.size(); ++e) {
    src.push_back(u[e]);
    dst.push_back(v[e]);
    src.push_back(v[e]);
    dst.push_back(u[e]);
  }
  csc_graph const g = build_csc(6, src, dst);
  block const b = full_neighbor_block(g);

  // Dense A + I and degrees, by hand.
  constexpr int n = 6;
  double a_hat[n][n] = {};
  double deg[n] = {};
  for (std::size_t e = 0; e < src.size(); ++e) {
    a_hat[dst[e]][src[e]] += 1;
    deg[dst[e]] += 1;
  }
  EXPECT_EQ(deg[2], 4);
  EXPECT_EQ(deg[5], 0);
  for (int i = 0; i < n; ++i) a_hat[i][i] += 1;
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) a_hat[i][j] /= std::sqrt((deg[i] + 1) * (deg[j] + 1));
  }

  for (auto [in, out] : {std::pair<std::int64_t, std::int64_t>{3, 2}, {2, 3}}) {
    conv_layer<double> layer(conv_kind::gcn, in, out, 0, false, 0.0f);
    layer.init(11);
    randomise_bias(layer, 12);
    auto const h = random_matrix(n, in, 13);
    auto const got = layer.forward(b, h, {}, nullptr);
    auto const& w = find_param(layer.params(), ".weight").value;
    auto const& bias = find_param(layer.params(), ".bias").value;
    for (int i = 0; i < n; ++i) {
      for (std::int64_t o = 0; o < out; ++o) {
        double expected = bias(0, o);
        for (int t = 0; t < n; ++t) {
          for (std::int64_t j = 0; j < in; ++j) expected += a_hat[i][t] * h(t, j) * w(j, o);
        }
        // block weights are float (1/d_s rounded): relative 1e-6.
        EXPECT_NEAR(got(i, o), expected, 1e-6 * std::max(1.0, std::abs(expected)))
            << "row " << i << " col " << o;
      }
    }
  }
}

// ---- dropout masks are keyed by global vertex id ------------------------------------------------

TEST(dropout, mask_follows_the_vertex_not_the_row) {
  // Same vertices, permuted source order (the destination 10 stays first).
  block p;
  p.num_dst = 1;
  p.src_ids = {10, 20, 30, 40, 50};
  p.indptr = {0, 4};
  p.indices = {1, 2, 3, 4};
  p.weights = {0.25f, 0.25f, 0.25f, 0.25f};
  p.src_degree = {4, 1, 1, 1, 1};
  block q = p;
  q.src_ids = {10, 50, 40, 30, 20};
  auto features = [](const block& b) {
    matrix<double> h(b.num_src(), 8);
    for (std::int64_t i = 0; i < h.rows(); ++i) {
      for (std::int64_t j = 0; j < 8; ++j)
        h(i, j) = 1.0 + static_cast<double>(b.src_ids[i]) + 0.01 * j;
    }
    return h;
  };
  float const drop = 0.5f;
  conv_layer<double> layer(conv_kind::sage, 8, 4, 3, true, drop);
  layer.init(1);
  step_key const key{2024, 9, true};
  conv_cache<double> cp;
  conv_cache<double> cq;
  layer.forward(p, features(p), key, &cp);
  layer.forward(q, features(q), key, &cq);
  int kept = 0;
  int dropped = 0;
  for (std::int64_t i = 0; i < p.num_src(); ++i) {
    std::int64_t qi = 0;
    while (q.src_ids[qi] != p.src_ids[i]) ++qi;
    for (std::int64_t j = 0; j < 8; ++j) {
      EXPECT_EQ(cp.h(i, j), cq.h(qi, j)) << "vertex " << p.src_ids[i] << " col " << j;
      bool const keep = dropout_keeps(key.run_seed, key.batch, 3, p.src_ids[i], j, drop);
      double const raw = 1.0 + static_cast<double>(p.src_ids[i]) + 0.01 * j;
      EXPECT_EQ(cp.h(i, j), keep ? raw * 2.0 : 0.0);
      (keep ? kept : dropped)++;
    }
  }
  EXPECT_GT(kept, 5);  // the mask is not trivial
  EXPECT_GT(dropped, 5);

  // Another batch gives another mask; evaluation applies none.
  conv_cache<double> other;
  layer.forward(p, features(p), step_key{2024, 10, true}, &other);
  EXPECT_NE(other.h.values(), cp.h.values());
  conv_cache<double> eval;
  layer.forward(p, features(p), step_key{2024, 9, false}, &eval);
  EXPECT_EQ(eval.h.values(), features(p).values());
  EXPECT_TRUE(eval.keep.empty());
}

TEST(dropout, keep_rate_is_about_one_minus_p) {
  int kept = 0;
  constexpr int rows = 200;
  constexpr int cols = 50;
  for (int v = 0; v < rows; ++v) {
    for (int j = 0; j < cols; ++j) kept += dropout_keeps(5, 1, 0, v * 7919, j, 0.3f) ? 1 : 0;
  }
  double const rate = static_cast<double>(kept) / (rows * cols);
  EXPECT_NEAR(rate, 0.7, 0.03);  // 10000 Bernoulli draws: sd 0.0046
}

// ---- linear layer --------------------------------------------------------------------------

TEST(linear_layer, backward_matches_finite_differences) {
  std::vector<vid_t> const ids = {3, 99, 5, 1000, 42, 8};
  for (float p : {0.0f, 0.3f}) {
    SCOPED_TRACE(p);
    linear_layer<double> layer(4, 3, 2, p);
    layer.init(9);
    auto& bias = find_param(layer.params(), ".bias");
    bias.value = random_matrix(1, 3, 10);
    auto x = random_matrix(6, 4, 11);
    auto const r = random_matrix(6, 3, 12);
    step_key const key{7, 3, true};
    auto loss = [&] { return dot(r, layer.forward(x, ids, key, nullptr)); };
    linear_cache<double> cache;
    auto const y = layer.forward(x, ids, key, &cache);
    // Forward: y = dropout(x) W + b, written out.
    auto const& w = find_param(layer.params(), ".weight").value;
    for (std::int64_t i = 0; i < 6; ++i) {
      for (std::int64_t o = 0; o < 3; ++o) {
        double e = bias.value(0, o);
        for (std::int64_t j = 0; j < 4; ++j) {
          bool const keep = p == 0.0f || dropout_keeps(7, 3, 2, ids[i], j, p);
          e += (keep ? x(i, j) / (1.0 - static_cast<double>(p)) : 0.0) * w(j, o);
        }
        EXPECT_NEAR(y(i, o), e, 1e-12);
      }
    }
    for (auto* q : layer.params()) q->grad.fill(0.0);
    auto const gx = layer.backward(r, cache);
    expect_gradient("d/dx", x, gx, loss);
    for (auto* q : layer.params()) {
      matrix<double> const analytic = q->grad;
      expect_gradient("d/d" + q->name, q->value, analytic, loss);
    }
    auto const inf = layer.infer(x, 3);
    auto const fwd = layer.forward(x, {}, step_key{}, nullptr);
    EXPECT_EQ(inf.values(), fwd.values());
  }
}

TEST(linear_layer, dropout_needs_row_ids) {
  linear_layer<float> layer(4, 2, 0, 0.5f);
  matrix<float> x(3, 4, 1.0f);
  EXPECT_THROW(layer.forward(x, {}, step_key{1, 1, true}, nullptr), logic_error);
  EXPECT_NO_THROW(layer.forward(x, {}, step_key{1, 1, false}, nullptr));
}

// ---- softmax cross-entropy -------------------------------------------------------------------

TEST(softmax_cross_entropy, value_and_gradient) {
  auto logits = random_matrix(6, 4, 21, -3.0, 3.0);
  std::vector<std::int64_t> const labels = {0, 3, 1, 1, 2, 0};
  double const scale = 0.25;
  matrix<double> grad;
  double const loss = softmax_cross_entropy<double>(logits, labels, scale, &grad);
  double expected = 0;
  for (std::int64_t i = 0; i < 6; ++i) {
    double z = 0;
    for (std::int64_t j = 0; j < 4; ++j) z += std::exp(logits(i, j));
    expected += -std::log(std::exp(logits(i, labels[i])) / z);
  }
  EXPECT_NEAR(loss, scale * expected, 1e-12);
  expect_gradient(
      "d/dlogits", logits, grad,
      [&] { return softmax_cross_entropy<double>(logits, labels, scale, nullptr); }, 1e-5);
}

TEST(softmax_cross_entropy, large_logits_do_not_overflow) {
  matrix<double> logits(2, 2, std::vector<double>{1000.0, 0.0, 0.0, 1000.0});
  std::vector<std::int64_t> const labels = {0, 0};
  matrix<double> grad;
  double const loss = softmax_cross_entropy<double>(logits, labels, 1.0, &grad);
  EXPECT_NEAR(loss, 1000.0, 1e-9);  // row 0 contributes ~0, row 1 contributes 1000
  EXPECT_NEAR(grad(1, 0), -1.0, 1e-12);
  EXPECT_NEAR(grad(1, 1), 1.0, 1e-12);
  matrix<float> lf(1, 3, std::vector<float>{-1e4f, 2e4f, 0.0f});
  std::vector<std::int64_t> const lab = {1};
  EXPECT_TRUE(std::isfinite(softmax_cross_entropy<float>(lf, lab, 1.0f, nullptr)));
}

TEST(softmax_cross_entropy, bad_label_names_row_and_value) {
  matrix<float> logits(3, 4);
  std::vector<std::int64_t> const labels = {0, 4, 1};
  try {
    softmax_cross_entropy<float>(logits, labels, 1.0f, nullptr);
    FAIL() << "expected logic_error";
  } catch (const logic_error& e) {
    std::string const msg = e.what();
    EXPECT_NE(msg.find("row 1"), std::string::npos) << msg;
    EXPECT_NE(msg.find("is 4"), std::string::npos) << msg;
  }
  std::vector<std::int64_t> const negative = {0, -1, 1};
  EXPECT_THROW(softmax_cross_entropy<float>(logits, negative, 1.0f, nullptr), logic_error);
  std::vector<std::int64_t> const short_labels = {0, 1};
  EXPECT_THROW(softmax_cross_entropy<float>(logits, short_labels, 1.0f, nullptr), logic_error);
  matrix<float> empty(0, 4);
  matrix<float> g;
  EXPECT_EQ(softmax_cross_entropy<float>(empty, {}, 1.0f, &g), 0.0f);
  EXPECT_EQ(g.rows(), 0);
  EXPECT_EQ(g.cols(), 4);
}

// ---- initialisation and validation -----------------------------------------------------------

TEST(conv_layer, init_is_keyed_and_glorot_bounded) {
  conv_layer<float> a(conv_kind::sage, 20, 10, 1, true, 0.0f);
  conv_layer<float> b(conv_kind::sage, 20, 10, 1, true, 0.0f);
  conv_layer<float> c(conv_kind::sage, 20, 10, 2, true, 0.0f);
  a.init(42);
  b.init(42);
  c.init(42);
  double const limit = std::sqrt(6.0 / 30.0);
  auto pa = a.params();
  auto pb = b.params();
  auto pc = c.params();
  EXPECT_EQ(pa[0]->name, "sage1.w_self");
  EXPECT_EQ(pa[1]->name, "sage1.w_neigh");
  EXPECT_EQ(pa[2]->name, "sage1.bias");
  EXPECT_EQ(pa[0]->value.values(), pb[0]->value.values());
  EXPECT_NE(pa[0]->value.values(), pc[0]->value.values());
  EXPECT_NE(pa[0]->value.values(), pa[1]->value.values());
  double mean = 0;
  for (float v : pa[0]->value.values()) {
    EXPECT_LT(std::abs(v), limit);
    mean += v;
  }
  EXPECT_NEAR(mean / 200.0, 0.0, 0.1);
  for (float v : pa[2]->value.values()) EXPECT_EQ(v, 0.0f);
}

TEST(conv_layer, rejects_bad_arguments) {
  EXPECT_THROW(conv_layer<float>(conv_kind::gcn, 0, 3, 0, true, 0.0f), logic_error);
  EXPECT_THROW(conv_layer<float>(conv_kind::gcn, 3, 3, 0, true, 1.0f), logic_error);
  conv_layer<float> layer(conv_kind::gcn, 3, 2, 0, true, 0.0f);
  block const b = hand_block(4);
  matrix<float> h(b.num_src(), 4);
  EXPECT_THROW(layer.forward(b, h, {}, nullptr), logic_error);  // in_dim mismatch
  matrix<float> h_ok(b.num_src(), 3);
  block no_degrees = b;
  no_degrees.src_degree.pop_back();
  EXPECT_THROW(layer.forward(no_degrees, h_ok, {}, nullptr), logic_error);
  conv_cache<float> empty;
  EXPECT_THROW(layer.backward(b, matrix<float>(b.num_dst, 2), empty), logic_error);
  conv_cache<float> cache;
  layer.forward(b, h_ok, {}, &cache);
  EXPECT_THROW(layer.backward(b, matrix<float>(b.num_dst, 3), cache), logic_error);
  EXPECT_THROW(layer.infer(b, h_ok, 0), logic_error);
}

}  // namespace
}  // namespace coopgnn::models
