// Host SpMM over sampled blocks against naive loops on integer-valued data (exact), plus errors.
#include "kernels/sparse/spmm.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <span>
#include <vector>

#include "runtime/core/error.hpp"

namespace coopgnn {
namespace {

struct spmm_usecase {
  std::int64_t num_dst;
  std::int64_t extra_src;  // sources that are not destinations
  std::int64_t d;
};

/// A block with integer weights in [-2, 3]: destination 0 has no edges, the last destination
/// reads every source (a hub), the rest 0..5 random edges (duplicates allowed: the kernel must not
/// care).
block int_block(std::int64_t num_dst, std::int64_t extra_src, std::uint64_t seed) {
  std::mt19937_64 gen(seed);
  block b;
  b.num_dst = num_dst;
  std::int64_t const num_src = num_dst + extra_src;
  for (std::int64_t i = 0; i < num_src; ++i) b.src_ids.push_back(1000 + 3 * i);
  b.indptr.push_back(0);
  for (std::int64_t s = 0; s < num_dst; ++s) {
    std::int64_t deg = 0;
    if (s == num_dst - 1 && s > 0) {
      deg = num_src;
      for (std::int64_t t = 0; t < num_src; ++t) b.indices.push_back(t);
    } else if (s != 0) {
      deg = static_cast<std::int64_t>(gen() % 6);
      for (std::int64_t e = 0; e < deg; ++e) {
        b.indices.push_back(static_cast<std::int64_t>(gen() % static_cast<std::uint64_t>(num_src)));
      }
    }
    for (std::int64_t e = 0; e < deg; ++e) {
      b.weights.push_back(static_cast<float>(static_cast<int>(gen() % 6) - 2));
    }
    b.indptr.push_back(static_cast<eid_t>(b.indices.size()));
  }
  b.src_degree.assign(static_cast<std::size_t>(num_src), 1);
  return b;
}

template <typename T>
matrix<T> int_dense(std::int64_t rows, std::int64_t cols, std::uint64_t seed) {
  std::mt19937_64 gen(seed);
  matrix<T> m(rows, cols);
  for (T& v : m.values()) v = static_cast<T>(static_cast<int>(gen() % 9) - 4);
  return m;
}

template <typename T>
matrix<T> naive_forward(const block& b, const matrix<T>& x) {
  matrix<T> y(b.num_dst, x.cols());
  for (std::int64_t s = 0; s < b.num_dst; ++s) {
    for (std::int64_t j = 0; j < x.cols(); ++j) {
      T acc = 0;
      for (eid_t e = b.indptr[s]; e < b.indptr[s + 1]; ++e) {
        acc += static_cast<T>(b.weights[e]) * x(b.indices[e], j);
      }
      y(s, j) = acc;
    }
  }
  return y;
}

template <typename T>
matrix<T> naive_transpose(const block& b, const matrix<T>& g, matrix<T> x_grad) {
  for (std::int64_t s = 0; s < b.num_dst; ++s) {
    for (eid_t e = b.indptr[s]; e < b.indptr[s + 1]; ++e) {
      for (std::int64_t j = 0; j < g.cols(); ++j) {
        x_grad(b.indices[e], j) += static_cast<T>(b.weights[e]) * g(s, j);
      }
    }
  }
  return x_grad;
}

template <typename T>
bool any_nonzero(const matrix<T>& m) {
  for (T v : m.values()) {
    if (v != T{0}) return true;
  }
  return false;
}

template <typename T>
void check_usecase(const spmm_usecase& u, int& nonzero) {
  SCOPED_TRACE(testing::Message() << "num_dst=" << u.num_dst << " extra=" << u.extra_src
                                  << " d=" << u.d);
  block const b = int_block(u.num_dst, u.extra_src, 17 + u.num_dst * 100 + u.d);
  auto const x = int_dense<T>(b.num_src(), u.d, 5 + u.d);
  matrix<T> y(b.num_dst, u.d, T{99});  // overwritten, not accumulated
  spmm<T>(b, x, y);
  auto const y_ref = naive_forward(b, x);
  ASSERT_EQ(y.values(), y_ref.values());

  // Explicit-values overload with values as T.
  std::vector<T> vals(b.weights.begin(), b.weights.end());
  matrix<T> y2(b.num_dst, u.d);
  spmm<T>(b.indptr, b.indices, std::span<const T>(vals), x, y2);
  ASSERT_EQ(y2.values(), y_ref.values());

  auto const g = int_dense<T>(b.num_dst, u.d, 9 + u.d);
  auto x_grad = int_dense<T>(b.num_src(), u.d, 11);  // accumulated into
  auto const x_grad_ref = naive_transpose(b, g, x_grad);
  auto x_grad2 = x_grad;
  spmm_transpose_add<T>(b, g, x_grad);
  ASSERT_EQ(x_grad.values(), x_grad_ref.values());
  spmm_transpose_add<T>(b.indptr, b.indices, std::span<const T>(vals), g, x_grad2);
  ASSERT_EQ(x_grad2.values(), x_grad_ref.values());
  if (any_nonzero(y_ref)) ++nonzero;
}

template <typename T>
void check_all() {
  int nonzero = 0;
  for (std::int64_t num_dst : {0, 1, 31, 32, 33}) {
    for (std::int64_t extra : {0, 1, 33}) {
      for (std::int64_t d : {0, 1, 31, 32, 33}) check_usecase<T>({num_dst, extra, d}, nonzero);
    }
  }
  EXPECT_GT(nonzero, 20);
}

TEST(spmm, matches_naive_float) { check_all<float>(); }
TEST(spmm, matches_naive_double) { check_all<double>(); }

TEST(spmm, zero_degree_destination_gets_zero_row) {
  block const b = int_block(5, 3, 1);
  ASSERT_EQ(b.indptr[1] - b.indptr[0], 0);
  auto const x = int_dense<float>(b.num_src(), 4, 2);
  matrix<float> y(5, 4, 7.0f);
  spmm<float>(b, x, y);
  for (std::int64_t j = 0; j < 4; ++j) EXPECT_EQ(y(0, j), 0.0f);
}

TEST(spmm, row_ranges_compose_to_the_full_result) {
  block const b = int_block(33, 10, 3);
  auto const x = int_dense<double>(b.num_src(), 31, 4);
  matrix<double> full(b.num_dst, 31);
  spmm<double>(b, x, full);
  std::vector<double> vals(b.weights.begin(), b.weights.end());
  matrix<double> parts(b.num_dst, 31);
  for (auto [r0, r1] : {std::pair<std::int64_t, std::int64_t>{0, 7}, {7, 7}, {7, 20}, {20, 33}}) {
    spmm<double>(b.indptr, b.indices, std::span<const double>(vals), x, parts, r0, r1);
  }
  EXPECT_EQ(parts.values(), full.values());
  matrix<double> block_parts(b.num_dst, 31);
  spmm<double>(b, x, block_parts, 0, 16);
  spmm<double>(b, x, block_parts, 16, 33);
  EXPECT_EQ(block_parts.values(), full.values());
  EXPECT_THROW(spmm<double>(b, x, block_parts, 20, 34), logic_error);
  EXPECT_THROW(spmm<double>(b, x, block_parts, 5, 4), logic_error);
}

TEST(spmm, rejects_bad_blocks_and_shapes) {
  block b = int_block(4, 2, 5);
  auto const x = int_dense<float>(b.num_src(), 3, 6);
  matrix<float> y(4, 3);
  matrix<float> y_bad(3, 3);
  EXPECT_THROW(spmm<float>(b, x, y_bad), logic_error);
  auto const x_bad = int_dense<float>(b.num_src() - 1, 3, 6);
  EXPECT_THROW(spmm<float>(b, x_bad, y), logic_error);

  block out_of_range = b;
  out_of_range.indices.back() = b.num_src();
  EXPECT_THROW(spmm<float>(out_of_range, x, y), logic_error);
  matrix<float> xg(b.num_src(), 3);
  EXPECT_THROW(spmm_transpose_add<float>(out_of_range, y, xg), logic_error);

  block negative = b;
  negative.indices.back() = -1;
  EXPECT_THROW(spmm<float>(negative, x, y), logic_error);

  block decreasing = b;
  std::swap(decreasing.indptr[1], decreasing.indptr[3]);
  if (decreasing.indptr[1] != decreasing.indptr[3]) {
    EXPECT_THROW(spmm<float>(decreasing, x, y), logic_error);
  }

  block short_weights = b;
  short_weights.weights.pop_back();
  EXPECT_THROW(spmm<float>(short_weights, x, y), logic_error);

  block bad_end = b;
  bad_end.indptr.back() -= 1;
  EXPECT_THROW(spmm<float>(bad_end, x, y), logic_error);

  block bad_num_dst = b;
  bad_num_dst.num_dst = 3;
  EXPECT_THROW(spmm<float>(bad_num_dst, x, y), logic_error);
}

/// The exec_context SpMM entries on random float data (sums that round) over 1, 2 and 3 host
/// threads: bitwise the same. The transposed product (the backward) runs as a parallel gather
/// over the edges grouped by source when threads > 1 and as a sequential scatter with one
/// thread; both must add each x_grad row's terms in ascending edge order.
TEST(spmm, entries_are_bitwise_independent_of_the_thread_count) {
  std::mt19937 g(7);
  std::int64_t const num_dst = 1500, num_src = 4000, d = 16;
  std::vector<eid_t> indptr(1, 0);
  std::vector<std::int64_t> indices;
  std::uniform_int_distribution<std::int64_t> deg(0, 12), src(0, num_src - 1);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (std::int64_t s = 0; s < num_dst; ++s) {
    std::int64_t const k = deg(g);
    for (std::int64_t e = 0; e < k; ++e) indices.push_back(src(g) % (s % 3 == 0 ? 50 : num_src));
    indptr.push_back(static_cast<eid_t>(indices.size()));
  }
  std::vector<float> vals(indices.size());
  for (auto& v : vals) v = u(g);
  matrix<float> x(num_src, d), yg(num_dst, d), xg0(num_src, d);
  for (auto& v : x.values()) v = u(g);
  for (auto& v : yg.values()) v = u(g);
  for (auto& v : xg0.values()) v = u(g);
  csr_view const a{num_dst,       num_src,        static_cast<std::int64_t>(indices.size()),
                   indptr.data(), indices.data(), memory_space::host};
  auto run = [&](int threads) {
    exec_context const ctx(backend::host, 0, threads);
    matrix<float> y(num_dst, d);
    auto xg = xg0;
    spmm<float>(ctx, a, host_view(vals), host_view(x), host_view(y));
    spmm_transpose_add<float>(ctx, a, host_view(vals), host_view(yg), host_view(xg));
    return std::pair{y, xg};
  };
  auto const [y1, xg1] = run(1);
  for (int threads : {2, 3}) {
    auto const [y, xg] = run(threads);
    EXPECT_EQ(y.values(), y1.values()) << threads << " threads, forward";
    EXPECT_EQ(xg.values(), xg1.values()) << threads << " threads, transposed";
  }
  // Not vacuous: the one-thread backward equals a naive scatter in ascending edge order.
  auto naive = xg0;
  for (std::int64_t s = 0; s < num_dst; ++s) {
    for (eid_t e = indptr[s]; e < indptr[s + 1]; ++e) {
      for (std::int64_t j = 0; j < d; ++j) naive(indices[e], j) += vals[e] * yg(s, j);
    }
  }
  EXPECT_EQ(xg1.values(), naive.values());
}

}  // namespace
}  // namespace coopgnn
