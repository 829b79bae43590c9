// TMA partitioners (runtime/graph/partition.hpp): RandomTMA parts uniform (chi-square) and keyed
// by the seed; SuperTMA's dealing within +-1; METIS separating disconnected cliques; the summary
// against brute-force counts on hand-made graphs; errors naming the option.
#include "runtime/graph/partition.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "runtime/core/error.hpp"
#include "runtime/graph/dataset.hpp"
#include "runtime/graph/npy.hpp"
#include "tests/common/files.hpp"

namespace coopgnn {
namespace {

using test::error_of;
using ::testing::HasSubstr;

#define SKIP_WITHOUT_METIS() \
  if (!metis_available()) GTEST_SKIP() << "built without METIS (COOPGNN_METIS)"

/// Pearson's chi-square statistic of `counts` against equal expected counts.
double chi_square_uniform(const std::vector<std::int64_t>& counts) {
  double total = 0;
  for (auto c : counts) total += static_cast<double>(c);
  double const expected = total / static_cast<double>(counts.size());
  double x2 = 0;
  for (auto c : counts) x2 += (c - expected) * (c - expected) / expected;
  return x2;
}

std::vector<std::int64_t> histogram(const std::vector<std::int32_t>& parts, int m) {
  std::vector<std::int64_t> h(static_cast<std::size_t>(m), 0);
  for (auto p : parts) {
    EXPECT_GE(p, 0);
    EXPECT_LT(p, m);
    if (p >= 0 && p < m) ++h[p];
  }
  return h;
}

/// Undirected edges (both directions stored) of a clique on [first, first + k).
void add_clique(dataset& ds, vid_t first, vid_t k) {
  for (vid_t u = first; u < first + k; ++u) {
    for (vid_t v = first; v < first + k; ++v) {
      if (u == v) continue;
      ds.src.push_back(u);
      ds.dst.push_back(v);
    }
  }
}

TEST(RandomParts, UniformChiSquare) {
  // 99.9% quantiles of chi-square with M - 1 degrees of freedom.
  std::map<int, double> const crit = {{2, 10.83}, {3, 13.82}, {7, 22.46}, {8, 24.32}};
  for (auto [m, c] : crit) {
    auto const parts = random_parts(40000, m, 11);
    ASSERT_EQ(parts.size(), 40000u);
    auto const h = histogram(parts, m);
    EXPECT_LT(chi_square_uniform(h), c) << "M = " << m;
  }
  // Independent of the vertex id: the parts of even and of odd vertices are both uniform.
  auto const parts = random_parts(40000, 3, 5);
  std::vector<std::int64_t> even(3, 0), odd(3, 0);
  for (std::size_t v = 0; v < parts.size(); ++v) ++(v % 2 == 0 ? even : odd)[parts[v]];
  EXPECT_LT(chi_square_uniform(even), 13.82);
  EXPECT_LT(chi_square_uniform(odd), 13.82);
}

TEST(RandomParts, DeterministicPerSeed) {
  auto const a = random_parts(5000, 3, 7);
  auto const b = random_parts(5000, 3, 7);
  auto const c = random_parts(5000, 3, 8);
  EXPECT_EQ(a, b);
  int differ = 0;
  for (std::size_t v = 0; v < a.size(); ++v) differ += a[v] != c[v];
  EXPECT_GT(differ, 2000) << "another seed should give other parts (expect 2/3 differ)";
  EXPECT_EQ(random_parts(100, 1, 3), std::vector<std::int32_t>(100, 0));
  EXPECT_TRUE(random_parts(0, 4, 3).empty());
  // A prefix of the vertices gets the same parts: each vertex is decided on its own.
  auto const prefix = random_parts(1000, 3, 7);
  EXPECT_TRUE(std::equal(prefix.begin(), prefix.end(), a.begin()));
}

TEST(DealClusters, CountsWithinOneAndDeterministic) {
  struct usecase {
    std::int32_t n;
    std::int32_t m;
  };
  for (auto [n, m] : {usecase{10, 3}, usecase{15000, 3}, usecase{7, 7}, usecase{100, 8},
                      usecase{33, 32}, usecase{31, 1}, usecase{1001, 4}}) {
    auto const a = deal_clusters(n, m, 3);
    auto const b = deal_clusters(n, m, 3);
    EXPECT_EQ(a, b);
    ASSERT_EQ(static_cast<std::int32_t>(a.size()), n);
    auto const h = histogram(a, m);
    std::int64_t const q = n / m;
    std::int64_t extra = 0;
    for (auto c : h) {
      EXPECT_TRUE(c == q || c == q + 1) << "N " << n << " M " << m << ": a part got " << c;
      extra += c == q + 1 ? 1 : 0;
    }
    EXPECT_EQ(extra, n % m) << "N " << n << " M " << m;
  }
  // Another seed deals differently, and the dealing is not by cluster id ranges.
  auto const a = deal_clusters(300, 3, 1);
  auto const c = deal_clusters(300, 3, 2);
  int differ = 0, changes = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    differ += a[i] != c[i];
    changes += i > 0 && a[i] != a[i - 1];
  }
  EXPECT_GT(differ, 100);
  EXPECT_GT(changes, 100);
}

TEST(DealClusters, ExtraClusterGoesToEveryPartAlike) {
  // N = 10, M = 3: one part of three gets 4 clusters; over seeds each part about 1/3 of the time.
  std::vector<std::int64_t> got_extra(3, 0);
  for (std::uint64_t seed = 0; seed < 600; ++seed) {
    auto const h = histogram(deal_clusters(10, 3, seed), 3);
    for (int k = 0; k < 3; ++k) got_extra[k] += h[k] == 4 ? 1 : 0;
  }
  EXPECT_LT(chi_square_uniform(got_extra), 13.82);
  for (auto g : got_extra) EXPECT_GT(g, 100);
}

TEST(MetisClusters, TwoDisconnectedCliquesSeparate) {
  SKIP_WITHOUT_METIS();
  dataset ds;
  ds.num_nodes = 14;
  add_clique(ds, 0, 7);
  add_clique(ds, 7, 7);
  ds.src.push_back(3);  // a self-loop and a duplicate: METIS must not see them
  ds.dst.push_back(3);
  ds.src.push_back(0);
  ds.dst.push_back(1);
  for (bool balance : {false, true}) {
    auto const part = metis_clusters(ds.num_nodes, ds.src, ds.dst, 2, {balance, 5});
    ASSERT_EQ(part.size(), 14u);
    std::int64_t cut = 0;
    for (std::size_t e = 0; e < ds.src.size(); ++e) cut += part[ds.src[e]] != part[ds.dst[e]];
    EXPECT_EQ(cut, 0) << "balance_edges " << balance;
    EXPECT_NE(part[0], part[7]);
    EXPECT_EQ(part, metis_clusters(ds.num_nodes, ds.src, ds.dst, 2, {balance, 5}));
  }
  // Through run_partition (PSGD-PA), on a directed copy (one direction only): the symmetrised
  // graph is the same.
  dataset directed = ds;
  directed.src.clear();
  directed.dst.clear();
  for (std::size_t e = 0; e < ds.src.size(); ++e) {
    if (ds.src[e] < ds.dst[e]) {
      directed.src.push_back(ds.src[e]);
      directed.dst.push_back(ds.dst[e]);
    }
  }
  auto const res = run_partition(directed, {partition_scheme::metis, 2, {}, 1});
  EXPECT_EQ(res.num_clusters, 2);
  for (vid_t v = 0; v < 7; ++v) EXPECT_EQ(res.parts[v], res.parts[0]);
  for (vid_t v = 7; v < 14; ++v) EXPECT_EQ(res.parts[v], res.parts[7]);
  EXPECT_NE(res.parts[0], res.parts[7]);
  EXPECT_GE(res.seconds, 0.0);
}

TEST(MetisClusters, OneClusterAndEdgelessGraph) {
  SKIP_WITHOUT_METIS();
  std::vector<vid_t> const none;
  EXPECT_EQ(metis_clusters(5, none, none, 1), std::vector<std::int32_t>(5, 0));
  // No edges: METIS still returns ids in range (edge balance falls back to unit weights).
  for (bool balance : {false, true}) {
    auto const part = metis_clusters(40, none, none, 4, {balance, 1});
    auto const h = histogram(part, 4);
    for (auto c : h) EXPECT_GT(c, 0);
  }
}

TEST(SuperPartition, EveryVertexInRangeAndBalanced) {
  SKIP_WITHOUT_METIS();
  // 60 cliques of 10 joined in a ring by one edge each: 600 vertices, N = 60 clusters.
  dataset ds;
  ds.num_nodes = 600;
  for (vid_t c = 0; c < 60; ++c) {
    add_clique(ds, 10 * c, 10);
    vid_t const u = 10 * c + 9;
    vid_t const v = (10 * (c + 1)) % 600;
    ds.src.insert(ds.src.end(), {u, v});
    ds.dst.insert(ds.dst.end(), {v, u});
  }
  for (std::int32_t m : {1, 2, 3, 7}) {
    auto const res = run_partition(ds, {partition_scheme::super, m, 60, 9});
    EXPECT_EQ(res.num_clusters, 60);
    ASSERT_EQ(res.parts.size(), 600u);
    auto const h = histogram(res.parts, m);
    for (auto c : h) {
      EXPECT_GT(c, 0.75 * 600.0 / m) << "M " << m;
      EXPECT_LT(c, 1.25 * 600.0 / m) << "M " << m;
    }
    EXPECT_EQ(res.parts, run_partition(ds, {partition_scheme::super, m, 60, 9}).parts);
  }
  // The default N: min(15000, |V| / 8) = 75, with the reason printed.
  auto const res = run_partition(ds, {partition_scheme::super, 3, {}, 1});
  EXPECT_EQ(res.num_clusters, 75);
  EXPECT_THAT(res.clusters_reason, HasSubstr("|V| / 8 = 75"));
  // Clusters keep most edges: r well above RandomTMA's 1/M.
  auto const rep = partition_summary(ds, res.parts, 3);
  EXPECT_GT(rep.kept_ratio, 0.6);
}

/// A hand-made dataset: 8 vertices, labels over 3 classes (one unlabeled), directed edges with a
/// self-loop and a duplicate, features [8, 2].
dataset hand_made() {
  dataset ds;
  ds.name = "hand";
  ds.num_nodes = 8;
  std::vector<std::pair<vid_t, vid_t>> const e = {{0, 1}, {1, 0}, {1, 2}, {2, 3}, {3, 3},
                                                  {4, 5}, {5, 6}, {6, 7}, {7, 4}, {0, 7},
                                                  {2, 5}, {2, 5}, {6, 1}};
  for (auto [u, v] : e) {
    ds.src.push_back(u);
    ds.dst.push_back(v);
  }
  ds.labels = {0, 1, 1, 2, 0, 0, -1, 2};
  ds.num_classes = 3;
  ds.features = matrix<float>(8, 2);
  for (vid_t v = 0; v < 8; ++v) {
    ds.features(v, 0) = static_cast<float>(v);
    ds.features(v, 1) = static_cast<float>(v * v % 5);
  }
  return ds;
}

/// Brute force: edges with both endpoints in the vertex set of part k.
std::int64_t kept_brute(const std::vector<vid_t>& src, const std::vector<vid_t>& dst,
                        const std::vector<std::int32_t>& parts, std::int32_t k) {
  std::set<vid_t> members;
  for (std::size_t v = 0; v < parts.size(); ++v) {
    if (parts[v] == k) members.insert(static_cast<vid_t>(v));
  }
  std::int64_t n = 0;
  for (std::size_t e = 0; e < src.size(); ++e) n += members.count(src[e]) && members.count(dst[e]);
  return n;
}

/// Brute force total variation: max over every subset A of classes of |P(A) - Q(A)|.
double tv_brute(const dataset& ds, const std::vector<std::int32_t>& parts, std::int32_t a,
                std::int32_t b) {
  auto prob = [&](std::int32_t k, unsigned subset) {
    double in = 0, all = 0;
    for (vid_t v = 0; v < ds.num_nodes; ++v) {
      if (parts[v] != k || ds.labels[v] < 0) continue;
      all += 1;
      in += (subset >> ds.labels[v]) & 1U;
    }
    return in / all;
  };
  double best = 0;
  for (unsigned s = 0; s < (1U << ds.num_classes); ++s) {
    best = std::max(best, std::abs(prob(a, s) - prob(b, s)));
  }
  return best;
}

TEST(PartitionSummary, KeptEdgesAndClassTvAgainstBruteForce) {
  dataset const ds = hand_made();
  std::vector<std::vector<std::int32_t>> const cases = {
      {0, 0, 0, 0, 1, 1, 1, 1}, {0, 1, 2, 0, 1, 2, 0, 1}, {2, 2, 0, 1, 1, 0, 2, 1}};
  for (const auto& parts : cases) {
    auto const rep = partition_summary(ds, parts, 3);
    EXPECT_EQ(rep.edge_set, "graph");
    EXPECT_EQ(rep.total_edges, 13);
    std::int64_t kept = 0;
    for (std::int32_t k = 0; k < 3; ++k) {
      std::int64_t const want = kept_brute(ds.src, ds.dst, parts, k);
      EXPECT_EQ(rep.parts[k].kept_edges, want) << "part " << k;
      EXPECT_EQ(rep.parts[k].vertices, std::count(parts.begin(), parts.end(), k));
      kept += want;
    }
    EXPECT_EQ(rep.kept_edges, kept);
    EXPECT_DOUBLE_EQ(rep.kept_ratio, static_cast<double>(kept) / 13.0);
    ASSERT_EQ(rep.distance_kind, "class_tv");
    double max_tv = 0, sum = 0;
    int pairs = 0;
    for (std::int32_t a = 0; a < 3; ++a) {
      for (std::int32_t b = a + 1; b < 3; ++b) {
        bool const both = std::count(parts.begin(), parts.end(), a) > 0 &&
                          std::count(parts.begin(), parts.end(), b) > 0;
        if (!both) continue;
        double const tv = tv_brute(ds, parts, a, b);
        max_tv = std::max(max_tv, tv);
        sum += tv;
        ++pairs;
      }
    }
    EXPECT_EQ(rep.distance_pairs, pairs);
    EXPECT_NEAR(rep.distance_max, max_tv, 1e-12);
    EXPECT_NEAR(rep.distance_mean, pairs > 0 ? sum / pairs : 0.0, 1e-12);
  }
  // The first case by hand: part 0 = {0,1,2,3} keeps 0-1, 1-0, 1-2, 2-3, 3-3 = 5; part 1 =
  // {4..7} keeps 4-5, 5-6, 6-7, 7-4 = 4; classes {0: 1, 1: 2, 2: 1} vs {0: 2, 2: 1}:
  // TV = 0.5 (|1/4 - 2/3| + |2/4 - 0| + |1/4 - 1/3|) = 0.5.
  auto const rep = partition_summary(ds, cases[0], 3);
  EXPECT_EQ(rep.parts[0].kept_edges, 5);
  EXPECT_EQ(rep.parts[1].kept_edges, 4);
  EXPECT_EQ(rep.parts[2].kept_edges, 0);
  EXPECT_EQ(rep.distance_pairs, 1);  // part 2 is empty
  EXPECT_NEAR(rep.distance_max, 0.5, 1e-12);
  EXPECT_EQ(rep.parts[0].class_counts, (std::vector<std::int64_t>{1, 2, 1}));
  EXPECT_EQ(rep.parts[1].class_counts, (std::vector<std::int64_t>{2, 0, 1}));
}

TEST(PartitionSummary, FeatureMeansWithoutLabels) {
  dataset ds = hand_made();
  ds.labels.clear();
  ds.num_classes = 0;
  std::vector<std::int32_t> const parts = {0, 0, 0, 0, 1, 1, 1, 1};
  auto const rep = partition_summary(ds, parts, 2);
  ASSERT_EQ(rep.distance_kind, "feature_l2");
  // Means: part 0 = (1.5, (0+1+4+4)/4), part 1 = (5.5, (1+0+1+4)/4) (v^2 mod 5).
  double const d0 = 5.5 - 1.5;
  double const d1 = 9.0 / 4 - 6.0 / 4;
  EXPECT_NEAR(rep.distance_max, std::sqrt(d0 * d0 + d1 * d1), 1e-12);
  EXPECT_NEAR(rep.parts[0].feature_mean[1], 9.0 / 4, 1e-12);
  ds.features = matrix<float>();
  EXPECT_EQ(partition_summary(ds, parts, 2).distance_kind, "none");
}

TEST(PartitionSummary, LinkTaskCountsItsTrainPositives) {
  dataset ds = hand_made();
  link_task lt;
  lt.name = "lp";
  lt.train.src = {0, 4, 0, 6};  // kept under the first case: 0-1 and 4-5; cut: 0-7 and 6-2
  lt.train.dst = {1, 5, 7, 2};
  ds.link = lt;
  std::vector<std::int32_t> const parts = {0, 0, 0, 0, 1, 1, 1, 1};
  auto const rep = partition_summary(ds, parts, 2);
  EXPECT_EQ(rep.edge_set, "link_train");
  EXPECT_EQ(rep.total_edges, 4);
  EXPECT_EQ(rep.kept_edges, 2);
  EXPECT_DOUBLE_EQ(rep.kept_ratio, 0.5);
  EXPECT_EQ(rep.parts[0].kept_edges, kept_brute(lt.train.src, lt.train.dst, parts, 0));
}

/// The message run_partition throws for (scheme, M, N) over `ds`.
std::string run_error(const dataset& ds, partition_scheme s, std::int32_t m,
                      std::optional<std::int64_t> n) {
  return error_of<error>([&] { run_partition(ds, {s, m, n, 1}); });
}

TEST(Partition, ErrorsNameTheOption) {
  dataset const ds = hand_made();
  EXPECT_THAT(error_of<error>([] { random_parts(10, 0, 1); }), HasSubstr("--parts"));
  EXPECT_THAT(error_of<error>([] { deal_clusters(2, 3, 1); }), HasSubstr("--clusters 2 is below"));
  EXPECT_THAT(error_of<error>([] { deal_clusters(5, 0, 1); }), HasSubstr("--parts"));
  EXPECT_THAT(error_of<error>([&] { partition_summary(ds, std::vector<std::int32_t>(8, 3), 3); }),
              HasSubstr("outside [0, --parts 3)"));
  EXPECT_THAT(error_of<error>([&] { partition_summary(ds, std::vector<std::int32_t>(7, 0), 3); }),
              HasSubstr("|V| = 8"));
  EXPECT_THAT(run_error(ds, partition_scheme::random, 0, std::nullopt), HasSubstr("--parts 0"));
  EXPECT_THAT(run_error(ds, partition_scheme::random, 2, 4),
              HasSubstr("--clusters applies to --scheme super only"));
  EXPECT_THAT(run_error(ds, partition_scheme::metis, 2, 4),
              HasSubstr("--clusters applies to --scheme super only"));
  EXPECT_THAT(error_of<error>([] { parse_partition_scheme("cluster"); }), HasSubstr("--scheme"));
  if (!metis_available()) {
    for (auto s : {partition_scheme::super, partition_scheme::metis}) {
      EXPECT_THAT(run_error(ds, s, 2, std::nullopt),
                  HasSubstr("needs METIS, which this build does not have"));
    }
    EXPECT_THAT(error_of<error>([&] { metis_clusters(8, ds.src, ds.dst, 2); }), HasSubstr("METIS"));
    // random still works.
    EXPECT_EQ(run_partition(ds, {partition_scheme::random, 2, {}, 1}).parts.size(), 8u);
    return;
  }
  EXPECT_NO_THROW(require_metis("super"));
  EXPECT_THAT(run_error(ds, partition_scheme::super, 2, 9),
              HasSubstr("--clusters 9 exceeds |V| = 8"));
  EXPECT_THAT(run_error(ds, partition_scheme::super, 3, 2),
              HasSubstr("--clusters 2 is below --parts 3"));
  // |V| / 8 = 1 < M = 2: the default cannot serve; the message says to give --clusters.
  EXPECT_THAT(run_error(ds, partition_scheme::super, 2, std::nullopt),
              HasSubstr("give --clusters"));
  EXPECT_THAT(run_error(ds, partition_scheme::metis, 9, std::nullopt),
              HasSubstr("--parts 9 exceeds |V| = 8"));
  EXPECT_THAT(error_of<error>([&] { metis_clusters(8, ds.src, ds.dst, 0); }),
              HasSubstr("--clusters"));
  std::vector<vid_t> const bad = {0, 9};
  EXPECT_THAT(error_of<error>([&] { metis_clusters(8, bad, bad, 2); }),
              HasSubstr("outside [0, 8)"));
}

// ---- partition files read back (read_partition_files) -----------------------------------

TEST(PartitionFiles, ReadsPartsAndScheme) {
  test::temp_dir d;
  std::vector<std::int32_t> const parts = {0, 2, 1, 0};
  std::int64_t const shape[] = {4};
  write_npy(d / "parts.npy", std::span<const std::int32_t>(parts), shape);
  test::write_text(d / "summary.json", R"({"scheme": "super", "num_parts": 3})");
  partition_files const pf = read_partition_files(d.path(), 4, 3);
  EXPECT_EQ(pf.parts, parts);
  EXPECT_EQ(pf.scheme, std::optional<std::string>("super"));
  test::write_text(d / "summary.json", "[not json");
  EXPECT_EQ(read_partition_files(d.path(), 4, 3).scheme, std::nullopt);
}

TEST(PartitionFiles, ErrorsNameTheFile) {
  test::temp_dir d;
  std::vector<std::int32_t> const parts = {0, 2, 3, 0};
  std::int64_t const shape[] = {4};
  write_npy(d / "parts.npy", std::span<const std::int32_t>(parts), shape);
  std::string const f = (d / "parts.npy").string();
  EXPECT_THAT(error_of([&] { (void)read_partition_files(d.path(), 4, 3); }),
              HasSubstr(f + ": part id 3 of vertex 2 outside [0, 3)"));
  EXPECT_THAT(error_of([&] { (void)read_partition_files(d.path(), 5, 4); }),
              HasSubstr(f + ": 4 part ids for a dataset of 5 vertices"));
  std::int64_t const shape2[] = {2, 2};
  write_npy(d / "parts.npy", std::span<const std::int32_t>(parts), shape2);
  EXPECT_THAT(error_of([&] { (void)read_partition_files(d.path(), 4, 4); }),
              HasSubstr(f + ": part ids must be a 1-D array [|V|], found shape (2, 2)"));
}

// Declared sizes (runtime/core/memory_limit.hpp): a parts.npy whose header claims 2^40 int32 ids
// over no data is refused from the file size, before the ids are allocated.
TEST(PartitionFiles, DeclaredLengthBeyondTheFile) {
  test::temp_dir d;
  std::string h = "{'descr': '<i4', 'fortran_order': False, 'shape': (1099511627776,), }";
  while ((10 + h.size() + 1) % 64 != 0) h.push_back(' ');
  h.push_back('\n');
  std::string img = "\x93NUMPY\x01";
  img.push_back('\0');
  img.push_back(static_cast<char>(h.size() & 0xff));
  img.push_back(static_cast<char>(h.size() >> 8));
  test::write_text(d / "parts.npy", img + h);
  EXPECT_THAT(test::in_limited_child(32u << 20,
                                     [&] {
                                       return error_of([&] {
                                         (void)read_partition_files(d.path(), 1099511627776, 3);
                                       });
                                     }),
              HasSubstr("parts.npy: truncated: expected 4398046511104 bytes of data, found 0"));
}

}  // namespace
}  // namespace coopgnn
