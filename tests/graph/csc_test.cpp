#include "runtime/graph/csc.hpp"

#include <gtest/gtest.h>

#include "kernels/sample/relation_segment.hpp"
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

TEST(TypedCsc, SortsColumnsByRelationThenSource) {
  // Edges into 1: 3 (r1), 0 (r0), 2 (r1), 0 (r1), 4 (r0); into 2: 1 (r2); into 0: none.
  std::vector<vid_t> src = {3, 0, 2, 0, 4, 1};
  std::vector<vid_t> dst = {1, 1, 1, 1, 1, 2};
  std::vector<std::int32_t> rel = {1, 0, 1, 1, 0, 2};
  auto const g = build_csc(5, src, dst, rel, 3);
  EXPECT_EQ(g.num_relations, 3);
  EXPECT_EQ(g.indptr, (std::vector<eid_t>{0, 0, 5, 6, 6, 6}));
  EXPECT_EQ(g.indices, (std::vector<vid_t>{0, 4, 0, 2, 3, 1}));
  EXPECT_EQ(g.etype, (std::vector<std::int32_t>{0, 0, 1, 1, 1, 2}));
  EXPECT_TRUE(g.typed());
  EXPECT_NO_THROW(validate_csc(g, "test"));
  // Relation segments of column 1: r0 = [0, 2), r1 = [2, 5), r2 = [5, 5); column 2: r2 = [5, 6).
  auto seg = [&](vid_t s, std::int32_t r) {
    edge_range const x = relation_segment(g.indptr.data(), g.etype.data(), s, r);
    return std::pair<eid_t, eid_t>{x.begin, x.end};
  };
  EXPECT_EQ(seg(1, 0), (std::pair<eid_t, eid_t>{0, 2}));
  EXPECT_EQ(seg(1, 1), (std::pair<eid_t, eid_t>{2, 5}));
  EXPECT_EQ(seg(1, 2), (std::pair<eid_t, eid_t>{5, 5}));
  EXPECT_EQ(seg(2, 0), (std::pair<eid_t, eid_t>{5, 5}));
  EXPECT_EQ(seg(2, 1), (std::pair<eid_t, eid_t>{5, 5}));
  EXPECT_EQ(seg(2, 2), (std::pair<eid_t, eid_t>{5, 6}));
  EXPECT_EQ(seg(0, 1), (std::pair<eid_t, eid_t>{0, 0}));
  // Untyped: relation 0 is the whole column.
  auto const u = build_csc(5, src, dst);
  edge_range const whole = relation_segment(u.indptr.data(), nullptr, 1, 0);
  EXPECT_EQ(whole.begin, 0);
  EXPECT_EQ(whole.end, 4);  // 0, 2, 3, 4 (the repeated 0 -> 1 kept once)
  EXPECT_EQ(relation_segment(u.indptr.data(), nullptr, 1, 1).size(), 0);
}

TEST(TypedCsc, KeepsRepeatsOnceButTheSamePairUnderTwoRelationsTwice) {
  std::vector<vid_t> src = {0, 0, 0, 2, 2};
  std::vector<vid_t> dst = {1, 1, 1, 1, 1};
  std::vector<std::int32_t> rel = {1, 1, 0, 1, 1};
  auto const g = build_csc(3, src, dst, rel, 2);
  EXPECT_EQ(g.indptr, (std::vector<eid_t>{0, 0, 3, 3}));
  EXPECT_EQ(g.indices, (std::vector<vid_t>{0, 0, 2}));
  EXPECT_EQ(g.etype, (std::vector<std::int32_t>{0, 1, 1}));
  EXPECT_NO_THROW(validate_csc(g, "test"));
  // R = 1: the untyped columns with an all-zero etype.
  std::vector<std::int32_t> zero(src.size(), 0);
  auto const one = build_csc(3, src, dst, zero, 1);
  auto const plain = build_csc(3, src, dst);
  EXPECT_EQ(one.indptr, plain.indptr);
  EXPECT_EQ(one.indices, plain.indices);
  EXPECT_EQ(one.etype, (std::vector<std::int32_t>{0, 0}));
}

TEST(TypedCsc, RefusesBadRelationsAndNamesTheEdge) {
  std::vector<vid_t> src = {0, 1, 2}, dst = {1, 2, 0};
  std::vector<std::int32_t> rel = {0, 2, 1};
  try {
    (void)build_csc(3, src, dst, rel, 2);
    FAIL() << "expected logic_error";
  } catch (const logic_error& e) {
    std::string const m = e.what();
    EXPECT_NE(m.find("edge 1"), std::string::npos) << m;
    EXPECT_NE(m.find("relation 2"), std::string::npos) << m;
  }
  std::vector<std::int32_t> neg = {0, -1, 0};
  EXPECT_THROW((void)build_csc(3, src, dst, neg, 2), logic_error);
  std::vector<std::int32_t> short_rel = {0, 0};
  EXPECT_THROW((void)build_csc(3, src, dst, short_rel, 2), logic_error);
  std::vector<std::int32_t> ok = {0, 1, 1};
  EXPECT_THROW((void)build_csc(3, src, dst, ok, 0), logic_error);
  std::vector<vid_t> bad_src = {0, 3, 2};
  EXPECT_THROW((void)build_csc(3, bad_src, dst, ok, 2), logic_error);
}

TEST(TypedCsc, ValidateChecksEdgeTypes) {
  std::vector<vid_t> src = {0, 2, 0}, dst = {1, 1, 1};
  std::vector<std::int32_t> rel = {0, 0, 1};
  auto const good = build_csc(3, src, dst, rel, 2);
  ASSERT_NO_THROW(validate_csc(good, "g"));
  auto expect_io = [](const csc_graph& g, const char* needle) {
    try {
      validate_csc(g, "typed.npy");
      FAIL() << "expected io_error containing " << needle;
    } catch (const io_error& e) {
      std::string const m = e.what();
      EXPECT_NE(m.find("typed.npy"), std::string::npos) << m;
      EXPECT_NE(m.find(needle), std::string::npos) << m;
    }
  };
  auto g = good;
  g.etype.pop_back();
  expect_io(g, "edge types");
  g = good;
  g.etype[2] = 2;
  expect_io(g, "outside");
  g = good;
  std::swap(g.etype[0], g.etype[2]);  // relations 1, 0, 0: not sorted
  expect_io(g, "not sorted");
  g = good;
  g.indices[1] = 0;  // (0, 0) twice in relation 0
  expect_io(g, "not sorted");
  g = good;
  g.etype.clear();  // two relations but no types
  expect_io(g, "no edge types");
}

}  // namespace
}  // namespace coopgnn
