// XXH64 (runtime/core/hash.hpp) against the published values of the reference implementation,
// fed whole and in pieces.
#include "runtime/core/hash.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace coopgnn {
namespace {

std::uint64_t xxh64_of(const std::string& s) {
  xxh64_stream h;
  h.update(s.data(), s.size());
  return h.digest();
}

TEST(Xxh64, PublishedValues) {
  // xxHash's reference values for seed 0: lengths below 4, 4..7, 8..31, one 32-byte stripe and
  // beyond.
  std::vector<std::pair<std::string, std::uint64_t>> const known = {
      {"", 0xef46db3751d8e999ULL},
      {"a", 0xd24ec4f1a98c6e5bULL},
      {"abc", 0x44bc2cf5ad770999ULL},
      {"1234", 0xd8316e61d84f6ba4ULL},
      {"12345678", 0xd2d02f08cf7cfd4aULL},
      {"123456789012345", 0xc377d78ade001a3cULL},
      {"1234567890123456", 0xb61c33dc6c59f270ULL},
      {"1234567890123456789012345678901", 0x8f367cb873a5376eULL},
      {"12345678901234567890123456789012", 0x40fd1aa52d98274cULL},
      {"The quick brown fox jumps over the lazy dog", 0x0b242d361fda71bcULL}};
  for (auto const& [text, value] : known) EXPECT_EQ(xxh64_of(text), value) << '"' << text << '"';
}

TEST(Xxh64, PiecesHashAsTheWhole) {
  std::string const text = "The quick brown fox jumps over the lazy dog";
  for (std::size_t piece : {1U, 3U, 7U, 31U, 32U, 33U}) {
    xxh64_stream h;
    for (std::size_t at = 0; at < text.size(); at += piece) {
      h.update(text.data() + at, std::min(piece, text.size() - at));
    }
    EXPECT_EQ(h.digest(), 0x0b242d361fda71bcULL) << piece;
  }
}

TEST(Xxh64, AnEmptyRangeMayBeNullAndChangesNothing) {
  // An empty vector's data() is null; the datasets' empty arrays reach update() that way (the
  // sanitizer presets fail on a memcpy from null, even of 0 bytes).
  xxh64_stream h;
  h.update(nullptr, 0);
  h.update("abc", 3);
  h.update(nullptr, 0);
  EXPECT_EQ(h.digest(), 0x44bc2cf5ad770999ULL);
}

}  // namespace
}  // namespace coopgnn
