#include "models/optimizer.hpp"

#include <cmath>

#include "kernels/dense/elementwise.hpp"
#include "runtime/core/error.hpp"
#include "runtime/core/nvtx.hpp"

namespace coopgnn::models {

void validate(const adam_options& options) {
  COOPGNN_EXPECTS(options.lr >= 0.0f, "adam: lr = {} is negative", options.lr);
  COOPGNN_EXPECTS(options.beta1 >= 0.0f && options.beta1 < 1.0f,
                  "adam: beta1 = {} is outside [0, 1)", options.beta1);
  COOPGNN_EXPECTS(options.beta2 >= 0.0f && options.beta2 < 1.0f,
                  "adam: beta2 = {} is outside [0, 1)", options.beta2);
  COOPGNN_EXPECTS(options.eps > 0.0f, "adam: eps = {} must be positive", options.eps);
  COOPGNN_EXPECTS(options.weight_decay >= 0.0f, "adam: weight_decay = {} is negative",
                  options.weight_decay);
  COOPGNN_EXPECTS(options.decay_values >= -1, "adam: decay_values = {} must be >= -1",
                  options.decay_values);
}

adam::adam(const exec_context& ctx, parameter_set<float>& params, const adam_options& options)
    : ctx_(ctx), params_(&params), options_(options) {
  validate(options);
  COOPGNN_EXPECTS(params.allocated(), "adam: the parameter set is not allocated");
  coopgnn::detail::expect_space(ctx, params.space(), "adam", "the parameters");
  COOPGNN_EXPECTS(options.decay_values <= params.num_values(),
                  "adam: decay_values = {} exceeds the {} parameter values", options.decay_values,
                  params.num_values());
  auto const n = static_cast<std::size_t>(params.num_values());
  m_ = buffer<float>(ctx, n);
  v_ = buffer<float>(ctx, n);
  fill_zero(ctx, m_.view());
  fill_zero(ctx, v_.view());
}

adam_step_params step_params(const adam_options& options, std::int64_t t) {
  adam_step_params a;
  a.lr = options.lr;
  a.beta1 = options.beta1;
  a.beta2 = options.beta2;
  a.eps = options.eps;
  a.weight_decay = options.weight_decay;
  a.bc1 = 1.0 - std::pow(a.beta1, static_cast<double>(t));
  a.bc2 = 1.0 - std::pow(a.beta2, static_cast<double>(t));
  return a;
}

void adam::set_lr(float lr) {
  COOPGNN_EXPECTS(lr >= 0.0f, "adam::set_lr: lr = {} is negative", lr);
  options_.lr = lr;
}

void adam::restore(std::span<const float> m, std::span<const float> v, std::int64_t t) {
  COOPGNN_EXPECTS(m.size() == m_.size() && v.size() == v_.size(),
                  "adam::restore: moments of {} and {} values for {} parameters", m.size(),
                  v.size(), m_.size());
  COOPGNN_EXPECTS(t >= 0, "adam::restore: step count {} is negative", t);
  copy<float>(ctx_, m_.view(), host_view(m));
  copy<float>(ctx_, v_.view(), host_view(v));
  synchronize(ctx_);
  t_ = t;
}

void adam::step() {
  COOPGNN_NVTX_RANGE("model/adam");
  auto const t = t_ + 1;  // counted once the update is enqueued
  adam_step_params const a = step_params(options_, t);
  auto const n = static_cast<std::size_t>(params_->num_values());
  auto const k = options_.decay_values < 0 ? n : static_cast<std::size_t>(options_.decay_values);
  // Elements are independent, so the decayed prefix and the undecayed rest are two updates.
  auto update = [&](std::size_t begin, std::size_t count, const adam_step_params& p) {
    if (count == 0) return;
    adam_update(ctx_, params_->values().sub(begin, count),
                buffer_view<const float>(params_->grads()).sub(begin, count),
                m_.view().sub(begin, count), v_.view().sub(begin, count), p);
  };
  update(0, k, a);
  adam_step_params rest = a;
  rest.weight_decay = 0.0;
  update(k, n - k, rest);
  t_ = t;
}

}  // namespace coopgnn::models
