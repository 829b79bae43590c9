#include "models/metrics.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "runtime/core/error.hpp"

namespace coopgnn::models {

namespace {

/// The arg-max class of every selected row and its label, checked as accuracy() documents.
std::vector<std::pair<std::int64_t, std::int64_t>> predictions(const matrix<float>& logits,
                                                               std::span<const std::int64_t> labels,
                                                               std::span<const std::int64_t> rows,
                                                               const char* fn) {
  std::int64_t const n = logits.rows();
  std::int64_t const num_classes = logits.cols();
  COOPGNN_EXPECTS(static_cast<std::int64_t>(labels.size()) == n,
                  "{}: {} labels for {} rows of logits", fn, labels.size(), n);
  COOPGNN_EXPECTS(!rows.empty(), "{}: no rows to score", fn);
  COOPGNN_EXPECTS(num_classes >= 1, "{}: logits have no class columns", fn);
  std::vector<std::pair<std::int64_t, std::int64_t>> out;
  out.reserve(rows.size());
  for (std::int64_t const r : rows) {
    COOPGNN_EXPECTS(0 <= r && r < n, "{}: row {} is outside [0, {})", fn, r, n);
    std::int64_t const y = labels[static_cast<std::size_t>(r)];
    COOPGNN_EXPECTS(0 <= y && y < num_classes, "{}: label of row {} is {}, outside [0, {})", fn, r,
                    y, num_classes);
    const float* l = logits.row(r);
    std::int64_t best = 0;
    for (std::int64_t j = 1; j < num_classes; ++j) {
      if (l[j] > l[best]) best = j;
    }
    out.emplace_back(best, y);
  }
  return out;
}

}  // namespace

double macro_f1(const matrix<float>& logits, std::span<const std::int64_t> labels,
                std::span<const std::int64_t> rows) {
  auto const pred = predictions(logits, labels, rows, "macro_f1");
  auto const C = static_cast<std::size_t>(logits.cols());
  std::vector<std::int64_t> tp(C, 0), fp(C, 0), fn(C, 0);
  for (auto const& [p, y] : pred) {
    if (p == y) {
      ++tp[static_cast<std::size_t>(y)];
    } else {
      ++fp[static_cast<std::size_t>(p)];
      ++fn[static_cast<std::size_t>(y)];
    }
  }
  double sum = 0;
  for (std::size_t c = 0; c < C; ++c) {
    auto const d = 2 * tp[c] + fp[c] + fn[c];
    if (d > 0) sum += 2.0 * static_cast<double>(tp[c]) / static_cast<double>(d);
  }
  return sum / static_cast<double>(C);
}

double accuracy(const matrix<float>& logits, std::span<const std::int64_t> labels,
                std::span<const std::int64_t> rows) {
  auto const pred = predictions(logits, labels, rows, "accuracy");
  std::int64_t correct = 0;
  for (auto const& [p, y] : pred) correct += p == y;
  return static_cast<double>(correct) / static_cast<double>(rows.size());
}

double roc_auc(std::span<const float> scores, std::span<const std::int64_t> labels) {
  COOPGNN_EXPECTS(scores.size() == labels.size(), "roc_auc: {} scores for {} labels", scores.size(),
                  labels.size());
  std::int64_t n_pos = 0;
  for (std::size_t i = 0; i < labels.size(); ++i) {
    COOPGNN_EXPECTS(labels[i] == 0 || labels[i] == 1, "roc_auc: label {} is {}, expected 0 or 1", i,
                    labels[i]);
    COOPGNN_EXPECTS(!std::isnan(scores[i]), "roc_auc: score {} is NaN", i);
    n_pos += labels[i];
  }
  auto const n = static_cast<std::int64_t>(labels.size());
  std::int64_t const n_neg = n - n_pos;
  COOPGNN_EXPECTS(n_pos > 0 && n_neg > 0,
                  "roc_auc: undefined with {} positive and {} negative labels (both classes are "
                  "needed)",
                  n_pos, n_neg);
  std::vector<std::size_t> order(labels.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return scores[a] < scores[b] || (scores[a] == scores[b] && a < b);
  });
  double rank_sum_pos = 0.0;
  std::size_t i = 0;
  while (i < order.size()) {
    std::size_t j = i;
    std::int64_t pos_in_group = 0;
    while (j < order.size() && scores[order[j]] == scores[order[i]]) {
      pos_in_group += labels[order[j]];
      ++j;
    }
    // Ranks i + 1 .. j (1-based) share their average.
    double const avg_rank = 0.5 * (static_cast<double>(i + 1) + static_cast<double>(j));
    rank_sum_pos += avg_rank * static_cast<double>(pos_in_group);
    i = j;
  }
  double const np = static_cast<double>(n_pos);
  return (rank_sum_pos - np * (np + 1.0) / 2.0) / (np * static_cast<double>(n_neg));
}

}  // namespace coopgnn::models
