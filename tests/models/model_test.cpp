// gnn_model: structure, thread-count-independent full inference, minibatch forward/backward on
// full blocks, and a small full-batch training run that must learn.
#include "models/model.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "models/metrics.hpp"
#include "models/optimizer.hpp"
#include "runtime/core/error.hpp"
#include "runtime/graph/csc.hpp"

namespace coopgnn::models {
namespace {

/// A random directed graph: vertex 0 isolated (no in-edges), vertex 1 a hub receiving an edge
/// from every other vertex, the rest about `avg` random in-edges.
csc_graph random_graph(vid_t n, int avg, std::uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::vector<vid_t> src;
  std::vector<vid_t> dst;
  for (vid_t v = 2; v < n; ++v) {
    src.push_back(v);
    dst.push_back(1);
    int const deg = static_cast<int>(gen() % static_cast<std::uint64_t>(2 * avg + 1));
    for (int e = 0; e < deg; ++e) {
      src.push_back(static_cast<vid_t>(gen() % static_cast<std::uint64_t>(n)));
      dst.push_back(v);
    }
  }
  return build_csc(n, src, dst);
}

matrix<float> random_features(std::int64_t rows, std::int64_t cols, std::uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  matrix<float> m(rows, cols);
  for (float& v : m.values()) v = u(gen);
  return m;
}

TEST(gnn_model, structure_follows_the_config) {
  gnn_model with_head({conv_kind::sage, 7, 5, 3, 3, true, 0.5f, 1});
  ASSERT_EQ(with_head.num_layers(), 3);
  EXPECT_EQ(with_head.layer(0).in_dim(), 7);
  EXPECT_EQ(with_head.layer(0).out_dim(), 5);
  EXPECT_EQ(with_head.layer(2).out_dim(), 5);
  for (int i = 0; i < 3; ++i) {
    EXPECT_TRUE(with_head.layer(i).apply_relu());
    EXPECT_EQ(with_head.layer(i).layer_index(), static_cast<std::uint32_t>(i));
    EXPECT_EQ(with_head.layer(i).dropout(), 0.5f);
  }
  ASSERT_NE(with_head.head(), nullptr);
  EXPECT_EQ(with_head.head()->in_dim(), 5);
  EXPECT_EQ(with_head.head()->out_dim(), 3);
  EXPECT_EQ(with_head.head()->layer_index(), 3u);
  // 7*5*2 + 5 + 2 * (5*5*2 + 5) + 5*3 + 3
  EXPECT_EQ(with_head.num_parameters(), 75 + 110 + 18);
  std::int64_t counted = 0;
  std::set<std::string> names;
  for (auto* p : with_head.params()) {
    counted += p->value.size();
    names.insert(p->name);
  }
  EXPECT_EQ(counted, with_head.num_parameters());
  EXPECT_EQ(names.size(), with_head.params().size());

  gnn_model plain({conv_kind::gcn, 4, 8, 2, 2, false, 0.0f, 1});
  EXPECT_EQ(plain.head(), nullptr);
  EXPECT_TRUE(plain.layer(0).apply_relu());
  EXPECT_FALSE(plain.layer(1).apply_relu());
  EXPECT_EQ(plain.layer(1).out_dim(), 2);
  EXPECT_THROW(plain.layer(2), logic_error);

  EXPECT_THROW(gnn_model({conv_kind::gcn, 4, 8, 2, 0, false, 0.0f, 1}), logic_error);
  EXPECT_THROW(gnn_model({conv_kind::gcn, 4, 0, 2, 2, false, 0.0f, 1}), logic_error);
  EXPECT_THROW(gnn_model({conv_kind::gcn, 4, 8, 2, 2, false, 1.5f, 1}), logic_error);
}

TEST(gnn_model, full_neighbor_block_shape) {
  csc_graph const g = random_graph(20, 3, 4);
  block const b = full_neighbor_block(g);
  EXPECT_EQ(b.num_dst, 20);
  EXPECT_EQ(b.num_src(), 20);
  EXPECT_EQ(b.indptr, g.indptr);
  EXPECT_EQ(b.src_degree[0], 0);
  EXPECT_EQ(b.src_degree[1], 18);
  for (vid_t s = 0; s < 20; ++s) {
    EXPECT_EQ(b.src_ids[s], s);
    double sum = 0;
    for (eid_t e = b.indptr[s]; e < b.indptr[s + 1]; ++e) sum += b.weights[e];
    if (g.in_degree(s) > 0) {
      EXPECT_NEAR(sum, 1.0, 1e-6);
    }
  }
  block const empty = full_neighbor_block(build_csc(0, {}, {}));
  EXPECT_EQ(empty.num_dst, 0);
}

TEST(gnn_model, infer_full_is_identical_for_any_thread_count) {
  csc_graph const g = random_graph(61, 4, 7);
  auto const x = random_features(61, 7, 8);
  // SAGE 7 -> 5 (transform first) -> 5 -> 5 (aggregate first), head 5 -> 3; GCN 7 -> 9
  // (aggregate first) -> 3 (transform first).
  for (model_config const& cfg : {model_config{conv_kind::sage, 7, 5, 3, 3, true, 0.3f, 11},
                                  model_config{conv_kind::gcn, 7, 9, 3, 2, false, 0.3f, 12}}) {
    gnn_model m(cfg);
    auto const one = m.infer_full(g, x, 1);
    ASSERT_EQ(one.rows(), 61);
    ASSERT_EQ(one.cols(), 3);
    bool any = false;
    for (float v : one.values()) any = any || v != 0.0f;
    EXPECT_TRUE(any);
    for (int threads : {2, 3, 8, 100}) {
      EXPECT_EQ(m.infer_full(g, x, threads).values(), one.values()) << "threads " << threads;
    }
    // The minibatch forward on full blocks (no training) computes the same bits.
    block const full = full_neighbor_block(g);
    std::vector<block> const blocks(static_cast<std::size_t>(cfg.num_layers), full);
    EXPECT_EQ(m.forward(blocks, x, step_key{}, nullptr).values(), one.values());
  }
  gnn_model m({conv_kind::gcn, 7, 9, 3, 2, false, 0.0f, 12});
  EXPECT_THROW(m.infer_full(g, random_features(60, 7, 1), 2), logic_error);
  EXPECT_THROW(m.infer_full(g, x, 0), logic_error);
}

TEST(gnn_model, forward_rejects_blocks_that_do_not_chain) {
  csc_graph const g = random_graph(10, 2, 3);
  gnn_model m({conv_kind::sage, 4, 4, 2, 2, false, 0.0f, 1});
  block const full = full_neighbor_block(g);
  auto const x = random_features(10, 4, 2);
  std::vector<block> const one(1, full);
  EXPECT_THROW(m.forward(one, x, step_key{}, nullptr), logic_error);
  block small = full;  // 3 destinations only: the next block would need 3 sources
  small.num_dst = 3;
  small.indptr.resize(4);
  small.indices.resize(static_cast<std::size_t>(small.indptr.back()));
  small.weights.resize(small.indices.size());
  std::vector<block> const broken = {small, full};
  EXPECT_THROW(m.forward(broken, x, step_key{}, nullptr), logic_error);
}

TEST(gnn_model, two_layer_gcn_learns_a_separable_two_class_graph) {
  // 80 vertices, class = v % 2; each vertex has 4 in-neighbours of its own class and one of the
  // other; features = class indicator + uniform noise in [-0.5, 0.5) in 6 columns.
  constexpr vid_t n = 80;
  std::mt19937_64 gen(2024);
  std::vector<vid_t> src;
  std::vector<vid_t> dst;
  std::vector<std::int64_t> labels(n);
  for (vid_t v = 0; v < n; ++v) {
    labels[v] = v % 2;
    for (int e = 0; e < 5; ++e) {
      vid_t u = static_cast<vid_t>(gen() % (n / 2)) * 2 + (e < 4 ? v % 2 : 1 - v % 2);
      if (u == v) u = (u + 2) % n;
      src.push_back(u);
      dst.push_back(v);
    }
  }
  csc_graph const g = build_csc(n, src, dst);
  std::uniform_real_distribution<float> noise(-0.5f, 0.5f);
  matrix<float> x(n, 6);
  for (vid_t v = 0; v < n; ++v) {
    for (std::int64_t j = 0; j < 6; ++j) {
      x(v, j) = noise(gen) + (j == labels[v] ? 1.0f : 0.0f);
    }
  }
  gnn_model m({conv_kind::gcn, 6, 16, 2, 2, false, 0.1f, 99});
  adam opt(m.params(), adam_options{0.01f});
  block const full = full_neighbor_block(g);
  std::vector<block> const blocks = {full, full};
  float first_loss = 0.0f;
  float last_loss = 0.0f;
  for (std::uint32_t step = 0; step < 100; ++step) {
    model_cache cache;
    auto const logits = m.forward(blocks, x, step_key{5, step, true}, &cache);
    matrix<float> grad;
    float const loss = softmax_cross_entropy<float>(logits, labels, 1.0f / n, &grad);
    if (step == 0) first_loss = loss;
    last_loss = loss;
    m.zero_grad();
    m.backward(blocks, grad, cache);
    opt.step();
  }
  EXPECT_LT(last_loss, 0.5f * first_loss);
  std::vector<std::int64_t> rows(n);
  for (vid_t v = 0; v < n; ++v) rows[v] = v;
  double const acc = accuracy(m.infer_full(g, x, 2), labels, rows);
  EXPECT_GT(acc, 0.9);
}

}  // namespace
}  // namespace coopgnn::models
