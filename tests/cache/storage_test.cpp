// Feature storage tiers (cache/storage.hpp): the choice by size and by flag, the memory-mapped
// .npy table against the in-memory one, and clear errors for files that cannot be mapped.
#include "cache/storage.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <numeric>
#include <vector>

#include "runtime/core/error.hpp"
#include "runtime/graph/dataset.hpp"
#include "runtime/graph/npy.hpp"
#include "tests/common/files.hpp"

namespace coopgnn {
namespace {

TEST(StorageTier, NamesRoundTrip) {
  for (auto t : {storage_tier::device, storage_tier::pinned, storage_tier::host, storage_tier::mmap}) {
    EXPECT_EQ(parse_storage_tier(to_string(t)), t);
  }
  EXPECT_EQ(parse_storage_tier("auto"), std::nullopt);
  try {
    parse_storage_tier("gpu");
    ADD_FAILURE();
  } catch (const logic_error& e) {
    EXPECT_NE(std::string(e.what()).find("'gpu'"), std::string::npos);
  }
}

TEST(StorageTier, AutoPicksBySize) {
  storage_budget const b{1000, 5000};
  // CUDA: device when it fits, else pinned, else mmap.
  EXPECT_EQ(choose_storage_tier(backend::cuda, 1000, b, std::nullopt, true, true),
            storage_tier::device);
  EXPECT_EQ(choose_storage_tier(backend::cuda, 1001, b, std::nullopt, true, true),
            storage_tier::pinned);
  EXPECT_EQ(choose_storage_tier(backend::cuda, 5001, b, std::nullopt, false, true),
            storage_tier::mmap);
  // Host: host when in memory or fitting, else mmap.
  EXPECT_EQ(choose_storage_tier(backend::host, 100, b, std::nullopt, false, true),
            storage_tier::host);
  EXPECT_EQ(choose_storage_tier(backend::host, 9000, b, std::nullopt, true, true),
            storage_tier::host);
  EXPECT_EQ(choose_storage_tier(backend::host, 9000, b, std::nullopt, false, true),
            storage_tier::mmap);
  EXPECT_THROW(choose_storage_tier(backend::host, 9000, b, std::nullopt, false, false),
               logic_error);
}

TEST(StorageTier, ForcedTiersAreCheckedAgainstTheBackend) {
  storage_budget const b{1000, 5000};
  EXPECT_EQ(choose_storage_tier(backend::host, 10, b, storage_tier::mmap, true, true),
            storage_tier::mmap);
  EXPECT_EQ(choose_storage_tier(backend::cuda, 10, b, storage_tier::pinned, true, true),
            storage_tier::pinned);
  for (auto t : {storage_tier::device, storage_tier::pinned}) {
    try {
      choose_storage_tier(backend::host, 10, b, t, true, true);
      ADD_FAILURE();
    } catch (const logic_error& e) {
      EXPECT_NE(std::string(e.what()).find("host backend"), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(choose_storage_tier(backend::cuda, 2000, b, storage_tier::device, true, true),
               logic_error);
  EXPECT_THROW(choose_storage_tier(backend::host, 10, b, storage_tier::mmap, true, false),
               logic_error);
  EXPECT_GT(default_host_budget_bytes(), 0);
}

TEST(FeatureTable, MappedNpyReadsTheSameRowsAsMemory) {
  test::temp_dir dir;
  std::vector<float> v(7 * 5);
  std::iota(v.begin(), v.end(), 0.5f);
  std::int64_t const shape[2] = {7, 5};
  write_npy(dir / "feat.npy", std::span<const float>(v), shape);
  auto const mapped = feature_table::map_npy(dir / "feat.npy");
  matrix<float> const m(7, 5, std::vector<float>(v));
  auto const mem = feature_table::borrow(m);
  EXPECT_EQ(mapped->tier(), storage_tier::mmap);
  EXPECT_EQ(mem->tier(), storage_tier::host);
  EXPECT_EQ(mapped->rows(), 7);
  EXPECT_EQ(mapped->cols(), 5);
  EXPECT_EQ(mapped->bytes(), 140);
  std::vector<vid_t> const ids = {6, 0, 3, 3};
  auto const a = mapped->gather(ids);
  auto const b = mem->gather(ids);
  ASSERT_EQ(a.rows(), 4);
  for (std::int64_t i = 0; i < 4; ++i) {
    for (std::int64_t j = 0; j < 5; ++j) {
      EXPECT_EQ(a(i, j), v[static_cast<std::size_t>(ids[static_cast<std::size_t>(i)] * 5 + j)]);
      EXPECT_EQ(a(i, j), b(i, j));
    }
  }
  std::vector<vid_t> const bad = {2, 7};
  EXPECT_THROW((void)mapped->gather(bad), logic_error);
}

TEST(FeatureTable, Float16StaysTwoBytesInTheHostAndMmapTiers) {
  test::temp_dir dir;
  // [3, 4] float16: row r = (r + 1) * {1, -2, 0.5, 2^-24}, with -0 and inf in the last row.
  std::vector<std::uint16_t> const bits = {0x3C00, 0xC000, 0x3800, 0x0001,   // 1, -2, .5, 2^-24
                                           0x4000, 0xC400, 0x3C00, 0x0002,   // 2, -4, 1, 2^-23
                                           0x4200, 0x8000, 0x7C00, 0x0003};  // 3, -0, inf, 3*2^-24
  std::int64_t const shape[2] = {3, 4};
  write_npy_bits16(dir / "feat.npy", bits, shape);
  matrix<std::uint16_t> const m(3, 4, bits);
  auto const mapped = feature_table::map_npy(dir / "feat.npy");
  auto const mem = feature_table::borrow(m, feature_dtype::float16);
  for (const feature_table* t : {mapped.get(), mem.get()}) {
    EXPECT_EQ(t->dtype(), feature_dtype::float16);
    EXPECT_EQ(t->row_bytes(), 8);
    EXPECT_EQ(t->bytes(), 24);  // 2 bytes per element: not widened
    std::vector<vid_t> const ids = {2, 0, 2};
    matrix<float> const g = t->gather(ids);
    ASSERT_EQ(g.rows(), 3);
    ASSERT_EQ(g.cols(), 4);
    std::vector<float> const want = {3, -0.0f, INFINITY, 3 * std::ldexp(1.0f, -24),
                                     1, -2,    0.5f,     std::ldexp(1.0f, -24),
                                     3, -0.0f, INFINITY, 3 * std::ldexp(1.0f, -24)};
    for (std::size_t k = 0; k < want.size(); ++k) {
      EXPECT_EQ(std::bit_cast<std::uint32_t>(g.values()[k]), std::bit_cast<std::uint32_t>(want[k]))
          << k;
    }
    EXPECT_THROW((void)t->gather(std::vector<vid_t>{3}), logic_error);
  }
  EXPECT_EQ(mapped->tier(), storage_tier::mmap);
  EXPECT_EQ(static_cast<const std::uint16_t*>(mem->host_data()), m.data());  // borrowed
  EXPECT_THROW((void)feature_table::borrow(m, feature_dtype::float32), logic_error);
  // bfloat16 (from torch): the top half of a float32.
  matrix<std::uint16_t> const bf(1, 2, std::vector<std::uint16_t>{0x3F80, 0xC040});
  auto const b = feature_table::borrow(bf, feature_dtype::bfloat16);
  matrix<float> const gb = b->gather(std::vector<vid_t>{0});
  EXPECT_EQ(gb.values(), (std::vector<float>{1.0f, -3.0f}));
  EXPECT_EQ(b->bytes(), 4);
}

TEST(FeatureTable, FeatureRowsFloat32WidensACopyAndKeepsTheTable) {
  dataset ds;
  ds.num_nodes = 2;
  ds.features16 =
      matrix<std::uint16_t>(2, 2, std::vector<std::uint16_t>{0x3C00, 0x4000, 0x0001, 0xBC00});
  ds.feature_type = feature_dtype::float16;
  matrix<float> const x = feature_rows_float32(ds);
  EXPECT_EQ(x.values(), (std::vector<float>{1.0f, 2.0f, std::ldexp(1.0f, -24), -1.0f}));
  EXPECT_EQ(ds.features16.rows(), 2);  // the dataset's table is untouched
  EXPECT_EQ(ds.features.size(), 0);
}

TEST(FeatureTable, RejectsFilesThatCannotBeMapped) {
  test::temp_dir dir;
  std::vector<std::int64_t> ints(6, 1);
  std::int64_t const shape[2] = {3, 2};
  write_npy(dir / "ints.npy", std::span<const std::int64_t>(ints), shape);
  auto msg = test::error_of([&] { feature_table::map_npy(dir / "ints.npy"); });
  EXPECT_NE(msg.find("ints.npy"), std::string::npos) << msg;
  EXPECT_NE(msg.find("float32"), std::string::npos) << msg;
  std::vector<float> flat(6, 1.0f);
  std::int64_t const shape1[1] = {6};
  write_npy(dir / "flat.npy", std::span<const float>(flat), shape1);
  msg = test::error_of([&] { feature_table::map_npy(dir / "flat.npy"); });
  EXPECT_NE(msg.find("2-D"), std::string::npos) << msg;
  msg = test::error_of([&] { feature_table::map_npy(dir / "missing.npy"); });
  EXPECT_NE(msg.find("missing.npy"), std::string::npos) << msg;
}

}  // namespace
}  // namespace coopgnn
