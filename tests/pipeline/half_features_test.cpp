// Training on float16 features end to end (runtime/core/half.hpp, cache/storage.hpp): a dataset
// whose `feat` is a float16 .npy is read at 2 bytes per element, kept so in the host and mmap
// tiers, gathered and widened to float32 before the first layer, and counted at its stored
// width. Since every float16 value is a float32 value, it trains to exactly the loss of the same
// dataset with the features widened to float32 on disk, on the host and emulated backends.
#include <gtest/gtest.h>

#include <cmath>
#include <ostream>
#include <string>
#include <vector>

#include "runtime/core/half.hpp"
#include "runtime/graph/csc.hpp"
#include "runtime/graph/dataset.hpp"
#include "runtime/graph/npy.hpp"
#include "pipeline/trainer.hpp"
#include "tests/common/files.hpp"
#include "tests/common/steps.hpp"

namespace coopgnn {
namespace {

/// The protocol task written twice: `f32` with float32 features, `f16` with the same values as
/// float16 (features quantised to multiples of 2^-8 in [0, 3), exact in both types, and a column
/// of float16 subnormals).
struct half_dirs {
  test::temp_dir f32, f16;
  half_dirs() {
    dataset ds = test::protocol_data().ds;
    std::vector<std::uint16_t> bits;
    for (std::int64_t v = 0; v < ds.features.rows(); ++v) {
      for (std::int64_t j = 0; j < ds.features.cols(); ++j) {
        float& x = ds.features(v, j);
        x = j == 0 && v % 3 == 0 ? std::ldexp(static_cast<float>(v % 1024), -24)  // subnormal
                                 : std::ldexp(std::round(std::ldexp(x, 8)), -8);
        bits.push_back(float_to_half_exact(x));
        EXPECT_EQ(half_to_float(bits.back()), x);  // exact in float16
      }
    }
    write_dataset(ds, f32.path());
    ds.features16 = matrix<std::uint16_t>(ds.features.rows(), ds.features.cols(), bits);
    ds.features = {};
    ds.feature_type = feature_dtype::float16;
    write_dataset(ds, f16.path());
  }
};

const half_dirs& datasets() {
  static const half_dirs d;
  return d;
}

train_config make_cfg(backend b, minibatch_mode mode, int pes) {
  train_config c;
  c.compute_backend = b;
  c.mode = mode;
  c.num_pes = pes;
  c.model = models::parse_conv_kind("sage");
  c.hidden = 8;
  c.fanouts = {5, 5};
  c.sampler = sampler_kind::labor;
  c.batch_size = 96;
  c.dropout = 0.3f;
  c.seed = 17;
  return c;
}

/// Two epochs of `cfg` on the dataset in `dir` (the second evaluated); the last report.
epoch_report train(const std::filesystem::path& dir, const train_config& cfg,
                   bool load_features = true) {
  dataset_read_options opt;
  opt.load_features = load_features;
  dataset const ds = read_dataset(dir, opt);
  csc_graph const g = build_csc(ds.num_nodes, ds.src, ds.dst);
  trainer tr(ds, g, cfg);
  EXPECT_EQ(tr.features().dtype(), ds.feature_type);
  (void)tr.run_epoch(1, false);
  return tr.run_epoch(2, true);
}

TEST(HalfFeatures, TheFileIsFloat16AndReadsAtTwoBytes) {
  auto const& d = datasets();
  EXPECT_EQ(read_npy_header(d.f16 / "data" / "feat.npy").dtype, npy_dtype::float16);
  EXPECT_EQ(read_npy_header(d.f32 / "data" / "feat.npy").dtype, npy_dtype::float32);
  dataset const ds = read_dataset(d.f16.path());
  EXPECT_EQ(ds.feature_type, feature_dtype::float16);
  EXPECT_EQ(ds.features.size(), 0);  // no float32 host table
  EXPECT_EQ(ds.features16.size(), 700 * 12);
  csc_graph const g = build_csc(ds.num_nodes, ds.src, ds.dst);
  trainer tr(ds, g, make_cfg(backend::host, minibatch_mode::cooperative, 2));
  EXPECT_EQ(tr.features().tier(), storage_tier::host);
  EXPECT_EQ(tr.features().bytes(), 700 * 12 * 2);
  EXPECT_EQ(tr.features().host_data(), ds.features16.data());  // borrowed, not copied
}

struct half_usecase {
  backend b;
  minibatch_mode mode;
  int pes;
};

std::ostream& operator<<(std::ostream& os, const half_usecase& u) {
  return os << to_string(u.b) << " " << to_string(u.mode) << " P=" << u.pes;
}

class HalfFeatures : public ::testing::TestWithParam<half_usecase> {};

TEST_P(HalfFeatures, TrainsToTheWidenedDatasetsLossCountingTwoBytesPerElement) {
  auto const u = GetParam();
  auto const& d = datasets();
  auto const cfg = make_cfg(u.b, u.mode, u.pes);
  epoch_report const half = train(d.f16.path(), cfg);
  epoch_report const wide = train(d.f32.path(), cfg);
  EXPECT_TRUE(std::isfinite(half.train_loss));
  EXPECT_EQ(half.train_loss, wide.train_loss);  // exactly: widening is exact
  EXPECT_EQ(half.val_metric, wide.val_metric);
  EXPECT_EQ(half.test_metric, wide.test_metric);
  EXPECT_GT(half.work.feature_rows, 0);
  EXPECT_EQ(half.work.feature_rows, wide.work.feature_rows);
  EXPECT_EQ(half.work.feature_bytes, half.work.feature_rows * 12 * 2);
  EXPECT_EQ(wide.work.feature_bytes, wide.work.feature_rows * 12 * 4);
  EXPECT_EQ(half.work.alltoall_bytes, wide.work.alltoall_bytes);  // exchanged widened
}

INSTANTIATE_TEST_SUITE_P(
    Backends, HalfFeatures,
    ::testing::Values(half_usecase{backend::host, minibatch_mode::cooperative, 2},
                      half_usecase{backend::host, minibatch_mode::independent, 1},
                      half_usecase{backend::emulated, minibatch_mode::cooperative, 2},
                      half_usecase{backend::emulated, minibatch_mode::independent, 2}),
    [](const ::testing::TestParamInfo<half_usecase>& i) {
      return to_string(i.param.b) + "_" + to_string(i.param.mode) + "_P" +
             std::to_string(i.param.pes);
    });

TEST(HalfFeatures, TheMappedFileServesTheSameRows) {
  auto const& d = datasets();
  auto cfg = make_cfg(backend::host, minibatch_mode::cooperative, 2);
  epoch_report const mem = train(d.f16.path(), cfg);
  cfg.feature_storage = storage_tier::mmap;
  epoch_report const mapped = train(d.f16.path(), cfg, false);
  EXPECT_EQ(mapped.train_loss, mem.train_loss);
  EXPECT_EQ(mapped.val_metric, mem.val_metric);
  EXPECT_EQ(mapped.work.feature_bytes, mem.work.feature_bytes);
}

}  // namespace
}  // namespace coopgnn
