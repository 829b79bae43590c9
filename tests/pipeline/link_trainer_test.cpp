// Link prediction in both protocols (docs/design.md sections 7.1 and 8): keyed negatives,
// the pairs a PE scores, cooperative(P) == single PE for the scores, gradients and loss,
// independent work >= cooperative work, the emulated device equal to the host, learnable
// embeddings, and a learnable task whose test AUC must rise far above chance.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "runtime/core/error.hpp"
#include "runtime/core/rng.hpp"
#include "pipeline/link.hpp"
#include "pipeline/trainer.hpp"
#include "tests/common/link_steps.hpp"

namespace coopgnn {
namespace {

using test::expect_same;
using test::link_cfg;
using test::link_fixture;
using test::link_step;

const link_fixture& fixture() { return test::link_data(); }
link_step run_link_step(const train_config& cfg) { return test::run_link_step(cfg); }

TEST(NegativeTail, NeverTheSourceInRangeAndKeyed) {
  for (std::int64_t i = 0; i < 2000; ++i) {
    vid_t const src = i % 7;
    vid_t const t = negative_tail(3, 9, i, 1, src, 0, 7);
    EXPECT_NE(t, src);
    EXPECT_GE(t, 0);
    EXPECT_LT(t, 7);
    EXPECT_EQ(t, negative_tail(3, 9, i, 1, src, 0, 7)) << "not a pure function of its key";
  }
  // An item range: tails stay inside it.
  for (std::int64_t i = 0; i < 500; ++i) {
    vid_t const t = negative_tail(1, 0, i, 0, 2, 10, 13);
    EXPECT_GE(t, 10);
    EXPECT_LT(t, 13);
  }
  EXPECT_THROW(negative_tail(1, 0, 0, 0, 5, 5, 6), logic_error);
}

TEST(NegativeTail, UniformOverTheOtherVertices) {
  // Chi-square over 9 vertices without the source: 8 cells of expected count N / 8.
  constexpr int n = 9, src = 4;
  constexpr std::int64_t draws = 80000;
  std::vector<std::int64_t> count(n, 0);
  for (std::int64_t i = 0; i < draws; ++i) ++count[negative_tail(21, 2, i, 0, src, 0, n)];
  EXPECT_EQ(count[src], 0);
  double const expected = static_cast<double>(draws) / (n - 1);
  double chi2 = 0;
  for (int v = 0; v < n; ++v) {
    if (v == src) continue;
    chi2 += (count[v] - expected) * (count[v] - expected) / expected;
  }
  // 7 degrees of freedom: P(chi2 > 24.3) = 0.001.
  EXPECT_LT(chi2, 24.3);
}

TEST(LinkBatch, PairsMapBackToTheirEndpoints) {
  auto const& f = fixture();
  std::vector<vid_t> const pos = {0, 3, 3, 10};
  auto const b = make_link_batch(*f.ds.link, pos, 3, 8, 1, f.ds.num_nodes);
  ASSERT_EQ(b.pairs.size(), pos.size() * 4);
  std::set<vid_t> const distinct(b.targets.begin(), b.targets.end());
  EXPECT_EQ(distinct.size(), b.targets.size()) << "targets repeat a vertex";
  for (std::size_t i = 0; i < b.pairs.size(); ++i) {
    EXPECT_EQ(b.targets[static_cast<std::size_t>(b.src_rows[i])], b.pairs[i].first);
    EXPECT_EQ(b.targets[static_cast<std::size_t>(b.dst_rows[i])], b.pairs[i].second);
    bool const positive = i % 4 == 0;
    EXPECT_EQ(b.labels[i], positive ? 1.0f : 0.0f);
    auto const p = static_cast<std::size_t>(pos[i / 4]);
    EXPECT_EQ(b.pairs[i].first, f.ds.link->train.src[p]);
    if (positive) {
      EXPECT_EQ(b.pairs[i].second, f.ds.link->train.dst[p]);
    }
  }
  EXPECT_THROW(make_link_batch(*f.ds.link, std::vector<vid_t>{-1}, 1, 0, 0, f.ds.num_nodes),
               logic_error);
}

class LinkProtocolTest : public ::testing::TestWithParam<int> {};

TEST_P(LinkProtocolTest, CooperativeEqualsSinglePe) {
  int const P = GetParam();
  auto const ref = run_link_step(link_cfg(minibatch_mode::independent, 1));
  EXPECT_EQ(ref.pairs, 37 * 3);
  expect_same(run_link_step(link_cfg(minibatch_mode::cooperative, P)), ref);
}

TEST_P(LinkProtocolTest, IndependentEqualsSinglePeAndDoesMoreWork) {
  int const P = GetParam();
  auto const ref = run_link_step(link_cfg(minibatch_mode::independent, 1));
  auto const ind = run_link_step(link_cfg(minibatch_mode::independent, P));
  auto const coop = run_link_step(link_cfg(minibatch_mode::cooperative, P));
  expect_same(ind, ref);
  EXPECT_GE(ind.work.sampled_edges, coop.work.sampled_edges);
  EXPECT_GE(ind.work.feature_rows, coop.work.feature_rows);
  EXPECT_EQ(coop.work.feature_rows, ref.work.feature_rows)
      << "cooperative loads every input row once";
}

INSTANTIATE_TEST_SUITE_P(Pes, LinkProtocolTest, ::testing::Values(1, 2, 3, 4));

TEST(LinkProtocol, MlpDecoderLayerNormPreluAndEmbeddingsCooperativeEqualsSinglePe) {
  for (bool emb : {false, true}) {
    auto cfg = link_cfg(minibatch_mode::independent, 1);
    cfg.decoder = models::decoder_kind::mlp;
    cfg.decoder_hidden = 5;
    cfg.layer_norm = true;
    cfg.activation = models::activation_kind::prelu;
    cfg.embedding_dim = emb ? 7 : 0;
    auto const ref = run_link_step(cfg);
    cfg.mode = minibatch_mode::cooperative;
    cfg.num_pes = 3;
    expect_same(run_link_step(cfg), ref);
  }
}

TEST(LinkProtocol, PesWithoutPairsAndPNotDividingB) {
  // B = 3 positives over 8 PEs: most PEs score nothing (cooperative) or get no slice
  // (independent) and still take part in every collective.
  for (bool emb : {false, true}) {
    auto cfg = link_cfg(minibatch_mode::independent, 1);
    cfg.batch_size = 3;
    cfg.embedding_dim = emb ? 3 : 0;
    auto const ref = run_link_step(cfg);
    for (auto mode : {minibatch_mode::independent, minibatch_mode::cooperative}) {
      cfg.mode = mode;
      cfg.num_pes = 8;
      expect_same(run_link_step(cfg), ref);
    }
  }
}

TEST(LinkProtocol, ExcludedTargetEdgesAreNeverSampledAndProtocolsAgree) {
  auto const& f = fixture();
  for (auto ex : {exclude_kind::self, exclude_kind::reverse}) {
    auto cfg = link_cfg(minibatch_mode::independent, 1);
    cfg.exclude = ex;
    cfg.fanouts = {-1, -1};  // every edge would be sampled: exclusion is the only filter
    trainer tr(f.ds, f.g, cfg);
    auto const order = tr.epoch_order(1);
    std::vector<vid_t> const batch(order.begin(), order.begin() + cfg.batch_size);
    std::vector<pe_trace> trace;
    step_options opt;
    opt.update = false;
    opt.trace = &trace;
    tr.step(batch, 5, opt);
    std::set<std::pair<vid_t, vid_t>> targets, reverses;
    for (vid_t i : batch) {
      auto const u = f.ds.link->train.src[static_cast<std::size_t>(i)];
      auto const v = f.ds.link->train.dst[static_cast<std::size_t>(i)];
      targets.emplace(u, v);
      reverses.emplace(v, u);
    }
    std::int64_t reverse_seen = 0;
    for (auto const& layer : trace.at(0).edges) {
      for (auto const& e : layer) {
        EXPECT_EQ(targets.count(e), 0u) << "target edge " << e.first << "->" << e.second;
        reverse_seen += static_cast<std::int64_t>(reverses.count(e));
      }
    }
    if (ex == exclude_kind::reverse) {
      EXPECT_EQ(reverse_seen, 0);
    } else {
      EXPECT_GT(reverse_seen, 0) << "self keeps the reverse edges of the undirected graph";
    }
    // The same exclusion on every PE: cooperative(3) == one PE.
    cfg.fanouts = {4, 3};
    auto const ref = run_link_step(cfg);
    cfg.mode = minibatch_mode::cooperative;
    cfg.num_pes = 3;
    expect_same(run_link_step(cfg), ref);
  }
}

TEST(LinkProtocol, MlpEncoderWithFanoutZeroSamplesNothingAndProtocolsAgree) {
  auto cfg = link_cfg(minibatch_mode::independent, 1);
  cfg.model = models::conv_kind::mlp;
  cfg.fanouts = {0, 0};
  auto const ref = run_link_step(cfg);
  EXPECT_EQ(ref.work.sampled_edges, 0);
  // One input row per distinct endpoint: sources are the destinations at every layer.
  std::set<vid_t> endpoints;
  for (auto const& [k, v] : ref.scores) {
    endpoints.insert(std::get<0>(k));
    endpoints.insert(std::get<1>(k));
  }
  EXPECT_EQ(ref.work.feature_rows, static_cast<std::int64_t>(endpoints.size()));
  for (auto mode : {minibatch_mode::independent, minibatch_mode::cooperative}) {
    cfg.mode = mode;
    cfg.num_pes = 3;
    expect_same(run_link_step(cfg), ref);
    cfg.compute_backend = backend::emulated;
    expect_same(run_link_step(cfg), ref);
    cfg.compute_backend = backend::host;
  }
}

TEST(LinkProtocol, EmulatedDeviceGivesTheHostStep) {
  for (auto mode : {minibatch_mode::independent, minibatch_mode::cooperative}) {
    auto cfg = link_cfg(mode, 2);
    cfg.embedding_dim = 5;
    auto const host = run_link_step(cfg);
    cfg.compute_backend = backend::emulated;
    expect_same(run_link_step(cfg), host);
  }
}

TEST(LinkProtocol, EmulatedDeviceTrainsBitForBitLikeTheHost) {
  // Three updating steps (the embedding all-gather and lazy Adam, the decoder's and the norm's
  // parameters) on the emulated device, sampling there or on the host: the host's weights and
  // tables, bit for bit.
  auto const& f = fixture();
  auto run = [&](backend b, bool sample_on_device, minibatch_mode mode) {
    auto cfg = link_cfg(mode, 2);
    cfg.compute_backend = b;
    cfg.sample_on_device = sample_on_device;
    cfg.embedding_dim = 5;
    cfg.decoder = models::decoder_kind::mlp;
    cfg.decoder_hidden = 4;
    cfg.layer_norm = true;
    cfg.activation = models::activation_kind::prelu;
    trainer tr(f.ds, f.g, cfg);
    auto const order = tr.epoch_order(1);
    for (std::uint32_t s = 0; s < 3; ++s) {
      std::vector<vid_t> const batch(order.begin() + s * 37, order.begin() + (s + 1) * 37);
      tr.step(batch, s, step_options{});
    }
    auto const& p = tr.host_model(1).params();
    std::vector<float> w(p.values().host().begin(), p.values().host().end());
    return std::make_pair(w, tr.embedding_values().values());
  };
  for (auto mode : {minibatch_mode::independent, minibatch_mode::cooperative}) {
    auto const host = run(backend::host, true, mode);
    for (bool on_device : {true, false}) {
      auto const emu = run(backend::emulated, on_device, mode);
      EXPECT_EQ(emu.first, host.first)
          << to_string(mode) << " weights, sample on device " << on_device;
      EXPECT_EQ(emu.second, host.second) << to_string(mode) << " embeddings";
    }
  }
}

TEST(LinkProtocol, CooperativeOwnerPartitionedTableTrainsLikeOnePe) {
  // Cooperative: each owner updates only its rows; the assembled table after three updating
  // steps is one PE's table (up to float summation order).
  auto const& f = fixture();
  auto run = [&](minibatch_mode mode, int P) {
    auto cfg = link_cfg(mode, P);
    cfg.embedding_dim = 4;
    trainer tr(f.ds, f.g, cfg);
    auto const order = tr.epoch_order(1);
    for (std::uint32_t s = 0; s < 3; ++s) {
      std::vector<vid_t> const batch(order.begin() + s * 37, order.begin() + (s + 1) * 37);
      tr.step(batch, s, step_options{});
    }
    return tr.embedding_values();
  };
  auto const one = run(minibatch_mode::independent, 1);
  auto const coop = run(minibatch_mode::cooperative, 3);
  ASSERT_EQ(one.values().size(), coop.values().size());
  std::int64_t moved = 0;
  auto const init = trainer(f.ds, f.g,
                            [] {
                              auto c = link_cfg(minibatch_mode::independent, 1);
                              c.embedding_dim = 4;
                              return c;
                            }())
                        .embedding_values();
  for (std::size_t i = 0; i < one.values().size(); ++i) {
    EXPECT_NEAR(coop.values()[i], one.values()[i], 1e-5f) << "element " << i;
    moved += one.values()[i] != init.values()[i] ? 1 : 0;
  }
  EXPECT_GT(moved, 0) << "no row moved: the comparison would be vacuous";
}

TEST(LinkProtocol, EmbeddingReplicasStayEqualAndOnlyTouchedRowsMove) {
  auto const& f = fixture();
  auto cfg = link_cfg(minibatch_mode::independent, 2);
  cfg.embedding_dim = 4;
  cfg.fanouts = {2};
  cfg.batch_size = 4;
  trainer tr(f.ds, f.g, cfg);
  matrix<float> const before = tr.embeddings(0)->to_host_matrix();
  auto const order = tr.epoch_order(1);
  std::vector<vid_t> const batch(order.begin(), order.begin() + 4);
  std::vector<pe_trace> trace;
  step_options opt;
  opt.trace = &trace;
  tr.step(batch, 0, opt);
  matrix<float> const a = tr.embeddings(0)->to_host_matrix();
  matrix<float> const b = tr.embeddings(1)->to_host_matrix();
  EXPECT_EQ(a.values(), b.values()) << "replicas' tables diverged";
  // Rows read by the step are the inputs of the sampled blocks: at most pairs' endpoints and
  // their sampled in-neighbours; every other row keeps its initial value.
  std::int64_t moved = 0;
  for (std::int64_t r = 0; r < a.rows(); ++r) {
    bool changed = false;
    for (std::int64_t c = 0; c < a.cols(); ++c) changed = changed || a(r, c) != before(r, c);
    moved += changed ? 1 : 0;
  }
  EXPECT_GT(moved, 0);
  EXPECT_LT(moved, a.rows() / 4) << "untouched rows moved";
}

TEST(LinkProtocol, LearnsAHomophilousGraph) {
  auto const& f = fixture();
  for (auto mode : {minibatch_mode::independent, minibatch_mode::cooperative}) {
    auto cfg = link_cfg(mode, 2);
    cfg.batch_size = 128;
    cfg.negatives = 1;
    cfg.lr = 0.01f;
    cfg.dropout = 0.0f;
    trainer tr(f.ds, f.g, cfg);
    EXPECT_EQ(tr.metric_name(), "roc_auc");
    epoch_report rep;
    for (int e = 1; e <= 8; ++e) rep = tr.run_epoch(e, e == 8);
    // Features reveal the class and 80% of edges join a class: far above 0.5 when it learns.
    EXPECT_GT(rep.test_metric, 0.75) << to_string(mode);
    bool has_ap = false;
    for (auto const& [k, v] : rep.test_metrics) has_ap = has_ap || k == "average_precision";
    EXPECT_TRUE(has_ap);
    EXPECT_EQ(rep.task, "link_prediction");
  }
}

TEST(LinkProtocol, ConfigurationErrorsNameTheProblem) {
  auto const& f = fixture();
  auto cfg = link_cfg(minibatch_mode::cooperative, 2);
  cfg.negatives = 0;
  EXPECT_THROW(trainer(f.ds, f.g, cfg), logic_error);
  dataset no_task = f.ds;
  no_task.link.reset();
  cfg.negatives = 1;
  try {
    trainer t(no_task, f.g, cfg);
    ADD_FAILURE() << "a dataset without a link task was accepted";
  } catch (const logic_error& e) {
    EXPECT_NE(std::string(e.what()).find("split-edges"), std::string::npos) << e.what();
  }
  // Positives-only evaluation on non-user-item data cannot be scored.
  dataset pos_only = f.ds;
  pos_only.link->test.labels.clear();
  EXPECT_THROW(trainer(pos_only, f.g, cfg), logic_error);
  // The linear head is node classification's.
  auto head = cfg;
  head.linear_head = true;
  EXPECT_THROW(trainer(f.ds, f.g, head), logic_error);
  // Nothing to evaluate: training runs, metrics are NaN.
  dataset no_eval = f.ds;
  no_eval.link->test = {};
  trainer t(no_eval, f.g, cfg);
  EXPECT_EQ(t.metric_name(), "none");
  auto const rep = t.run_epoch(1, true);
  EXPECT_TRUE(std::isnan(rep.test_metric));
}

}  // namespace
}  // namespace coopgnn
