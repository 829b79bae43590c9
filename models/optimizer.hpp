// Optimizers (DESIGN.md section 1, "models"; section 6: every PE applies the same step to the
// all-reduced gradients, so the step must be deterministic).
#pragma once

#include <cstdint>
#include <vector>

#include "models/layers.hpp"

namespace coopgnn::models {

/// Adam hyper-parameters (defaults of Kingma & Ba 2015 and PyTorch).
struct adam_options {
  float lr = 1e-3f;
  float beta1 = 0.9f;
  float beta2 = 0.999f;
  float eps = 1e-8f;
  float weight_decay = 0.0f;  ///< L2 penalty added to the gradient (coupled, not AdamW)
};

/// Adam (Kingma & Ba, ICLR 2015, Algorithm 1) with PyTorch's torch.optim.Adam semantics
/// (amsgrad off, maximize off). Step t = 1, 2, ... for every element:
///   g = grad + weight_decay * value
///   m = beta1 m + (1 - beta1) g;  v = beta2 v + (1 - beta2) g^2
///   value -= lr * (m / (1 - beta1^t)) / (sqrt(v / (1 - beta2^t)) + eps)
/// m and v are stored in float; the update is evaluated in double and rounded once.
/// Deterministic (element order irrelevant: elements are independent). Does not zero gradients.
class adam {
 public:
  /// @param params  the parameters to update; not null, no duplicates; they must outlive the
  ///                optimizer and keep their shapes
  /// @throws logic_error naming the option or parameter when lr < 0, a beta is outside [0, 1),
  ///         eps <= 0, weight_decay < 0, a pointer is null or repeated, or grad and value shapes
  ///         differ.
  adam(std::vector<parameter<float>*> params, const adam_options& options);

  /// Applies one update to every parameter from its current grad.
  /// @throws logic_error (before changing anything) when a parameter's value or grad shape no
  ///         longer matches its state.
  void step();

  /// Updates applied so far (t of the last step).
  [[nodiscard]] std::int64_t steps() const { return t_; }
  [[nodiscard]] const adam_options& options() const { return options_; }
  /// Changes the learning rate for later steps (schedules). @throws logic_error when lr < 0.
  void set_lr(float lr);

 private:
  std::vector<parameter<float>*> params_;
  std::vector<std::vector<float>> m_;
  std::vector<std::vector<float>> v_;
  adam_options options_;
  std::int64_t t_ = 0;
};

}  // namespace coopgnn::models
