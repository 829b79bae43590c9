// Host-side batched Philox draws: rng::draw4 for L consecutive sub-indices at once, written as
// loops over lanes so that the compiler vectorises the 32 x 32 -> 64-bit products (the host
// dropout draws one Philox block per 4 feature columns; one call here serves 4 L columns).
#pragma once

#include <array>
#include <cstdint>

#include "runtime/core/rng.hpp"

namespace coopgnn::rng {

/// out[w][l] = draw4(s, id, sub0 + l, batch)[w] for l < L, w < 4: Philox4x32-10 (Salmon et al.,
/// "Parallel random numbers: as easy as 1, 2, 3", SC 2011; the rounds and constants of
/// Random123's philox.h), bit for bit the same words as draw4, lane-parallel. Host only.
template <int L>
inline void draw4_lanes(stream s, std::uint64_t id, std::uint32_t sub0, std::uint32_t batch,
                        std::array<std::array<std::uint32_t, L>, 4>& out) {
  constexpr std::uint32_t kM0 = 0xD2511F53u;
  constexpr std::uint32_t kM1 = 0xCD9E8D57u;
  constexpr std::uint32_t kW0 = 0x9E3779B9u;
  constexpr std::uint32_t kW1 = 0xBB67AE85u;
  std::uint32_t c0[L], c1[L], c2[L], c3[L];
  for (int l = 0; l < L; ++l) {
    c0[l] = static_cast<std::uint32_t>(id);
    c1[l] = static_cast<std::uint32_t>(id >> 32);
    c2[l] = sub0 + static_cast<std::uint32_t>(l);
    c3[l] = batch;
  }
  std::uint32_t k0 = s.k0;
  std::uint32_t k1 = s.k1;
  for (int r = 0; r < 10; ++r) {
    if (r > 0) {
      k0 += kW0;
      k1 += kW1;
    }
    for (int l = 0; l < L; ++l) {
      std::uint64_t const p0 = static_cast<std::uint64_t>(kM0) * c0[l];
      std::uint64_t const p1 = static_cast<std::uint64_t>(kM1) * c2[l];
      std::uint32_t const n0 = static_cast<std::uint32_t>(p1 >> 32) ^ c1[l] ^ k0;
      std::uint32_t const n2 = static_cast<std::uint32_t>(p0 >> 32) ^ c3[l] ^ k1;
      c1[l] = static_cast<std::uint32_t>(p1);
      c3[l] = static_cast<std::uint32_t>(p0);
      c0[l] = n0;
      c2[l] = n2;
    }
  }
  for (int l = 0; l < L; ++l) {
    out[0][l] = c0[l];
    out[1][l] = c1[l];
    out[2][l] = c2[l];
    out[3][l] = c3[l];
  }
}

}  // namespace coopgnn::rng
