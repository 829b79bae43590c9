// XXH64, the 64-bit xxHash of Yann Collet (xxHash specification, "XXH64 algorithm
// description"), as a stream: bytes fed in any pieces hash as the whole. The datasets' content
// fingerprint (pipeline/checkpoint.hpp) hashes edge arrays, feature tables and splits with it,
// eight bytes per multiply on four independent lanes (several GB/s on one core).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace coopgnn {

/// Streaming XXH64 with seed 0. update() takes any byte ranges (host memory); digest() returns
/// XXH64 of everything fed so far (the published values: "" -> 0xef46db3751d8e999, "abc" ->
/// 0x44bc2cf5ad770999). The result depends only on the bytes and their order, never on how they
/// were split into update() calls. Does not throw.
class xxh64_stream {
 public:
  /// Appends `n` bytes at `p` (host memory; p may be null when n == 0).
  void update(const void* p, std::size_t n) {
    if (n == 0) return;  // p may be null: memcpy from null is undefined even for 0 bytes
    const auto* b = static_cast<const unsigned char*>(p);
    total_ += n;
    if (fill_ > 0) {  // complete the pending 32-byte stripe first
      std::size_t const take = n < 32 - fill_ ? n : 32 - fill_;
      std::memcpy(buf_ + fill_, b, take);
      fill_ += take;
      b += take;
      n -= take;
      if (fill_ < 32) return;
      stripe(buf_);
      fill_ = 0;
    }
    for (; n >= 32; b += 32, n -= 32) stripe(b);
    std::memcpy(buf_, b, n);
    fill_ = n;
  }
  /// Appends the bytes of one trivially copyable value.
  template <class T>
  void update_value(const T& v) {
    update(&v, sizeof(v));
  }
  /// XXH64 of the bytes fed so far (the stream may be fed further afterwards).
  [[nodiscard]] std::uint64_t digest() const {
    std::uint64_t h = 0;
    if (total_ >= 32) {
      h = rotl(v_[0], 1) + rotl(v_[1], 7) + rotl(v_[2], 12) + rotl(v_[3], 18);
      for (std::uint64_t const v : v_) h = (h ^ round(0, v)) * kP1 + kP4;
    } else {
      h = kP5;
    }
    h += total_;
    const unsigned char* b = buf_;
    std::size_t n = fill_;
    for (; n >= 8; b += 8, n -= 8) h = rotl(h ^ round(0, load64(b)), 27) * kP1 + kP4;
    if (n >= 4) {
      std::uint32_t w = 0;
      std::memcpy(&w, b, 4);
      h = rotl(h ^ (std::uint64_t{w} * kP1), 23) * kP2 + kP3;
      b += 4;
      n -= 4;
    }
    for (; n > 0; ++b, --n) h = rotl(h ^ (std::uint64_t{*b} * kP5), 11) * kP1;
    h ^= h >> 33;
    h *= kP2;
    h ^= h >> 29;
    h *= kP3;
    h ^= h >> 32;
    return h;
  }

 private:
  static constexpr std::uint64_t kP1 = 0x9E3779B185EBCA87ULL;
  static constexpr std::uint64_t kP2 = 0xC2B2AE3D27D4EB4FULL;
  static constexpr std::uint64_t kP3 = 0x165667B19E3779F9ULL;
  static constexpr std::uint64_t kP4 = 0x85EBCA77C2B2AE63ULL;
  static constexpr std::uint64_t kP5 = 0x27D4EB2F165667C5ULL;

  static std::uint64_t rotl(std::uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }
  static std::uint64_t round(std::uint64_t acc, std::uint64_t lane) {
    return rotl(acc + lane * kP2, 31) * kP1;
  }
  /// A little-endian 8-byte word (the hosts coopgnn runs on are little-endian).
  static std::uint64_t load64(const unsigned char* b) {
    std::uint64_t w = 0;
    std::memcpy(&w, b, 8);
    return w;
  }
  void stripe(const unsigned char* b) {
    for (int i = 0; i < 4; ++i) v_[i] = round(v_[i], load64(b + 8 * i));
  }

  std::uint64_t v_[4] = {kP1 + kP2, kP2, 0, 0 - kP1};  ///< the four lanes (seed 0)
  unsigned char buf_[32] = {};                         ///< the pending partial stripe
  std::size_t fill_ = 0;                               ///< bytes in buf_
  std::uint64_t total_ = 0;                            ///< bytes fed in all
};

}  // namespace coopgnn
