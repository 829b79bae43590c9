// portable_math.hpp against libm (relative error bounds) and its special values. Device parity
// (same bits) is checked in sample_gpu_test.cpp.
#include "kernels/sample/portable_math.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace coopgnn {
namespace {

double rel_err(double got, double want) { return std::abs(got - want) / std::abs(want); }

TEST(PortableMath, ExpMatchesLibm) {
  double worst = 0;
  for (double x = -708.0; x < 709.7; x += 0.01371) {
    worst = std::max(worst, rel_err(portable::exp(x), std::exp(x)));
  }
  for (double x = -1e-3; x < 1e-3; x += 1.37e-7) {
    worst = std::max(worst, rel_err(portable::exp(x), std::exp(x)));
  }
  EXPECT_LT(worst, 1e-15);
  EXPECT_EQ(portable::exp(0.0), 1.0);
  EXPECT_EQ(portable::exp(710.0), std::numeric_limits<double>::infinity());
  EXPECT_EQ(portable::exp(-746.0), 0.0);
  EXPECT_GT(portable::exp(-740.0), 0.0);  // subnormal, not flushed
  EXPECT_NEAR(portable::exp(-740.0), std::exp(-740.0), 1e-12 * std::exp(-740.0) + 1e-323);
  EXPECT_TRUE(std::isnan(portable::exp(std::nan(""))));
}

TEST(PortableMath, LogMatchesLibm) {
  double worst = 0;
  for (double x = 1e-310; x < 1e300; x *= 1.37) {
    double const want = std::log(x);
    if (want != 0) worst = std::max(worst, rel_err(portable::log(x), want));
  }
  for (double x = 0.9; x < 1.1; x += 1.3e-6) {
    double const want = std::log(x);
    if (want != 0) worst = std::max(worst, rel_err(portable::log(x), want));
  }
  EXPECT_LT(worst, 1e-15);
  EXPECT_EQ(portable::log(1.0), 0.0);
  EXPECT_EQ(portable::log(0.0), -std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(portable::log(-1.0)));
}

TEST(PortableMath, ErfcMatchesLibm) {
  double below2 = 0, above2 = 0;
  for (double x = -6.0; x < 2.0; x += 0.000731) {
    below2 = std::max(below2, rel_err(portable::erfc(x), std::erfc(x)));
  }
  for (double x = 2.0; x < 26.5; x += 0.000731) {
    above2 = std::max(above2, rel_err(portable::erfc(x), std::erfc(x)));
  }
  EXPECT_LT(below2, 5e-13);  // 1 - erf(x) cancels as x approaches 2
  EXPECT_LT(above2, 2e-13);
  EXPECT_EQ(portable::erfc(0.0), 1.0);
  EXPECT_EQ(portable::erfc(30.0), 0.0);
  EXPECT_EQ(portable::erfc(-30.0), 2.0);
}

TEST(PortableMath, NormalQuantileInvertsTheCdf) {
  for (double p = 1e-300; p < 0.5; p *= 1.5) {
    double const back = portable::normal_cdf(portable::normal_quantile(p));
    ASSERT_LT(rel_err(back, p), 1e-12) << "p = " << p;
  }
  // p = 1 - q, checked through the upper tail: the Halley step sees Phi(x) - p with an absolute
  // rounding error of about 1e-16, which bounds what any method achieves near p = 1.
  for (double q = 0.5; q > 1e-15; q /= 1.5) {
    double const p = 1.0 - q;
    double const exact_q = 1.0 - p;  // exact (Sterbenz)
    double const x = portable::normal_quantile(p);
    ASSERT_LT(std::abs(portable::normal_cdf(-x) - exact_q), 1e-12 * exact_q + 5e-16)
        << "p = 1 - " << q;
  }
  EXPECT_EQ(portable::normal_quantile(0.5), 0.0);
  EXPECT_EQ(portable::normal_cdf(0.0), 0.5);
}

}  // namespace
}  // namespace coopgnn
