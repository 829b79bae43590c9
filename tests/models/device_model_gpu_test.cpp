// device_gnn_model (models/device_model.hpp) against the host gnn_model it mirrors: forward
// outputs, dropout masks, GCN coefficients, input and parameter gradients, loss, Adam and
// download, on small random multi-layer blocks. Every expected value comes from the host classes
// of models/layers.hpp, model.hpp and optimizer.hpp. Skips without a GPU.
#include <gtest/gtest.h>

#ifdef COOPGNN_WITH_CUDA

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <ostream>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "models/device_model.hpp"
#include "models/layers.hpp"
#include "models/model.hpp"
#include "models/optimizer.hpp"
#include "runtime/core/error.hpp"
#include "tests/common/gpu.hpp"

namespace coopgnn {
namespace {

using cuda::cuda_context;
using cuda::device_matrix;

/// One model shape and step of the comparison.
struct model_usecase {
  std::string name;
  models::conv_kind kind;
  std::int64_t in_dim;
  std::int64_t hidden;
  std::int64_t classes;
  bool head;
  float dropout;
  bool training;
};

/// gtest prints a failing case by its name instead of its bytes.
void PrintTo(const model_usecase& uc, std::ostream* os) { *os << uc.name; }

std::string kind_name(models::conv_kind k) { return k == models::conv_kind::sage ? "sage" : "gcn"; }

/// A block with `num_src` sources whose ids are `ids` (destinations first), random edges: dst 0
/// has none, dst 1 (when present) is a hub with min(num_src, 40) in-edges (more than a warp),
/// the others 1..6 distinct sources; Hajek weights 1/k; src_degree random in [0, 30] (some 0).
block random_block(const std::vector<vid_t>& ids, std::int64_t num_dst, std::mt19937_64& gen) {
  block b;
  b.num_dst = num_dst;
  b.src_ids = ids;
  auto const num_src = static_cast<std::int64_t>(ids.size());
  b.indptr.push_back(0);
  std::vector<std::int64_t> all(static_cast<std::size_t>(num_src));
  for (std::int64_t i = 0; i < num_src; ++i) all[static_cast<std::size_t>(i)] = i;
  for (std::int64_t s = 0; s < num_dst; ++s) {
    std::int64_t k = 0;
    if (s == 1) {
      k = std::min<std::int64_t>(num_src, 40);
    } else if (s > 1) {
      k = std::min<std::int64_t>(num_src, 1 + static_cast<std::int64_t>(gen() % 6));
    }
    std::shuffle(all.begin(), all.end(), gen);
    std::vector<std::int64_t> pick(all.begin(), all.begin() + k);
    std::sort(pick.begin(), pick.end());
    for (auto t : pick) {
      b.indices.push_back(t);
      b.weights.push_back(1.0f / static_cast<float>(k));
    }
    b.indptr.push_back(static_cast<eid_t>(b.indices.size()));
  }
  b.src_degree.resize(static_cast<std::size_t>(num_src));
  for (auto& d : b.src_degree) d = gen() % 4 == 0 ? 0 : static_cast<std::int64_t>(gen() % 31);
  return b;
}

/// Two chained blocks: 70 sources -> 33 destinations -> 17 destinations (around a warp).
std::vector<block> random_blocks(std::uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::vector<vid_t> ids;
  std::uniform_int_distribution<vid_t> id(0, vid_t{1} << 40);  // global ids beyond 32 bits
  while (ids.size() < 70) {
    vid_t const v = id(gen);
    if (std::find(ids.begin(), ids.end(), v) == ids.end()) ids.push_back(v);
  }
  std::vector<block> blocks;
  blocks.push_back(random_block(ids, 33, gen));
  blocks.push_back(random_block(std::vector<vid_t>(ids.begin(), ids.begin() + 33), 17, gen));
  return blocks;
}

matrix<float> random_matrix(std::int64_t rows, std::int64_t cols, std::uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  matrix<float> m(rows, cols);
  for (std::int64_t e = 0; e < m.size(); ++e) m.data()[e] = u(gen);
  return m;
}

device_matrix upload(const cuda_context& ctx, const matrix<float>& m) {
  device_matrix d;
  d.rows = m.rows();
  d.cols = m.cols();
  d.data = ctx.to_device(std::span<const float>(m.data(), static_cast<std::size_t>(m.size())));
  return d;
}

std::vector<float> host_values(const matrix<float>& m) { return {m.data(), m.data() + m.size()}; }

std::vector<float> download(const cuda_context& ctx, const device_matrix& m) {
  return ctx.to_host(m.data);
}

std::vector<float> download(const cuda_context& ctx, const float* p, std::int64_t n) {
  std::vector<float> out(static_cast<std::size_t>(n));
  if (n > 0) cuda::detail::copy_async(out.data(), p, out.size() * sizeof(float), ctx.compute());
  cuda::detail::synchronize(ctx.compute());
  return out;
}

/// |got - want| <= rtol * (|want| + max |want|): relative per element, with an absolute floor
/// scaled by the array so that cancellation in float sums does not fail the check. Also
/// asserts the expected values are not all zero (the comparison must be able to fail).
void expect_near_rel(const std::vector<float>& got, const std::vector<float>& want, double rtol,
                     const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  double scale = 0.0;
  for (float w : want) scale = std::max(scale, std::fabs(static_cast<double>(w)));
  ASSERT_GT(scale, 0.0) << what << ": the expected values are all zero";
  for (std::size_t i = 0; i < got.size(); ++i) {
    double const w = want[i];
    ASSERT_NEAR(got[i], w, rtol * (std::fabs(w) + scale)) << what << " element " << i;
  }
}

/// Concatenated host parameter gradients or values in params() order.
std::vector<float> flat_params(models::gnn_model& m, bool grads) {
  std::vector<float> out;
  for (auto* p : m.params()) {
    const auto& x = grads ? p->grad : p->value;
    out.insert(out.end(), x.data(), x.data() + x.size());
  }
  return out;
}

std::vector<std::int64_t> random_labels(std::int64_t n, std::int64_t classes, std::uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::vector<std::int64_t> y(static_cast<std::size_t>(n));
  for (auto& v : y) v = static_cast<std::int64_t>(gen() % static_cast<std::uint64_t>(classes));
  return y;
}

class DeviceModelVsHost : public ::testing::TestWithParam<model_usecase> {};

// The whole minibatch step on two blocks: layer outputs, masks, GCN coefficients, logits, loss,
// input gradient and every parameter gradient.
TEST_P(DeviceModelVsHost, ForwardBackwardMatchTheHost) {
  COOPGNN_REQUIRE_DEVICE();
  model_usecase const uc = GetParam();
  cuda_context ctx(0);
  models::model_config cfg;
  cfg.kind = uc.kind;
  cfg.in_dim = uc.in_dim;
  cfg.hidden = uc.hidden;
  cfg.num_classes = uc.classes;
  cfg.num_layers = 2;
  cfg.linear_head = uc.head;
  cfg.dropout = uc.dropout;
  cfg.seed = 11;
  models::gnn_model host(cfg);
  cuda::device_gnn_model dev(ctx, host, models::adam_options{});
  ASSERT_EQ(dev.num_parameters(), host.num_parameters());
  ASSERT_EQ(dev.num_layers(), 2);
  ASSERT_EQ(dev.has_head(), uc.head);
  // The two layers cover both orders when the widths say so (checked for the usecases below).
  std::vector<block> const blocks = random_blocks(7);
  matrix<float> const x = random_matrix(blocks[0].num_src(), cfg.in_dim, 3);
  models::step_key const key{99, 5, uc.training};
  std::int64_t const n = blocks.back().num_dst;
  std::vector<std::int64_t> const labels = random_labels(n, cfg.num_classes, 4);
  float const scale = 1.0f / static_cast<float>(n);

  // Host reference.
  models::model_cache hc;
  matrix<float> const logits = host.forward(blocks, x, key, &hc);
  matrix<float> glogits;
  float const host_loss = models::softmax_cross_entropy<float>(logits, labels, scale, &glogits);
  matrix<float> const gx = host.backward(blocks, glogits, hc);

  // Device.
  std::vector<cuda::device_block> dblocks;
  for (const auto& b : blocks) dblocks.push_back(cuda::upload(ctx, b));
  std::vector<cuda::device_conv_cache> caches(2);
  device_matrix const dx = upload(ctx, x);
  device_matrix h0 = dev.conv_forward(0, dblocks[0], dx, key, &caches[0]);
  device_matrix h1 = dev.conv_forward(1, dblocks[1], h0, key, &caches[1]);
  cuda::device_linear_cache head_cache;
  device_matrix dlogits;
  if (uc.head) {
    dlogits = dev.head_forward(h1, dblocks[1].src_ids.data(), key, &head_cache);
  } else {
    dlogits = std::move(h1);
  }
  auto const dlabels = ctx.to_device(std::span<const std::int64_t>(labels));
  device_matrix dglogits;
  double const dev_loss = dev.loss(dlogits, dlabels, scale, &dglogits);
  device_matrix g = std::move(dglogits);
  if (uc.head) g = dev.head_backward(g, head_cache);
  g = dev.conv_backward(1, dblocks[1], g, caches[1], true);
  device_matrix const dgx = dev.conv_backward(0, dblocks[0], g, caches[0], true);

  double const rtol = 1e-4;
  for (int i = 0; i < 2; ++i) {
    SCOPED_TRACE("layer " + std::to_string(i));
    const auto& hcache = hc.convs[static_cast<std::size_t>(i)];
    const auto& dcache = caches[static_cast<std::size_t>(i)];
    // Dropout masks are the same bits.
    ASSERT_EQ(ctx.to_host(dcache.keep), hcache.keep);
    bool const drop = uc.training && uc.dropout > 0.0f;
    ASSERT_EQ(hcache.keep.empty(), !drop);
    if (drop) {
      EXPECT_EQ(dcache.keep_scale, hcache.keep_scale);
      ASSERT_NE(std::count(hcache.keep.begin(), hcache.keep.end(), 0), 0) << "no element dropped";
    }
    if (i == 0) {
      // Same input, one multiply: the dropped input is bitwise the host's.
      ASSERT_EQ(download(ctx, dcache.h), host_values(hcache.h));
    } else {
      expect_near_rel(download(ctx, dcache.h), host_values(hcache.h), rtol, "cache.h");
    }
    // GCN coefficients: same float operations in the same order.
    ASSERT_EQ(ctx.to_host(dcache.edge_values), hcache.edge_values);
    ASSERT_EQ(dcache.mid.rows, hcache.mid.rows());
    ASSERT_EQ(dcache.mid.cols, hcache.mid.cols());
    expect_near_rel(download(ctx, dcache.mid), host_values(hcache.mid), rtol, "cache.mid");
    expect_near_rel(download(ctx, dcache.out), host_values(hcache.out), rtol, "cache.out");
  }
  if (uc.head) {
    ASSERT_EQ(ctx.to_host(head_cache.keep), hc.head.keep);
  }
  expect_near_rel(download(ctx, dlogits), host_values(logits), rtol, "logits");
  EXPECT_NEAR(dev_loss, host_loss, rtol * std::fabs(host_loss));
  expect_near_rel(download(ctx, dgx), host_values(gx), rtol, "dL/dx");
  expect_near_rel(download(ctx, dev.grads(), dev.num_parameters()), flat_params(host, true), rtol,
                  "parameter gradients");
}

std::vector<model_usecase> usecases() {
  std::vector<model_usecase> out;
  for (auto kind : {models::conv_kind::sage, models::conv_kind::gcn}) {
    // in 5 -> 16 aggregates first (ReLU), 16 -> 3 transforms first (no ReLU, no head).
    // in 20 -> 7 transforms first, 7 -> 7 aggregates first, then the head 7 -> 9.
    for (bool head : {false, true}) {
      std::int64_t const in = head ? 20 : 5;
      std::int64_t const hidden = head ? 7 : 16;
      std::int64_t const classes = head ? 9 : 3;
      std::string const base = kind_name(kind) + (head ? "_head" : "_nohead");
      out.push_back({base + "_train_dropout", kind, in, hidden, classes, head, 0.4f, true});
      out.push_back({base + "_train_nodropout", kind, in, hidden, classes, head, 0.0f, true});
      out.push_back({base + "_eval", kind, in, hidden, classes, head, 0.4f, false});
    }
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(Shapes, DeviceModelVsHost, ::testing::ValuesIn(usecases()),
                         [](const auto& info) { return info.param.name; });

// input_grad = false returns nothing and adds the same parameter gradients.
TEST(DeviceModel, BackwardWithoutInputGradAddsTheSameParameterGradients) {
  COOPGNN_REQUIRE_DEVICE();
  cuda_context ctx(0);
  for (auto kind : {models::conv_kind::sage, models::conv_kind::gcn}) {
    for (std::int64_t in : {4, 24}) {  // aggregate-first and transform-first
      SCOPED_TRACE(kind_name(kind) + " in " + std::to_string(in));
      models::model_config cfg{kind, in, 8, 8, 1, false, 0.25f, 5};
      models::gnn_model host(cfg);
      cuda::device_gnn_model dev(ctx, host, models::adam_options{});
      std::vector<block> const blocks = random_blocks(21);
      auto const db = cuda::upload(ctx, blocks[0]);
      device_matrix const x = upload(ctx, random_matrix(blocks[0].num_src(), in, 8));
      models::step_key const key{3, 1, true};
      cuda::device_conv_cache cache;
      device_matrix const out = dev.conv_forward(0, db, x, key, &cache);
      device_matrix const go = upload(ctx, random_matrix(out.rows, out.cols, 9));
      device_matrix const gh = dev.conv_backward(0, db, go, cache, true);
      EXPECT_EQ(gh.rows, blocks[0].num_src());
      auto const with = download(ctx, dev.grads(), dev.num_parameters());
      dev.zero_grad();
      auto const zeros = download(ctx, dev.grads(), dev.num_parameters());
      EXPECT_TRUE(std::all_of(zeros.begin(), zeros.end(), [](float v) { return v == 0.0f; }));
      device_matrix const none = dev.conv_backward(0, db, go, cache, false);
      EXPECT_EQ(none.size(), 0);
      auto const without = download(ctx, dev.grads(), dev.num_parameters());
      EXPECT_EQ(without, with);  // same kernels, same order: run-to-run identical
    }
  }
}

// Adam on the same gradients: the device step evaluates the host's double expression with the
// same rounding, so values stay bitwise equal step after step.
TEST(DeviceModel, AdamMatchesTheHostOptimizer) {
  COOPGNN_REQUIRE_DEVICE();
  cuda_context ctx(0);
  models::model_config cfg{models::conv_kind::sage, 6, 5, 3, 2, true, 0.0f, 17};
  models::gnn_model host(cfg);
  models::adam_options opt;
  opt.lr = 0.01f;
  opt.weight_decay = 0.001f;
  cuda::device_gnn_model dev(ctx, host, opt);
  models::adam host_adam(host.params(), opt);
  std::mt19937_64 gen(5);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (int step = 1; step <= 5; ++step) {
    SCOPED_TRACE("step " + std::to_string(step));
    std::vector<float> grads;
    for (auto* p : host.params()) {
      for (std::int64_t e = 0; e < p->grad.size(); ++e) p->grad.data()[e] = u(gen);
      grads.insert(grads.end(), p->grad.data(), p->grad.data() + p->grad.size());
    }
    cuda::detail::copy_async(dev.grads(), grads.data(), grads.size() * sizeof(float),
                             ctx.compute());
    host_adam.step();
    dev.adam_step();
    auto const got = download(ctx, dev.values(), dev.num_parameters());
    auto const want = flat_params(host, false);
    ASSERT_EQ(got, want);
    expect_near_rel(got, want, 1e-5, "values");  // (documents the brief's tolerance too)
  }
}

// The device loss on the host's logits, and its gradient.
TEST(DeviceModel, LossMatchesTheHostSoftmaxCrossEntropy) {
  COOPGNN_REQUIRE_DEVICE();
  cuda_context ctx(0);
  models::model_config cfg{models::conv_kind::gcn, 4, 4, 6, 1, false, 0.0f, 1};
  models::gnn_model host(cfg);
  cuda::device_gnn_model dev(ctx, host, models::adam_options{});
  for (std::int64_t n : {0, 1, 33}) {
    SCOPED_TRACE("n " + std::to_string(n));
    matrix<float> logits = random_matrix(n, 6, 2);
    for (std::int64_t e = 0; e < logits.size(); ++e) logits.data()[e] *= 8.0f;
    auto const labels = random_labels(n, 6, 3);
    matrix<float> grad;
    float const want = models::softmax_cross_entropy<float>(logits, labels, 0.25f, &grad);
    device_matrix dgrad;
    double const got = dev.loss(
        upload(ctx, logits), ctx.to_device(std::span<const std::int64_t>(labels)), 0.25f, &dgrad);
    EXPECT_NEAR(got, want, 1e-6 * std::fabs(want));
    ASSERT_EQ(dgrad.rows, n);
    ASSERT_EQ(dgrad.cols, 6);
    if (n > 0) expect_near_rel(download(ctx, dgrad), host_values(grad), 1e-6, "loss gradient");
  }
  EXPECT_THROW((void)dev.loss(upload(ctx, random_matrix(3, 6, 1)),
                              ctx.to_device(std::span<const std::int64_t>(random_labels(2, 6, 1))),
                              1.0f, nullptr),
               logic_error);
}

// Values go up unchanged and come back unchanged; a model of another shape is refused.
TEST(DeviceModel, DownloadRoundTripsTheParameters) {
  COOPGNN_REQUIRE_DEVICE();
  cuda_context ctx(0);
  for (auto kind : {models::conv_kind::sage, models::conv_kind::gcn}) {
    models::model_config cfg{kind, 9, 6, 4, 3, true, 0.1f, 123};
    models::gnn_model a(cfg);
    cuda::device_gnn_model dev(ctx, a, models::adam_options{});
    EXPECT_EQ(dev.config().seed, 123u);
    auto const grads = download(ctx, dev.grads(), dev.num_parameters());
    EXPECT_TRUE(std::all_of(grads.begin(), grads.end(), [](float v) { return v == 0.0f; }));
    models::model_config other = cfg;
    other.seed = 456;
    models::gnn_model b(other);
    ASSERT_NE(flat_params(b, false), flat_params(a, false));
    dev.download(b);
    EXPECT_EQ(flat_params(b, false), flat_params(a, false));
    models::model_config wider = cfg;
    wider.hidden = 7;
    models::gnn_model c(wider);
    EXPECT_THROW(dev.download(c), logic_error);
  }
}

TEST(DeviceModel, BadArgumentsThrowLogicError) {
  COOPGNN_REQUIRE_DEVICE();
  cuda_context ctx(0);
  models::model_config cfg{models::conv_kind::sage, 4, 4, 3, 1, false, 0.0f, 1};
  models::gnn_model host(cfg);
  models::adam_options bad;
  bad.beta1 = 1.0f;
  EXPECT_THROW((void)cuda::device_gnn_model(ctx, host, bad), logic_error);
  cuda::device_gnn_model dev(ctx, host, models::adam_options{});
  std::vector<block> const blocks = random_blocks(2);
  auto const db = cuda::upload(ctx, blocks[0]);
  device_matrix const x = upload(ctx, random_matrix(blocks[0].num_src(), 4, 1));
  device_matrix const wrong = upload(ctx, random_matrix(blocks[0].num_src(), 5, 1));
  EXPECT_THROW((void)dev.conv_forward(1, db, x, {}, nullptr), logic_error);
  EXPECT_THROW((void)dev.conv_forward(0, db, wrong, {}, nullptr), logic_error);
  EXPECT_THROW((void)dev.head_forward(x, nullptr, {}, nullptr), logic_error);  // no head
  cuda::device_conv_cache cache;
  device_matrix const out = dev.conv_forward(0, db, x, {}, &cache);
  EXPECT_THROW((void)dev.conv_backward(0, db, x, cache, true), logic_error);  // wrong grad shape
  EXPECT_EQ(out.rows, blocks[0].num_dst);
}

}  // namespace
}  // namespace coopgnn

#endif  // COOPGNN_WITH_CUDA
