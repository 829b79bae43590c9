// The host gather of feature rows (kernels/gather/gather.hpp, the overloads that return a new
// matrix): every value of every requested row, repeats and any order, the empty request, and the
// error naming an id outside the table.
#include "kernels/gather/gather.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/core/error.hpp"
#include "runtime/core/memory.hpp"

namespace coopgnn {
namespace {

TEST(GatherRows, ReturnsEveryRequestedRowInOrder) {
  matrix<float> table(6, 3);
  for (std::int64_t r = 0; r < 6; ++r) {
    for (std::int64_t c = 0; c < 3; ++c) table(r, c) = static_cast<float>(10 * r + c + 1);
  }
  std::vector<vid_t> const ids = {5, 0, 5, 2};
  matrix<float> const out = gather_rows(table, ids);
  ASSERT_EQ(out.rows(), 4);
  ASSERT_EQ(out.cols(), 3);
  for (std::int64_t i = 0; i < 4; ++i) {
    for (std::int64_t c = 0; c < 3; ++c) {
      EXPECT_EQ(out(i, c), static_cast<float>(10 * ids[static_cast<std::size_t>(i)] + c + 1));
    }
  }
  matrix<float> const none = gather_rows(table, std::vector<vid_t>{});
  EXPECT_EQ(none.rows(), 0);
  EXPECT_EQ(none.cols(), 3);
  matrix<float> const narrow(4, 0);
  EXPECT_EQ(gather_rows(narrow, std::vector<vid_t>{3, 1}).rows(), 2);
}

TEST(GatherRows, WidensSixteenBitTablesExactly) {
  // [3, 2] tables of bit patterns; the float32 values are written out by hand.
  std::vector<std::uint16_t> const half = {0x3C00, 0x0001, 0xC000, 0x7C00, 0x8000, 0x7BFF};
  std::vector<vid_t> const ids = {2, 0, 1, 2};
  matrix<float> const h = gather_rows(half.data(), feature_dtype::float16, 3, 2, ids);
  std::vector<std::uint32_t> const want_h = {0x80000000, 0x477FE000, 0x3F800000, 0x33800000,
                                             0xC0000000, 0x7F800000, 0x80000000, 0x477FE000};
  ASSERT_EQ(h.size(), 8);
  for (std::size_t k = 0; k < want_h.size(); ++k) {
    EXPECT_EQ(std::bit_cast<std::uint32_t>(h.values()[k]), want_h[k]) << k;
  }
  std::vector<std::uint16_t> const bf = {0x3F80, 0x0001, 0xC040, 0x7F80, 0x8000, 0x7F7F};
  matrix<float> const b = gather_rows(bf.data(), feature_dtype::bfloat16, 3, 2, ids);
  for (std::size_t k = 0; k < 8; ++k) {
    std::size_t const src = static_cast<std::size_t>(ids[k / 2]) * 2 + k % 2;
    EXPECT_EQ(std::bit_cast<std::uint32_t>(b.values()[k]), std::uint32_t{bf[src]} << 16) << k;
  }
  EXPECT_THROW((void)gather_rows(half.data(), feature_dtype::float16, 3, 2, std::vector<vid_t>{3}),
               logic_error);
  // The exec_context entry (host and emulated device) widens the same way.
  for (backend be : {backend::host, backend::emulated}) {
    exec_context const ctx(be);
    auto const t = upload(ctx, matrix<std::uint16_t>(3, 2, half));
    std::vector<std::int64_t> const ids64(ids.begin(), ids.end());
    auto const di = upload<std::int64_t>(ctx, ids64);
    tensor<float> o(ctx, 4, 2);
    gather_rows(ctx, t.view(), feature_dtype::float16, di.view(), o.view());
    EXPECT_EQ(download<float>(ctx, o.view()).values(), h.values());
    EXPECT_THROW(gather_rows(ctx, t.view(), feature_dtype::float32, di.view(), o.view()),
                 logic_error);
  }
}

TEST(GatherRows, NamesAnIdOutsideTheTable) {
  matrix<float> const table(4, 2, 1.0f);
  for (vid_t bad : {vid_t{4}, vid_t{-1}}) {
    try {
      (void)gather_rows(table, std::vector<vid_t>{0, bad});
      ADD_FAILURE() << "id " << bad << " was accepted";
    } catch (const logic_error& e) {
      EXPECT_NE(std::string(e.what()).find("id " + std::to_string(bad) + " at position 1"),
                std::string::npos)
          << e.what();
    }
  }
}

}  // namespace
}  // namespace coopgnn
