#include "runtime/graph/ownership.hpp"

#include <gtest/gtest.h>

#include "runtime/core/error.hpp"

namespace coopgnn {
namespace {

TEST(Ownership, BalancedDeterministicAndSeeded) {
  for (int P : {1, 2, 3, 4, 8}) {
    ownership a(1001, P, 7), b(1001, P, 7), c(1001, P, 8);
    auto const counts = a.counts();
    ASSERT_EQ(static_cast<int>(counts.size()), P);
    for (auto n : counts) {
      EXPECT_GE(n, 1001 / P);
      EXPECT_LE(n, 1001 / P + 1);
    }
    int differ = 0;
    for (vid_t v = 0; v < 1001; ++v) {
      ASSERT_EQ(a.owner(v), b.owner(v));
      ASSERT_GE(a.owner(v), 0);
      ASSERT_LT(a.owner(v), P);
      differ += a.owner(v) != c.owner(v);
    }
    if (P > 1) {
      EXPECT_GT(differ, 100) << "another seed should give another map";
    }
  }
}

TEST(Ownership, NotContiguousById) {
  ownership o(1000, 4, 1);
  int changes = 0;
  for (vid_t v = 1; v < 1000; ++v) changes += o.owner(v) != o.owner(v - 1);
  EXPECT_GT(changes, 500);  // a random permutation, not id ranges
}

TEST(Ownership, RejectsBadArguments) {
  EXPECT_THROW(ownership(10, 0, 1), logic_error);
  EXPECT_THROW(ownership(-1, 2, 1), logic_error);
  EXPECT_NO_THROW(ownership(0, 3, 1));
}

}  // namespace
}  // namespace coopgnn
