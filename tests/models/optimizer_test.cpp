// Adam against values computed here from the update rule of Kingma & Ba 2015, Algorithm 1, with
// PyTorch's coupled L2 weight decay.
#include "models/optimizer.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "runtime/core/error.hpp"

namespace coopgnn::models {
namespace {

parameter<float> make(std::vector<float> values) {
  auto const n = static_cast<std::int64_t>(values.size());
  return parameter<float>{"p", matrix<float>(1, n, std::move(values)), matrix<float>(1, n)};
}

TEST(adam, first_step_moves_by_lr_times_sign) {
  // Step 1: m_hat = g and v_hat = g^2 exactly, so the update is lr * g / (|g| + eps).
  auto p = make({0.5f, -1.0f, 2.0f, 3.0f});
  p.grad = matrix<float>(1, 4, std::vector<float>{0.1f, -0.2f, 4.0f, 0.0f});
  adam opt({&p}, adam_options{0.1f, 0.9f, 0.999f, 1e-8f, 0.0f});
  opt.step();
  EXPECT_EQ(opt.steps(), 1);
  EXPECT_NEAR(p.value(0, 0), 0.5f - 0.1f, 1e-6);
  EXPECT_NEAR(p.value(0, 1), -1.0f + 0.1f, 1e-6);
  EXPECT_NEAR(p.value(0, 2), 2.0f - 0.1f, 1e-6);
  EXPECT_EQ(p.value(0, 3), 3.0f);  // zero gradient, no decay: m = 0, no move (and no NaN)
}

TEST(adam, three_steps_with_weight_decay_match_the_formulas) {
  double const lr = 0.05, b1 = 0.9, b2 = 0.999, eps = 1e-8, wd = 0.01;
  std::vector<double> theta = {0.5, -1.0, 2.0};
  std::vector<std::vector<double>> const grads = {
      {0.1, -0.2, 0.0}, {0.3, 0.1, -0.5}, {-0.05, 0.2, 0.25}};
  auto p = make({0.5f, -1.0f, 2.0f});
  adam opt({&p},
           adam_options{static_cast<float>(lr), static_cast<float>(b1), static_cast<float>(b2),
                        static_cast<float>(eps), static_cast<float>(wd)});
  std::vector<double> m(3, 0.0), v(3, 0.0);
  for (int t = 1; t <= 3; ++t) {
    for (int i = 0; i < 3; ++i) p.grad(0, i) = static_cast<float>(grads[t - 1][i]);
    opt.step();
    for (int i = 0; i < 3; ++i) {
      double const g = grads[t - 1][i] + wd * theta[i];
      m[i] = b1 * m[i] + (1 - b1) * g;
      v[i] = b2 * v[i] + (1 - b2) * g * g;
      double const m_hat = m[i] / (1 - std::pow(b1, t));
      double const v_hat = v[i] / (1 - std::pow(b2, t));
      theta[i] -= lr * m_hat / (std::sqrt(v_hat) + eps);
      EXPECT_NEAR(p.value(0, i), theta[i], 2e-6) << "step " << t << " element " << i;
    }
  }
  // Element 2 had a zero gradient at step 1: only the decay 0.01 * 2 moved it, by ~lr.
  EXPECT_LT(theta[2], 2.0);
}

TEST(adam, deterministic_and_validates) {
  auto a = make({1.0f, 2.0f});
  auto b = make({1.0f, 2.0f});
  a.grad = matrix<float>(1, 2, std::vector<float>{0.3f, -0.7f});
  b.grad = a.grad;
  adam oa({&a}, {});
  adam ob({&b}, {});
  for (int i = 0; i < 5; ++i) {
    oa.step();
    ob.step();
  }
  EXPECT_EQ(a.value.values(), b.value.values());

  EXPECT_THROW(adam({&a, &a}, {}), logic_error);
  EXPECT_THROW(adam({nullptr}, {}), logic_error);
  EXPECT_THROW(adam({&a}, adam_options{-1.0f}), logic_error);
  EXPECT_THROW(adam({&a}, adam_options{0.1f, 1.0f}), logic_error);
  adam oc({&a}, {});
  a.grad.reset(1, 3);
  EXPECT_THROW(oc.step(), logic_error);
  EXPECT_EQ(oc.steps(), 0);
}

}  // namespace
}  // namespace coopgnn::models
