// Relational link prediction on a heterogeneous graph (docs/typed-sampling.md: R-GCN + DistMult,
// the TMA paper's e-commerce setup): typed negatives stay inside the destination type of the pair's
// relation and are keyed as untyped ones, cooperative(P) == single PE for P = 1..4, --exclude
// removes exactly the positives' edges of their relation and of its reverse relation, the
// emulated device gives the host step, and the model learns a typed task far above chance.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <utility>

#include "runtime/core/error.hpp"
#include "pipeline/checkpoint.hpp"
#include "pipeline/link.hpp"
#include "pipeline/trainer.hpp"
#include "tests/common/files.hpp"
#include "tests/common/link_steps.hpp"

namespace coopgnn {
namespace {

using test::expect_same;
using test::link_step;
using test::typed_link_cfg;

const test::link_fixture& fixture() { return test::typed_link_data(); }
link_step run_step(const train_config& cfg) { return test::run_link_step(cfg, fixture()); }

// The destination type of the fixture's relations, written out (paper [0, 300), author
// [300, 550), subject [550, 558)), not taken from the code under test.
std::pair<vid_t, vid_t> tail_type(std::int32_t r) {
  switch (r) {
    case 1:
      return {300, 550};
    case 3:
      return {550, 558};
    default:
      return {0, 300};
  }
}

TEST(TypedLinkBatch, NegativesStayInTheDestinationTypeAndKeepTheirRelation) {
  auto const& f = fixture();
  const link_task& t = *f.ds.link;
  ASSERT_GT(t.train.size(), 200);
  std::set<std::int32_t> rels(t.train.relation.begin(), t.train.relation.end());
  EXPECT_EQ(rels, (std::set<std::int32_t>{1, 4}));
  std::vector<vid_t> all(static_cast<std::size_t>(t.train.size()));
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = static_cast<vid_t>(i);
  int const k = 4;
  auto const lb = make_link_batch(t, all, k, 23, 3, f.ds.num_nodes, &*f.ds.hetero);
  ASSERT_EQ(lb.relations.size(), all.size() * (1 + k));
  ASSERT_EQ(lb.pairs.size(), lb.relations.size());
  std::set<std::int32_t> seen_rel;
  for (std::size_t p = 0; p < all.size(); ++p) {
    std::int32_t const r = t.train.relation[p];
    auto const [lo, hi] = tail_type(r);
    for (int j = 0; j <= k; ++j) {
      std::size_t const i = p * (1 + k) + static_cast<std::size_t>(j);
      EXPECT_EQ(lb.relations[i], r) << "pair " << i;
      EXPECT_EQ(lb.pairs[i].first, t.train.src[p]);
      EXPECT_GE(lb.pairs[i].second, lo) << "pair " << i << " of relation " << r;
      EXPECT_LT(lb.pairs[i].second, hi) << "pair " << i << " of relation " << r;
      if (j > 0) {
        EXPECT_NE(lb.pairs[i].second, lb.pairs[i].first);
      }
      EXPECT_EQ(lb.labels[i], j == 0 ? 1.0f : 0.0f);
      seen_rel.insert(r);
    }
  }
  EXPECT_EQ(seen_rel.size(), 2u);
  // Keyed by (positive, j, batch): a PE holding only some positives draws the same negatives.
  std::vector<vid_t> const some = {all[7], all[150], all[3]};
  auto const part = make_link_batch(t, some, k, 23, 3, f.ds.num_nodes, &*f.ds.hetero);
  for (std::size_t q = 0; q < some.size(); ++q) {
    for (int j = 0; j <= k; ++j) {
      auto const a = q * (1 + k) + static_cast<std::size_t>(j);
      auto const b = static_cast<std::size_t>(some[q]) * (1 + k) + static_cast<std::size_t>(j);
      EXPECT_EQ(part.pairs[a], lb.pairs[b]);
      EXPECT_EQ(part.relations[a], lb.relations[b]);
    }
  }
  // Uniform within the type: over many draws the tails of relation 1 cover most authors.
  std::set<vid_t> authors;
  for (std::size_t i = 0; i < lb.pairs.size(); ++i) {
    if (lb.relations[i] == 1 && lb.labels[i] == 0.0f) authors.insert(lb.pairs[i].second);
  }
  EXPECT_GT(authors.size(), 150u);
  // A typed task without its schema is refused.
  EXPECT_THROW(make_link_batch(t, some, k, 23, 3, f.ds.num_nodes), logic_error);
}

class TypedLinkProtocolTest : public ::testing::TestWithParam<int> {};

TEST_P(TypedLinkProtocolTest, CooperativeAndIndependentEqualSinglePe) {
  int const P = GetParam();
  auto const ref = run_step(typed_link_cfg(minibatch_mode::independent, 1));
  EXPECT_EQ(ref.pairs, 41 * 3);
  auto const coop = run_step(typed_link_cfg(minibatch_mode::cooperative, P));
  expect_same(coop, ref);
  auto const ind = run_step(typed_link_cfg(minibatch_mode::independent, P));
  expect_same(ind, ref);
  EXPECT_GE(ind.work.sampled_edges, coop.work.sampled_edges);
  EXPECT_GE(ind.work.feature_rows, coop.work.feature_rows);
  EXPECT_EQ(coop.work.feature_rows, ref.work.feature_rows);
  EXPECT_EQ(coop.work.edges_per_relation, ref.work.edges_per_relation);
  EXPECT_EQ(coop.work.rows_per_type, ref.work.rows_per_type);
}

INSTANTIATE_TEST_SUITE_P(Pes, TypedLinkProtocolTest, ::testing::Values(1, 2, 3, 4));

TEST(TypedLinkProtocol, DotDecoderOnATypedGraphAndLaborAgreeToo) {
  auto cfg = typed_link_cfg(minibatch_mode::independent, 1);
  cfg.decoder = models::decoder_kind::dot;
  cfg.sampler = sampler_kind::labor;
  auto const ref = run_step(cfg);
  cfg.mode = minibatch_mode::cooperative;
  cfg.num_pes = 3;
  expect_same(run_step(cfg), ref);
}

TEST(TypedLinkProtocol, ExcludeRemovesThePositivesAndTheirReverseRelationsEdges) {
  auto const& f = fixture();
  for (auto ex : {exclude_kind::self, exclude_kind::reverse}) {
    SCOPED_TRACE(to_string(ex));
    auto cfg = typed_link_cfg(minibatch_mode::independent, 1);
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
    // In this graph an ordered pair (u, v) has one relation: paper -> author is relation 1,
    // author -> paper 0, paper -> paper 4, so the traced (src, dst) pairs identify the edges.
    std::set<std::pair<vid_t, vid_t>> targets, reverses;
    for (vid_t i : batch) {
      auto const u = f.ds.link->train.src[static_cast<std::size_t>(i)];
      auto const v = f.ds.link->train.dst[static_cast<std::size_t>(i)];
      targets.emplace(u, v);
      reverses.emplace(v, u);
    }
    std::int64_t target_seen = 0, reverse_seen = 0, total = 0;
    for (auto const& layer : trace.at(0).edges) {
      for (auto const& e : layer) {
        target_seen += static_cast<std::int64_t>(targets.count(e));
        reverse_seen += static_cast<std::int64_t>(reverses.count(e) * (targets.count(e) == 0));
        ++total;
      }
    }
    EXPECT_GT(total, 0);
    EXPECT_EQ(target_seen, 0) << "a positive's own edge was sampled";
    if (ex == exclude_kind::reverse) {
      EXPECT_EQ(reverse_seen, 0) << "a positive's reverse-relation edge was sampled";
    } else {
      EXPECT_GT(reverse_seen, 0) << "self keeps the reverse relation's edges";
    }
    // Without exclusion the same batch samples the targets (the check above can fail).
    auto none = cfg;
    none.exclude = exclude_kind::none;
    trainer tn(f.ds, f.g, none);
    std::vector<pe_trace> tt;
    step_options opt_none = opt;
    opt_none.trace = &tt;
    tn.step(batch, 5, opt_none);
    std::int64_t kept = 0;
    for (auto const& layer : tt.at(0).edges) {
      for (auto const& e : layer) kept += static_cast<std::int64_t>(targets.count(e));
    }
    EXPECT_GT(kept, 0);
    // The same exclusion on every PE: cooperative(3) == one PE.
    cfg.fanouts = {3, 2};
    auto const ref = run_step(cfg);
    cfg.mode = minibatch_mode::cooperative;
    cfg.num_pes = 3;
    expect_same(run_step(cfg), ref);
  }
}

TEST(TypedLinkProtocol, EmulatedDeviceGivesTheHostStep) {
  for (auto mode : {minibatch_mode::independent, minibatch_mode::cooperative}) {
    auto cfg = typed_link_cfg(mode, 2);
    cfg.exclude = exclude_kind::reverse;
    auto const host = run_step(cfg);
    cfg.compute_backend = backend::emulated;
    expect_same(run_step(cfg), host);
  }
}

TEST(TypedLinkTrainer, LearnsATypedTaskFarAboveChanceInBothProtocols) {
  // Citations only (relation 4): homophilous, and the paper features reveal the class.
  static const test::link_fixture f = test::make_typed_link_fixture({4}, 20);
  for (auto mode : {minibatch_mode::independent, minibatch_mode::cooperative}) {
    auto cfg = typed_link_cfg(mode, 2);
    cfg.batch_size = 64;
    cfg.negatives = 2;
    cfg.hidden = 16;
    cfg.out_dim = 16;
    cfg.fanouts = {-1, -1};
    cfg.lr = 0.01f;
    cfg.dropout = 0.0f;
    cfg.exclude = exclude_kind::reverse;
    trainer tr(f.ds, f.g, cfg);
    EXPECT_EQ(tr.metric_name(), "mrr");
    epoch_report rep;
    for (int e = 1; e <= 12; ++e) rep = tr.run_epoch(e, e == 12);
    // 20 negatives per query: a random scorer's MRR is about H(21) / 21 = 0.17, its AUC 0.5.
    // The class is all the graph reveals (a citation joins a class with probability 0.8 + 0.2 /
    // 4 = 0.85, a uniform negative with 0.25): a perfect class detector scores AUC about
    // 0.85 * 0.75 + 0.5 (0.85 * 0.25 + 0.15 * 0.75) = 0.80, the ceiling here.
    double auc = 0;
    for (auto const& [k, v] : rep.test_metrics) {
      if (k == "roc_auc") auc = v;
    }
    EXPECT_GT(rep.test_metric, 0.25) << to_string(mode);
    EXPECT_GT(auc, 0.68) << to_string(mode);
  }
}

TEST(TypedLinkTrainer, RefusesWhatItCannotScore) {
  auto const& f = fixture();
  auto cfg = typed_link_cfg(minibatch_mode::cooperative, 2);
  cfg.model = models::conv_kind::sage;
  EXPECT_THROW(trainer(f.ds, f.g, cfg), logic_error);  // typed graphs take --model rgcn
  // Nor on the relations-merged untyped view, which node classification accepts: the pairs'
  // relations would be lost.
  csc_graph const merged = build_csc(f.ds.num_nodes, f.ds.src, f.ds.dst);
  try {
    trainer const t(f.ds, merged, cfg);
    ADD_FAILURE() << "link prediction on the merged view was accepted";
  } catch (const logic_error& e) {
    EXPECT_NE(std::string(e.what()).find("link prediction on a heterogeneous graph takes "
                                         "--model rgcn"),
              std::string::npos)
        << e.what();
  }
  // A relation whose reverse is ambiguous makes --exclude reverse fail before training.
  dataset twice = f.ds;
  twice.hetero->edge_types.push_back("author:reviews:paper");
  cfg = typed_link_cfg(minibatch_mode::cooperative, 2);
  cfg.exclude = exclude_kind::reverse;
  csc_graph const g2 = build_csc(twice.num_nodes, twice.src, twice.dst, twice.hetero->edge_type,
                                 static_cast<std::int32_t>(twice.hetero->edge_types.size()));
  EXPECT_THROW(trainer(twice, g2, cfg), logic_error);
  cfg.exclude = exclude_kind::self;
  EXPECT_NO_THROW(trainer(twice, g2, cfg));
  // Typed pairs without their relations.
  dataset untyped_pairs = f.ds;
  untyped_pairs.link->test.relation.clear();
  EXPECT_THROW(trainer(untyped_pairs, f.g, cfg), logic_error);
}

TEST(TypedLinkTrainer, SavedModelKeepsTheDecoderAndItsRelationWeights) {
  auto const& f = fixture();
  auto cfg = typed_link_cfg(minibatch_mode::independent, 1);
  trainer tr(f.ds, f.g, cfg);
  (void)tr.run_epoch(1, false);
  saved_model m;
  m.config = model_config_for(f.ds, cfg);
  EXPECT_EQ(m.config.decoder, models::decoder_kind::distmult);
  EXPECT_EQ(m.config.decoder_relations, 5);
  m.params = tr.parameters();
  m.embeddings = tr.embedding_values();
  test::temp_dir dir;
  write_saved_model(dir.path() / "model", m);
  auto const back = read_saved_model(dir.path() / "model");
  EXPECT_EQ(back.config.decoder, models::decoder_kind::distmult);
  EXPECT_EQ(back.config.decoder_relations, 5);
  EXPECT_EQ(back.params, m.params);
  {
    // A corrupt relation count is an io_error naming the manifest, never an allocation.
    test::temp_dir bad;
    write_saved_model(bad.path() / "model", m);
    auto const man = bad.path() / "model" / "manifest.json";
    std::string text = test::read_text(man);
    auto const at = text.find("\"decoder_relations\"");
    ASSERT_NE(at, std::string::npos);
    auto const digit = text.find('5', at);
    ASSERT_NE(digit, std::string::npos);
    text[digit] = '0';
    test::write_text(man, text);
    EXPECT_THROW((void)read_saved_model(bad.path() / "model"), io_error);
  }
  auto const restored = build_saved_model(back, exec_context(backend::host), "model");
  ASSERT_NE(restored->decoder(), nullptr);
  EXPECT_EQ(restored->decoder()->num_relations(), 5);
  // The trained relation diagonals moved off their all-ones start.
  bool moved = false;
  for (std::size_t i = 0; i < restored->params().count(); ++i) {
    if (restored->params().info(i).name.starts_with("distmult")) {
      for (float v : restored->params().value(i).flat().host()) moved = moved || v != 1.0f;
    }
  }
  EXPECT_TRUE(moved);
  // The restored model evaluates as the trainer does.
  auto const ev = evaluate_link_model(*restored, f.g, *back.embeddings, *f.ds.link, 20, 1);
  auto const ev0 = tr.evaluate_link(0);
  EXPECT_EQ(ev.second.metric_name, "mrr");
  EXPECT_EQ(ev.second.value, ev0.second.value);
}

}  // namespace
}  // namespace coopgnn
