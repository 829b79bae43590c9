// Link-prediction ranking metrics, average precision and top-K recommendation metrics against
// hand-worked examples and brute-force references written here (loops over all pairs / full sorts).
#include "models/link_metrics.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

#include "runtime/core/error.hpp"

namespace coopgnn::models {
namespace {

using ids = std::vector<std::int64_t>;
using floats = std::vector<float>;

// ---------------------------------------------------------------------------------------------
// Brute-force references.

/// O(M^2): every positive against every negative sharing its index value.
ranking_metrics brute_rank(const floats& scores, const ids& labels, const ids& indexes) {
  ranking_metrics m;
  std::vector<std::int64_t> seen;
  for (std::size_t i = 0; i < scores.size(); ++i) {
    if (std::find(seen.begin(), seen.end(), indexes[i]) == seen.end()) seen.push_back(indexes[i]);
    if (labels[i] != 1) continue;
    std::int64_t ge = 0;
    std::int64_t gt = 0;
    for (std::size_t j = 0; j < scores.size(); ++j) {
      if (indexes[j] != indexes[i] || labels[j] != 0) continue;
      if (scores[j] >= scores[i]) ++ge;
      if (scores[j] > scores[i]) ++gt;
    }
    double const pess = 1.0 + static_cast<double>(ge);
    double const opt = 1.0 + static_cast<double>(gt);
    m.mrr += 1.0 / pess;
    m.mrr_ogb += 1.0 / (0.5 * (pess + opt));
    m.hits1 += pess <= 1 ? 1 : 0;
    m.hits10 += pess <= 10 ? 1 : 0;
    m.hits50 += pess <= 50 ? 1 : 0;
    ++m.positives;
  }
  m.queries = static_cast<std::int64_t>(seen.size());
  auto const p = static_cast<double>(m.positives);
  m.mrr /= p;
  m.mrr_ogb /= p;
  m.hits1 /= p;
  m.hits10 /= p;
  m.hits50 /= p;
  return m;
}

void expect_near(const ranking_metrics& got, const ranking_metrics& want) {
  EXPECT_NEAR(got.mrr, want.mrr, 1e-12);
  EXPECT_NEAR(got.mrr_ogb, want.mrr_ogb, 1e-12);
  EXPECT_NEAR(got.hits1, want.hits1, 1e-12);
  EXPECT_NEAR(got.hits10, want.hits10, 1e-12);
  EXPECT_NEAR(got.hits50, want.hits50, 1e-12);
  EXPECT_EQ(got.positives, want.positives);
  EXPECT_EQ(got.queries, want.queries);
}

/// sklearn's definition by brute force: for every distinct score t (descending), count TP/FP over
/// all pairs with score >= t, then sum (R_n - R_{n-1}) P_n.
double brute_ap(const floats& scores, const ids& labels) {
  floats thresholds = scores;
  std::sort(thresholds.begin(), thresholds.end(), std::greater<>());
  thresholds.erase(std::unique(thresholds.begin(), thresholds.end()), thresholds.end());
  double const n_pos = static_cast<double>(std::count(labels.begin(), labels.end(), 1));
  double ap = 0.0;
  double prev_recall = 0.0;
  for (float const t : thresholds) {
    double tp = 0;
    double fp = 0;
    for (std::size_t i = 0; i < scores.size(); ++i) {
      if (scores[i] >= t) (labels[i] == 1 ? tp : fp) += 1;
    }
    double const recall = tp / n_pos;
    ap += (recall - prev_recall) * (tp / (tp + fp));
    prev_recall = recall;
  }
  return ap;
}

/// Full sort of the non-excluded items (score descending, id ascending), then the formulas.
topk_metrics brute_topk(const floats& scores, const ids& exclude, const ids& test, int k) {
  ids order;
  for (std::int64_t i = 0; i < static_cast<std::int64_t>(scores.size()); ++i) {
    if (std::find(exclude.begin(), exclude.end(), i) == exclude.end()) order.push_back(i);
  }
  std::sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) {
    return scores[a] > scores[b] || (scores[a] == scores[b] && a < b);
  });
  topk_metrics m;
  double hits = 0;
  for (std::size_t r = 0; r < order.size() && r < static_cast<std::size_t>(k); ++r) {
    if (std::find(test.begin(), test.end(), order[r]) != test.end()) {
      hits += 1;
      m.ndcg += 1.0 / std::log2(static_cast<double>(r) + 2.0);
    }
  }
  double idcg = 0;
  for (std::size_t r = 0; r < test.size() && r < static_cast<std::size_t>(k); ++r) {
    idcg += 1.0 / std::log2(static_cast<double>(r) + 2.0);
  }
  m.recall = hits / static_cast<double>(test.size());
  m.ndcg /= idcg;
  return m;
}

// ---------------------------------------------------------------------------------------------
// rank_queries

TEST(rank_queries, tie_with_a_negative) {
  // One query: positive 0.5 against negatives 0.9, 0.5, 0.1.
  // pessimistic rank = 1 + #{0.9, 0.5} = 3 -> mrr = 1/3;
  // optimistic rank = 1 + #{0.9} = 2 -> OGB rank 2.5 -> mrr_ogb = 0.4.
  floats const scores = {0.9f, 0.5f, 0.5f, 0.1f};
  ids const labels = {0, 1, 0, 0};
  ids const indexes = {4, 4, 4, 4};
  expect_near(rank_queries(scores, labels, indexes), {.mrr = 1.0 / 3.0,
                                                      .mrr_ogb = 0.4,
                                                      .hits1 = 0,
                                                      .hits10 = 1,
                                                      .hits50 = 1,
                                                      .positives = 1,
                                                      .queries = 1});
}

TEST(rank_queries, all_tied_and_strictly_first) {
  // Query 0: positive tied with both negatives: pess = 3, opt = 1, OGB rank 2.
  // Query 1: positive above its negative: rank 1 in both conventions.
  // mrr = (1/3 + 1) / 2 = 2/3; mrr_ogb = (1/2 + 1) / 2 = 3/4; hits1 = 1/2.
  floats const scores = {1.0f, 1.0f, 1.0f, 2.0f, -1.0f};
  ids const labels = {1, 0, 0, 1, 0};
  ids const indexes = {0, 0, 0, 1, 1};
  ranking_metrics const m = rank_queries(scores, labels, indexes);
  EXPECT_DOUBLE_EQ(m.mrr, 2.0 / 3.0);
  EXPECT_DOUBLE_EQ(m.mrr_ogb, 0.75);
  EXPECT_DOUBLE_EQ(m.hits1, 0.5);
  EXPECT_EQ(m.queries, 2);
}

TEST(rank_queries, shuffled_queries_with_several_positives) {
  // Query 7: negatives {3, 1}, positives 2 (rank 2) and 5 (rank 1).
  // Query -2: negatives {0, 4, 4}, positive 4 (pess 1 + 2 = 3, opt 1 + 0 = 1, OGB 2).
  // Query 100: negative {6}, positive 0 (rank 2).
  // Pairs interleaved, query ids neither sorted nor contiguous.
  floats const scores = {3, 4, 2, 0, 6, 5, 4, 1, 0, 4};
  ids const labels = {0, 0, 1, 0, 0, 1, 0, 0, 1, 1};
  ids const indexes = {7, -2, 7, -2, 100, 7, -2, 7, 100, -2};
  // mrr     = (1/2 + 1 + 1/3 + 1/2) / 4 = (7/3) / 4 = 7/12
  // mrr_ogb = (1/2 + 1 + 1/2 + 1/2) / 4 = 5/8
  // hits1 = 1/4 (only the 5 of query 7), hits10 = hits50 = 1
  ranking_metrics const m = rank_queries(scores, labels, indexes);
  expect_near(m, {.mrr = 7.0 / 12.0,
                  .mrr_ogb = 5.0 / 8.0,
                  .hits1 = 0.25,
                  .hits10 = 1,
                  .hits50 = 1,
                  .positives = 4,
                  .queries = 3});
  expect_near(m, brute_rank(scores, labels, indexes));
}

TEST(rank_queries, hits_boundaries) {
  // A positive scoring 0 in a query of n negatives scoring 1 has rank n + 1 (both conventions).
  // Queries with ranks 10, 11, 50, 51: hits10 = 1/4, hits50 = 3/4, hits1 = 0.
  floats scores;
  ids labels;
  ids indexes;
  std::int64_t q = 0;
  for (int const rank : {10, 11, 50, 51}) {
    scores.push_back(0.0f);
    labels.push_back(1);
    indexes.push_back(q);
    for (int j = 0; j + 1 < rank; ++j) {
      scores.push_back(1.0f);
      labels.push_back(0);
      indexes.push_back(q);
    }
    ++q;
  }
  ranking_metrics const m = rank_queries(scores, labels, indexes);
  EXPECT_DOUBLE_EQ(m.hits1, 0.0);
  EXPECT_DOUBLE_EQ(m.hits10, 0.25);
  EXPECT_DOUBLE_EQ(m.hits50, 0.75);
  double const mrr = (1.0 / 10 + 1.0 / 11 + 1.0 / 50 + 1.0 / 51) / 4;
  EXPECT_DOUBLE_EQ(m.mrr, mrr);
  EXPECT_DOUBLE_EQ(m.mrr_ogb, mrr);

  // Ties at the boundary: 9 negatives above and 1 tied -> pessimistic rank 11 (not a hit@10)
  // while optimistic is 10; hits follow the pessimistic rank.
  floats tied(11, 2.0f);
  tied[0] = 1.0f;  // the positive
  tied[1] = 1.0f;  // the tied negative
  ids tied_labels(11, 0);
  tied_labels[0] = 1;
  ids const one_query(11, 0);
  ranking_metrics const t = rank_queries(tied, tied_labels, one_query);
  EXPECT_DOUBLE_EQ(t.hits10, 0.0);
  EXPECT_DOUBLE_EQ(t.mrr, 1.0 / 11);
  EXPECT_DOUBLE_EQ(t.mrr_ogb, 1.0 / 10.5);
}

TEST(rank_queries, infinite_scores) {
  float const inf = std::numeric_limits<float>::infinity();
  floats const scores = {inf, inf, -inf};
  ids const labels = {1, 0, 0};
  ids const indexes = {0, 0, 0};
  ranking_metrics const m = rank_queries(scores, labels, indexes);
  EXPECT_DOUBLE_EQ(m.mrr, 0.5);            // tied with +inf: pessimistic rank 2
  EXPECT_DOUBLE_EQ(m.mrr_ogb, 2.0 / 3.0);  // OGB rank 1.5
}

TEST(rank_queries, random_integer_scores_match_brute_force) {
  std::mt19937 rng(20240611);
  for (int trial = 0; trial < 200; ++trial) {
    int const n_queries = 1 + static_cast<int>(rng() % 6);
    std::uniform_int_distribution<int> score(0, 4);  // many ties
    floats scores;
    ids labels;
    ids indexes;
    for (int q = 0; q < n_queries; ++q) {
      int const pos = 1 + static_cast<int>(rng() % 3);
      int const neg = 1 + static_cast<int>(rng() % 60);
      for (int j = 0; j < pos + neg; ++j) {
        scores.push_back(static_cast<float>(score(rng)));
        labels.push_back(j < pos ? 1 : 0);
        indexes.push_back(3 * q - 5);
      }
    }
    // Shuffle pairs so queries interleave.
    std::vector<std::size_t> perm(scores.size());
    std::iota(perm.begin(), perm.end(), std::size_t{0});
    std::shuffle(perm.begin(), perm.end(), rng);
    floats s2;
    ids l2;
    ids i2;
    for (std::size_t const p : perm) {
      s2.push_back(scores[p]);
      l2.push_back(labels[p]);
      i2.push_back(indexes[p]);
    }
    ranking_metrics const want = brute_rank(s2, l2, i2);
    ASSERT_GT(want.mrr, 0.0);
    ranking_metrics const got = rank_queries(s2, l2, i2);
    SCOPED_TRACE(trial);
    expect_near(got, want);
    EXPECT_EQ(got.queries, n_queries);
  }
}

TEST(rank_queries, validates) {
  floats const s = {1.0f, 0.0f};
  ids const l = {1, 0};
  ids const q = {0, 0};
  EXPECT_NO_THROW(rank_queries(s, l, q));
  EXPECT_THROW(rank_queries(floats{}, ids{}, ids{}), logic_error);             // M == 0
  EXPECT_THROW(rank_queries(floats{1.0f}, l, q), logic_error);                 // scores short
  EXPECT_THROW(rank_queries(s, ids{1}, q), logic_error);                       // labels short
  EXPECT_THROW(rank_queries(s, l, ids{0}), logic_error);                       // indexes short
  EXPECT_THROW(rank_queries(floats{std::nanf(""), 0.0f}, l, q), logic_error);  // NaN
  EXPECT_THROW(rank_queries(s, ids{2, 0}, q), logic_error);                    // label 2
  EXPECT_THROW(rank_queries(s, ids{1, -1}, q), logic_error);                   // label -1
  EXPECT_THROW(rank_queries(s, ids{1, 1}, q), logic_error);                    // no negative
  EXPECT_THROW(rank_queries(s, ids{0, 0}, q), logic_error);                    // no positive
  // Query 1 lacks a negative although query 0 is complete.
  EXPECT_THROW(rank_queries(floats{1, 0, 1}, ids{1, 0, 1}, ids{0, 0, 1}), logic_error);
  // Query 1 lacks a positive.
  EXPECT_THROW(rank_queries(floats{1, 0, 1}, ids{1, 0, 0}, ids{0, 0, 1}), logic_error);
}

// ---------------------------------------------------------------------------------------------
// average_precision

TEST(average_precision, sklearn_documentation_example) {
  // sklearn's docstring: y_true = [0, 0, 1, 1], y_score = [0.1, 0.4, 0.35, 0.8] -> 0.83.
  // Thresholds 0.8: TP 1 FP 0 (P 1, R 1/2); 0.4: TP 1 FP 1 (R unchanged);
  // 0.35: TP 2 FP 1 (P 2/3, R 1); 0.1: R unchanged. AP = 1/2 * 1 + 1/2 * 2/3 = 5/6.
  floats const s = {0.1f, 0.4f, 0.35f, 0.8f};
  ids const l = {0, 0, 1, 1};
  EXPECT_DOUBLE_EQ(average_precision(s, l), 5.0 / 6.0);
  EXPECT_NEAR(brute_ap(s, l), 5.0 / 6.0, 1e-15);  // the reference agrees with the hand value
}

TEST(average_precision, tie_across_classes_is_one_threshold) {
  // Scores 0.8 (pos), 0.8 (neg), 0.5 (pos), 0.3 (neg).
  // Threshold 0.8: TP 1 FP 1 (P 1/2, R 1/2); 0.5: TP 2 FP 1 (P 2/3, R 1); 0.3: R unchanged.
  // AP = 1/2 * 1/2 + 1/2 * 2/3 = 1/4 + 1/3 = 7/12 (ranking the tied positive first would give
  // 1/2 * 1 + 1/2 * 2/3 = 5/6).
  floats const s = {0.8f, 0.8f, 0.5f, 0.3f};
  ids const l = {1, 0, 1, 0};
  EXPECT_DOUBLE_EQ(average_precision(s, l), 7.0 / 12.0);

  // Scores 0.9 for (neg, pos, neg), then 0.2 (pos): threshold 0.9: TP 1 FP 2 (P 1/3, R 1/2);
  // 0.2: TP 2 FP 2 (P 1/2, R 1). AP = 1/2 * 1/3 + 1/2 * 1/2 = 5/12. A per-item sum in input
  // order would give 1/2 * 1/2 + 1/2 * 2/4 = 1/2.
  floats const s2 = {0.9f, 0.9f, 0.9f, 0.2f};
  ids const l2 = {0, 1, 0, 1};
  EXPECT_DOUBLE_EQ(average_precision(s2, l2), 5.0 / 12.0);

  // Every score equal, 2 positives of 5: one threshold, R = 1, P = 2/5, AP = 2/5. Per-item sums
  // disagree whatever the order inside the tie: positives last give (1/4 + 2/5) / 2 = 0.325,
  // positives first give 1.
  floats const flat(5, 3.0f);
  ids const l3 = {1, 0, 0, 1, 0};
  EXPECT_DOUBLE_EQ(average_precision(flat, l3), 0.4);
}

TEST(average_precision, perfect_and_reversed) {
  // Perfect: every positive above every negative -> P = 1 at every recall step.
  floats const s = {4, 3, 2, 1};
  EXPECT_DOUBLE_EQ(average_precision(s, ids{1, 1, 0, 0}), 1.0);
  // Reversed: thresholds 4, 3: TP 0; 2: TP 1 FP 2 (P 1/3, R 1/2); 1: TP 2 FP 2 (P 1/2, R 1).
  // AP = 1/2 * 1/3 + 1/2 * 1/2 = 5/12.
  EXPECT_DOUBLE_EQ(average_precision(s, ids{0, 0, 1, 1}), 5.0 / 12.0);
  // Only positives: precision 1 throughout.
  EXPECT_DOUBLE_EQ(average_precision(s, ids{1, 1, 1, 1}), 1.0);
  // A single positive at rank 3 of 5 (no ties): AP = 1/3.
  EXPECT_DOUBLE_EQ(average_precision(floats{5, 4, 3, 2, 1}, ids{0, 0, 1, 0, 0}), 1.0 / 3.0);
}

TEST(average_precision, random_integer_scores_match_brute_force) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    std::size_t const n = 1 + rng() % 40;
    floats s(n);
    ids l(n);
    for (std::size_t i = 0; i < n; ++i) {
      s[i] = static_cast<float>(rng() % 6);
      l[i] = static_cast<std::int64_t>(rng() % 2);
    }
    l[rng() % n] = 1;  // at least one positive
    SCOPED_TRACE(trial);
    EXPECT_NEAR(average_precision(s, l), brute_ap(s, l), 1e-12);
  }
}

TEST(average_precision, validates) {
  EXPECT_THROW(average_precision(floats{}, ids{}), logic_error);                      // nothing
  EXPECT_THROW(average_precision(floats{1, 2}, ids{0, 0}), logic_error);              // no positive
  EXPECT_THROW(average_precision(floats{1, 2}, ids{1}), logic_error);                 // sizes
  EXPECT_THROW(average_precision(floats{1, std::nanf("")}, ids{1, 0}), logic_error);  // NaN
  EXPECT_THROW(average_precision(floats{1, 2}, ids{1, 2}), logic_error);              // label 2
  EXPECT_THROW(average_precision(floats{1, 2}, ids{1, -1}), logic_error);             // label -1
}

// ---------------------------------------------------------------------------------------------
// user_topk

TEST(user_topk, ties_at_the_cut_go_to_the_lower_id) {
  // Item 5 scores highest but is excluded. Remaining order: 0 (0.9), 1, 2, 3 (all 0.5), 4.
  floats const s = {0.9f, 0.5f, 0.5f, 0.5f, 0.1f, 0.95f};
  ids const excl = {5};
  // k = 3 keeps {0, 1, 2}: item 3 loses the tie at the cut.
  topk_metrics m = user_topk(s, excl, ids{3}, 3);
  EXPECT_DOUBLE_EQ(m.recall, 0.0);
  EXPECT_DOUBLE_EQ(m.ndcg, 0.0);
  // k = 4: item 3 at position 3 -> DCG = 1/log2(5), IDCG = 1/log2(2) = 1.
  m = user_topk(s, excl, ids{3}, 4);
  EXPECT_DOUBLE_EQ(m.recall, 1.0);
  EXPECT_DOUBLE_EQ(m.ndcg, 1.0 / std::log2(5.0));
  // Item 2 at position 2 -> DCG = 1/log2(4) = 1/2.
  m = user_topk(s, excl, ids{2}, 3);
  EXPECT_DOUBLE_EQ(m.recall, 1.0);
  EXPECT_DOUBLE_EQ(m.ndcg, 0.5);
}

TEST(user_topk, excluded_items_that_score_highest) {
  // Items 0 and 1 (training items) score highest; without exclusion the test item 2 would be
  // third and miss k = 1.
  floats const s = {10, 9, 8, 7};
  topk_metrics const m = user_topk(s, ids{1, 0, 1}, ids{2}, 1);  // duplicate exclude allowed
  EXPECT_DOUBLE_EQ(m.recall, 1.0);
  EXPECT_DOUBLE_EQ(m.ndcg, 1.0);
  topk_metrics const none = user_topk(s, ids{}, ids{2}, 1);
  EXPECT_DOUBLE_EQ(none.recall, 0.0);
  EXPECT_DOUBLE_EQ(none.ndcg, 0.0);
}

TEST(user_topk, more_test_items_than_k) {
  // Order 0, 1, 2, 3, 4; test {0, 2, 3, 4}; k = 2: top {0, 1}, one hit at position 0.
  // recall = 1/4; DCG = 1; IDCG over min(2, 4) = 2 hits = 1 + 1/log2(3).
  floats const s = {5, 4, 3, 2, 1};
  topk_metrics const m = user_topk(s, ids{}, ids{4, 0, 3, 2}, 2);
  EXPECT_DOUBLE_EQ(m.recall, 0.25);
  EXPECT_DOUBLE_EQ(m.ndcg, 1.0 / (1.0 + 1.0 / std::log2(3.0)));
  // Fewer test items than k: IDCG over |test| hits. Test {1, 3}, k = 4: hits at positions 1, 3:
  // DCG = 1/log2(3) + 1/log2(5); IDCG = 1 + 1/log2(3).
  topk_metrics const f = user_topk(s, ids{}, ids{1, 3}, 4);
  EXPECT_DOUBLE_EQ(f.recall, 1.0);
  EXPECT_DOUBLE_EQ(f.ndcg,
                   (1.0 / std::log2(3.0) + 1.0 / std::log2(5.0)) / (1.0 + 1.0 / std::log2(3.0)));
}

TEST(user_topk, k_above_the_candidates) {
  // Two candidates left after excluding 0, k = 20: every candidate ranked; test item 2 is second.
  floats const s = {3, 2, 1};
  topk_metrics const m = user_topk(s, ids{0}, ids{2}, 20);
  EXPECT_DOUBLE_EQ(m.recall, 1.0);
  EXPECT_DOUBLE_EQ(m.ndcg, 1.0 / std::log2(3.0));
}

TEST(user_topk, random_scores_with_ties_match_a_full_sort) {
  std::mt19937 rng(99);
  for (int trial = 0; trial < 300; ++trial) {
    std::size_t const n = 1 + rng() % 50;
    floats s(n);
    for (float& x : s) x = static_cast<float>(rng() % 5);
    ids items(n);
    std::iota(items.begin(), items.end(), std::int64_t{0});
    std::shuffle(items.begin(), items.end(), rng);
    std::size_t const n_test = 1 + rng() % n;
    std::size_t const n_excl = rng() % (n - n_test + 1);
    ids const test(items.begin(), items.begin() + static_cast<std::ptrdiff_t>(n_test));
    ids const excl(items.begin() + static_cast<std::ptrdiff_t>(n_test),
                   items.begin() + static_cast<std::ptrdiff_t>(n_test + n_excl));
    int const k = 1 + static_cast<int>(rng() % 25);
    topk_metrics const want = brute_topk(s, excl, test, k);
    topk_metrics const got = user_topk(s, excl, test, k);
    SCOPED_TRACE(trial);
    EXPECT_NEAR(got.recall, want.recall, 1e-12);
    EXPECT_NEAR(got.ndcg, want.ndcg, 1e-12);
  }
}

TEST(user_topk, validates) {
  floats const s = {1, 2, 3};
  EXPECT_NO_THROW(user_topk(s, ids{0}, ids{1}, 1));
  EXPECT_THROW(user_topk(s, ids{0}, ids{1}, 0), logic_error);        // k < 1
  EXPECT_THROW(user_topk(s, ids{0}, ids{1}, -3), logic_error);       // k < 1
  EXPECT_THROW(user_topk(s, ids{0}, ids{}, 1), logic_error);         // no test item
  EXPECT_THROW(user_topk(s, ids{0}, ids{1, 1}, 1), logic_error);     // duplicate test item
  EXPECT_THROW(user_topk(s, ids{1}, ids{1}, 1), logic_error);        // test item excluded
  EXPECT_THROW(user_topk(s, ids{3}, ids{1}, 1), logic_error);        // exclude out of range
  EXPECT_THROW(user_topk(s, ids{-1}, ids{1}, 1), logic_error);       // exclude negative
  EXPECT_THROW(user_topk(s, ids{0}, ids{3}, 1), logic_error);        // test out of range
  EXPECT_THROW(user_topk(s, ids{0}, ids{-1}, 1), logic_error);       // test negative
  EXPECT_THROW(user_topk(floats{}, ids{}, ids{0}, 1), logic_error);  // no items at all
  EXPECT_THROW(user_topk(floats{1, std::nanf("")}, ids{}, ids{0}, 1), logic_error);  // NaN
}

}  // namespace
}  // namespace coopgnn::models
