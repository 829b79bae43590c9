#include "runtime/graph/csc.hpp"

#include <gtest/gtest.h>

#include "runtime/core/error.hpp"

namespace coopgnn {
namespace {

TEST(Csc, BuildsSortedInNeighbourLists) {
  std::vector<vid_t> src = {2, 0, 1, 2, 3, 0};
  std::vector<vid_t> dst = {1, 1, 0, 0, 3, 3};
  auto const g = build_csc(5, src, dst);
  EXPECT_EQ(g.indptr, (std::vector<eid_t>{0, 2, 4, 4, 6, 6}));
  EXPECT_EQ(g.indices, (std::vector<vid_t>{1, 2, 0, 2, 0, 3}));
  EXPECT_EQ(g.in_degree(2), 0);
  EXPECT_NO_THROW(validate_csc(g, "test"));
}

TEST(Csc, KeepsARepeatedEdgeOnce) {
  std::vector<vid_t> src = {0, 0, 2, 0, 1, 1};
  std::vector<vid_t> dst = {1, 1, 1, 1, 2, 2};
  auto const g = build_csc(3, src, dst);
  EXPECT_EQ(g.indptr, (std::vector<eid_t>{0, 0, 2, 3}));
  EXPECT_EQ(g.indices, (std::vector<vid_t>{0, 2, 1}));
  EXPECT_NO_THROW(validate_csc(g, "test"));
}

TEST(Csc, RejectsBadEdgesAndCorruptOffsets) {
  std::vector<vid_t> src = {0, 5}, dst = {1, 1};
  EXPECT_THROW(build_csc(5, src, dst), logic_error);
  std::vector<vid_t> neg = {-1};
  std::vector<vid_t> one = {0};
  EXPECT_THROW(build_csc(5, neg, one), logic_error);
  EXPECT_THROW(build_csc(5, src, one), logic_error);
  csc_graph g;
  g.num_nodes = 2;
  g.indptr = {0, 2, 1};
  g.indices = {0};
  try {
    validate_csc(g, "edges.npy");
    FAIL() << "expected io_error";
  } catch (const io_error& e) {
    EXPECT_NE(std::string(e.what()).find("edges.npy"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("decrease"), std::string::npos);
  }
  g.indptr = {0, 1, 1};
  g.indices = {7};
  EXPECT_THROW(validate_csc(g, "x"), io_error);
}

}  // namespace
}  // namespace coopgnn
