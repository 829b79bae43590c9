#include "models/optimizer.hpp"

#include <cmath>
#include <set>

#include "runtime/core/error.hpp"

namespace coopgnn::models {

adam::adam(std::vector<parameter<float>*> params, const adam_options& options)
    : params_(std::move(params)), options_(options) {
  COOPGNN_EXPECTS(options.lr >= 0.0f, "adam: lr = {} is negative", options.lr);
  COOPGNN_EXPECTS(options.beta1 >= 0.0f && options.beta1 < 1.0f,
                  "adam: beta1 = {} is outside [0, 1)", options.beta1);
  COOPGNN_EXPECTS(options.beta2 >= 0.0f && options.beta2 < 1.0f,
                  "adam: beta2 = {} is outside [0, 1)", options.beta2);
  COOPGNN_EXPECTS(options.eps > 0.0f, "adam: eps = {} must be positive", options.eps);
  COOPGNN_EXPECTS(options.weight_decay >= 0.0f, "adam: weight_decay = {} is negative",
                  options.weight_decay);
  std::set<const parameter<float>*> seen;
  for (std::size_t i = 0; i < params_.size(); ++i) {
    const parameter<float>* p = params_[i];
    COOPGNN_EXPECTS(p != nullptr, "adam: parameter {} is null", i);
    COOPGNN_EXPECTS(seen.insert(p).second, "adam: parameter '{}' is listed twice", p->name);
    COOPGNN_EXPECTS(p->grad.rows() == p->value.rows() && p->grad.cols() == p->value.cols(),
                    "adam: parameter '{}' has value [{}, {}] but grad [{}, {}]", p->name,
                    p->value.rows(), p->value.cols(), p->grad.rows(), p->grad.cols());
    m_.emplace_back(static_cast<std::size_t>(p->value.size()), 0.0f);
    v_.emplace_back(static_cast<std::size_t>(p->value.size()), 0.0f);
  }
}

void adam::set_lr(float lr) {
  COOPGNN_EXPECTS(lr >= 0.0f, "adam::set_lr: lr = {} is negative", lr);
  options_.lr = lr;
}

void adam::step() {
  for (std::size_t i = 0; i < params_.size(); ++i) {
    const parameter<float>* p = params_[i];
    COOPGNN_EXPECTS(p->value.size() == static_cast<std::int64_t>(m_[i].size()) &&
                        p->grad.size() == p->value.size(),
                    "adam::step: parameter '{}' changed shape (value {} and grad {} elements, "
                    "state {})",
                    p->name, p->value.size(), p->grad.size(), m_[i].size());
  }
  ++t_;
  double const b1 = options_.beta1;
  double const b2 = options_.beta2;
  double const bc1 = 1.0 - std::pow(b1, static_cast<double>(t_));
  double const bc2 = 1.0 - std::pow(b2, static_cast<double>(t_));
  double const lr = options_.lr;
  double const eps = options_.eps;
  double const wd = options_.weight_decay;
  for (std::size_t i = 0; i < params_.size(); ++i) {
    float* value = params_[i]->value.data();
    const float* grad = params_[i]->grad.data();
    float* m = m_[i].data();
    float* v = v_[i].data();
    std::size_t const n = m_[i].size();
    for (std::size_t e = 0; e < n; ++e) {
      double const g = static_cast<double>(grad[e]) + wd * static_cast<double>(value[e]);
      double const mn = b1 * static_cast<double>(m[e]) + (1.0 - b1) * g;
      double const vn = b2 * static_cast<double>(v[e]) + (1.0 - b2) * g * g;
      m[e] = static_cast<float>(mn);
      v[e] = static_cast<float>(vn);
      double const update = lr * (mn / bc1) / (std::sqrt(vn / bc2) + eps);
      value[e] = static_cast<float>(static_cast<double>(value[e]) - update);
    }
  }
}

}  // namespace coopgnn::models
