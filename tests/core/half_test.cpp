// Exact widening of float16 / bfloat16 bit patterns to float32 (runtime/core/half.hpp). The
// expected float32 bits are written out by hand from the IEEE 754 encodings, never computed by
// the code under test.
#include "runtime/core/half.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>

namespace coopgnn {
namespace {

struct bits_case {
  std::uint16_t in;
  std::uint32_t want;  // float32 bits
  const char* what;
};

// binary16: sign | 5 exponent bits (bias 15) | 10 mantissa bits.
constexpr bits_case kHalf[] = {
    {0x3C00, 0x3F800000, "1.0"},
    {0xBC00, 0xBF800000, "-1.0"},
    {0x4000, 0x40000000, "2.0"},
    {0x3555, 0x3EAAA000, "0.33325195 (1/3 rounded to binary16)"},
    {0x7BFF, 0x477FE000, "65504, the largest finite"},
    {0x0400, 0x38800000, "2^-14, the smallest normal"},
    {0x0001, 0x33800000, "2^-24, the smallest subnormal"},
    {0x8001, 0xB3800000, "-2^-24"},
    {0x0200, 0x38000000, "2^-15, a subnormal with one bit"},
    {0x03FF, 0x387FC000, "1023 * 2^-24, the largest subnormal"},
    {0x0003, 0x34400000, "3 * 2^-24"},
    {0x0000, 0x00000000, "+0"},
    {0x8000, 0x80000000, "-0"},
    {0x7C00, 0x7F800000, "+inf"},
    {0xFC00, 0xFF800000, "-inf"},
    {0x7E00, 0x7FC00000, "the quiet NaN numpy writes"},
    {0xFE00, 0xFFC00000, "a negative quiet NaN"},
    {0x7C01, 0x7F802000, "a signalling NaN: payload kept in the top mantissa bits"},
    {0x7FFF, 0x7FFFE000, "the all-ones NaN"},
};

// bfloat16: the top 16 bits of a float32.
constexpr bits_case kBfloat[] = {
    {0x3F80, 0x3F800000, "1.0"},
    {0xC040, 0xC0400000, "-3.0"},
    {0x7F7F, 0x7F7F0000, "the largest finite"},
    {0x0080, 0x00800000, "2^-126, the smallest normal"},
    {0x0001, 0x00010000, "a subnormal"},
    {0x0000, 0x00000000, "+0"},
    {0x8000, 0x80000000, "-0"},
    {0x7F80, 0x7F800000, "+inf"},
    {0xFF80, 0xFF800000, "-inf"},
    {0x7FC0, 0x7FC00000, "the quiet NaN"},
    {0x7F81, 0x7F810000, "a signalling NaN, payload kept"},
};

TEST(Half, Float16WidensToTheHandWrittenFloat32Bits) {
  for (auto const& c : kHalf) {
    SCOPED_TRACE(c.what);
    EXPECT_EQ(half_to_float_bits(c.in), c.want);
    EXPECT_EQ(std::bit_cast<std::uint32_t>(half_to_float(c.in)), c.want);
    EXPECT_EQ(std::bit_cast<std::uint32_t>(widen_to_float(feature_dtype::float16, c.in)), c.want);
  }
  // Values, for the reader of the table above.
  EXPECT_EQ(half_to_float(0x3C00), 1.0f);
  EXPECT_EQ(half_to_float(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(half_to_float(0x7BFF), 65504.0f);
  EXPECT_TRUE(std::signbit(half_to_float(0x8000)));
  EXPECT_EQ(half_to_float(0x8000), 0.0f);
  EXPECT_TRUE(std::isinf(half_to_float(0xFC00)) && half_to_float(0xFC00) < 0);
  EXPECT_TRUE(std::isnan(half_to_float(0x7E00)));
  EXPECT_TRUE(std::isnan(half_to_float(0x7C01)));
}

TEST(Half, Bfloat16WidensToTheHandWrittenFloat32Bits) {
  for (auto const& c : kBfloat) {
    SCOPED_TRACE(c.what);
    EXPECT_EQ(std::bit_cast<std::uint32_t>(bfloat16_to_float(c.in)), c.want);
    EXPECT_EQ(std::bit_cast<std::uint32_t>(widen_to_float(feature_dtype::bfloat16, c.in)), c.want);
  }
  EXPECT_EQ(bfloat16_to_float(0x3F80), 1.0f);
  EXPECT_TRUE(std::isnan(bfloat16_to_float(0x7FC0)));
}

TEST(Half, TheBitConversionsAreConstantExpressions) {
  static_assert(half_to_float_bits(0x3C00) == 0x3F800000);
  static_assert(half_to_float_bits(0x0001) == 0x33800000);
  static_assert(float_bits_to_half_exact(0x3F800000) == 0x3C00);
  static_assert(float_bits_to_half_exact(0x0DA24260) == 0x0000);  // 1e-30: below 2^-24
  static_assert(float_bits_to_half_exact(0x8DA24260) == 0x8000);  // -1e-30
  static_assert(feature_dtype_size(feature_dtype::float32) == 4);
  static_assert(feature_dtype_size(feature_dtype::float16) == 2);
  static_assert(feature_dtype_size(feature_dtype::bfloat16) == 2);
  EXPECT_EQ(to_string(feature_dtype::float16), "float16");
  EXPECT_EQ(to_string(feature_dtype::bfloat16), "bfloat16");
  EXPECT_EQ(to_string(feature_dtype::float32), "float32");
}

TEST(Half, EveryPatternRoundTripsAndWidensMonotonically) {
  // Widening is injective and narrowing a widened value gives its bits back, NaNs included.
  for (std::uint32_t h = 0; h <= 0xFFFF; ++h) {
    auto const b = static_cast<std::uint16_t>(h);
    ASSERT_EQ(float_to_half_exact(half_to_float(b)), b) << std::hex << h;
  }
  // Positive finite patterns are ordered as their values (no gaps at the subnormal boundary).
  for (std::uint16_t h = 0; h < 0x7BFF; ++h) {
    ASSERT_LT(half_to_float(h), half_to_float(static_cast<std::uint16_t>(h + 1))) << std::hex << h;
  }
  // Consecutive subnormals differ by exactly 2^-24.
  for (std::uint16_t h = 0; h < 0x0400; ++h) {
    ASSERT_EQ(half_to_float(static_cast<std::uint16_t>(h + 1)) - half_to_float(h),
              std::ldexp(1.0f, -24));
  }
}

#if defined(__FLT16_MAX__) && !defined(__clang__)
TEST(Half, AgreesWithTheCompilersFloat16) {
  // g++ >= 12 on x86-64: _Float16 -> float is the IEEE conversion; bit-exact for every non-NaN
  // pattern (NaNs: both NaN).
  for (std::uint32_t h = 0; h <= 0xFFFF; ++h) {
    auto const b = static_cast<std::uint16_t>(h);
    float const want = static_cast<float>(std::bit_cast<_Float16>(b));
    if (std::isnan(want)) {
      ASSERT_TRUE(std::isnan(half_to_float(b))) << std::hex << h;
    } else {
      ASSERT_EQ(std::bit_cast<std::uint32_t>(half_to_float(b)), std::bit_cast<std::uint32_t>(want))
          << std::hex << h;
    }
  }
}
#endif

// ---- float32 -> float16, rounded to nearest even ---------------------------------------------

struct round_case {
  std::uint32_t in;    // float32 bits
  std::uint16_t want;  // binary16 bits, from the IEEE 754 encodings by hand
  const char* what;
};

constexpr round_case kRound[] = {
    {0x3F800000, 0x3C00, "1.0"},
    {0xBF800000, 0xBC00, "-1.0"},
    {0x3F801000, 0x3C00, "1 + 2^-11: half way between 1 and 1 + 2^-10, ties to even (down)"},
    {0x3F803000, 0x3C02, "1 + 3 * 2^-11: half way, ties to even (up)"},
    {0x3F801001, 0x3C01, "just above half way rounds up"},
    {0x3EAAAAAB, 0x3555, "1/3"},
    {0x477FE000, 0x7BFF, "65504, the largest finite"},
    {0x477FEFFF, 0x7BFF, "just below 65520 stays finite"},
    {0x477FF000, 0x7C00, "65520 rounds to infinity"},
    {0x7F800000, 0x7C00, "+infinity"},
    {0x38800000, 0x0400, "2^-14, the smallest normal"},
    {0x387FE000, 0x0400, "2^-14 - 2^-25: a subnormal tie that carries into the smallest normal"},
    {0x387FC000, 0x03FF, "2^-14 - 2^-24, the largest subnormal"},
    {0x33800000, 0x0001, "2^-24, the smallest subnormal"},
    {0x33000000, 0x0000, "2^-25: half of the smallest subnormal, ties to even (zero)"},
    {0x33400000, 0x0001, "1.5 * 2^-25 rounds up to 2^-24"},
    {0x80000000, 0x8000, "-0"},
    {0x00000001, 0x0000, "a float32 subnormal"},
};

TEST(FloatToHalf, RoundsToNearestEven) {
  for (const round_case& c : kRound) {
    EXPECT_EQ(float_bits_to_half(c.in), c.want) << c.what;
  }
  std::uint16_t const nan = float_to_half(std::nanf(""));
  EXPECT_EQ(nan & 0x7C00, 0x7C00);
  EXPECT_NE(nan & 0x03FF, 0);
}

TEST(FloatToHalf, IsTheInverseOfWideningOnEveryFiniteHalf) {
  for (std::uint32_t h = 0; h < 0x10000; ++h) {
    if ((h & 0x7C00) == 0x7C00) continue;  // inf and NaN
    EXPECT_EQ(float_to_half(half_to_float(static_cast<std::uint16_t>(h))), h) << h;
  }
}

#if defined(__FLT16_MAX__) && !defined(__clang__)
TEST(FloatToHalf, AgreesWithTheCompilersRoundingOnSpreadFloats) {
  // g++ >= 12 on x86-64: float -> _Float16 rounds to nearest even.
  for (std::uint64_t i = 0; i < (std::uint64_t{1} << 32); i += 4099) {
    auto const b = static_cast<std::uint32_t>(i);
    float const f = std::bit_cast<float>(b);
    if (std::isnan(f)) continue;
    ASSERT_EQ(float_bits_to_half(b), std::bit_cast<std::uint16_t>(static_cast<_Float16>(f)))
        << std::hex << b;
  }
}
#endif

}  // namespace
}  // namespace coopgnn
