// Evaluation metrics (docs/design.md section 1, models; section 10).
#pragma once

#include <cstdint>
#include <span>

#include "runtime/core/matrix.hpp"

namespace coopgnn::models {

/// Fraction of the selected rows whose arg-max logit equals the label:
///   (1 / |rows|) * sum_{r in rows} [argmax_j logits[r, j] == labels[r]],
/// ties resolved to the lowest column index (columns compared with >, so a NaN never wins over an
/// earlier column).
/// @param logits  [n, C], C >= 1
/// @param labels  [n] class of every row of logits (indexed by row, not by position in rows)
/// @param rows    the rows to score, each in [0, n); duplicates count twice
/// @returns a value in [0, 1]
/// @throws logic_error when labels.size() != n, rows is empty (the accuracy of nothing is
///         undefined), a row is out of range, or a selected label is outside [0, C) (the message
///         names the row and value). Deterministic.
double accuracy(const matrix<float>& logits, std::span<const std::int64_t> labels,
                std::span<const std::int64_t> rows);

/// Macro-averaged F1 over the C classes of the selected rows (the HAN / HeCo papers' Macro-F1):
///   (1 / C) sum_c 2 TP_c / (2 TP_c + FP_c + FN_c), predictions by arg-max as in accuracy();
/// a class with no true and no predicted row among `rows` (2 TP + FP + FN = 0) scores 0 (the
/// scikit-learn zero_division=0 convention) and still counts in C. Micro-F1 of single-label
/// multi-class predictions equals accuracy().
/// @param logits [n, C]; @param labels [n]; @param rows the rows to score, each in [0, n)
/// @returns a value in [0, 1]
/// @throws logic_error as accuracy() (sizes, empty rows, a row or label out of range).
double macro_f1(const matrix<float>& logits, std::span<const std::int64_t> labels,
                std::span<const std::int64_t> rows);

/// Area under the ROC curve by the rank statistic (Mann & Whitney 1947; Hanley & McNeil 1982):
///   AUC = (R_pos - n_pos (n_pos + 1) / 2) / (n_pos n_neg),
/// R_pos the sum of the 1-based ranks of the positive scores in ascending order, tied scores
/// sharing the average of their ranks (a tied positive/negative pair counts 1/2).
/// @param scores  [n] finite scores, larger = more likely positive
/// @param labels  [n] each 0 or 1
/// @returns a value in [0, 1]
/// @throws logic_error when the sizes differ, a label is not 0/1, a score is NaN, or only one
///         class is present (including n == 0): the AUC is then undefined, and we throw rather
///         than return NaN so that the caller decides. O(n log n), deterministic.
double roc_auc(std::span<const float> scores, std::span<const std::int64_t> labels);

}  // namespace coopgnn::models
