// Train-time feature transforms (runtime/graph/transforms.hpp) against hand-computed values.
#include "runtime/graph/transforms.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "runtime/core/error.hpp"

namespace coopgnn {
namespace {

TEST(NormalizeFeatureRows, NonNegativeRowsSumToOneAndSmallRowsAreClamped) {
  // Row 0 sums to 4; row 1 is all zero (stays zero); row 2 sums to 0.5 < 1 (divided by 1).
  matrix<float> x(3, 3, std::vector<float>{1, 0, 3, 0, 0, 0, 0.5f, 0, 0});
  normalize_feature_rows(x);
  std::vector<float> const want = {0.25f, 0, 0.75f, 0, 0, 0, 0.5f, 0, 0};
  EXPECT_EQ(x.values(), want);
}

TEST(NormalizeFeatureRows, SubtractsTheTableMinimumFirst) {
  // min = -1: [[0, 2], [1, 3]] then rows / 2 and / 4.
  matrix<float> x(2, 2, std::vector<float>{-1, 1, 0, 2});
  normalize_feature_rows(x);
  std::vector<float> const want = {0.0f, 1.0f, 0.25f, 0.75f};
  EXPECT_EQ(x.values(), want);
}

TEST(NormalizeFeatureRows, EmptyTableAndNonFiniteValues) {
  matrix<float> empty;
  EXPECT_NO_THROW(normalize_feature_rows(empty));
  matrix<float> bad(1, 2, std::vector<float>{1, std::numeric_limits<float>::quiet_NaN()});
  EXPECT_THROW(normalize_feature_rows(bad), logic_error);
}

TEST(FeatureNormalization, ParsesTheOptionNames) {
  EXPECT_EQ(parse_feature_normalization("row"), feature_normalization::row);
  EXPECT_EQ(parse_feature_normalization("none"), feature_normalization::none);
  EXPECT_EQ(to_string(feature_normalization::row), "row");
  EXPECT_THROW(parse_feature_normalization("l2"), logic_error);
}

}  // namespace
}  // namespace coopgnn
