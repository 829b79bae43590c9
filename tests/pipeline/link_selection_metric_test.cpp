// The link-prediction selection metric (docs/usage.md "Link prediction"): ROC-AUC when every
// query holds one positive and one negative, MRR with more negatives; every metric stays in
// `all` under its name. Scores are dot products of a one-column embedding, so every expected
// value below is worked out by hand.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "models/link_layers.hpp"
#include "pipeline/link.hpp"

namespace coopgnn {
namespace {

/// z = [1, 1, 0.5, -1]: s(u, v) = z_u z_v.
matrix<float> embeddings() { return matrix<float>(4, 1, {1.0f, 1.0f, 0.5f, -1.0f}); }

std::map<std::string, double> by_name(const link_eval& e) { return {e.all.begin(), e.all.end()}; }

link_eval evaluate(const pair_set& set) {
  models::parameter_set<float> params;
  models::link_decoder<float> const dot(models::decoder_kind::dot, 1, 1, 0, params);
  return evaluate_pairs(dot, embeddings(), set);
}

/// Three queries, one negative each: scores (pos, neg) = (1, -1), (0.5, -0.5), (-1, -0.5).
pair_set one_negative() {
  pair_set s;
  s.src = {0, 0, 2, 2, 3, 3};
  s.dst = {1, 3, 1, 3, 0, 2};
  s.labels = {1, 0, 1, 0, 1, 0};
  s.indexes = {0, 0, 1, 1, 2, 2};
  return s;
}

TEST(LinkSelectionMetric, OneNegativePerPositiveSelectsByRocAuc) {
  pair_set const set = one_negative();
  EXPECT_TRUE(one_negative_per_query(set));
  link_eval const e = evaluate(set);
  // Positives {1, 0.5, -1} against negatives {-1, -0.5, -0.5}: 3 + 3 + 0.5 (a tie) of 9.
  EXPECT_EQ(e.metric_name, "roc_auc");
  EXPECT_NEAR(e.value, 6.5 / 9.0, 1e-12);
  auto const all = by_name(e);
  EXPECT_NEAR(all.at("roc_auc"), 6.5 / 9.0, 1e-12);
  // MRR is still reported: ranks 1, 1, 2.
  EXPECT_NEAR(all.at("mrr"), (1.0 + 1.0 + 0.5) / 3.0, 1e-12);
  EXPECT_TRUE(all.count("average_precision") == 1 && all.count("hits@10") == 1);
  link_task t;
  t.name = "t";
  t.valid = set;
  EXPECT_EQ(link_metric_name(t, set, 20), "roc_auc");
  EXPECT_EQ(link_task_metric_name(t, 20), "roc_auc");
}

TEST(LinkSelectionMetric, TwoNegativesPerPositiveSelectsByMrr) {
  // Each query gains a second negative: scores 0.5, 0.5 (a tie with the positive) and -1 (a
  // tie): ranks 1, 2, 3.
  pair_set s;
  s.src = {0, 0, 0, 2, 2, 2, 3, 3, 3};
  s.dst = {1, 3, 2, 1, 3, 0, 0, 2, 1};
  s.labels = {1, 0, 0, 1, 0, 0, 1, 0, 0};
  s.indexes = {0, 0, 0, 1, 1, 1, 2, 2, 2};
  EXPECT_FALSE(one_negative_per_query(s));
  link_eval const e = evaluate(s);
  EXPECT_EQ(e.metric_name, "mrr");
  EXPECT_NEAR(e.value, (1.0 + 0.5 + 1.0 / 3.0) / 3.0, 1e-12);
  EXPECT_EQ(by_name(e).count("roc_auc"), 1U);
  link_task t;
  t.name = "t";
  EXPECT_EQ(link_metric_name(t, s, 20), "mrr");
}

TEST(LinkSelectionMetric, OneNegativeMeansOnePositiveAndOneNegativePerQuery) {
  pair_set s = one_negative();
  s.indexes = {0, 0, 0, 0, 1, 1};  // query 0: two positives and two negatives
  EXPECT_FALSE(one_negative_per_query(s));
  EXPECT_EQ(evaluate(s).metric_name, "mrr");
  pair_set none = one_negative();
  none.indexes.clear();  // labelled pairs without queries: ROC-AUC as before
  EXPECT_FALSE(one_negative_per_query(none));
  EXPECT_EQ(evaluate(none).metric_name, "roc_auc");
}

}  // namespace
}  // namespace coopgnn
