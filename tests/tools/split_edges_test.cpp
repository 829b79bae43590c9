// `coopgnn split-edges` (tools/coopgnn/split_edges.hpp, cmd_data.cpp): determinism, held-out
// edges absent from the training graph, negatives valid and uniform (chi-square), counts per
// scheme, on small graphs whose expectations the tests compute themselves.
#include "tools/coopgnn/split_edges.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "runtime/core/error.hpp"
#include "runtime/graph/dataset.hpp"
#include "tests/common/cli.hpp"
#include "tests/common/files.hpp"
#include "tests/common/steps.hpp"
#include "tools/coopgnn/commands.hpp"
namespace coopgnn {
namespace {

using test::error_of;
using test::read_text;
using test::run_data_cli;
using test::temp_dir;

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using edge = std::pair<vid_t, vid_t>;

/// A symmetric graph on n vertices: ring i -- i+1 plus chords i -- i+3 (i even), both
/// directions, with a self-loop on 0, a duplicate edge, features and labels.
dataset ring(vid_t n) {
  dataset ds;
  ds.name = "ring";
  ds.num_nodes = n;
  auto add = [&](vid_t u, vid_t v) {
    ds.src.push_back(u);
    ds.dst.push_back(v);
    ds.src.push_back(v);
    ds.dst.push_back(u);
  };
  for (vid_t i = 0; i < n; ++i) add(i, (i + 1) % n);
  for (vid_t i = 0; i < n; i += 2) add(i, (i + 3) % n);
  ds.src.push_back(0);  // self-loop
  ds.dst.push_back(0);
  add(1, 2);  // duplicate
  ds.features = matrix<float>(n, 2);
  for (vid_t v = 0; v < n; ++v) ds.features(v, 0) = static_cast<float>(v);
  ds.labels.assign(static_cast<std::size_t>(n), 0);
  for (vid_t v = 0; v < n; ++v) ds.labels[v] = v % 3;
  ds.num_classes = 3;
  return ds;
}

/// A directed graph: i -> i+1, i -> i+2 (mod n) and a few reverse arcs.
dataset directed(vid_t n) {
  dataset ds;
  ds.name = "dir";
  ds.num_nodes = n;
  for (vid_t i = 0; i < n; ++i) {
    for (vid_t d : {1, 2}) {
      ds.src.push_back(i);
      ds.dst.push_back((i + d) % n);
    }
  }
  for (vid_t i = 0; i < n; i += 5) {
    ds.src.push_back((i + 1) % n);
    ds.dst.push_back(i);
  }
  return ds;
}

std::set<edge> edge_set(const std::vector<vid_t>& s, const std::vector<vid_t>& d) {
  std::set<edge> e;
  for (std::size_t i = 0; i < s.size(); ++i) e.emplace(s[i], d[i]);
  return e;
}

/// Positives (label 1 or all pairs) of a pair set.
std::vector<edge> positives(const pair_set& s) {
  std::vector<edge> p;
  for (std::size_t i = 0; i < s.src.size(); ++i) {
    if (s.labels.empty() || s.labels[i] == 1) p.emplace_back(s.src[i], s.dst[i]);
  }
  return p;
}

/// Checks the grouped layout and every negative against the full graph.
void expect_valid_queries(const pair_set& s, const std::set<edge>& full, std::int64_t k) {
  ASSERT_EQ(s.labels.size(), s.src.size());
  ASSERT_EQ(s.indexes.size(), s.src.size());
  ASSERT_EQ(s.src.size() % static_cast<std::size_t>(k + 1), 0u);
  for (std::size_t q = 0; q * (k + 1) < s.src.size(); ++q) {
    std::size_t const b = q * static_cast<std::size_t>(k + 1);
    EXPECT_EQ(s.labels[b], 1);
    std::set<vid_t> seen;
    for (std::size_t j = b; j < b + static_cast<std::size_t>(k + 1); ++j) {
      EXPECT_EQ(s.indexes[j], static_cast<std::int64_t>(q));
      EXPECT_EQ(s.src[j], s.src[b]);
      if (j == b) continue;
      EXPECT_EQ(s.labels[j], 0);
      EXPECT_NE(s.dst[j], s.src[j]) << "negative is the source";
      EXPECT_FALSE(full.count({s.src[j], s.dst[j]})) << "negative is a true edge";
      EXPECT_TRUE(seen.insert(s.dst[j]).second) << "repeated negative in query " << q;
    }
  }
}

TEST(SplitEdges, RandomSymmetricHoldsOutWholePairs) {
  dataset const in = ring(40);
  std::set<edge> const full = edge_set(in.src, in.dst);
  // Undirected non-loop pairs: 40 ring + 20 chords (the duplicate adds none).
  std::int64_t const pairs = 60;
  split_options opt;
  opt.seed = 11;
  opt.fractions = {0.7, 0.1, 0.2};
  opt.negatives = 1;
  split_report rep;
  dataset const out = split_edges(in, opt, &rep);
  ASSERT_TRUE(out.link.has_value());
  const link_task& lt = *out.link;
  EXPECT_TRUE(rep.symmetric);
  EXPECT_EQ(rep.candidates, pairs);
  EXPECT_EQ(rep.valid, 6);  // round(0.1 * 60)
  EXPECT_EQ(rep.test, 12);  // round(0.2 * 60)
  EXPECT_EQ(rep.train, 42);
  EXPECT_EQ(lt.train.size(), 42);
  EXPECT_EQ(lt.valid.size(), 12);  // K = 1: one negative per positive
  expect_valid_queries(lt.valid, full, 1);
  expect_valid_queries(lt.test, full, 1);
  // Train, valid and test positives partition the undirected pairs, each stored once in one
  // orientation; the orientation is a fair coin, so both occur (60 pairs: all 60 one way has
  // probability 2^-59).
  std::set<edge> all;
  std::int64_t lower_head = 0;
  for (const pair_set* s : {&lt.train, &lt.valid, &lt.test}) {
    for (auto [u, v] : positives(*s)) {
      EXPECT_NE(u, v);
      lower_head += u < v ? 1 : 0;
      EXPECT_TRUE(all.insert({std::min(u, v), std::max(u, v)}).second) << u << "-" << v << " twice";
    }
  }
  EXPECT_EQ(static_cast<std::int64_t>(all.size()), pairs);
  EXPECT_GT(lower_head, 0);
  EXPECT_LT(lower_head, pairs);
  // The training graph: no held-out edge in either direction; everything else kept (the
  // self-loop, both copies of the duplicate when it is a training pair).
  std::set<edge> const train_graph = edge_set(out.src, out.dst);
  for (const pair_set* s : {&lt.valid, &lt.test}) {
    for (auto [u, v] : positives(*s)) {
      EXPECT_FALSE(train_graph.count({u, v}));
      EXPECT_FALSE(train_graph.count({v, u}));
    }
  }
  for (auto [u, v] : positives(lt.train)) {
    EXPECT_TRUE(train_graph.count({u, v}));
    EXPECT_TRUE(train_graph.count({v, u}));
  }
  EXPECT_TRUE(train_graph.count({0, 0}));
  std::set<edge> held;
  for (const pair_set* s : {&lt.valid, &lt.test}) {
    for (auto [u, v] : positives(*s)) held.insert({std::min(u, v), std::max(u, v)});
  }
  std::int64_t kept = 0;
  for (std::size_t e = 0; e < in.src.size(); ++e) {
    kept += held.count({std::min(in.src[e], in.dst[e]), std::max(in.src[e], in.dst[e])}) ? 0 : 1;
  }
  EXPECT_EQ(out.num_edges(), kept);
  // Carried over.
  EXPECT_EQ(out.labels, in.labels);
  EXPECT_EQ(out.features.values(), in.features.values());
}

TEST(SplitEdges, SymmetricOrientationIsAFairCoinInEverySet) {
  // ring(4000): 6000 undirected pairs. Per set the share of positives whose head is the lower
  // id is Binomial(n, 1/2): checked within 4.5 standard deviations (false alarm < 1e-5).
  dataset const in = ring(4000);
  split_options opt;
  opt.seed = 5;
  opt.fractions = {0.6, 0.2, 0.2};
  opt.negatives = 1;
  dataset const out = split_edges(in, opt);
  const link_task& lt = *out.link;
  for (const pair_set* s : {&lt.train, &lt.valid, &lt.test}) {
    auto const pos = positives(*s);
    ASSERT_GT(pos.size(), 1000u);
    double lower = 0;
    for (auto [u, v] : pos) lower += u < v ? 1 : 0;
    double const n = static_cast<double>(pos.size());
    EXPECT_NEAR(lower, n / 2, 4.5 * std::sqrt(n / 4)) << "of " << n;
  }
  // The coin is keyed by the seed: another seed orients the training pairs differently.
  opt.seed = 6;
  dataset const other = split_edges(in, opt);
  EXPECT_NE(other.link->train.src, lt.train.src);
}

TEST(SplitEdges, KeepReverseAndDirectedGraphs) {
  dataset const in = ring(30);
  split_options opt;
  opt.keep_reverse = true;
  opt.negatives = 3;
  dataset const out = split_edges(in, opt);
  std::set<edge> const g = edge_set(out.src, out.dst);
  std::set<edge> const full = edge_set(in.src, in.dst);
  for (const pair_set* s : {&out.link->valid, &out.link->test}) {
    expect_valid_queries(*s, full, 3);
    for (auto [u, v] : positives(*s)) {
      EXPECT_FALSE(g.count({u, v}));
      EXPECT_TRUE(g.count({v, u})) << "reverse kept";
    }
  }
  // Directed: arcs are candidates on their own; the reverse of a held-out arc leaves the graph.
  dataset const din = directed(50);
  split_report rep;
  split_options one;
  one.negatives = 1;
  dataset const dout = split_edges(din, one, &rep);
  EXPECT_FALSE(rep.symmetric);
  EXPECT_EQ(rep.candidates, 110);  // 100 forward + 10 reverse arcs
  EXPECT_EQ(rep.valid + rep.test, std::llround(0.05 * 110) + std::llround(0.10 * 110));
  std::set<edge> const dg = edge_set(dout.src, dout.dst);
  std::set<edge> const dfull = edge_set(din.src, din.dst);
  for (const pair_set* s : {&dout.link->valid, &dout.link->test}) {
    expect_valid_queries(*s, dfull, 1);
    for (auto [u, v] : positives(*s)) {
      EXPECT_FALSE(dg.count({u, v}));
      EXPECT_FALSE(dg.count({v, u}));
    }
  }
  // Training positives = the training graph's arcs.
  EXPECT_EQ(edge_set(dout.link->train.src, dout.link->train.dst), dg);
}

TEST(SplitEdges, TmaOneOutgoingEdgePerNode) {
  dataset in = ring(40);
  // A vertex split decides the roles (the paper: val/test nodes of node classification).
  in.valid = {1, 2, 3, 4, 5, 6};
  in.test = {10, 11, 12, 13};
  in.train = {20, 21};
  std::set<edge> const full = edge_set(in.src, in.dst);
  split_options opt;
  opt.scheme = split_scheme::tma;
  opt.negatives = 7;
  opt.seed = 5;
  split_report rep;
  dataset const out = split_edges(in, opt, &rep);
  const link_task& lt = *out.link;
  EXPECT_EQ(rep.candidates, 10);  // every role node has >= 2 out-neighbours here
  EXPECT_EQ(rep.valid + rep.test + rep.skipped_nodes, 10);
  expect_valid_queries(lt.valid, full, 7);
  expect_valid_queries(lt.test, full, 7);
  std::set<vid_t> vsrc, tsrc;
  for (auto [u, v] : positives(lt.valid)) EXPECT_TRUE(vsrc.insert(u).second);
  for (auto [u, v] : positives(lt.test)) EXPECT_TRUE(tsrc.insert(u).second);
  for (vid_t u : vsrc) EXPECT_TRUE(std::count(in.valid.begin(), in.valid.end(), u));
  for (vid_t u : tsrc) EXPECT_TRUE(std::count(in.test.begin(), in.test.end(), u));
  // Held out with its reverse; every vertex keeps an outgoing training edge.
  std::set<edge> const g = edge_set(out.src, out.dst);
  for (const pair_set* s : {&lt.valid, &lt.test}) {
    for (auto [u, v] : positives(*s)) {
      EXPECT_TRUE(full.count({u, v}));
      EXPECT_FALSE(g.count({u, v}));
      EXPECT_FALSE(g.count({v, u}));
    }
  }
  std::vector<int> outdeg(40, 0);
  for (auto [u, v] : g) outdeg[u] += u != v ? 1 : 0;
  for (vid_t v = 0; v < 40; ++v) EXPECT_GE(outdeg[v], 1) << v;
  EXPECT_EQ(out.valid, in.valid);  // vertex split carried over

  // Without a vertex split every eligible node gives one edge to validation or test. A star
  // centre 0 with leaves 1..5 (degree 1: not eligible) plus the ring on 6..29.
  dataset s;
  s.name = "star";
  s.num_nodes = 30;
  auto add = [&](vid_t u, vid_t v) {
    s.src.insert(s.src.end(), {u, v});
    s.dst.insert(s.dst.end(), {v, u});
  };
  for (vid_t l = 1; l <= 5; ++l) add(0, l);
  for (vid_t i = 6; i < 30; ++i) add(i, i + 1 < 30 ? i + 1 : 6);
  opt.negatives = 2;
  dataset const so = split_edges(s, opt, &rep);
  EXPECT_EQ(rep.candidates, 1 + 24);  // the centre and the ring vertices
  EXPECT_EQ(rep.valid + rep.test + rep.skipped_nodes, 25);
  EXPECT_GT(rep.valid, 0);
  EXPECT_GT(rep.test, 0);
  for (const pair_set* p : {&so.link->valid, &so.link->test}) {
    for (auto [u, v] : positives(*p)) EXPECT_FALSE(u >= 1 && u <= 5) << "leaf " << u;
  }
  // The leaves keep their only edge: the centre never gives one of them up.
  std::set<edge> const sg = edge_set(so.src, so.dst);
  for (vid_t l = 1; l <= 5; ++l) EXPECT_TRUE(sg.count({l, 0})) << l;
}

TEST(SplitEdges, DeterministicForASeedThroughTheCli) {
  temp_dir d;
  write_dataset(ring(36), d / "in");
  auto files = [&](const fs::path& dir) {
    std::map<std::string, std::string> m;
    for (const auto& e : fs::recursive_directory_iterator(dir)) {
      if (e.is_regular_file()) m[fs::relative(e.path(), dir).string()] = read_text(e.path());
    }
    return m;
  };
  for (const char* scheme : {"random", "tma"}) {
    std::string const a = (d / (std::string(scheme) + "_a")).string();
    std::string const b = (d / (std::string(scheme) + "_b")).string();
    std::string const c = (d / (std::string(scheme) + "_c")).string();
    std::vector<std::string> base = {"split-edges", (d / "in").string(), "", "--scheme",
                                     scheme,        "--negatives",       "4"};
    base[2] = a;
    run_data_cli(base);
    base[2] = b;
    run_data_cli(base);
    base[2] = c;
    base.insert(base.end(), {"--seed", "99"});
    run_data_cli(base);
    auto const fa = files(a);
    EXPECT_TRUE(fa.count("set/link_valid_seeds.npy")) << scheme;
    EXPECT_TRUE(fa.count("set/link_test_indexes.npy")) << scheme;
    EXPECT_EQ(fa, files(b)) << scheme << ": same seed, different bytes";
    EXPECT_NE(fa.at("set/link_test_seeds.npy"), files(c).at("set/link_test_seeds.npy")) << scheme;
    dataset const back = read_dataset(a);
    ASSERT_TRUE(back.link.has_value());
    EXPECT_EQ(back.link->valid.size() % 5, 0);
  }
}

TEST(SplitEdges, DefaultNegativesAre100ForRandomAnd1000ForTma) {
  // ring(1200): 1800 undirected pairs, every vertex with >= 1100 candidate negatives.
  dataset const in = ring(1200);
  std::set<edge> const full = edge_set(in.src, in.dst);
  split_options opt;
  opt.fractions = {0.9, 0.05, 0.05};
  split_report rep;
  dataset const out = split_edges(in, opt, &rep);
  EXPECT_EQ(rep.negatives, 100);
  EXPECT_EQ(rep.valid, 90);  // round(0.05 * 1800)
  EXPECT_EQ(out.link->valid.size(), 90 * 101);
  expect_valid_queries(out.link->valid, full, 100);
  expect_valid_queries(out.link->test, full, 100);
  opt.scheme = split_scheme::tma;
  dataset const tma = split_edges(in, opt, &rep);
  EXPECT_EQ(rep.negatives, 1000);
  expect_valid_queries(tma.link->test, full, 1000);
  // --negatives still sets K.
  opt.scheme = split_scheme::random;
  opt.negatives = 4;
  EXPECT_EQ(split_edges(in, opt).link->valid.size(), 90 * 5);
}

TEST(SplitEdges, RejectedOptions) {
  dataset const in = ring(12);
  split_options opt;
  opt.fractions = {0.5, 0.2, 0.2};
  EXPECT_THAT(error_of([&] { (void)split_edges(in, opt); }),
              HasSubstr("need three non-negative fractions summing to 1"));
  opt = {};
  opt.scheme = split_scheme::tma;  // default 1000 negatives on 12 vertices
  EXPECT_THAT(error_of([&] { (void)split_edges(in, opt); }), HasSubstr("candidate negatives"));
}

// ---- uniformity of the negatives ---------------------------------------------------------

/// Pearson's statistic of `counts` against `expected`.
double chi_square(const std::map<vid_t, std::int64_t>& counts,
                  const std::map<vid_t, double>& expected) {
  double x = 0;
  for (auto [w, e] : expected) {
    auto const it = counts.find(w);
    double const o = it == counts.end() ? 0.0 : static_cast<double>(it->second);
    x += (o - e) * (o - e) / e;
  }
  return x;
}

TEST(NegativeSampler, UniformOverNonNeighboursChiSquare) {
  // 12 vertices; source 0 has out-edges to 1, 4, 7 and a self-loop; 5 -> 0 must not matter.
  std::vector<vid_t> src = {0, 0, 0, 0, 5, 2};
  std::vector<vid_t> dst = {1, 4, 7, 0, 0, 3};
  vid_t const n = 12;
  out_adjacency const a = build_out_adjacency(n, src, dst);
  // Allowed: every vertex but 0, 1, 4, 7: 8 cells.
  std::set<vid_t> allowed;
  for (vid_t w = 0; w < n; ++w) {
    if (w != 0 && w != 1 && w != 4 && w != 7) allowed.insert(w);
  }
  for (std::int64_t k : {1, 3, 6}) {  // 1, 3: rejection sampling; 6 (> m/2): dense path
    negative_sampler s(a, 2024);
    EXPECT_EQ(s.candidates(0), 8);
    std::int64_t const queries = 12000;
    std::map<vid_t, std::int64_t> counts;
    std::vector<vid_t> out;
    for (std::int64_t q = 0; q < queries; ++q) {
      out.clear();
      s.draw(0, k, static_cast<std::uint64_t>(q), out);
      ASSERT_EQ(out.size(), static_cast<std::size_t>(k));
      std::set<vid_t> const distinct(out.begin(), out.end());
      ASSERT_EQ(distinct.size(), out.size());
      for (vid_t w : out) {
        ASSERT_TRUE(allowed.count(w)) << w;
        ++counts[w];
      }
    }
    // A uniform k-subset holds each allowed vertex with probability k / 8.
    std::map<vid_t, double> expected;
    for (vid_t w : allowed) expected[w] = static_cast<double>(queries * k) / 8.0;
    // Without replacement the cells vary less than multinomial ones, so the statistic is at
    // most chi-square(7)-sized: 24.32 is its 0.999 quantile.
    EXPECT_LT(chi_square(counts, expected), 24.32) << "k = " << k;
  }
  // Same key, same draws; another key, other draws.
  negative_sampler s1(a, 7);
  negative_sampler s2(a, 7);
  std::vector<vid_t> x, y, z;
  s1.draw(0, 3, 42, x);
  s1.draw(0, 3, 43, z);
  s2.draw(0, 3, 42, y);
  EXPECT_EQ(x, y);
  EXPECT_NE(x, z);
}

TEST(NegativeSampler, SplitNegativesUniformOverTheGraph) {
  // End to end: pooled over all validation and test queries of a random split with K = 1, the
  // negatives of each source follow that source's allowed set.
  dataset const in = ring(24);
  std::set<edge> const full = edge_set(in.src, in.dst);
  split_options opt;
  opt.fractions = {0.0, 0.5, 0.5};
  opt.negatives = 1;
  opt.seed = 3;
  std::map<vid_t, std::int64_t> counts;
  std::map<vid_t, double> expected;
  for (std::uint64_t seed = 0; seed < 200; ++seed) {
    opt.seed = seed;
    dataset const out = split_edges(in, opt);
    for (const pair_set* s : {&out.link->valid, &out.link->test}) {
      for (std::size_t i = 0; i < s->src.size(); ++i) {
        if (s->labels[i] == 1) {
          vid_t const u = s->src[i];
          std::vector<vid_t> ok;
          for (vid_t w = 0; w < 24; ++w) {
            if (w != u && !full.count({u, w})) ok.push_back(w);
          }
          for (vid_t w : ok) expected[w] += 1.0 / static_cast<double>(ok.size());
        } else {
          ++counts[s->dst[i]];
        }
      }
    }
  }
  // 24 cells: chi-square(23) 0.999 quantile = 49.73.
  EXPECT_LT(chi_square(counts, expected), 49.73);
}

}  // namespace
}  // namespace coopgnn

namespace coopgnn {
namespace {

using test::error_of;
using test::run_data_cli;
using test::temp_dir;
using ::testing::HasSubstr;
namespace fs = std::filesystem;

// Typed splits (split_typed_edges; `split-edges --relation`) on test::hetero_protocol_data():
// relation 1 paper:written_by:author (papers [0, 300), authors [300, 550)), whose reverse is
// relation 0 author:writes:paper.
TEST(SplitTypedEdges, HoldsOutOneRelationAndItsReverseWithTypedNegatives) {
  dataset const& in = test::hetero_protocol_data().ds;
  const hetero_schema& h = *in.hetero;
  std::set<std::pair<vid_t, vid_t>> arcs;  // relation 1's distinct arcs
  std::multiset<std::tuple<vid_t, vid_t, std::int32_t>> edges_in;
  for (std::size_t e = 0; e < in.src.size(); ++e) {
    if (h.edge_type[e] == 1) arcs.emplace(in.src[e], in.dst[e]);
    edges_in.emplace(in.src[e], in.dst[e], h.edge_type[e]);
  }
  for (bool keep : {false, true}) {
    SCOPED_TRACE(keep ? "keep reverse" : "remove reverse");
    split_options opt;
    opt.relation = "paper:written_by:author";
    opt.negatives = 7;
    opt.keep_reverse = keep;
    opt.seed = 3;
    split_report rep;
    dataset const out = split_typed_edges(in, opt, &rep);
    ASSERT_TRUE(out.link && out.hetero);
    const link_task& t = *out.link;
    EXPECT_EQ(rep.candidates, static_cast<std::int64_t>(arcs.size()));
    // Every candidate is exactly one of train / valid / test.
    std::multiset<std::pair<vid_t, vid_t>> all;
    for (std::int64_t i = 0; i < t.train.size(); ++i) all.emplace(t.train.src[i], t.train.dst[i]);
    std::set<std::pair<vid_t, vid_t>> held;
    for (const pair_set* s : {&t.valid, &t.test}) {
      ASSERT_EQ(s->relation.size(), s->src.size());
      ASSERT_EQ(s->size() % 8, 0);  // one positive + 7 negatives per query
      for (std::int64_t q = 0; q < s->size(); q += 8) {
        vid_t const u = s->src[q];
        EXPECT_EQ(s->labels[q], 1);
        all.emplace(u, s->dst[q]);
        held.emplace(u, s->dst[q]);
        std::set<vid_t> negs;
        for (std::int64_t j = q + 1; j < q + 8; ++j) {
          vid_t const w = s->dst[j];
          EXPECT_EQ(s->src[j], u);
          EXPECT_EQ(s->labels[j], 0);
          EXPECT_EQ(s->indexes[j], s->indexes[q]);
          EXPECT_GE(w, 300) << "a negative outside the author type";
          EXPECT_LT(w, 550) << "a negative outside the author type";
          EXPECT_EQ(arcs.count({u, w}), 0u) << "a true edge as a negative";
          negs.insert(w);
        }
        EXPECT_EQ(negs.size(), 7u) << "negatives repeat within a query";
      }
      for (auto r : s->relation) EXPECT_EQ(r, 1);
    }
    for (auto r : t.train.relation) EXPECT_EQ(r, 1);
    EXPECT_EQ(all.size(), arcs.size());
    std::set<std::pair<vid_t, vid_t>> const all_set(all.begin(), all.end());
    EXPECT_EQ(all_set, arcs);
    EXPECT_GT(held.size(), arcs.size() / 10);  // 5% + 10% by default
    // The training graph: the input minus the held-out arcs (every copy) and their reverses in
    // relation 0; nothing else, and each (source, destination, relation) once (the input's
    // repeats removed, as train's CSC removes them).
    std::set<std::tuple<vid_t, vid_t, std::int32_t>> expect_set;
    for (auto const& [u, v, r] : edges_in) {
      if (r == 1 && held.count({u, v}) != 0) continue;
      if (!keep && r == 0 && held.count({v, u}) != 0) continue;
      expect_set.emplace(u, v, r);
    }
    std::multiset<std::tuple<vid_t, vid_t, std::int32_t>> const expect(expect_set.begin(),
                                                                       expect_set.end());
    std::multiset<std::tuple<vid_t, vid_t, std::int32_t>> got;
    for (std::size_t e = 0; e < out.src.size(); ++e) {
      got.emplace(out.src[e], out.dst[e], out.hetero->edge_type[e]);
    }
    EXPECT_EQ(got, expect);
    EXPECT_EQ(rep.edges_out, static_cast<std::int64_t>(expect.size()));
    // Node classification is carried over.
    EXPECT_EQ(out.train, in.train);
    EXPECT_EQ(out.labels, in.labels);
    // Written and read back as a typed dataset.
    temp_dir d;
    write_dataset(out, d / "o");
    dataset_read_options ro;
    ro.heterogeneous = true;
    ro.task = "link_prediction";
    dataset const back = read_dataset(d / "o", ro);
    ASSERT_TRUE(back.link.has_value());
    EXPECT_EQ(back.link->test.src, t.test.src);
    EXPECT_EQ(back.link->test.dst, t.test.dst);
    EXPECT_EQ(back.link->test.relation, t.test.relation);
    EXPECT_EQ(back.link->train.dst, t.train.dst);
    EXPECT_EQ(back.num_edges(), out.num_edges());
  }
  // Same seed, same split; another seed, another.
  split_options opt;
  opt.relation = "paper:written_by:author";
  dataset const a = split_typed_edges(in, opt);
  dataset const b = split_typed_edges(in, opt);
  EXPECT_EQ(a.link->test.dst, b.link->test.dst);
  opt.seed = 77;
  EXPECT_NE(split_typed_edges(in, opt).link->test.dst, a.link->test.dst);
}

TEST(SplitTypedEdges, SelfReverseRelationAndErrors) {
  dataset const& in = test::hetero_protocol_data().ds;
  split_options opt;
  opt.relation = "paper:cites:paper";  // its own reverse: v -> u of the same relation goes too
  opt.negatives = 3;
  dataset const out = split_typed_edges(in, opt);
  std::set<std::pair<vid_t, vid_t>> cites;
  for (std::size_t e = 0; e < out.src.size(); ++e) {
    if (out.hetero->edge_type[e] == 4) cites.emplace(out.src[e], out.dst[e]);
  }
  for (const pair_set* s : {&out.link->valid, &out.link->test}) {
    for (std::int64_t i = 0; i < s->size(); ++i) {
      if (s->labels[i] == 1) {
        EXPECT_EQ(cites.count({s->src[i], s->dst[i]}), 0u);
        EXPECT_EQ(cites.count({s->dst[i], s->src[i]}), 0u);
      } else {
        EXPECT_LT(s->dst[i], 300);  // papers
      }
    }
  }
  // Pairs present in both directions are stored with a keyed orientation, not always the lower
  // id first (the head is the end whose tail is corrupted).
  std::set<std::pair<vid_t, vid_t>> in_cites;
  for (std::size_t e = 0; e < in.src.size(); ++e) {
    if (in.hetero->edge_type[e] == 4) in_cites.emplace(in.src[e], in.dst[e]);
  }
  std::int64_t low_first = 0, high_first = 0;
  for (const pair_set* s : {&out.link->train, &out.link->valid, &out.link->test}) {
    for (std::int64_t i = 0; i < s->size(); ++i) {
      if (!s->labels.empty() && s->labels[i] != 1) continue;
      if (in_cites.count({s->dst[i], s->src[i]}) == 0) continue;  // one direction only
      (s->src[i] < s->dst[i] ? low_first : high_first) += 1;
    }
  }
  ASSERT_GE(low_first + high_first, 10) << "the fixture needs pairs cited both ways";
  EXPECT_GT(low_first, 0);  // 12 such pairs in this fixture: all on one side would be 2^-11
  EXPECT_GT(high_first, 0);
  opt.relation = "paper:likes:paper";
  EXPECT_THAT(error_of([&] { (void)split_typed_edges(in, opt); }),
              HasSubstr("--relation 'paper:likes:paper' is not an edge type of dataset "
                        "'hetero-synthetic': its edge types are author:writes:paper, "));
  opt.relation = "paper:written_by:author";
  opt.scheme = split_scheme::tma;
  EXPECT_THAT(error_of([&] { (void)split_typed_edges(in, opt); }), HasSubstr("random only"));
  opt.scheme = split_scheme::random;
  opt.negatives = 300;  // more than the 250 authors
  EXPECT_THAT(error_of([&] { (void)split_typed_edges(in, opt); }),
              HasSubstr("candidate negatives of the destination type"));
}

TEST(SplitTypedEdges, ThroughTheCli) {
  temp_dir d;
  write_dataset(test::hetero_protocol_data().ds, d / "in");
  run_data_cli({"split-edges", (d / "in").string(), (d / "out").string(), "--relation",
                "paper:written_by:author", "--negatives", "5", "--seed", "4"});
  dataset_read_options ro;
  ro.heterogeneous = true;
  ro.task = "link_prediction";
  dataset const back = read_dataset(d / "out", ro);
  ASSERT_TRUE(back.link.has_value());
  EXPECT_EQ(back.link->valid.size() % 6, 0);
  EXPECT_GT(back.link->test.size(), 0);
  // Typed data without --relation is refused by the untyped reader, naming the commands.
  EXPECT_THROW(run_data_cli({"split-edges", (d / "in").string(), (d / "o2").string()}),
               std::exception);
}

}  // namespace
}  // namespace coopgnn
