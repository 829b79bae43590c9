// gnn_model: structure, thread-count-independent full inference, minibatch forward/backward on
// full blocks, and a small full-batch training run that must learn.
#include "models/model.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "kernels/dense/elementwise.hpp"
#include "kernels/sample/sampling.hpp"
#include "models/metrics.hpp"
#include "models/optimizer.hpp"
#include "runtime/core/error.hpp"
#include "runtime/graph/csc.hpp"
#include "tests/common/graphs.hpp"

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

std::vector<block_view> views_of(const std::vector<block>& blocks) {
  std::vector<block_view> v;
  for (auto const& b : blocks) v.push_back(view(b));
  return v;
}

exec_context const host_ctx;

TEST(gnn_model, structure_follows_the_config) {
  gnn_model with_head(host_ctx, {conv_kind::sage, 7, 5, 3, 3, true, 0.5f, 1});
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
  for (auto const& p : with_head.params().infos()) {
    EXPECT_EQ(p.offset, counted);  // back to back in params() order
    counted += p.rows * p.cols;
    names.insert(p.name);
  }
  EXPECT_EQ(counted, with_head.num_parameters());
  EXPECT_EQ(names.size(), with_head.params().count());
  EXPECT_EQ(with_head.params().info(0).name, "sage0.w_self");
  EXPECT_EQ(with_head.params().infos().back().name, "linear3.bias");
  // Layer 0 = sage0.w_self [7, 5], sage0.w_neigh [7, 5], sage0.bias [1, 5].
  EXPECT_EQ(with_head.first_layer_values(), 7 * 5 * 2 + 5);
  model_config normed{conv_kind::gcn, 7, 5, 3, 2, false, 0.0f, 1};
  normed.layer_norm = true;
  normed.activation = activation_kind::prelu;
  gnn_model with_norm(host_ctx, normed);
  // gcn0.weight [7, 5], gcn0.bias [1, 5], then ln0.gamma/beta [1, 5] and prelu0.alpha [1, 1].
  EXPECT_EQ(with_norm.first_layer_values(), 7 * 5 + 5 + 5 + 5 + 1);

  gnn_model plain(host_ctx, {conv_kind::gcn, 4, 8, 2, 2, false, 0.0f, 1});
  EXPECT_EQ(plain.head(), nullptr);
  EXPECT_TRUE(plain.layer(0).apply_relu());
  EXPECT_FALSE(plain.layer(1).apply_relu());
  EXPECT_EQ(plain.layer(1).out_dim(), 2);
  EXPECT_THROW(plain.layer(2), logic_error);

  EXPECT_THROW(gnn_model(host_ctx, {conv_kind::gcn, 4, 8, 2, 0, false, 0.0f, 1}), logic_error);
  EXPECT_THROW(gnn_model(host_ctx, {conv_kind::gcn, 4, 0, 2, 2, false, 0.0f, 1}), logic_error);
  EXPECT_THROW(gnn_model(host_ctx, {conv_kind::gcn, 4, 8, 2, 2, false, 1.5f, 1}), logic_error);
}

TEST(gnn_model, layout_of_is_the_models_layout_without_allocating) {
  model_config const c{conv_kind::sage, 7, 5, 3, 3, true, 0.5f, 1};
  model_layout const l = layout_of(c);
  // 7*5*2 + 5 + 2 * (5*5*2 + 5) + 5*3 + 3, as structure_follows_the_config counts.
  EXPECT_EQ(l.num_values, 75 + 110 + 18);
  EXPECT_EQ(l.first_layer_values, 7 * 5 * 2 + 5);
  gnn_model const built(host_ctx, c);
  ASSERT_EQ(l.tensors.size(), built.params().count());
  for (std::size_t i = 0; i < l.tensors.size(); ++i) {
    auto const& want = built.params().info(i);
    EXPECT_EQ(l.tensors[i].name, want.name);
    EXPECT_EQ(l.tensors[i].rows, want.rows);
    EXPECT_EQ(l.tensors[i].cols, want.cols);
    EXPECT_EQ(l.tensors[i].offset, want.offset);
  }
  // GraphSAGE 1433 -> 2000000 -> 7 (92 GB with Adam): counted, never allocated.
  // 2 x 1433 x 2e6 + 2e6 + 2 x 2e6 x 7 + 7.
  EXPECT_EQ(layout_of({conv_kind::sage, 1433, 2000000, 7, 2, false, 0.0f, 1}).num_values,
            5762000007);
  // Widths whose product overflows 64 bits saturate the count; the model refuses to allocate.
  model_config const over{
      conv_kind::gcn, std::int64_t{1} << 40, std::int64_t{1} << 40, 7, 2, false, 0.0f, 1};
  EXPECT_EQ(layout_of(over).num_values, std::numeric_limits<std::int64_t>::max());
  EXPECT_THROW(gnn_model(host_ctx, over), logic_error);
  // The constructor's checks are the layout's.
  EXPECT_THROW(layout_of({conv_kind::gcn, 4, 8, 2, 0, false, 0.0f, 1}), logic_error);
  EXPECT_THROW(layout_of({conv_kind::gcn, 4, 0, 2, 2, false, 0.0f, 1}), logic_error);
}

TEST(gnn_model, replica_has_the_bits_of_a_freshly_initialised_model) {
  // What P host replicas do: build one, copy it into the others. Every initialiser is covered
  // (Glorot weights, zero biases, LayerNorm's ones, PReLU's 0.25, the MLP decoder, GAT's
  // attention vectors); the reference is the constructor that draws.
  model_config sage{conv_kind::sage, 7, 5, 3, 3, true, 0.5f, 11};
  sage.layer_norm = true;
  sage.activation = activation_kind::prelu;
  model_config link{conv_kind::gcn, 6, 4, 4, 2, false, 0.0f, 12};
  link.decoder = decoder_kind::mlp;
  link.decoder_hidden = 3;
  model_config gat{conv_kind::gat, 5, 4, 3, 2, false, 0.0f, 13};
  for (model_config const& c : {sage, link, gat}) {
    gnn_model const drawn(host_ctx, c);
    gnn_model const replica(host_ctx, drawn);
    auto const want = drawn.params().values();
    auto const got = replica.params().values();
    ASSERT_EQ(got.size, want.size);
    ASSERT_GT(want.size, 0u);
    EXPECT_TRUE(std::equal(want.data, want.data + want.size, got.data, [](float a, float b) {
      return std::bit_cast<std::uint32_t>(a) == std::bit_cast<std::uint32_t>(b);
    }));
    // Not all zeros, not all one value: the draws arrived.
    EXPECT_NE(*std::min_element(got.data, got.data + got.size),
              *std::max_element(got.data, got.data + got.size));
    auto const grads = replica.params().grads();
    EXPECT_TRUE(std::all_of(grads.data, grads.data + grads.size, [](float g) { return g == 0; }));
    EXPECT_EQ(replica.first_layer_values(), drawn.first_layer_values());
  }
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

TEST(gnn_model, full_neighbor_block_typed_rows_per_relation) {
  // Rows s * R + r hold s's in-edges of relation r (from the raw edge list), weights 1 / d_r(s).
  std::int32_t const R = 3;
  auto const t = test::random_typed_graph(40, R, 3, 6);
  block const b = full_neighbor_block(t.g);
  ASSERT_EQ(b.num_relations, R);
  ASSERT_EQ(b.num_dst, 40);
  ASSERT_EQ(b.num_src(), 40);
  ASSERT_EQ(b.indptr.size(), std::size_t{40} * R + 1);
  ASSERT_NO_THROW((void)view(b));
  std::vector<std::vector<std::vector<vid_t>>> lists(
      40, std::vector<std::vector<vid_t>>(static_cast<std::size_t>(R)));
  std::vector<std::int64_t> degree(40, 0);
  for (std::size_t e = 0; e < t.src.size(); ++e) {
    lists[static_cast<std::size_t>(t.dst[e])][static_cast<std::size_t>(t.rel[e])].push_back(
        t.src[e]);
    ++degree[static_cast<std::size_t>(t.dst[e])];
  }
  std::int64_t multi = 0;
  for (vid_t s = 0; s < 40; ++s) {
    EXPECT_EQ(b.src_ids[s], s);
    EXPECT_EQ(b.src_degree[s], degree[static_cast<std::size_t>(s)]);
    for (std::int32_t r = 0; r < R; ++r) {
      auto want = lists[static_cast<std::size_t>(s)][static_cast<std::size_t>(r)];
      std::sort(want.begin(), want.end());
      std::size_t const q = static_cast<std::size_t>(s) * R + r;
      std::vector<vid_t> got;
      for (eid_t e = b.indptr[q]; e < b.indptr[q + 1]; ++e) {
        got.push_back(b.src_ids[b.indices[e]]);
        EXPECT_EQ(b.weights[e], static_cast<float>(1.0 / static_cast<double>(want.size())));
      }
      EXPECT_EQ(got, want) << "vertex " << s << " relation " << r;
      multi += want.size() > 1 ? 1 : 0;
    }
  }
  EXPECT_GT(multi, 10);
  EXPECT_EQ(b.src_degree[0], 0);
  EXPECT_EQ(b.src_degree[1], 39 * R) << "the hub gets every other vertex in every relation";
  // Untyped: one row per vertex, the CSC itself.
  csc_graph const g = random_graph(20, 3, 4);
  EXPECT_EQ(full_neighbor_block(g).num_relations, 1);
  EXPECT_EQ(full_neighbor_block(g).indptr, g.indptr);
}

TEST(gnn_model, infer_full_is_identical_for_any_thread_count) {
  csc_graph const g = random_graph(61, 4, 7);
  auto const x = random_features(61, 7, 8);
  // SAGE 7 -> 5 (transform first) -> 5 -> 5 (aggregate first), head 5 -> 3; GCN 7 -> 9
  // (aggregate first) -> 3 (transform first).
  for (model_config const& cfg : {model_config{conv_kind::sage, 7, 5, 3, 3, true, 0.3f, 11},
                                  model_config{conv_kind::gcn, 7, 9, 3, 2, false, 0.3f, 12}}) {
    gnn_model m(host_ctx, cfg);
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
    auto out = m.forward(views_of(blocks), host_view(x), step_key{}, nullptr);
    EXPECT_EQ(std::move(out).release_host().values(), one.values());
    // On the emulated device the same model (copied weights) infers the same bits.
    gnn_model e(exec_context(backend::emulated), cfg);
    e.copy_parameters_from(m);
    EXPECT_EQ(e.infer_full(g, x, 2).values(), one.values());
  }
  gnn_model m(host_ctx, {conv_kind::gcn, 7, 9, 3, 2, false, 0.0f, 12});
  EXPECT_THROW(m.infer_full(g, random_features(60, 7, 1), 2), logic_error);
  EXPECT_THROW(m.infer_full(g, x, 0), logic_error);
}

TEST(gnn_model, forward_rejects_blocks_that_do_not_chain) {
  csc_graph const g = random_graph(10, 2, 3);
  gnn_model m(host_ctx, {conv_kind::sage, 4, 4, 2, 2, false, 0.0f, 1});
  block const full = full_neighbor_block(g);
  auto const x = random_features(10, 4, 2);
  std::vector<block> const one(1, full);
  EXPECT_THROW((void)m.forward(views_of(one), host_view(x), step_key{}, nullptr), logic_error);
  block small = full;  // 3 destinations only: the next block would need 3 sources
  small.num_dst = 3;
  small.indptr.resize(4);
  small.indices.resize(static_cast<std::size_t>(small.indptr.back()));
  small.weights.resize(small.indices.size());
  std::vector<block> const broken = {small, full};
  EXPECT_THROW((void)m.forward(views_of(broken), host_view(x), step_key{}, nullptr), logic_error);
  // A model of another shape cannot receive these weights.
  gnn_model other(host_ctx, {conv_kind::sage, 4, 5, 2, 2, false, 0.0f, 1});
  EXPECT_THROW(other.copy_parameters_from(m), logic_error);
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
  gnn_model m(host_ctx, {conv_kind::gcn, 6, 16, 2, 2, false, 0.1f, 99});
  adam opt(host_ctx, m.params(), adam_options{0.01f});
  block const full = full_neighbor_block(g);
  std::vector<block> const host_blocks = {full, full};
  auto const blocks = views_of(host_blocks);
  float first_loss = 0.0f;
  float last_loss = 0.0f;
  for (std::uint32_t step = 0; step < 100; ++step) {
    model_cache cache;
    auto const logits = m.forward(blocks, host_view(x), step_key{5, step, true}, &cache);
    tensor<float> grad(host_ctx, logits.rows(), logits.cols());
    float const loss = softmax_cross_entropy<float>(host_ctx, logits.view(), host_view(labels),
                                                    1.0f / n, grad.view());
    if (step == 0) first_loss = loss;
    last_loss = loss;
    m.zero_grad();
    (void)m.backward(blocks, grad.view(), cache);
    opt.step();
  }
  EXPECT_LT(last_loss, 0.5f * first_loss);
  std::vector<std::int64_t> rows(n);
  for (vid_t v = 0; v < n; ++v) rows[v] = v;
  double const acc = accuracy(m.infer_full(g, x, 2), labels, rows);
  EXPECT_GT(acc, 0.9);
}

// ---- one model on every backend ---------------------------------------------------------------

/// Trains `cfg` for `steps` minibatch steps on sampled-looking blocks (full blocks of `g` with
/// a dropout key that changes per step) in `ctx`'s memory space: the data are uploaded, every
/// intermediate stays there, and only logits, gradients and weights come back. Returns the
/// per-step losses, then appends the final logits, gradients and weights to `bits`.
std::vector<float> train_in(const exec_context& ctx, const model_config& cfg, const csc_graph& g,
                            const matrix<float>& x, const std::vector<std::int64_t>& labels,
                            int steps, std::vector<float>& bits) {
  gnn_model m(ctx, cfg);
  adam opt(ctx, m.params(), adam_options{0.02f, 0.9f, 0.999f, 1e-8f, 5e-4f});
  block const full = full_neighbor_block(g);
  std::vector<block_buffers> placed;
  std::vector<block_view> blocks;
  for (int l = 0; l < cfg.num_layers; ++l) placed.push_back(upload_block(ctx, full));
  for (auto const& b : placed) blocks.push_back(b.view());
  tensor<float> const xd = upload<float>(ctx, x);
  buffer<std::int64_t> const yd = upload<std::int64_t>(ctx, labels);
  std::vector<float> losses;
  tensor<float> logits;
  for (int step = 0; step < steps; ++step) {
    model_cache cache;
    logits =
        m.forward(blocks, xd.view(), step_key{9, static_cast<std::uint32_t>(step), true}, &cache);
    tensor<float> grad(ctx, logits.rows(), logits.cols());
    losses.push_back(softmax_cross_entropy<float>(
        ctx, logits.view(), yd.view(), 1.0f / static_cast<float>(labels.size()), grad.view()));
    m.zero_grad();
    (void)m.backward(blocks, grad.view(), cache, step % 2 == 0);
    opt.step();
  }
  matrix<float> const logits_h = download<float>(ctx, logits.view());
  for (float v : logits_h.values()) bits.push_back(v);
  for (float v : download<float>(ctx, m.params().grads())) bits.push_back(v);
  for (float v : download<float>(ctx, m.params().values())) bits.push_back(v);
  return losses;
}

TEST(gnn_model, emulated_device_trains_to_the_host_bits) {
  // The emulated device runs the host kernels on separate, poisoned allocations that host code
  // cannot read without a download: equal bits mean every upload, download, zeroing and memory
  // space the device path relies on is in place (a missing one reads NaN poison or throws).
  csc_graph const g = random_graph(47, 3, 21);
  auto const x = random_features(47, 6, 22);
  std::vector<std::int64_t> labels(47);
  for (std::size_t i = 0; i < labels.size(); ++i) labels[i] = static_cast<std::int64_t>(i % 3);
  for (model_config const& cfg : {model_config{conv_kind::sage, 6, 8, 3, 2, true, 0.3f, 5},
                                  model_config{conv_kind::gcn, 6, 4, 3, 2, false, 0.2f, 6},
                                  model_config{conv_kind::sage, 6, 3, 3, 1, false, 0.0f, 7}}) {
    SCOPED_TRACE(cfg.kind == conv_kind::sage ? "sage" : "gcn");
    std::vector<float> host_bits;
    std::vector<float> emulated_bits;
    auto const host_losses = train_in(host_ctx, cfg, g, x, labels, 4, host_bits);
    auto const emulated_losses =
        train_in(exec_context(backend::emulated), cfg, g, x, labels, 4, emulated_bits);
    EXPECT_EQ(host_losses, emulated_losses);
    ASSERT_EQ(host_bits.size(), emulated_bits.size());
    EXPECT_EQ(host_bits, emulated_bits);
    for (float v : host_bits) ASSERT_TRUE(std::isfinite(v));
    // Not vacuous: the steps moved the weights away from their initial values.
    gnn_model const fresh(host_ctx, cfg);
    auto const init = fresh.params().values().host();
    std::size_t const n = init.size();
    std::vector<float> const final_weights(host_bits.end() - static_cast<std::ptrdiff_t>(n),
                                           host_bits.end());
    EXPECT_NE(final_weights, std::vector<float>(init.begin(), init.end()));
  }
}

}  // namespace
}  // namespace coopgnn::models
