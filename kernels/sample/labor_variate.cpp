#include "kernels/sample/labor_variate.hpp"

#include <cmath>
#include <numbers>

namespace coopgnn {

labor_variate_plan make_labor_variate_plan(std::uint64_t run_seed, const labor_dependency& dep,
                                           std::uint32_t layer, std::uint32_t batch) {
  labor_variate_plan plan;
  plan.stream = rng::make_stream(run_seed, rng::purpose::labor, dep.layer_dependency ? 0u : layer);
  std::int64_t const kappa = dep.batch_dependency;
  if (kappa == 1) {
    plan.window0 = batch;
    return plan;
  }
  if (kappa <= 0) return plan;  // window0 = 0: never refreshed
  auto const j = static_cast<std::uint32_t>(batch / kappa);
  std::int64_t const step = batch % kappa;
  plan.window0 = j;
  if (step == 0) return plan;
  plan.window1 = j + 1;
  plan.mix = true;
  double const c = static_cast<double>(step) / static_cast<double>(kappa);
  double const angle = 0.5 * std::numbers::pi * c;
  plan.cos_phase = std::cos(angle);
  plan.sin_phase = std::sin(angle);
  return plan;
}

float labor_variate(std::uint64_t run_seed, const labor_dependency& dep, std::uint32_t layer,
                    std::uint32_t batch, std::uint64_t vertex) {
  return labor_variate(make_labor_variate_plan(run_seed, dep, layer, batch), vertex);
}

}  // namespace coopgnn
