// Layers: forward against formulas written out here, every backward against central finite
// differences in double (docs/design.md section 8), GCN against a dense normalised adjacency, and
// dropout masks keyed by global vertex id.
#include "models/layers.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "kernels/dense/elementwise.hpp"
#include "models/model.hpp"
#include "runtime/core/error.hpp"
#include "runtime/graph/csc.hpp"
#include "tests/common/gradients.hpp"

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

using test::expect_gradient;

/// A layer with its own parameter set on a host context (what a model gives its layers).
template <typename T, typename Layer>
struct owned {
  exec_context ctx;
  parameter_set<T> params;
  Layer layer;
  template <typename... A>
  explicit owned(A&&... args) : layer(std::forward<A>(args)..., params) {
    params.allocate(ctx);
  }
  /// Parameter index whose name ends with `suffix`.
  std::size_t find(const std::string& suffix) const {
    for (std::size_t i = 0; i < params.count(); ++i) {
      auto const& n = params.info(i).name;
      if (n.size() >= suffix.size() &&
          n.compare(n.size() - suffix.size(), suffix.size(), suffix) == 0)
        return i;
    }
    throw std::runtime_error("no parameter " + suffix);
  }
  /// Host access to a parameter's value / gradient.
  std::span<T> value(const std::string& suffix) { return params.value(find(suffix)).flat().host(); }
  T value(const std::string& suffix, std::int64_t r, std::int64_t c) {
    auto const v = params.value(find(suffix));
    return v.host_row(r)[c];
  }
  std::span<T> grad_of(std::size_t i) { return params.grad(i).flat().host(); }
  std::span<T> value_of(std::size_t i) { return params.value(i).flat().host(); }
  void zero_grads() { fill_zero(ctx, params.grads()); }
};
template <typename T>
using owned_conv = owned<T, conv_layer<T>>;
template <typename T>
using owned_linear = owned<T, linear_layer<T>>;

template <typename T>
matrix<T> host(tensor<T>&& t) {
  return std::move(t).release_host();
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
  return to_string(u.kind) + " " + std::to_string(u.in_dim) + "->" + std::to_string(u.out_dim) +
         (u.relu ? " relu" : "") + " p=" + std::to_string(u.dropout);
}

std::vector<conv_usecase> conv_usecases() {
  std::vector<conv_usecase> all;
  for (conv_kind k : {conv_kind::sage, conv_kind::gcn, conv_kind::mlp}) {
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
                              owned_conv<double>& layer) {
  matrix<double> out(b.num_dst, u.out_dim);
  for (std::int64_t s = 0; s < b.num_dst; ++s) {
    std::vector<double> self(u.in_dim, 0.0);
    std::vector<double> agg(u.in_dim, 0.0);
    double const ds = static_cast<double>(b.src_degree[s]);
    for (std::int64_t j = 0; j < u.in_dim; ++j) {
      self[j] = u.kind == conv_kind::gcn ? h(s, j) / (ds + 1) : h(s, j);
    }
    for (eid_t e = b.indptr[s]; e < b.indptr[s + 1] && u.kind != conv_kind::mlp; ++e) {
      std::int64_t const t = b.indices[e];
      double c = b.weights[e];
      if (u.kind == conv_kind::gcn) {
        double const dt = static_cast<double>(b.src_degree[t]);
        c = c * ds / std::sqrt((ds + 1) * (dt + 1));
      }
      for (std::int64_t j = 0; j < u.in_dim; ++j) agg[j] += c * h(t, j);
    }
    for (std::int64_t o = 0; o < u.out_dim; ++o) {
      double v = layer.value(".bias", 0, o);
      for (std::int64_t j = 0; j < u.in_dim; ++j) {
        if (u.kind == conv_kind::sage) {
          v += self[j] * layer.value(".w_self", j, o) + agg[j] * layer.value(".w_neigh", j, o);
        } else {
          v += (self[j] + agg[j]) * layer.value(".weight", j, o);
        }
      }
      out(s, o) = u.relu ? std::max(v, 0.0) : v;
    }
  }
  return out;
}

template <typename L>
void randomise_bias(L& layer, std::uint64_t seed) {
  auto bias = layer.value(".bias");
  auto const r = random_matrix(1, static_cast<std::int64_t>(bias.size()), seed);
  std::copy(r.values().begin(), r.values().end(), bias.begin());
}

TEST(conv_layer, forward_matches_formulas_in_both_orders) {
  block const b = hand_block(1);
  for (auto const& u : conv_usecases()) {
    if (u.dropout > 0) continue;
    SCOPED_TRACE(describe(u));
    owned_conv<double> l(u.kind, u.in_dim, u.out_dim, 2u, u.relu, 0.0f);
    l.layer.init(l.ctx, 77);
    randomise_bias(l, 5);
    EXPECT_EQ(l.layer.transform_first(), u.in_dim > u.out_dim);
    auto const h = random_matrix(b.num_src(), u.in_dim, 3);
    auto const out =
        host(l.layer.forward(l.ctx, view(b), host_view(h), step_key{1, 0, true}, nullptr));
    auto const ref = conv_reference(u, b, h, l);
    ASSERT_EQ(out.rows(), b.num_dst);
    ASSERT_EQ(out.cols(), u.out_dim);
    bool any = false;
    for (std::int64_t i = 0; i < out.size(); ++i) {
      EXPECT_NEAR(out.values()[i], ref.values()[i], 1e-12);
      any = any || ref.values()[i] != 0.0;
    }
    EXPECT_TRUE(any);
    // Host kernels split rows over the context's threads; every row is computed the same way.
    for (int threads : {1, 2, 3}) {
      auto const inf = host(
          l.layer.forward(l.ctx.with_threads(threads), view(b), host_view(h), step_key{}, nullptr));
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
    owned_conv<double> l(u.kind, u.in_dim, u.out_dim, 1u, u.relu, u.dropout);
    l.layer.init(l.ctx, 31);
    randomise_bias(l, 8);
    auto h = random_matrix(b.num_src(), u.in_dim, 4);
    auto const r = random_matrix(b.num_dst, u.out_dim, 6);  // L = sum R .* out
    auto const bv = view(b);
    auto loss = [&] {
      return dot(r, host(l.layer.forward(l.ctx, bv, host_view(h), key, nullptr)));
    };

    conv_cache<double> cache;
    (void)l.layer.forward(l.ctx, bv, host_view(h), key, &cache);
    EXPECT_EQ(cache.keep.empty(), u.dropout == 0.0f);
    l.zero_grads();
    auto const gh = host(l.layer.backward(l.ctx, bv, host_view(r), cache));
    expect_gradient("d/dh_src", h, gh, loss);
    for (std::size_t i = 0; i < l.params.count(); ++i) {
      std::vector<double> const analytic(l.grad_of(i).begin(), l.grad_of(i).end());
      expect_gradient("d/d" + l.params.info(i).name, l.value_of(i), analytic, loss);
    }
    // backward accumulates into grad.
    std::vector<double> const once(l.params.grads().host().begin(), l.params.grads().host().end());
    (void)l.layer.backward(l.ctx, bv, host_view(r), cache);
    auto const twice = l.params.grads().host();
    for (std::size_t e = 0; e < once.size(); ++e) {
      // Accumulated product by product into grad: equal up to rounding.
      EXPECT_NEAR(twice[e], 2 * once[e], 1e-13 * std::max(1.0, std::abs(once[e])));
    }
    // Without an input gradient (the input layer): the same parameter gradients, no dh_src.
    l.zero_grads();
    auto const none = l.layer.backward(l.ctx, bv, host_view(r), cache, false);
    EXPECT_EQ(none.size(), 0);
    auto const param_only = l.params.grads().host();
    for (std::size_t e = 0; e < once.size(); ++e) EXPECT_EQ(param_only[e], once[e]);
  }
}

TEST(conv_layer, float_instantiation_agrees_with_double) {
  block const b = hand_block(3);
  for (conv_kind k : {conv_kind::sage, conv_kind::gcn}) {
    owned_conv<double> ld(k, std::int64_t{6}, std::int64_t{4}, 0u, true, 0.0f);
    owned_conv<float> lf(k, std::int64_t{6}, std::int64_t{4}, 0u, true, 0.0f);
    ld.layer.init(ld.ctx, 5);
    lf.layer.init(lf.ctx, 5);
    auto const hd = random_matrix(b.num_src(), 6, 9);
    matrix<float> hf(hd.rows(), hd.cols());
    for (std::int64_t i = 0; i < hd.size(); ++i)
      hf.values()[i] = static_cast<float>(hd.values()[i]);
    auto const od = host(ld.layer.forward(ld.ctx, view(b), host_view(hd), {}, nullptr));
    auto const of = host(lf.layer.forward(lf.ctx, view(b), host_view(hf), {}, nullptr));
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
    owned_conv<double> l(conv_kind::gcn, in, out, 0u, false, 0.0f);
    l.layer.init(l.ctx, 11);
    randomise_bias(l, 12);
    auto const h = random_matrix(n, in, 13);
    auto const got = host(l.layer.forward(l.ctx, view(b), host_view(h), {}, nullptr));
    auto w = [&](std::int64_t j, std::int64_t o) { return l.value(".weight", j, o); };
    auto bias = [&](std::int64_t r, std::int64_t o) { return l.value(".bias", r, o); };
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
  owned_conv<double> l(conv_kind::sage, std::int64_t{8}, std::int64_t{4}, 3u, true, drop);
  l.layer.init(l.ctx, 1);
  auto fwd = [&](const block& b, const step_key& key, conv_cache<double>& c) {
    auto const h = features(b);
    (void)l.layer.forward(l.ctx, view(b), host_view(h), key, &c);
  };
  auto at = [](const conv_cache<double>& c, std::int64_t i, std::int64_t j) {
    return c.h.view().host_row(i)[j];
  };
  auto values = [](const conv_cache<double>& c) {
    auto const v = c.h.view().flat().host();
    return std::vector<double>(v.begin(), v.end());
  };
  step_key const key{2024, 9, true};
  conv_cache<double> cp;
  conv_cache<double> cq;
  fwd(p, key, cp);
  fwd(q, key, cq);
  int kept = 0;
  int dropped = 0;
  for (std::int64_t i = 0; i < p.num_src(); ++i) {
    std::int64_t qi = 0;
    while (q.src_ids[qi] != p.src_ids[i]) ++qi;
    for (std::int64_t j = 0; j < 8; ++j) {
      EXPECT_EQ(at(cp, i, j), at(cq, qi, j)) << "vertex " << p.src_ids[i] << " col " << j;
      bool const keep = dropout_keeps(key.run_seed, key.batch, 3, p.src_ids[i], j, drop);
      double const raw = 1.0 + static_cast<double>(p.src_ids[i]) + 0.01 * j;
      EXPECT_EQ(at(cp, i, j), keep ? raw * 2.0 : 0.0);
      (keep ? kept : dropped)++;
    }
  }
  EXPECT_GT(kept, 5);  // the mask is not trivial
  EXPECT_GT(dropped, 5);

  // Another batch gives another mask; evaluation applies none.
  conv_cache<double> other;
  fwd(p, step_key{2024, 10, true}, other);
  EXPECT_NE(values(other), values(cp));
  conv_cache<double> eval;
  fwd(p, step_key{2024, 9, false}, eval);
  EXPECT_EQ(values(eval), features(p).values());
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
    owned_linear<double> l(std::int64_t{4}, std::int64_t{3}, 2u, p);
    l.layer.init(l.ctx, 9);
    randomise_bias(l, 10);
    auto x = random_matrix(6, 4, 11);
    auto const r = random_matrix(6, 3, 12);
    step_key const key{7, 3, true};
    auto loss = [&] {
      return dot(r, host(l.layer.forward(l.ctx, host_view(x), host_view(ids), key, nullptr)));
    };
    linear_cache<double> cache;
    auto const y = host(l.layer.forward(l.ctx, host_view(x), host_view(ids), key, &cache));
    // Forward: y = dropout(x) W + b, written out.
    auto w = [&](std::int64_t j, std::int64_t o) { return l.value(".weight", j, o); };
    for (std::int64_t i = 0; i < 6; ++i) {
      for (std::int64_t o = 0; o < 3; ++o) {
        double e = l.value(".bias", 0, o);
        for (std::int64_t j = 0; j < 4; ++j) {
          bool const keep = p == 0.0f || dropout_keeps(7, 3, 2, ids[i], j, p);
          e += (keep ? x(i, j) / (1.0 - static_cast<double>(p)) : 0.0) * w(j, o);
        }
        EXPECT_NEAR(y(i, o), e, 1e-12);
      }
    }
    l.zero_grads();
    auto const gx = host(l.layer.backward(l.ctx, host_view(r), cache));
    expect_gradient("d/dx", x, gx, loss);
    for (std::size_t i = 0; i < l.params.count(); ++i) {
      std::vector<double> const analytic(l.grad_of(i).begin(), l.grad_of(i).end());
      expect_gradient("d/d" + l.params.info(i).name, l.value_of(i), analytic, loss);
    }
    auto const inf =
        host(l.layer.forward(l.ctx.with_threads(3), host_view(x), {}, step_key{}, nullptr));
    auto const fwd = host(l.layer.forward(l.ctx, host_view(x), {}, step_key{}, nullptr));
    EXPECT_EQ(inf.values(), fwd.values());
  }
}

TEST(linear_layer, dropout_needs_row_ids) {
  owned_linear<float> l(std::int64_t{4}, std::int64_t{2}, 0u, 0.5f);
  matrix<float> x(3, 4, 1.0f);
  EXPECT_THROW((void)l.layer.forward(l.ctx, host_view(x), {}, step_key{1, 1, true}, nullptr),
               logic_error);
  EXPECT_NO_THROW((void)l.layer.forward(l.ctx, host_view(x), {}, step_key{1, 1, false}, nullptr));
}

// ---- softmax cross-entropy -------------------------------------------------------------------

/// The loss entry on the host with matrices (grad, when given, is sized to the logits here).
template <typename T>
T sce(const matrix<T>& logits, const std::vector<std::int64_t>& labels, T scale, matrix<T>* grad) {
  exec_context const ctx;
  tensor_view<T> g{};
  if (grad != nullptr) {
    grad->reset(logits.rows(), logits.cols());
    g = host_view(*grad);
  }
  return coopgnn::softmax_cross_entropy<T>(ctx, host_view(logits), host_view(labels), scale, g);
}

TEST(softmax_cross_entropy, value_and_gradient) {
  auto logits = random_matrix(6, 4, 21, -3.0, 3.0);
  std::vector<std::int64_t> const labels = {0, 3, 1, 1, 2, 0};
  double const scale = 0.25;
  matrix<double> grad;
  double const loss = sce<double>(logits, labels, scale, &grad);
  double expected = 0;
  for (std::int64_t i = 0; i < 6; ++i) {
    double z = 0;
    for (std::int64_t j = 0; j < 4; ++j) z += std::exp(logits(i, j));
    expected += -std::log(std::exp(logits(i, labels[i])) / z);
  }
  EXPECT_NEAR(loss, scale * expected, 1e-12);
  expect_gradient(
      "d/dlogits", logits, grad, [&] { return sce<double>(logits, labels, scale, nullptr); }, 1e-5);
}

TEST(softmax_cross_entropy, large_logits_do_not_overflow) {
  matrix<double> logits(2, 2, std::vector<double>{1000.0, 0.0, 0.0, 1000.0});
  std::vector<std::int64_t> const labels = {0, 0};
  matrix<double> grad;
  double const loss = sce<double>(logits, labels, 1.0, &grad);
  EXPECT_NEAR(loss, 1000.0, 1e-9);  // row 0 contributes ~0, row 1 contributes 1000
  EXPECT_NEAR(grad(1, 0), -1.0, 1e-12);
  EXPECT_NEAR(grad(1, 1), 1.0, 1e-12);
  matrix<float> lf(1, 3, std::vector<float>{-1e4f, 2e4f, 0.0f});
  std::vector<std::int64_t> const lab = {1};
  EXPECT_TRUE(std::isfinite(sce<float>(lf, lab, 1.0f, nullptr)));
}

TEST(softmax_cross_entropy, bad_label_names_row_and_value) {
  matrix<float> logits(3, 4);
  std::vector<std::int64_t> const labels = {0, 4, 1};
  try {
    sce<float>(logits, labels, 1.0f, nullptr);
    FAIL() << "expected logic_error";
  } catch (const logic_error& e) {
    std::string const msg = e.what();
    EXPECT_NE(msg.find("row 1"), std::string::npos) << msg;
    EXPECT_NE(msg.find("is 4"), std::string::npos) << msg;
  }
  std::vector<std::int64_t> const negative = {0, -1, 1};
  EXPECT_THROW(sce<float>(logits, negative, 1.0f, nullptr), logic_error);
  std::vector<std::int64_t> const short_labels = {0, 1};
  EXPECT_THROW(sce<float>(logits, short_labels, 1.0f, nullptr), logic_error);
  matrix<float> empty(0, 4);
  matrix<float> g;
  EXPECT_EQ(sce<float>(empty, {}, 1.0f, &g), 0.0f);
  // A gradient of the wrong shape is named.
  matrix<float> wrong(3, 3);
  exec_context const ctx;
  EXPECT_THROW((void)coopgnn::softmax_cross_entropy<float>(
                   ctx, host_view(logits), host_view(labels), 1.0f, host_view(wrong)),
               logic_error);
}

// ---- initialisation and validation -----------------------------------------------------------

TEST(conv_layer, init_is_keyed_and_glorot_bounded) {
  using L = owned_conv<float>;
  L a(conv_kind::sage, std::int64_t{20}, std::int64_t{10}, 1u, true, 0.0f);
  L b(conv_kind::sage, std::int64_t{20}, std::int64_t{10}, 1u, true, 0.0f);
  L c(conv_kind::sage, std::int64_t{20}, std::int64_t{10}, 2u, true, 0.0f);
  a.layer.init(a.ctx, 42);
  b.layer.init(b.ctx, 42);
  c.layer.init(c.ctx, 42);
  double const limit = std::sqrt(6.0 / 30.0);
  auto vec = [](std::span<float> s) { return std::vector<float>(s.begin(), s.end()); };
  EXPECT_EQ(a.params.info(0).name, "sage1.w_self");
  EXPECT_EQ(a.params.info(1).name, "sage1.w_neigh");
  EXPECT_EQ(a.params.info(2).name, "sage1.bias");
  EXPECT_EQ(a.params.info(1).offset, 200);  // flat layout: w_self, w_neigh, bias back to back
  EXPECT_EQ(a.params.num_values(), 410);
  EXPECT_EQ(vec(a.value_of(0)), vec(b.value_of(0)));
  EXPECT_NE(vec(a.value_of(0)), vec(c.value_of(0)));
  EXPECT_NE(vec(a.value_of(0)), vec(a.value_of(1)));
  double mean = 0;
  for (float v : a.value_of(0)) {
    EXPECT_LT(std::abs(v), limit);
    mean += v;
  }
  EXPECT_NEAR(mean / 200.0, 0.0, 0.1);
  for (float v : a.value_of(2)) EXPECT_EQ(v, 0.0f);
}

TEST(conv_layer, rejects_bad_arguments) {
  parameter_set<float> ps;
  EXPECT_THROW(conv_layer<float>(conv_kind::gcn, 0, 3, 0, true, 0.0f, ps), logic_error);
  EXPECT_THROW(conv_layer<float>(conv_kind::gcn, 3, 3, 0, true, 1.0f, ps), logic_error);
  owned_conv<float> l(conv_kind::gcn, std::int64_t{3}, std::int64_t{2}, 0u, true, 0.0f);
  // A set is laid out once: no layer joins it after allocation.
  EXPECT_THROW(conv_layer<float>(conv_kind::gcn, 3, 2, 1, true, 0.0f, l.params), logic_error);
  auto& layer = l.layer;
  exec_context const& ctx = l.ctx;
  block const b = hand_block(4);
  matrix<float> h(b.num_src(), 4);
  EXPECT_THROW((void)layer.forward(ctx, view(b), host_view(h), {}, nullptr), logic_error);
  matrix<float> h_ok(b.num_src(), 3);
  block no_degrees = b;
  no_degrees.src_degree.pop_back();
  EXPECT_THROW((void)layer.forward(ctx, view(no_degrees), host_view(h_ok), {}, nullptr),
               logic_error);
  no_degrees.src_degree.clear();  // a block without degrees: GCN says it needs them
  EXPECT_THROW((void)layer.forward(ctx, view(no_degrees), host_view(h_ok), {}, nullptr),
               logic_error);
  conv_cache<float> empty;
  matrix<float> g2(b.num_dst, 2);
  EXPECT_THROW((void)layer.backward(ctx, view(b), host_view(g2), empty), logic_error);
  conv_cache<float> cache;
  (void)layer.forward(ctx, view(b), host_view(h_ok), {}, &cache);
  matrix<float> g3(b.num_dst, 3);
  EXPECT_THROW((void)layer.backward(ctx, view(b), host_view(g3), cache), logic_error);
  // Memory spaces are checked, never bridged: host features on an emulated-device context.
  exec_context const emu(backend::emulated);
  owned_conv<float> on_device(conv_kind::gcn, std::int64_t{3}, std::int64_t{2}, 0u, true, 0.0f);
  EXPECT_THROW((void)on_device.layer.forward(emu, view(b), host_view(h_ok), {}, nullptr),
               logic_error);
}

}  // namespace
}  // namespace coopgnn::models
