// Counter-based RNG (docs/design.md section 4.1): Philox known answers, keying, and uniformity.
#include "runtime/core/rng.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

namespace coopgnn {
namespace {

TEST(Rng, PhiloxKnownAnswers) {
  // Known-answer vectors of Philox4x32-10 published with Random123 (Salmon et al., SC'11).
  r123::Philox4x32 gen;
  r123::Philox4x32::ctr_type c0 = {{0, 0, 0, 0}};
  r123::Philox4x32::key_type k0 = {{0, 0}};
  auto const r0 = gen(c0, k0);
  EXPECT_EQ(r0[0], 0x6627e8d5u);
  EXPECT_EQ(r0[1], 0xe169c58du);
  EXPECT_EQ(r0[2], 0xbc57ac4cu);
  EXPECT_EQ(r0[3], 0x9b00dbd8u);
  r123::Philox4x32::ctr_type c1 = {{0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u}};
  r123::Philox4x32::key_type k1 = {{0xa4093822u, 0x299f31d0u}};
  auto const r1 = gen(c1, k1);
  EXPECT_EQ(r1[0], 0xd16cfe09u);
  EXPECT_EQ(r1[1], 0x94fdccebu);
  EXPECT_EQ(r1[2], 0x5001e420u);
  EXPECT_EQ(r1[3], 0x24126ea1u);
}

TEST(Rng, DrawsArePureFunctionsOfTheirKey) {
  auto const s = rng::make_stream(42, rng::purpose::ns, 1);
  EXPECT_EQ(rng::draw_u32(s, 123456789012ULL, 3, 7), rng::draw_u32(s, 123456789012ULL, 3, 7));
  // Each part of the key matters.
  auto const base = rng::draw_u32(s, 5, 3, 7);
  EXPECT_NE(base, rng::draw_u32(rng::make_stream(43, rng::purpose::ns, 1), 5, 3, 7));
  EXPECT_NE(base, rng::draw_u32(rng::make_stream(42, rng::purpose::labor, 1), 5, 3, 7));
  EXPECT_NE(base, rng::draw_u32(rng::make_stream(42, rng::purpose::ns, 2), 5, 3, 7));
  EXPECT_NE(base, rng::draw_u32(s, 6, 3, 7));
  EXPECT_NE(base, rng::draw_u32(s, 5 + (1ULL << 32), 3, 7));  // high id bits are used
  EXPECT_NE(base, rng::draw_u32(s, 5, 4, 7));
  EXPECT_NE(base, rng::draw_u32(s, 5, 3, 8));
}

TEST(Rng, UnitFloatsAreInsideTheOpenInterval) {
  EXPECT_GT(rng::to_unit(0), 0.0f);
  EXPECT_LT(rng::to_unit(0xffffffffu), 1.0f);
  EXPECT_EQ(rng::to_unit(0x80000000u), 0.5f + 0.5f / 8388608.0f);  // exact, no rounding
  EXPECT_EQ(rng::to_unit(0xffffffffu), 1.0f - 0.5f / 8388608.0f);
}

TEST(Rng, UniformPassesKolmogorovSmirnov) {
  auto const s = rng::make_stream(9, rng::purpose::labor, 0);
  int const n = 20000;
  std::vector<double> u(n);
  for (int i = 0; i < n; ++i) u[i] = rng::uniform(s, static_cast<std::uint64_t>(i), 0, 0);
  std::sort(u.begin(), u.end());
  double d = 0;
  for (int i = 0; i < n; ++i) {
    d = std::max({d, u[i] - static_cast<double>(i) / n, static_cast<double>(i + 1) / n - u[i]});
  }
  // Critical value at alpha = 0.001: 1.95 / sqrt(n).
  EXPECT_LT(d, 1.95 / std::sqrt(static_cast<double>(n)));
}

}  // namespace
}  // namespace coopgnn
