// The input checks shared by the host references and the CUDA kernels of make_block and
// exclude_edges (kernels/sample/sample_checks.hpp): in range, at the boundaries and outside,
// with the expected answers written out by hand. The device side runs the same functions
// (sample_gpu_test.cpp feeds the kernels bad input and expects the host's errors).
#include "kernels/sample/sample_checks.hpp"

#include <gtest/gtest.h>

#include <cstdint>

namespace coopgnn {
namespace {

constexpr vid_t two32 = 4294967296;  // 2^32

TEST(SampleChecks, IdInRange) {
  EXPECT_TRUE(id_in_range(0, 10));
  EXPECT_TRUE(id_in_range(5, 10));
  EXPECT_TRUE(id_in_range(9, 10));
  EXPECT_FALSE(id_in_range(10, 10));
  EXPECT_FALSE(id_in_range(-1, 10));
  EXPECT_FALSE(id_in_range(INT64_MIN, 10));
  EXPECT_FALSE(id_in_range(INT64_MAX, 10));
  EXPECT_FALSE(id_in_range(0, 0));  // an empty graph has no ids
  static_assert(id_in_range(3, 4) && !id_in_range(4, 4));
}

TEST(SampleChecks, SampleRowInBounds) {
  EXPECT_TRUE(sample_row_in_bounds(0, 0, 0));  // an empty row of an empty sample
  EXPECT_TRUE(sample_row_in_bounds(0, 3, 3));
  EXPECT_TRUE(sample_row_in_bounds(3, 3, 3));  // an empty row at the end
  EXPECT_TRUE(sample_row_in_bounds(1, 2, 3));
  EXPECT_FALSE(sample_row_in_bounds(0, 4, 3));   // past the edges
  EXPECT_FALSE(sample_row_in_bounds(4, 4, 3));   // starts past the edges
  EXPECT_FALSE(sample_row_in_bounds(2, 1, 3));   // decreasing
  EXPECT_FALSE(sample_row_in_bounds(-1, 0, 3));  // negative
  EXPECT_FALSE(sample_row_in_bounds(-5, -2, 3));
}

TEST(SampleChecks, KeysOrdered) {
  EXPECT_TRUE(keys_ordered(1, 2));
  EXPECT_TRUE(keys_ordered(0, 18446744073709551615ULL));
  EXPECT_FALSE(keys_ordered(2, 2));  // repeated
  EXPECT_FALSE(keys_ordered(3, 2));  // descending
}

TEST(SampleChecks, ExclusionKeyCheckTestsRelationThenDestinationThenSource) {
  using f = exclusion_key_fault;
  // In range, and the largest s R + r and t that fit 32 bits.
  EXPECT_EQ(exclusion_key_check(5, 3, 0, 1), f::none);
  EXPECT_EQ(exclusion_key_check(0, 0, 0, 1), f::none);
  EXPECT_EQ(exclusion_key_check(two32 - 1, two32 - 1, 0, 1), f::none);
  EXPECT_EQ(exclusion_key_check(7, 2147483647, 1, 2), f::none);  // s R + r = 2^32 - 1
  EXPECT_EQ(exclusion_key_check(7, 1431655764, 2, 3), f::none);  // 3 s + 2 = 2^32 - 2
  // The relation: R < 1, r < 0, r >= R.
  EXPECT_EQ(exclusion_key_check(5, 3, 0, 0), f::relation);
  EXPECT_EQ(exclusion_key_check(5, 3, -1, 2), f::relation);
  EXPECT_EQ(exclusion_key_check(5, 3, 2, 2), f::relation);
  // The destination: s R + r outside [0, 2^32).
  EXPECT_EQ(exclusion_key_check(5, -1, 0, 1), f::destination);
  EXPECT_EQ(exclusion_key_check(5, two32, 0, 1), f::destination);
  EXPECT_EQ(exclusion_key_check(5, 2147483648, 0, 2), f::destination);  // 2 s = 2^32
  EXPECT_EQ(exclusion_key_check(5, 1431655765, 1, 3), f::destination);  // 3 s + 1 = 2^32
  EXPECT_EQ(exclusion_key_check(5, INT64_MAX, 0, 7), f::destination);   // no overflow
  // The source t outside [0, 2^32).
  EXPECT_EQ(exclusion_key_check(-1, 3, 0, 1), f::source);
  EXPECT_EQ(exclusion_key_check(two32, 3, 0, 1), f::source);
  EXPECT_EQ(exclusion_key_check(INT64_MIN, 3, 1, 2), f::source);
  // Several faults: the first in the host's order.
  EXPECT_EQ(exclusion_key_check(-1, -1, 5, 2), f::relation);
  EXPECT_EQ(exclusion_key_check(-1, -1, 0, 2), f::destination);
}

TEST(SampleChecks, ExclusionKeyIsTargetHighSourceRowLow) {
  EXPECT_EQ(exclusion_key(0, 0, 0, 1), 0u);
  EXPECT_EQ(exclusion_key(1, 2, 0, 1), 4294967298ULL);  // 2^32 + 2
  EXPECT_EQ(exclusion_key(1, 2, 1, 3), 4294967303ULL);  // 2^32 + 2 * 3 + 1
  EXPECT_EQ(exclusion_key(two32 - 1, two32 - 1, 0, 1), 18446744073709551615ULL);
  EXPECT_EQ(exclusion_key(3, 2147483647, 1, 2), 17179869183ULL);  // 3 * 2^32 + 2^32 - 1
}

TEST(SampleChecks, CheckWordsOrderByCheckThenPosition) {
  EXPECT_EQ(check_word(0, 0), 0u);
  EXPECT_EQ(check_word(0, 5), 5u);
  EXPECT_EQ(check_word(2, 7), 0x0200000000000007ULL);
  EXPECT_EQ(check_word(254, 0x00FFFFFFFFFFFFFFULL), 0xFEFFFFFFFFFFFFFFULL);
  EXPECT_EQ(check_of(0x0200000000000007ULL), 2u);
  EXPECT_EQ(position_of(0x0200000000000007ULL), 7u);
  EXPECT_EQ(check_of(0xFEFFFFFFFFFFFFFFULL), 254u);
  EXPECT_EQ(position_of(0xFEFFFFFFFFFFFFFFULL), 0x00FFFFFFFFFFFFFFULL);
  // An earlier check wins whatever the positions; within a check, the earlier position.
  EXPECT_LT(check_word(0, 0x00FFFFFFFFFFFFFFULL), check_word(1, 0));
  EXPECT_LT(check_word(1, 3), check_word(1, 4));
  // "None" is above every word.
  EXPECT_EQ(check_word_none, 0xFFFFFFFFFFFFFFFFULL);
  EXPECT_LT(check_word(254, 0x00FFFFFFFFFFFFFFULL), check_word_none);
}

TEST(SampleChecks, ExclusionKeyMessagesNameTheFault) {
  EXPECT_EQ(exclusion_key_message(exclusion_key_fault::relation, 1, 2, 3, 2),
            "edge exclusion: relation 3 is outside [0, 2)");
  EXPECT_EQ(exclusion_key_message(exclusion_key_fault::destination, 1, 2147483648, 0, 2),
            "edge exclusion: destination 2147483648 of relation 0 (of 2) makes a key s R + r "
            "outside [0, 2^32)");
  EXPECT_EQ(exclusion_key_message(exclusion_key_fault::source, -4, 5, 1, 2),
            "edge exclusion: ids -4 -> 11 are outside [0, 2^32)");
  EXPECT_EQ(exclusion_key_message(exclusion_key_fault::none, 1, 2, 0, 1), "");
}

}  // namespace
}  // namespace coopgnn
