#include "runtime/graph/ownership.hpp"

#include <gtest/gtest.h>

#include <vector>

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

TEST(Ownership, PerNodeTypeEveryPeOwnsItsShareOfEveryType) {
  // Types of 7, 1000 and 2 vertices (ACM-like skew): a global permutation could leave a PE
  // without any vertex of the small types; per type, each PE owns floor or ceil(n_t / P).
  std::vector<vid_t> const off{0, 7, 1007, 1009};
  for (int P : {1, 2, 3, 4}) {
    ownership const o(1009, P, 5, off);
    for (std::size_t t = 0; t + 1 < off.size(); ++t) {
      std::vector<int> c(static_cast<std::size_t>(P), 0);
      for (vid_t v = off[t]; v < off[t + 1]; ++v) {
        ASSERT_LT(o.owner(v), P);
        ++c[static_cast<std::size_t>(o.owner(v))];
      }
      vid_t const n = off[t + 1] - off[t];
      for (int q = 0; q < P; ++q) {
        EXPECT_GE(c[static_cast<std::size_t>(q)], n / P) << "type " << t << " PE " << q;
        EXPECT_LE(c[static_cast<std::size_t>(q)], (n + P - 1) / P) << "type " << t << " PE " << q;
      }
    }
  }
  // One type: the untyped map, bit for bit.
  ownership const a(500, 3, 9), b(500, 3, 9, std::vector<vid_t>{0, 500});
  for (vid_t v = 0; v < 500; ++v) ASSERT_EQ(a.owner(v), b.owner(v));
  EXPECT_THROW(ownership(10, 2, 1, std::vector<vid_t>{0, 4, 9}), logic_error);
  EXPECT_THROW(ownership(10, 2, 1, std::vector<vid_t>{0, 6, 4, 10}), logic_error);
}

}  // namespace
}  // namespace coopgnn
