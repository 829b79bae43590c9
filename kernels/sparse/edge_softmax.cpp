#include "kernels/sparse/edge_softmax.hpp"

#include "kernels/dispatch.hpp"

#ifdef COOPGNN_WITH_CUDA
#include "kernels/sparse/sparse_cuda.hpp"
#endif

#include <algorithm>
#include <cmath>
#include <limits>

#include "kernels/sparse/csr_check.hpp"
#include "runtime/core/parallel.hpp"

namespace coopgnn {
namespace detail {
namespace {

/// The softmax of destinations [s0, s1): per row, max, sum of exp and quotients in edge order.
template <typename T>
void edge_softmax_rows(const eid_t* indptr, std::int64_t s0, std::int64_t s1, const T* scores,
                       T* out) {
  for (std::int64_t s = s0; s < s1; ++s) {
    eid_t const e0 = indptr[s];
    eid_t const e1 = indptr[s + 1];
    if (e0 == e1) continue;
    T mx = -std::numeric_limits<T>::infinity();
    for (eid_t e = e0; e < e1; ++e) mx = std::max(mx, scores[e]);
    T sum{0};
    for (eid_t e = e0; e < e1; ++e) sum += std::exp(scores[e] - mx);
    for (eid_t e = e0; e < e1; ++e) out[e] = std::exp(scores[e] - mx) / sum;
  }
}

/// The softmax backward of destinations [s0, s1), the row's dot product in edge order.
template <typename T>
void edge_softmax_backward_rows(const eid_t* indptr, std::int64_t s0, std::int64_t s1, const T* y,
                                const T* grad_y, T* grad_scores) {
  for (std::int64_t s = s0; s < s1; ++s) {
    T dot{0};
    for (eid_t e = indptr[s]; e < indptr[s + 1]; ++e) dot += y[e] * grad_y[e];
    for (eid_t e = indptr[s]; e < indptr[s + 1]; ++e) grad_scores[e] = y[e] * (grad_y[e] - dot);
  }
}

/// Destinations per parallel range: about rows_for_work of the mean degree times 8 operations.
std::int64_t softmax_min_rows(const csr_view& c) {
  return rows_for_work(
      8 * std::max<std::int64_t>(1, c.num_edges / std::max<std::int64_t>(c.num_rows, 1)));
}

}  // namespace
}  // namespace detail

template <typename T>
void edge_softmax(std::span<const eid_t> indptr, std::span<const T> scores, std::span<T> out) {
  constexpr const char* fn = "edge_softmax";
  auto const num_edges = static_cast<std::int64_t>(scores.size());
  detail::check_indptr(fn, indptr, num_edges);
  detail::check_edge_array(fn, "out", out.size(), num_edges);
  detail::edge_softmax_rows<T>(indptr.data(), 0, static_cast<std::int64_t>(indptr.size()) - 1,
                               scores.data(), out.data());
}

template <typename T>
void edge_softmax_backward(std::span<const eid_t> indptr, std::span<const T> y,
                           std::span<const T> grad_y, std::span<T> grad_scores) {
  constexpr const char* fn = "edge_softmax_backward";
  auto const num_edges = static_cast<std::int64_t>(y.size());
  detail::check_indptr(fn, indptr, num_edges);
  detail::check_edge_array(fn, "grad_y", grad_y.size(), num_edges);
  detail::check_edge_array(fn, "grad_scores", grad_scores.size(), num_edges);
  detail::edge_softmax_backward_rows<T>(indptr.data(), 0,
                                        static_cast<std::int64_t>(indptr.size()) - 1, y.data(),
                                        grad_y.data(), grad_scores.data());
}

namespace {
std::span<const eid_t> offsets_of(const csr_view& c) {
  return {c.indptr, static_cast<std::size_t>(c.num_rows + 1)};
}
}  // namespace

template <typename T>
void edge_softmax(const exec_context& ctx, const csr_view& c, buffer_view<const T> scores,
                  buffer_view<T> out) {
  constexpr const char* fn = "edge_softmax";
  coopgnn::detail::expect_spaces(
      ctx, fn, {{"the sparse operand", c.space}, {"scores", scores.space}, {"out", out.space}});
  COOPGNN_EXPECTS(static_cast<std::int64_t>(scores.size) == c.num_edges && out.size == scores.size,
                  "{}: scores has {} and out {} entries for {} edges", fn, scores.size, out.size,
                  c.num_edges);
  auto const on_cuda = COOPGNN_CUDA_BRANCH([&] {
    coopgnn::detail::expect_cuda_type<T>(fn);
    if constexpr (std::is_same_v<T, float>) {
      cuda::edge_softmax(c.indptr, c.num_rows, c.num_edges, scores.data, out.data,
                         ctx.cuda()->compute());
    }
  });
  coopgnn::detail::dispatch(ctx, fn, on_cuda, [&] {
    auto const offsets = offsets_of(c);
    detail::check_indptr(fn, offsets, c.num_edges);
    parallel_rows(
        c.num_rows, ctx.threads(),
        [&](std::int64_t s0, std::int64_t s1) {
          detail::edge_softmax_rows<T>(offsets.data(), s0, s1, scores.data, out.data);
        },
        detail::softmax_min_rows(c));
  });
}

template <typename T>
void edge_softmax_backward(const exec_context& ctx, const csr_view& c, buffer_view<const T> y,
                           buffer_view<const T> grad_y, buffer_view<T> grad_scores) {
  constexpr const char* fn = "edge_softmax_backward";
  coopgnn::detail::expect_spaces(ctx, fn,
                                 {{"the sparse operand", c.space},
                                  {"y", y.space},
                                  {"grad_y", grad_y.space},
                                  {"grad_scores", grad_scores.space}});
  COOPGNN_EXPECTS(static_cast<std::int64_t>(y.size) == c.num_edges && grad_y.size == y.size &&
                      grad_scores.size == y.size,
                  "{}: y, grad_y and grad_scores have {}, {} and {} entries for {} edges", fn,
                  y.size, grad_y.size, grad_scores.size, c.num_edges);
  auto const on_cuda = COOPGNN_CUDA_BRANCH([&] {
    coopgnn::detail::expect_cuda_type<T>(fn);
    if constexpr (std::is_same_v<T, float>) {
      cuda::edge_softmax_backward(c.indptr, c.num_rows, c.num_edges, y.data, grad_y.data,
                                  grad_scores.data, ctx.cuda()->compute());
    }
  });
  coopgnn::detail::dispatch(ctx, fn, on_cuda, [&] {
    auto const offsets = offsets_of(c);
    detail::check_indptr(fn, offsets, c.num_edges);
    parallel_rows(
        c.num_rows, ctx.threads(),
        [&](std::int64_t s0, std::int64_t s1) {
          detail::edge_softmax_backward_rows<T>(offsets.data(), s0, s1, y.data, grad_y.data,
                                                grad_scores.data);
        },
        detail::softmax_min_rows(c));
  });
}

template void edge_softmax<float>(const exec_context&, const csr_view&, buffer_view<const float>,
                                  buffer_view<float>);
template void edge_softmax<double>(const exec_context&, const csr_view&, buffer_view<const double>,
                                   buffer_view<double>);
template void edge_softmax_backward<float>(const exec_context&, const csr_view&,
                                           buffer_view<const float>, buffer_view<const float>,
                                           buffer_view<float>);
template void edge_softmax_backward<double>(const exec_context&, const csr_view&,
                                            buffer_view<const double>, buffer_view<const double>,
                                            buffer_view<double>);
template void edge_softmax<float>(std::span<const eid_t>, std::span<const float>, std::span<float>);
template void edge_softmax<double>(std::span<const eid_t>, std::span<const double>,
                                   std::span<double>);
template void edge_softmax_backward<float>(std::span<const eid_t>, std::span<const float>,
                                           std::span<const float>, std::span<float>);
template void edge_softmax_backward<double>(std::span<const eid_t>, std::span<const double>,
                                            std::span<const double>, std::span<double>);

}  // namespace coopgnn
