// The whole training step on the emulated device (backend::emulated, runtime/core/types.hpp):
// the host kernels on separate, poisoned allocations that host code cannot read without a
// download. The CUDA backend runs the same step code (trainer::pe_step) with CUDA kernels, so
// these tests exercise on every CI run the uploads, downloads, memory spaces and zero-fills a
// GPU run relies on: a missing copy throws, a missing zero-fill reads NaN poison, a misplaced
// one changes bits. Expected values come from the host backend, which has its own tests.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <vector>

#include "pipeline/trainer.hpp"
#include "tests/common/steps.hpp"

namespace coopgnn {
namespace {

struct emulated_usecase {
  std::string model;
  sampler_kind sampler;
  std::vector<int> fanouts;
  std::int64_t batch;
  bool linear_head;
  minibatch_mode mode;
  int pes;
};

std::ostream& operator<<(std::ostream& os, const emulated_usecase& u) {
  os << u.model << "/" << to_string(u.sampler) << " fanouts";
  for (int f : u.fanouts) os << " " << f;
  return os << " B=" << u.batch << (u.linear_head ? " head " : " ") << to_string(u.mode)
            << " P=" << u.pes;
}

train_config make_cfg(const emulated_usecase& u, backend b) {
  train_config c;
  c.compute_backend = b;
  c.mode = u.mode;
  c.num_pes = u.pes;
  c.model = models::parse_conv_kind(u.model);
  c.hidden = 8;
  c.linear_head = u.linear_head;
  c.fanouts = u.fanouts;
  c.sampler = u.sampler;
  c.batch_size = u.batch;
  c.dropout = 0.3f;
  c.seed = 41;
  return c;
}

class EmulatedDevice : public ::testing::TestWithParam<emulated_usecase> {};

TEST_P(EmulatedDevice, StepGivesTheHostBackendsBits) {
  auto const u = GetParam();
  auto const host = test::run_protocol_step(make_cfg(u, backend::host));
  auto const emu = test::run_protocol_step(make_cfg(u, backend::emulated));
  ASSERT_EQ(emu.edges.size(), host.edges.size());
  for (std::size_t l = 0; l < host.edges.size(); ++l) EXPECT_EQ(emu.edges[l], host.edges[l]);
  EXPECT_EQ(emu.logits, host.logits);
  EXPECT_EQ(emu.grads, host.grads);
  EXPECT_EQ(emu.loss, host.loss);
  EXPECT_EQ(emu.work.sampled_edges, host.work.sampled_edges);
  EXPECT_EQ(emu.work.feature_rows, host.work.feature_rows);
  EXPECT_EQ(emu.work.alltoall_bytes, host.work.alltoall_bytes);
  EXPECT_EQ(emu.work.allreduce_bytes, host.work.allreduce_bytes);
  // Not vacuous: the reference has a non-zero gradient and finite logits.
  float scale = 0;
  for (float g : host.grads) scale = std::max(scale, std::abs(g));
  EXPECT_GT(scale, 0.0f);
  for (auto const& [v, row] : emu.logits) {
    for (float x : row) ASSERT_TRUE(std::isfinite(x)) << "vertex " << v;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Steps, EmulatedDevice,
    ::testing::Values(
        emulated_usecase{
            "sage", sampler_kind::ns, {4, 3}, 64, false, minibatch_mode::cooperative, 1},
        emulated_usecase{
            "sage", sampler_kind::ns, {4, 3}, 64, false, minibatch_mode::cooperative, 4},
        emulated_usecase{
            "sage", sampler_kind::labor, {5, 5, 5}, 50, true, minibatch_mode::cooperative, 3},
        emulated_usecase{
            "gcn", sampler_kind::ns, {-1, 3}, 33, true, minibatch_mode::cooperative, 2},
        emulated_usecase{"gcn", sampler_kind::labor, {3}, 5, false, minibatch_mode::cooperative, 8},
        emulated_usecase{"gat", sampler_kind::ns, {4, 3}, 48, true, minibatch_mode::cooperative, 3},
        emulated_usecase{
            "sage", sampler_kind::ns, {4, 3}, 64, true, minibatch_mode::independent, 4},
        emulated_usecase{
            "gcn", sampler_kind::labor, {4, 4}, 40, false, minibatch_mode::independent, 2}));

TEST(EmulatedDevice, SamplingOnTheHostThenCopyingGivesTheSameStep) {
  // --sample-on host: the protocols run on the host graph, then blocks, plans and input ids are
  // copied to the device (the CUDA backend's second sampling path).
  for (minibatch_mode mode : {minibatch_mode::cooperative, minibatch_mode::independent}) {
    emulated_usecase const u{"gcn", sampler_kind::labor, {4, 3}, 48, true, mode, 3};
    auto const host = test::run_protocol_step(make_cfg(u, backend::host));
    auto cfg = make_cfg(u, backend::emulated);
    cfg.sample_on_device = false;
    auto const emu = test::run_protocol_step(cfg);
    for (std::size_t l = 0; l < host.edges.size(); ++l) EXPECT_EQ(emu.edges[l], host.edges[l]);
    EXPECT_EQ(emu.logits, host.logits);
    EXPECT_EQ(emu.grads, host.grads);
    EXPECT_EQ(emu.work.alltoall_bytes, host.work.alltoall_bytes);
  }
}

TEST(EmulatedDevice, CooperativeOnSeveralPesEqualsOnePe) {
  // Several PEs, each with its own emulated device, against one PE: the cooperative invariant
  // on the device path (docs/design.md section 8).
  emulated_usecase u{"sage", sampler_kind::labor, {4, 4}, 48, true, minibatch_mode::cooperative, 1};
  auto const one = test::run_protocol_step(make_cfg(u, backend::emulated));
  for (int P : {2, 4}) {
    u.pes = P;
    auto const many = test::run_protocol_step(make_cfg(u, backend::emulated));
    for (std::size_t l = 0; l < one.edges.size(); ++l) {
      EXPECT_EQ(test::as_set(many.edges[l]), test::as_set(one.edges[l])) << "P " << P;
    }
    for (auto const& [v, row] : one.logits) {
      auto const& other = many.logits.at(v);
      for (std::size_t j = 0; j < row.size(); ++j) EXPECT_NEAR(other[j], row[j], 1e-5f);
    }
    EXPECT_NEAR(many.loss, one.loss, 1e-5);
  }
}

TEST(EmulatedDevice, EpochsTrainAndEvaluateLikeTheHost) {
  emulated_usecase const u{
      "sage", sampler_kind::ns, {5, 5}, 128, false, minibatch_mode::cooperative, 3};
  auto cfg = make_cfg(u, backend::host);
  cfg.hidden = 16;
  cfg.lr = 0.02f;
  auto const [host_losses, host_last] = test::run_protocol_epochs(cfg, 3);
  cfg.compute_backend = backend::emulated;
  auto const [emu_losses, emu_last] = test::run_protocol_epochs(cfg, 3);
  EXPECT_EQ(emu_losses, host_losses);
  EXPECT_EQ(emu_last.val_metric, host_last.val_metric);
  EXPECT_EQ(emu_last.test_metric, host_last.test_metric);
  EXPECT_EQ(emu_last.backend, "emulated");
  EXPECT_LT(host_losses.back(), host_losses.front());
}

// The stage clocks (step_meter of pipeline/metered_exchange.hpp over
// runtime/core/stage_clock.hpp): on both host-run backends every stage of a traced step gets a
// non-negative time, the stages that do work get a positive one, and together they fit inside the
// step's wall time measured here.
TEST(EmulatedDevice, StageSecondsFitTheStep) {
  emulated_usecase const u{"sage", sampler_kind::ns, {4, 3}, 64, false, minibatch_mode::cooperative,
                           3};
  for (backend b : {backend::host, backend::emulated}) {
    auto const cfg = make_cfg(u, b);
    auto const& d = test::protocol_data();
    trainer tr(d.ds, d.g, cfg);
    auto const order = epoch_order(d.ds.train, cfg.seed, 1);
    std::vector<vid_t> const batch(
        order.begin(), order.begin() + std::min<std::int64_t>(cfg.batch_size, std::ssize(order)));
    std::vector<pe_trace> traces;
    auto const t0 = std::chrono::steady_clock::now();
    tr.step(batch, 0, step_options{true, &traces});
    double const wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    ASSERT_EQ(traces.size(), 3u);
    for (std::size_t p = 0; p < traces.size(); ++p) {
      auto const& s = traces[p].seconds;
      for (double x :
           {s.sample, s.feature_load, s.forward, s.backward, s.communication, s.optimizer}) {
        EXPECT_TRUE(std::isfinite(x) && x >= 0) << to_string(b) << " PE " << p << ": " << x;
      }
      EXPECT_GT(s.sample, 0) << to_string(b) << " PE " << p;
      EXPECT_GT(s.forward + s.backward, 0) << to_string(b) << " PE " << p;
      EXPECT_GT(s.communication, 0) << to_string(b) << " PE " << p;  // 3 PEs exchange rows
      EXPECT_LE(s.total(), wall) << to_string(b) << " PE " << p;
    }
  }
}

}  // namespace
}  // namespace coopgnn
