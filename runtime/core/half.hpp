// Element types of a feature table (cache/storage.hpp) and the exact widening of the 16-bit
// ones to float32: tables keep their stored width, and the gather widens the rows it reads,
// before the first layer.
//
//   float32   IEEE 754 binary32, 4 bytes ('<f4' in .npy, torch.FloatStorage)
//   float16   IEEE 754 binary16, 2 bytes: 1 sign, 5 exponent (bias 15), 10 mantissa bits
//             ('<f2' in .npy, torch.HalfStorage)
//   bfloat16  the top 16 bits of a binary32: 1 sign, 8 exponent (bias 127), 7 mantissa bits
//             (torch.BFloat16Storage; .npy has no descr for it)
//
// Every float16 and bfloat16 value is a float32 value, so widening is exact. The functions here
// are the host conversions: plain bit arithmetic (COOPGNN_HD; the *_bits ones constexpr),
// bit-exact with IEEE and with numpy's float16 -> float32, NaN payloads included. CUDA kernels
// widen with __half2float / __bfloat162float (kernels/gather/gather.cu, cache/gpu_cache.cu).
#pragma once

#include <bit>
#include <cstdint>
#include <string_view>

#include "runtime/core/hd.hpp"

namespace coopgnn {

/// The element type of a feature table; 16-bit tables hold each element's bit pattern.
enum class feature_dtype : std::uint8_t { float32, float16, bfloat16 };

/// "float32", "float16" or "bfloat16" (numpy's / torch's names).
constexpr std::string_view to_string(feature_dtype t) {
  switch (t) {
    case feature_dtype::float32:
      return "float32";
    case feature_dtype::float16:
      return "float16";
    case feature_dtype::bfloat16:
      return "bfloat16";
  }
  return "?";
}

/// Bytes per element as stored: 4 for float32, 2 for float16 and bfloat16.
COOPGNN_HD constexpr std::int64_t feature_dtype_size(feature_dtype t) {
  return t == feature_dtype::float32 ? 4 : 2;
}

/// The float32 bit pattern of the IEEE binary16 value with bits `h` (exact: every binary16 is a
/// binary32). Normal numbers rebias the exponent (15 -> 127); subnormals (exponent 0, mantissa
/// m != 0, value m * 2^-24) are normalised; +-0 stay signed zeros; +-inf stay infinities; a NaN
/// keeps its sign and its 10 payload bits as the top of the 23-bit mantissa (quiet stays quiet).
COOPGNN_HD constexpr std::uint32_t half_to_float_bits(std::uint16_t h) {
  std::uint32_t const sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  std::uint32_t const exp = (h >> 10) & 0x1fu;
  std::uint32_t man = h & 0x3ffu;
  if (exp == 0x1fu) return sign | 0x7f800000u | (man << 13);  // inf, NaN
  if (exp != 0) return sign | ((exp + (127 - 15)) << 23) | (man << 13);
  if (man == 0) return sign;  // +-0
  // Subnormal: shift the leading 1 up to the implicit bit (bit 10), one exponent step each.
  std::uint32_t e = 127 - 15 + 1;
  while ((man & 0x400u) == 0) {
    man <<= 1;
    --e;
  }
  return sign | (e << 23) | ((man & 0x3ffu) << 13);
}

/// float32 bits reinterpreted as a float (std::bit_cast; __uint_as_float in device code).
COOPGNN_HD inline float float_from_bits(std::uint32_t b) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(b);
#else
  return std::bit_cast<float>(b);
#endif
}

/// The bits of a float (std::bit_cast; __float_as_uint in device code).
COOPGNN_HD inline std::uint32_t bits_of_float(float f) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(f);
#else
  return std::bit_cast<std::uint32_t>(f);
#endif
}

/// The float32 value of binary16 bits `h` (half_to_float_bits, reinterpreted). Exact.
COOPGNN_HD inline float half_to_float(std::uint16_t h) {
  return float_from_bits(half_to_float_bits(h));
}

/// The float32 value of bfloat16 bits `b`: b << 16 reinterpreted. Exact, NaN payloads kept.
COOPGNN_HD inline float bfloat16_to_float(std::uint16_t b) {
  return float_from_bits(static_cast<std::uint32_t>(b) << 16);
}

/// The binary16 bits of the float32 with bits `b`, a value that is exactly representable in
/// binary16 (a widened float16: the inverse of half_to_float, bit for bit, NaN payloads included).
/// Other values are not rounded correctly (the low mantissa bits are dropped); never used for them.
COOPGNN_HD constexpr std::uint16_t float_bits_to_half_exact(std::uint32_t b) {
  auto const sign = static_cast<std::uint16_t>((b >> 16) & 0x8000u);
  std::uint32_t const exp = (b >> 23) & 0xffu;
  std::uint32_t const man = b & 0x7fffffu;
  if (exp == 0xffu) return static_cast<std::uint16_t>(sign | 0x7c00u | (man >> 13));  // inf, NaN
  if (exp == 0) return sign;  // +-0 (float32 subnormals are not binary16 values)
  auto const e = static_cast<std::int32_t>(exp) - 127;
  if (e >= -14) {
    return static_cast<std::uint16_t>(sign | static_cast<std::uint32_t>(e + 15) << 10 |
                                      (man >> 13));
  }
  // A binary16 subnormal: mantissa (1.m) * 2^e = k * 2^-24 with k = (2^23 + m) >> (-1 - e);
  // below 2^-24 nothing is left (and the shift stays under 32 bits).
  if (e < -24) return sign;
  return static_cast<std::uint16_t>(sign | ((0x800000u | man) >> (-1 - e)));
}

/// float_bits_to_half_exact of a float value.
COOPGNN_HD inline std::uint16_t float_to_half_exact(float f) {
  return float_bits_to_half_exact(bits_of_float(f));
}

/// The binary16 bits of float32 `f` rounded to nearest, ties to even (IEEE 754's default, what
/// numpy's astype(float16) and CUDA's __float2half_rn give): magnitudes from 65520 up become
/// infinity, those below 2^-25 (and 2^-25 itself, a tie to even) zero, NaN stays a (quiet) NaN.
COOPGNN_HD constexpr std::uint16_t float_bits_to_half(std::uint32_t b) {
  auto const sign = static_cast<std::uint16_t>((b >> 16) & 0x8000u);
  std::uint32_t const exp = (b >> 23) & 0xffu;
  std::uint32_t const man = b & 0x7fffffu;
  if (exp == 0xffu) return static_cast<std::uint16_t>(sign | 0x7c00u | (man != 0 ? 0x200u : 0u));
  auto const e = static_cast<std::int32_t>(exp) - 127;
  if (e > 15) return static_cast<std::uint16_t>(sign | 0x7c00u);
  // Keep `bits` of the 24-bit significand 1.m (a normal keeps 11, a subnormal fewer), then round
  // the dropped part: above half up, exactly half to the even neighbour. A carry out of the
  // significand moves to the next exponent, and past 65504 to infinity, as it should.
  std::uint32_t const full = exp == 0 ? 0u : (0x800000u | man);
  std::int32_t const shift = e >= -14 ? 13 : -1 - e;  // bits dropped
  if (shift > 24) return sign;
  std::uint32_t kept = full >> shift;
  std::uint32_t const rest = full & ((1u << shift) - 1u);
  std::uint32_t const halfway = 1u << (shift - 1);
  if (rest > halfway || (rest == halfway && (kept & 1u) != 0)) ++kept;
  if (e >= -14) {
    // kept = 1.m in 11 bits (0x400 .. 0x800 after a carry): exponent field e + 15 plus the carry.
    return static_cast<std::uint16_t>(sign + ((static_cast<std::uint32_t>(e + 14) << 10) + kept));
  }
  return static_cast<std::uint16_t>(sign | kept);  // a subnormal (or 2^-14 after a carry)
}

/// float_bits_to_half of a float value.
COOPGNN_HD inline std::uint16_t float_to_half(float f) {
  return float_bits_to_half(bits_of_float(f));
}

/// The float32 value of one stored element `bits` of type `t` (float16 or bfloat16).
COOPGNN_HD inline float widen_to_float(feature_dtype t, std::uint16_t bits) {
  return t == feature_dtype::bfloat16 ? bfloat16_to_float(bits) : half_to_float(bits);
}

}  // namespace coopgnn
