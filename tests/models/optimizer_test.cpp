// Adam against values computed here from the update rule of Kingma & Ba 2015, Algorithm 1, with
// PyTorch's coupled L2 weight decay.
#include "models/optimizer.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <span>
#include <vector>

#include "runtime/core/error.hpp"

namespace coopgnn::models {
namespace {

/// One [1, n] parameter on a host context, its values set.
struct one_param {
  exec_context ctx;
  parameter_set<float> set;
  explicit one_param(const std::vector<float>& values) {
    set.add("p", 1, static_cast<std::int64_t>(values.size()));
    set.allocate(ctx);
    std::copy(values.begin(), values.end(), set.values().host().begin());
  }
  float value(int i) { return set.values().host()[static_cast<std::size_t>(i)]; }
  std::span<float> grad() { return set.grads().host(); }
  std::vector<float> values() {
    auto const v = set.values().host();
    return {v.begin(), v.end()};
  }
};

TEST(adam, first_step_moves_by_lr_times_sign) {
  // Step 1: m_hat = g and v_hat = g^2 exactly, so the update is lr * g / (|g| + eps).
  one_param p({0.5f, -1.0f, 2.0f, 3.0f});
  std::vector<float> const g = {0.1f, -0.2f, 4.0f, 0.0f};
  std::copy(g.begin(), g.end(), p.grad().begin());
  adam opt(p.ctx, p.set, adam_options{0.1f, 0.9f, 0.999f, 1e-8f, 0.0f});
  opt.step();
  EXPECT_EQ(opt.steps(), 1);
  EXPECT_NEAR(p.value(0), 0.5f - 0.1f, 1e-6);
  EXPECT_NEAR(p.value(1), -1.0f + 0.1f, 1e-6);
  EXPECT_NEAR(p.value(2), 2.0f - 0.1f, 1e-6);
  EXPECT_EQ(p.value(3), 3.0f);  // zero gradient, no decay: m = 0, no move (and no NaN)
}

TEST(adam, three_steps_with_weight_decay_match_the_formulas) {
  double const lr = 0.05, b1 = 0.9, b2 = 0.999, eps = 1e-8, wd = 0.01;
  std::vector<double> theta = {0.5, -1.0, 2.0};
  std::vector<std::vector<double>> const grads = {
      {0.1, -0.2, 0.0}, {0.3, 0.1, -0.5}, {-0.05, 0.2, 0.25}};
  one_param p({0.5f, -1.0f, 2.0f});
  adam opt(p.ctx, p.set,
           adam_options{static_cast<float>(lr), static_cast<float>(b1), static_cast<float>(b2),
                        static_cast<float>(eps), static_cast<float>(wd)});
  std::vector<double> m(3, 0.0), v(3, 0.0);
  for (int t = 1; t <= 3; ++t) {
    for (int i = 0; i < 3; ++i) p.grad()[i] = static_cast<float>(grads[t - 1][i]);
    opt.step();
    for (int i = 0; i < 3; ++i) {
      double const g = grads[t - 1][i] + wd * theta[i];
      m[i] = b1 * m[i] + (1 - b1) * g;
      v[i] = b2 * v[i] + (1 - b2) * g * g;
      double const m_hat = m[i] / (1 - std::pow(b1, t));
      double const v_hat = v[i] / (1 - std::pow(b2, t));
      theta[i] -= lr * m_hat / (std::sqrt(v_hat) + eps);
      EXPECT_NEAR(p.value(i), theta[i], 2e-6) << "step " << t << " element " << i;
    }
  }
  // Element 2 had a zero gradient at step 1: only the decay 0.01 * 2 moved it, by ~lr.
  EXPECT_LT(theta[2], 2.0);
}

TEST(adam, decay_values_decays_the_prefix_only) {
  // Zero gradients: a decayed element moves by ~lr (g = wd * value > 0, step 1 moves lr * g /
  // (|g| + eps)), an undecayed one stays exactly where it is (m = 0).
  one_param p({1.0f, 1.0f, 1.0f, 1.0f, 1.0f});
  adam_options o{0.1f, 0.9f, 0.999f, 1e-8f, 0.5f};
  o.decay_values = 2;
  adam opt(p.ctx, p.set, o);
  opt.step();
  EXPECT_NEAR(p.value(0), 0.9f, 1e-6);
  EXPECT_NEAR(p.value(1), 0.9f, 1e-6);
  for (int i = 2; i < 5; ++i) EXPECT_EQ(p.value(i), 1.0f) << i;

  one_param all({1.0f, 1.0f});
  adam_options everywhere{0.1f, 0.9f, 0.999f, 1e-8f, 0.5f};  // decay_values -1: every value
  adam opt_all(all.ctx, all.set, everywhere);
  opt_all.step();
  EXPECT_NEAR(all.value(1), 0.9f, 1e-6);

  one_param q({1.0f, 2.0f});
  adam_options too_many{};
  too_many.decay_values = 3;
  EXPECT_THROW(adam(q.ctx, q.set, too_many), logic_error);
  too_many.decay_values = -2;
  EXPECT_THROW(adam(q.ctx, q.set, too_many), logic_error);
}

TEST(adam, deterministic_and_validates) {
  one_param a({1.0f, 2.0f});
  one_param b({1.0f, 2.0f});
  a.grad()[0] = b.grad()[0] = 0.3f;
  a.grad()[1] = b.grad()[1] = -0.7f;
  adam oa(a.ctx, a.set, {});
  adam ob(b.ctx, b.set, {});
  for (int i = 0; i < 5; ++i) {
    oa.step();
    ob.step();
  }
  EXPECT_EQ(a.values(), b.values());
  EXPECT_NE(a.values(), (std::vector<float>{1.0f, 2.0f}));

  EXPECT_THROW(adam(a.ctx, a.set, adam_options{-1.0f}), logic_error);
  EXPECT_THROW(adam(a.ctx, a.set, adam_options{0.1f, 1.0f}), logic_error);
  EXPECT_THROW(adam(a.ctx, a.set, adam_options{0.1f, 0.9f, 0.999f, 0.0f}), logic_error);
  parameter_set<float> unallocated;
  unallocated.add("q", 1, 2);
  EXPECT_THROW(adam(a.ctx, unallocated, {}), logic_error);
  // The optimizer state lives where the parameters do: a host set on an emulated context is an
  // error, not a silent copy.
  EXPECT_THROW(adam(exec_context(backend::emulated), a.set, {}), logic_error);
}

}  // namespace
}  // namespace coopgnn::models
