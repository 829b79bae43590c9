// NS by Floyd's algorithm with keyed draws (kernels/sample/ns_floyd.hpp, docs/design.md section
// 4.2): the sampler against a brute-force reference written here from the documented rule, the
// uniformity of the kept k-subsets (chi-square), per-position inclusion k / d, thread-count
// independence, edge cases (k = 1, k = d - 1, k > 32, k in the thousands, a huge degree next to
// zero degrees), and make_block against a sort-based reference (both of its id maps).
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <set>
#include <vector>

#include "kernels/sample/ns_floyd.hpp"
#include "kernels/sample/sample.hpp"
#include "runtime/core/error.hpp"
#include "runtime/core/rng.hpp"
#include "tests/common/graphs.hpp"

namespace coopgnn {
namespace {

/// The documented rule, independently: r_j = floor(u * (j + 1) / 2^64) with u the 64-bit word
/// pair (w1 << 32 | w0) of draw4(stream(run_seed, ns, layer), s, j, batch), computed with a
/// 128-bit product; Floyd with a std::set; positions ascending.
std::vector<std::uint32_t> floyd_reference(std::uint64_t run_seed, std::uint32_t layer,
                                           std::uint32_t batch, vid_t s, std::uint32_t d,
                                           std::uint32_t k) {
  auto const st = rng::make_stream(run_seed, rng::purpose::ns, layer);
  std::set<std::uint32_t> chosen;
  for (std::uint32_t j = d - k; j < d; ++j) {
    auto const w = rng::draw4(st, static_cast<std::uint64_t>(s), j, batch);
    unsigned __int128 const u = (static_cast<unsigned __int128>(w[1]) << 32) | w[0];
    auto const r = static_cast<std::uint32_t>((u * (static_cast<unsigned __int128>(j) + 1)) >> 64);
    EXPECT_LE(r, j);
    if (!chosen.insert(r).second) chosen.insert(j);
  }
  return {chosen.begin(), chosen.end()};
}

/// The whole NS sample of `seeds` by the reference.
sampled_neighbors ns_reference(const csc_graph& g, std::span<const vid_t> seeds,
                               const sample_params& p) {
  sampled_neighbors out;
  out.indptr.push_back(0);
  for (vid_t s : seeds) {
    auto const nb = g.in_neighbors(s);
    auto const d = static_cast<std::uint32_t>(nb.size());
    std::vector<std::uint32_t> pos;
    if (p.fanout < 0 || d <= static_cast<std::uint32_t>(p.fanout)) {
      pos.resize(d);
      std::iota(pos.begin(), pos.end(), 0u);
    } else {
      pos =
          floyd_reference(p.run_seed, p.layer, p.batch, s, d, static_cast<std::uint32_t>(p.fanout));
    }
    for (auto j : pos) {
      out.nbrs.push_back(nb[j]);
      out.weights.push_back(1.0f / static_cast<float>(pos.size()));
    }
    out.indptr.push_back(static_cast<eid_t>(out.nbrs.size()));
  }
  return out;
}

/// A graph where vertex v < n_hubs has in-neighbours n_hubs .. n_hubs + degree[v] - 1.
csc_graph star_graph(const std::vector<vid_t>& degree) {
  vid_t const hubs = static_cast<vid_t>(degree.size());
  vid_t const leaves = *std::max_element(degree.begin(), degree.end());
  std::vector<vid_t> src, dst;
  for (vid_t v = 0; v < hubs; ++v) {
    for (vid_t t = 0; t < degree[v]; ++t) {
      src.push_back(hubs + t);
      dst.push_back(v);
    }
  }
  return build_csc(hubs + leaves, src, dst);
}

void expect_same(const sampled_neighbors& a, const sampled_neighbors& b, const char* what) {
  EXPECT_EQ(a.indptr, b.indptr) << what;
  EXPECT_EQ(a.nbrs, b.nbrs) << what;
  EXPECT_EQ(a.weights, b.weights) << what;
}

TEST(NsFloyd, TableSizeIsTheSmallestPowerOfTwoOfTwiceKAndStopsAt2To31) {
  EXPECT_EQ(ns_floyd_table_size(32), 0u);  // linear scan
  EXPECT_EQ(ns_floyd_table_size(33), 128u);
  EXPECT_EQ(ns_floyd_table_size(64), 128u);
  EXPECT_EQ(ns_floyd_table_size(1u << 30), 1u << 31);
  // 2 k overflows 32 bits here: the loop used to double t past 2^31 to 0 and never end (a
  // CUDA sampler sized its table by the largest fanout, --fanouts 2000000000).
  EXPECT_EQ(ns_floyd_table_size((1u << 30) + 1), 1u << 31);
  EXPECT_EQ(ns_floyd_table_size(2000000000u), 1u << 31);
}

TEST(NsFloyd, DrawIsInRangeAndMatchesThe128BitProduct) {
  auto const st = rng::make_stream(9, rng::purpose::ns, 2);
  for (std::uint32_t j : {0u, 1u, 2u, 5u, 1000u, 65535u, 4294967294u}) {
    for (std::uint64_t s = 0; s < 50; ++s) {
      auto const w = rng::draw4(st, s, j, 3);
      unsigned __int128 const u = (static_cast<unsigned __int128>(w[1]) << 32) | w[0];
      auto const expect =
          static_cast<std::uint32_t>((u * (static_cast<unsigned __int128>(j) + 1)) >> 64);
      auto const r = ns_floyd_draw(st, s, j, 3);
      EXPECT_EQ(r, expect) << "j " << j << " s " << s;
      EXPECT_LE(r, j);
    }
  }
}

TEST(NsFloyd, SamplerEqualsTheReferenceForEveryFanout) {
  // k = 1, small k, k = 32 (last linear scan), 33 (first hash set), k = d - 1, k >= d, all.
  auto const g = test::random_graph(600, 40, 21);
  std::vector<vid_t> seeds(600);
  std::iota(seeds.begin(), seeds.end(), 0);
  seeds.push_back(1);  // a duplicate (the hub)
  for (int k : {1, 2, 10, 32, 33, 39, 64, 598, 599, 700, -1}) {
    sample_params const p{sampler_kind::ns, k, 77, 1, 5};
    auto const got = sample_neighbors(exec_context{}, g, seeds, p);
    expect_same(got, ns_reference(g, seeds, p), "fanout");
  }
}

TEST(NsFloyd, AFanoutAboveEveryDegreeTakesEveryNeighbourWithoutScratchOfItsSize) {
  // 2^30 exceeds every degree (at most a few dozen here): every neighbour is taken, exactly as
  // with -1, and the sampler's scratch follows the k it draws, not the fanout (a scratch of the
  // fanout's size would be 4 GiB per thread and more for the hash set).
  auto const g = test::random_graph(300, 40, 5);
  std::vector<vid_t> seeds(300);
  std::iota(seeds.begin(), seeds.end(), 0);
  sample_params const all{sampler_kind::ns, -1, 77, 1, 5};
  sample_params const huge{sampler_kind::ns, 1 << 30, 77, 1, 5};
  auto const want = sample_neighbors(exec_context{}, g, seeds, all);
  auto const got = sample_neighbors(exec_context{}, g, seeds, huge);
  EXPECT_EQ(got.indptr, want.indptr);
  EXPECT_EQ(got.nbrs, want.nbrs);
  EXPECT_EQ(got.weights, want.weights);
}

TEST(NsFloyd, LargeFanoutOfAHugeDegreeNextToZeroDegrees) {
  // Vertex 0: degree 5000; vertices 1 and 3: degree 0; vertex 2: degree 100000.
  auto const g = star_graph({5000, 0, 100000, 0});
  std::vector<vid_t> seeds = {1, 0, 2, 3, 0, 2};
  for (int k : {1, 10, 3000, 4999}) {
    sample_params const p{sampler_kind::ns, k, 3, 0, 11};
    auto const got = sample_neighbors(exec_context{}, g, seeds, p);
    expect_same(got, ns_reference(g, seeds, p), "k");
    auto const cnt = [&](std::size_t i) { return got.indptr[i + 1] - got.indptr[i]; };
    EXPECT_EQ(cnt(0), 0);
    EXPECT_EQ(cnt(1), k);
    EXPECT_EQ(cnt(2), k);
    EXPECT_EQ(cnt(3), 0);
    std::set<vid_t> const distinct(got.nbrs.begin() + got.indptr[1],
                                   got.nbrs.begin() + got.indptr[2]);
    EXPECT_EQ(static_cast<int>(distinct.size()), k);
    EXPECT_TRUE(std::is_sorted(got.nbrs.begin() + got.indptr[2], got.nbrs.begin() + got.indptr[3]))
        << "positions are not ascending";
  }
}

/// Index of a sorted k-subset of [0, d) in the colexicographic order (a bijection onto
/// [0, C(d, k))), for d <= 20.
int subset_index(const std::vector<std::uint32_t>& pos) {
  auto binom = [](int n, int r) {
    if (r < 0 || r > n) return 0;
    long long v = 1;
    for (int i = 1; i <= r; ++i) v = v * (n - r + i) / i;
    return static_cast<int>(v);
  };
  int idx = 0;
  for (std::size_t i = 0; i < pos.size(); ++i) idx += binom(static_cast<int>(pos[i]), i + 1);
  return idx;
}

TEST(NsFloyd, KSubsetsAreUniformByChiSquare) {
  // 2000 seeds of degree 6, 12 batches each: 24000 samples of a k-subset of 6 positions.
  // Chi-square against the uniform law over the C(6, k) subsets; the thresholds are the
  // 1 - 1e-4 quantiles, slightly high (Wilson-Hilferty: df 14 -> 42.9, df 19 -> 51.1, df 5
  // -> 26.3), so a correct sampler fails with probability below about 1e-4 (and these fixed keys
  // pass).
  std::vector<vid_t> degree(2000, 6);
  auto const g = star_graph(degree);
  std::vector<vid_t> seeds(2000);
  std::iota(seeds.begin(), seeds.end(), 0);
  for (auto [k, subsets, threshold] :
       {std::tuple{2, 15, 42.9}, std::tuple{3, 20, 51.1}, std::tuple{5, 6, 26.3}}) {
    std::vector<double> counts(static_cast<std::size_t>(subsets), 0.0);
    double samples = 0;
    for (std::uint32_t batch = 0; batch < 12; ++batch) {
      auto const s =
          sample_neighbors(exec_context{}, g, seeds, {sampler_kind::ns, k, 2024, 0, batch * 7919u});
      for (std::size_t i = 0; i < seeds.size(); ++i) {
        std::vector<std::uint32_t> pos;
        for (eid_t e = s.indptr[i]; e < s.indptr[i + 1]; ++e) {
          pos.push_back(static_cast<std::uint32_t>(s.nbrs[e] - 2000));  // leaf t is position t
        }
        ASSERT_EQ(static_cast<int>(pos.size()), k);
        int const idx = subset_index(pos);
        ASSERT_GE(idx, 0);
        ASSERT_LT(idx, subsets);
        counts[static_cast<std::size_t>(idx)] += 1;
        samples += 1;
      }
    }
    double const expected = samples / subsets;
    double chi2 = 0;
    for (double c : counts) chi2 += (c - expected) * (c - expected) / expected;
    EXPECT_LT(chi2, threshold) << "k " << k << ": kept subsets are not uniform";
    EXPECT_GT(chi2, 0.0);
  }
}

TEST(NsFloyd, EveryPositionIsKeptWithProbabilityKOverD) {
  // d = 1000, k = 10, 4000 batches: each position expected 40 times. Chi-square over the 1000
  // positions (df 999): the 1 - 1e-4 quantile is 1174 (Wilson-Hilferty). Also the first and the
  // last positions (Floyd treats j = d - 1 specially) within 5 sd of 40.
  auto const g = star_graph({1000});
  std::vector<vid_t> seeds = {0};
  std::vector<double> hits(1000, 0.0);
  int const trials = 4000;
  for (int b = 0; b < trials; ++b) {
    auto const s = sample_neighbors(exec_context{}, g, seeds,
                                    {sampler_kind::ns, 10, 5, 2, static_cast<std::uint32_t>(b)});
    for (vid_t t : s.nbrs) hits[static_cast<std::size_t>(t - 1)] += 1;
  }
  double const expected = trials * 10.0 / 1000.0;
  double chi2 = 0;
  for (double h : hits) chi2 += (h - expected) * (h - expected) / expected;
  EXPECT_LT(chi2, 1174.0);
  for (std::size_t j : {std::size_t{0}, std::size_t{1}, std::size_t{990}, std::size_t{999}}) {
    EXPECT_NEAR(hits[j], expected, 5 * std::sqrt(expected)) << "position " << j;
  }
}

TEST(NsFloyd, IdenticalForAnyThreadCount) {
  // Enough seeds (256 per chunk) that 7 threads really split them; duplicates included.
  auto const g = test::random_graph(3000, 25, 4);
  std::vector<vid_t> seeds;
  for (vid_t v = 0; v < 3000; ++v) seeds.push_back((v * 7) % 3000);
  for (vid_t v = 0; v < 600; ++v) seeds.push_back(v);
  for (auto kind : {sampler_kind::ns, sampler_kind::labor}) {
    for (std::int64_t kappa : {1, 8}) {
      sample_params p{kind, 10, 8, 1, 13};
      p.dependency.batch_dependency = kappa;
      auto const one = sample_neighbors(exec_context(backend::host, 0, 1), g, seeds, p);
      if (kind == sampler_kind::ns) expect_same(one, ns_reference(g, seeds, p), "reference");
      for (int t : {2, 3, 7}) {
        expect_same(one, sample_neighbors(exec_context(backend::host, 0, t), g, seeds, p),
                    "threads");
      }
    }
  }
}

/// Unique-and-compact by sorting, from block.hpp's contract.
block block_reference(const csc_graph& g, const std::vector<vid_t>& dst,
                      const sampled_neighbors& s) {
  block b;
  b.num_dst = static_cast<std::int64_t>(dst.size());
  std::map<vid_t, std::int64_t> local;
  for (std::size_t i = 0; i < dst.size(); ++i) local[dst[i]] = static_cast<std::int64_t>(i);
  std::set<vid_t> others;
  for (vid_t t : s.nbrs) {
    if (!local.count(t)) others.insert(t);
  }
  b.src_ids = dst;
  for (vid_t t : others) {
    local[t] = static_cast<std::int64_t>(b.src_ids.size());
    b.src_ids.push_back(t);
  }
  b.indptr = s.indptr;
  b.weights = s.weights;
  for (vid_t t : s.nbrs) b.indices.push_back(local.at(t));
  for (vid_t v : b.src_ids) b.src_degree.push_back(g.in_degree(v));
  return b;
}

void expect_same_block(const block& a, const block& b) {
  EXPECT_EQ(a.num_dst, b.num_dst);
  EXPECT_EQ(a.src_ids, b.src_ids);
  EXPECT_EQ(a.indptr, b.indptr);
  EXPECT_EQ(a.indices, b.indices);
  EXPECT_EQ(a.weights, b.weights);
  EXPECT_EQ(a.src_degree, b.src_degree);
}

TEST(NsFloyd, MakeBlockEqualsASortBasedReference) {
  // Small |V| (the dense id map; many sources: ordered by a scan) and few dst (sorted others).
  auto const g = test::random_graph(2000, 12, 17);
  for (std::size_t n : {std::size_t{3}, std::size_t{50}, std::size_t{1500}}) {
    std::vector<vid_t> dst;
    for (std::size_t i = 0; i < n; ++i) dst.push_back(static_cast<vid_t>((i * 37 + 5) % 2000));
    for (int k : {3, -1}) {
      auto const s = sample_neighbors(exec_context{}, g, dst, {sampler_kind::ns, k, 1, 0, 2});
      expect_same_block(make_block(g, dst, s), block_reference(g, dst, s));
    }
  }
  // A duplicate destination is rejected, and the map is clean for the next call.
  std::vector<vid_t> dup = {4, 9, 4};
  auto const sd = sample_neighbors(exec_context{}, g, dup, {sampler_kind::ns, 3, 1, 0, 2});
  EXPECT_THROW(make_block(g, dup, sd), logic_error);
  std::vector<vid_t> ok = {9, 4};
  auto const so = sample_neighbors(exec_context{}, g, ok, {sampler_kind::ns, 3, 1, 0, 2});
  expect_same_block(make_block(g, ok, so), block_reference(g, ok, so));
}

TEST(NsFloyd, MakeBlockOnAHugeGraphUsesTheHashMapAndAgrees) {
  // |V| = 2^22 + 100 > max(2^22, 8 (n + E)): the open-addressing id map.
  vid_t const n = (vid_t{1} << 22) + 100;
  std::vector<vid_t> src, dst;
  for (vid_t v = 0; v < 200; ++v) {
    for (vid_t j = 1; j <= 15; ++j) {
      src.push_back((v * 104729 + j * 7777777) % n);
      dst.push_back(n - 1 - v * 3);
    }
  }
  auto const g = build_csc(n, src, dst);
  std::vector<vid_t> seeds;
  for (vid_t v = 0; v < 200; ++v) seeds.push_back(n - 1 - v * 3);
  seeds.push_back(src[5]);  // a destination that is also a sampled source
  auto const s = sample_neighbors(exec_context{}, g, seeds, {sampler_kind::ns, 6, 4, 0, 1});
  expect_same_block(make_block(g, seeds, s), block_reference(g, seeds, s));
  std::vector<vid_t> dup = {seeds[0], seeds[0]};
  auto const sd = sample_neighbors(exec_context{}, g, dup, {sampler_kind::ns, 6, 4, 0, 1});
  EXPECT_THROW(make_block(g, dup, sd), logic_error);
}

}  // namespace
}  // namespace coopgnn
