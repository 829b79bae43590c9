// Optimizers (docs/design.md section 1, models; section 6: every PE applies the same step to the
// all-reduced gradients, so the step must be deterministic).
#pragma once

#include <cstdint>
#include <span>

#include "kernels/dense/adam_params.hpp"
#include "models/layers.hpp"
#include "runtime/core/exec_context.hpp"
#include "runtime/core/memory.hpp"

namespace coopgnn::models {

/// Adam hyper-parameters (defaults of Kingma & Ba 2015 and PyTorch).
struct adam_options {
  float lr = 1e-3f;
  float beta1 = 0.9f;
  float beta2 = 0.999f;
  float eps = 1e-8f;
  float weight_decay = 0.0f;  ///< L2 penalty added to the gradient (coupled, not AdamW)
  /// The weight decay applies to the first decay_values values of the parameter set only (the
  /// rest step with weight_decay 0); -1 = every value. Kipf & Welling (ICLR 2017, section 5.3)
  /// decay the first layer only: gnn_model::first_layer_values().
  std::int64_t decay_values = -1;
};

/// Throws logic_error naming the option when lr < 0, a beta is outside [0, 1), eps <= 0,
/// weight_decay < 0 or decay_values < -1.
void validate(const adam_options& options);

/// The double-precision constants of Adam step t >= 1 under `options` (kernels' adam_update and
/// adam_update_rows): the options widened to double, bc1 = 1 - beta1^t, bc2 = 1 - beta2^t.
adam_step_params step_params(const adam_options& options, std::int64_t t);

/// Adam (Kingma & Ba, ICLR 2015, Algorithm 1) with PyTorch's torch.optim.Adam semantics
/// (amsgrad off, maximize off). Step t = 1, 2, ... for every element:
///   g = grad + weight_decay * value   (weight_decay 0 past options.decay_values)
///   m = beta1 m + (1 - beta1) g;  v = beta2 v + (1 - beta2) g^2
///   value -= lr * (m / (1 - beta1^t)) / (sqrt(v / (1 - beta2^t)) + eps)
/// m and v are stored in float in the parameters' memory space; the update is evaluated in
/// double and rounded once (kernels' adam_update, bitwise equal on every backend).
/// Deterministic (elements are independent). Does not zero gradients.
class adam {
 public:
  /// @param ctx     the context the parameters live in (its resources outlive the optimizer)
  /// @param params  an allocated parameter set in ctx.space(); it must outlive the optimizer
  /// @throws logic_error for invalid options (validate), decay_values > params.num_values(), or
  ///         a set that is not allocated or not in ctx.space().
  adam(const exec_context& ctx, parameter_set<float>& params, const adam_options& options);

  /// Applies one update to every parameter from its current gradient (asynchronous on CUDA).
  void step();

  /// Updates applied so far (t of the last step).
  [[nodiscard]] std::int64_t steps() const { return t_; }
  [[nodiscard]] const adam_options& options() const { return options_; }
  /// Changes the learning rate for later steps (schedules). @throws logic_error when lr < 0.
  void set_lr(float lr);
  /// The moments m and v: [num_values] float32 in the parameters' memory space (checkpoints
  /// download them with the copy helpers; never read them through a host pointer off the host).
  [[nodiscard]] buffer_view<const float> first_moment() const { return m_.view(); }
  [[nodiscard]] buffer_view<const float> second_moment() const { return v_.view(); }
  /// Restores a saved state (checkpoints): m and v ([num_values] float32, host memory) are copied
  /// into the parameters' space and the step count becomes t; the next step() is step t + 1, so
  /// it computes exactly what it would have computed in the run that saved the state.
  /// Synchronises the context. @throws logic_error naming the sizes on a length mismatch, or
  /// for t < 0.
  void restore(std::span<const float> m, std::span<const float> v, std::int64_t t);

 private:
  exec_context ctx_;
  parameter_set<float>* params_;
  buffer<float> m_;
  buffer<float> v_;
  adam_options options_;
  std::int64_t t_ = 0;
};

}  // namespace coopgnn::models
