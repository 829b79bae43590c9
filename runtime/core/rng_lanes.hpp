// Host-side batched Philox draws: rng::draw4 for L consecutive sub-indices at once (the host
// dropout draws one Philox block per 4 feature columns; one call here serves 4 L columns).
// Compilers do not vectorise the rounds' 32 x 32 -> 64-bit products on their own (GCC 12 keeps
// them scalar), so on x86-64 the rounds are also written with AVX-512F and AVX2 intrinsics,
// picked at run time from the CPU; every path gives the words of rng::draw4 bit for bit.
#pragma once

#include <array>
#include <cstdint>

#include "runtime/core/rng.hpp"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define COOPGNN_RNG_LANES_X86 1
// GCC 12's AVX-512 headers build their "undefined" pass-through operands from self-initialised
// locals, which -W(maybe-)uninitialized reports once inlined: code using the intrinsics goes
// between these two.
#if defined(__clang__)
#define COOPGNN_INTRINSICS_BEGIN \
  _Pragma("GCC diagnostic push") _Pragma("GCC diagnostic ignored \"-Wuninitialized\"")
#else
#define COOPGNN_INTRINSICS_BEGIN                                                       \
  _Pragma("GCC diagnostic push") _Pragma("GCC diagnostic ignored \"-Wuninitialized\"") \
      _Pragma("GCC diagnostic ignored \"-Wmaybe-uninitialized\"")
#endif
#define COOPGNN_INTRINSICS_END _Pragma("GCC diagnostic pop")
#endif

namespace coopgnn::rng {
namespace detail {

inline constexpr std::uint32_t kPhiloxM0 = 0xD2511F53u;
inline constexpr std::uint32_t kPhiloxM1 = 0xCD9E8D57u;
inline constexpr std::uint32_t kPhiloxW0 = 0x9E3779B9u;
inline constexpr std::uint32_t kPhiloxW1 = 0xBB67AE85u;

/// The portable lanes: draw4_lanes as plain loops over lanes.
template <int L>
inline void draw4_lanes_loop(stream s, std::uint64_t id, std::uint32_t sub0, std::uint32_t batch,
                             std::array<std::array<std::uint32_t, L>, 4>& out) {
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
      k0 += kPhiloxW0;
      k1 += kPhiloxW1;
    }
    for (int l = 0; l < L; ++l) {
      std::uint64_t const p0 = static_cast<std::uint64_t>(kPhiloxM0) * c0[l];
      std::uint64_t const p1 = static_cast<std::uint64_t>(kPhiloxM1) * c2[l];
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

#ifdef COOPGNN_RNG_LANES_X86
COOPGNN_INTRINSICS_BEGIN
// One Philox round on a vector of lanes, per 64-bit pair of lanes: mul_epu32 multiplies the even
// 32-bit lanes (and, after a 32-bit shift, the odd ones) into 64-bit products; the blends put the
// high / low words of both back into 32-bit lanes in order.

/// 16 lanes with AVX-512F: words[w][l] for sub-indices sub0 .. sub0 + 15. Only call when
/// has_avx512f().
__attribute__((target("avx512f"))) inline void draw4_x16_avx512(
    stream s, std::uint64_t id, std::uint32_t sub0, std::uint32_t batch, std::uint32_t* w0,
    std::uint32_t* w1, std::uint32_t* w2, std::uint32_t* w3) {
  __m512i const m0 = _mm512_set1_epi32(static_cast<int>(kPhiloxM0));
  __m512i const m1 = _mm512_set1_epi32(static_cast<int>(kPhiloxM1));
  __m512i c0 = _mm512_set1_epi32(static_cast<int>(static_cast<std::uint32_t>(id)));
  __m512i c1 = _mm512_set1_epi32(static_cast<int>(static_cast<std::uint32_t>(id >> 32)));
  __m512i c2 =
      _mm512_add_epi32(_mm512_set1_epi32(static_cast<int>(sub0)),
                       _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));
  __m512i c3 = _mm512_set1_epi32(static_cast<int>(batch));
  std::uint32_t k0 = s.k0;
  std::uint32_t k1 = s.k1;
  constexpr __mmask16 odd = 0xAAAA;
  for (int r = 0; r < 10; ++r) {
    if (r > 0) {
      k0 += kPhiloxW0;
      k1 += kPhiloxW1;
    }
    __m512i const pe0 = _mm512_mul_epu32(c0, m0);
    __m512i const po0 = _mm512_mul_epu32(_mm512_srli_epi64(c0, 32), m0);
    __m512i const pe1 = _mm512_mul_epu32(c2, m1);
    __m512i const po1 = _mm512_mul_epu32(_mm512_srli_epi64(c2, 32), m1);
    __m512i const hi0 = _mm512_mask_blend_epi32(odd, _mm512_srli_epi64(pe0, 32), po0);
    __m512i const lo0 = _mm512_mask_blend_epi32(odd, pe0, _mm512_slli_epi64(po0, 32));
    __m512i const hi1 = _mm512_mask_blend_epi32(odd, _mm512_srli_epi64(pe1, 32), po1);
    __m512i const lo1 = _mm512_mask_blend_epi32(odd, pe1, _mm512_slli_epi64(po1, 32));
    c0 = _mm512_xor_si512(_mm512_xor_si512(hi1, c1), _mm512_set1_epi32(static_cast<int>(k0)));
    c2 = _mm512_xor_si512(_mm512_xor_si512(hi0, c3), _mm512_set1_epi32(static_cast<int>(k1)));
    c1 = lo1;
    c3 = lo0;
  }
  _mm512_storeu_si512(w0, c0);
  _mm512_storeu_si512(w1, c1);
  _mm512_storeu_si512(w2, c2);
  _mm512_storeu_si512(w3, c3);
}

/// 8 lanes with AVX2: words[w][l] for sub-indices sub0 .. sub0 + 7. Only call when has_avx2().
__attribute__((target("avx2"))) inline void draw4_x8_avx2(stream s, std::uint64_t id,
                                                          std::uint32_t sub0, std::uint32_t batch,
                                                          std::uint32_t* w0, std::uint32_t* w1,
                                                          std::uint32_t* w2, std::uint32_t* w3) {
  __m256i const m0 = _mm256_set1_epi32(static_cast<int>(kPhiloxM0));
  __m256i const m1 = _mm256_set1_epi32(static_cast<int>(kPhiloxM1));
  __m256i c0 = _mm256_set1_epi32(static_cast<int>(static_cast<std::uint32_t>(id)));
  __m256i c1 = _mm256_set1_epi32(static_cast<int>(static_cast<std::uint32_t>(id >> 32)));
  __m256i c2 = _mm256_add_epi32(_mm256_set1_epi32(static_cast<int>(sub0)),
                                _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  __m256i c3 = _mm256_set1_epi32(static_cast<int>(batch));
  std::uint32_t k0 = s.k0;
  std::uint32_t k1 = s.k1;
  for (int r = 0; r < 10; ++r) {
    if (r > 0) {
      k0 += kPhiloxW0;
      k1 += kPhiloxW1;
    }
    __m256i const pe0 = _mm256_mul_epu32(c0, m0);
    __m256i const po0 = _mm256_mul_epu32(_mm256_srli_epi64(c0, 32), m0);
    __m256i const pe1 = _mm256_mul_epu32(c2, m1);
    __m256i const po1 = _mm256_mul_epu32(_mm256_srli_epi64(c2, 32), m1);
    __m256i const hi0 = _mm256_blend_epi32(_mm256_srli_epi64(pe0, 32), po0, 0xAA);
    __m256i const lo0 = _mm256_blend_epi32(pe0, _mm256_slli_epi64(po0, 32), 0xAA);
    __m256i const hi1 = _mm256_blend_epi32(_mm256_srli_epi64(pe1, 32), po1, 0xAA);
    __m256i const lo1 = _mm256_blend_epi32(pe1, _mm256_slli_epi64(po1, 32), 0xAA);
    c0 = _mm256_xor_si256(_mm256_xor_si256(hi1, c1), _mm256_set1_epi32(static_cast<int>(k0)));
    c2 = _mm256_xor_si256(_mm256_xor_si256(hi0, c3), _mm256_set1_epi32(static_cast<int>(k1)));
    c1 = lo1;
    c3 = lo0;
  }
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(w0), c0);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(w1), c1);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(w2), c2);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(w3), c3);
}

/// Whether this CPU runs the AVX-512F / AVX2 lanes (asked once, then cached).
inline bool has_avx512f() {
  static bool const yes = __builtin_cpu_supports("avx512f") != 0;
  return yes;
}
inline bool has_avx2() {
  static bool const yes = __builtin_cpu_supports("avx2") != 0;
  return yes;
}
COOPGNN_INTRINSICS_END
#endif

}  // namespace detail

/// out[w][l] = draw4(s, id, sub0 + l, batch)[w] for l < L, w < 4: Philox4x32-10 (Salmon et al.,
/// "Parallel random numbers: as easy as 1, 2, 3", SC 2011; the rounds and constants of
/// Random123's philox.h), bit for bit the same words as draw4, lane-parallel: AVX-512F when
/// L % 16 == 0 and the CPU has it, else AVX2 when L % 8 == 0 and the CPU has it, else plain
/// loops (sub-indices wrap modulo 2^32 on every path). Host only; no allocation.
template <int L>
inline void draw4_lanes(stream s, std::uint64_t id, std::uint32_t sub0, std::uint32_t batch,
                        std::array<std::array<std::uint32_t, L>, 4>& out) {
#ifdef COOPGNN_RNG_LANES_X86
  if constexpr (L % 16 == 0) {
    if (detail::has_avx512f()) {
      for (int l = 0; l < L; l += 16) {
        detail::draw4_x16_avx512(s, id, sub0 + static_cast<std::uint32_t>(l), batch,
                                 out[0].data() + l, out[1].data() + l, out[2].data() + l,
                                 out[3].data() + l);
      }
      return;
    }
  }
  if constexpr (L % 8 == 0) {
    if (detail::has_avx2()) {
      for (int l = 0; l < L; l += 8) {
        detail::draw4_x8_avx2(s, id, sub0 + static_cast<std::uint32_t>(l), batch, out[0].data() + l,
                              out[1].data() + l, out[2].data() + l, out[3].data() + l);
      }
      return;
    }
  }
#endif
  detail::draw4_lanes_loop<L>(s, id, sub0, batch, out);
}

}  // namespace coopgnn::rng
