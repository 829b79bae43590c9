// The constants and the per-element formula of one Adam step, shared by the host references and
// the CUDA kernels of adam_update and adam_update_rows (only portable_math.hpp, so .cu files can
// include it).
#pragma once

#include "kernels/sample/portable_math.hpp"
#include "runtime/core/hd.hpp"

namespace coopgnn {

/// Double-precision constants of one Adam step (models::adam); bias corrections
/// bc1 = 1 - beta1^t and bc2 = 1 - beta2^t are computed by the caller with std::pow.
struct adam_step_params {
  double lr = 0.0;
  double beta1 = 0.0;
  double beta2 = 0.0;
  double eps = 0.0;
  double weight_decay = 0.0;
  double bc1 = 1.0;
  double bc2 = 1.0;
};

/// One Adam update of one element (Kingma & Ba 2015, Algorithm 1; models::adam), in double:
///   g = grad + wd value; mn = b1 m + (1 - b1) g; vn = b2 v + ((1 - b2) g) g;
///   m = float(mn); v = float(vn); value = float(value - (lr (mn / bc1)) / (sqrt(vn / bc2) + eps)).
/// Every operation is a correctly rounded, never contracted primitive (portable_math.hpp), so the
/// host references and the CUDA kernels give the same bits for the same inputs.
COOPGNN_HD inline void adam_element(float& value, float grad, float& m, float& v,
                                    const adam_step_params& a) {
  namespace pm = portable;
  double const x = static_cast<double>(value);
  double const g = pm::add(static_cast<double>(grad), pm::mul(a.weight_decay, x));
  double const mn =
      pm::add(pm::mul(a.beta1, static_cast<double>(m)), pm::mul(pm::sub(1.0, a.beta1), g));
  double const vn = pm::add(pm::mul(a.beta2, static_cast<double>(v)),
                            pm::mul(pm::mul(pm::sub(1.0, a.beta2), g), g));
  m = static_cast<float>(mn);
  v = static_cast<float>(vn);
  double const update =
      pm::div(pm::mul(a.lr, pm::div(mn, a.bc1)), pm::add(pm::sqrt(pm::div(vn, a.bc2)), a.eps));
  value = static_cast<float>(pm::sub(x, update));
}

}  // namespace coopgnn
