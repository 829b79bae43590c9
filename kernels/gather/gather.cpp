#include "kernels/gather/gather.hpp"

#include <algorithm>
#include <vector>

#include "kernels/dispatch.hpp"
#include "runtime/core/parallel.hpp"

#ifdef COOPGNN_WITH_CUDA
#include "kernels/gather/gather_cuda.hpp"
#endif

namespace coopgnn {

matrix<float> gather_rows(const float* table, std::int64_t rows, std::int64_t cols,
                          std::span<const vid_t> ids) {
  auto const m = static_cast<std::int64_t>(ids.size());
  COOPGNN_EXPECTS(rows >= 0 && cols >= 0, "gather_rows: the table's shape [{}, {}] is negative",
                  rows, cols);
  // Rows appended to reserved storage: each value is written once (no zero fill first).
  std::vector<float> values;
  values.reserve(static_cast<std::size_t>(m * cols));
  for (std::int64_t i = 0; i < m; ++i) {
    COOPGNN_EXPECTS(ids[i] >= 0 && ids[i] < rows,
                    "gather_rows: id {} at position {} is outside [0, {})", ids[i], i, rows);
    if (cols > 0) values.insert(values.end(), table + ids[i] * cols, table + (ids[i] + 1) * cols);
  }
  return matrix<float>(m, cols, std::move(values));
}

matrix<float> gather_rows(const matrix<float>& table, std::span<const vid_t> ids) {
  return gather_rows(table.rows() > 0 ? table.row(0) : nullptr, table.rows(), table.cols(), ids);
}

void gather_rows(const exec_context& ctx, tensor_view<const float> table,
                 buffer_view<const std::int64_t> ids, tensor_view<float> out) {
  constexpr const char* fn = "gather_rows";
  detail::expect_spaces(ctx, fn, {{"table", table.space}, {"ids", ids.space}, {"out", out.space}});
  COOPGNN_EXPECTS(out.rows == static_cast<std::int64_t>(ids.size) && out.cols == table.cols,
                  "{}: out is [{}, {}] for {} ids of a table with {} columns", fn, out.rows,
                  out.cols, ids.size, table.cols);
  if (out.size() == 0) return;
  if (!ctx.runs_on_host()) {
#ifdef COOPGNN_WITH_CUDA
    buffer<unsigned long long> first_bad(ctx, 1);  // never read: the ids are the caller's promise
    cuda::table_view const tv{table.data, table.rows, table.cols, table.cols};
    cuda::gather_rows_async(tv, ids.data, out.rows, out.data, first_bad.data(),
                            ctx.cuda()->compute());
    return;
#else
    detail::no_cuda_build(fn);
#endif
  }
  std::int64_t const cols = table.cols;
  parallel_rows(
      out.rows, ctx.threads(),
      [&](std::int64_t i0, std::int64_t i1) {
        for (std::int64_t i = i0; i < i1; ++i) {
          vid_t const v = ids.data[i];
          COOPGNN_EXPECTS(v >= 0 && v < table.rows, "{}: id {} at position {} is outside [0, {})",
                          fn, v, i, table.rows);
          std::copy_n(table.data + v * cols, cols, out.data + i * cols);
        }
      },
      rows_for_work(4 * cols));
}

}  // namespace coopgnn
