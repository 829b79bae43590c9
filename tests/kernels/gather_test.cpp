// The host gather of feature rows (kernels/gather/gather.hpp, the overloads that return a new
// matrix): every value of every requested row, repeats and any order, the empty request, and the
// error naming an id outside the table.
#include "kernels/gather/gather.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/core/error.hpp"

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
