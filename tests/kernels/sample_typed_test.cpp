// Typed (heterogeneous) neighbour sampling (docs/typed-sampling.md; sample.hpp "Typed graphs"):
// per relation, kept edges are edges of that relation with the promised counts; NS keeps the
// positions of Floyd's rule with draws keyed by the position in the whole column (recomputed
// here from the Philox draws); LABOR keeps exactly {t : r_t <= k_r / d_r} (r_t from the draws);
// R = 1 typed equals untyped bit for bit; NS is uniform per relation; fanout 0 gives empty rows;
// typed blocks keep the block invariants. Oracles come from the raw edge list and rng.hpp, never
// from the code under test.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <set>
#include <tuple>

#include "kernels/sample/sample.hpp"
#include "kernels/sample/sampling.hpp"
#include "runtime/core/error.hpp"
#include "runtime/core/rng.hpp"
#include "tests/common/graphs.hpp"

namespace coopgnn {
namespace {

/// The in-neighbours of relation r of every vertex, from the raw edge list: key (dst, r),
/// sources ascending (what a typed CSC segment must hold).
using relation_lists = std::map<std::pair<vid_t, std::int32_t>, std::vector<vid_t>>;
relation_lists lists_of(const test::typed_graph& t) {
  relation_lists out;
  for (std::size_t e = 0; e < t.src.size(); ++e) out[{t.dst[e], t.rel[e]}].push_back(t.src[e]);
  for (auto& [key, v] : out) std::sort(v.begin(), v.end());
  return out;
}
std::vector<vid_t> list_of(const relation_lists& l, vid_t s, std::int32_t r) {
  auto const it = l.find({s, r});
  return it == l.end() ? std::vector<vid_t>{} : it->second;
}

/// Floyd's k-subset of [0, d) for seed s written from the Philox draws (ns_floyd.hpp's rule):
/// step j draws u = (w1 << 32) | w0 of draw4(stream, s, offset + j, batch), r = floor(u (j + 1) /
/// 2^64); r is taken if new, else j. Ascending.
std::vector<std::uint32_t> floyd_oracle(const sample_params& p, vid_t s, std::uint32_t d,
                                        std::uint32_t k, std::uint32_t offset) {
  rng::stream const st = rng::make_stream(p.run_seed, rng::purpose::ns, p.layer);
  std::set<std::uint32_t> chosen;
  for (std::uint32_t j = d - k; j < d; ++j) {
    auto const w = rng::draw4(st, static_cast<std::uint64_t>(s), offset + j, p.batch);
    unsigned __int128 const u = (static_cast<unsigned __int128>(w[1]) << 32) | w[0];
    auto const r = static_cast<std::uint32_t>((u * (static_cast<unsigned __int128>(j) + 1)) >> 64);
    chosen.insert(chosen.count(r) ? j : r);
  }
  return {chosen.begin(), chosen.end()};
}

/// r_t of plain LABOR (kappa 1): uniform(stream(run_seed, labor, layer), t, 0, batch).
float labor_oracle(const sample_params& p, vid_t t) {
  return rng::uniform(rng::make_stream(p.run_seed, rng::purpose::labor, p.layer),
                      static_cast<std::uint64_t>(t), 0, p.batch);
}

struct typed_usecase {
  sampler_kind kind;
  std::vector<int> relation_fanouts;  // [R]
  vid_t n;
  int avg_degree;
};

std::ostream& operator<<(std::ostream& os, const typed_usecase& u) {
  os << to_string(u.kind) << " k_r =";
  for (int k : u.relation_fanouts) os << " " << k;
  return os << " n=" << u.n << " d=" << u.avg_degree;
}

class TypedSampleTest : public ::testing::TestWithParam<typed_usecase> {};

TEST_P(TypedSampleTest, RowsHoldTheRelationsEdgesByTheSamplersRule) {
  auto const u = GetParam();
  auto const R = static_cast<std::int32_t>(u.relation_fanouts.size());
  auto const t = test::random_typed_graph(u.n, R, u.avg_degree, 31);
  auto const lists = lists_of(t);
  std::vector<vid_t> seeds = {0, 1, 2};
  for (vid_t v = 5; v < u.n; v += 3) seeds.push_back(v);
  sample_params p{u.kind, 99, 2024, 1, 6};
  p.relation_fanouts = u.relation_fanouts;
  auto const s = sample_neighbors(exec_context{}, t.g, seeds, p);
  ASSERT_EQ(s.indptr.size(), seeds.size() * R + 1);
  ASSERT_EQ(s.nbrs.size(), s.weights.size());
  std::int64_t sampled_somewhere = 0;
  for (std::size_t i = 0; i < seeds.size(); ++i) {
    vid_t const v = seeds[i];
    eid_t offset = 0;  // where relation r's segment starts in v's column
    for (std::int32_t r = 0; r < R; ++r) {
      SCOPED_TRACE(::testing::Message() << "seed " << v << " relation " << r);
      auto const nb = list_of(lists, v, r);
      auto const d = static_cast<std::int64_t>(nb.size());
      int const k = u.relation_fanouts[static_cast<std::size_t>(r)];
      std::size_t const q = i * R + r;
      std::vector<vid_t> const got(s.nbrs.begin() + s.indptr[q], s.nbrs.begin() + s.indptr[q + 1]);
      std::vector<vid_t> want;
      if (k == 0) {
        // nothing
      } else if (k < 0 || d <= k) {
        want = nb;
      } else if (u.kind == sampler_kind::ns) {
        for (std::uint32_t j :
             floyd_oracle(p, v, static_cast<std::uint32_t>(d), static_cast<std::uint32_t>(k),
                          static_cast<std::uint32_t>(offset))) {
          want.push_back(nb[j]);
        }
        EXPECT_EQ(static_cast<int>(want.size()), k);
      } else {
        float const threshold = static_cast<float>(k) / static_cast<float>(d);
        for (vid_t x : nb) {
          if (labor_oracle(p, x) <= threshold) want.push_back(x);
        }
      }
      EXPECT_EQ(got, want);
      // Kept edges are edges of this relation, without a repeat, in CSC (source id) order.
      std::set<vid_t> const edges(nb.begin(), nb.end());
      for (std::size_t e = 0; e < got.size(); ++e) {
        EXPECT_TRUE(edges.count(got[e]))
            << got[e] << " -> " << v << " is no relation-" << r << " edge";
        if (e > 0) {
          EXPECT_LT(got[e - 1], got[e]);
        }
      }
      if (u.kind == sampler_kind::ns) {
        std::int64_t const want_count = k < 0 ? d : std::min<std::int64_t>(d, k);
        EXPECT_EQ(static_cast<std::int64_t>(got.size()), want_count);
      }
      for (eid_t e = s.indptr[q]; e < s.indptr[q + 1]; ++e) {
        EXPECT_EQ(s.weights[e], 1.0f / static_cast<float>(got.size()));
      }
      sampled_somewhere += static_cast<std::int64_t>(got.size());
      offset += d;
    }
  }
  EXPECT_GT(sampled_somewhere, 0);
}

TEST_P(TypedSampleTest, IdenticalForAnyThreadCountAndSeedList) {
  auto const u = GetParam();
  auto const R = static_cast<std::int32_t>(u.relation_fanouts.size());
  auto const t = test::random_typed_graph(u.n, R, u.avg_degree, 5);
  std::vector<vid_t> seeds(static_cast<std::size_t>(u.n));
  std::iota(seeds.begin(), seeds.end(), vid_t{0});
  sample_params p{u.kind, 99, 42, 2, 9};
  p.relation_fanouts = u.relation_fanouts;
  auto const a = sample_neighbors(exec_context(backend::host, 0, 1), t.g, seeds, p);
  for (int threads : {2, 3, 8}) {
    auto const b = sample_neighbors(exec_context(backend::host, 0, threads), t.g, seeds, p);
    EXPECT_EQ(a.indptr, b.indptr) << "threads " << threads;
    EXPECT_EQ(a.nbrs, b.nbrs) << "threads " << threads;
    EXPECT_EQ(a.weights, b.weights) << "threads " << threads;
  }
  // A vertex gets the same rows wherever it appears in the seed list.
  std::vector<vid_t> subset;
  for (vid_t v = u.n - 1; v >= 0; v -= 4) subset.push_back(v);
  auto const part = sample_neighbors(exec_context{}, t.g, subset, p);
  for (std::size_t i = 0; i < subset.size(); ++i) {
    for (std::int32_t r = 0; r < R; ++r) {
      auto const qa = static_cast<std::size_t>(subset[i]) * R + r;
      auto const qb = i * R + r;
      std::vector<vid_t> x(a.nbrs.begin() + a.indptr[qa], a.nbrs.begin() + a.indptr[qa + 1]);
      std::vector<vid_t> y(part.nbrs.begin() + part.indptr[qb],
                           part.nbrs.begin() + part.indptr[qb + 1]);
      EXPECT_EQ(x, y) << "vertex " << subset[i] << " relation " << r;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Samplers, TypedSampleTest,
    ::testing::Values(typed_usecase{sampler_kind::ns, {3, 5, 1}, 300, 6},
                      typed_usecase{sampler_kind::ns, {-1, 0, 2}, 200, 5},
                      // k > 32: Floyd's hash-set path on the hub's segments (d = n - 1).
                      typed_usecase{sampler_kind::ns, {40, 33}, 400, 8},
                      typed_usecase{sampler_kind::ns, {10, 10, 10, 10}, 100, 12},
                      typed_usecase{sampler_kind::labor, {3, 5, 1}, 300, 6},
                      typed_usecase{sampler_kind::labor, {-1, 0, 4}, 200, 5},
                      typed_usecase{sampler_kind::labor, {40, 2}, 400, 8}));

TEST(TypedSample, OneRelationIsTheUntypedSampleBitForBit) {
  auto const plain = test::random_graph(500, 9, 17);
  // The same edges as a typed graph with one relation.
  std::vector<vid_t> src, dst;
  for (vid_t s = 0; s < plain.num_nodes; ++s) {
    for (vid_t x : plain.in_neighbors(s)) {
      src.push_back(x);
      dst.push_back(s);
    }
  }
  std::vector<std::int32_t> const rel(src.size(), 0);
  auto const typed = build_csc(plain.num_nodes, src, dst, rel, 1);
  ASSERT_TRUE(typed.typed());
  std::vector<vid_t> seeds(static_cast<std::size_t>(plain.num_nodes));
  std::iota(seeds.begin(), seeds.end(), vid_t{0});
  for (auto kind : {sampler_kind::ns, sampler_kind::labor}) {
    for (int k : {1, 5, 40, -1}) {
      SCOPED_TRACE(::testing::Message() << to_string(kind) << " k = " << k);
      for (bool per_relation : {false, true}) {
        sample_params p{kind, k, 77, 1, 4};
        auto const a = sample_neighbors(exec_context{}, plain, seeds, p);
        if (per_relation) {
          p.fanout = 3;  // ignored: relation_fanouts wins
          p.relation_fanouts = {k};
        }
        auto const b = sample_neighbors(exec_context{}, typed, seeds, p);
        ASSERT_GT(a.nbrs.size(), 0u);
        EXPECT_EQ(a.indptr, b.indptr);
        EXPECT_EQ(a.nbrs, b.nbrs);
        EXPECT_EQ(a.weights, b.weights);
        auto const ba = make_block(plain, seeds, a);
        auto const bb = make_block(typed, seeds, b);
        EXPECT_EQ(bb.num_relations, 1);
        EXPECT_EQ(ba.src_ids, bb.src_ids);
        EXPECT_EQ(ba.indptr, bb.indptr);
        EXPECT_EQ(ba.indices, bb.indices);
        EXPECT_EQ(ba.weights, bb.weights);
        EXPECT_EQ(ba.src_degree, bb.src_degree);
      }
    }
  }
}

/// A star: vertex 0 receives relation 0 from 1..20 and relation 1 from 21..40 (equal segment
/// lengths, so identical keys would pick identical positions), relation 2 from 1..12 (the same
/// sources as relation 0).
test::typed_graph star() {
  test::typed_graph t;
  for (vid_t x = 1; x <= 20; ++x) {
    t.src.push_back(x);
    t.rel.push_back(0);
    t.src.push_back(20 + x);
    t.rel.push_back(1);
  }
  for (vid_t x = 1; x <= 12; ++x) {
    t.src.push_back(x);
    t.rel.push_back(2);
  }
  t.dst.assign(t.src.size(), 0);
  t.g = build_csc(41, t.src, t.dst, t.rel, 3);
  return t;
}

TEST(TypedSample, NsIsUniformWithinEveryRelation) {
  auto const t = star();
  std::vector<int> const k = {5, 5, 4};
  std::vector<std::vector<int>> hits(3, std::vector<int>(41, 0));
  int same_positions = 0;
  int const trials = 3000;
  // Several batches; seed 0 appears twice in the list (sampled identically both times).
  std::vector<vid_t> const seeds = {0, 7, 0};
  for (int b = 0; b < trials; ++b) {
    sample_params p{sampler_kind::ns, 1, 3, 0, static_cast<std::uint32_t>(b)};
    p.relation_fanouts = k;
    auto const s = sample_neighbors(exec_context{}, t.g, seeds, p);
    ASSERT_EQ(s.indptr.size(), 10u);
    for (std::int32_t r = 0; r < 3; ++r) {
      ASSERT_EQ(s.indptr[r + 1] - s.indptr[r], k[static_cast<std::size_t>(r)]);
      for (eid_t e = s.indptr[r]; e < s.indptr[r + 1]; ++e) ++hits[r][s.nbrs[e]];
      // Rows 6..8 repeat seed 0's rows; seed 7 (rows 3..5) has no in-edge.
      ASSERT_TRUE(std::equal(s.nbrs.begin() + s.indptr[r], s.nbrs.begin() + s.indptr[r + 1],
                             s.nbrs.begin() + s.indptr[6 + r]));
      EXPECT_EQ(s.indptr[3 + r + 1], s.indptr[3 + r]);
    }
    bool same = true;
    for (int j = 0; j < 5; ++j) same = same && s.nbrs[j] + 20 == s.nbrs[5 + j];
    same_positions += same ? 1 : 0;
  }
  // Pearson's statistic over the d positions of each relation against p = k / d. Positions of
  // one sample are negatively correlated, so its mean is d (1 - p) <= d - 1: the chi-square
  // (d - 1) tail bound is conservative. 99.99% quantiles: chi2(19) 49.5, chi2(11) 35.7.
  auto chi2 = [&](std::int32_t r, vid_t first, vid_t d) {
    double const expect = trials * static_cast<double>(k[static_cast<std::size_t>(r)]) / d;
    double x = 0;
    for (vid_t v = first; v < first + d; ++v) {
      x += (hits[r][v] - expect) * (hits[r][v] - expect) / expect;
    }
    return x;
  };
  EXPECT_LT(chi2(0, 1, 20), 49.5);
  EXPECT_LT(chi2(1, 21, 20), 49.5);
  EXPECT_LT(chi2(2, 1, 12), 35.7);
  // No relation-0 vertex leaks into relation 1 and back.
  for (vid_t v = 21; v <= 40; ++v) EXPECT_EQ(hits[0][v], 0);
  for (vid_t v = 1; v <= 20; ++v) EXPECT_EQ(hits[1][v], 0);
  // Relations 0 and 1 have equal segments: keyed by the column position, they pick the same
  // positions only by chance (probability 1 / C(20, 5) = 1 / 15504 per batch).
  EXPECT_LT(same_positions, 3);
}

TEST(TypedSample, FanoutZeroGivesEmptyRowsAndBadFanoutsAreRefused) {
  auto const t = test::random_typed_graph(60, 3, 4, 8);
  std::vector<vid_t> const seeds = {1, 4, 0, 9};
  for (auto kind : {sampler_kind::ns, sampler_kind::labor}) {
    sample_params p{kind, 0, 1, 0, 0};
    auto const none = sample_neighbors(exec_context{}, t.g, seeds, p);
    EXPECT_EQ(none.indptr, std::vector<eid_t>(seeds.size() * 3 + 1, 0));
    EXPECT_TRUE(none.nbrs.empty());
    auto const b = make_block(t.g, seeds, none);
    EXPECT_EQ(b.num_relations, 3);
    EXPECT_EQ(b.num_src(), 4);
    EXPECT_EQ(b.num_edges(), 0);
    p.relation_fanouts = {0, 2, 0};
    auto const mid = sample_neighbors(exec_context{}, t.g, seeds, p);
    for (std::size_t i = 0; i < seeds.size(); ++i) {
      EXPECT_EQ(mid.indptr[i * 3 + 1], mid.indptr[i * 3]);
      EXPECT_EQ(mid.indptr[i * 3 + 3], mid.indptr[i * 3 + 2]);
    }
    if (kind == sampler_kind::ns) {
      EXPECT_EQ(mid.indptr[2] - mid.indptr[1], 2) << "the hub keeps 2 of relation 1";
    }
    EXPECT_GT(mid.nbrs.size(), 0u);
    p.relation_fanouts = {1, 2};  // two entries for three relations
    EXPECT_THROW(sample_neighbors(exec_context{}, t.g, seeds, p), logic_error);
    p.relation_fanouts = {1, -2, 3};
    EXPECT_THROW(sample_neighbors(exec_context{}, t.g, seeds, p), logic_error);
  }
  // Untyped graphs still refuse fanout 0.
  auto const plain = test::random_graph(20, 3, 1);
  std::vector<vid_t> const one = {3};
  sample_params p{sampler_kind::ns, 5, 0, 0, 0};
  p.relation_fanouts = {0};
  EXPECT_THROW(sample_neighbors(exec_context{}, plain, one, p), logic_error);
  p.relation_fanouts = {2, 2};
  EXPECT_THROW(sample_neighbors(exec_context{}, plain, one, p), logic_error);
  // make_block wants n * R rows.
  auto const s = sample_neighbors(exec_context{}, plain, one, {sampler_kind::ns, 2, 0, 0, 0});
  EXPECT_THROW(make_block(t.g, one, s), logic_error);
}

/// The invariants of a typed block (block.hpp) against the graph's raw edge list: R rows per
/// destination, src_ids destinations first then the other sources ascending and unique, every
/// edge of row i * R + r an edge of relation r into destination i, weights summing to 1 per
/// non-empty row, src_degree the total in-degree.
void validate_typed_block(const block& b, const test::typed_graph& t, std::span<const vid_t> dst) {
  std::int32_t const R = t.g.num_relations;
  ASSERT_EQ(b.num_relations, R);
  ASSERT_NO_THROW((void)view(b));
  ASSERT_EQ(b.num_dst, static_cast<std::int64_t>(dst.size()));
  ASSERT_EQ(b.indptr.size(), dst.size() * R + 1);
  for (std::size_t i = 0; i < dst.size(); ++i) ASSERT_EQ(b.src_ids[i], dst[i]);
  std::set<vid_t> const uniq(b.src_ids.begin(), b.src_ids.end());
  EXPECT_EQ(uniq.size(), b.src_ids.size()) << "source list has duplicates";
  EXPECT_TRUE(std::is_sorted(b.src_ids.begin() + b.num_dst, b.src_ids.end()));
  std::set<std::tuple<vid_t, vid_t, std::int32_t>> edges;
  std::map<vid_t, std::int64_t> degree;
  for (std::size_t e = 0; e < t.src.size(); ++e) {
    edges.insert({t.src[e], t.dst[e], t.rel[e]});
    ++degree[t.dst[e]];
  }
  std::vector<bool> used(b.src_ids.size(), false);
  for (std::int64_t q = 0; q < b.num_dst * R; ++q) {
    vid_t const s = b.src_ids[static_cast<std::size_t>(q / R)];
    auto const r = static_cast<std::int32_t>(q % R);
    float sum = 0;
    for (eid_t e = b.indptr[q]; e < b.indptr[q + 1]; ++e) {
      ASSERT_GE(b.indices[e], 0);
      ASSERT_LT(b.indices[e], b.num_src());
      vid_t const x = b.src_ids[static_cast<std::size_t>(b.indices[e])];
      used[static_cast<std::size_t>(b.indices[e])] = true;
      EXPECT_TRUE(edges.count({x, s, r})) << x << " -> " << s << " is no relation-" << r << " edge";
      sum += b.weights[e];
    }
    if (b.indptr[q + 1] > b.indptr[q]) {
      EXPECT_NEAR(sum, 1.0f, 1e-5f) << "row " << q;
    }
  }
  for (std::int64_t i = b.num_dst; i < b.num_src(); ++i) EXPECT_TRUE(used[i]) << "unused source";
  for (std::int64_t i = 0; i < b.num_src(); ++i) {
    EXPECT_EQ(b.src_degree[i], degree[b.src_ids[i]]);
  }
}

TEST(TypedBlock, KeepsTheBlockInvariantsOnEveryBackendEntry) {
  auto const t = test::random_typed_graph(300, 3, 5, 12);
  std::vector<vid_t> const dst = {17, 1, 250, 3, 99, 0, 2};
  for (auto kind : {sampler_kind::ns, sampler_kind::labor}) {
    SCOPED_TRACE(to_string(kind));
    sample_params p{kind, 4, 5, 0, 0};
    p.relation_fanouts = {4, -1, 2};
    auto const s = sample_neighbors(exec_context{}, t.g, dst, p);
    auto const b = make_block(t.g, dst, s);
    validate_typed_block(b, t, dst);
    ASSERT_EQ(b.indptr, s.indptr);
    for (std::int64_t e = 0; e < b.num_edges(); ++e) EXPECT_EQ(b.src_ids[b.indices[e]], s.nbrs[e]);
    EXPECT_GT(b.num_src(), b.num_dst);
    // The entries of every backend (sampling.hpp) on the host, from an uploaded graph.
    exec_context const ctx;
    auto const placed = upload_graph(ctx, t.g);
    csc_view const gv = placed.view();
    EXPECT_EQ(gv.num_relations, 3);
    EXPECT_TRUE(gv.typed());
    auto const ds = upload<vid_t>(ctx, dst);
    auto const sb = sample_neighbors(ctx, gv, ds.view(), p);
    block_buffers const bb = make_block(ctx, gv, ds.view(), sb);
    EXPECT_EQ(bb.num_relations, 3);
    EXPECT_EQ(bb.view().num_rows(), static_cast<std::int64_t>(dst.size()) * 3);
    block const h = to_host(ctx, bb);
    EXPECT_EQ(h.num_relations, 3);
    EXPECT_EQ(h.src_ids, b.src_ids);
    EXPECT_EQ(h.indptr, b.indptr);
    EXPECT_EQ(h.indices, b.indices);
    EXPECT_EQ(h.weights, b.weights);
    EXPECT_EQ(to_host(ctx, copy_block(ctx, bb)).num_relations, 3);
    EXPECT_EQ(upload_block(ctx, b).num_relations, 3);
    // Edge exclusion on a typed sample: row q = i R + r drops t -> dst[i] exactly when the key
    // (t << 32) | (dst[i] R + r) (written out here) is listed, so an edge of one relation is
    // never dropped for the same pair's key under another (the hub, vertex 1, has both).
    auto const hs = s;  // the host sample
    std::int64_t const Rr = 3;
    std::vector<std::uint64_t> keys;
    for (std::int64_t q = 0; q < static_cast<std::int64_t>(dst.size()) * Rr; ++q) {
      for (eid_t e = hs.indptr[q]; e < hs.indptr[q + 1]; ++e) {
        if (e % 3 != 0) continue;
        auto const sd = static_cast<std::uint64_t>(dst[static_cast<std::size_t>(q / Rr)]);
        keys.push_back((static_cast<std::uint64_t>(hs.nbrs[e]) << 32) |
                       (sd * Rr + static_cast<std::uint64_t>(q % Rr)));
      }
    }
    std::sort(keys.begin(), keys.end());
    keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
    EXPECT_EQ(edge_exclusion_key(5, 7, 2, 3), (std::uint64_t{5} << 32) | 23u);
    EXPECT_EQ(edge_exclusion_key(5, 7, 0, 1), edge_exclusion_key(5, 7));
    EXPECT_THROW((void)edge_exclusion_key(5, 7, 3, 3), logic_error);
    EXPECT_THROW((void)edge_exclusion_key(5, vid_t{1} << 31, 1, 2), logic_error);
    // The largest s R + r that fits 32 bits is accepted, one more is not (R = 3: 3 s + r <=
    // 2^32 - 1 = 4294967295 means s <= 1431655765 for r = 0, s <= 1431655764 for r = 1, 2).
    EXPECT_EQ(edge_exclusion_key(5, 1431655765, 0, 3), (std::uint64_t{5} << 32) | 0xFFFFFFFFu);
    EXPECT_THROW((void)edge_exclusion_key(5, 1431655765, 1, 3), logic_error);
    EXPECT_EQ(edge_exclusion_key(5, 1431655764, 2, 3), (std::uint64_t{5} << 32) | 0xFFFFFFFEu);
    EXPECT_THROW((void)edge_exclusion_key(5, 1431655766, 0, 3), logic_error);
    auto const dk = upload<std::uint64_t>(ctx, keys);
    auto const ex = exclude_edges(ctx, ds.view(), sb, dk.view());
    auto const ip = download<eid_t>(ctx, ex.indptr.view());
    auto const nb = download<vid_t>(ctx, ex.nbrs.view());
    ASSERT_EQ(ip.size(), dst.size() * 3 + 1);
    std::int64_t dropped = 0, kept_other_relation = 0;
    std::set<std::pair<vid_t, vid_t>> dropped_pairs;
    for (std::int64_t q = 0; q < static_cast<std::int64_t>(dst.size()) * Rr; ++q) {
      std::vector<vid_t> expect;
      auto const sd = static_cast<std::uint64_t>(dst[static_cast<std::size_t>(q / Rr)]);
      for (eid_t e = hs.indptr[q]; e < hs.indptr[q + 1]; ++e) {
        auto const key = (static_cast<std::uint64_t>(hs.nbrs[e]) << 32) |
                         (sd * Rr + static_cast<std::uint64_t>(q % Rr));
        if (std::binary_search(keys.begin(), keys.end(), key)) {
          ++dropped;
          dropped_pairs.emplace(hs.nbrs[e], static_cast<vid_t>(sd));
        } else {
          expect.push_back(hs.nbrs[e]);
        }
      }
      std::vector<vid_t> const got(nb.begin() + ip[q], nb.begin() + ip[q + 1]);
      EXPECT_EQ(got, expect) << "row " << q;
    }
    for (std::int64_t q = 0; q < static_cast<std::int64_t>(dst.size()) * Rr; ++q) {
      auto const sd = dst[static_cast<std::size_t>(q / Rr)];
      for (eid_t e = ip[q]; e < ip[q + 1]; ++e) {
        kept_other_relation += static_cast<std::int64_t>(dropped_pairs.count({nb[e], sd}));
      }
    }
    EXPECT_GT(dropped, 0);
    if (kind == sampler_kind::ns) {  // NS keeps hub 1's pairs in several relations' rows
      EXPECT_GT(kept_other_relation, 0) << "no pair dropped in one relation and kept in another";
    }
  }
}

}  // namespace
}  // namespace coopgnn
