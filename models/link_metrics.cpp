#include "models/link_metrics.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <numeric>
#include <vector>

#include "runtime/core/error.hpp"

namespace coopgnn::models {

namespace {

/// Checks that scores and labels pair up, every label is 0/1 and no score is NaN.
void check_scored_labels(const char* fn, std::span<const float> scores,
                         std::span<const std::int64_t> labels) {
  COOPGNN_EXPECTS(scores.size() == labels.size(), "{}: {} scores for {} labels", fn, scores.size(),
                  labels.size());
  for (std::size_t i = 0; i < labels.size(); ++i) {
    COOPGNN_EXPECTS(labels[i] == 0 || labels[i] == 1, "{}: label {} is {}, expected 0 or 1", fn, i,
                    labels[i]);
    COOPGNN_EXPECTS(!std::isnan(scores[i]), "{}: score {} is NaN", fn, i);
  }
}

}  // namespace

ranking_metrics rank_queries(std::span<const float> scores, std::span<const std::int64_t> labels,
                             std::span<const std::int64_t> indexes) {
  check_scored_labels("rank_queries", scores, labels);
  COOPGNN_EXPECTS(indexes.size() == labels.size(), "rank_queries: {} indexes for {} labels",
                  indexes.size(), labels.size());
  COOPGNN_EXPECTS(!labels.empty(), "rank_queries: no pairs to rank");

  // Pairs grouped by query id; within a query, negatives first (ascending score), then positives
  // in pair order, so each group's negatives are a sorted run to binary-search.
  std::vector<std::size_t> order(labels.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if (indexes[a] != indexes[b]) return indexes[a] < indexes[b];
    if (labels[a] != labels[b]) return labels[a] < labels[b];
    if (labels[a] == 0 && scores[a] != scores[b]) return scores[a] < scores[b];
    return a < b;
  });

  ranking_metrics m;
  double sum_rr = 0.0;
  double sum_rr_ogb = 0.0;
  std::int64_t hits1 = 0;
  std::int64_t hits10 = 0;
  std::int64_t hits50 = 0;
  std::vector<float> negatives;
  std::size_t begin = 0;
  while (begin < order.size()) {
    std::int64_t const query = indexes[order[begin]];
    std::size_t end = begin;
    while (end < order.size() && indexes[order[end]] == query) ++end;
    negatives.clear();
    std::size_t first_pos = begin;
    while (first_pos < end && labels[order[first_pos]] == 0) {
      negatives.push_back(scores[order[first_pos]]);
      ++first_pos;
    }
    COOPGNN_EXPECTS(!negatives.empty(), "rank_queries: query {} has no negative pair", query);
    COOPGNN_EXPECTS(first_pos < end, "rank_queries: query {} has no positive pair", query);
    for (std::size_t i = first_pos; i < end; ++i) {
      float const s = scores[order[i]];
      auto const n_ge = static_cast<std::int64_t>(
          negatives.end() - std::lower_bound(negatives.begin(), negatives.end(), s));
      auto const n_gt = static_cast<std::int64_t>(
          negatives.end() - std::upper_bound(negatives.begin(), negatives.end(), s));
      std::int64_t const pessimistic = 1 + n_ge;
      double const ogb = 1.0 + 0.5 * static_cast<double>(n_gt + n_ge);
      sum_rr += 1.0 / static_cast<double>(pessimistic);
      sum_rr_ogb += 1.0 / ogb;
      hits1 += pessimistic <= 1 ? 1 : 0;
      hits10 += pessimistic <= 10 ? 1 : 0;
      hits50 += pessimistic <= 50 ? 1 : 0;
      ++m.positives;
    }
    ++m.queries;
    begin = end;
  }
  auto const p = static_cast<double>(m.positives);
  m.mrr = sum_rr / p;
  m.mrr_ogb = sum_rr_ogb / p;
  m.hits1 = static_cast<double>(hits1) / p;
  m.hits10 = static_cast<double>(hits10) / p;
  m.hits50 = static_cast<double>(hits50) / p;
  return m;
}

double average_precision(std::span<const float> scores, std::span<const std::int64_t> labels) {
  check_scored_labels("average_precision", scores, labels);
  std::int64_t const n_pos = std::accumulate(labels.begin(), labels.end(), std::int64_t{0});
  COOPGNN_EXPECTS(n_pos > 0, "average_precision: undefined without a positive label ({} labels)",
                  labels.size());
  std::vector<std::size_t> order(labels.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return scores[a] > scores[b] || (scores[a] == scores[b] && a < b);
  });
  double ap = 0.0;
  std::int64_t tp = 0;
  std::int64_t seen = 0;
  std::size_t i = 0;
  while (i < order.size()) {
    // One threshold per distinct score: the whole tied group enters at once.
    float const t = scores[order[i]];
    std::int64_t tp_in_group = 0;
    while (i < order.size() && scores[order[i]] == t) {
      tp_in_group += labels[order[i]];
      ++seen;
      ++i;
    }
    tp += tp_in_group;
    if (tp_in_group > 0) {
      double const precision = static_cast<double>(tp) / static_cast<double>(seen);
      ap += static_cast<double>(tp_in_group) / static_cast<double>(n_pos) * precision;
    }
  }
  return ap;
}

topk_metrics user_topk(std::span<const float> item_scores, std::span<const std::int64_t> exclude,
                       std::span<const std::int64_t> test_items, int k) {
  auto const n_items = static_cast<std::int64_t>(item_scores.size());
  COOPGNN_EXPECTS(k >= 1, "user_topk: k is {}, expected >= 1", k);
  COOPGNN_EXPECTS(!test_items.empty(), "user_topk: no test items");
  for (std::int64_t i = 0; i < n_items; ++i) {
    COOPGNN_EXPECTS(!std::isnan(item_scores[static_cast<std::size_t>(i)]),
                    "user_topk: score of item {} is NaN", i);
  }
  // 0 candidate, 1 excluded, 2 test item.
  std::vector<unsigned char> state(static_cast<std::size_t>(n_items), 0);
  for (std::int64_t const e : exclude) {
    COOPGNN_EXPECTS(0 <= e && e < n_items, "user_topk: excluded item {} is outside [0, {})", e,
                    n_items);
    state[static_cast<std::size_t>(e)] = 1;
  }
  for (std::int64_t const t : test_items) {
    COOPGNN_EXPECTS(0 <= t && t < n_items, "user_topk: test item {} is outside [0, {})", t,
                    n_items);
    auto& st = state[static_cast<std::size_t>(t)];
    COOPGNN_EXPECTS(st != 1, "user_topk: test item {} is also excluded (a training item)", t);
    COOPGNN_EXPECTS(st != 2, "user_topk: test item {} is listed twice", t);
    st = 2;
  }

  std::vector<std::int64_t> candidates;
  candidates.reserve(static_cast<std::size_t>(n_items));
  for (std::int64_t i = 0; i < n_items; ++i) {
    if (state[static_cast<std::size_t>(i)] != 1) candidates.push_back(i);
  }
  auto const before = [&](std::int64_t a, std::int64_t b) {
    float const sa = item_scores[static_cast<std::size_t>(a)];
    float const sb = item_scores[static_cast<std::size_t>(b)];
    return sa > sb || (sa == sb && a < b);
  };
  std::size_t const top = std::min(candidates.size(), static_cast<std::size_t>(k));
  std::nth_element(candidates.begin(), candidates.begin() + static_cast<std::ptrdiff_t>(top - 1),
                   candidates.end(), before);
  std::sort(candidates.begin(), candidates.begin() + static_cast<std::ptrdiff_t>(top), before);

  std::int64_t hits = 0;
  double dcg = 0.0;
  for (std::size_t r = 0; r < top; ++r) {
    if (state[static_cast<std::size_t>(candidates[r])] == 2) {
      ++hits;
      dcg += 1.0 / std::log2(static_cast<double>(r) + 2.0);
    }
  }
  std::size_t const ideal = std::min(test_items.size(), static_cast<std::size_t>(k));
  double idcg = 0.0;
  for (std::size_t r = 0; r < ideal; ++r) idcg += 1.0 / std::log2(static_cast<double>(r) + 2.0);
  return {static_cast<double>(hits) / static_cast<double>(test_items.size()), dcg / idcg};
}

}  // namespace coopgnn::models
