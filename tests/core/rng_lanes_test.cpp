// rng::draw4_lanes against Random123's Philox4x32-10 through rng::draw4, word for word.
#include "runtime/core/rng_lanes.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>

#include "runtime/core/rng.hpp"

namespace coopgnn {
namespace {

template <int L>
void expect_lanes_equal_draw4(rng::stream s, std::uint64_t id, std::uint32_t sub0,
                              std::uint32_t batch) {
  std::array<std::array<std::uint32_t, L>, 4> out{};
  rng::draw4_lanes<L>(s, id, sub0, batch, out);
  for (int l = 0; l < L; ++l) {
    auto const w = rng::draw4(s, id, sub0 + static_cast<std::uint32_t>(l), batch);
    for (int k = 0; k < 4; ++k) {
      ASSERT_EQ(out[static_cast<std::size_t>(k)][static_cast<std::size_t>(l)],
                w[static_cast<std::size_t>(k)])
          << "lane " << l << " word " << k << " id " << id << " sub0 " << sub0;
    }
  }
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

}  // namespace
}  // namespace coopgnn
