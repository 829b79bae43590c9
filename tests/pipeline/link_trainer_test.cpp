// Link prediction in both protocols (issue 11; DESIGN.md sections 7 and 8): keyed negatives,
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
#include "runtime/pipeline/link.hpp"
#include "runtime/pipeline/trainer.hpp"
#include "tests/common/graphs.hpp"

namespace coopgnn {
namespace {

/// A link-prediction dataset on test::synthetic_dataset (homophilous, class-revealing
/// features): every 8th undirected edge {u, v} (u < v, in id order) is held out for test with
/// one uniform non-edge negative (u, w) each, both directions removed from the graph; the other
/// undirected edges are the training positives (u < v) and stay in the graph in both directions.
struct link_fixture {
  dataset ds;
  csc_graph g;
};

link_fixture make_link_fixture(vid_t n, std::uint64_t seed) {
  link_fixture f;
  f.ds = test::synthetic_dataset(n, 4, 12, 10, seed);
  std::set<std::pair<vid_t, vid_t>> edges;
  for (std::int64_t e = 0; e < f.ds.num_edges(); ++e) {
    edges.emplace(f.ds.src[static_cast<std::size_t>(e)], f.ds.dst[static_cast<std::size_t>(e)]);
  }
  link_task t;
  t.name = "link";
  std::vector<vid_t> src, dst;
  std::int64_t k = 0;
  auto const st = rng::make_stream(seed, rng::purpose::split, 99);
  for (auto const& [u, v] : edges) {
    if (u >= v) continue;
    if (k++ % 8 == 0) {
      t.test.src.push_back(u);
      t.test.dst.push_back(v);
      t.test.labels.push_back(1);
      for (std::uint32_t a = 0;; ++a) {
        auto const w4 = rng::draw4(st, static_cast<std::uint64_t>(k), a, 0);
        auto const w = static_cast<vid_t>(w4[0] % static_cast<std::uint32_t>(n));
        if (w != u && edges.count({u, w}) == 0) {
          t.test.src.push_back(u);
          t.test.dst.push_back(w);
          t.test.labels.push_back(0);
          break;
        }
      }
      continue;
    }
    t.train.src.push_back(u);
    t.train.dst.push_back(v);
    src.insert(src.end(), {u, v});
    dst.insert(dst.end(), {v, u});
  }
  f.ds.src = std::move(src);
  f.ds.dst = std::move(dst);
  f.ds.link = std::move(t);
  f.g = build_csc(f.ds.num_nodes, f.ds.src, f.ds.dst);
  return f;
}

const link_fixture& fixture() {
  static const link_fixture f = make_link_fixture(600, 5);
  return f;
}

train_config link_cfg(minibatch_mode mode, int P) {
  train_config c;
  c.task = task_kind::link_prediction;
  c.mode = mode;
  c.num_pes = P;
  c.hidden = 8;
  c.out_dim = 6;
  c.fanouts = {4, 3};
  c.batch_size = 37;
  c.negatives = 2;
  c.dropout = 0.2f;  // keyed by vertex: the same on every PE
  c.seed = 13;
  return c;
}

/// Every PE's pairs of one step merged: the scores of each (u, v, label), sorted (a pair may
/// occur more than once), replica 0's gradients, the summed work and the loss.
struct link_step {
  std::map<std::tuple<vid_t, vid_t, float>, std::vector<float>> scores;
  std::vector<float> grads;
  work_counters work;
  double loss = 0;
  std::int64_t pairs = 0;
};

link_step run_link_step(const train_config& cfg, const link_fixture& f = fixture()) {
  trainer tr(f.ds, f.g, cfg);
  auto const order = tr.epoch_order(1);
  std::vector<vid_t> const batch(order.begin(), order.begin() + cfg.batch_size);
  std::vector<pe_trace> trace;
  step_options opt;
  opt.update = false;
  opt.trace = &trace;
  opt.capture_edges = false;
  tr.step(batch, 5, opt);
  link_step out;
  out.grads = trace.at(0).grads;
  for (auto const& t : trace) {
    EXPECT_EQ(t.grads, out.grads) << "replicas' all-reduced gradients differ";
    EXPECT_EQ(static_cast<std::int64_t>(t.pairs.size()), t.logits.rows());
    for (std::size_t i = 0; i < t.pairs.size(); ++i) {
      out.scores[{t.pairs[i].first, t.pairs[i].second, t.pair_labels[i]}].push_back(
          t.logits(static_cast<std::int64_t>(i), 0));
    }
    out.pairs += static_cast<std::int64_t>(t.pairs.size());
    out.work += t.work;
    out.loss += t.loss;
  }
  for (auto& [k, v] : out.scores) std::sort(v.begin(), v.end());
  return out;
}

void expect_same(const link_step& a, const link_step& ref) {
  EXPECT_EQ(a.pairs, ref.pairs);
  ASSERT_EQ(a.scores.size(), ref.scores.size());
  for (auto const& [k, v] : ref.scores) {
    auto const it = a.scores.find(k);
    ASSERT_NE(it, a.scores.end()) << "pair " << std::get<0>(k) << "->" << std::get<1>(k)
                                  << " not scored";
    ASSERT_EQ(it->second.size(), v.size());
    for (std::size_t i = 0; i < v.size(); ++i) EXPECT_NEAR(it->second[i], v[i], 1e-5f);
  }
  ASSERT_EQ(a.grads.size(), ref.grads.size());
  float scale = 0;
  for (float g : ref.grads) scale = std::max(scale, std::abs(g));
  ASSERT_GT(scale, 0.0f) << "reference gradient is all zeros";
  for (std::size_t i = 0; i < ref.grads.size(); ++i) {
    EXPECT_NEAR(a.grads[i], ref.grads[i], 1e-4f * scale) << "gradient element " << i;
  }
  EXPECT_NEAR(a.loss, ref.loss, 1e-5 * std::max(1.0, std::abs(ref.loss)));
}

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
    if (positive) EXPECT_EQ(b.pairs[i].second, f.ds.link->train.dst[p]);
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

TEST(LinkProtocol, EmulatedDeviceGivesTheHostStep) {
  for (auto mode : {minibatch_mode::independent, minibatch_mode::cooperative}) {
    auto cfg = link_cfg(mode, 2);
    cfg.embedding_dim = 5;
    auto const host = run_link_step(cfg);
    cfg.compute_backend = backend::emulated;
    expect_same(run_link_step(cfg), host);
  }
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
}

}  // namespace
}  // namespace coopgnn
