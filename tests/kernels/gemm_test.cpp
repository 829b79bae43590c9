// Host GEMM: the reference loops against a naive triple loop on integer-valued data (exact), plus
// shape errors; the BLAS path (gemm_host, what the exec_context entry runs) against the naive
// loop (exact on integer data, with padded leading dimensions), against the reference on random
// data (a stated rounding bound), and bitwise across thread counts and row-range calls.
#include "kernels/dense/gemm.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
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
            gemm_reference<T>(op_a, op_b, T{2}, a, b, T{3}, c);
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

TEST(gemm, reference_matches_naive_float) { check_all_shapes<float>(); }
TEST(gemm, reference_matches_naive_double) { check_all_shapes<double>(); }

TEST(gemm, beta_zero_overwrites_nan) {
  auto const a = int_matrix<double>(3, 4, 5);
  auto const b = int_matrix<double>(4, 2, 6);
  matrix<double> c(3, 2, std::numeric_limits<double>::quiet_NaN());
  gemm_reference<double>(op::none, op::none, 1.0, a, b, 0.0, c);
  auto const expected = naive<double>(op::none, op::none, 1.0, a, b, 0.0, matrix<double>(3, 2));
  EXPECT_EQ(c.values(), expected.values());
}

TEST(gemm, k_zero_only_scales_c) {
  matrix<float> a(2, 0);
  matrix<float> b(0, 3);
  matrix<float> c(2, 3, 2.0f);
  gemm_reference<float>(op::none, op::none, 1.0f, a, b, 0.5f, c);
  for (float v : c.values()) EXPECT_EQ(v, 1.0f);
}

TEST(gemm, row_range_through_pointers_equals_full_call) {
  // Row i of C depends only on row i of A: computing rows [5, 20) by offsetting gives the same
  // bits.
  auto const a = int_matrix<float>(33, 17, 7);
  auto const b = int_matrix<float>(17, 31, 8);
  matrix<float> full(33, 31);
  gemm_reference<float>(op::none, op::none, 0.25f, a, b, 0.0f, full);
  matrix<float> part(33, 31);
  gemm_reference<float>(op::none, op::none, 15, 31, 17, 0.25f, a.row(5), 17, b.data(), 31, 0.0f,
                        part.row(5), 31);
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
    gemm_reference<float>(op::none, op::none, 1.0f, a, b, 0.0f, c);
    FAIL() << "expected logic_error";
  } catch (const logic_error& e) {
    std::string const msg = e.what();
    EXPECT_NE(msg.find("[2, 3]"), std::string::npos) << msg;
    EXPECT_NE(msg.find("[4, 5]"), std::string::npos) << msg;
  }
  matrix<float> b_ok(3, 5);
  matrix<float> c_bad(2, 4);
  EXPECT_THROW(gemm_reference<float>(op::none, op::none, 1.0f, a, b_ok, 0.0f, c_bad), logic_error);
  // op::transpose changes which dimension must agree.
  EXPECT_THROW(gemm_reference<float>(op::transpose, op::none, 1.0f, a, b_ok, 0.0f, c), logic_error);
}

TEST(gemm, rejects_aliasing_and_bad_leading_dimensions) {
  matrix<double> a(4, 4, 1.0);
  EXPECT_THROW(gemm_reference<double>(op::none, op::none, 1.0, a, a, 0.0, a), logic_error);
  matrix<double> c(4, 4);
  EXPECT_THROW(gemm_reference<double>(op::none, op::none, 4, 4, 4, 1.0, a.data(), 3, a.data(), 4,
                                      0.0, c.data(), 4),
               logic_error);
  EXPECT_THROW(gemm_reference<double>(op::none, op::none, -1, 4, 4, 1.0, a.data(), 4, a.data(), 4,
                                      0.0, c.data(), 4),
               logic_error);
}

/// A [rows, cols] operand stored with row stride ld >= cols; padding holds NaN so that reading it
/// shows.
template <typename T>
std::vector<T> padded(const matrix<T>& m, std::int64_t ld) {
  std::vector<T> p(static_cast<std::size_t>(std::max<std::int64_t>(m.rows() * ld, 1)),
                   std::numeric_limits<T>::quiet_NaN());
  for (std::int64_t i = 0; i < m.rows(); ++i) {
    for (std::int64_t j = 0; j < m.cols(); ++j) p[static_cast<std::size_t>(i * ld + j)] = m(i, j);
  }
  return p;
}

template <typename T>
matrix<T> random_matrix(std::int64_t rows, std::int64_t cols, std::uint32_t seed) {
  std::mt19937 g(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  matrix<T> m(rows, cols);
  for (auto& v : m.values()) v = static_cast<T>(u(g));
  return m;
}

/// gemm_host (BLAS) on integer data with leading dimensions larger than the columns, every op
/// combination, m/n/k in {0, 1, 2, 7, 33, 250} (250 crosses BLIS's small-matrix threshold), beta
/// 0, 1 and 3, thread counts 1..3: exact against the naive loop; the padding of C is untouched.
template <typename T>
void check_host_exact() {
  std::vector<std::int64_t> const sizes = {0, 1, 2, 7, 33, 250};
  int checked = 0;
  for (op op_a : {op::none, op::transpose}) {
    for (op op_b : {op::none, op::transpose}) {
      for (std::int64_t m : sizes) {
        for (std::int64_t n : sizes) {
          for (std::int64_t k : sizes) {
            if (m * n * k > 33 * 33 * 250) continue;  // keep the naive loop cheap
            SCOPED_TRACE(testing::Message()
                         << "op_a=" << static_cast<int>(op_a) << " op_b=" << static_cast<int>(op_b)
                         << " m=" << m << " n=" << n << " k=" << k);
            auto const a = op_a == op::none ? int_matrix<T>(m, k, 11) : int_matrix<T>(k, m, 11);
            auto const b = op_b == op::none ? int_matrix<T>(k, n, 12) : int_matrix<T>(n, k, 12);
            for (T beta : {T{0}, T{1}, T{3}}) {
              auto const c0 = int_matrix<T>(m, n, 13);
              auto const expected = naive<T>(op_a, op_b, T{2}, a, b, beta, c0);
              std::int64_t const lda = a.cols() + 3, ldb = b.cols() + 1, ldc = n + 2;
              auto const pa = padded(a, lda);
              auto const pb = padded(b, ldb);
              for (int threads = 1; threads <= 3; ++threads) {
                auto pc = padded(c0, ldc);
                if (beta == T{0}) {  // NaN in C must not propagate when beta == 0
                  for (std::int64_t i = 0; i < m; ++i)
                    pc[static_cast<std::size_t>(i * ldc)] = std::numeric_limits<T>::quiet_NaN();
                }
                gemm_host<T>(threads, op_a, op_b, m, n, k, T{2}, pa.data(), lda, pb.data(), ldb,
                             beta, pc.data(), ldc);
                for (std::int64_t i = 0; i < m; ++i) {
                  for (std::int64_t j = 0; j < n; ++j) {
                    ASSERT_EQ(pc[static_cast<std::size_t>(i * ldc + j)], expected(i, j))
                        << "C(" << i << ", " << j << ") threads=" << threads << " beta=" << beta;
                  }
                  for (std::int64_t j = n; j < ldc && i + 1 < m; ++j) {
                    ASSERT_TRUE(std::isnan(pc[static_cast<std::size_t>(i * ldc + j)]))
                        << "padding of C written";
                  }
                }
                ++checked;
              }
            }
          }
        }
      }
    }
  }
  EXPECT_GT(checked, 1000);
}

TEST(gemm, host_path_matches_naive_exactly_float) { check_host_exact<float>(); }
TEST(gemm, host_path_matches_naive_exactly_double) { check_host_exact<double>(); }

/// Random data: |host - reference| <= 2 k eps (|alpha| sum_p |a_ip b_pj| + |beta c_ij|) per
/// element, the classic forward error bound of a k-term dot product doubled (the two sides round
/// differently: FMA and k blocking in BLIS, sequential sums in the reference).
template <typename T>
void check_host_vs_reference(op op_a, op op_b, std::int64_t m, std::int64_t n, std::int64_t k) {
  SCOPED_TRACE(testing::Message() << "op_a=" << static_cast<int>(op_a)
                                  << " op_b=" << static_cast<int>(op_b) << " m=" << m << " n=" << n
                                  << " k=" << k);
  auto const a = op_a == op::none ? random_matrix<T>(m, k, 1) : random_matrix<T>(k, m, 1);
  auto const b = op_b == op::none ? random_matrix<T>(k, n, 2) : random_matrix<T>(n, k, 2);
  auto const c0 = random_matrix<T>(m, n, 3);
  T const alpha = T{0.75}, beta = T{0.5};
  auto ref = c0;
  gemm_reference<T>(op_a, op_b, alpha, a, b, beta, ref);
  auto host = c0;
  gemm_host<T>(2, op_a, op_b, m, n, k, alpha, a.data(), a.cols(), b.data(), b.cols(), beta,
               host.data(), n);
  double const eps = std::numeric_limits<T>::epsilon();
  for (std::int64_t i = 0; i < m; ++i) {
    for (std::int64_t j = 0; j < n; ++j) {
      double mag = std::abs(static_cast<double>(beta) * c0(i, j));
      for (std::int64_t p = 0; p < k; ++p) {
        mag += std::abs(static_cast<double>(alpha) * at(a, op_a, i, p) * at(b, op_b, p, j));
      }
      ASSERT_LE(std::abs(static_cast<double>(host(i, j)) - ref(i, j)), 2.0 * k * eps * mag)
          << "C(" << i << ", " << j << ")";
    }
  }
}

TEST(gemm, host_path_matches_reference_on_random_data) {
  for (op op_a : {op::none, op::transpose}) {
    for (op op_b : {op::none, op::transpose}) {
      check_host_vs_reference<float>(op_a, op_b, 77, 65, 300);
      check_host_vs_reference<float>(op_a, op_b, 300, 210, 260);
      check_host_vs_reference<double>(op_a, op_b, 77, 65, 300);
      check_host_vs_reference<float>(op_a, op_b, 64, 64, 5000);
    }
  }
}

/// Bitwise: the BLAS path gives the same bits for 1, 2 and 3 threads, and a row range of the kind
/// its split makes (a multiple of 96 rows from the start, at least 192 rows) computed alone (by
/// offsetting A's rows, or columns for op::transpose, and C's rows) equals those rows of the full
/// call. Shapes: a layer ([1000, 64] x [64, 64]), a weight gradient (X^T dY with
/// k = 20000), and [500, 256] x [256, 256], whose full shape takes BLIS's packed path while its
/// row ranges alone would be under the small-matrix threshold.
TEST(gemm, host_path_is_bitwise_independent_of_threads_and_row_ranges) {
  struct shape {
    op op_a, op_b;
    std::int64_t m, n, k;
  };
  std::vector<shape> const shapes = {{op::none, op::none, 1000, 64, 64},
                                     {op::transpose, op::none, 64, 64, 20000},
                                     {op::none, op::none, 500, 256, 256},
                                     {op::none, op::transpose, 500, 256, 256},
                                     {op::transpose, op::transpose, 301, 203, 202},
                                     {op::none, op::transpose, 1537, 16, 1433}};
  for (auto const& s : shapes) {
    SCOPED_TRACE(testing::Message()
                 << "op_a=" << static_cast<int>(s.op_a) << " op_b=" << static_cast<int>(s.op_b)
                 << " m=" << s.m << " n=" << s.n << " k=" << s.k);
    auto const a =
        s.op_a == op::none ? random_matrix<float>(s.m, s.k, 4) : random_matrix<float>(s.k, s.m, 4);
    auto const b =
        s.op_b == op::none ? random_matrix<float>(s.k, s.n, 5) : random_matrix<float>(s.n, s.k, 5);
    auto const c0 = random_matrix<float>(s.m, s.n, 6);
    auto run = [&](int threads) {
      auto c = c0;
      gemm_host<float>(threads, s.op_a, s.op_b, s.m, s.n, s.k, 1.5f, a.data(), a.cols(), b.data(),
                       b.cols(), 1.0f, c.data(), s.n);
      return c;
    };
    auto const one = run(1);
    EXPECT_EQ(run(2).values(), one.values()) << "2 threads";
    EXPECT_EQ(run(3).values(), one.values()) << "3 threads";
    // Ranges the split can produce: starting at a multiple of 96 rows, at least 96 rows long
    // (gemm.hpp: arbitrary ranges are not bitwise the full call under BLIS).
    // Both at least 201 rows long where the full call is, so BLIS takes the same path for them.
    std::vector<std::pair<std::int64_t, std::int64_t>> ranges = {
        {0, std::min<std::int64_t>(s.m, 288)}};
    if (s.m > 384) ranges.emplace_back(96, s.m);
    for (auto [i0, i1] : ranges) {
      auto c = c0;
      const float* a0 = s.op_a == op::none ? a.data() + i0 * a.cols() : a.data() + i0;
      gemm_host<float>(1, s.op_a, s.op_b, i1 - i0, s.n, s.k, 1.5f, a0, a.cols(), b.data(), b.cols(),
                       1.0f, c.row(i0), s.n);
      for (std::int64_t i = i0; i < i1; ++i) {
        for (std::int64_t j = 0; j < s.n; ++j) {
          ASSERT_EQ(c(i, j), one(i, j))
              << "row range [" << i0 << ", " << i1 << ") C(" << i << ", " << j << ")";
        }
      }
    }
  }
}

}  // namespace
}  // namespace coopgnn
