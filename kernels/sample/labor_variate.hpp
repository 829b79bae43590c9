// LABOR variates with dependent minibatching (DESIGN.md section 4, "Dependent minibatching
// (kappa)"; Balin, LaSalle & Catalyurek, "Cooperative Minibatching in Graph Neural Networks",
// TMLR 2025, section 3.2; our notes in reference/cooperative-minibatching.md section 5).
#pragma once

#include <cstdint>

#include "runtime/core/rng.hpp"

namespace coopgnn {

/// How LABOR's per-vertex variates evolve across minibatches and layers.
struct labor_dependency {
  /// kappa >= 0: 1 = a fresh variate every minibatch (plain LABOR); K > 1 = variates rotate
  /// smoothly over windows of K minibatches; 0 = never refresh (one fixed variate per vertex).
  std::int64_t batch_dependency = 1;
  bool layer_dependency = false;  ///< every layer uses layer 0's variates
};

/// Standard normal CDF Phi(x) = erfc(-x / sqrt 2) / 2, in double.
double normal_cdf(double x);

/// Inverse of normal_cdf for p in (0, 1): Acklam's rational approximation refined by one Halley
/// step (relative error below 1e-15 over (0, 1)). @throws nothing; p outside (0, 1) gives +-inf.
double normal_quantile(double p);

/// r_t(i) for vertex t in minibatch `batch` at sampling layer `layer`:
///   u_w(t) = rng::uniform(make_stream(run_seed, purpose::labor, l'), t, 0, w), l' = layer or 0
///   with layer_dependency;
///   kappa = 1: r = u_i(t) (exactly plain LABOR);
///   kappa = 0: r = u_0(t);
///   otherwise window j = floor(i / kappa), phase c = (i mod kappa) / kappa, and
///   r = Phi(cos(pi c / 2) Z_j + sin(pi c / 2) Z_{j+1}), Z_w = Phi^{-1}(u_w(t)); at c = 0 this is
///   u_j(t) exactly. Every r is U(0, 1); corr(Z(i), Z(i')) = cos(pi (c - c') / 2) in a window.
/// A pure function of its arguments; returned as float in (0, 1).
float labor_variate(std::uint64_t run_seed, const labor_dependency& dep, std::uint32_t layer,
                    std::uint32_t batch, std::uint64_t vertex);

}  // namespace coopgnn
