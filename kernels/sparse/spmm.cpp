#include "kernels/sparse/spmm.hpp"

#include <algorithm>

#include "kernels/sparse/csr_check.hpp"
#include "runtime/core/error.hpp"

namespace coopgnn {
namespace detail {
namespace {

/// Checks the CSR structure (not the index values, which the kernels check as they read them).
template <typename V>
void check_csr(const char* fn, std::span<const eid_t> indptr, std::span<const std::int64_t> indices,
               std::span<const V> values) {
  COOPGNN_EXPECTS(values.size() == indices.size(), "{}: {} values for {} edge indices", fn,
                  values.size(), indices.size());
  check_indptr(fn, indptr, static_cast<std::int64_t>(indices.size()));
}

template <typename T, typename V>
void spmm_rows(const char* fn, std::span<const eid_t> indptr, std::span<const std::int64_t> indices,
               std::span<const V> values, const matrix<T>& x, matrix<T>& y, std::int64_t row_begin,
               std::int64_t row_end) {
  check_csr(fn, indptr, indices, values);
  std::int64_t const num_dst = static_cast<std::int64_t>(indptr.size()) - 1;
  COOPGNN_EXPECTS(y.rows() == num_dst && y.cols() == x.cols(),
                  "{}: y is [{}, {}] but indptr has {} rows and x has {} columns", fn, y.rows(),
                  y.cols(), num_dst, x.cols());
  COOPGNN_EXPECTS(&x != &y, "{}: y is the same matrix as x", fn);
  COOPGNN_EXPECTS(0 <= row_begin && row_begin <= row_end && row_end <= num_dst,
                  "{}: row range [{}, {}) is not inside [0, {})", fn, row_begin, row_end, num_dst);
  std::int64_t const d = x.cols();
  std::int64_t const num_src = x.rows();
  for (std::int64_t s = row_begin; s < row_end; ++s) {
    T* __restrict yrow = y.row(s);
    std::fill(yrow, yrow + d, T{0});
    for (eid_t e = indptr[s]; e < indptr[s + 1]; ++e) {
      std::int64_t const t = indices[e];
      COOPGNN_EXPECTS(0 <= t && t < num_src, "{}: edge {} of row {} reads source {} of {}", fn, e,
                      s, t, num_src);
      T const v = static_cast<T>(values[e]);
      const T* __restrict xrow = x.row(t);
      for (std::int64_t j = 0; j < d; ++j) yrow[j] += v * xrow[j];
    }
  }
}

template <typename T, typename V>
void spmm_t_add(const char* fn, std::span<const eid_t> indptr,
                std::span<const std::int64_t> indices, std::span<const V> values,
                const matrix<T>& y_grad, matrix<T>& x_grad) {
  check_csr(fn, indptr, indices, values);
  std::int64_t const num_dst = static_cast<std::int64_t>(indptr.size()) - 1;
  COOPGNN_EXPECTS(y_grad.rows() == num_dst && y_grad.cols() == x_grad.cols(),
                  "{}: y_grad is [{}, {}] but indptr has {} rows and x_grad has {} columns", fn,
                  y_grad.rows(), y_grad.cols(), num_dst, x_grad.cols());
  COOPGNN_EXPECTS(&y_grad != &x_grad, "{}: x_grad is the same matrix as y_grad", fn);
  std::int64_t const d = y_grad.cols();
  std::int64_t const num_src = x_grad.rows();
  for (std::int64_t s = 0; s < num_dst; ++s) {
    const T* __restrict grow = y_grad.row(s);
    for (eid_t e = indptr[s]; e < indptr[s + 1]; ++e) {
      std::int64_t const t = indices[e];
      COOPGNN_EXPECTS(0 <= t && t < num_src, "{}: edge {} of row {} writes source {} of {}", fn, e,
                      s, t, num_src);
      T const v = static_cast<T>(values[e]);
      T* __restrict xrow = x_grad.row(t);
      for (std::int64_t j = 0; j < d; ++j) xrow[j] += v * grow[j];
    }
  }
}

void check_block(const char* fn, const block& b, std::int64_t dense_rows, const char* dense) {
  COOPGNN_EXPECTS(b.num_dst >= 0 && static_cast<std::int64_t>(b.indptr.size()) == b.num_dst + 1,
                  "{}: block has num_dst = {} but indptr has {} offsets", fn, b.num_dst,
                  b.indptr.size());
  COOPGNN_EXPECTS(dense_rows == b.num_src(), "{}: {} has {} rows but the block has {} sources", fn,
                  dense, dense_rows, b.num_src());
}

}  // namespace
}  // namespace detail

template <typename T>
void spmm(const block& b, const matrix<T>& x, matrix<T>& y) {
  detail::check_block("spmm", b, x.rows(), "x");
  detail::spmm_rows<T, float>("spmm", b.indptr, b.indices, b.weights, x, y, 0, b.num_dst);
}

template <typename T>
void spmm(const block& b, const matrix<T>& x, matrix<T>& y, std::int64_t row_begin,
          std::int64_t row_end) {
  detail::check_block("spmm", b, x.rows(), "x");
  detail::spmm_rows<T, float>("spmm", b.indptr, b.indices, b.weights, x, y, row_begin, row_end);
}

template <typename T>
void spmm(std::span<const eid_t> indptr, std::span<const std::int64_t> indices,
          std::span<const T> values, const matrix<T>& x, matrix<T>& y) {
  std::int64_t const rows = indptr.empty() ? 0 : static_cast<std::int64_t>(indptr.size()) - 1;
  detail::spmm_rows<T, T>("spmm", indptr, indices, values, x, y, 0, rows);
}

template <typename T>
void spmm(std::span<const eid_t> indptr, std::span<const std::int64_t> indices,
          std::span<const T> values, const matrix<T>& x, matrix<T>& y, std::int64_t row_begin,
          std::int64_t row_end) {
  detail::spmm_rows<T, T>("spmm", indptr, indices, values, x, y, row_begin, row_end);
}

template <typename T>
void spmm_transpose_add(const block& b, const matrix<T>& y_grad, matrix<T>& x_grad) {
  detail::check_block("spmm_transpose_add", b, x_grad.rows(), "x_grad");
  detail::spmm_t_add<T, float>("spmm_transpose_add", b.indptr, b.indices, b.weights, y_grad,
                               x_grad);
}

template <typename T>
void spmm_transpose_add(std::span<const eid_t> indptr, std::span<const std::int64_t> indices,
                        std::span<const T> values, const matrix<T>& y_grad, matrix<T>& x_grad) {
  detail::spmm_t_add<T, T>("spmm_transpose_add", indptr, indices, values, y_grad, x_grad);
}

#define COOPGNN_INSTANTIATE_SPMM(T)                                                                \
  template void spmm<T>(const block&, const matrix<T>&, matrix<T>&);                               \
  template void spmm<T>(const block&, const matrix<T>&, matrix<T>&, std::int64_t, std::int64_t);   \
  template void spmm<T>(std::span<const eid_t>, std::span<const std::int64_t>, std::span<const T>, \
                        const matrix<T>&, matrix<T>&);                                             \
  template void spmm<T>(std::span<const eid_t>, std::span<const std::int64_t>, std::span<const T>, \
                        const matrix<T>&, matrix<T>&, std::int64_t, std::int64_t);                 \
  template void spmm_transpose_add<T>(const block&, const matrix<T>&, matrix<T>&);                 \
  template void spmm_transpose_add<T>(std::span<const eid_t>, std::span<const std::int64_t>,       \
                                      std::span<const T>, const matrix<T>&, matrix<T>&);

COOPGNN_INSTANTIATE_SPMM(float)
COOPGNN_INSTANTIATE_SPMM(double)
#undef COOPGNN_INSTANTIATE_SPMM

}  // namespace coopgnn
