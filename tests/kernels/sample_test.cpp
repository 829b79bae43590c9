// Sampler property validators and determinism (docs/design.md sections 4 and 8).
#include "kernels/sample/sample.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <set>

#include "runtime/core/error.hpp"
#include "tests/common/graphs.hpp"

namespace coopgnn {
namespace {

struct sample_usecase {
  sampler_kind kind;
  int fanout;
  vid_t n;
  int avg_degree;
};

std::ostream& operator<<(std::ostream& os, const sample_usecase& u) {
  return os << to_string(u.kind) << " k=" << u.fanout << " n=" << u.n << " d=" << u.avg_degree;
}

class SampleTest : public ::testing::TestWithParam<sample_usecase> {};

std::vector<vid_t> all_vertices(vid_t n) {
  std::vector<vid_t> v(static_cast<std::size_t>(n));
  std::iota(v.begin(), v.end(), 0);
  return v;
}

TEST_P(SampleTest, KeptEdgesAreGraphEdgesWithPromisedCounts) {
  auto const u = GetParam();
  auto const g = test::random_graph(u.n, u.avg_degree, 11);
  auto const seeds = all_vertices(u.n);
  sample_params p{u.kind, u.fanout, 1234, 1, 7};
  auto const s = sample_neighbors(exec_context{}, g, seeds, p);
  ASSERT_EQ(s.indptr.size(), seeds.size() + 1);
  std::int64_t total = 0, expected_total = 0;
  for (std::size_t i = 0; i < seeds.size(); ++i) {
    vid_t const v = seeds[i];
    auto const nb = g.in_neighbors(v);
    std::set<vid_t> graph_nbrs(nb.begin(), nb.end());
    std::set<vid_t> kept;
    auto const d = static_cast<std::int64_t>(nb.size());
    auto const cnt = s.indptr[i + 1] - s.indptr[i];
    float wsum = 0;
    for (eid_t e = s.indptr[i]; e < s.indptr[i + 1]; ++e) {
      ASSERT_TRUE(graph_nbrs.count(s.nbrs[e])) << "vertex " << v << " kept a non-edge";
      ASSERT_TRUE(kept.insert(s.nbrs[e]).second) << "duplicate edge for seed " << v;
      wsum += s.weights[e];
    }
    if (cnt > 0) {
      EXPECT_NEAR(wsum, 1.0f, 1e-5f);
    }
    if (u.fanout < 0 || d <= u.fanout) {
      EXPECT_EQ(cnt, d) << "seed " << v << " with degree <= fanout must keep all";
    } else if (u.kind == sampler_kind::ns) {
      EXPECT_EQ(cnt, u.fanout) << "NS keeps exactly min(k, d)";
    } else {
      EXPECT_LE(cnt, d);
    }
    total += cnt;
    expected_total += u.fanout < 0 ? d : std::min<std::int64_t>(d, u.fanout);
  }
  EXPECT_GT(total, 0);
  if (u.kind == sampler_kind::labor && u.fanout > 0) {
    // LABOR-0 keeps min(k, d) per seed in expectation. Seeds share variates, so one batch's total
    // varies a lot; the mean over 40 batches is within 4% (about 4 standard errors here).
    double mean = 0;
    for (std::uint32_t batch = 100; batch < 140; ++batch) {
      auto q = p;
      q.batch = batch;
      mean += static_cast<double>(sample_neighbors(exec_context{}, g, seeds, q).nbrs.size()) / 40;
    }
    EXPECT_NEAR(mean, static_cast<double>(expected_total),
                0.04 * static_cast<double>(expected_total));
  } else {
    EXPECT_EQ(total, expected_total);
  }
  // Zero-degree vertex 0 keeps nothing; the hub keeps min(k, n-1).
  EXPECT_EQ(s.indptr[1] - s.indptr[0], 0);
}

TEST_P(SampleTest, IdenticalForAnyThreadCount) {
  auto const u = GetParam();
  auto const g = test::random_graph(u.n, u.avg_degree, 5);
  auto const seeds = all_vertices(u.n);
  sample_params p{u.kind, u.fanout, 99, 0, 3};
  auto const a = sample_neighbors(exec_context(backend::host, 0, 1), g, seeds, p);
  for (int t : {2, 3, 8}) {
    auto const b = sample_neighbors(exec_context(backend::host, 0, t), g, seeds, p);
    EXPECT_EQ(a.indptr, b.indptr) << "threads " << t;
    EXPECT_EQ(a.nbrs, b.nbrs) << "threads " << t;
    EXPECT_EQ(a.weights, b.weights) << "threads " << t;
  }
}

TEST_P(SampleTest, SameVertexSameNeighboursInAnySeedList) {
  // Keyed on (seed, layer, batch, vertex): a vertex gets the same sample wherever it appears.
  auto const u = GetParam();
  auto const g = test::random_graph(u.n, u.avg_degree, 5);
  auto seeds = all_vertices(u.n);
  sample_params p{u.kind, u.fanout, 42, 2, 9};
  auto const full = sample_neighbors(exec_context{}, g, seeds, p);
  std::vector<vid_t> subset;
  for (vid_t v = u.n - 1; v >= 0; v -= 3) subset.push_back(v);
  auto const part = sample_neighbors(exec_context{}, g, subset, p);
  for (std::size_t i = 0; i < subset.size(); ++i) {
    vid_t const v = subset[i];
    std::vector<vid_t> a(full.nbrs.begin() + full.indptr[v],
                         full.nbrs.begin() + full.indptr[v + 1]);
    std::vector<vid_t> b(part.nbrs.begin() + part.indptr[i],
                         part.nbrs.begin() + part.indptr[i + 1]);
    EXPECT_EQ(a, b) << "vertex " << v;
  }
}

INSTANTIATE_TEST_SUITE_P(Samplers, SampleTest,
                         ::testing::Values(sample_usecase{sampler_kind::ns, 10, 300, 8},
                                           sample_usecase{sampler_kind::ns, 1, 33, 4},
                                           sample_usecase{sampler_kind::ns, 31, 200, 40},
                                           sample_usecase{sampler_kind::ns, -1, 100, 6},
                                           sample_usecase{sampler_kind::labor, 10, 2000, 20},
                                           sample_usecase{sampler_kind::labor, 3, 500, 12},
                                           sample_usecase{sampler_kind::labor, -1, 100, 6}));

TEST(Sample, KeysChangeWithBatchLayerAndSeed) {
  auto const g = test::random_graph(500, 30, 3);
  auto const seeds = all_vertices(500);
  for (auto kind : {sampler_kind::ns, sampler_kind::labor}) {
    sample_params p{kind, 5, 1, 0, 0};
    auto const base = sample_neighbors(exec_context{}, g, seeds, p);
    auto q = p;
    q.batch = 1;
    EXPECT_NE(base.nbrs, sample_neighbors(exec_context{}, g, seeds, q).nbrs);
    q = p;
    q.layer = 1;
    EXPECT_NE(base.nbrs, sample_neighbors(exec_context{}, g, seeds, q).nbrs);
    q = p;
    q.run_seed = 2;
    EXPECT_NE(base.nbrs, sample_neighbors(exec_context{}, g, seeds, q).nbrs);
  }
}

TEST(Sample, LaborSharesVariatesAcrossSeeds) {
  // With LABOR-0 two seeds with the same degree and the same neighbours keep the same set; NS
  // draws per edge so such seeds generally differ.
  std::vector<vid_t> src, dst;
  for (vid_t t = 2; t < 102; ++t) {
    for (vid_t s : {0, 1}) {
      src.push_back(t);
      dst.push_back(s);
    }
  }
  auto const g = build_csc(102, src, dst);
  std::vector<vid_t> seeds = {0, 1};
  auto const lab = sample_neighbors(exec_context{}, g, seeds, {sampler_kind::labor, 10, 7, 0, 0});
  std::vector<vid_t> a(lab.nbrs.begin(), lab.nbrs.begin() + lab.indptr[1]);
  std::vector<vid_t> b(lab.nbrs.begin() + lab.indptr[1], lab.nbrs.end());
  EXPECT_FALSE(a.empty());
  EXPECT_EQ(a, b);
  auto const ns = sample_neighbors(exec_context{}, g, seeds, {sampler_kind::ns, 10, 7, 0, 0});
  std::vector<vid_t> c(ns.nbrs.begin(), ns.nbrs.begin() + ns.indptr[1]);
  std::vector<vid_t> d(ns.nbrs.begin() + ns.indptr[1], ns.nbrs.end());
  EXPECT_NE(c, d);
}

TEST(Sample, NsIsUniformOverNeighbours) {
  // Over many batches each of 20 neighbours is kept with probability k/d = 0.25.
  std::vector<vid_t> src, dst;
  for (vid_t t = 1; t <= 20; ++t) {
    src.push_back(t);
    dst.push_back(0);
  }
  auto const g = build_csc(21, src, dst);
  std::vector<int> hits(21, 0);
  std::vector<vid_t> seeds = {0};
  int const trials = 4000;
  for (int b = 0; b < trials; ++b) {
    auto const s = sample_neighbors(exec_context{}, g, seeds,
                                    {sampler_kind::ns, 5, 3, 0, static_cast<std::uint32_t>(b)});
    for (vid_t t : s.nbrs) ++hits[t];
  }
  for (vid_t t = 1; t <= 20; ++t) {
    // Binomial(4000, 0.25): mean 1000, sd ~27; allow 5 sd.
    EXPECT_NEAR(hits[t], 1000, 140) << "neighbour " << t;
  }
}

TEST(Sample, RejectsBadInput) {
  auto const g = test::random_graph(10, 3, 1);
  std::vector<vid_t> bad = {3, 10};
  EXPECT_THROW(sample_neighbors(exec_context{}, g, bad, {sampler_kind::ns, 5, 0, 0, 0}),
               logic_error);
  std::vector<vid_t> ok = {3};
  EXPECT_THROW(sample_neighbors(exec_context{}, g, ok, {sampler_kind::ns, 0, 0, 0, 0}),
               logic_error);
  EXPECT_THROW(sample_neighbors(exec_context{}, g, ok, {sampler_kind::ns, -2, 0, 0, 0}),
               logic_error);
  EXPECT_THROW(parse_sampler_kind("uniform"), logic_error);
  std::vector<vid_t> none;
  auto const empty = sample_neighbors(exec_context{}, g, none, {sampler_kind::ns, 5, 0, 0, 0});
  EXPECT_EQ(empty.indptr.size(), 1u);
  EXPECT_TRUE(empty.nbrs.empty());
}

TEST(Sample, SeedsWithNoNeighboursGiveEmptyRows) {
  auto const g = test::random_graph(50, 4, 2);  // vertex 0 has no in-edges
  std::vector<vid_t> seeds = {0, 0};
  for (auto kind : {sampler_kind::ns, sampler_kind::labor}) {
    auto const s = sample_neighbors(exec_context{}, g, seeds, {kind, 5, 0, 0, 0});
    EXPECT_EQ(s.indptr, (std::vector<eid_t>{0, 0, 0}));
    auto const b =
        make_block(g, std::vector<vid_t>{0},
                   sample_neighbors(exec_context{}, g, std::vector<vid_t>{0}, {kind, 5, 0, 0, 0}));
    EXPECT_EQ(b.num_dst, 1);
    EXPECT_EQ(b.num_src(), 1);
    EXPECT_EQ(b.num_edges(), 0);
  }
}

TEST(Block, UniqueCompactWithDestinationsFirst) {
  auto const g = test::random_graph(400, 10, 8);
  std::vector<vid_t> dst = {17, 1, 250, 3, 99};
  auto const s = sample_neighbors(exec_context{}, g, dst, {sampler_kind::ns, 6, 5, 0, 0});
  auto const b = make_block(g, dst, s);
  ASSERT_EQ(b.num_dst, 5);
  for (std::size_t i = 0; i < dst.size(); ++i) EXPECT_EQ(b.src_ids[i], dst[i]);
  std::set<vid_t> uniq(b.src_ids.begin(), b.src_ids.end());
  EXPECT_EQ(uniq.size(), b.src_ids.size()) << "source list has duplicates";
  ASSERT_EQ(b.num_edges(), static_cast<std::int64_t>(s.nbrs.size()));
  for (std::int64_t e = 0; e < b.num_edges(); ++e) {
    ASSERT_GE(b.indices[e], 0);
    ASSERT_LT(b.indices[e], b.num_src());
    EXPECT_EQ(b.src_ids[b.indices[e]], s.nbrs[e]);
  }
  // Every source is used by some edge or is a destination.
  std::vector<bool> used(b.src_ids.size(), false);
  for (auto i : b.indices) used[i] = true;
  for (std::int64_t i = b.num_dst; i < b.num_src(); ++i) EXPECT_TRUE(used[i]);
  for (std::int64_t i = 0; i < b.num_src(); ++i) {
    EXPECT_EQ(b.src_degree[i], g.in_degree(b.src_ids[i]));
  }
  EXPECT_THROW(make_block(g, std::vector<vid_t>{1, 1},
                          sample_neighbors(exec_context{}, g, std::vector<vid_t>{1, 1},
                                           {sampler_kind::ns, 2, 0, 0, 0})),
               logic_error);
}

}  // namespace
}  // namespace coopgnn
