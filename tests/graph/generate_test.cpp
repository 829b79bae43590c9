// Synthetic generators (runtime/graph/generate.hpp): R-MAT, degree-corrected SBM and the
// synthetic task, checked by properties that hold for any correct implementation.
#include "runtime/graph/generate.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <utility>
#include <vector>

#include "runtime/core/error.hpp"
#include "runtime/core/half.hpp"
#include "runtime/core/rng.hpp"
#include "runtime/graph/dataset.hpp"

namespace coopgnn {
namespace {

using edge_set = std::set<std::pair<vid_t, vid_t>>;

edge_set edges_of(const dataset& ds) {
  edge_set s;
  for (std::size_t i = 0; i < ds.src.size(); ++i) s.emplace(ds.src[i], ds.dst[i]);
  return s;
}

double edge_homophily(const dataset& ds) {
  std::int64_t same = 0;
  for (std::size_t e = 0; e < ds.src.size(); ++e) {
    same += ds.labels[static_cast<std::size_t>(ds.src[e])] ==
                    ds.labels[static_cast<std::size_t>(ds.dst[e])]
                ? 1
                : 0;
  }
  return static_cast<double>(same) / static_cast<double>(ds.src.size());
}

void expect_simple_symmetric(const dataset& ds) {
  edge_set const s = edges_of(ds);
  EXPECT_EQ(s.size(), ds.src.size()) << "duplicate edges";
  for (const auto& [u, v] : s) {
    ASSERT_NE(u, v) << "self-loop";
    ASSERT_TRUE(s.count({v, u})) << "missing reverse of " << u << " -> " << v;
    ASSERT_GE(u, 0);
    ASSERT_LT(u, ds.num_nodes);
  }
}

TEST(KeyedPermutation, IsAPermutationAndDependsOnSeed) {
  std::vector<vid_t> const a = keyed_permutation(1000, 7, rng::purpose::generate, 0);
  std::vector<vid_t> sorted = a;
  std::sort(sorted.begin(), sorted.end());
  for (vid_t i = 0; i < 1000; ++i) ASSERT_EQ(sorted[i], i);
  EXPECT_EQ(a, keyed_permutation(1000, 7, rng::purpose::generate, 0));
  EXPECT_NE(a, keyed_permutation(1000, 8, rng::purpose::generate, 0));
  EXPECT_NE(a, keyed_permutation(1000, 7, rng::purpose::split, 0));
  EXPECT_TRUE(keyed_permutation(0, 7, rng::purpose::generate, 0).empty());
  EXPECT_EQ(keyed_permutation(1, 7, rng::purpose::generate, 0), (std::vector<vid_t>{0}));
}

TEST(Rmat, SizesDeterminismAndCleanliness) {
  rmat_options opt;
  opt.scale = 9;
  opt.edge_factor = 8;
  opt.seed = 42;
  edge_stats st;
  dataset const a = generate_rmat(opt, &st);
  EXPECT_EQ(a.num_nodes, 512);
  EXPECT_EQ(st.edges_read, 8 * 512);
  EXPECT_EQ(st.edges_final, a.num_edges());
  EXPECT_EQ(st.edges_final,
            st.edges_read - st.self_loops_dropped + st.reverse_edges_added - st.duplicates_removed);
  EXPECT_GT(a.num_edges(), 512);
  EXPECT_LE(a.num_edges(), 2 * 8 * 512);
  expect_simple_symmetric(a);
  EXPECT_EQ(a.feature_dim(), 0);
  EXPECT_EQ(a.num_classes, 0);
  // Same seed: identical; other seed: different.
  dataset const b = generate_rmat(opt, nullptr);
  EXPECT_EQ(a.src, b.src);
  EXPECT_EQ(a.dst, b.dst);
  opt.seed = 43;
  dataset const c = generate_rmat(opt, nullptr);
  EXPECT_NE(edges_of(a), edges_of(c));
  // R-MAT is skewed: the largest degree far exceeds the mean.
  std::vector<std::int64_t> deg(512, 0);
  for (vid_t v : a.dst) ++deg[static_cast<std::size_t>(v)];
  double const mean = static_cast<double>(a.num_edges()) / 512.0;
  EXPECT_GT(static_cast<double>(*std::max_element(deg.begin(), deg.end())), 4 * mean);
}

TEST(Rmat, WithoutPermutationHubIsVertexZero) {
  // With a > b, c > d and no relabelling, vertex 0 collects the most edges.
  rmat_options opt;
  opt.scale = 8;
  opt.permute = false;
  opt.drop_self_loops = false;
  dataset const a = generate_rmat(opt);
  std::vector<std::int64_t> deg(256, 0);
  for (vid_t v : a.src) ++deg[static_cast<std::size_t>(v)];
  EXPECT_EQ(std::max_element(deg.begin(), deg.end()) - deg.begin(), 0);
}

TEST(Rmat, RejectsBadOptions) {
  rmat_options opt;
  opt.scale = 0;
  EXPECT_THROW(generate_rmat(opt), logic_error);
  opt.scale = 4;
  opt.a = 0.9;
  EXPECT_THROW(generate_rmat(opt), logic_error);
}

struct sbm_usecase {
  double homophily;
  double degree_exponent;
};

class SbmHomophily : public ::testing::TestWithParam<sbm_usecase> {};

TEST_P(SbmHomophily, MeasuredHomophilyIsCloseToTarget) {
  sbm_options opt;
  opt.nodes = 3000;
  opt.classes = 4;
  opt.avg_degree = 10;
  opt.homophily = GetParam().homophily;
  opt.degree_exponent = GetParam().degree_exponent;
  opt.feature_dim = 8;
  opt.seed = 5;
  dataset const ds = generate_sbm(opt);
  validate_dataset(ds, "sbm");
  expect_simple_symmetric(ds);
  EXPECT_NEAR(edge_homophily(ds), opt.homophily, 0.05);
  double const avg = static_cast<double>(ds.num_edges()) / 3000.0;
  EXPECT_GT(avg, 8.0);
  EXPECT_LE(avg, 10.5);
  // Balanced classes: 3000 / 4 each.
  std::vector<std::int64_t> counts(4, 0);
  for (auto l : ds.labels) ++counts[static_cast<std::size_t>(l)];
  EXPECT_EQ(counts, (std::vector<std::int64_t>{750, 750, 750, 750}));
  EXPECT_EQ(ds.train.size(), 1800u);
  EXPECT_EQ(ds.valid.size(), 600u);
  EXPECT_EQ(ds.test.size(), 600u);
  EXPECT_EQ(ds.features.rows(), 3000);
  EXPECT_EQ(ds.feature_dim(), 8);
}

INSTANTIATE_TEST_SUITE_P(Usecases, SbmHomophily,
                         ::testing::Values(sbm_usecase{0.8, 2.5}, sbm_usecase{0.2, 2.5},
                                           sbm_usecase{0.5, 0.0}));

/// Accuracy on `ds.test` of the nearest class mean (means estimated on ds.train) over `x`.
double nearest_mean_accuracy(const dataset& ds, const std::vector<double>& x, std::int64_t f) {
  std::int64_t const c = ds.num_classes;
  std::vector<double> mean(static_cast<std::size_t>(c * f), 0.0);
  std::vector<double> cnt(static_cast<std::size_t>(c), 0.0);
  for (vid_t v : ds.train) {
    auto const l = ds.labels[static_cast<std::size_t>(v)];
    cnt[l] += 1;
    for (std::int64_t j = 0; j < f; ++j) mean[l * f + j] += x[v * f + j];
  }
  for (std::int64_t l = 0; l < c; ++l) {
    for (std::int64_t j = 0; j < f; ++j) mean[l * f + j] /= std::max(1.0, cnt[l]);
  }
  std::int64_t correct = 0;
  for (vid_t v : ds.test) {
    std::int64_t best = 0;
    double best_d = 1e300;
    for (std::int64_t l = 0; l < c; ++l) {
      double d = 0;
      for (std::int64_t j = 0; j < f; ++j) d += std::pow(x[v * f + j] - mean[l * f + j], 2);
      if (d < best_d) {
        best_d = d;
        best = l;
      }
    }
    correct += best == ds.labels[static_cast<std::size_t>(v)] ? 1 : 0;
  }
  return static_cast<double>(correct) / static_cast<double>(ds.test.size());
}

TEST(Sbm, FeaturesAreLearnableButNotTrivialAndNeighboursHelp) {
  sbm_options opt;
  opt.nodes = 2000;
  opt.classes = 4;
  opt.avg_degree = 10;
  opt.homophily = 0.8;
  opt.feature_dim = 16;
  dataset const ds = generate_sbm(opt);
  std::int64_t const f = 16;
  std::vector<double> x(ds.features.values().begin(), ds.features.values().end());
  double const raw = nearest_mean_accuracy(ds, x, f);
  EXPECT_GT(raw, 0.40);  // chance is 0.25
  EXPECT_LT(raw, 0.95);
  // One round of neighbour averaging improves it.
  std::vector<double> agg(x.size(), 0.0);
  std::vector<double> deg(2000, 1.0);
  for (std::int64_t v = 0; v < 2000; ++v) {
    for (std::int64_t j = 0; j < f; ++j) agg[v * f + j] = x[v * f + j];
  }
  for (std::size_t e = 0; e < ds.src.size(); ++e) {
    deg[ds.dst[e]] += 1;
    for (std::int64_t j = 0; j < f; ++j) agg[ds.dst[e] * f + j] += x[ds.src[e] * f + j];
  }
  for (std::int64_t v = 0; v < 2000; ++v) {
    for (std::int64_t j = 0; j < f; ++j) agg[v * f + j] /= deg[v];
  }
  EXPECT_GT(nearest_mean_accuracy(ds, agg, f), raw + 0.1);
}

TEST(Sbm, DeterministicPerSeed) {
  sbm_options opt;
  opt.nodes = 500;
  opt.classes = 3;
  opt.feature_dim = 4;
  dataset const a = generate_sbm(opt);
  dataset const b = generate_sbm(opt);
  EXPECT_EQ(a.src, b.src);
  EXPECT_EQ(a.labels, b.labels);
  EXPECT_EQ(a.features.values(), b.features.values());
  EXPECT_EQ(a.train, b.train);
  opt.seed = 2;
  dataset const c = generate_sbm(opt);
  EXPECT_NE(a.labels, c.labels);
  EXPECT_NE(a.features.values(), c.features.values());
}

TEST(Sbm, RejectsBadOptions) {
  sbm_options opt;
  opt.homophily = 1.5;
  EXPECT_THROW(generate_sbm(opt), logic_error);
  opt = {};
  opt.classes = 0;
  EXPECT_THROW(generate_sbm(opt), logic_error);
  opt = {};
  opt.train_fraction = 0.9;
  opt.valid_fraction = 0.2;
  EXPECT_THROW(generate_sbm(opt), logic_error);
}

TEST(SyntheticTask, LabelsAreBalancedHomophilousAndLearnable) {
  rmat_options ro;
  ro.scale = 11;
  ro.edge_factor = 8;
  dataset ds = generate_rmat(ro);
  attach_synthetic_task(ds, 4, 16, 9);
  validate_dataset(ds, "task");
  EXPECT_EQ(ds.num_classes, 4);
  EXPECT_EQ(ds.features.rows(), 2048);
  EXPECT_EQ(ds.feature_dim(), 16);
  std::vector<std::int64_t> counts(4, 0);
  for (auto l : ds.labels) ++counts[static_cast<std::size_t>(l)];
  for (auto c : counts) EXPECT_GT(c, 2048 / 4 / 3) << "class too small";
  EXPECT_GT(edge_homophily(ds), 0.25 + 0.15);  // well above chance (1/4)
  std::vector<double> x(ds.features.values().begin(), ds.features.values().end());
  EXPECT_GT(nearest_mean_accuracy(ds, x, 16), 0.40);
  EXPECT_EQ(ds.train.size() + ds.valid.size() + ds.test.size(), 2048u);
  EXPECT_EQ(ds.train.size(), 1229u);  // round(0.6 * 2048)
  // Deterministic, and a different seed changes the labels.
  dataset again = generate_rmat(ro);
  attach_synthetic_task(again, 4, 16, 9);
  EXPECT_EQ(again.labels, ds.labels);
  attach_synthetic_task(again, 4, 16, 10);
  EXPECT_NE(again.labels, ds.labels);
}

TEST(Rmat, SameGraphAsTheSortingGenerator) {
  // Pinned from the generator that sorted the whole (src, dst) list (the values its
  // `generate rmat --scale 6 --edge-factor 4 --seed 7` wrote to edges/edges.npy): the streaming
  // rows must give the same edges in the same order.
  rmat_options opt;
  opt.scale = 6;
  opt.edge_factor = 4;
  opt.seed = 7;
  dataset const a = generate_rmat(opt);
  ASSERT_EQ(a.num_edges(), 330);
  EXPECT_EQ(std::vector<vid_t>(a.src.begin(), a.src.begin() + 8),
            (std::vector<vid_t>{0, 0, 0, 0, 0, 0, 0, 1}));
  EXPECT_EQ(std::vector<vid_t>(a.dst.begin(), a.dst.begin() + 8),
            (std::vector<vid_t>{10, 11, 17, 24, 35, 37, 38, 38}));
  std::int64_t sum_src = 0;
  std::int64_t sum_dst = 0;
  std::int64_t weighted = 0;
  for (std::size_t i = 0; i < a.src.size(); ++i) {
    sum_src += a.src[i];
    sum_dst += a.dst[i];
    weighted += static_cast<std::int64_t>(i) * a.dst[i];
  }
  EXPECT_EQ(sum_src, 10938);
  EXPECT_EQ(sum_dst, 10938);
  EXPECT_EQ(weighted, 1823226);
  // The rows hold exactly these edges.
  edge_rows const rows = generate_rmat_rows(opt);
  ASSERT_EQ(rows.num_edges(), 330);
  ASSERT_EQ(rows.offsets.size(), 65u);
  for (vid_t u = 0; u < 64; ++u) {
    for (eid_t e = rows.offsets[u]; e < rows.offsets[u + 1]; ++e) {
      ASSERT_EQ(a.src[static_cast<std::size_t>(e)], u);
      ASSERT_EQ(a.dst[static_cast<std::size_t>(e)], rows.targets[static_cast<std::size_t>(e)]);
    }
  }
  EXPECT_EQ(rmat_dataset_name(opt), "rmat-s6-ef4-seed7");
}

TEST(Rmat, ScaleAbove32IsRefused) {
  rmat_options opt;
  opt.scale = 33;
  EXPECT_THROW(generate_rmat_rows(opt), logic_error);
}

TEST(SyntheticTask, SameLabelsAsBeforeAndFromRowsAsFromTheEdgeList) {
  // Labels pinned from the generator that built a CSC of the list (`generate rmat --scale 8
  // --edge-factor 8 --seed 3 --with-task --classes 4 --feature-dim 8`, data/label.npy).
  rmat_options ro;
  ro.scale = 8;
  ro.edge_factor = 8;
  ro.seed = 3;
  dataset ds = generate_rmat(ro);
  attach_synthetic_task(ds, 4, 8, 3);
  ASSERT_EQ(ds.labels.size(), 256u);
  EXPECT_EQ(std::vector<std::int64_t>(ds.labels.begin(), ds.labels.begin() + 16),
            (std::vector<std::int64_t>{1, 1, 0, 0, 3, 1, 0, 3, 1, 0, 0, 3, 1, 0, 0, 1}));
  std::int64_t weighted = 0;
  for (std::size_t v = 0; v < 256; ++v) weighted += static_cast<std::int64_t>(v) * ds.labels[v];
  EXPECT_EQ(weighted, 30512);
  EXPECT_FLOAT_EQ(ds.features.row(0)[0], 1.0577123165130615F);
  EXPECT_FLOAT_EQ(ds.features.row(0)[3], -0.6987529397010803F);
  // From the rows (the edge list never expanded): identical labels, features and split.
  dataset from_rows;
  from_rows.num_nodes = 256;
  attach_synthetic_task(from_rows, generate_rmat_rows(ro), 4, 8, 3);
  EXPECT_EQ(from_rows.labels, ds.labels);
  EXPECT_EQ(from_rows.features.values(), ds.features.values());
  EXPECT_EQ(from_rows.train, ds.train);
  EXPECT_EQ(from_rows.test, ds.test);
}

TEST(SyntheticTask, Float16FeaturesAreTheFloat32ValuesRounded) {
  rmat_options ro;
  ro.scale = 7;
  edge_rows const rows = generate_rmat_rows(ro);
  dataset a;
  a.num_nodes = 128;
  attach_synthetic_task(a, rows, 3, 5, 2);
  dataset b;
  b.num_nodes = 128;
  synthetic_task_options half;
  half.feature_type = feature_dtype::float16;
  attach_synthetic_task(b, rows, 3, 5, 2, half);
  EXPECT_EQ(b.feature_type, feature_dtype::float16);
  EXPECT_EQ(b.features.rows(), 0);
  ASSERT_EQ(b.features16.rows(), 128);
  ASSERT_EQ(b.features16.cols(), 5);
  EXPECT_EQ(b.labels, a.labels);
  for (std::int64_t v = 0; v < 128; ++v) {
    for (std::int64_t j = 0; j < 5; ++j) {
      float const x = a.features.row(v)[j];
      float const h = half_to_float(b.features16.row(v)[j]);
      // Nearest binary16: within half a unit in the last place (2^-11 relative, normal range).
      EXPECT_LE(std::fabs(h - x), std::ldexp(std::fabs(x), -11) + 1e-7F) << v << "," << j;
    }
  }
  synthetic_task_options bf;
  bf.feature_type = feature_dtype::bfloat16;
  dataset c;
  c.num_nodes = 128;
  EXPECT_THROW(attach_synthetic_task(c, rows, 3, 5, 2, bf), logic_error);
}

}  // namespace
}  // namespace coopgnn
