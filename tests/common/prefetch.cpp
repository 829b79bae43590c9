#include "tests/common/prefetch.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "tests/common/link_steps.hpp"
#include "tests/common/steps.hpp"

namespace coopgnn::test {

train_config prefetch_cfg(const prefetch_usecase& u) {
  train_config c = u.task == task_kind::link_prediction ? link_cfg(u.mode, u.pes) : [&] {
    train_config n;
    n.mode = u.mode;
    n.num_pes = u.pes;
    n.hidden = 8;
    n.fanouts = {4, 3};
    n.dropout = 0.3f;
    n.seed = 29;
    return n;
  }();
  c.compute_backend = u.where;
  c.batch_size = 96;
  c.sampler = sampler_kind::labor;
  c.batch_dependency = u.kappa;
  c.embedding_dim = u.embedding;
  if (u.where == backend::cuda) c.pes_per_gpu = u.pes;
  if (u.cache) {
    c.cache_policy =
        u.where == backend::cuda ? cache_policy_kind::setassoc : cache_policy_kind::lru;
    c.cache_rows = 120;
    if (u.where == backend::cuda) c.feature_storage = storage_tier::device;
  }
  return c;
}

namespace {
const dataset& data_of(const prefetch_usecase& u) {
  return u.task == task_kind::link_prediction ? link_data().ds : protocol_data().ds;
}
const csc_graph& graph_of(const prefetch_usecase& u) {
  return u.task == task_kind::link_prediction ? link_data().g : protocol_data().g;
}

void expect_same_work(const work_counters& a, const work_counters& b, int epoch) {
  EXPECT_EQ(a.seeds, b.seeds) << "epoch " << epoch;
  EXPECT_EQ(a.sampled_edges, b.sampled_edges) << "epoch " << epoch;
  EXPECT_EQ(a.sampled_vertices, b.sampled_vertices) << "epoch " << epoch;
  EXPECT_EQ(a.feature_rows, b.feature_rows) << "epoch " << epoch;
  EXPECT_EQ(a.feature_bytes, b.feature_bytes) << "epoch " << epoch;
  EXPECT_EQ(a.alltoall_bytes, b.alltoall_bytes) << "epoch " << epoch;
  EXPECT_EQ(a.alltoall_calls, b.alltoall_calls) << "epoch " << epoch;
  EXPECT_EQ(a.collectives, b.collectives) << "epoch " << epoch;
  EXPECT_EQ(a.collective_calls, b.collective_calls) << "epoch " << epoch;
  EXPECT_EQ(a.count_exchanges, b.count_exchanges) << "epoch " << epoch;
  EXPECT_EQ(a.kernel_calls, b.kernel_calls) << "epoch " << epoch;
  EXPECT_EQ(a.allreduce_bytes, b.allreduce_bytes) << "epoch " << epoch;
  EXPECT_EQ(a.cache_hits, b.cache_hits) << "epoch " << epoch;
  EXPECT_EQ(a.cache_misses, b.cache_misses) << "epoch " << epoch;
}
}  // namespace

prefetch_run run_prefetch_case(const prefetch_usecase& u, const train_config& cfg, int epochs) {
  trainer tr(data_of(u), graph_of(u), cfg);
  prefetch_run r;
  for (int e = 1; e <= epochs; ++e) r.epochs.push_back(tr.run_epoch(e, false));
  r.params = tr.parameters();
  if (cfg.embedding_dim > 0) {
    auto const m = tr.embedding_values();
    r.embeddings.assign(m.data(), m.data() + m.rows() * m.cols());
  }
  return r;
}

void expect_bits(const std::vector<float>& a, const std::vector<float>& b, const char* what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  ASSERT_FALSE(a.empty()) << what;
  EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)), 0) << what;
}

void expect_prefetch_gives_serial_bits(const prefetch_usecase& u) {
  auto cfg = prefetch_cfg(u);
  cfg.prefetch = 0;
  auto const serial = run_prefetch_case(u, cfg, 2);
  cfg.prefetch = u.depth;
  auto const ahead = run_prefetch_case(u, cfg, 2);
  ASSERT_EQ(ahead.epochs.size(), serial.epochs.size());
  ASSERT_GE(serial.epochs[0].batches, 3) << "the case needs batches to prefetch";
  for (std::size_t e = 0; e < serial.epochs.size(); ++e) {
    int const epoch = static_cast<int>(e) + 1;
    EXPECT_EQ(ahead.epochs[e].batches, serial.epochs[e].batches) << "epoch " << epoch;
    // Bitwise: the same doubles, not merely close ones.
    EXPECT_EQ(ahead.epochs[e].train_loss, serial.epochs[e].train_loss) << "epoch " << epoch;
    EXPECT_TRUE(std::isfinite(serial.epochs[e].train_loss));
    expect_same_work(ahead.epochs[e].work, serial.epochs[e].work, epoch);
  }
  if (u.cache) {
    EXPECT_GT(serial.epochs[1].work.cache_hits, 0) << "the cache must be exercised";
  }
  if (u.pes > 1 && u.mode == minibatch_mode::cooperative) {
    EXPECT_GT(serial.epochs[0].work.alltoall_bytes, 0) << "the exchanges must be exercised";
  }
  expect_bits(ahead.params, serial.params, "weights");
  if (u.embedding > 0) {
    expect_bits(ahead.embeddings, serial.embeddings, "embedding rows");
  }
}

void expect_stopped_prefetch_resumes(backend where) {
  // Stopped after batch 2 with batches 3 and 4 already asked for (depth 2): they are prepared
  // and dropped, and the epoch resumed in the same trainer from batch 3 ends with the serial
  // epoch's loss and weights. No cache: dropped batches still advance a cache's contents.
  prefetch_usecase const u{
      "", task_kind::node_classification, minibatch_mode::cooperative, where, 3, 2, false, 4, 0};
  auto cfg = prefetch_cfg(u);
  cfg.prefetch = 0;
  auto const serial = run_prefetch_case(u, cfg, 1);
  ASSERT_GE(serial.epochs[0].batches, 5);
  cfg.prefetch = 2;
  trainer tr(data_of(u), graph_of(u), cfg);
  int calls = 0;
  epoch_position at;
  auto const part = tr.run_epoch(
      epoch_position{.epoch = 1}, false, {}, [&] { return ++calls == 2; }, &at);
  EXPECT_EQ(part.batches, 2);
  ASSERT_EQ(at.next_batch, 2);
  auto const rest = tr.run_epoch(at, false, {}, {}, nullptr);
  EXPECT_EQ(rest.batches, serial.epochs[0].batches);
  EXPECT_EQ(rest.train_loss, serial.epochs[0].train_loss);
  expect_bits(tr.parameters(), serial.params, "weights");
}

}  // namespace coopgnn::test
