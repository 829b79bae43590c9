// Host SDDMM: a hand-computed block, naive dot products on integer-valued data (exact), empty
// blocks, zero-degree destinations and shape errors.
#include "kernels/sparse/sddmm.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <span>
#include <vector>

#include "runtime/core/error.hpp"

namespace coopgnn {
namespace {

/// 2 destinations, 3 sources: dst 0 <- {src 1, src 2}, dst 1 <- {src 0}; weights 2, -1, 0.5.
block small_block() {
  block b;
  b.num_dst = 2;
  b.src_ids = {10, 11, 12};
  b.indptr = {0, 2, 3};
  b.indices = {1, 2, 0};
  b.weights = {2.0f, -1.0f, 0.5f};
  b.src_degree = {1, 1, 1};
  return b;
}

TEST(sddmm, hand_computed_block) {
  block const b = small_block();
  // x rows: src0 = (1, 2), src1 = (3, -1), src2 = (0, 4); a = the first two rows of x.
  matrix<float> const x(3, 2, std::vector<float>{1, 2, 3, -1, 0, 4});
  matrix<float> const a(2, 2, std::vector<float>{1, 2, 3, -1});
  std::vector<float> out(3, 99.0f);
  sddmm<float>(b, a, x, false, out);
  // e0: (1,2).(3,-1) = 1; e1: (1,2).(0,4) = 8; e2: (3,-1).(1,2) = 1.
  EXPECT_EQ(out, (std::vector<float>{1.0f, 8.0f, 1.0f}));
  sddmm<float>(b, a, x, true, out);
  EXPECT_EQ(out, (std::vector<float>{2.0f, -8.0f, 0.5f}));
  // a given as the whole source matrix (destinations first) gives the same scores.
  std::vector<float> out_src(3);
  sddmm<float>(b, x, x, true, out_src);
  EXPECT_EQ(out_src, out);
}

struct sddmm_usecase {
  std::int64_t num_dst;
  std::int64_t extra_src;
  std::int64_t d;
};

/// Random block with integer weights; destination 0 has no edges, the last reads every source.
block random_int_block(const sddmm_usecase& u, std::uint64_t seed) {
  std::mt19937_64 gen(seed);
  block b;
  b.num_dst = u.num_dst;
  std::int64_t const num_src = u.num_dst + u.extra_src;
  b.src_ids.resize(static_cast<std::size_t>(num_src));
  b.indptr.push_back(0);
  for (std::int64_t s = 0; s < u.num_dst; ++s) {
    std::int64_t deg = s == 0 ? 0 : (s == u.num_dst - 1 ? num_src : std::int64_t(gen() % 5));
    for (std::int64_t k = 0; k < deg; ++k) {
      b.indices.push_back(s == u.num_dst - 1 ? k : std::int64_t(gen() % std::uint64_t(num_src)));
      b.weights.push_back(static_cast<float>(int(gen() % 5) - 2));
    }
    b.indptr.push_back(static_cast<eid_t>(b.indices.size()));
  }
  return b;
}

template <typename T>
matrix<T> random_int_matrix(std::int64_t rows, std::int64_t cols, std::uint64_t seed) {
  std::mt19937_64 gen(seed);
  matrix<T> m(rows, cols);
  for (T& v : m.values()) v = static_cast<T>(int(gen() % 7) - 3);
  return m;
}

template <typename T>
void check_against_naive() {
  int nonzero = 0;
  for (std::int64_t num_dst : {0, 1, 31, 32, 33}) {
    for (std::int64_t extra : {0, 7}) {
      for (std::int64_t d : {0, 1, 31, 33}) {
        sddmm_usecase const u{num_dst, extra, d};
        SCOPED_TRACE(testing::Message()
                     << "num_dst=" << num_dst << " extra=" << extra << " d=" << d);
        block const b = random_int_block(u, 3 + num_dst * 7 + d);
        auto const x = random_int_matrix<T>(b.num_src(), d, 11 + d);
        auto const a = random_int_matrix<T>(b.num_dst, d, 13 + d);
        std::vector<T> out(static_cast<std::size_t>(b.num_edges()));
        sddmm<T>(b, a, x, true, out);
        for (std::int64_t s = 0; s < b.num_dst; ++s) {
          for (eid_t e = b.indptr[s]; e < b.indptr[s + 1]; ++e) {
            T dot = 0;
            for (std::int64_t j = 0; j < d; ++j) dot += a(s, j) * x(b.indices[e], j);
            ASSERT_EQ(out[e], static_cast<T>(b.weights[e]) * dot) << "edge " << e;
            if (out[e] != T{0}) ++nonzero;
          }
        }
      }
    }
  }
  EXPECT_GT(nonzero, 100);
}

TEST(sddmm, matches_naive_float) { check_against_naive<float>(); }
TEST(sddmm, matches_naive_double) { check_against_naive<double>(); }

TEST(sddmm, empty_and_zero_degree) {
  block empty;
  empty.indptr = {0};
  matrix<float> const none(0, 4);
  std::vector<float> out;
  EXPECT_NO_THROW(sddmm<float>(empty, none, none, true, out));

  block zero_deg;  // three destinations, no edges at all
  zero_deg.num_dst = 3;
  zero_deg.src_ids = {1, 2, 3};
  zero_deg.indptr = {0, 0, 0, 0};
  matrix<float> const x(3, 4, 1.0f);
  EXPECT_NO_THROW(sddmm<float>(zero_deg, x, x, false, out));
}

TEST(sddmm, rejects_bad_shapes) {
  block const b = small_block();
  matrix<float> const x(3, 2, 1.0f);
  matrix<float> const a(2, 2, 1.0f);
  std::vector<float> out(3);
  std::vector<float> short_out(2);
  EXPECT_THROW(sddmm<float>(b, a, x, false, short_out), logic_error);
  EXPECT_THROW(sddmm<float>(b, matrix<float>(2, 3, 1.0f), x, false, out), logic_error);
  EXPECT_THROW(sddmm<float>(b, matrix<float>(1, 2, 1.0f), x, false, out), logic_error);
  EXPECT_THROW(sddmm<float>(b, a, matrix<float>(2, 2, 1.0f), false, out), logic_error);
  std::vector<float> const short_scale(2, 1.0f);
  EXPECT_THROW(sddmm<float>(b.indptr, b.indices, a, x, short_scale, out), logic_error);
  block bad_index = b;
  bad_index.indices[1] = 3;
  EXPECT_THROW(sddmm<float>(bad_index, a, x, false, out), logic_error);
  block bad_indptr = b;
  bad_indptr.indptr = {0, 3, 2};
  EXPECT_THROW(sddmm<float>(bad_indptr, a, x, false, out), logic_error);
  block bad_weights = b;
  bad_weights.weights.pop_back();
  EXPECT_THROW(sddmm<float>(bad_weights, a, x, true, out), logic_error);
  try {
    sddmm<float>(b, a, x, false, short_out);
    FAIL() << "no exception";
  } catch (const logic_error& e) {
    EXPECT_NE(std::string(e.what()).find("out"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace coopgnn
