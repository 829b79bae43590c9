// Host GEMM against a naive triple loop on integer-valued data (exact), plus shape errors.
#include "kernels/dense/gemm.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "runtime/core/error.hpp"

namespace coopgnn {
namespace {

/// Integer values in [-3, 3] from (salt, i, j): exact in float and double for these sizes.
template <typename T>
matrix<T> int_matrix(std::int64_t rows, std::int64_t cols, std::uint64_t salt) {
  matrix<T> m(rows, cols);
  for (std::int64_t i = 0; i < rows; ++i) {
    for (std::int64_t j = 0; j < cols; ++j) {
      std::uint64_t h = salt * 1000003u + static_cast<std::uint64_t>(i) * 7919u +
                        static_cast<std::uint64_t>(j) * 104729u;
      h ^= h >> 13;
      h *= 0x9E3779B97F4A7C15ULL;
      h ^= h >> 29;
      m(i, j) = static_cast<T>(static_cast<std::int64_t>(h % 7) - 3);
    }
  }
  return m;
}

template <typename T>
T at(const matrix<T>& m, op o, std::int64_t i, std::int64_t j) {
  return o == op::none ? m(i, j) : m(j, i);
}

template <typename T>
matrix<T> naive(op op_a, op op_b, T alpha, const matrix<T>& a, const matrix<T>& b, T beta,
                const matrix<T>& c) {
  matrix<T> r(c.rows(), c.cols());
  std::int64_t const k = op_a == op::none ? a.cols() : a.rows();
  for (std::int64_t i = 0; i < c.rows(); ++i) {
    for (std::int64_t j = 0; j < c.cols(); ++j) {
      T acc = 0;
      for (std::int64_t p = 0; p < k; ++p) acc += at(a, op_a, i, p) * at(b, op_b, p, j);
      r(i, j) = alpha * acc + (beta == T{0} ? T{0} : beta * c(i, j));
    }
  }
  return r;
}

template <typename T>
void check_all_shapes() {
  std::vector<std::int64_t> const sizes = {0, 1, 31, 32, 33};
  int nonzero_cases = 0;
  for (op op_a : {op::none, op::transpose}) {
    for (op op_b : {op::none, op::transpose}) {
      for (std::int64_t m : sizes) {
        for (std::int64_t n : sizes) {
          for (std::int64_t k : sizes) {
            SCOPED_TRACE(testing::Message()
                         << "op_a=" << static_cast<int>(op_a) << " op_b=" << static_cast<int>(op_b)
                         << " m=" << m << " n=" << n << " k=" << k);
            auto const a = op_a == op::none ? int_matrix<T>(m, k, 1) : int_matrix<T>(k, m, 1);
            auto const b = op_b == op::none ? int_matrix<T>(k, n, 2) : int_matrix<T>(n, k, 2);
            auto c = int_matrix<T>(m, n, 3);
            auto const expected = naive<T>(op_a, op_b, T{2}, a, b, T{3}, c);
            gemm<T>(op_a, op_b, T{2}, a, b, T{3}, c);
            ASSERT_EQ(c.values(), expected.values());
            bool any = false;
            for (T v : expected.values()) any = any || v != T{0};
            if (any) ++nonzero_cases;
          }
        }
      }
    }
  }
  EXPECT_GT(nonzero_cases, 300);  // the comparison is not vacuous
}

TEST(gemm, matches_naive_float) { check_all_shapes<float>(); }
TEST(gemm, matches_naive_double) { check_all_shapes<double>(); }

TEST(gemm, beta_zero_overwrites_nan) {
  auto const a = int_matrix<double>(3, 4, 5);
  auto const b = int_matrix<double>(4, 2, 6);
  matrix<double> c(3, 2, std::numeric_limits<double>::quiet_NaN());
  gemm<double>(op::none, op::none, 1.0, a, b, 0.0, c);
  auto const expected = naive<double>(op::none, op::none, 1.0, a, b, 0.0, matrix<double>(3, 2));
  EXPECT_EQ(c.values(), expected.values());
}

TEST(gemm, k_zero_only_scales_c) {
  matrix<float> a(2, 0);
  matrix<float> b(0, 3);
  matrix<float> c(2, 3, 2.0f);
  gemm<float>(op::none, op::none, 1.0f, a, b, 0.5f, c);
  for (float v : c.values()) EXPECT_EQ(v, 1.0f);
}

TEST(gemm, row_range_through_pointers_equals_full_call) {
  // Row i of C depends only on row i of A: computing rows [5, 20) by offsetting gives the same
  // bits.
  auto const a = int_matrix<float>(33, 17, 7);
  auto const b = int_matrix<float>(17, 31, 8);
  matrix<float> full(33, 31);
  gemm<float>(op::none, op::none, 0.25f, a, b, 0.0f, full);
  matrix<float> part(33, 31);
  gemm<float>(op::none, op::none, 15, 31, 17, 0.25f, a.row(5), 17, b.data(), 31, 0.0f, part.row(5),
              31);
  for (std::int64_t i = 5; i < 20; ++i) {
    for (std::int64_t j = 0; j < 31; ++j) EXPECT_EQ(part(i, j), full(i, j));
  }
  EXPECT_EQ(part(4, 0), 0.0f);  // rows outside the range untouched
}

TEST(gemm, shape_mismatch_names_both_shapes) {
  matrix<float> a(2, 3);
  matrix<float> b(4, 5);
  matrix<float> c(2, 5);
  try {
    gemm<float>(op::none, op::none, 1.0f, a, b, 0.0f, c);
    FAIL() << "expected logic_error";
  } catch (const logic_error& e) {
    std::string const msg = e.what();
    EXPECT_NE(msg.find("[2, 3]"), std::string::npos) << msg;
    EXPECT_NE(msg.find("[4, 5]"), std::string::npos) << msg;
  }
  matrix<float> b_ok(3, 5);
  matrix<float> c_bad(2, 4);
  EXPECT_THROW(gemm<float>(op::none, op::none, 1.0f, a, b_ok, 0.0f, c_bad), logic_error);
  // op::transpose changes which dimension must agree.
  EXPECT_THROW(gemm<float>(op::transpose, op::none, 1.0f, a, b_ok, 0.0f, c), logic_error);
}

TEST(gemm, rejects_aliasing_and_bad_leading_dimensions) {
  matrix<double> a(4, 4, 1.0);
  EXPECT_THROW(gemm<double>(op::none, op::none, 1.0, a, a, 0.0, a), logic_error);
  matrix<double> c(4, 4);
  EXPECT_THROW(
      gemm<double>(op::none, op::none, 4, 4, 4, 1.0, a.data(), 3, a.data(), 4, 0.0, c.data(), 4),
      logic_error);
  EXPECT_THROW(
      gemm<double>(op::none, op::none, -1, 4, 4, 1.0, a.data(), 4, a.data(), 4, 0.0, c.data(), 4),
      logic_error);
}

}  // namespace
}  // namespace coopgnn
