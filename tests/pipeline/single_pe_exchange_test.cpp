// Cooperative minibatching with one PE (docs/design.md section 6.4): every exchange is an identity
// and is skipped on every backend alike (exchange_with_owners, make_route, exchange_pull/push), so
// cooperative(P = 1) does exactly independent(P = 1)'s work: no all-to-all call, no byte sent,
// the same input rows in the same order and the same logits and gradients bit for bit.
#include <gtest/gtest.h>

#include <vector>

#include "runtime/comm/host_communicator.hpp"
#include "pipeline/exchange.hpp"
#include "pipeline/minibatch.hpp"
#include "pipeline/trainer.hpp"
#include "tests/common/steps.hpp"

namespace coopgnn {
namespace {

TEST(SinglePeExchange, OwnerExchangeIsTheIdentityAndCallsNoCollective) {
  for (auto const b : {backend::host, backend::emulated}) {
    exec_context const ctx(b);
    SCOPED_TRACE(b == backend::host ? "host" : "emulated");
    host_communicator comm(std::make_shared<host_comm_group>(1), 0);
    std::vector<std::uint16_t> const owner_of(16, 0);
    std::vector<vid_t> const ids = {9, 3, 12, 0, 7};  // not sorted: the order must survive
    auto const owners = upload<std::uint16_t>(ctx, owner_of);
    auto const placed = upload<vid_t>(ctx, ids);
    auto x = exchange_with_owners(ctx, comm, owners.view(), placed.view());
    EXPECT_TRUE(x.plan.identity);
    EXPECT_EQ(download<vid_t>(ctx, x.owned.view()), ids);
    EXPECT_EQ(x.id_bytes, 0);
    EXPECT_EQ(comm.stats().alltoall_calls, 0);

    auto route = make_route(ctx, std::move(x.plan), static_cast<std::int64_t>(ids.size()));
    EXPECT_TRUE(route.identity);
    EXPECT_EQ(route.staging_rows(), 0);
    std::vector<float> const rows = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};  // [5, 2]
    tensor<float> h(upload<float>(ctx, rows), 5, 2);
    auto const* data = h.data();
    tensor<float> pulled = exchange_pull(ctx, comm, route, std::move(h));
    EXPECT_EQ(pulled.data(), data) << "an identity pull must hand the rows back, not copy them";
    tensor<float> pushed = exchange_push(ctx, comm, route, std::move(pulled));
    EXPECT_EQ(pushed.data(), data);
    EXPECT_EQ(download<float>(ctx, pushed.view().flat()), rows);
    EXPECT_EQ(comm.stats().alltoall_calls, 0);
    EXPECT_EQ(comm.stats().alltoall_bytes_sent, 0);
    // A route of the wrong size is still rejected.
    tensor<float> wrong(ctx, 4, 2);
    EXPECT_THROW(exchange_pull(ctx, comm, route, std::move(wrong)), logic_error);
  }
}

train_config step_cfg(minibatch_mode mode, int P, sampler_kind s) {
  train_config c;
  c.mode = mode;
  c.num_pes = P;
  c.hidden = 8;
  c.fanouts = {4, 3, 3};
  c.sampler = s;
  c.batch_size = 64;
  c.dropout = 0.3f;
  c.seed = 77;
  return c;
}

TEST(SinglePeExchange, CooperativeOnOnePeDoesIndependentsWorkExactly) {
  for (auto const s : {sampler_kind::ns, sampler_kind::labor}) {
    SCOPED_TRACE(to_string(s));
    auto const ind = test::run_protocol_step(step_cfg(minibatch_mode::independent, 1, s));
    auto const coop = test::run_protocol_step(step_cfg(minibatch_mode::cooperative, 1, s));
    EXPECT_EQ(coop.work.alltoall_calls, 0);
    EXPECT_EQ(coop.work.alltoall_bytes, 0);
    EXPECT_EQ(coop.work.feature_rows, ind.work.feature_rows);
    EXPECT_EQ(coop.work.feature_bytes, ind.work.feature_bytes);
    EXPECT_EQ(coop.work.sampled_vertices, ind.work.sampled_vertices);
    // The same code path on the same rows in the same order: equal bits, not just close.
    ASSERT_FALSE(ind.logits.empty());
    EXPECT_EQ(coop.logits, ind.logits);
    EXPECT_EQ(coop.grads, ind.grads);
    EXPECT_EQ(coop.loss, ind.loss);
    // With two PEs the exchanges run (so the counter above could have failed).
    auto const coop2 = test::run_protocol_step(step_cfg(minibatch_mode::cooperative, 2, s));
    EXPECT_GT(coop2.work.alltoall_calls, 0);
    EXPECT_GT(coop2.work.alltoall_bytes, 0);
  }
}

TEST(StepCollectives, EveryCollectiveOfAStepIsCounted) {
  // Per PE and step with L = 3 layers: cooperative makes L counts all-to-alls and L id
  // all-to-all-v (sampling), 1 feature exchange, L - 1 forward and L - 1 backward exchanges, and
  // 2 all-reduces (gradients, loss); independent only the 2 all-reduces; one PE none.
  constexpr std::int64_t L = 3;
  for (auto const b : {backend::host, backend::emulated}) {
    SCOPED_TRACE(b == backend::host ? "host" : "emulated");
    for (int P : {1, 2, 3}) {
      auto coop_cfg = step_cfg(minibatch_mode::cooperative, P, sampler_kind::labor);
      auto ind_cfg = step_cfg(minibatch_mode::independent, P, sampler_kind::labor);
      coop_cfg.compute_backend = ind_cfg.compute_backend = b;
      auto const coop = test::run_protocol_step(coop_cfg);
      auto const ind = test::run_protocol_step(ind_cfg);
      std::int64_t const per_pe_coop = P > 1 ? L + L + 1 + 2 * (L - 1) + 2 : 0;
      std::int64_t const per_pe_ind = P > 1 ? 2 : 0;
      EXPECT_EQ(coop.work.collectives, P * per_pe_coop) << "P=" << P;
      EXPECT_EQ(ind.work.collectives, P * per_pe_ind) << "P=" << P;
      // The all-to-all-v calls are a subset: the counts all-to-alls and all-reduces are not.
      EXPECT_EQ(coop.work.alltoall_calls, P > 1 ? P * (L + 1 + 2 * (L - 1)) : 0) << "P=" << P;
      EXPECT_EQ(ind.work.alltoall_calls, 0);
    }
  }
}

TEST(StepCollectives, IdExchangesCarryTheirCountsInOneCall) {
  // Per PE and step with L = 3 layers and P > 1: cooperative's L id exchanges each carry their
  // counts (alltoallv_with_counts), so its calls are L id + 1 feature + (L - 1) forward +
  // (L - 1) backward + 2 all-reduces = 3 L + 1, with no counts all-to-all of its own, while the
  // operations (`collectives`) still count each counts exchange: 4 L + 1. Learnable input rows
  // add one push of their gradients (cooperative), or an all-gather of ids (carrying the counts)
  // and of rows (counts known from the ids) (independent). One PE: no call.
  constexpr std::int64_t L = 3;
  for (int emb : {0, 4}) {
    for (int P : {1, 2, 3}) {
      SCOPED_TRACE(testing::Message() << "P=" << P << " embedding_dim=" << emb);
      auto coop_cfg = step_cfg(minibatch_mode::cooperative, P, sampler_kind::labor);
      auto ind_cfg = step_cfg(minibatch_mode::independent, P, sampler_kind::labor);
      coop_cfg.embedding_dim = ind_cfg.embedding_dim = emb;
      auto const coop = test::run_protocol_step(coop_cfg);
      auto const ind = test::run_protocol_step(ind_cfg);
      std::int64_t const coop_calls = P > 1 ? 3 * L + 1 + (emb > 0 ? 1 : 0) : 0;
      std::int64_t const ind_calls = P > 1 ? 2 + (emb > 0 ? 2 : 0) : 0;
      EXPECT_EQ(coop.work.collective_calls, P * coop_calls);
      EXPECT_EQ(ind.work.collective_calls, P * ind_calls);
      EXPECT_EQ(coop.work.collectives - coop.work.collective_calls, P > 1 ? P * L : 0);
      EXPECT_EQ(ind.work.collectives - ind.work.collective_calls, P > 1 && emb > 0 ? P : 0);
      EXPECT_EQ(coop.work.count_exchanges, 0);
      EXPECT_EQ(ind.work.count_exchanges, 0);
      EXPECT_GT(coop.work.kernel_calls, 0);
      EXPECT_GT(ind.work.kernel_calls, 0);
    }
  }
}

TEST(StepCollectives, KernelCallsAreTheSameOnTheHostAndEmulatedBackends) {
  // The host and the emulated device run the same kernel entries (the emulated device's are the
  // host references on device-tagged memory), so the counted kernel calls agree per protocol.
  for (auto mode : {minibatch_mode::cooperative, minibatch_mode::independent}) {
    auto cfg = step_cfg(mode, 2, sampler_kind::labor);
    cfg.compute_backend = backend::host;
    auto const host = test::run_protocol_step(cfg);
    cfg.compute_backend = backend::emulated;
    auto const emulated = test::run_protocol_step(cfg);
    EXPECT_GT(host.work.kernel_calls, 0);
    EXPECT_EQ(host.work.kernel_calls, emulated.work.kernel_calls) << to_string(mode);
  }
}

}  // namespace
}  // namespace coopgnn
