// Overlap across batches (--prefetch, docs/design.md section 6.7): a PE's next batches are
// prepared on its prefetch thread, with its own communicator, while it computes the current one.
// The results must be the serial step's bit for bit: every epoch's loss, every work and cache
// counter, the final weights (and learnt embedding rows), on the host and the emulated backend,
// for both protocols and both tasks. The expected values are those of the serial run
// (--prefetch 0), which the protocol tests check against a single PE.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "pipeline/trainer.hpp"
#include "tests/common/link_steps.hpp"
#include "tests/common/steps.hpp"

namespace coopgnn {
namespace {

struct prefetch_usecase {
  std::string name;
  task_kind task;
  minibatch_mode mode;
  backend where;
  int pes;
  int depth;               // --prefetch
  bool cache;              // an LRU cache of 120 rows per PE
  std::int64_t kappa;      // --batch-dependency (LABOR)
  std::int64_t embedding;  // --embedding-dim (0: the features)
};

std::ostream& operator<<(std::ostream& os, const prefetch_usecase& u) { return os << u.name; }

train_config make_cfg(const prefetch_usecase& u) {
  train_config c = u.task == task_kind::link_prediction ? test::link_cfg(u.mode, u.pes) : [&] {
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
  if (u.cache) {
    c.cache_policy = cache_policy_kind::lru;
    c.cache_rows = 120;
  }
  return c;
}

/// What a run produced that the prefetch must not change.
struct run_result {
  std::vector<epoch_report> epochs;
  std::vector<float> params;
  std::vector<float> embeddings;  // the learnt rows (empty without them)
};

run_result train(const dataset& ds, const csc_graph& g, const train_config& cfg, int epochs) {
  trainer tr(ds, g, cfg);
  run_result r;
  for (int e = 1; e <= epochs; ++e) r.epochs.push_back(tr.run_epoch(e, false));
  r.params = tr.parameters();
  if (cfg.embedding_dim > 0) {
    auto const m = tr.embedding_values();
    r.embeddings.assign(m.data(), m.data() + m.rows() * m.cols());
  }
  return r;
}

/// Bitwise equality of two float arrays (NaN payloads included).
void expect_bits(const std::vector<float>& a, const std::vector<float>& b, const char* what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  ASSERT_FALSE(a.empty()) << what;
  EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)), 0) << what;
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

const dataset& data_of(const prefetch_usecase& u) {
  return u.task == task_kind::link_prediction ? test::link_data().ds : test::protocol_data().ds;
}
const csc_graph& graph_of(const prefetch_usecase& u) {
  return u.task == task_kind::link_prediction ? test::link_data().g : test::protocol_data().g;
}

class Prefetch : public ::testing::TestWithParam<prefetch_usecase> {};

TEST_P(Prefetch, GivesTheSerialStepsBits) {
  auto const u = GetParam();
  auto cfg = make_cfg(u);
  cfg.prefetch = 0;
  auto const serial = train(data_of(u), graph_of(u), cfg, 2);
  cfg.prefetch = u.depth;
  auto const ahead = train(data_of(u), graph_of(u), cfg, 2);
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

std::vector<prefetch_usecase> usecases() {
  using enum minibatch_mode;
  auto const node = task_kind::node_classification;
  auto const link = task_kind::link_prediction;
  auto const host = backend::host;
  auto const emu = backend::emulated;
  return {
      {"node_coop_host_P4_d1_cache_kappa8", node, cooperative, host, 4, 1, true, 8, 0},
      {"node_indep_host_P3_d2_cache_kappa8", node, independent, host, 3, 2, true, 8, 0},
      {"node_coop_emulated_P2_d2_cache", node, cooperative, emu, 2, 2, true, 1, 0},
      {"node_indep_emulated_P2_d1_kappa4", node, independent, emu, 2, 1, false, 4, 0},
      {"node_coop_host_P1_d1", node, cooperative, host, 1, 1, false, 1, 0},
      {"node_coop_host_P3_d1_embeddings", node, cooperative, host, 3, 1, false, 1, 6},
      {"link_coop_host_P4_d1_cache_kappa8", link, cooperative, host, 4, 1, true, 8, 0},
      {"link_indep_host_P2_d2_kappa2", link, independent, host, 2, 2, false, 2, 0},
      {"link_coop_emulated_P3_d1_cache", link, cooperative, emu, 3, 1, true, 1, 0},
      {"link_coop_host_P2_d2_embeddings", link, cooperative, host, 2, 2, false, 1, 5},
      {"link_indep_emulated_P2_d1_embeddings", link, independent, emu, 2, 1, false, 1, 4},
  };
}

INSTANTIATE_TEST_SUITE_P(Cases, Prefetch, ::testing::ValuesIn(usecases()),
                         [](const auto& info) { return info.param.name; });

TEST(Prefetch, AStoppedEpochResumesWithNoBatchLostOrDoubled) {
  // Stopped after batch 2 with batches 3 and 4 already asked for (depth 2): they are prepared
  // and dropped, and the epoch resumed in the same trainer from batch 3 ends with the serial
  // epoch's loss and weights. No cache: dropped batches still advance a cache's contents.
  prefetch_usecase const u{"",
                           task_kind::node_classification,
                           minibatch_mode::cooperative,
                           backend::host,
                           3,
                           2,
                           false,
                           4,
                           0};
  auto cfg = make_cfg(u);
  cfg.prefetch = 0;
  auto const serial = train(data_of(u), graph_of(u), cfg, 1);
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

TEST(Prefetch, TheOptionIsDeclaredAndBounded) {
  auto const& d = train_option("--prefetch");
  EXPECT_FALSE(d.changes_arithmetic) << "prefetch must not change the numbers";
  EXPECT_TRUE(option_range_error(d, -1).find("outside") != std::string::npos);
  EXPECT_TRUE(option_range_error(d, 2).empty());
  train_config c;
  c.prefetch = -1;
  EXPECT_THROW(validate_train_config(c), logic_error);
}

}  // namespace
}  // namespace coopgnn
