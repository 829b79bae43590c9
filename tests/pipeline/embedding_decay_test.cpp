// Weight decay of the learnable input embeddings (--embedding-weight-decay, docs/usage.md "Link
// prediction"): by default the rows a step touches take the Adam update without decay, while the
// model's weights keep --weight-decay; the option decays the rows. Expected rows come from
// Adam's update rule (Kingma & Ba 2015, Algorithm 1, PyTorch's coupled L2) evaluated here in
// double, not from the optimizer.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "models/embedding.hpp"
#include "pipeline/trainer_internal.hpp"
#include "tests/common/link_steps.hpp"

namespace coopgnn {
namespace {

/// Two Adam steps of one element in double: gradients g1, g2, coupled decay wd.
double adam_two_steps(double x, double g1, double g2, double lr, double wd) {
  double const b1 = 0.9, b2 = 0.999, eps = 1e-8;
  double m = 0, v = 0;
  double const gs[2] = {g1, g2};
  for (int t = 1; t <= 2; ++t) {
    double const g = gs[t - 1] + wd * x;
    m = b1 * m + (1 - b1) * g;
    v = b2 * v + (1 - b2) * g * g;
    double const mh = m / (1 - std::pow(b1, t));
    double const vh = v / (1 - std::pow(b2, t));
    x -= lr * mh / (std::sqrt(vh) + eps);
  }
  return x;
}

/// Row 2 of a [4, 3] table built with the trainer's embedding options for `cfg`, after two
/// steps with gradients g1 and g2 on that row, against adam_two_steps with decay `want_wd`.
void expect_row_update(const train_config& cfg, double want_wd) {
  exec_context const ctx;
  auto const opt = detail::adam_options_of(cfg, nullptr);
  models::embedding_table t(ctx, 4, 3, 11, 1u << 20, opt);
  matrix<float> const before = t.to_host_matrix();
  // Column 0: no gradient (only decay can move it); column 1: a gradient small against the
  // decay term at wd = 0.5; column 2: an ordinary gradient.
  std::vector<float> const g1 = {0.0f, 1e-3f, 0.3f}, g2 = {0.0f, -2e-3f, 0.1f};
  std::vector<vid_t> const ids = {2};
  for (auto const* g : {&g1, &g2}) {
    t.apply(host_view(ids), tensor_view<const float>{g->data(), 1, 3});
  }
  matrix<float> const after = t.to_host_matrix();
  for (std::int64_t c = 0; c < 3; ++c) {
    double const want = adam_two_steps(before(2, c), g1[c], g2[c], cfg.lr, want_wd);
    EXPECT_NEAR(after(2, c), want, 1e-6) << "column " << c << ", decay " << want_wd;
  }
  for (std::int64_t r : {0, 1, 3}) {
    for (std::int64_t c = 0; c < 3; ++c) EXPECT_EQ(after(r, c), before(r, c));
  }
}

TEST(EmbeddingWeightDecay, DefaultLeavesRowsUndecayedAndModelWeightsDecayed) {
  train_config cfg;
  cfg.lr = 0.05f;
  ASSERT_GT(cfg.weight_decay, 0.0f) << "the default decays the model's weights";
  EXPECT_EQ(detail::adam_options_of(cfg, nullptr).weight_decay, 0.0f);
  expect_row_update(cfg, 0.0);
  // Column 0 has no gradient: without decay its value must not move at all.
  exec_context const ctx;
  models::embedding_table t(ctx, 4, 3, 11, 1u << 20, detail::adam_options_of(cfg, nullptr));
  float const x = t.to_host_matrix()(2, 0);
  ASSERT_NE(x, 0.0f);
  std::vector<float> const g = {0.0f, 1.0f, 1.0f};
  t.apply(host_view(std::vector<vid_t>{2}), tensor_view<const float>{g.data(), 1, 3});
  EXPECT_EQ(t.to_host_matrix()(2, 0), x);
}

TEST(EmbeddingWeightDecay, OptionDecaysTheTouchedRows) {
  train_config cfg;
  cfg.lr = 0.05f;
  cfg.embedding_weight_decay = 0.5f;
  EXPECT_EQ(detail::adam_options_of(cfg, nullptr).weight_decay, 0.5f);
  expect_row_update(cfg, 0.5);
  // --weight-decay-scope first no longer decides the embeddings' decay.
  cfg.weight_decay_first_layer = true;
  EXPECT_EQ(detail::adam_options_of(cfg, nullptr).weight_decay, 0.5f);
}

TEST(EmbeddingWeightDecay, ReachesTheTrainersTable) {
  // The same three link-prediction steps with and without the option: the tables differ, and
  // the model's weights' decay (cfg.weight_decay) is the same in both.
  auto const& f = test::link_data();
  auto run = [&](float ewd) {
    auto cfg = test::link_cfg(minibatch_mode::independent, 1);
    cfg.embedding_dim = 4;
    cfg.embedding_weight_decay = ewd;
    trainer tr(f.ds, f.g, cfg);
    auto const order = tr.epoch_order(1);
    for (std::uint32_t s = 0; s < 3; ++s) {
      std::vector<vid_t> const batch(order.begin() + s * 37, order.begin() + (s + 1) * 37);
      tr.step(batch, s, step_options{});
    }
    return tr.embedding_values();
  };
  auto const plain = run(0.0f);
  auto const decayed = run(1.0f);
  ASSERT_EQ(plain.values().size(), decayed.values().size());
  EXPECT_NE(plain.values(), decayed.values());
}

}  // namespace
}  // namespace coopgnn
