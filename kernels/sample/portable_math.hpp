// Bit-reproducible double-precision exp, log, erfc and the standard normal CDF and quantile, for
// host and device alike (docs/design.md section 2, parity rule; section 4.3).
//
// libm and CUDA's math library round transcendental functions differently, so a LABOR variate
// computed with std::erfc on the host and erfc() on the device can differ in the last bits, and a
// variate near the threshold k / d_s would then flip an edge. Everything here is built only from
// +, -, *, / and sqrt, which IEEE 754 rounds correctly on both sides, plus exact operations
// (floor, comparisons, exponent bit manipulation). On the device every operation goes through
// __dadd_rn / __dsub_rn / __dmul_rn / __ddiv_rn / __dsqrt_rn, which nvcc never contracts into
// FMAs; on the host the build passes -ffp-contract=off (CMakeLists.txt: g++ contracts in C++ even
// with -std=c++20 when the target has FMA) and x86-64 uses SSE2 doubles.
// The same inputs therefore give the same bits on both sides, independent of -fmad.
//
// Accuracy (tested in tests/kernels/portable_math_test.cpp against std::):
//   exp (normal results), log: relative error below 1e-15; erfc: relative below 5e-13 for
//   x < 2 (1 - erf cancels) and below 2e-13 beyond; normal_cdf(normal_quantile(p)) = p within
//   1e-12 relative.
#pragma once

#include <cstdint>
#include <limits>

#if !defined(__CUDA_ARCH__)
#include <bit>
#include <cmath>
#endif

#include "runtime/core/hd.hpp"

namespace coopgnn::portable {

// ---- correctly rounded primitives, never contracted --------------------------------------------
COOPGNN_HD inline double add(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dadd_rn(a, b);
#else
  return a + b;
#endif
}
COOPGNN_HD inline double sub(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dsub_rn(a, b);
#else
  return a - b;
#endif
}
COOPGNN_HD inline double mul(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dmul_rn(a, b);
#else
  return a * b;
#endif
}
COOPGNN_HD inline double div(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __ddiv_rn(a, b);
#else
  return a / b;
#endif
}
COOPGNN_HD inline double sqrt(double a) {
#if defined(__CUDA_ARCH__)
  return __dsqrt_rn(a);
#else
  return std::sqrt(a);
#endif
}
/// Largest integer <= a (exact).
COOPGNN_HD inline double floor(double a) {
#if defined(__CUDA_ARCH__)
  return ::floor(a);
#else
  return std::floor(a);
#endif
}
COOPGNN_HD inline std::uint64_t bits_of(double a) {
#if defined(__CUDA_ARCH__)
  return static_cast<std::uint64_t>(__double_as_longlong(a));
#else
  return std::bit_cast<std::uint64_t>(a);
#endif
}
COOPGNN_HD inline double from_bits(std::uint64_t b) {
#if defined(__CUDA_ARCH__)
  return __longlong_as_double(static_cast<long long>(b));
#else
  return std::bit_cast<double>(b);
#endif
}
COOPGNN_HD inline bool is_nan(double a) { return !(a == a); }

/// c[0] + x (c[1] + x (c[2] + ...)) for n coefficients, lowest degree first.
template <int N>
COOPGNN_HD inline double polynomial(double x, const double (&c)[N]) {
  double r = c[N - 1];
  for (int i = N - 2; i >= 0; --i) r = add(c[i], mul(r, x));
  return r;
}

// ---- constants ----------------------------------------------------------------------------------
inline constexpr double kInf = std::numeric_limits<double>::infinity();
inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
inline constexpr double kLn2Hi = 6.93147180369123816490e-01;  // 0x3FE62E42FEE00000: 32 bits
inline constexpr double kLn2Lo = 1.90821492927058770002e-10;  // ln 2 - kLn2Hi
inline constexpr double kLog2e = 1.44269504088896338700e+00;
inline constexpr double kSqrt2 = 1.41421356237309514547e+00;
inline constexpr double kSqrtPi = 1.77245385090551588192e+00;
inline constexpr double kSqrt2Pi = 2.50662827463100024161e+00;

/// 2^k as a double for -1022 <= k <= 1023 (exact).
COOPGNN_HD inline double pow2(int k) {
  return from_bits(static_cast<std::uint64_t>(k + 1023) << 52);
}

/// e^x. Cody-Waite reduction x = k ln 2 + r, |r| <= ln(2) / 2, then the Taylor polynomial of
/// degree 14 (truncation below 5e-18 relative) and an exact scaling by 2^k. Overflow gives +inf,
/// underflow 0 (gradually through subnormals); NaN propagates.
COOPGNN_HD inline double exp(double x) {
  if (is_nan(x)) return x;
  if (x > 709.782712893384) return kInf;
  if (x < -745.1332191019412) return 0.0;
  double const kd = floor(add(mul(x, kLog2e), 0.5));
  double const r = sub(sub(x, mul(kd, kLn2Hi)), mul(kd, kLn2Lo));  // kd * kLn2Hi is exact
  constexpr double c[15] = {1.0,
                            1.0,
                            1.0 / 2,
                            1.0 / 6,
                            1.0 / 24,
                            1.0 / 120,
                            1.0 / 720,
                            1.0 / 5040,
                            1.0 / 40320,
                            1.0 / 362880,
                            1.0 / 3628800,
                            1.0 / 39916800,
                            1.0 / 479001600,
                            1.0 / 6227020800.0,
                            1.0 / 87178291200.0};
  double const p = polynomial(r, c);
  int const k = static_cast<int>(kd);
  if (k > 1023) return mul(mul(p, pow2(1023)), pow2(k - 1023));
  if (k < -1021) return mul(mul(p, pow2(k + 600)), pow2(-600));  // one rounding into subnormals
  return mul(p, pow2(k));
}

/// Natural logarithm. x = m 2^e with m in [sqrt(1/2), sqrt 2), log m = 2 atanh(s),
/// s = (m - 1) / (m + 1), |s| <= 0.1716, by its odd series to s^23 (truncation below 1e-18).
/// log(0) = -inf, log(x < 0) = NaN, log(+inf) = +inf, NaN propagates.
COOPGNN_HD inline double log(double x) {
  if (is_nan(x) || x < 0.0) return kNaN;
  if (x == 0.0) return -kInf;
  if (x == kInf) return kInf;
  int e = 0;
  if (x < 2.2250738585072014e-308) {  // subnormal: scale into the normal range (exact)
    x = mul(x, 18014398509481984.0);  // 2^54
    e = -54;
  }
  std::uint64_t const b = bits_of(x);
  e += static_cast<int>((b >> 52) & 0x7FF) - 1023;
  double m = from_bits((b & 0x000FFFFFFFFFFFFFULL) | 0x3FF0000000000000ULL);  // [1, 2)
  if (m > kSqrt2) {
    m = mul(m, 0.5);
    ++e;
  }
  double const s = div(sub(m, 1.0), add(m, 1.0));
  double const s2 = mul(s, s);
  constexpr double c[12] = {1.0,        1.0 / 3,  1.0 / 5,  1.0 / 7,  1.0 / 9,  1.0 / 11,
                            1.0 / 13,   1.0 / 15, 1.0 / 17, 1.0 / 19, 1.0 / 21, 1.0 / 23};
  double const log_m = mul(mul(2.0, s), polynomial(s2, c));
  double const ed = static_cast<double>(e);
  return add(mul(ed, kLn2Hi), add(mul(ed, kLn2Lo), log_m));
}

/// Complementary error function erfc(x) = 2 / sqrt(pi) int_x^inf e^{-t^2} dt.
///  x < 0: 2 - erfc(-x);
///  0 <= x < 2: 1 - erf(x), erf(x) = 2 / sqrt(pi) e^{-x^2} sum_n 2^n x^{2n+1} / (2n+1)!!
///    (all terms positive, so no cancellation inside the sum);
///  2 <= x < 27.3: Laplace's continued fraction e^{-x^2} / sqrt(pi) / (x + (1/2) / (x + 1 /
///    (x + (3/2) / (x + ...)))), evaluated bottom-up from a fixed depth;
///  x >= 27.3: 0 (below the smallest subnormal). NaN propagates.
COOPGNN_HD inline double erfc(double x) {
  if (is_nan(x)) return x;
  if (x < 0.0) return sub(2.0, erfc(-x));
  if (x >= 27.3) return 0.0;
  double const x2 = mul(x, x);
  if (x < 2.0) {
    double sum = 0.0;
    double term = x;
    double const two_x2 = mul(2.0, x2);
    for (int n = 0; n < 200 && term > mul(sum, 1e-17); ++n) {
      sum = add(sum, term);
      term = div(mul(term, two_x2), static_cast<double>(2 * n + 3));
    }
    double const erf = mul(div(2.0, kSqrtPi), mul(exp(-x2), sum));
    return sub(1.0, erf);
  }
  // Depths where the truncation error is below double rounding (measured against std::erfc).
  int const depth = x < 3.0 ? 60 : (x < 5.0 ? 30 : 20);
  double f = x;
  for (int n = depth; n >= 1; --n) f = add(x, div(mul(0.5, static_cast<double>(n)), f));
  return div(div(exp(-x2), kSqrtPi), f);
}

/// Standard normal CDF Phi(x) = erfc(-x / sqrt 2) / 2.
COOPGNN_HD inline double normal_cdf(double x) { return mul(0.5, erfc(div(-x, kSqrt2))); }

/// Inverse of normal_cdf for p in (0, 1): Acklam's rational approximation refined by one Halley
/// step on normal_cdf(x) - p. p <= 0 gives -inf, p >= 1 gives +inf; NaN gives -inf.
COOPGNN_HD inline double normal_quantile(double p) {
  if (!(p > 0.0)) return -kInf;
  if (!(p < 1.0)) return kInf;
  // Acklam's coefficients (central region a / b, tails c / d), lowest degree first.
  constexpr double a[6] = {2.506628277459239e+00,  -3.066479806614716e+01, 1.383577518672690e+02,
                           -2.759285104469687e+02, 2.209460984245205e+02,  -3.969683028665376e+01};
  constexpr double b[6] = {1.0,
                           -1.328068155288572e+01,
                           6.680131188771972e+01,
                           -1.556989798598866e+02,
                           1.615858368580409e+02,
                           -5.447609879822406e+01};
  constexpr double c[6] = {2.938163982698783e+00,  4.374664141464968e+00, -2.549732539343734e+00,
                           -2.400758277161838e+00, -3.223964580411365e-01, -7.784894002430293e-03};
  constexpr double d[5] = {1.0, 3.754408661907416e+00, 2.445134137142996e+00,
                           3.224671290700398e-01, 7.784695709041462e-03};
  constexpr double lo = 0.02425;
  double x;
  if (p < lo) {
    double const q = sqrt(mul(-2.0, log(p)));
    x = div(polynomial(q, c), polynomial(q, d));
  } else if (p <= 1.0 - lo) {
    double const q = sub(p, 0.5);
    double const r = mul(q, q);
    x = div(mul(polynomial(r, a), q), polynomial(r, b));
  } else {
    double const q = sqrt(mul(-2.0, log(sub(1.0, p))));  // 1 - p is exact for p >= 1/2
    x = -div(polynomial(q, c), polynomial(q, d));
  }
  double const e = sub(normal_cdf(x), p);
  double const u = mul(mul(e, kSqrt2Pi), exp(mul(mul(0.5, x), x)));
  return sub(x, div(u, add(1.0, mul(mul(0.5, x), u))));
}

}  // namespace coopgnn::portable
