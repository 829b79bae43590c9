// rng::draw4_lanes against Random123's Philox4x32-10 through rng::draw4, word for word.
#include "runtime/core/rng_lanes.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <cstdio>

#include "runtime/core/rng.hpp"

namespace coopgnn {
namespace {

/// out = draw(s, id, sub0, batch) equals rng::draw4 lane by lane, word by word.
template <int L, typename Draw>
void expect_lanes_equal_draw4(rng::stream s, std::uint64_t id, std::uint32_t sub0,
                              std::uint32_t batch, Draw draw) {
  std::array<std::array<std::uint32_t, L>, 4> out{};
  draw(s, id, sub0, batch, out);
  for (int l = 0; l < L; ++l) {
    auto const w = rng::draw4(s, id, sub0 + static_cast<std::uint32_t>(l), batch);
    for (int k = 0; k < 4; ++k) {
      ASSERT_EQ(out[static_cast<std::size_t>(k)][static_cast<std::size_t>(l)],
                w[static_cast<std::size_t>(k)])
          << "lane " << l << " word " << k << " id " << id << " sub0 " << sub0;
    }
  }
}

template <int L>
void expect_lanes_equal_draw4(rng::stream s, std::uint64_t id, std::uint32_t sub0,
                              std::uint32_t batch) {
  expect_lanes_equal_draw4<L>(
      s, id, sub0, batch,
      [](rng::stream s2, std::uint64_t id2, std::uint32_t sub2, std::uint32_t batch2, auto& out) {
        rng::draw4_lanes<L>(s2, id2, sub2, batch2, out);
      });
}

TEST(RngLanes, SameWordsAsDraw4) {
  for (std::uint64_t seed : {0ull, 1ull, 0xFFFFFFFFFFFFFFFFull}) {
    rng::stream const s = rng::make_stream(seed, rng::purpose::dropout, 3);
    for (std::uint64_t id : {0ull, 7ull, 0x123456789ABull, 0xFFFFFFFFFFFFFFFFull}) {
      for (std::uint32_t sub0 : {0u, 5u, 0xFFFFFFF8u}) {  // the last wraps past 2^32 - 1
        for (std::uint32_t batch : {0u, 41u, 0xFFFFFFFFu}) {
          expect_lanes_equal_draw4<1>(s, id, sub0, batch);
          expect_lanes_equal_draw4<8>(s, id, sub0, batch);
          expect_lanes_equal_draw4<16>(s, id, sub0, batch);
        }
      }
    }
  }
}

/// Each path on its own (draw4_lanes runs only the widest this CPU has): the plain loops always,
/// the AVX2 and AVX-512F lanes where the CPU has them.
template <int L, typename Draw>
void expect_path_equal_draw4(Draw draw) {
  for (std::uint64_t seed : {0ull, 0xFFFFFFFFFFFFFFFFull}) {
    rng::stream const s = rng::make_stream(seed, rng::purpose::dropout, 1);
    for (std::uint64_t id : {0ull, 0x123456789ABull, 0xFFFFFFFFFFFFFFFFull}) {
      for (std::uint32_t sub0 : {0u, 3u, 0xFFFFFFF9u}) {  // the last wraps past 2^32 - 1
        for (std::uint32_t batch : {0u, 0xFFFFFFFFu}) {
          expect_lanes_equal_draw4<L>(s, id, sub0, batch, draw);
        }
      }
    }
  }
}

TEST(RngLanes, EveryPathGivesTheWordsOfDraw4) {
  expect_path_equal_draw4<16>(
      [](rng::stream s, std::uint64_t id, std::uint32_t sub0, std::uint32_t batch, auto& out) {
        rng::detail::draw4_lanes_loop<16>(s, id, sub0, batch, out);
      });
#ifdef COOPGNN_RNG_LANES_X86
  if (rng::detail::has_avx2()) {
    expect_path_equal_draw4<8>(
        [](rng::stream s, std::uint64_t id, std::uint32_t sub0, std::uint32_t batch, auto& out) {
          rng::detail::draw4_x8_avx2(s, id, sub0, batch, out[0].data(), out[1].data(),
                                     out[2].data(), out[3].data());
        });
  } else {
    std::printf("[ SKIPPED ] AVX2 lanes: this CPU has no AVX2\n");
  }
  if (rng::detail::has_avx512f()) {
    expect_path_equal_draw4<16>(
        [](rng::stream s, std::uint64_t id, std::uint32_t sub0, std::uint32_t batch, auto& out) {
          rng::detail::draw4_x16_avx512(s, id, sub0, batch, out[0].data(), out[1].data(),
                                        out[2].data(), out[3].data());
        });
  } else {
    std::printf("[ SKIPPED ] AVX-512F lanes: this CPU has no AVX-512F\n");
  }
#endif
}

}  // namespace
}  // namespace coopgnn
