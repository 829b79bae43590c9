#include "kernels/gather/gather.hpp"

#include <algorithm>
#include <type_traits>
#include <vector>

#include "kernels/dispatch.hpp"
#include "runtime/core/parallel.hpp"

#ifdef COOPGNN_WITH_CUDA
#include "kernels/gather/gather_cuda.hpp"
#endif

namespace coopgnn {
namespace {

/// The element conversions of the gathers: a table element (`source`) to float32.
struct copy_float32 {
  using source = float;
  float operator()(float x) const { return x; }
};
struct widen_float16 {
  using source = std::uint16_t;
  float operator()(std::uint16_t b) const { return half_to_float(b); }
};
struct widen_bfloat16 {
  using source = std::uint16_t;
  float operator()(std::uint16_t b) const { return bfloat16_to_float(b); }
};

/// Calls f with the conversion of `dtype` (the one dispatch on the element type of a host
/// table; f instantiates its loop per conversion).
template <class F>
void with_widening(feature_dtype dtype, F&& f) {
  switch (dtype) {
    case feature_dtype::float32:
      return f(copy_float32{});
    case feature_dtype::float16:
      return f(widen_float16{});
    case feature_dtype::bfloat16:
      return f(widen_bfloat16{});
  }
}

}  // namespace

matrix<float> gather_rows(const void* table, feature_dtype dtype, std::int64_t rows,
                          std::int64_t cols, std::span<const vid_t> ids) {
  auto const m = static_cast<std::int64_t>(ids.size());
  COOPGNN_EXPECTS(rows >= 0 && cols >= 0, "gather_rows: the table's shape [{}, {}] is negative",
                  rows, cols);
  // Rows appended to reserved storage: each value is written once (no zero fill first).
  std::vector<float> values;
  values.reserve(static_cast<std::size_t>(m * cols));
  with_widening(dtype, [&](auto widen) {
    using S = typename decltype(widen)::source;
    const S* t = static_cast<const S*>(table);
    for (std::int64_t i = 0; i < m; ++i) {
      COOPGNN_EXPECTS(ids[i] >= 0 && ids[i] < rows,
                      "gather_rows: id {} at position {} is outside [0, {})", ids[i], i, rows);
      if (cols == 0) continue;
      const S* r = t + ids[i] * cols;
      if constexpr (std::is_same_v<S, float>) {
        values.insert(values.end(), r, r + cols);
      } else {
        for (std::int64_t j = 0; j < cols; ++j) values.push_back(widen(r[j]));
      }
    }
  });
  return matrix<float>(m, cols, std::move(values));
}

matrix<float> gather_rows(const matrix<float>& table, std::span<const vid_t> ids) {
  return gather_rows(table.rows() > 0 ? table.row(0) : nullptr, feature_dtype::float32,
                     table.rows(), table.cols(), ids);
}

namespace {
/// The gather entry of both element widths: `table` holds [rows, cols] elements of `dtype`
/// (float, or 16-bit patterns) in ctx.space().
template <class S>
void gather_rows_in(const exec_context& ctx, tensor_view<const S> table, feature_dtype dtype,
                    buffer_view<const std::int64_t> ids, tensor_view<float> out) {
  constexpr const char* fn = "gather_rows";
  detail::expect_spaces(ctx, fn, {{"table", table.space}, {"ids", ids.space}, {"out", out.space}});
  COOPGNN_EXPECTS(out.rows == static_cast<std::int64_t>(ids.size) && out.cols == table.cols,
                  "{}: out is [{}, {}] for {} ids of a table with {} columns", fn, out.rows,
                  out.cols, ids.size, table.cols);
  if (out.size() == 0) return;
  auto const on_cuda = COOPGNN_CUDA_BRANCH([&] {
    buffer<unsigned long long> first_bad(ctx, 1);  // never read: the ids are the caller's promise
    cuda::table_view const tv{table.data, table.rows, table.cols, table.cols, dtype};
    cuda::gather_rows_async(tv, ids.data, out.rows, out.data, first_bad.data(),
                            ctx.cuda()->compute());
  });
  detail::dispatch(ctx, fn, on_cuda, [&] {
    std::int64_t const cols = table.cols;
    with_widening(dtype, [&](auto widen) {
      using W = decltype(widen);
      if constexpr (std::is_same_v<typename W::source, S>) {
        parallel_rows(
            out.rows, ctx.threads(),
            [&](std::int64_t i0, std::int64_t i1) {
              for (std::int64_t i = i0; i < i1; ++i) {
                vid_t const v = ids.data[i];
                COOPGNN_EXPECTS(v >= 0 && v < table.rows,
                                "{}: id {} at position {} is outside [0, {})", fn, v, i,
                                table.rows);
                const S* r = table.data + v * cols;
                std::transform(r, r + cols, out.data + i * cols, widen);
              }
            },
            rows_for_work(4 * cols));
      }
    });
  });
}
}  // namespace

void gather_rows(const exec_context& ctx, tensor_view<const float> table,
                 buffer_view<const std::int64_t> ids, tensor_view<float> out) {
  gather_rows_in(ctx, table, feature_dtype::float32, ids, out);
}

void gather_rows(const exec_context& ctx, tensor_view<const std::uint16_t> table,
                 feature_dtype dtype, buffer_view<const std::int64_t> ids, tensor_view<float> out) {
  COOPGNN_EXPECTS(dtype != feature_dtype::float32,
                  "gather_rows: a table of 16-bit patterns cannot be float32");
  gather_rows_in(ctx, table, dtype, ids, out);
}

}  // namespace coopgnn
