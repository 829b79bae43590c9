#include "kernels/sample/labor_variate.hpp"

#include <cmath>
#include <limits>
#include <numbers>

namespace coopgnn {

double normal_cdf(double x) { return 0.5 * std::erfc(-x / std::numbers::sqrt2); }

double normal_quantile(double p) {
  if (!(p > 0.0)) return -std::numeric_limits<double>::infinity();
  if (!(p < 1.0)) return std::numeric_limits<double>::infinity();
  // Acklam's coefficients for the central region and the two tails.
  static constexpr double a[] = {-3.969683028665376e+01, 2.209460984245205e+02,
                                 -2.759285104469687e+02, 1.383577518672690e+02,
                                 -3.066479806614716e+01, 2.506628277459239e+00};
  static constexpr double b[] = {-5.447609879822406e+01, 1.615858368580409e+02,
                                 -1.556989798598866e+02, 6.680131188771972e+01,
                                 -1.328068155288572e+01};
  static constexpr double c[] = {-7.784894002430293e-03, -3.223964580411365e-01,
                                 -2.400758277161838e+00, -2.549732539343734e+00,
                                 4.374664141464968e+00,  2.938163982698783e+00};
  static constexpr double d[] = {7.784695709041462e-03, 3.224671290700398e-01,
                                 2.445134137142996e+00, 3.754408661907416e+00};
  double constexpr lo = 0.02425;
  double x;
  if (p < lo) {
    double const q = std::sqrt(-2.0 * std::log(p));
    x = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
        ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1.0);
  } else if (p <= 1.0 - lo) {
    double const q = p - 0.5;
    double const r = q * q;
    x = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
        (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1.0);
  } else {
    double const q = std::sqrt(-2.0 * std::log1p(-p));
    x = -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
        ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1.0);
  }
  // One Halley step on Phi(x) - p.
  double const e = normal_cdf(x) - p;
  double const u = e * std::sqrt(2.0 * std::numbers::pi) * std::exp(0.5 * x * x);
  return x - u / (1.0 + 0.5 * x * u);
}

float labor_variate(std::uint64_t run_seed, const labor_dependency& dep, std::uint32_t layer,
                    std::uint32_t batch, std::uint64_t vertex) {
  auto const st =
      rng::make_stream(run_seed, rng::purpose::labor, dep.layer_dependency ? 0u : layer);
  std::int64_t const kappa = dep.batch_dependency;
  if (kappa == 1) return rng::uniform(st, vertex, 0, batch);
  if (kappa <= 0) return rng::uniform(st, vertex, 0, 0);
  auto const j = static_cast<std::uint32_t>(batch / kappa);
  std::int64_t const step = batch % kappa;
  if (step == 0) return rng::uniform(st, vertex, 0, j);
  double const c = static_cast<double>(step) / static_cast<double>(kappa);
  double const z0 = normal_quantile(rng::uniform(st, vertex, 0, j));
  double const z1 = normal_quantile(rng::uniform(st, vertex, 0, j + 1));
  double const angle = 0.5 * std::numbers::pi * c;
  double const r = normal_cdf(std::cos(angle) * z0 + std::sin(angle) * z1);
  // Keep the result inside the open interval, as rng::to_unit does.
  return std::clamp(static_cast<float>(r), 0.5f / 8388608.0f, 1.0f - 0.5f / 8388608.0f);
}

}  // namespace coopgnn
