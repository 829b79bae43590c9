// The epoch's tail (train_config::drop_last / wrap_around, README "Training"): how many global
// batches an epoch holds and which items each carries, for |train| = 0, < B, = B, k B and
// k B + r; every training seed once per epoch by default; the short tail batch (and a tail with
// fewer seeds than PEs) keeps cooperative(P) == single PE and independent(P) == single PE.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

#include "runtime/core/error.hpp"
#include "pipeline/trainer.hpp"
#include "tests/common/link_steps.hpp"
#include "tests/common/steps.hpp"

namespace coopgnn {
namespace {

struct count_usecase {
  std::int64_t items, batch;
  std::int64_t ceil_count, floor_count;  // worked out by hand
  std::int64_t last_size;                // of the last batch without drop_last (0: no batch)
};

class EpochBatchCount : public ::testing::TestWithParam<count_usecase> {};

TEST_P(EpochBatchCount, CountsAndSizes) {
  auto const u = GetParam();
  EXPECT_EQ(epoch_batch_count(u.items, u.batch, false), u.ceil_count);
  EXPECT_EQ(epoch_batch_count(u.items, u.batch, true), u.floor_count);
  // An order that is not sorted, so that positions and values differ.
  std::vector<vid_t> order(static_cast<std::size_t>(u.items));
  for (std::int64_t i = 0; i < u.items; ++i)
    order[i] = (i * 7 + 3) % std::max<std::int64_t>(u.items, 1) + 100;
  std::vector<vid_t> seen;
  for (std::int64_t b = 0; b < u.ceil_count; ++b) {
    auto const batch = epoch_batch(order, u.batch, b, false);
    auto const want = b + 1 < u.ceil_count ? u.batch : u.last_size;
    EXPECT_EQ(static_cast<std::int64_t>(batch.size()), want) << "batch " << b;
    seen.insert(seen.end(), batch.begin(), batch.end());
  }
  // Every item exactly once, in order.
  EXPECT_EQ(seen, order);
  // drop_last trains the first floor(N / B) batches, each full.
  for (std::int64_t b = 0; b < u.floor_count; ++b) {
    EXPECT_EQ(static_cast<std::int64_t>(epoch_batch(order, u.batch, b, false).size()), u.batch);
  }
  EXPECT_THROW((void)epoch_batch(order, u.batch, u.ceil_count, false), logic_error);
  EXPECT_THROW((void)epoch_batch(order, u.batch, -1, false), logic_error);
}

INSTANTIATE_TEST_SUITE_P(Sizes, EpochBatchCount,
                         ::testing::Values(count_usecase{0, 4, 0, 0, 0},    // empty
                                           count_usecase{3, 4, 1, 0, 3},    // < B
                                           count_usecase{4, 4, 1, 1, 4},    // = B
                                           count_usecase{12, 4, 3, 3, 4},   // k B
                                           count_usecase{14, 4, 4, 3, 2},   // k B + r
                                           count_usecase{13, 4, 4, 3, 1},   // r = 1
                                           count_usecase{5, 1, 5, 5, 1}));  // B = 1

TEST(EpochBatch, RejectsBadArguments) {
  EXPECT_THROW((void)epoch_batch_count(-1, 4, false), logic_error);
  EXPECT_THROW((void)epoch_batch_count(10, 0, true), logic_error);
  std::vector<vid_t> const order{1, 2, 3};
  EXPECT_THROW((void)epoch_batch(order, 0, 0, false), logic_error);
  EXPECT_THROW((void)epoch_batch(order, 2, -1, true), logic_error);
}

TEST(EpochBatch, WrapAroundFillsEveryBatchFromTheStartOfTheOrder) {
  std::vector<vid_t> const order{10, 11, 12, 13, 14, 15, 16, 17, 18, 19};
  EXPECT_EQ(epoch_batch(order, 4, 0, true), (std::vector<vid_t>{10, 11, 12, 13}));
  EXPECT_EQ(epoch_batch(order, 4, 2, true), (std::vector<vid_t>{18, 19, 10, 11}));
  // Past the epoch's batches: positions 20..23 mod 10.
  EXPECT_EQ(epoch_batch(order, 4, 5, true), (std::vector<vid_t>{10, 11, 12, 13}));
  EXPECT_EQ(epoch_batch(order, 4, 7, true), (std::vector<vid_t>{18, 19, 10, 11}));
  // Fewer items than B: each batch is the whole order.
  std::vector<vid_t> const few{5, 6, 7};
  EXPECT_EQ(epoch_batch(few, 4, 0, true), few);
  EXPECT_EQ(epoch_batch(few, 4, 9, true), few);
  EXPECT_TRUE(epoch_batch(std::vector<vid_t>{}, 4, 3, true).empty());
}

const test::step_fixture& data() { return test::protocol_data(); }

train_config tail_cfg(minibatch_mode mode, int P, std::int64_t B) {
  train_config c;
  c.mode = mode;
  c.num_pes = P;
  c.hidden = 8;
  c.fanouts = {4, 3};
  c.batch_size = B;
  c.dropout = 0.3f;
  c.seed = 11;
  return c;
}

TEST(EpochTail, RunEpochTrainsEverySeedOnceOrDropsTheTail) {
  auto const n = static_cast<std::int64_t>(data().ds.train.size());
  ASSERT_EQ(n, 420) << "the fixture changed: the cases below assume 420 = 3 * 128 + 36";
  for (bool drop : {false, true}) {
    SCOPED_TRACE(drop ? "drop_last" : "short tail");
    auto cfg = tail_cfg(minibatch_mode::cooperative, 3, 128);
    cfg.drop_last = drop;
    trainer tr(data().ds, data().g, cfg);
    EXPECT_EQ(tr.batches_per_epoch(), drop ? 3 : 4);
    // The batches the trainer builds cover the epoch's order once (without drop_last).
    auto const order = tr.epoch_order(2);
    std::map<vid_t, int> times;
    for (std::int64_t b = 0; b < tr.batches_per_epoch(); ++b) {
      for (vid_t v : tr.epoch_batch(order, b)) ++times[v];
    }
    EXPECT_EQ(static_cast<std::int64_t>(times.size()), drop ? 384 : 420);
    for (auto const& [v, k] : times) EXPECT_EQ(k, 1) << "seed " << v;
    if (!drop) {
      for (vid_t v : data().ds.train) EXPECT_EQ(times.count(v), 1u) << "seed " << v << " missed";
    }
    // And run_epoch trains exactly those seeds: the loss-computing seeds summed over PEs.
    auto const rep = tr.run_epoch(2, false);
    EXPECT_EQ(rep.batches, drop ? 3 : 4);
    EXPECT_EQ(rep.work.seeds, drop ? 384 : 420);
    EXPECT_TRUE(std::isfinite(rep.train_loss));
    EXPECT_GT(rep.train_loss, 0.0);
  }
}

TEST(EpochTail, RejectsTailOptionsThatDoNotFit) {
  auto cfg = tail_cfg(minibatch_mode::cooperative, 2, 128);
  cfg.drop_last = true;
  cfg.wrap_around = true;
  EXPECT_THROW(trainer(data().ds, data().g, cfg), logic_error);
  cfg.wrap_around = false;
  cfg.batch_size = 421;  // > |train|: drop_last leaves no batch
  EXPECT_THROW(trainer(data().ds, data().g, cfg), logic_error);
  cfg.batch_size = 420;  // = |train|: one full batch
  EXPECT_EQ(trainer(data().ds, data().g, cfg).batches_per_epoch(), 1);
  cfg.drop_last = false;
  cfg.batch_size = 421;  // < B without drop_last: one short batch
  EXPECT_EQ(trainer(data().ds, data().g, cfg).batches_per_epoch(), 1);
}

void expect_same_step(const test::step_result& a, const test::step_result& ref) {
  test::expect_same_outputs(a, ref);
  for (std::size_t l = 0; l < ref.edges.size(); ++l) {
    EXPECT_EQ(test::as_set(a.edges[l]), test::as_set(ref.edges[l])) << "layer " << l;
  }
}

// The tail batch of epoch 1: B = 128 leaves 36 seeds, B = 139 leaves 3 (not a multiple of P = 2
// or 4; independent P = 4 has a PE without seeds), B = 419 leaves 1 (P - 1 PEs without seeds).
TEST(EpochTail, ShortTailKeepsEveryProtocolEqualToOnePe) {
  struct tail_case {
    std::int64_t batch;
    std::size_t tail_size;
  };
  for (auto const tc : {tail_case{128, 36}, tail_case{419, 1}, tail_case{139, 3}}) {
    SCOPED_TRACE(::testing::Message() << "B = " << tc.batch);
    auto const one = tail_cfg(minibatch_mode::independent, 1, tc.batch);
    trainer tr(data().ds, data().g, one);
    auto const nb = tr.batches_per_epoch();
    auto const tail = tr.epoch_batch(tr.epoch_order(1), nb - 1);
    ASSERT_EQ(tail.size(), tc.tail_size);
    auto const index = static_cast<std::uint32_t>(nb - 1);
    auto const ref = test::run_protocol_step(one, tail, index);
    EXPECT_EQ(ref.work.seeds, static_cast<std::int64_t>(tc.tail_size));
    for (int P : {1, 2, 3, 4}) {
      for (auto mode : {minibatch_mode::cooperative, minibatch_mode::independent}) {
        SCOPED_TRACE(::testing::Message() << to_string(mode) << " P = " << P);
        auto const got = test::run_protocol_step(tail_cfg(mode, P, tc.batch), tail, index);
        expect_same_step(got, ref);
        EXPECT_EQ(got.work.seeds, static_cast<std::int64_t>(tc.tail_size));
      }
    }
  }
}

// Link prediction batches positive edges the same way: the short tail of positives keeps
// cooperative(P) and independent(P) equal to one PE, with PEs that score no pair.
TEST(EpochTail, LinkPredictionShortTailKeepsEveryProtocolEqualToOnePe) {
  auto const& f = test::link_data();
  auto const n = static_cast<std::int64_t>(f.ds.link->train.size());
  for (std::int64_t B : {std::int64_t{37}, n - 1}) {
    SCOPED_TRACE(::testing::Message() << "B = " << B);
    auto one = test::link_cfg(minibatch_mode::independent, 1);
    one.batch_size = B;
    trainer tr(f.ds, f.g, one);
    auto const nb = tr.batches_per_epoch();
    auto const tail = tr.epoch_batch(tr.epoch_order(1), nb - 1);
    ASSERT_EQ(static_cast<std::int64_t>(tail.size()), n - (nb - 1) * B);
    ASSERT_LT(static_cast<std::int64_t>(tail.size()), B) << "the case needs a short tail";
    auto const index = static_cast<std::uint32_t>(nb - 1);
    auto const ref = test::run_link_step(one, tail, index);
    EXPECT_EQ(ref.pairs, static_cast<std::int64_t>(tail.size()) * (1 + one.negatives));
    for (int P : {1, 2, 3, 4}) {
      for (auto mode : {minibatch_mode::cooperative, minibatch_mode::independent}) {
        SCOPED_TRACE(::testing::Message() << to_string(mode) << " P = " << P);
        auto cfg = test::link_cfg(mode, P);
        cfg.batch_size = B;
        test::expect_same(test::run_link_step(cfg, tail, index), ref);
      }
    }
  }
}

}  // namespace
}  // namespace coopgnn
