// Link-prediction and top-K recommendation metrics (docs/design.md section 7.1): pure host
// functions over scores the evaluator has already computed. The AUC of section 7.1 is roc_auc in
// models/metrics.hpp (included here so that one include gives every link-prediction metric).
#pragma once

#include <cstdint>
#include <span>

#include "models/metrics.hpp"

namespace coopgnn::models {

/// Ranking metrics over queries: each query is a group of pairs sharing one `indexes` value.
struct ranking_metrics {
  double mrr = 0;  ///< mean over positives of 1 / rank, rank = 1 + #(negatives of its query scoring
                   ///< >= it) (ties count against the positive, as the TMA paper's code)
  double mrr_ogb = 0;  ///< OGB's convention: rank = mean of optimistic (1 + #neg > pos) and
                       ///< pessimistic (1 + #neg >= pos) ranks
  double hits1 = 0, hits10 = 0, hits50 = 0;  ///< fraction of positives with (pessimistic) rank <= K
  std::int64_t positives = 0;                ///< positives ranked
  std::int64_t queries = 0;                  ///< distinct values of indexes
};

/// Ranks every positive pair against all negative pairs of its query (GraphBolt's link_prediction
/// layout: one query per `indexes` value, its positive and its K negatives). For a positive p of
/// query q, with N(q) the negative scores of q:
///   pess(p) = 1 + #{n in N(q) : n >= p},   opt(p) = 1 + #{n in N(q) : n > p},
///   mrr     = (1 / P) sum_p 1 / pess(p)               (TMA paper's code: ties against the
///   positive) mrr_ogb = (1 / P) sum_p 1 / ((opt(p) + pess(p)) / 2)   (OGB linkproppred
///   Evaluator._eval_mrr) hitsK   = (1 / P) #{p : pess(p) <= K},  K = 1, 10, 50
/// P the number of positives over all queries. A query with several positives ranks each one
/// against the negatives only (positives do not compete with each other).
/// @param scores   [M] float, host; larger = more likely an edge; +-inf allowed, NaN is not
/// @param labels   [M] int64, host; 1 positive, 0 negative
/// @param indexes  [M] int64, host; query id of every pair, any values in any order (pairs of one
///                 query need not be contiguous; grouped by value)
/// @throws logic_error when M == 0, the sizes differ, a score is NaN, a label is not 0/1, or a
///         query has no positive or no negative (the message names the pair or query id).
/// O(M log M) time, O(M) memory; deterministic (sums in ascending query id, then pair order).
ranking_metrics rank_queries(std::span<const float> scores, std::span<const std::int64_t> labels,
                             std::span<const std::int64_t> indexes);

/// Average precision, scikit-learn's average_precision_score: with the distinct scores as
/// thresholds t_1 > t_2 > ... (tied scores form one threshold, whatever their labels),
///   P_n = TP(t_n) / (TP(t_n) + FP(t_n)),  R_n = TP(t_n) / #pos,  R_0 = 0,
///   AP  = sum_n (R_n - R_{n-1}) P_n,
/// TP(t) / FP(t) the positives / negatives scoring >= t. No interpolation.
/// @param scores  [n] float, host; larger = more likely positive; +-inf allowed, NaN is not
/// @param labels  [n] int64, host; each 0 or 1
/// @returns a value in (0, 1]; 1 when there is no negative
/// @throws logic_error when the sizes differ, a label is not 0/1, a score is NaN, or there is no
///         positive (including n == 0): AP is undefined then (scikit-learn warns and returns 0;
///         we throw so that the caller decides). O(n log n), deterministic.
double average_precision(std::span<const float> scores, std::span<const std::int64_t> labels);

/// Top-K metrics of one user.
struct topk_metrics {
  double recall = 0;  ///< hits in the top k / |test_items|
  double ndcg = 0;    ///< DCG / IDCG, binary relevance
};

/// Top-K recommendation metrics for one user, the LightGCN/NGCF protocol (He et al. 2020,
/// LightGCN-PyTorch's RecallPrecision_ATk / NDCGatK_r; data/README.md, "gowalla"). Items
/// [0, n_items) not in `exclude` are ranked by score descending, ties to the lower item id;
/// with top the first min(k, #candidates) of them, rel(i) = [i in test_items]:
///   recall = sum_{i in top} rel(i) / |test_items|
///   DCG    = sum_{r = 0}^{|top| - 1} rel(top[r]) / log2(r + 2)
///   IDCG   = sum_{r = 0}^{min(k, |test_items|) - 1} 1 / log2(r + 2)
///   ndcg   = DCG / IDCG
/// Averaging over users is the caller's.
/// @param item_scores  [n_items] float, host; the user's score of every item; NaN not allowed
/// @param exclude      int64 item ids in [0, n_items), host; the user's training items, skipped
///                     (duplicates allowed)
/// @param test_items   int64 item ids in [0, n_items), host; non-empty, distinct, disjoint from
///                     exclude
/// @param k            cut-off, >= 1 (k above the number of candidates ranks them all)
/// @throws logic_error when k < 1, an id is out of range, test_items is empty, has a duplicate or
///         meets exclude, or a score is NaN (the message names the offending id or position).
/// O(n_items + k log k) time (nth_element, then a sort of the top k), O(n_items) memory;
/// deterministic.
topk_metrics user_topk(std::span<const float> item_scores, std::span<const std::int64_t> exclude,
                       std::span<const std::int64_t> test_items, int k);

}  // namespace coopgnn::models
