// LABOR variates with dependent minibatching (docs/design.md section 4.3;
// Balin, LaSalle & Catalyurek, "Cooperative Minibatching in Graph Neural Networks",
// TMLR 2025, section 3.2).
//
// The per-vertex part (labor_variate(plan, t)) is COOPGNN_HD and bit-identical on host and
// device: it uses only the Philox draws of rng.hpp and portable_math.hpp. The per-batch part
// (the phase angle's cosine and sine, from libm) is computed once on the host by
// make_labor_variate_plan and passed to both.
#pragma once

#include <cstdint>

#include "kernels/sample/portable_math.hpp"
#include "runtime/core/hd.hpp"
#include "runtime/core/rng.hpp"

namespace coopgnn {

/// How LABOR's per-vertex variates evolve across minibatches and layers.
struct labor_dependency {
  /// kappa >= 0: 1 = a fresh variate every minibatch (plain LABOR); K > 1 = variates rotate
  /// smoothly over windows of K minibatches; 0 = never refresh (one fixed variate per vertex).
  std::int64_t batch_dependency = 1;
  bool layer_dependency = false;  ///< every layer uses layer 0's variates
};

/// Standard normal CDF and its inverse, bit-identical on host and device (portable_math.hpp).
using portable::normal_cdf;
using portable::normal_quantile;

/// Everything labor_variate needs that depends on (run seed, dependency, layer, batch) but not
/// on the vertex. Trivially copyable: pass it to kernels by value.
struct labor_variate_plan {
  rng::stream stream{};      ///< Philox key of (run_seed, purpose::labor, layer or 0)
  std::uint32_t window0 = 0;  ///< counter word of the first uniform (batch, 0, or window j)
  std::uint32_t window1 = 0;  ///< window j + 1 (used only when mix)
  bool mix = false;           ///< kappa > 1 and batch mod kappa != 0: rotate two normals
  double cos_phase = 1.0;     ///< cos(pi c / 2), c = (batch mod kappa) / kappa (host libm)
  double sin_phase = 0.0;     ///< sin(pi c / 2)
};

/// Host: the plan of minibatch `batch` at sampling layer `layer` (see labor_variate below).
/// Pure function of its arguments; kappa < 0 is treated as 0 (the sampler rejects it earlier).
labor_variate_plan make_labor_variate_plan(std::uint64_t run_seed, const labor_dependency& dep,
                                           std::uint32_t layer, std::uint32_t batch);

/// r_t(i) for vertex t in minibatch `batch` at sampling layer `layer`:
///   u_w(t) = rng::uniform(make_stream(run_seed, purpose::labor, l'), t, 0, w), l' = layer or 0
///   with layer_dependency;
///   kappa = 1: r = u_i(t) (exactly plain LABOR);
///   kappa = 0: r = u_0(t);
///   otherwise window j = floor(i / kappa), phase c = (i mod kappa) / kappa, and
///   r = Phi(cos(pi c / 2) Z_j + sin(pi c / 2) Z_{j+1}), Z_w = Phi^{-1}(u_w(t)); at c = 0 this is
///   u_j(t) exactly. Every r is U(0, 1); corr(Z(i), Z(i')) = cos(pi (c - c') / 2) in a window.
/// Returned as float in (0, 1) (clamped to [2^-24, 1 - 2^-24] like rng::to_unit). Same bits on
/// host and device for the same plan and vertex.
COOPGNN_HD inline float labor_variate(const labor_variate_plan& plan, std::uint64_t vertex) {
  float const u0 = rng::uniform(plan.stream, vertex, 0, plan.window0);
  if (!plan.mix) return u0;
  double const z0 = portable::normal_quantile(u0);
  double const z1 = portable::normal_quantile(rng::uniform(plan.stream, vertex, 0, plan.window1));
  double const r = portable::normal_cdf(
      portable::add(portable::mul(plan.cos_phase, z0), portable::mul(plan.sin_phase, z1)));
  float const f = static_cast<float>(r);
  float constexpr lo = 0.5f / 8388608.0f;
  float constexpr hi = 1.0f - 0.5f / 8388608.0f;
  return f < lo ? lo : (f > hi ? hi : f);
}

/// The same variate from the raw arguments (host): labor_variate(make_labor_variate_plan(...),
/// vertex).
float labor_variate(std::uint64_t run_seed, const labor_dependency& dep, std::uint32_t layer,
                    std::uint32_t batch, std::uint64_t vertex);

}  // namespace coopgnn
