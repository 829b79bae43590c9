// Dependent minibatching variates (docs/design.md section 4.3): marginals, correlation, kappa = 1
// equals plain LABOR, layer dependency, and more overlap between consecutive batches.
#include "kernels/sample/labor_variate.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <set>
#include <vector>

#include "kernels/sample/sample.hpp"
#include "runtime/core/error.hpp"
#include "runtime/core/rng.hpp"
#include "tests/common/graphs.hpp"

namespace coopgnn {
namespace {

// Test-side inverse normal CDF by bisection on std::erfc (independent of normal_quantile).
double quantile_by_bisection(double p) {
  double lo = -40, hi = 40;
  for (int it = 0; it < 70; ++it) {
    double const mid = 0.5 * (lo + hi);
    (0.5 * std::erfc(-mid / std::numbers::sqrt2) < p ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

TEST(NormalQuantile, InvertsTheCdf) {
  for (double p : {1e-12, 1e-6, 0.01, 0.02425, 0.1, 0.3, 0.5, 0.77, 0.97575, 0.999}) {
    EXPECT_NEAR(normal_quantile(p), quantile_by_bisection(p), 1e-9) << "p = " << p;
    EXPECT_NEAR(normal_cdf(normal_quantile(p)), p, 1e-12) << p;
  }
  // The upper tail mirrors the lower one (an oracle near 1 would itself lose digits).
  for (double p : {1e-12, 1e-9, 1e-4}) {
    EXPECT_NEAR(normal_quantile(1 - p), -normal_quantile(p), 1e-6 * std::abs(normal_quantile(p)));
  }
  EXPECT_TRUE(std::isinf(normal_quantile(0.0)));
  EXPECT_TRUE(std::isinf(normal_quantile(1.0)));
}

double ks_statistic(std::vector<double> u) {
  std::sort(u.begin(), u.end());
  double d = 0;
  auto const n = static_cast<double>(u.size());
  for (std::size_t i = 0; i < u.size(); ++i) {
    d = std::max({d, u[i] - static_cast<double>(i) / n, static_cast<double>(i + 1) / n - u[i]});
  }
  return d;
}

TEST(LaborVariate, EveryBatchIsUniform) {
  int const n = 20000;
  labor_dependency const dep{16, false};
  for (std::uint32_t batch : {0u, 3u, 8u, 15u, 17u}) {
    std::vector<double> u(n);
    for (int t = 0; t < n; ++t)
      u[t] = labor_variate(5, dep, 1, batch, static_cast<std::uint64_t>(t));
    // alpha = 0.001 critical value 1.95 / sqrt(n).
    EXPECT_LT(ks_statistic(u), 1.95 / std::sqrt(static_cast<double>(n))) << "batch " << batch;
  }
}

TEST(LaborVariate, CorrelationFollowsTheCosineOfThePhaseDifference) {
  int const n = 40000;
  std::int64_t const kappa = 8;
  labor_dependency const dep{kappa, false};
  auto z_of = [&](std::uint32_t batch) {
    std::vector<double> z(n);
    for (int t = 0; t < n; ++t) {
      z[t] = quantile_by_bisection(labor_variate(9, dep, 0, batch, static_cast<std::uint64_t>(t)));
    }
    return z;
  };
  auto corr = [&](const std::vector<double>& a, const std::vector<double>& b) {
    double sa = 0, sb = 0, saa = 0, sbb = 0, sab = 0;
    for (int t = 0; t < n; ++t) {
      sa += a[t];
      sb += b[t];
      saa += a[t] * a[t];
      sbb += b[t] * b[t];
      sab += a[t] * b[t];
    }
    double const ma = sa / n, mb = sb / n;
    return (sab / n - ma * mb) / std::sqrt((saa / n - ma * ma) * (sbb / n - mb * mb));
  };
  auto const z16 = z_of(16);  // window 2, c = 0
  for (std::uint32_t other : {17u, 19u, 22u}) {
    double const c = static_cast<double>(other - 16) / kappa;
    double const expected = std::cos(std::numbers::pi * c / 2);
    // Standard error of a sample correlation ~ (1 - rho^2) / sqrt(n) <= 0.005; allow 4 of them.
    EXPECT_NEAR(corr(z16, z_of(other)), expected, 0.02) << "batch " << other;
  }
  // Across a full window the variates are independent.
  EXPECT_NEAR(corr(z16, z_of(32)), 0.0, 0.02);
}

TEST(LaborVariate, KappaOneIsPlainLaborAndZeroNeverChanges) {
  for (std::uint32_t batch : {0u, 1u, 7u, 1000u}) {
    for (std::uint64_t t : {0ull, 12345ull, (1ull << 35) + 3}) {
      auto const st = rng::make_stream(77, rng::purpose::labor, 2);
      EXPECT_EQ(labor_variate(77, {1, false}, 2, batch, t), rng::uniform(st, t, 0, batch));
      EXPECT_EQ(labor_variate(77, {0, false}, 2, batch, t), rng::uniform(st, t, 0, 0));
    }
  }
  // The sampler with kappa = 1 keeps exactly the edges the plain rule keeps.
  auto const g = test::random_graph(800, 25, 4);
  std::vector<vid_t> seeds;
  for (vid_t v = 0; v < 800; v += 3) seeds.push_back(v);
  sample_params p{sampler_kind::labor, 5, 77, 1, 9};
  auto const s = sample_neighbors(exec_context{}, g, seeds, p);
  auto const st = rng::make_stream(77, rng::purpose::labor, 1);
  std::size_t o = 0;
  for (vid_t v : seeds) {
    auto const nb = g.in_neighbors(v);
    auto const d = static_cast<std::int64_t>(nb.size());
    for (vid_t t : nb) {
      bool const keep = d <= 5 || rng::uniform(st, static_cast<std::uint64_t>(t), 0, 9) <=
                                      5.0f / static_cast<float>(d);
      if (keep) {
        ASSERT_LT(o, s.nbrs.size());
        EXPECT_EQ(s.nbrs[o++], t) << "seed " << v;
      }
    }
  }
  EXPECT_EQ(o, s.nbrs.size());
}

TEST(LaborVariate, LayerDependencySharesVariatesAcrossLayers) {
  for (std::uint64_t t = 0; t < 100; ++t) {
    EXPECT_EQ(labor_variate(3, {4, true}, 0, 5, t), labor_variate(3, {4, true}, 2, 5, t));
  }
  int differ = 0;
  for (std::uint64_t t = 0; t < 100; ++t) {
    differ += labor_variate(3, {4, false}, 0, 5, t) != labor_variate(3, {4, false}, 2, 5, t);
  }
  EXPECT_GT(differ, 90);
}

TEST(LaborVariate, LargerKappaMakesConsecutiveBatchesOverlapMore) {
  // A star: vertex 0 has 400 in-neighbours; sample it with fanout 20 in consecutive batches.
  std::vector<vid_t> src, dst;
  for (vid_t t = 1; t <= 400; ++t) {
    src.push_back(t);
    dst.push_back(0);
  }
  auto const g = build_csc(401, src, dst);
  std::vector<vid_t> seeds = {0};
  auto overlap = [&](std::int64_t kappa) {
    double total = 0;
    std::set<vid_t> prev;
    for (std::uint32_t b = 0; b < 64; ++b) {
      sample_params p{sampler_kind::labor, 20, 1, 0, b};
      p.dependency.batch_dependency = kappa;
      auto const s = sample_neighbors(exec_context{}, g, seeds, p);
      std::set<vid_t> cur(s.nbrs.begin(), s.nbrs.end());
      if (b > 0) {
        std::vector<vid_t> common;
        std::set_intersection(prev.begin(), prev.end(), cur.begin(), cur.end(),
                              std::back_inserter(common));
        total += static_cast<double>(common.size());
      }
      prev = std::move(cur);
    }
    return total / 63;
  };
  double const o1 = overlap(1), o64 = overlap(64), o0 = overlap(0);
  EXPECT_LT(o1, 3.0);    // independent: about 20 * 20 / 400 = 1 shared neighbour
  EXPECT_GT(o64, 12.0);  // slowly rotating variates: most of the 20 stay
  EXPECT_GT(o0, 15.0);   // never refreshed: the same sample every batch (up to Poisson counts)
  EXPECT_GT(o64, o1);
}

TEST(LaborVariate, RejectsNegativeKappa) {
  auto const g = test::random_graph(10, 3, 1);
  std::vector<vid_t> seeds = {4};
  sample_params p{sampler_kind::labor, 2, 0, 0, 0};
  p.dependency.batch_dependency = -1;
  EXPECT_THROW(sample_neighbors(exec_context{}, g, seeds, p), logic_error);
}

}  // namespace
}  // namespace coopgnn
