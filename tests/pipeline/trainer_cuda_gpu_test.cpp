// The trainer on the CUDA backend (docs/design.md section 2): with the same seeds it samples
// exactly the host's blocks and computes the host's logits and gradients within float tolerance;
// cooperative minibatching over 1, 2 and 4 PEs sharing one device (peer-copy communicator) equals
// the single-PE run; every feature tier gives the same step; it learns like the host backend.
// Expected values come from the host backend (the reference), never from the device code.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "runtime/core/device.hpp"
#include "runtime/core/error.hpp"
#include "pipeline/trainer.hpp"
#include "tests/common/gpu.hpp"
#include "tests/common/steps.hpp"

namespace coopgnn {
namespace {

struct usecase {
  std::string model;
  sampler_kind sampler;
  std::vector<int> fanouts;
  std::int64_t batch;
  bool linear_head;
  std::int64_t hidden;
};

std::ostream& operator<<(std::ostream& os, const usecase& u) {
  os << u.model << "/" << to_string(u.sampler) << " fanouts";
  for (int f : u.fanouts) os << " " << f;
  return os << " B=" << u.batch << (u.linear_head ? " head" : "") << " hidden=" << u.hidden;
}

const test::step_fixture& data() { return test::protocol_data(); }

train_config make_cfg(const usecase& u, minibatch_mode mode, int P, backend b) {
  train_config c;
  c.mode = mode;
  c.num_pes = P;
  c.compute_backend = b;
  c.pes_per_gpu = P;  // all PEs on device 0
  c.model = models::parse_conv_kind(u.model);
  c.hidden = u.hidden;
  c.linear_head = u.linear_head;
  c.fanouts = u.fanouts;
  c.sampler = u.sampler;
  c.batch_size = u.batch;
  c.dropout = 0.3f;  // active: device masks must be the host's
  c.seed = 77;
  return c;
}

using test::step_result;

step_result run_step(const train_config& cfg) {
  auto r = test::run_protocol_step(cfg);
  for (auto const& e : r.edges) {
    EXPECT_EQ(e.size(), test::as_set(e).size()) << "an edge was sampled by two PEs";
  }
  return r;
}

/// The distinct edges of every layer.
std::vector<std::set<std::pair<vid_t, vid_t>>> edge_sets(const step_result& r) {
  std::vector<std::set<std::pair<vid_t, vid_t>>> out;
  for (auto const& e : r.edges) out.push_back(test::as_set(e));
  return out;
}

/// Same logits, gradients and loss within `rel` of the reference's scale.
void expect_close(const step_result& a, const step_result& ref, float rel) {
  ASSERT_EQ(a.logits.size(), ref.logits.size());
  float lscale = 0;
  for (auto const& [v, row] : ref.logits) {
    for (float x : row) lscale = std::max(lscale, std::abs(x));
  }
  for (auto const& [v, row] : ref.logits) {
    auto const& other = a.logits.at(v);
    ASSERT_EQ(other.size(), row.size());
    for (std::size_t j = 0; j < row.size(); ++j) {
      EXPECT_NEAR(other[j], row[j], rel * std::max(1.0f, lscale))
          << "logit of vertex " << v << " column " << j;
    }
  }
  ASSERT_EQ(a.grads.size(), ref.grads.size());
  float scale = 0;
  for (float g : ref.grads) scale = std::max(scale, std::abs(g));
  ASSERT_GT(scale, 0.0f) << "reference gradient is all zeros";
  for (std::size_t i = 0; i < ref.grads.size(); ++i) {
    EXPECT_NEAR(a.grads[i], ref.grads[i], 10 * rel * scale) << "gradient element " << i;
  }
  EXPECT_NEAR(a.loss, ref.loss, rel * std::max(1.0, std::abs(ref.loss)));
}

class TrainerCuda : public ::testing::TestWithParam<usecase> {};

TEST_P(TrainerCuda, SinglePeMatchesTheHostBackend) {
  COOPGNN_REQUIRE_DEVICE();
  auto const u = GetParam();
  auto const host = run_step(make_cfg(u, minibatch_mode::independent, 1, backend::host));
  ASSERT_GT(host.edges[0].size(), 0u);
  for (bool on_device : {true, false}) {
    SCOPED_TRACE(on_device ? "sampled on the device" : "sampled on the host");
    auto cfg = make_cfg(u, minibatch_mode::independent, 1, backend::cuda);
    cfg.sample_on_device = on_device;
    auto const dev = run_step(cfg);
    for (std::size_t l = 0; l < u.fanouts.size(); ++l) {
      EXPECT_EQ(dev.edges[l], host.edges[l]) << "layer " << l << ": the blocks differ";
    }
    EXPECT_EQ(dev.work.feature_rows, host.work.feature_rows);
    EXPECT_EQ(dev.work.sampled_vertices, host.work.sampled_vertices);
    expect_close(dev, host, 1e-4f);
  }
}

TEST_P(TrainerCuda, CooperativeOnOneDeviceEqualsSinglePe) {
  COOPGNN_REQUIRE_DEVICE();
  auto const u = GetParam();
  auto const ref = run_step(make_cfg(u, minibatch_mode::independent, 1, backend::cuda));
  for (int P : {1, 2, 4}) {
    SCOPED_TRACE(::testing::Message() << "P = " << P << " PEs on one device");
    auto const host = run_step(make_cfg(u, minibatch_mode::cooperative, P, backend::host));
    for (bool on_device : {true, false}) {
      SCOPED_TRACE(on_device ? "sampled on the device" : "sampled on the host");
      auto cfg = make_cfg(u, minibatch_mode::cooperative, P, backend::cuda);
      cfg.sample_on_device = on_device;
      auto const coop = run_step(cfg);
      EXPECT_EQ(edge_sets(coop), edge_sets(ref));
      expect_close(coop, ref, 1e-5f);
      // The same step on the host backend samples and moves exactly the same.
      EXPECT_EQ(coop.edges, host.edges);
      EXPECT_EQ(coop.work.alltoall_bytes, host.work.alltoall_bytes);
      EXPECT_EQ(coop.work.sampled_vertices, host.work.sampled_vertices);
      EXPECT_EQ(coop.work.feature_rows, host.work.feature_rows);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Usecases, TrainerCuda,
    ::testing::Values(usecase{"sage", sampler_kind::ns, {4, 3}, 64, false, 8},  // aggregate first
                      usecase{"sage", sampler_kind::labor, {5, 5}, 50, true, 16},  // head
                      usecase{"gcn", sampler_kind::ns, {-1, 3}, 33, true, 8},
                      usecase{"gcn", sampler_kind::labor, {3}, 40, false, 4}));  // transform first

TEST(TrainerCudaTiers, EveryFeatureTierGivesTheSameStep) {
  COOPGNN_REQUIRE_DEVICE();
  usecase const u{"sage", sampler_kind::ns, {4, 3}, 64, false, 8};
  auto base = make_cfg(u, minibatch_mode::cooperative, 2, backend::cuda);
  base.feature_storage = storage_tier::device;
  auto const ref = run_step(base);
  for (std::string tier : {"pinned", "host"}) {
    SCOPED_TRACE(tier);
    auto c = base;
    c.feature_storage = parse_storage_tier(tier);
    auto const r = run_step(c);
    EXPECT_EQ(r.logits, ref.logits) << "the rows loaded differ between tiers";
    EXPECT_EQ(r.grads, ref.grads);
  }
  auto cached = base;
  cached.feature_storage = std::nullopt;
  cached.cache_policy = cache_policy_kind::lru;
  cached.cache_rows = 50;
  auto const r = run_step(cached);
  EXPECT_EQ(r.logits, ref.logits);
  EXPECT_EQ(r.work.cache_hits + r.work.cache_misses, r.work.feature_rows);
  cached.feature_storage = storage_tier::device;
  EXPECT_THROW(trainer(data().ds, data().g, cached), logic_error);
}

TEST(TrainerCudaTiers, GpuCacheCountsWhatItsHostReferenceCounts) {
  COOPGNN_REQUIRE_DEVICE();
  auto const& d = data();
  // The GPU set-associative cache in front of a pinned table against set_assoc_policy in front
  // of the host table (the host reference): the same hits and misses, batch after batch.
  for (auto mode : {minibatch_mode::cooperative, minibatch_mode::independent}) {
    SCOPED_TRACE(to_string(mode));
    auto c = make_cfg({"sage", sampler_kind::labor, {4, 4}, 64, false, 8}, mode, 2, backend::cuda);
    c.batch_dependency = 4;
    c.cache_policy = cache_policy_kind::setassoc;
    c.cache_rows = 60;
    c.eval_every = 0;
    auto gpu_cfg = c;
    gpu_cfg.feature_storage = storage_tier::pinned;
    auto host_cfg = c;
    host_cfg.feature_storage = storage_tier::host;
    trainer gpu(d.ds, d.g, gpu_cfg);
    trainer host(d.ds, d.g, host_cfg);
    for (int e = 1; e <= 2; ++e) {
      auto const rg = gpu.run_epoch(e, false);
      auto const rh = host.run_epoch(e, false);
      EXPECT_EQ(rg.work.cache_hits, rh.work.cache_hits) << "epoch " << e;
      EXPECT_EQ(rg.work.cache_misses, rh.work.cache_misses) << "epoch " << e;
      EXPECT_GT(rh.work.cache_hits, 0) << "epoch " << e << ": the cache never hit";
      EXPECT_EQ(rg.train_loss, rh.train_loss) << "the rows served by the caches differ";
    }
  }
}

// train_config::devices (what `coopgnn tma` sets per rank): the PEs run on the listed devices,
// and a list that does not fit the PEs, names a device twice or one that is not visible is
// refused before any context exists.
TEST(TrainerCudaDevices, AnExplicitDeviceListIsCheckedAndUsed) {
  COOPGNN_REQUIRE_DEVICE();
  int const count = query_devices().count;
  usecase const u{"sage", sampler_kind::ns, {4, 3}, 64, false, 8};
  auto const base = make_cfg(u, minibatch_mode::cooperative, 2, backend::cuda);  // K = 2
  auto const ref = run_step(base);
  auto listed = base;
  listed.devices = {count - 1};  // the last device (device 0 with one GPU)
  auto const r = run_step(listed);
  EXPECT_EQ(r.logits, ref.logits) << "the device the PEs run on changed the step";
  EXPECT_EQ(r.grads, ref.grads);
  auto message = [&](train_config c) {
    try {
      trainer t(data().ds, data().g, c);
    } catch (const logic_error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  auto bad = base;
  bad.devices = {count};
  EXPECT_NE(message(bad).find("does not exist"), std::string::npos) << message(bad);
  bad.devices = {0, 0};  // 2 PEs, 2 per device: one device, not two
  EXPECT_NE(message(bad).find("runs on 1 CUDA devices, but 2 were given"), std::string::npos)
      << message(bad);
  bad.pes_per_gpu = 1;  // now two devices, the same twice
  EXPECT_NE(message(bad).find("given twice"), std::string::npos) << message(bad);
}

TEST(TrainerCudaEpochs, LearnsLikeTheHostBackend) {
  COOPGNN_REQUIRE_DEVICE();
  auto run = [&](backend b, minibatch_mode mode, int P) {
    auto c = make_cfg({"sage", sampler_kind::ns, {5, 5}, 128, false, 16}, mode, P, b);
    c.lr = 0.02f;
    return test::run_protocol_epochs(c, 8);
  };
  auto const [lh, rh] = run(backend::host, minibatch_mode::cooperative, 2);
  auto const [ld, rd] = run(backend::cuda, minibatch_mode::cooperative, 2);
  ASSERT_EQ(ld.size(), lh.size());
  EXPECT_LT(ld.back(), ld.front());
  // Summation orders differ (cuBLAS, warp reductions): 1e-6 per step, which Adam can amplify
  // for gradients near zero, so later epochs get a looser bound than the first.
  for (std::size_t e = 0; e < lh.size(); ++e) {
    double const tol = e == 0 ? 2e-3 : 1e-2;
    EXPECT_NEAR(ld[e], lh[e], tol * std::max(1.0, lh[e])) << "epoch " << e + 1;
  }
  EXPECT_NEAR(rd.test_metric, rh.test_metric, 0.03);
  EXPECT_GT(rd.test_metric, 0.6) << "4 classes, homophilous graph: well above chance";
  EXPECT_EQ(rd.work.sampled_edges, rh.work.sampled_edges);
  // Each PE's peak device memory is measured on the GPU (its pool's watermark), not on the host.
  ASSERT_EQ(rd.peak_device_bytes.size(), 2u);
  for (auto b : rd.peak_device_bytes) EXPECT_GT(b, 0);
  EXPECT_TRUE(rh.peak_device_bytes.empty());
}

}  // namespace
}  // namespace coopgnn
