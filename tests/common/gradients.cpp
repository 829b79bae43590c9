#include "tests/common/gradients.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

namespace coopgnn::test {
namespace {

double norm(std::span<const double> v) {
  double s = 0;
  for (double x : v) s += x * x;
  return std::sqrt(s);
}

}  // namespace

void expect_gradient(const std::string& what, std::span<double> var,
                     std::span<const double> analytic, const std::function<double()>& loss,
                     double h, double rel_tol) {
  SCOPED_TRACE(what);
  ASSERT_EQ(var.size(), analytic.size());
  std::vector<double> numeric(var.size());
  for (std::size_t i = 0; i < numeric.size(); ++i) {
    double const v = var[i];
    var[i] = v + h;
    double const lp = loss();
    var[i] = v - h;
    double const lm = loss();
    var[i] = v;
    numeric[i] = (lp - lm) / (2 * h);
  }
  std::vector<double> diff(numeric.size());
  for (std::size_t i = 0; i < numeric.size(); ++i) diff[i] = analytic[i] - numeric[i];
  double const scale = std::max(norm(analytic), norm(numeric));
  ASSERT_GT(scale, 1e-8) << "gradient is all zero: the check would be vacuous";
  EXPECT_LT(norm(diff) / scale, rel_tol);
}

void expect_gradient(const std::string& what, matrix<double>& var, const matrix<double>& analytic,
                     const std::function<double()>& loss, double h) {
  ASSERT_EQ(var.rows(), analytic.rows());
  ASSERT_EQ(var.cols(), analytic.cols());
  expect_gradient(what, std::span<double>(var.values()), std::span<const double>(analytic.values()),
                  loss, h);
}

}  // namespace coopgnn::test
