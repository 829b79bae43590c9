#include "kernels/sparse/sddmm.hpp"

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
/// The reference loop on raw row-major arrays (a [>= num_dst, d], x [num_src, d]).
template <typename T>
void sddmm_rows(const char* fn, const eid_t* indptr, std::int64_t num_dst,
                const std::int64_t* indices, const T* a, const T* x, std::int64_t num_src,
                std::int64_t d, const T* scale, T* out) {
  for (std::int64_t s = 0; s < num_dst; ++s) {
    const T* arow = a + s * d;
    for (eid_t e = indptr[s]; e < indptr[s + 1]; ++e) {
      std::int64_t const t = indices[e];
      COOPGNN_EXPECTS(0 <= t && t < num_src, "{}: edge {} of row {} reads source {} of {}", fn, e,
                      s, t, num_src);
      const T* xrow = x + t * d;
      T acc{0};
      for (std::int64_t j = 0; j < d; ++j) acc += arow[j] * xrow[j];
      out[e] = scale == nullptr ? acc : scale[e] * acc;
    }
  }
}
}  // namespace
}  // namespace detail

template <typename T>
void sddmm(std::span<const eid_t> indptr, std::span<const std::int64_t> indices, const matrix<T>& a,
           const matrix<T>& x, std::span<const T> edge_scale, std::span<T> out) {
  constexpr const char* fn = "sddmm";
  auto const num_edges = static_cast<std::int64_t>(indices.size());
  detail::check_indptr(fn, indptr, num_edges);
  detail::check_edge_array(fn, "out", out.size(), num_edges);
  if (!edge_scale.empty()) detail::check_edge_array(fn, "edge_scale", edge_scale.size(), num_edges);
  std::int64_t const num_dst = static_cast<std::int64_t>(indptr.size()) - 1;
  COOPGNN_EXPECTS(a.cols() == x.cols(), "{}: a has {} columns but x has {}", fn, a.cols(),
                  x.cols());
  COOPGNN_EXPECTS(a.rows() >= num_dst, "{}: a has {} rows but there are {} destinations", fn,
                  a.rows(), num_dst);
  detail::sddmm_rows(fn, indptr.data(), num_dst, indices.data(), a.data(), x.data(), x.rows(),
                     x.cols(), edge_scale.empty() ? nullptr : edge_scale.data(), out.data());
}

template <typename T>
void sddmm(const block& b, const matrix<T>& a, const matrix<T>& x, bool scale_by_weights,
           std::span<T> out) {
  COOPGNN_EXPECTS(b.num_dst >= 0 && static_cast<std::int64_t>(b.indptr.size()) == b.num_dst + 1,
                  "sddmm: block has num_dst = {} but indptr has {} offsets", b.num_dst,
                  b.indptr.size());
  COOPGNN_EXPECTS(x.rows() == b.num_src(), "sddmm: x has {} rows but the block has {} sources",
                  x.rows(), b.num_src());
  std::vector<T> scale;
  if (scale_by_weights) {
    detail::check_edge_array("sddmm", "block weights", b.weights.size(), b.num_edges());
    scale.assign(b.weights.begin(), b.weights.end());
  }
  sddmm<T>(b.indptr, b.indices, a, x, std::span<const T>(scale), out);
}

template <typename T>
void sddmm(const exec_context& ctx, const csr_view& c, tensor_view<const T> a,
           tensor_view<const T> x, buffer_view<const T> edge_scale, buffer_view<T> out) {
  constexpr const char* fn = "sddmm";
  coopgnn::detail::expect_spaces(
      ctx, fn,
      {{"the sparse operand", c.space}, {"a", a.space}, {"x", x.space}, {"out", out.space}});
  if (!edge_scale.empty()) coopgnn::detail::expect_space(ctx, edge_scale.space, fn, "edge_scale");
  COOPGNN_EXPECTS(
      static_cast<std::int64_t>(out.size) == c.num_edges &&
          (edge_scale.empty() || static_cast<std::int64_t>(edge_scale.size) == c.num_edges),
      "{}: out has {} and edge_scale {} entries for {} edges", fn, out.size, edge_scale.size,
      c.num_edges);
  COOPGNN_EXPECTS(a.cols == x.cols && a.rows >= c.num_rows && x.rows == c.num_cols,
                  "{}: a is [{}, {}] and x is [{}, {}] for a [{}, {}] sparse operand", fn, a.rows,
                  a.cols, x.rows, x.cols, c.num_rows, c.num_cols);
  if (c.num_edges == 0) return;
  auto const on_cuda = COOPGNN_CUDA_BRANCH([&] {
    coopgnn::detail::expect_cuda_type<T>(fn);
    if constexpr (std::is_same_v<T, float>) {
      COOPGNN_EXPECTS(c.num_rows <= c.num_cols,
                      "{}: the CUDA kernel takes a block's shape (rows <= columns), got [{}, {}]",
                      fn, c.num_rows, c.num_cols);
      cuda::block_view const v{c.num_rows, c.num_cols, c.num_edges,
                               c.indptr,   c.indices,  edge_scale.data};
      cuda::sddmm(v, a.data, x.data, x.cols, !edge_scale.empty(), out.data, ctx.cuda()->compute());
    }
  });
  coopgnn::detail::dispatch(ctx, fn, on_cuda, [&] {
    if (ctx.get_backend() == backend::host) {
      detail::check_indptr(
          fn, std::span<const eid_t>(c.indptr, static_cast<std::size_t>(c.num_rows + 1)),
          c.num_edges);
    }
    // Rows [s0, s1) alone: the offsets from s0 (absolute edge ids) and a's rows from s0; each edge
    // is one dot product, so any split gives the same bits.
    std::int64_t const per_row =
        x.cols * std::max<std::int64_t>(1, c.num_edges / std::max<std::int64_t>(c.num_rows, 1));
    parallel_rows(
        c.num_rows, ctx.threads(),
        [&](std::int64_t s0, std::int64_t s1) {
          detail::sddmm_rows(fn, c.indptr + s0, s1 - s0, c.indices, a.data + s0 * a.cols, x.data,
                             x.rows, x.cols, edge_scale.empty() ? nullptr : edge_scale.data,
                             out.data);
        },
        rows_for_work(per_row));
  });
}

template void sddmm<float>(const exec_context&, const csr_view&, tensor_view<const float>,
                           tensor_view<const float>, buffer_view<const float>, buffer_view<float>);
template void sddmm<double>(const exec_context&, const csr_view&, tensor_view<const double>,
                            tensor_view<const double>, buffer_view<const double>,
                            buffer_view<double>);
template void sddmm<float>(std::span<const eid_t>, std::span<const std::int64_t>,
                           const matrix<float>&, const matrix<float>&, std::span<const float>,
                           std::span<float>);
template void sddmm<double>(std::span<const eid_t>, std::span<const std::int64_t>,
                            const matrix<double>&, const matrix<double>&, std::span<const double>,
                            std::span<double>);
template void sddmm<float>(const block&, const matrix<float>&, const matrix<float>&, bool,
                           std::span<float>);
template void sddmm<double>(const block&, const matrix<double>&, const matrix<double>&, bool,
                            std::span<double>);

}  // namespace coopgnn
