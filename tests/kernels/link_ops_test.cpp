// Host link-prediction and TMA layer ops (kernels/dense/link_ops.hpp) against brute-force loops
// written here: exact on integer-valued data, shapes empty, 1 and 31/32/33 columns, aliasing;
// finite differences in double for PReLU (both slope modes), LayerNorm (x, gamma, beta) and BCE;
// adam_update_rows against adam_update on the selected rows; and the errors (wrong memory space
// on the emulated device, shape mismatches, bad labels, ids and rows out of range).
#include "kernels/dense/link_ops.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "kernels/dense/elementwise.hpp"
#include "runtime/core/error.hpp"
#include "tests/common/gradients.hpp"

namespace coopgnn {
namespace {

/// Integer values in [-k, k] from (salt, i): exact in float and double for these sizes.
template <typename T>
std::vector<T> ints(std::int64_t n, int k, std::uint64_t salt) {
  std::vector<T> v(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) {
    std::uint64_t h = salt * 1000003u + static_cast<std::uint64_t>(i) * 7919u;
    h ^= h >> 13;
    h *= 0x9E3779B97F4A7C15ULL;
    h ^= h >> 29;
    v[static_cast<std::size_t>(i)] = static_cast<T>(static_cast<std::int64_t>(h % (2 * k + 1)) - k);
  }
  return v;
}

template <typename T>
matrix<T> int_matrix(std::int64_t rows, std::int64_t cols, int k, std::uint64_t salt) {
  return matrix<T>(rows, cols, ints<T>(rows * cols, k, salt));
}

/// Smooth non-integer values in roughly [-2, 2] (finite differences, LayerNorm).
std::vector<double> smooth(std::int64_t n, std::uint64_t salt) {
  std::vector<double> v(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) {
    v[static_cast<std::size_t>(i)] =
        2.0 * std::sin(0.7 * static_cast<double>(i) + 1.3 * static_cast<double>(salt) + 0.1);
  }
  return v;
}

template <typename T>
bool any_nonzero(const std::vector<T>& v) {
  for (T x : v) {
    if (x != T{0}) return true;
  }
  return false;
}

struct shape {
  std::int64_t rows, cols;
};
std::vector<shape> const kShapes = {{0, 3}, {3, 0}, {1, 1}, {5, 31}, {4, 32}, {3, 33}, {40, 7}};

exec_context const host;

// ---- row_dot, scale_rows, hadamard -------------------------------------------------------------

template <typename T>
void check_row_dot() {
  for (auto [m, d] : kShapes) {
    SCOPED_TRACE(std::to_string(m) + "x" + std::to_string(d));
    auto const a = int_matrix<T>(m, d, 4, 1);
    auto const b = int_matrix<T>(m, d, 4, 2);
    std::vector<T> out(static_cast<std::size_t>(m), T{-99});
    row_dot<T>(host, host_view(a), host_view(b), host_view(out));
    for (std::int64_t i = 0; i < m; ++i) {
      std::int64_t expect = 0;
      for (std::int64_t j = 0; j < d; ++j) {
        expect += static_cast<std::int64_t>(a(i, j)) * static_cast<std::int64_t>(b(i, j));
      }
      EXPECT_EQ(out[static_cast<std::size_t>(i)], static_cast<T>(expect)) << "row " << i;
    }
    if (m * d > 1) {
      EXPECT_TRUE(any_nonzero(out));
    }
  }
}
TEST(link_ops, row_dot_is_the_exact_row_sum_of_products) {
  check_row_dot<float>();
  check_row_dot<double>();
}

template <typename T>
void check_scale_rows_and_hadamard() {
  for (auto [m, d] : kShapes) {
    SCOPED_TRACE(std::to_string(m) + "x" + std::to_string(d));
    auto const s = ints<T>(m, 3, 3);
    auto const x = int_matrix<T>(m, d, 5, 4);
    auto const b = int_matrix<T>(m, d, 5, 5);
    matrix<T> y(m, d, T{-99});
    scale_rows<T>(host, host_view(s), host_view(x), host_view(y));
    matrix<T> h(m, d, T{-99});
    hadamard<T>(host, host_view(x), host_view(b), host_view(h));
    for (std::int64_t i = 0; i < m; ++i) {
      for (std::int64_t j = 0; j < d; ++j) {
        EXPECT_EQ(y(i, j), s[static_cast<std::size_t>(i)] * x(i, j));
        EXPECT_EQ(h(i, j), x(i, j) * b(i, j));
      }
    }
    // In place: y is x, out is a (and out is b).
    matrix<T> xi = x;
    scale_rows<T>(host, host_view(s), host_view(xi), host_view(xi));
    EXPECT_EQ(xi.values(), y.values());
    matrix<T> ai = x;
    hadamard<T>(host, host_view(ai), host_view(b), host_view(ai));
    EXPECT_EQ(ai.values(), h.values());
    matrix<T> bi = b;
    hadamard<T>(host, host_view(x), host_view(bi), host_view(bi));
    EXPECT_EQ(bi.values(), h.values());
  }
}
TEST(link_ops, scale_rows_and_hadamard_are_elementwise_products_in_place_too) {
  check_scale_rows_and_hadamard<float>();
  check_scale_rows_and_hadamard<double>();
}

// ---- scatter_add_rows --------------------------------------------------------------------------

template <typename T>
void check_scatter_add_rows() {
  for (auto [m, d] : kShapes) {
    SCOPED_TRACE(std::to_string(m) + "x" + std::to_string(d));
    std::int64_t const n = 6;  // fewer output rows than m: repeated ids; row 5 never hit
    auto const x = int_matrix<T>(m, d, 6, 7);
    std::vector<std::int64_t> ids(static_cast<std::size_t>(m));
    for (std::int64_t i = 0; i < m; ++i) ids[static_cast<std::size_t>(i)] = (i * 7 + 3) % (n - 1);
    auto const start = int_matrix<T>(n, d, 3, 8);
    matrix<T> out = start;
    scatter_add_rows<T>(host, host_view(x), host_view(ids), host_view(out));
    for (std::int64_t r = 0; r < n; ++r) {
      for (std::int64_t j = 0; j < d; ++j) {
        T expect = start(r, j);
        for (std::int64_t i = 0; i < m; ++i) {
          if (ids[static_cast<std::size_t>(i)] == r) expect += x(i, j);
        }
        EXPECT_EQ(out(r, j), expect) << "row " << r << " column " << j;
      }
    }
    for (std::int64_t j = 0; j < d; ++j) EXPECT_EQ(out(n - 1, j), start(n - 1, j));
  }
}
TEST(link_ops, scatter_add_rows_accumulates_every_position_into_its_row) {
  check_scatter_add_rows<float>();
  check_scatter_add_rows<double>();
}

TEST(link_ops, scatter_add_rows_rejects_an_id_out_of_range_before_writing) {
  auto const x = int_matrix<float>(3, 2, 3, 9);
  matrix<float> out(4, 2, 1.0f);
  for (std::int64_t bad : {std::int64_t{4}, std::int64_t{-1}}) {
    std::vector<std::int64_t> const ids{0, bad, 2};
    try {
      scatter_add_rows<float>(host, host_view(x), host_view(ids), host_view(out));
      FAIL() << "expected logic_error";
    } catch (const logic_error& e) {
      EXPECT_NE(std::string(e.what()).find("position 1"), std::string::npos) << e.what();
    }
    EXPECT_EQ(out.values(), std::vector<float>(8, 1.0f));
  }
  std::vector<std::int64_t> const two{0, 1};
  EXPECT_THROW(scatter_add_rows<float>(host, host_view(x), host_view(two), host_view(out)),
               logic_error);
  matrix<float> narrow(4, 3);
  std::vector<std::int64_t> const three{0, 1, 2};
  EXPECT_THROW(scatter_add_rows<float>(host, host_view(x), host_view(three), host_view(narrow)),
               logic_error);
}

// ---- PReLU -------------------------------------------------------------------------------------

template <typename T>
void check_prelu(bool per_channel) {
  for (auto [m, d] : kShapes) {
    SCOPED_TRACE(std::to_string(m) + "x" + std::to_string(d) + (per_channel ? " channel" : ""));
    std::int64_t const na = per_channel ? d : 1;
    if (na == 0) continue;  // no slope for no columns
    std::vector<T> alpha(static_cast<std::size_t>(na));
    for (std::int64_t c = 0; c < na; ++c) alpha[c] = static_cast<T>(0.25 * (c % 5) - 0.5);
    auto const x = int_matrix<T>(m, d, 4, 10);
    auto const g = int_matrix<T>(m, d, 4, 11);
    matrix<T> y(m, d, T{-99});
    prelu_forward<T>(host, host_view(x), host_view(alpha), host_view(y));
    auto const ag0 = ints<T>(na, 3, 12);
    std::vector<T> ag = ag0;
    matrix<T> gi(m, d, T{-99});
    prelu_backward<T>(host, host_view(g), host_view(x), host_view(alpha), host_view(gi),
                      host_view(ag));
    std::vector<T> expect_ag = ag0;
    for (std::int64_t i = 0; i < m; ++i) {
      for (std::int64_t j = 0; j < d; ++j) {
        T const a = alpha[per_channel ? j : 0];
        EXPECT_EQ(y(i, j), x(i, j) > 0 ? x(i, j) : a * x(i, j));
        EXPECT_EQ(gi(i, j), x(i, j) > 0 ? g(i, j) : a * g(i, j));
        if (x(i, j) <= 0) expect_ag[per_channel ? j : 0] += x(i, j) * g(i, j);
      }
    }
    EXPECT_EQ(ag, expect_ag);
    // In place: y is x; grad_in is grad_out.
    matrix<T> xi = x;
    prelu_forward<T>(host, host_view(xi), host_view(alpha), host_view(xi));
    EXPECT_EQ(xi.values(), y.values());
    matrix<T> gg = g;
    std::vector<T> ag2 = ag0;
    prelu_backward<T>(host, host_view(gg), host_view(x), host_view(alpha), host_view(gg),
                      host_view(ag2));
    EXPECT_EQ(gg.values(), gi.values());
    EXPECT_EQ(ag2, ag);
  }
}
TEST(link_ops, prelu_forward_and_backward_match_the_definition) {
  for (bool pc : {false, true}) {
    check_prelu<float>(pc);
    check_prelu<double>(pc);
  }
}

/// sum_e w[e] * y[e].
double weighted(const matrix<double>& y, const std::vector<double>& w) {
  double s = 0.0;
  for (std::size_t e = 0; e < w.size(); ++e) s += w[e] * y.values()[e];
  return s;
}

TEST(link_ops, prelu_backward_matches_finite_differences) {
  std::int64_t const m = 4, d = 33;
  for (bool per_channel : {false, true}) {
    SCOPED_TRACE(per_channel ? "per channel" : "shared");
    std::vector<double> x = smooth(m * d, 1);
    for (auto& v : x) v += v >= 0 ? 0.1 : -0.1;  // away from the kink
    std::vector<double> alpha = smooth(per_channel ? d : 1, 2);
    auto const w = smooth(m * d, 3);
    auto loss = [&] {
      matrix<double> y(m, d);
      prelu_forward<double>(host, tensor_view<const double>{x.data(), m, d}, host_view(alpha),
                            host_view(y));
      return weighted(y, w);
    };
    matrix<double> gi(m, d);
    std::vector<double> ag(alpha.size(), 0.0);
    prelu_backward<double>(host, tensor_view<const double>{w.data(), m, d},
                           tensor_view<const double>{x.data(), m, d}, host_view(alpha),
                           host_view(gi), host_view(ag));
    test::expect_gradient("d/dx", x, gi.values(), loss);
    test::expect_gradient("d/dalpha", alpha, ag, loss);
  }
}

// ---- LayerNorm ---------------------------------------------------------------------------------

/// y, mean and rstd of the definition, in long double.
struct layer_norm_ref {
  std::vector<long double> y, mean, rstd;
};
template <typename T>
layer_norm_ref naive_layer_norm(const matrix<T>& x, const std::vector<T>& gamma,
                                const std::vector<T>& beta, double eps) {
  layer_norm_ref r;
  std::int64_t const d = x.cols();
  for (std::int64_t i = 0; i < x.rows(); ++i) {
    long double mu = 0;
    for (std::int64_t j = 0; j < d; ++j) mu += x(i, j);
    mu /= d;
    long double var = 0;
    for (std::int64_t j = 0; j < d; ++j) var += (x(i, j) - mu) * (x(i, j) - mu);
    var /= d;
    long double const rs = 1.0L / std::sqrt(var + eps);
    r.mean.push_back(mu);
    r.rstd.push_back(rs);
    for (std::int64_t j = 0; j < d; ++j) r.y.push_back((x(i, j) - mu) * rs * gamma[j] + beta[j]);
  }
  return r;
}

template <typename T>
void check_layer_norm_forward(double tol) {
  for (auto [m, d] : kShapes) {
    if (d == 0) continue;  // rows without columns are an error (below)
    SCOPED_TRACE(std::to_string(m) + "x" + std::to_string(d));
    auto const x = int_matrix<T>(m, d, 6, 13);
    auto gamma = ints<T>(d, 2, 14);
    auto const beta = ints<T>(d, 2, 15);
    matrix<T> y(m, d, T{-99});
    std::vector<T> mean(static_cast<std::size_t>(m)), rstd(static_cast<std::size_t>(m));
    T const eps = static_cast<T>(1e-5);
    layer_norm_forward<T>(host, host_view(x), host_view(gamma), host_view(beta), eps, host_view(y),
                          host_view(mean), host_view(rstd));
    auto const ref = naive_layer_norm(x, gamma, beta, static_cast<double>(eps));
    for (std::int64_t i = 0; i < m; ++i) {
      EXPECT_NEAR(mean[i], static_cast<double>(ref.mean[i]), tol);
      EXPECT_NEAR(rstd[i], static_cast<double>(ref.rstd[i]),
                  tol * static_cast<double>(ref.rstd[i]));
    }
    for (std::size_t e = 0; e < ref.y.size(); ++e) {
      auto const r = static_cast<double>(ref.y[e]);
      EXPECT_NEAR(y.values()[e], r, tol * std::max(1.0, std::abs(r))) << "element " << e;
    }
    // The result does not depend on the host thread count.
    matrix<T> y3(m, d);
    std::vector<T> mean3(static_cast<std::size_t>(m)), rstd3(static_cast<std::size_t>(m));
    layer_norm_forward<T>(host.with_threads(3), host_view(x), host_view(gamma), host_view(beta),
                          eps, host_view(y3), host_view(mean3), host_view(rstd3));
    EXPECT_EQ(y3.values(), y.values());
    EXPECT_EQ(rstd3, rstd);
  }
}
TEST(link_ops, layer_norm_forward_matches_the_definition) {
  check_layer_norm_forward<float>(1e-5);
  check_layer_norm_forward<double>(1e-12);
}

TEST(link_ops, layer_norm_backward_matches_finite_differences) {
  for (std::int64_t d : {1, 31, 32, 33}) {
    SCOPED_TRACE("d = " + std::to_string(d));
    std::int64_t const m = 3;
    std::vector<double> x = smooth(m * d, 4);
    std::vector<double> gamma = smooth(d, 5);
    std::vector<double> beta = smooth(d, 6);
    auto const w = smooth(m * d, 7);
    double const eps = 1e-5;
    std::vector<double> mean(m), rstd(m);
    auto loss = [&] {
      matrix<double> y(m, d);
      layer_norm_forward<double>(host, tensor_view<const double>{x.data(), m, d}, host_view(gamma),
                                 host_view(beta), eps, host_view(y), host_view(mean),
                                 host_view(rstd));
      return weighted(y, w);
    };
    (void)loss();  // mean and rstd at x
    auto const gg0 = smooth(d, 8);
    auto const bg0 = smooth(d, 9);
    std::vector<double> gg = gg0, bg = bg0;
    matrix<double> gi(m, d);
    tensor_view<const double> const wv{w.data(), m, d};
    layer_norm_backward<double>(host, wv, tensor_view<const double>{x.data(), m, d},
                                host_view(gamma), host_view(mean), host_view(rstd), host_view(gi),
                                host_view(gg), host_view(bg));
    std::vector<double> dgamma(gamma.size()), dbeta(beta.size());
    for (std::size_t j = 0; j < gamma.size(); ++j) {
      dgamma[j] = gg[j] - gg0[j];
      dbeta[j] = bg[j] - bg0[j];
    }
    // With one column every output is beta: the x and gamma gradients are exactly zero.
    if (d > 1) {
      test::expect_gradient("d/dx", x, gi.values(), loss);
      test::expect_gradient("d/dgamma", gamma, dgamma, loss);
    } else {
      EXPECT_EQ(gi.values(), std::vector<double>(gi.values().size(), 0.0));
      EXPECT_EQ(dgamma, std::vector<double>(dgamma.size(), 0.0));
    }
    test::expect_gradient("d/dbeta", beta, dbeta, loss);
    // grad_in may be exactly grad_out.
    (void)loss();  // mean and rstd at x again
    matrix<double> inplace(m, d, w);
    std::vector<double> gg2 = gg0, bg2 = bg0;
    layer_norm_backward<double>(host, host_view(inplace), tensor_view<const double>{x.data(), m, d},
                                host_view(gamma), host_view(mean), host_view(rstd),
                                host_view(inplace), host_view(gg2), host_view(bg2));
    EXPECT_EQ(inplace.values(), gi.values());
    EXPECT_EQ(gg2, gg);
    EXPECT_EQ(bg2, bg);
  }
}

TEST(link_ops, layer_norm_rejects_bad_shapes_and_aliasing) {
  matrix<float> x(2, 3), y(2, 3);
  std::vector<float> g3(3), g2(2), m2(2), m1(1);
  EXPECT_THROW(layer_norm_forward<float>(host, host_view(x), host_view(g2), host_view(g3), 1e-5f,
                                         host_view(y), host_view(m2), host_view(m2)),
               logic_error);
  EXPECT_THROW(layer_norm_forward<float>(host, host_view(x), host_view(g3), host_view(g3), 1e-5f,
                                         host_view(y), host_view(m1), host_view(m2)),
               logic_error);
  EXPECT_THROW(layer_norm_forward<float>(host, host_view(x), host_view(g3), host_view(g3), 1e-5f,
                                         host_view(x), host_view(m2), host_view(m2)),
               logic_error);
  matrix<float> no_cols(2, 0);
  std::vector<float> g0;
  EXPECT_THROW(layer_norm_forward<float>(host, host_view(no_cols), host_view(g0), host_view(g0),
                                         1e-5f, host_view(no_cols), host_view(m2), host_view(m2)),
               logic_error);
  matrix<float> y23(2, 3), gi(2, 3);
  EXPECT_THROW(
      layer_norm_backward<float>(host, host_view(y23), host_view(x), host_view(g3), host_view(m2),
                                 host_view(m2), host_view(x), host_view(g3), host_view(g3)),
      logic_error);
  EXPECT_THROW(
      layer_norm_backward<float>(host, host_view(y23), host_view(x), host_view(g3), host_view(m2),
                                 host_view(m2), host_view(gi), host_view(g2), host_view(g3)),
      logic_error);
}

// ---- BCE with logits ---------------------------------------------------------------------------

TEST(link_ops, bce_with_logits_matches_the_log_sigmoid_definition) {
  for (std::int64_t n : {0, 1, 31, 32, 33}) {
    SCOPED_TRACE("n = " + std::to_string(n));
    auto const x = smooth(n, 10);
    std::vector<double> y(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) y[i] = static_cast<double>((i * 5 / 3) % 2);
    double const scale = 0.375;
    std::vector<double> grad(static_cast<std::size_t>(n), -99.0);
    double const loss =
        bce_with_logits<double>(host, host_view(x), host_view(y), scale, host_view(grad));
    std::vector<float> const xf(x.begin(), x.end()), yf(y.begin(), y.end());
    std::vector<float> gradf(static_cast<std::size_t>(n));
    float const lossf = bce_with_logits<float>(host, host_view(xf), host_view(yf),
                                               static_cast<float>(scale), host_view(gradf));
    long double expect = 0;
    for (std::int64_t i = 0; i < n; ++i) {
      long double const s = 1.0L / (1.0L + std::exp(-static_cast<long double>(x[i])));
      expect -= y[i] * std::log(s) + (1 - y[i]) * std::log(1 - s);
      auto const g = static_cast<double>(scale * (s - y[i]));
      EXPECT_NEAR(grad[i], g, 1e-15) << i;
      EXPECT_NEAR(gradf[i], g, 1e-7) << i;
    }
    auto const e = static_cast<double>(scale * expect);
    EXPECT_NEAR(loss, e, 1e-13 * std::max(1.0, e));
    EXPECT_NEAR(lossf, e, 1e-6 * std::max(1.0, e));
    if (n > 0) {
      EXPECT_GT(loss, 0.0);
    }
  }
}

TEST(link_ops, bce_with_logits_gradient_matches_finite_differences_and_is_stable) {
  std::int64_t const n = 33;
  std::vector<double> x = smooth(n, 11);
  for (auto& v : x) v *= 3.0;
  std::vector<double> y(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) y[i] = static_cast<double>(i % 3 == 0);
  auto loss = [&] { return bce_with_logits<double>(host, host_view(x), host_view(y), 0.5, {}); };
  std::vector<double> grad(static_cast<std::size_t>(n));
  double const l0 = bce_with_logits<double>(host, host_view(x), host_view(y), 0.5, host_view(grad));
  EXPECT_EQ(l0, loss());  // the gradient is optional and does not change the value
  test::expect_gradient("d/dlogits", x, grad, loss);
  // Huge logits: no overflow, loss ~ |x| for the wrong label, ~0 for the right one.
  std::vector<float> const big{1000.0f, -1000.0f, 1000.0f, -1000.0f};
  std::vector<float> const lab{0.0f, 1.0f, 1.0f, 0.0f};
  std::vector<float> g(4);
  float const l = bce_with_logits<float>(host, host_view(big), host_view(lab), 1.0f, host_view(g));
  EXPECT_EQ(l, 2000.0f);
  EXPECT_EQ(g, (std::vector<float>{1.0f, -1.0f, 0.0f, 0.0f}));
}

TEST(link_ops, bce_with_logits_rejects_bad_labels_and_sizes) {
  std::vector<float> const x{0.5f, -1.0f, 2.0f};
  for (float bad : {2.0f, 0.5f, -1.0f}) {
    std::vector<float> const y{0.0f, 1.0f, bad};
    try {
      (void)bce_with_logits<float>(host, host_view(x), host_view(y), 1.0f, {});
      FAIL() << "expected logic_error";
    } catch (const logic_error& e) {
      EXPECT_NE(std::string(e.what()).find("position 2"), std::string::npos) << e.what();
    }
  }
  std::vector<float> const y2{0.0f, 1.0f};
  EXPECT_THROW((void)bce_with_logits<float>(host, host_view(x), host_view(y2), 1.0f, {}),
               logic_error);
  std::vector<float> const y3{0.0f, 1.0f, 1.0f};
  std::vector<float> g2(2);
  EXPECT_THROW((void)bce_with_logits<float>(host, host_view(x), host_view(y3), 1.0f, host_view(g2)),
               logic_error);
}

// ---- adam_update_rows --------------------------------------------------------------------------

TEST(link_ops, adam_update_rows_is_adam_update_on_the_selected_rows_only) {
  std::int64_t const n = 7, d = 33;
  auto const value0 = matrix<float>(n, d, ints<float>(n * d, 3, 20));
  auto const grad = matrix<float>(n, d, ints<float>(n * d, 3, 21));
  auto const m0 = matrix<float>(n, d, ints<float>(n * d, 1, 22));
  auto const v0 = matrix<float>(n, d, std::vector<float>(static_cast<std::size_t>(n * d), 0.5f));
  adam_step_params const p{0.01, 0.9, 0.999, 1e-8, 5e-4, 0.1, 0.001};
  std::vector<std::int64_t> const rows{5, 0, 3};
  // The compact gradient: row k for rows[k].
  matrix<float> compact(3, d);
  for (std::int64_t k = 0; k < 3; ++k) std::copy_n(grad.row(rows[k]), d, compact.row(k));
  auto value = value0, m = m0, v = v0;
  adam_update_rows(host, host_view(value), host_view(std::as_const(compact)), host_view(m),
                   host_view(v), host_view(rows), p);
  for (std::int64_t r = 0; r < n; ++r) {
    SCOPED_TRACE("row " + std::to_string(r));
    bool const selected = r == 5 || r == 0 || r == 3;
    std::vector<float> ev(value0.row(r), value0.row(r) + d), em(m0.row(r), m0.row(r) + d),
        evv(v0.row(r), v0.row(r) + d);
    std::vector<float> const eg(grad.row(r), grad.row(r) + d);
    if (selected) {
      adam_update(host, host_view(ev), host_view(eg), host_view(em), host_view(evv), p);
    }
    // Bit-identical: memcmp rather than ==, so even NaN payloads and signed zeros would count.
    EXPECT_EQ(std::memcmp(value.row(r), ev.data(), sizeof(float) * d), 0);
    EXPECT_EQ(std::memcmp(m.row(r), em.data(), sizeof(float) * d), 0);
    EXPECT_EQ(std::memcmp(v.row(r), evv.data(), sizeof(float) * d), 0);
    if (selected) {
      EXPECT_NE(value(r, 0), value0(r, 0));
    }
  }
  // No rows or no columns: nothing happens.
  auto untouched = value0;
  adam_update_rows(host, host_view(untouched), tensor_view<const float>{nullptr, 0, d},
                   host_view(m), host_view(v), {}, p);
  EXPECT_EQ(untouched.values(), value0.values());
}

TEST(link_ops, adam_update_rows_rejects_rows_out_of_range_and_shape_mismatches) {
  matrix<float> value(3, 2), grad(2, 2), m(3, 2), v(3, 2), short_v(2, 2), grad1(1, 2);
  adam_step_params const p{0.01, 0.9, 0.999, 1e-8, 0.0, 0.1, 0.001};
  std::vector<std::int64_t> const bad{0, 3};
  try {
    adam_update_rows(host, host_view(value), host_view(grad), host_view(m), host_view(v),
                     host_view(bad), p);
    FAIL() << "expected logic_error";
  } catch (const logic_error& e) {
    EXPECT_NE(std::string(e.what()).find("row 3"), std::string::npos) << e.what();
  }
  std::vector<std::int64_t> const ok{1};
  EXPECT_THROW(adam_update_rows(host, host_view(value), host_view(grad1), host_view(m),
                                host_view(short_v), host_view(ok), p),
               logic_error);
  // The gradient must have one row per selected row.
  EXPECT_THROW(adam_update_rows(host, host_view(value), host_view(grad), host_view(m), host_view(v),
                                host_view(ok), p),
               logic_error);
}

// ---- memory spaces and shapes ------------------------------------------------------------------

TEST(link_ops, every_entry_rejects_a_host_operand_on_the_emulated_device) {
  exec_context const emu(backend::emulated);
  matrix<float> hx(2, 3, 1.0f);
  auto dx = upload(emu, hx);
  auto dy = upload(emu, hx);
  std::vector<float> h2(2, 1.0f), h3(3, 1.0f);
  auto d2 = upload<float>(emu, h2);
  auto d3 = upload<float>(emu, h3);
  auto d1 = upload<float>(emu, std::vector<float>{0.25f});
  std::vector<std::int64_t> const hids{0, 1};
  auto dids = upload<std::int64_t>(emu, hids);
  auto expect_named = [](const std::function<void()>& f, const std::string& operand) {
    try {
      f();
      ADD_FAILURE() << "expected logic_error for " << operand;
    } catch (const logic_error& e) {
      EXPECT_NE(std::string(e.what()).find(operand + " is host memory"), std::string::npos)
          << e.what();
    }
  };
  expect_named([&] { row_dot<float>(emu, host_view(hx), dx.view(), d2.view()); }, "a");
  expect_named([&] { scale_rows<float>(emu, host_view(h2), dx.view(), dy.view()); }, "s");
  expect_named([&] { hadamard<float>(emu, dx.view(), dx.view(), host_view(hx)); }, "out");
  expect_named([&] { scatter_add_rows<float>(emu, dx.view(), host_view(hids), dy.view()); }, "ids");
  expect_named([&] { prelu_forward<float>(emu, dx.view(), host_view(h3), dy.view()); }, "alpha");
  expect_named(
      [&] {
        prelu_backward<float>(emu, dx.view(), dx.view(), d1.view(), dy.view(), host_view(h2));
      },
      "alpha_grad");
  expect_named(
      [&] {
        layer_norm_forward<float>(emu, dx.view(), d3.view(), d3.view(), 1e-5f, dy.view(), d2.view(),
                                  host_view(h2));
      },
      "rstd");
  expect_named(
      [&] {
        layer_norm_backward<float>(emu, dx.view(), host_view(hx), d3.view(), d2.view(), d2.view(),
                                   dy.view(), d3.view(), d3.view());
      },
      "x");
  expect_named([&] { (void)bce_with_logits<float>(emu, d2.view(), host_view(h2), 1.0f, {}); },
               "labels");
  expect_named(
      [&] {
        auto dv = upload(emu, hx);
        auto dm = upload(emu, hx);
        adam_update_rows(emu, dv.view(), dx.view(), dm.view(), host_view(hx), dids.view(),
                         adam_step_params{});
      },
      "v");
  // The same calls with every operand on the device run (host code on device-marked memory).
  EXPECT_NO_THROW(row_dot<float>(emu, dx.view(), dx.view(), d2.view()));
  EXPECT_EQ(download<float>(emu, d2.view()), (std::vector<float>{3.0f, 3.0f}));
}

TEST(link_ops, elementwise_entries_reject_shape_mismatches) {
  matrix<float> a(2, 3), b(2, 4), c(3, 3);
  std::vector<float> o2(2), o3(3), alpha2(2);
  EXPECT_THROW(row_dot<float>(host, host_view(a), host_view(b), host_view(o2)), logic_error);
  EXPECT_THROW(row_dot<float>(host, host_view(a), host_view(a), host_view(o3)), logic_error);
  EXPECT_THROW(scale_rows<float>(host, host_view(o3), host_view(a), host_view(a)), logic_error);
  EXPECT_THROW(scale_rows<float>(host, host_view(o2), host_view(a), host_view(c)), logic_error);
  EXPECT_THROW(hadamard<float>(host, host_view(a), host_view(b), host_view(a)), logic_error);
  EXPECT_THROW(hadamard<float>(host, host_view(a), host_view(a), host_view(c)), logic_error);
  EXPECT_THROW(prelu_forward<float>(host, host_view(a), host_view(alpha2), host_view(a)),
               logic_error);
  EXPECT_THROW(prelu_forward<float>(host, host_view(a), host_view(o3), host_view(c)), logic_error);
  std::vector<float> one(1);
  EXPECT_THROW(prelu_backward<float>(host, host_view(a), host_view(a), host_view(o3), host_view(a),
                                     host_view(one)),
               logic_error);
  EXPECT_THROW(prelu_backward<float>(host, host_view(a), host_view(c), host_view(one), host_view(a),
                                     host_view(one)),
               logic_error);
}

}  // namespace
}  // namespace coopgnn
