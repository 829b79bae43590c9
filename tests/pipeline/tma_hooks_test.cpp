// The trainer's hooks for an engine driving it from the main thread (TMA / GGS over MPI,
// docs/design.md section 7.2): parameters / set_parameters on every replica, gradients /
// apply_gradients against an updating step, the GGS identity (P PEs in one trainer == P
// one-PE trainers on the halves of the batch, gradients averaged), last_loss, and the link
// evaluation of a host model built from model_config_for. Host and emulated backends, both
// protocols. Expected values come from twin trainers and traces, never from the hook under test.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "runtime/core/error.hpp"
#include "pipeline/link.hpp"
#include "pipeline/trainer.hpp"
#include "tests/common/link_steps.hpp"
#include "tests/common/steps.hpp"

namespace coopgnn {
namespace {

struct hooks_usecase {
  task_kind task;
  backend compute;
  minibatch_mode mode;
  int pes;
};

std::ostream& operator<<(std::ostream& os, const hooks_usecase& u) {
  return os << to_string(u.task) << " " << to_string(u.compute) << " " << to_string(u.mode)
            << " P=" << u.pes;
}

const dataset& data_of(task_kind t) {
  return t == task_kind::link_prediction ? test::link_data().ds : test::protocol_data().ds;
}
const csc_graph& graph_of(task_kind t) {
  return t == task_kind::link_prediction ? test::link_data().g : test::protocol_data().g;
}

train_config make_cfg(const hooks_usecase& u) {
  train_config c;
  if (u.task == task_kind::link_prediction) {
    c = test::link_cfg(u.mode, u.pes);
  } else {
    c.mode = u.mode;
    c.num_pes = u.pes;
    c.hidden = 8;
    c.fanouts = {4, 3};
    c.batch_size = 50;
    c.dropout = 0.3f;
    c.seed = 41;
  }
  c.compute_backend = u.compute;
  c.weight_decay = 1e-3f;  // Adam reads the weights too
  return c;
}

/// Replica p's weights on the host, read through the model rather than the hook under test.
std::vector<float> replica_weights(const trainer& tr, int p) {
  auto const v = tr.host_model(p).params().values().host();
  return {v.begin(), v.end()};
}

/// Global batch `b` of epoch 1, full (wrapping around the epoch's end).
std::vector<vid_t> batch_of(const trainer& tr, std::int64_t b) {
  return epoch_batch(tr.epoch_order(1), tr.config().batch_size, b, true);
}

class TrainerHooks : public ::testing::TestWithParam<hooks_usecase> {};

TEST_P(TrainerHooks, SetParametersReachesEveryReplicaAndParametersReadsThemBack) {
  auto const u = GetParam();
  auto const cfg = make_cfg(u);
  trainer tr(data_of(u.task), graph_of(u.task), cfg);
  std::vector<float> const initial = tr.parameters();
  ASSERT_EQ(static_cast<std::int64_t>(initial.size()), tr.num_parameters());
  EXPECT_EQ(tr.num_parameters(), tr.model(0).num_parameters());
  EXPECT_EQ(initial, replica_weights(tr, 0));
  EXPECT_TRUE(std::any_of(initial.begin(), initial.end(), [](float x) { return x != 0; }));
  // Values no initialisation produces: i-dependent, exactly representable.
  std::vector<float> values(initial.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    values[i] = static_cast<float>(static_cast<int>(i % 97) - 48) / 64.0f;
  }
  tr.set_parameters(values);
  for (int p = 0; p < cfg.num_pes; ++p) EXPECT_EQ(replica_weights(tr, p), values) << "PE " << p;
  EXPECT_EQ(tr.parameters(), values);
  // Training continues from the written weights on every replica alike.
  tr.step(batch_of(tr, 0), 3, step_options{});
  std::vector<float> const after = tr.parameters();
  EXPECT_NE(after, values);
  for (int p = 1; p < cfg.num_pes; ++p) EXPECT_EQ(replica_weights(tr, p), after) << "PE " << p;

  std::vector<float> const wrong(values.size() + 1, 0.0f);
  EXPECT_THROW(tr.set_parameters(wrong), logic_error);
  EXPECT_THROW(tr.apply_gradients(wrong), logic_error);
  EXPECT_EQ(tr.parameters(), after) << "a rejected call changed the weights";
}

TEST_P(TrainerHooks, ApplyGradientsOfANonUpdatingStepEqualsAnUpdatingStep) {
  auto const u = GetParam();
  auto const cfg = make_cfg(u);
  trainer updating(data_of(u.task), graph_of(u.task), cfg);
  trainer hooked(data_of(u.task), graph_of(u.task), cfg);
  std::vector<float> const initial = hooked.parameters();
  // Three steps, so Adam's moments and bias corrections past step 1 are compared too.
  for (std::uint32_t b = 0; b < 3; ++b) {
    auto const batch = batch_of(updating, b);
    std::vector<float> const before = updating.parameters();
    updating.step(batch, b + 7, step_options{});
    hooked.step(batch, b + 7, step_options{.update = false});
    std::vector<float> const g = hooked.gradients();
    ASSERT_EQ(static_cast<std::int64_t>(g.size()), hooked.num_parameters());
    EXPECT_TRUE(std::any_of(g.begin(), g.end(), [](float x) { return x != 0; }))
        << "step " << b << ": all-zero gradients";
    EXPECT_EQ(g, updating.gradients()) << "step " << b;
    EXPECT_EQ(hooked.parameters(), before)
        << "step " << b << ": update = false changed the weights";
    hooked.apply_gradients(g);
    EXPECT_EQ(hooked.parameters(), updating.parameters()) << "step " << b;
    for (int p = 0; p < cfg.num_pes; ++p) {
      EXPECT_EQ(replica_weights(hooked, p), replica_weights(updating, p))
          << "step " << b << " PE " << p;
    }
  }
  EXPECT_NE(hooked.parameters(), initial);
}

TEST_P(TrainerHooks, LastLossIsTheStepsGlobalBatchLoss) {
  auto const u = GetParam();
  trainer tr(data_of(u.task), graph_of(u.task), make_cfg(u));
  EXPECT_TRUE(std::isnan(tr.last_loss()));
  std::vector<pe_trace> trace;
  tr.step(batch_of(tr, 1), 4, step_options{.update = false, .trace = &trace});
  double sum = 0;
  for (auto const& t : trace) sum += t.loss;
  ASSERT_GT(sum, 0.0);
  // The all-reduce adds the same P doubles, possibly in another order: a few ulps.
  EXPECT_NEAR(tr.last_loss(), sum, 1e-14 * sum);
  if (u.pes == 1) {
    EXPECT_EQ(tr.last_loss(), sum);
  }
  tr.step(batch_of(tr, 2), 5, step_options{.update = false, .trace = &trace});
  double sum2 = 0;
  for (auto const& t : trace) sum2 += t.loss;
  EXPECT_NEAR(tr.last_loss(), sum2, 1e-14 * sum2) << "not the most recent step's";
}

INSTANTIATE_TEST_SUITE_P(
    TasksBackendsProtocols, TrainerHooks,
    ::testing::Values(
        hooks_usecase{task_kind::node_classification, backend::host, minibatch_mode::independent,
                      1},
        hooks_usecase{task_kind::node_classification, backend::host, minibatch_mode::independent,
                      2},
        hooks_usecase{task_kind::node_classification, backend::host, minibatch_mode::cooperative,
                      3},
        hooks_usecase{task_kind::node_classification, backend::emulated,
                      minibatch_mode::cooperative, 2},
        hooks_usecase{task_kind::node_classification, backend::emulated,
                      minibatch_mode::independent, 2},
        hooks_usecase{task_kind::link_prediction, backend::host, minibatch_mode::independent, 2},
        hooks_usecase{task_kind::link_prediction, backend::host, minibatch_mode::cooperative, 3},
        hooks_usecase{task_kind::link_prediction, backend::emulated, minibatch_mode::independent,
                      1},
        hooks_usecase{task_kind::link_prediction, backend::emulated, minibatch_mode::cooperative,
                      2}));

TEST(TrainerHooks, ApplyGradientsRefusesLearnableEmbeddings) {
  auto cfg = test::link_cfg(minibatch_mode::independent, 1);
  cfg.embedding_dim = 4;
  trainer tr(test::link_data().ds, test::link_data().g, cfg);
  std::vector<float> const g(static_cast<std::size_t>(tr.num_parameters()), 0.0f);
  EXPECT_THROW(tr.apply_gradients(g), logic_error);
  tr.set_parameters(tr.parameters());  // allowed: the table is not touched
}

class GgsIdentity : public ::testing::TestWithParam<backend> {};

// GGS without MPI: one trainer whose P = 2 independent PEs take the halves of a global link batch
// equals two one-PE "ranks" stepping on those halves with the same batch index, their gradients
// averaged (what an MPI all-reduce / 2 gives).
//
// Tolerance: a PE's share is normalised by the global B (1 + k) pairs, a rank's by B/2 (1 + k),
// a power-of-two ratio; everything downstream of the loss scale is linear in it, so each rank's
// gradient is exactly 2x the PE's share up to rounding that a power of two does not change, and
// the two-term sums are commutative. The results are then expected bit-equal; the bound (1e-6 of
// the largest gradient, about 8 float ulps at that scale) only leaves room for a kernel that
// reorders a reduction. Weights after one Adam step (lr 0.01, |update| <= lr per element) are
// compared within 1e-6 absolute for the same reason.
TEST_P(GgsIdentity, TwoPesEqualTwoOnePeRanksOnTheHalves) {
  auto const& f = test::link_data();
  auto cfg = test::link_cfg(minibatch_mode::independent, 2);
  cfg.compute_backend = GetParam();
  cfg.batch_size = 36;  // B/2 = 18 positives per half
  ASSERT_EQ(cfg.exclude, exclude_kind::none) << "exclusion would see only a rank's half";
  trainer global(f.ds, f.g, cfg);
  auto one = cfg;
  one.num_pes = 1;
  one.batch_size = cfg.batch_size / 2;
  trainer rank0(f.ds, f.g, one), rank1(f.ds, f.g, one);
  ASSERT_EQ(rank0.parameters(), global.parameters()) << "replicas start from different weights";

  auto const batch = global.epoch_batch(global.epoch_order(1), 0);
  ASSERT_EQ(batch.size(), 36U);
  std::uint32_t const index = 9;
  std::span<const vid_t> const all(batch);
  global.step(batch, index, step_options{.update = false});
  rank0.step(all.subspan(0, 18), index, step_options{.update = false});
  rank1.step(all.subspan(18, 18), index, step_options{.update = false});

  std::vector<float> const g = global.gradients();
  std::vector<float> const g0 = rank0.gradients(), g1 = rank1.gradients();
  ASSERT_EQ(g0.size(), g.size());
  std::vector<float> mean(g.size());
  for (std::size_t i = 0; i < g.size(); ++i) mean[i] = (g0[i] + g1[i]) / 2.0f;
  float scale = 0;
  for (float x : g) scale = std::max(scale, std::abs(x));
  ASSERT_GT(scale, 0.0f) << "all-zero reference gradient";
  EXPECT_NE(g0, g1) << "the halves gave identical gradients: not a test of the averaging";
  for (std::size_t i = 0; i < g.size(); ++i) {
    EXPECT_NEAR(mean[i], g[i], 1e-6f * scale) << "gradient element " << i;
  }
  // The losses add up the same way: each rank's mean over its half, averaged.
  EXPECT_NEAR((rank0.last_loss() + rank1.last_loss()) / 2, global.last_loss(),
              1e-6 * global.last_loss());

  global.apply_gradients(g);
  rank0.apply_gradients(mean);
  rank1.apply_gradients(mean);
  std::vector<float> const w = global.parameters(), w0 = rank0.parameters();
  EXPECT_EQ(w0, rank1.parameters()) << "ranks given the same gradients diverged";
  ASSERT_EQ(w0.size(), w.size());
  for (std::size_t i = 0; i < w.size(); ++i) EXPECT_NEAR(w0[i], w[i], 1e-6f) << "weight " << i;
}

INSTANTIATE_TEST_SUITE_P(Backends, GgsIdentity,
                         ::testing::Values(backend::host, backend::emulated));

TEST(EvaluateLinkModel, AHostModelGivenTheTrainersWeightsScoresLikeTheTrainer) {
  auto const& f = test::link_data();
  auto cfg = test::link_cfg(minibatch_mode::cooperative, 2);
  cfg.compute_backend = backend::emulated;
  trainer tr(f.ds, f.g, cfg);
  tr.step(batch_of(tr, 0), 1, step_options{});
  // The TMA server's evaluator: a host model of the trainer's layout, given its weights.
  models::gnn_model server(exec_context(backend::host), model_config_for(f.ds, cfg));
  ASSERT_EQ(server.num_parameters(), tr.num_parameters());
  EXPECT_NE(std::vector<float>(server.params().values().host().begin(),
                               server.params().values().host().end()),
            tr.parameters());
  server.copy_parameters_from(tr.parameters());
  auto const [val, test] = evaluate_link_model(server, f.g, f.ds.features, *f.ds.link, cfg.topk, 2);
  auto const [tval, ttest] = tr.evaluate_link(0);
  EXPECT_EQ(test.metric_name, "roc_auc");
  EXPECT_EQ(test.value, ttest.value);
  EXPECT_EQ(test.all, ttest.all);
  EXPECT_EQ(val.metric_name, tval.metric_name);
  EXPECT_TRUE(std::isnan(val.value)) << "the fixture has no validation pairs";
  EXPECT_GT(test.value, 0.0);
  std::vector<float> const short_values(3, 0.0f);
  EXPECT_THROW(server.copy_parameters_from(short_values), logic_error);
  // A node-classification model has no decoder.
  train_config nc;
  nc.hidden = 8;
  nc.fanouts = {2};
  models::gnn_model plain(exec_context(backend::host),
                          model_config_for(test::protocol_data().ds, nc));
  EXPECT_THROW((void)evaluate_link_model(plain, f.g, f.ds.features, *f.ds.link, 20, 1),
               logic_error);
}

}  // namespace
}  // namespace coopgnn
