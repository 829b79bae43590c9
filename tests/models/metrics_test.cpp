// Accuracy and ROC-AUC on hand-worked examples.
#include "models/metrics.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "runtime/core/error.hpp"

namespace coopgnn::models {
namespace {

TEST(accuracy, argmax_with_ties_to_the_lowest_index) {
  matrix<float> logits(4, 3,
                       std::vector<float>{
                           1.0f, 1.0f, 0.0f,     // tie 0/1 -> 0
                           0.0f, 2.0f, 2.0f,     // tie 1/2 -> 1
                           -1.0f, -3.0f, -0.5f,  // 2
                           5.0f, 0.0f, 0.0f,     // 0
                       });
  std::vector<std::int64_t> const labels = {0, 2, 2, 1};
  std::vector<std::int64_t> const all = {0, 1, 2, 3};
  EXPECT_DOUBLE_EQ(accuracy(logits, labels, all), 0.5);  // rows 0 and 2 right
  std::vector<std::int64_t> const some = {0, 2};
  EXPECT_DOUBLE_EQ(accuracy(logits, labels, some), 1.0);
  std::vector<std::int64_t> const wrong = {1, 3};
  EXPECT_DOUBLE_EQ(accuracy(logits, labels, wrong), 0.0);
}

TEST(accuracy, validates) {
  matrix<float> logits(2, 2);
  std::vector<std::int64_t> const labels = {0, 1};
  std::vector<std::int64_t> const none;
  EXPECT_THROW(accuracy(logits, labels, none), logic_error);
  std::vector<std::int64_t> const out_of_range = {2};
  EXPECT_THROW(accuracy(logits, labels, out_of_range), logic_error);
  std::vector<std::int64_t> const bad_labels = {0, 5};
  std::vector<std::int64_t> const row1 = {1};
  EXPECT_THROW(accuracy(logits, bad_labels, row1), logic_error);
  std::vector<std::int64_t> const short_labels = {0};
  EXPECT_THROW(accuracy(logits, short_labels, row1), logic_error);
}

TEST(roc_auc, hand_worked_example_with_a_tie) {
  // Positives score {0.35, 0.8, 0.4}, negatives {0.1, 0.4}. Pairs (pos > neg):
  // 0.35: beats 0.1 only -> 1;  0.8: beats both -> 2;  0.4: beats 0.1, ties 0.4 -> 1.5.
  // AUC = 4.5 / (3 * 2) = 0.75.
  std::vector<float> const scores = {0.1f, 0.4f, 0.35f, 0.8f, 0.4f};
  std::vector<std::int64_t> const labels = {0, 0, 1, 1, 1};
  EXPECT_DOUBLE_EQ(roc_auc(scores, labels), 0.75);
}

TEST(roc_auc, extremes) {
  std::vector<float> const scores = {0.1f, 0.2f, 0.3f, 0.4f};
  std::vector<std::int64_t> const perfect = {0, 0, 1, 1};
  std::vector<std::int64_t> const reversed = {1, 1, 0, 0};
  EXPECT_DOUBLE_EQ(roc_auc(scores, perfect), 1.0);
  EXPECT_DOUBLE_EQ(roc_auc(scores, reversed), 0.0);
  std::vector<float> const tied = {0.5f, 0.5f, 0.5f, 0.5f};
  EXPECT_DOUBLE_EQ(roc_auc(tied, perfect), 0.5);
}

TEST(roc_auc, one_class_or_bad_labels_throw) {
  std::vector<float> const scores = {0.1f, 0.2f};
  std::vector<std::int64_t> const ones = {1, 1};
  EXPECT_THROW(roc_auc(scores, ones), logic_error);
  EXPECT_THROW(roc_auc({}, {}), logic_error);
  std::vector<std::int64_t> const two = {0, 2};
  EXPECT_THROW(roc_auc(scores, two), logic_error);
  std::vector<std::int64_t> const short_labels = {0};
  EXPECT_THROW(roc_auc(scores, short_labels), logic_error);
}

}  // namespace
}  // namespace coopgnn::models
