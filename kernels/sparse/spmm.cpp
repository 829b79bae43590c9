#include "kernels/sparse/spmm.hpp"

#include <algorithm>
#include <vector>

#include "kernels/dispatch.hpp"
#include "kernels/sparse/csr_check.hpp"
#include "runtime/core/error.hpp"
#include "runtime/core/parallel.hpp"

#ifdef COOPGNN_WITH_CUDA
#include "kernels/sparse/sparse_cuda.hpp"
#endif

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

/// The SpMM rows [row_begin, row_end) on raw arrays: y[s, :] = sum_e values[e] x[indices[e], :]
/// from zero in edge order (x is [num_src, d], y [.., d], both row-major with stride d).
template <typename T, typename V>
void spmm_rows_raw(const char* fn, const eid_t* indptr, const std::int64_t* indices,
                   const V* values, const T* x, std::int64_t num_src, std::int64_t d, T* y,
                   std::int64_t row_begin, std::int64_t row_end) {
  for (std::int64_t s = row_begin; s < row_end; ++s) {
    T* __restrict yrow = y + s * d;
    std::fill(yrow, yrow + d, T{0});
    for (eid_t e = indptr[s]; e < indptr[s + 1]; ++e) {
      std::int64_t const t = indices[e];
      COOPGNN_EXPECTS(0 <= t && t < num_src, "{}: edge {} of row {} reads source {} of {}", fn, e,
                      s, t, num_src);
      T const v = static_cast<T>(values[e]);
      const T* __restrict xrow = x + t * d;
      for (std::int64_t j = 0; j < d; ++j) yrow[j] += v * xrow[j];
    }
  }
}

/// x_grad[indices[e], :] += values[e] y_grad[s, :] for s ascending, e in edge order.
template <typename T, typename V>
void spmm_t_add_raw(const char* fn, const eid_t* indptr, std::int64_t num_dst,
                    const std::int64_t* indices, const V* values, const T* y_grad, std::int64_t d,
                    T* x_grad, std::int64_t num_src) {
  for (std::int64_t s = 0; s < num_dst; ++s) {
    const T* __restrict grow = y_grad + s * d;
    for (eid_t e = indptr[s]; e < indptr[s + 1]; ++e) {
      std::int64_t const t = indices[e];
      COOPGNN_EXPECTS(0 <= t && t < num_src, "{}: edge {} of row {} writes source {} of {}", fn, e,
                      s, t, num_src);
      T const v = static_cast<T>(values[e]);
      T* __restrict xrow = x_grad + t * d;
      for (std::int64_t j = 0; j < d; ++j) xrow[j] += v * grow[j];
    }
  }
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
  spmm_rows_raw<T, V>(fn, indptr.data(), indices.data(), values.data(), x.data(), x.rows(),
                      x.cols(), y.data(), row_begin, row_end);
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
  spmm_t_add_raw<T, V>(fn, indptr.data(), num_dst, indices.data(), values.data(), y_grad.data(),
                       y_grad.cols(), x_grad.data(), x_grad.rows());
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

namespace {

/// The structural checks of both entries: spaces, shapes and (host memory only) the offsets.
template <typename T>
void check_entry(const exec_context& ctx, const char* fn, const csr_view& a,
                 buffer_view<const T> values, tensor_view<const T> dense_src, const char* src_name,
                 tensor_view<const T> dense_dst, const char* dst_name) {
  detail::expect_spaces(ctx, fn,
                        {{"the sparse operand", a.space},
                         {"values", values.space},
                         {src_name, dense_src.space},
                         {dst_name, dense_dst.space}});
  COOPGNN_EXPECTS(a.num_rows >= 0 && a.num_cols >= 0 && a.num_edges >= 0,
                  "{}: negative CSR shape [{}, {}] with {} edges", fn, a.num_rows, a.num_cols,
                  a.num_edges);
  COOPGNN_EXPECTS(static_cast<std::int64_t>(values.size) == a.num_edges,
                  "{}: {} values for {} edges", fn, values.size, a.num_edges);
  COOPGNN_EXPECTS(dense_src.cols == dense_dst.cols, "{}: {} has {} columns but {} has {}", fn,
                  src_name, dense_src.cols, dst_name, dense_dst.cols);
  COOPGNN_EXPECTS(dense_src.data != dense_dst.data || dense_src.size() == 0,
                  "{}: {} and {} are the same memory", fn, src_name, dst_name);
  if (a.space == memory_space::host && ctx.get_backend() == backend::host) {
    detail::check_indptr(fn,
                         std::span<const eid_t>(a.indptr, static_cast<std::size_t>(a.num_rows + 1)),
                         a.num_edges);
  }
}

}  // namespace

template <typename T>
void spmm(const exec_context& ctx, const csr_view& a, buffer_view<const T> values,
          tensor_view<const T> x, tensor_view<T> y) {
  constexpr const char* fn = "spmm";
  check_entry<T>(ctx, fn, a, values, x, "x", y, "y");
  COOPGNN_EXPECTS(x.rows == a.num_cols && y.rows == a.num_rows,
                  "{}: x is [{}, {}] and y is [{}, {}] for a [{}, {}] sparse operand", fn, x.rows,
                  x.cols, y.rows, y.cols, a.num_rows, a.num_cols);
  auto const on_cuda = COOPGNN_CUDA_BRANCH([&] {
    detail::expect_cuda_type<T>(fn);
    if constexpr (std::is_same_v<T, float>) {
      // The CUDA kernel's block view asks num_dst <= num_src (a block's destinations are a
      // prefix of its sources); spmm reads x only at indices[e] < num_cols, so a generic CSR with
      // more rows than columns (an exchange's push CSR) passes with a widened num_src.
      cuda::block_view const v{a.num_rows,  std::max(a.num_cols, a.num_rows),
                               a.num_edges, a.indptr,
                               a.indices,   values.data};
      cuda::spmm(v, x.data, x.cols, y.data, ctx.cuda()->compute());
    }
  });
  detail::dispatch(ctx, fn, on_cuda, [&] {
    std::int64_t const per_row =
        x.cols * std::max<std::int64_t>(1, a.num_edges / std::max<std::int64_t>(a.num_rows, 1));
    parallel_rows(
        a.num_rows, ctx.threads(),
        [&](std::int64_t r0, std::int64_t r1) {
          detail::spmm_rows_raw<T, T>(fn, a.indptr, a.indices, values.data, x.data, x.rows, x.cols,
                                      y.data, r0, r1);
        },
        rows_for_work(per_row));
  });
}

template <typename T>
void spmm_transpose_add(const exec_context& ctx, const csr_view& a, buffer_view<const T> values,
                        tensor_view<const T> y_grad, tensor_view<T> x_grad) {
  constexpr const char* fn = "spmm_transpose_add";
  check_entry<T>(ctx, fn, a, values, y_grad, "y_grad", x_grad, "x_grad");
  COOPGNN_EXPECTS(y_grad.rows == a.num_rows && x_grad.rows == a.num_cols,
                  "{}: y_grad is [{}, {}] and x_grad is [{}, {}] for a [{}, {}] sparse operand", fn,
                  y_grad.rows, y_grad.cols, x_grad.rows, x_grad.cols, a.num_rows, a.num_cols);
  auto const on_cuda = COOPGNN_CUDA_BRANCH([&] {
    detail::expect_cuda_type<T>(fn);
    if constexpr (std::is_same_v<T, float>) {
      if (a.num_edges == 0 || y_grad.cols == 0) return;
      COOPGNN_EXPECTS(a.num_rows <= a.num_cols,
                      "{}: the CUDA kernel takes a block's shape (rows <= columns), got [{}, {}]",
                      fn, a.num_rows, a.num_cols);
      cuda::block_view const v{a.num_rows, a.num_cols, a.num_edges,
                               a.indptr,   a.indices,  values.data};
      // The transposed CSR (the edges grouped by source) makes the backward a deterministic
      // gather.
      auto const t = group_by_value(ctx, a.num_cols,
                                    {a.indices, static_cast<std::size_t>(a.num_edges), a.space});
      cuda::spmm_transpose_add(v, t.offsets.data(), t.positions.data(), y_grad.data, y_grad.cols,
                               x_grad.data, ctx.cuda()->compute());
    }
  });
  detail::dispatch(ctx, fn, on_cuda, [&] {
    std::int64_t const d = y_grad.cols;
    std::int64_t const min_rows = rows_for_work(
        d * std::max<std::int64_t>(1, a.num_edges / std::max<std::int64_t>(a.num_cols, 1)));
    if (ctx.threads() <= 1 || a.num_cols < 2 * min_rows || d == 0) {
      detail::spmm_t_add_raw<T, T>(fn, a.indptr, a.num_rows, a.indices, values.data, y_grad.data, d,
                                   x_grad.data, x_grad.rows);
      return;
    }
    // Parallel: a gather over the edges grouped by source (ascending edge order within a source),
    // so that each x_grad row adds its terms in ascending edge order, exactly the order of the
    // sequential scatter above (which visits edges in ascending order): the same bits, no atomics.
    std::vector<eid_t> offsets(static_cast<std::size_t>(a.num_cols) + 1, 0);
    for (std::int64_t e = 0; e < a.num_edges; ++e) {
      std::int64_t const t = a.indices[e];
      COOPGNN_EXPECTS(0 <= t && t < a.num_cols, "{}: edge {} writes source {} of {}", fn, e, t,
                      a.num_cols);
      ++offsets[static_cast<std::size_t>(t) + 1];
    }
    for (std::int64_t t = 0; t < a.num_cols; ++t) {
      offsets[static_cast<std::size_t>(t) + 1] += offsets[static_cast<std::size_t>(t)];
    }
    std::vector<std::int64_t> edge(static_cast<std::size_t>(a.num_edges));
    std::vector<std::int64_t> row(static_cast<std::size_t>(a.num_edges));
    {
      std::vector<eid_t> next(offsets.begin(), offsets.end() - 1);
      for (std::int64_t s = 0; s < a.num_rows; ++s) {
        for (eid_t e = a.indptr[s]; e < a.indptr[s + 1]; ++e) {
          auto const at = static_cast<std::size_t>(next[static_cast<std::size_t>(a.indices[e])]++);
          edge[at] = e;
          row[at] = s;
        }
      }
    }
    parallel_rows(
        a.num_cols, ctx.threads(),
        [&](std::int64_t t0, std::int64_t t1) {
          for (std::int64_t t = t0; t < t1; ++t) {
            T* __restrict xrow = x_grad.data + t * d;
            for (eid_t q = offsets[static_cast<std::size_t>(t)];
                 q < offsets[static_cast<std::size_t>(t) + 1]; ++q) {
              T const v = values.data[edge[static_cast<std::size_t>(q)]];
              const T* __restrict grow = y_grad.data + row[static_cast<std::size_t>(q)] * d;
              for (std::int64_t j = 0; j < d; ++j) xrow[j] += v * grow[j];
            }
          }
        },
        min_rows);
  });
}

grouped_positions group_by_value(const exec_context& ctx, std::int64_t num_values,
                                 buffer_view<const std::int64_t> values) {
  constexpr const char* fn = "group_by_value";
  detail::expect_space(ctx, values.space, fn, "values");
  COOPGNN_EXPECTS(num_values >= 0, "{}: {} values", fn, num_values);
  auto const m = static_cast<std::int64_t>(values.size);
  auto const on_cuda = COOPGNN_CUDA_BRANCH([&] {
    grouped_positions g{buffer<eid_t>(ctx, static_cast<std::size_t>(num_values + 1)),
                        buffer<std::int64_t>(ctx, values.size)};
    // A CSR with no destinations whose column indices are `values` (build_transpose reads only
    // the indices; its indptr must merely be non-null).
    cuda::block_view const v{0, num_values, m, g.offsets.data(), values.data, nullptr};
    std::size_t const bytes = cuda::transpose_workspace_bytes(num_values, m);
    buffer<unsigned char> workspace(ctx, bytes);
    cuda::build_transpose(v, workspace.data(), bytes, g.offsets.data(), g.positions.data(),
                          ctx.cuda()->compute());
    return g;
  });
  return detail::dispatch(ctx, fn, on_cuda, [&]() -> grouped_positions {
    std::vector<eid_t> offsets(static_cast<std::size_t>(num_values) + 1, 0);
    for (std::int64_t e = 0; e < m; ++e) {
      std::int64_t const v = values.data[e];
      COOPGNN_EXPECTS(v >= 0 && v < num_values, "{}: value {} at position {} is outside [0, {})",
                      fn, v, e, num_values);
      ++offsets[static_cast<std::size_t>(v) + 1];
    }
    for (std::int64_t v = 0; v < num_values; ++v) {
      offsets[static_cast<std::size_t>(v) + 1] += offsets[static_cast<std::size_t>(v)];
    }
    std::vector<std::int64_t> positions(values.size);
    std::vector<eid_t> next(offsets.begin(), offsets.end() - 1);
    for (std::int64_t e = 0; e < m; ++e) {
      positions[static_cast<std::size_t>(next[static_cast<std::size_t>(values.data[e])]++)] = e;
    }
    return {to_space(ctx, std::move(offsets)), to_space(ctx, std::move(positions))};
  });
}

#define COOPGNN_INSTANTIATE_SPMM(T)                                                                \
  template void spmm<T>(const exec_context&, const csr_view&, buffer_view<const T>,                \
                        tensor_view<const T>, tensor_view<T>);                                     \
  template void spmm_transpose_add<T>(const exec_context&, const csr_view&, buffer_view<const T>,  \
                                      tensor_view<const T>, tensor_view<T>);                       \
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
