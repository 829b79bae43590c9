// CUDA row gather vs the host gather_rows (docs/design.md section 8: feature rows equal
// f(vertex, column) after any gather). Tables hold small integers: equality is exact, byte-wise.
#include <gtest/gtest.h>

#include <algorithm>

#include "tests/common/gpu.hpp"

#if defined(COOPGNN_WITH_CUDA)
#include <cstring>
#include <vector>

#include "kernels/gather/gather.hpp"
#include "kernels/gather/gather_cuda.hpp"
#include "runtime/core/cuda_context.hpp"
#include "runtime/core/error.hpp"
#include "runtime/core/half.hpp"

namespace coopgnn {
namespace {

/// Verifiable value of (row, column): an integer below 2^24, exact in float32.
float f(std::int64_t v, std::int64_t c) { return static_cast<float>((v * 131 + c * 7) % 1000003); }

matrix<float> make_table(std::int64_t rows, std::int64_t cols) {
  matrix<float> t(rows, cols);
  for (std::int64_t v = 0; v < rows; ++v) {
    for (std::int64_t c = 0; c < cols; ++c) t(v, c) = f(v, c);
  }
  return t;
}

std::vector<vid_t> make_ids(std::int64_t m, std::int64_t rows) {
  std::vector<vid_t> ids(static_cast<std::size_t>(m));
  for (std::int64_t i = 0; i < m; ++i) ids[i] = (i * 7919 + 3) % rows;
  return ids;
}

enum class placement { device, pinned, registered };

struct gather_usecase {
  std::int64_t rows, cols, m;
  std::int64_t pad;  // extra floats per row: stride = cols + pad
  placement where;
};

std::ostream& operator<<(std::ostream& os, const gather_usecase& u) {
  return os << "rows=" << u.rows << " cols=" << u.cols << " m=" << u.m << " pad=" << u.pad
            << " where=" << static_cast<int>(u.where);
}

class GatherGpuTest : public ::testing::TestWithParam<gather_usecase> {};

TEST_P(GatherGpuTest, BytesEqualHostGather) {
  COOPGNN_REQUIRE_DEVICE();
  auto const u = GetParam();
  cuda::cuda_context ctx(0);
  auto const table = make_table(u.rows, u.cols);
  auto const ids = make_ids(u.m, u.rows);
  auto const want = gather_rows(table, ids);
  if (u.m > 0 && u.cols > 0) {
    float norm = 0;
    for (float x : want.values()) norm += x;
    ASSERT_GT(norm, 0.0f) << "expected result is all zeros";
  }
  std::int64_t const stride = u.cols + u.pad;
  std::vector<float> padded(static_cast<std::size_t>(u.rows * stride), -1.0f);
  for (std::int64_t v = 0; v < u.rows; ++v) {
    std::memcpy(padded.data() + v * stride, table.row(v), u.cols * sizeof(float));
  }
  // The ids must be ready on the stream the gather runs on: upload them there (a copy on
  // compute() would race a gather on h2d()).
  cuda::stream_t const s = u.where == placement::device ? ctx.compute() : ctx.h2d();
  auto const dids = ctx.to_device(std::span<const vid_t>(ids), s);
  std::vector<float> got;
  switch (u.where) {
    case placement::device: {
      auto const dt = ctx.to_device(std::span<const float>(padded));
      got = ctx.to_host(cuda::gather_rows(ctx, {dt.data(), u.rows, u.cols, stride}, dids));
      break;
    }
    case placement::pinned: {
      cuda::pinned_buffer<float> pinned(padded.size());
      std::memcpy(pinned.data(), padded.data(), padded.size() * sizeof(float));
      got = ctx.to_host(
          cuda::gather_rows(ctx, {pinned.device_data(), u.rows, u.cols, stride}, dids, s, 64));
      break;
    }
    case placement::registered: {
      cuda::host_registration reg(padded.data(), padded.size() * sizeof(float));
      auto const* p = static_cast<const float*>(reg.device_data());
      got = ctx.to_host(cuda::gather_rows(ctx, {p, u.rows, u.cols, stride}, dids, s));
      break;
    }
  }
  ASSERT_EQ(got.size(), want.values().size()) << u;
  EXPECT_TRUE(got.empty() ||
              std::memcmp(got.data(), want.data(), got.size() * sizeof(float)) == 0)
      << u;
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, GatherGpuTest,
    ::testing::Values(gather_usecase{10, 4, 0, 0, placement::device},
                      gather_usecase{1, 1, 1, 0, placement::device},
                      gather_usecase{100, 3, 33, 0, placement::device},      // scalar path
                      gather_usecase{100, 16, 31, 0, placement::device},     // 64-byte rows
                      gather_usecase{1000, 64, 32, 0, placement::device},    // 256-byte rows
                      gather_usecase{1000, 128, 1025, 0, placement::device},
                      gather_usecase{1000, 256, 777, 0, placement::device},  // 1 KiB rows
                      gather_usecase{500, 33, 100, 0, placement::device},
                      gather_usecase{500, 32, 100, 1, placement::device},    // stride not x4
                      gather_usecase{500, 32, 100, 4, placement::device},
                      gather_usecase{1000, 64, 513, 0, placement::pinned},
                      gather_usecase{1000, 7, 513, 0, placement::pinned},
                      gather_usecase{2000, 128, 999, 0, placement::registered},
                      gather_usecase{2000, 5, 999, 3, placement::registered}));

TEST(GatherGpu, VectorPathNeedsAlignment) {
  COOPGNN_REQUIRE_DEVICE();
  cuda::cuda_context ctx(0);
  auto const buf = ctx.allocate<float>(1024);
  auto out = ctx.allocate<float>(1024);
  EXPECT_TRUE(cuda::gather_is_vectorised({buf.data(), 10, 16, 16}, out.data()));
  EXPECT_FALSE(cuda::gather_is_vectorised({buf.data() + 1, 10, 16, 16}, out.data()));
  EXPECT_FALSE(cuda::gather_is_vectorised({buf.data(), 10, 16, 17}, out.data()));
  EXPECT_FALSE(cuda::gather_is_vectorised({buf.data(), 10, 15, 16}, out.data()));
  // The unaligned base still gathers the right rows (scalar path).
  auto const table = make_table(10, 16);
  std::vector<float> shifted(1 + table.values().size());
  std::memcpy(shifted.data() + 1, table.data(), table.values().size() * sizeof(float));
  auto const dt = ctx.to_device(std::span<const float>(shifted));
  std::vector<vid_t> const ids = {9, 0, 4};
  auto const got = ctx.to_host(cuda::gather_rows(ctx, {dt.data() + 1, 10, 16, 16},
                                                 ctx.to_device(std::span<const vid_t>(ids))));
  auto const want = gather_rows(table, ids);
  EXPECT_EQ(got, want.values());
}

TEST(GatherGpu, SixteenBitTablesWidenToTheHostGathersBits) {
  // float16 and bfloat16 tables at 2 bytes per element, in device and pinned memory, on the
  // vector path (cols x4, aligned), the scalar path (cols 5) and a misaligned base: the rows
  // widened by __half2float / __bfloat162float equal the host's widening bit for bit (finite
  // patterns, subnormals and infinities included; NaNs are left out: their payload may differ).
  COOPGNN_REQUIRE_DEVICE();
  cuda::cuda_context ctx(0);
  for (feature_dtype dt : {feature_dtype::float16, feature_dtype::bfloat16}) {
    for (std::int64_t cols : {std::int64_t{8}, std::int64_t{5}}) {
      for (std::int64_t shift : {std::int64_t{0}, std::int64_t{1}}) {
        for (bool pinned : {false, true}) {
          SCOPED_TRACE(std::string(to_string(dt)) + " cols " + std::to_string(cols) + " shift " +
                       std::to_string(shift) + (pinned ? " pinned" : " device"));
          std::int64_t const rows = 300;
          std::vector<std::uint16_t> bits(static_cast<std::size_t>(shift + rows * cols));
          for (std::size_t k = 0; k < bits.size(); ++k) {
            auto const b = static_cast<std::uint16_t>((k * 2654435761ULL) >> 7);
            bool const nan = dt == feature_dtype::float16 ? (b & 0x7C00) == 0x7C00 && (b & 0x3FF)
                                                          : (b & 0x7F80) == 0x7F80 && (b & 0x7F);
            bits[k] = nan ? static_cast<std::uint16_t>(b & 0xFC00) : b;  // +-inf instead
          }
          auto const ids = make_ids(777, rows);
          auto const want = gather_rows(bits.data() + shift, dt, rows, cols, ids);
          cuda::stream_t const s = pinned ? ctx.h2d() : ctx.compute();
          auto const dids = ctx.to_device(std::span<const vid_t>(ids), s);
          std::vector<float> got;
          if (pinned) {
            cuda::pinned_buffer<std::uint16_t> p(bits.size());
            std::memcpy(p.data(), bits.data(), bits.size() * 2);
            got = ctx.to_host(cuda::gather_rows(
                ctx, {p.device_data() + shift, rows, cols, cols, dt}, dids, s, 64));
          } else {
            auto const d = ctx.to_device(std::span<const std::uint16_t>(bits));
            got = ctx.to_host(
                cuda::gather_rows(ctx, {d.data() + shift, rows, cols, cols, dt}, dids));
          }
          ASSERT_EQ(got.size(), want.values().size());
          EXPECT_EQ(std::memcmp(got.data(), want.data(), got.size() * sizeof(float)), 0);
        }
      }
    }
  }
  // The vector path reads 8 bytes per chunk of a 16-bit table: 8-byte alignment suffices.
  auto const h = ctx.allocate<std::uint16_t>(64);
  auto out = ctx.allocate<float>(64);
  EXPECT_TRUE(cuda::gather_is_vectorised({h.data() + 4, 10, 4, 4, feature_dtype::float16},
                                         out.data()));
  EXPECT_FALSE(cuda::gather_is_vectorised({h.data() + 1, 10, 4, 4, feature_dtype::float16},
                                          out.data()));
}

TEST(GatherGpu, OutOfRangeIdsAreReportedNotRead) {
  COOPGNN_REQUIRE_DEVICE();
  cuda::cuda_context ctx(0);
  auto const table = make_table(50, 8);
  auto const dt = ctx.to_device(std::span<const float>(table.values()));
  for (vid_t bad : {vid_t{50}, vid_t{-1}, vid_t{1} << 40}) {
    std::vector<vid_t> const ids = {1, 2, bad, 3};
    auto const dids = ctx.to_device(std::span<const vid_t>(ids));
    try {
      (void)cuda::gather_rows(ctx, {dt.data(), 50, 8, 8}, dids);
      ADD_FAILURE() << "id " << bad << " was accepted";
    } catch (const logic_error& e) {
      EXPECT_NE(std::string(e.what()).find("position 2"), std::string::npos) << e.what();
    }
  }
}

TEST(GatherGpu, AtPositionsFillsOnlyThoseRows) {
  COOPGNN_REQUIRE_DEVICE();
  cuda::cuda_context ctx(0);
  for (std::int64_t cols : {std::int64_t{8}, std::int64_t{5}}) {  // vector and scalar paths
    SCOPED_TRACE(cols);
    auto const table = make_table(40, cols);
    auto const dt = ctx.to_device(std::span<const float>(table.values()));
    std::vector<vid_t> const ids = {7, 3, 39, 0, 12, 3};
    std::vector<std::int64_t> const pos = {1, 4, 5};
    std::vector<float> init(ids.size() * static_cast<std::size_t>(cols), -7.0f);
    auto out = ctx.to_device(std::span<const float>(init));
    auto first_bad = ctx.to_device(std::span<const unsigned long long>(
        std::vector<unsigned long long>{~0ULL}));
    auto const dids = ctx.to_device(std::span<const vid_t>(ids));
    auto const dpos = ctx.to_device(std::span<const std::int64_t>(pos));
    cuda::gather_rows_at_async({dt.data(), 40, cols, cols}, dids.data(), dpos.data(),
                               static_cast<std::int64_t>(pos.size()), out.data(),
                               first_bad.data(), ctx.compute());
    auto const got = ctx.to_host(out);
    auto const all = gather_rows(table, ids);  // host reference for every row
    for (std::size_t i = 0; i < ids.size(); ++i) {
      bool const filled = std::find(pos.begin(), pos.end(), static_cast<std::int64_t>(i)) !=
                          pos.end();
      for (std::int64_t c = 0; c < cols; ++c) {
        float const want = filled ? all(static_cast<std::int64_t>(i), c) : -7.0f;
        EXPECT_EQ(got[i * static_cast<std::size_t>(cols) + static_cast<std::size_t>(c)], want)
            << "row " << i << " column " << c;
      }
    }
    EXPECT_EQ(ctx.to_host(first_bad).at(0), ~0ULL);
  }
}

}  // namespace
}  // namespace coopgnn

#else
TEST(GatherGpu, Skipped) { GTEST_SKIP() << "no CUDA device: built without CUDA"; }
#endif
