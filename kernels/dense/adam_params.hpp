// The constants of one Adam step, shared by the host reference and the CUDA kernel (no
// dependencies, so .cu files can include it).
#pragma once

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

}  // namespace coopgnn
