#include "kernels/dense/gemm.hpp"

#include <algorithm>
#include <functional>
#include <type_traits>
#include <vector>

#include "kernels/dispatch.hpp"
#include "runtime/core/error.hpp"
#include "runtime/core/parallel.hpp"

#ifdef COOPGNN_WITH_CUDA
#include "kernels/dense/gemm_cuda.hpp"
#endif
#ifdef COOPGNN_WITH_BLIS
#include <blis.h>
#endif

namespace coopgnn {
namespace detail {
namespace {

/// Rows of B kept hot while a block of C rows streams over them: about 256 KiB of B per pass.
template <typename T>
std::int64_t k_block(std::int64_t n) {
  constexpr std::int64_t tile_bytes = 256 * 1024;
  return std::max<std::int64_t>(
      8, tile_bytes / (std::max<std::int64_t>(n, 1) * static_cast<std::int64_t>(sizeof(T))));
}

/// True when [p, p + len) and [q, q + len_q) overlap (total order on unrelated pointers).
template <typename T>
bool overlaps(const T* p, std::int64_t len_p, const T* q, std::int64_t len_q) {
  if (len_p <= 0 || len_q <= 0) return false;
  std::less<const T*> lt;
  return lt(p, q + len_q) && lt(q, p + len_p);
}

/// Elements spanned by a row-major operand of `rows` rows, `cols` columns and stride `ld`.
std::int64_t extent(std::int64_t rows, std::int64_t cols, std::int64_t ld) {
  return rows == 0 || cols == 0 ? 0 : (rows - 1) * ld + cols;
}

/// c[0, n) += s * b[0, n): the vectorised inner loop.
template <typename T>
inline void axpy_row(std::int64_t n, T s, const T* __restrict b, T* __restrict c) {
  for (std::int64_t j = 0; j < n; ++j) c[j] += s * b[j];
}

template <typename T>
void gemm_impl(op op_a, op op_b, std::int64_t m, std::int64_t n, std::int64_t k, T alpha,
               const T* a, std::int64_t lda, const T* b, std::int64_t ldb, T beta, T* c,
               std::int64_t ldc) {
  if (m == 0 || n == 0) return;
  for (std::int64_t i = 0; i < m; ++i) {
    T* __restrict crow = c + i * ldc;
    if (beta == T{0}) {
      std::fill(crow, crow + n, T{0});
    } else if (beta != T{1}) {
      for (std::int64_t j = 0; j < n; ++j) crow[j] *= beta;
    }
  }
  if (k == 0 || alpha == T{0}) return;

  // op(B) as a row-major [k, n] operand with contiguous rows.
  std::vector<T> packed;
  const T* bk = b;
  std::int64_t ldbk = ldb;
  if (op_b == op::transpose) {
    packed.resize(static_cast<std::size_t>(k * n));
    for (std::int64_t j = 0; j < n; ++j) {
      const T* brow = b + j * ldb;
      for (std::int64_t p = 0; p < k; ++p) packed[static_cast<std::size_t>(p * n + j)] = brow[p];
    }
    bk = packed.data();
    ldbk = n;
  }

  if (op_a == op::none) {
    // i-k-j, blocked over k so that a tile of B stays in cache while the rows of C pass over it.
    std::int64_t const kc = k_block<T>(n);
    for (std::int64_t p0 = 0; p0 < k; p0 += kc) {
      std::int64_t const p1 = std::min(k, p0 + kc);
      for (std::int64_t i = 0; i < m; ++i) {
        const T* arow = a + i * lda;
        T* crow = c + i * ldc;
        for (std::int64_t p = p0; p < p1; ++p) axpy_row(n, alpha * arow[p], bk + p * ldbk, crow);
      }
    }
  } else {
    // A stored [k, m]: k-i-j reads A row by row; each C[i, j] still sums in ascending p.
    for (std::int64_t p = 0; p < k; ++p) {
      const T* arow = a + p * lda;
      const T* brow = bk + p * ldbk;
      for (std::int64_t i = 0; i < m; ++i) axpy_row(n, alpha * arow[i], brow, c + i * ldc);
    }
  }
}

}  // namespace
}  // namespace detail

namespace detail {
namespace {

/// The argument checks shared by gemm_reference and the BLAS path (see gemm_reference's @throws).
template <typename T>
void check_gemm_args(op op_a, op op_b, std::int64_t m, std::int64_t n, std::int64_t k, T alpha,
                     const T* a, std::int64_t lda, const T* b, std::int64_t ldb, T* c,
                     std::int64_t ldc) {
  COOPGNN_EXPECTS(m >= 0 && n >= 0 && k >= 0, "gemm: negative dimension m={}, n={}, k={}", m, n, k);
  std::int64_t const a_rows = op_a == op::none ? m : k;
  std::int64_t const a_cols = op_a == op::none ? k : m;
  std::int64_t const b_rows = op_b == op::none ? k : n;
  std::int64_t const b_cols = op_b == op::none ? n : k;
  COOPGNN_EXPECTS(lda >= a_cols && lda >= 0, "gemm: lda={} is smaller than A's {} stored columns",
                  lda, a_cols);
  COOPGNN_EXPECTS(ldb >= b_cols && ldb >= 0, "gemm: ldb={} is smaller than B's {} stored columns",
                  ldb, b_cols);
  COOPGNN_EXPECTS(ldc >= n, "gemm: ldc={} is smaller than C's {} columns", ldc, n);
  if (m == 0 || n == 0) return;
  bool const uses_ab = k > 0 && alpha != T{0};
  COOPGNN_EXPECTS(c != nullptr, "gemm: C is null for a [{}, {}] result", m, n);
  if (uses_ab) {
    COOPGNN_EXPECTS(a != nullptr, "gemm: A is null for a [{}, {}] operand", a_rows, a_cols);
    COOPGNN_EXPECTS(b != nullptr, "gemm: B is null for a [{}, {}] operand", b_rows, b_cols);
    std::int64_t const c_len = detail::extent(m, n, ldc);
    COOPGNN_EXPECTS(!detail::overlaps(c, c_len, a, detail::extent(a_rows, a_cols, lda)),
                    "gemm: C overlaps A (in-place products are not supported)");
    COOPGNN_EXPECTS(!detail::overlaps(c, c_len, b, detail::extent(b_rows, b_cols, ldb)),
                    "gemm: C overlaps B (in-place products are not supported)");
  }
}

#ifdef COOPGNN_WITH_BLIS
/// Rows per unit of the row split of the BLIS path. BLIS's packed kernels tile C in MR x NR
/// micro-tiles (6 x 16 or 16 x 6 for float on haswell, 6 x 8 / 8 x 6 for double), and a row's
/// result depends on its position within a micro-tile: 96 rows is a multiple of every MR and NR,
/// so a range of whole granules computes each of its rows exactly as the full call.
inline constexpr std::int64_t blis_row_granule = 96;

/// One single-threaded BLIS call on row-major operands (row stride ld, column stride 1): no
/// thread of BLIS's own (all five loops one way, so the reduction over k is never split and
/// nothing runs outside the caller's budget), and never BLIS 0.9's unpacked "sup" kernels: they
/// read whole MR-row micro-panels of A past its last row when m is not a multiple of MR (an ASan
/// build faulted in them on a 7 x 250 A), while the packed path copies exactly m rows.
template <typename T>
void blis_gemm(op op_a, op op_b, std::int64_t m, std::int64_t n, std::int64_t k, T alpha,
               const T* a, std::int64_t lda, const T* b, std::int64_t ldb, T beta, T* c,
               std::int64_t ldc) {
  rntm_t rntm = BLIS_RNTM_INITIALIZER;
  bli_rntm_set_ways(1, 1, 1, 1, 1, &rntm);
  bli_rntm_set_l3_sup(false, &rntm);
  trans_t const ta = op_a == op::none ? BLIS_NO_TRANSPOSE : BLIS_TRANSPOSE;
  trans_t const tb = op_b == op::none ? BLIS_NO_TRANSPOSE : BLIS_TRANSPOSE;
  // BLIS's typed API takes non-const pointers; it does not write A or B.
  if constexpr (std::is_same_v<T, float>) {
    bli_sgemm_ex(ta, tb, m, n, k, &alpha, const_cast<T*>(a), lda, 1, const_cast<T*>(b), ldb, 1,
                 &beta, c, ldc, 1, nullptr, &rntm);
  } else {
    bli_dgemm_ex(ta, tb, m, n, k, &alpha, const_cast<T*>(a), lda, 1, const_cast<T*>(b), ldb, 1,
                 &beta, c, ldc, 1, nullptr, &rntm);
  }
}
#endif
}  // namespace
}  // namespace detail

template <typename T>
void gemm_reference(op op_a, op op_b, std::int64_t m, std::int64_t n, std::int64_t k, T alpha,
                    const T* a, std::int64_t lda, const T* b, std::int64_t ldb, T beta, T* c,
                    std::int64_t ldc) {
  detail::check_gemm_args(op_a, op_b, m, n, k, alpha, a, lda, b, ldb, c, ldc);
  if (m == 0 || n == 0) return;
  detail::gemm_impl(op_a, op_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

template <typename T>
void gemm_reference(op op_a, op op_b, T alpha, const matrix<T>& a, const matrix<T>& b, T beta,
                    matrix<T>& c) {
  std::int64_t const m = op_a == op::none ? a.rows() : a.cols();
  std::int64_t const k = op_a == op::none ? a.cols() : a.rows();
  std::int64_t const kb = op_b == op::none ? b.rows() : b.cols();
  std::int64_t const n = op_b == op::none ? b.cols() : b.rows();
  COOPGNN_EXPECTS(k == kb, "gemm: op(A) is [{}, {}] but op(B) is [{}, {}]: inner dimensions differ",
                  m, k, kb, n);
  COOPGNN_EXPECTS(c.rows() == m && c.cols() == n,
                  "gemm: C is [{}, {}] but op(A) * op(B) is [{}, {}]", c.rows(), c.cols(), m, n);
  COOPGNN_EXPECTS(&c != &a && &c != &b, "gemm: C is the same matrix as A or B");
  gemm_reference(op_a, op_b, m, n, k, alpha, a.data(), a.cols(), b.data(), b.cols(), beta, c.data(),
                 c.cols());
}

template <typename T>
void gemm_host(int threads, op op_a, op op_b, std::int64_t m, std::int64_t n, std::int64_t k,
               T alpha, const T* a, std::int64_t lda, const T* b, std::int64_t ldb, T beta, T* c,
               std::int64_t ldc) {
  COOPGNN_EXPECTS(m >= 0 && n >= 0 && k >= 0, "gemm: negative dimension m={}, n={}, k={}", m, n, k);
  if (m == 0 || n == 0) return;
  detail::check_gemm_args(op_a, op_b, m, n, k, alpha, a, lda, b, ldb, c, ldc);
  if (k == 0 || alpha == T{0}) {  // C = beta C, as the reference (beta == 0 writes zeros)
    parallel_rows(
        m, threads,
        [&](std::int64_t i0, std::int64_t i1) {
          for (std::int64_t i = i0; i < i1; ++i) {
            T* crow = c + i * ldc;
            if (beta == T{0}) {
              std::fill(crow, crow + n, T{0});
            } else if (beta != T{1}) {
              for (std::int64_t j = 0; j < n; ++j) crow[j] *= beta;
            }
          }
        },
        rows_for_work(n));
    return;
  }
#ifdef COOPGNN_WITH_BLIS
  // Row ranges are whole multiples of blis_row_granule rows (the last takes the remainder), so
  // that each range tiles its rows exactly as the full call does (see blis_row_granule).
  std::int64_t const granules = (m + detail::blis_row_granule - 1) / detail::blis_row_granule;
  std::int64_t const min_granules = std::max<std::int64_t>(
      2, (std::int64_t{1} << 21) / (2 * n * k * detail::blis_row_granule) + 1);
  parallel_rows(
      granules, threads,
      [&](std::int64_t g0, std::int64_t g1) {
        std::int64_t const i0 = g0 * detail::blis_row_granule;
        std::int64_t const i1 = std::min(m, g1 * detail::blis_row_granule);
        if (i0 >= i1) return;
        const T* a0 = op_a == op::none ? a + i0 * lda : a + i0;
        detail::blis_gemm<T>(op_a, op_b, i1 - i0, n, k, alpha, a0, lda, b, ldb, beta, c + i0 * ldc,
                             ldc);
      },
      min_granules);
#else
  // Rows [i0, i1) of C read rows [i0, i1) of op(A): an offset into A's rows (op::none) or
  // columns (op::transpose); the reference gives the same bits for any split.
  parallel_rows(
      m, threads,
      [&](std::int64_t i0, std::int64_t i1) {
        if (i0 == i1) return;
        const T* a0 = op_a == op::none ? a + i0 * lda : a + i0;
        gemm_reference<T>(op_a, op_b, i1 - i0, n, k, alpha, a0, lda, b, ldb, beta, c + i0 * ldc,
                          ldc);
      },
      rows_for_work(n * k));
#endif
}

template <typename T>
void gemm(const exec_context& ctx, op op_a, op op_b, T alpha, tensor_view<const T> a,
          tensor_view<const T> b, T beta, tensor_view<T> c) {
  detail::expect_spaces(ctx, "gemm", {{"A", a.space}, {"B", b.space}, {"C", c.space}});
  std::int64_t const m = op_a == op::none ? a.rows : a.cols;
  std::int64_t const k = op_a == op::none ? a.cols : a.rows;
  std::int64_t const kb = op_b == op::none ? b.rows : b.cols;
  std::int64_t const n = op_b == op::none ? b.cols : b.rows;
  COOPGNN_EXPECTS(k == kb, "gemm: op(A) is [{}, {}] but op(B) is [{}, {}]: inner dimensions differ",
                  m, k, kb, n);
  COOPGNN_EXPECTS(c.rows == m && c.cols == n, "gemm: C is [{}, {}] but op(A) * op(B) is [{}, {}]",
                  c.rows, c.cols, m, n);
  auto const on_cuda = COOPGNN_CUDA_BRANCH([&] {
    detail::expect_cuda_type<T>("gemm");
    if (m == 0 || n == 0) return;  // as the host: nothing to write (cuBLAS wants ld >= 1)
    if constexpr (std::is_same_v<T, float>) {
      cuda::gemm(ctx.cuda()->cublas(), op_a, op_b, m, n, k, alpha, a.data,
                 std::max<std::int64_t>(a.cols, 1), b.data, std::max<std::int64_t>(b.cols, 1), beta,
                 c.data, c.cols, ctx.cuda()->compute());
    }
  });
  detail::dispatch(ctx, "gemm", on_cuda, [&] {
    gemm_host<T>(ctx.threads(), op_a, op_b, m, n, k, alpha, a.data,
                 std::max<std::int64_t>(a.cols, 1), b.data, std::max<std::int64_t>(b.cols, 1), beta,
                 c.data, c.cols);
  });
}

template void gemm<float>(const exec_context&, op, op, float, tensor_view<const float>,
                          tensor_view<const float>, float, tensor_view<float>);
template void gemm<double>(const exec_context&, op, op, double, tensor_view<const double>,
                           tensor_view<const double>, double, tensor_view<double>);
template void gemm_host<float>(int, op, op, std::int64_t, std::int64_t, std::int64_t, float,
                               const float*, std::int64_t, const float*, std::int64_t, float,
                               float*, std::int64_t);
template void gemm_host<double>(int, op, op, std::int64_t, std::int64_t, std::int64_t, double,
                                const double*, std::int64_t, const double*, std::int64_t, double,
                                double*, std::int64_t);
template void gemm_reference<float>(op, op, std::int64_t, std::int64_t, std::int64_t, float,
                                    const float*, std::int64_t, const float*, std::int64_t, float,
                                    float*, std::int64_t);
template void gemm_reference<double>(op, op, std::int64_t, std::int64_t, std::int64_t, double,
                                     const double*, std::int64_t, const double*, std::int64_t,
                                     double, double*, std::int64_t);
template void gemm_reference<float>(op, op, float, const matrix<float>&, const matrix<float>&,
                                    float, matrix<float>&);
template void gemm_reference<double>(op, op, double, const matrix<double>&, const matrix<double>&,
                                     double, matrix<double>&);

}  // namespace coopgnn
