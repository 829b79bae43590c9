#include "kernels/sparse/attention.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <span>
#include <type_traits>
#include <vector>

#include "kernels/dispatch.hpp"
#include "kernels/sparse/csr_check.hpp"
#include "runtime/core/error.hpp"
#include "runtime/core/rng.hpp"

#ifdef COOPGNN_WITH_CUDA
#include "kernels/sparse/attention_cuda.hpp"
#endif

namespace coopgnn {
namespace {

/// The structural checks every entry makes: the CSR's space and (host backend) its offsets.
void check_csr(const exec_context& ctx, const char* fn, const csr_view& c) {
  detail::expect_space(ctx, c.space, fn, "the sparse operand");
  COOPGNN_EXPECTS(c.num_rows >= 0 && c.num_cols >= 0 && c.num_edges >= 0,
                  "{}: negative CSR shape [{}, {}] with {} edges", fn, c.num_rows, c.num_cols,
                  c.num_edges);
  if (c.space == memory_space::host && ctx.get_backend() == backend::host) {
    detail::check_indptr(fn,
                         std::span<const eid_t>(c.indptr, static_cast<std::size_t>(c.num_rows + 1)),
                         c.num_edges);
    for (std::int64_t e = 0; e < c.num_edges; ++e) {
      COOPGNN_EXPECTS(c.indices[e] >= 0 && c.indices[e] < c.num_cols,
                      "{}: edge {} reads source {} of {}", fn, e, c.indices[e], c.num_cols);
    }
  }
}

std::int64_t per_head(const char* fn, std::int64_t cols, std::int64_t heads) {
  COOPGNN_EXPECTS(heads >= 1 && cols % heads == 0,
                  "{}: {} columns do not split into {} heads of equal width", fn, cols, heads);
  return cols / heads;
}

/// Whether the optional output grad_x is asked for (non-null data); when it is, it must be in
/// ctx's space and shaped like x (logic_error naming the operand otherwise).
template <typename T>
bool wants_grad_x(const exec_context& ctx, const char* fn, tensor_view<const T> x,
                  tensor_view<T> grad_x) {
  if (grad_x.data == nullptr) return false;
  detail::expect_space(ctx, grad_x.space, fn, "grad_x");
  detail::expect_same_shape<T>(fn, x, "x", grad_x, "grad_x");
  return true;
}

void check_edge_size(const char* fn, const char* what, std::size_t size, std::int64_t expected) {
  COOPGNN_EXPECTS(static_cast<std::int64_t>(size) == expected, "{}: {} has {} entries, expected {}",
                  fn, what, size, expected);
}

#ifdef COOPGNN_WITH_CUDA
/// The edges of c grouped by source (ascending edge id within a source), for the CUDA scatters.
grouped_positions by_source(const exec_context& ctx, const csr_view& c) {
  return group_by_value(ctx, c.num_cols,
                        {c.indices, static_cast<std::size_t>(c.num_edges), c.space});
}
#endif

}  // namespace

self_loop_csr add_self_loops(const exec_context& ctx, const csr_view& c) {
  constexpr const char* fn = "add_self_loops";
  check_csr(ctx, fn, c);
  COOPGNN_EXPECTS(c.num_rows <= c.num_cols,
                  "{}: {} rows but {} columns (rows must be a prefix of the columns)", fn,
                  c.num_rows, c.num_cols);
  self_loop_csr r{c.num_rows, c.num_cols,
                  buffer<eid_t>(ctx, static_cast<std::size_t>(c.num_rows + 1)),
                  buffer<std::int64_t>(ctx, static_cast<std::size_t>(c.num_edges + c.num_rows))};
  auto const on_cuda = COOPGNN_CUDA_BRANCH([&] {
    cuda::add_self_loops(c.indptr, c.indices, c.num_rows, r.indptr.data(), r.indices.data(),
                         ctx.cuda()->compute());
  });
  detail::dispatch(ctx, fn, on_cuda, [&] {
    eid_t* ip = r.indptr.data();
    std::int64_t* ix = r.indices.data();
    ip[0] = 0;
    for (std::int64_t s = 0; s < c.num_rows; ++s) {
      eid_t const out0 = c.indptr[s] + s;
      ix[out0] = s;
      for (eid_t e = c.indptr[s]; e < c.indptr[s + 1]; ++e) ix[e + s + 1] = c.indices[e];
      ip[s + 1] = c.indptr[s + 1] + s + 1;
    }
  });
  return r;
}

template <typename T>
void attention_project(const exec_context& ctx, tensor_view<const T> x, buffer_view<const T> a,
                       std::int64_t heads, tensor_view<T> out) {
  constexpr const char* fn = "attention_project";
  detail::expect_spaces(ctx, fn, {{"x", x.space}, {"a", a.space}, {"out", out.space}});
  std::int64_t const f = per_head(fn, x.cols, heads);
  check_edge_size(fn, "a", a.size, x.cols);
  COOPGNN_EXPECTS(out.rows == x.rows && out.cols == heads, "{}: out is [{}, {}], expected [{}, {}]",
                  fn, out.rows, out.cols, x.rows, heads);
  if (x.rows == 0) return;
  auto const on_cuda = COOPGNN_CUDA_BRANCH([&] {
    detail::expect_cuda_type<T>(fn);
    if constexpr (std::is_same_v<T, float>) {
      cuda::attention_project(x.data, a.data, x.rows, heads, f, out.data, ctx.cuda()->compute());
    }
  });
  detail::dispatch(ctx, fn, on_cuda, [&] {
    for (std::int64_t i = 0; i < x.rows; ++i) {
      for (std::int64_t k = 0; k < heads; ++k) {
        T acc{0};
        for (std::int64_t j = k * f; j < (k + 1) * f; ++j)
          acc += x.data[i * x.cols + j] * a.data[j];
        out.data[i * heads + k] = acc;
      }
    }
  });
}

template <typename T>
void attention_project_backward(const exec_context& ctx, tensor_view<const T> x,
                                buffer_view<const T> a, tensor_view<const T> g,
                                tensor_view<T> grad_x, buffer_view<T> grad_a) {
  constexpr const char* fn = "attention_project_backward";
  detail::expect_spaces(ctx, fn,
                        {{"x", x.space}, {"a", a.space}, {"g", g.space}, {"grad_a", grad_a.space}});
  std::int64_t const heads = g.cols;
  std::int64_t const f = per_head(fn, x.cols, heads);
  check_edge_size(fn, "a", a.size, x.cols);
  check_edge_size(fn, "grad_a", grad_a.size, x.cols);
  COOPGNN_EXPECTS(g.rows == x.rows, "{}: g has {} rows for {} rows of x", fn, g.rows, x.rows);
  bool const want_x = wants_grad_x(ctx, fn, x, grad_x);
  if (x.rows == 0) return;
  auto const on_cuda = COOPGNN_CUDA_BRANCH([&] {
    detail::expect_cuda_type<T>(fn);
    if constexpr (std::is_same_v<T, float>) {
      cuda::attention_project_backward(x.data, a.data, g.data, x.rows, heads, f,
                                       want_x ? grad_x.data : nullptr, grad_a.data,
                                       ctx.cuda()->compute());
    }
  });
  detail::dispatch(ctx, fn, on_cuda, [&] {
    std::int64_t const cols = x.cols;
    if (want_x) {
      for (std::int64_t i = 0; i < x.rows; ++i) {
        for (std::int64_t j = 0; j < cols; ++j) {
          grad_x.data[i * cols + j] += g.data[i * heads + j / f] * a.data[j];
        }
      }
    }
    for (std::int64_t j = 0; j < cols; ++j) {
      T acc{0};
      for (std::int64_t i = 0; i < x.rows; ++i)
        acc += g.data[i * heads + j / f] * x.data[i * cols + j];
      grad_a.data[j] += acc;
    }
  });
}

template <typename T>
void attention_scores(const exec_context& ctx, const csr_view& c, tensor_view<const T> el,
                      tensor_view<const T> er, T slope, bool mask_self_loops,
                      buffer_view<T> scores) {
  constexpr const char* fn = "attention_scores";
  check_csr(ctx, fn, c);
  detail::expect_spaces(ctx, fn, {{"el", el.space}, {"er", er.space}, {"scores", scores.space}});
  std::int64_t const heads = el.cols;
  COOPGNN_EXPECTS(heads >= 1 && er.cols == heads && el.rows >= c.num_rows && er.rows == c.num_cols,
                  "{}: el is [{}, {}] and er [{}, {}] for a [{}, {}] CSR", fn, el.rows, el.cols,
                  er.rows, er.cols, c.num_rows, c.num_cols);
  check_edge_size(fn, "scores", scores.size, heads * c.num_edges);
  COOPGNN_EXPECTS(slope >= T{0},
                  "{}: negative slope {} (the backward reads the sign of the output)", fn, slope);
  if (c.num_edges == 0) return;
  auto const on_cuda = COOPGNN_CUDA_BRANCH([&] {
    detail::expect_cuda_type<T>(fn);
    if constexpr (std::is_same_v<T, float>) {
      cuda::attention_scores(c.indptr, c.indices, c.num_rows, c.num_edges, el.data, er.data, heads,
                             slope, mask_self_loops, scores.data, ctx.cuda()->compute());
    }
  });
  detail::dispatch(ctx, fn, on_cuda, [&] {
    std::int64_t const ne = c.num_edges;
    for (std::int64_t s = 0; s < c.num_rows; ++s) {
      for (eid_t e = c.indptr[s]; e < c.indptr[s + 1]; ++e) {
        std::int64_t const t = c.indices[e];
        bool const masked = mask_self_loops && t == s && e != c.indptr[s];
        for (std::int64_t k = 0; k < heads; ++k) {
          T const z = el.data[s * heads + k] + er.data[t * heads + k];
          scores.data[k * ne + e] =
              masked ? -std::numeric_limits<T>::infinity() : (z > T{0} ? z : slope * z);
        }
      }
    }
  });
}

template <typename T>
void attention_scores_backward(const exec_context& ctx, const csr_view& c,
                               buffer_view<const T> scores, buffer_view<const T> grad, T slope,
                               tensor_view<T> grad_el, tensor_view<T> grad_er) {
  constexpr const char* fn = "attention_scores_backward";
  check_csr(ctx, fn, c);
  detail::expect_spaces(ctx, fn,
                        {{"scores", scores.space},
                         {"grad", grad.space},
                         {"grad_el", grad_el.space},
                         {"grad_er", grad_er.space}});
  std::int64_t const heads = grad_el.cols;
  COOPGNN_EXPECTS(heads >= 1 && grad_er.cols == heads && grad_el.rows >= c.num_rows &&
                      grad_er.rows == c.num_cols,
                  "{}: grad_el is [{}, {}] and grad_er [{}, {}] for a [{}, {}] CSR", fn,
                  grad_el.rows, grad_el.cols, grad_er.rows, grad_er.cols, c.num_rows, c.num_cols);
  check_edge_size(fn, "scores", scores.size, heads * c.num_edges);
  check_edge_size(fn, "grad", grad.size, heads * c.num_edges);
  if (c.num_edges == 0) return;
  auto const on_cuda = COOPGNN_CUDA_BRANCH([&] {
    detail::expect_cuda_type<T>(fn);
    if constexpr (std::is_same_v<T, float>) {
      auto const t = by_source(ctx, c);
      cuda::attention_scores_backward(
          c.indptr, c.num_rows, c.num_cols, c.num_edges, t.offsets.data(), t.positions.data(),
          scores.data, grad.data, heads, slope, grad_el.data, grad_er.data, ctx.cuda()->compute());
    }
  });
  detail::dispatch(ctx, fn, on_cuda, [&] {
    std::int64_t const ne = c.num_edges;
    auto gz = [&](std::int64_t k, eid_t e) {
      T const g = grad.data[k * ne + e];
      return scores.data[k * ne + e] > T{0} ? g : g * slope;
    };
    for (std::int64_t s = 0; s < c.num_rows; ++s) {
      for (std::int64_t k = 0; k < heads; ++k) {
        T acc{0};
        for (eid_t e = c.indptr[s]; e < c.indptr[s + 1]; ++e) acc += gz(k, e);
        grad_el.data[s * heads + k] += acc;
      }
    }
    // Ascending e per source: accumulate into zeroed partial sums, then add (the CUDA gather's
    // order).
    std::vector<T> part(static_cast<std::size_t>(c.num_cols * heads), T{0});
    for (std::int64_t s = 0; s < c.num_rows; ++s) {
      for (eid_t e = c.indptr[s]; e < c.indptr[s + 1]; ++e) {
        std::int64_t const t = c.indices[e];
        for (std::int64_t k = 0; k < heads; ++k) {
          part[static_cast<std::size_t>(t * heads + k)] += gz(k, e);
        }
      }
    }
    for (std::int64_t i = 0; i < c.num_cols * heads; ++i) {
      grad_er.data[i] += part[static_cast<std::size_t>(i)];
    }
  });
}

template <typename T>
void attention_dropout(const exec_context& ctx, const csr_view& c, buffer_view<const vid_t> src_ids,
                       std::int64_t heads, const dropout_key& key, float p, T scale,
                       buffer_view<T> alpha, buffer_view<std::uint8_t> keep) {
  constexpr const char* fn = "attention_dropout";
  check_csr(ctx, fn, c);
  detail::expect_spaces(ctx, fn,
                        {{"src_ids", src_ids.space}, {"alpha", alpha.space}, {"keep", keep.space}});
  COOPGNN_EXPECTS(heads >= 1 && heads <= 256, "{}: {} heads (1 to 256 supported)", fn, heads);
  check_edge_size(fn, "src_ids", src_ids.size, c.num_cols);
  check_edge_size(fn, "alpha", alpha.size, heads * c.num_edges);
  check_edge_size(fn, "keep", keep.size, heads * c.num_edges);
  COOPGNN_EXPECTS(p >= 0.0f && p < 1.0f, "{}: p = {} is outside [0, 1)", fn, p);
  if (c.num_edges == 0) return;
  auto const on_cuda = COOPGNN_CUDA_BRANCH([&] {
    detail::expect_cuda_type<T>(fn);
    if constexpr (std::is_same_v<T, float>) {
      cuda::attention_dropout(c.indptr, c.indices, c.num_rows, c.num_edges, src_ids.data, heads,
                              key.run_seed, key.batch, key.layer_index, p, scale, alpha.data,
                              keep.data, ctx.cuda()->compute());
    }
  });
  detail::dispatch(ctx, fn, on_cuda, [&] {
    std::int64_t const ne = c.num_edges;
    for (std::int64_t q = 0; q * 4 < heads; ++q) {
      rng::stream const st = rng::make_stream(key.run_seed, rng::purpose::attention_dropout,
                                              64 * key.layer_index + static_cast<std::uint32_t>(q));
      for (std::int64_t s = 0; s < c.num_rows; ++s) {
        auto const dst = static_cast<std::uint64_t>(src_ids.data[s]);
        for (eid_t e = c.indptr[s]; e < c.indptr[s + 1]; ++e) {
          auto const src = static_cast<std::uint32_t>(src_ids.data[c.indices[e]]);
          auto const w = rng::draw4(st, dst, src, key.batch);
          for (std::int64_t k = 4 * q; k < std::min<std::int64_t>(4 * q + 4, heads); ++k) {
            bool const kept = rng::to_unit(w[static_cast<std::size_t>(k - 4 * q)]) >= p;
            keep.data[k * ne + e] = kept ? 1 : 0;
            alpha.data[k * ne + e] = kept ? alpha.data[k * ne + e] * scale : T{0};
          }
        }
      }
    }
  });
}

template <typename T>
void attention_aggregate(const exec_context& ctx, const csr_view& c, buffer_view<const T> alpha,
                         tensor_view<const T> x, std::int64_t heads, tensor_view<T> y) {
  constexpr const char* fn = "attention_aggregate";
  check_csr(ctx, fn, c);
  detail::expect_spaces(ctx, fn, {{"alpha", alpha.space}, {"x", x.space}, {"y", y.space}});
  std::int64_t const f = per_head(fn, x.cols, heads);
  check_edge_size(fn, "alpha", alpha.size, heads * c.num_edges);
  COOPGNN_EXPECTS(x.rows == c.num_cols && y.rows == c.num_rows && y.cols == x.cols,
                  "{}: x is [{}, {}] and y [{}, {}] for a [{}, {}] CSR", fn, x.rows, x.cols, y.rows,
                  y.cols, c.num_rows, c.num_cols);
  COOPGNN_EXPECTS(x.data != y.data || y.size() == 0, "{}: y is x", fn);
  if (y.size() == 0) return;
  auto const on_cuda = COOPGNN_CUDA_BRANCH([&] {
    detail::expect_cuda_type<T>(fn);
    if constexpr (std::is_same_v<T, float>) {
      cuda::attention_aggregate(c.indptr, c.indices, c.num_rows, c.num_edges, alpha.data, x.data,
                                heads, f, y.data, ctx.cuda()->compute());
    }
  });
  detail::dispatch(ctx, fn, on_cuda, [&] {
    std::int64_t const ne = c.num_edges;
    std::int64_t const cols = x.cols;
    for (std::int64_t s = 0; s < c.num_rows; ++s) {
      T* yr = y.data + s * cols;
      std::fill(yr, yr + cols, T{0});
      for (eid_t e = c.indptr[s]; e < c.indptr[s + 1]; ++e) {
        const T* xr = x.data + c.indices[e] * cols;
        for (std::int64_t j = 0; j < cols; ++j) yr[j] += alpha.data[(j / f) * ne + e] * xr[j];
      }
    }
  });
}

template <typename T>
void attention_aggregate_backward(const exec_context& ctx, const csr_view& c,
                                  buffer_view<const T> alpha, tensor_view<const T> x,
                                  tensor_view<const T> g, std::int64_t heads,
                                  buffer_view<T> grad_alpha, tensor_view<T> grad_x) {
  constexpr const char* fn = "attention_aggregate_backward";
  check_csr(ctx, fn, c);
  detail::expect_spaces(
      ctx, fn,
      {{"alpha", alpha.space}, {"x", x.space}, {"g", g.space}, {"grad_alpha", grad_alpha.space}});
  std::int64_t const f = per_head(fn, x.cols, heads);
  check_edge_size(fn, "alpha", alpha.size, heads * c.num_edges);
  check_edge_size(fn, "grad_alpha", grad_alpha.size, heads * c.num_edges);
  COOPGNN_EXPECTS(x.rows == c.num_cols && g.rows == c.num_rows && g.cols == x.cols,
                  "{}: x is [{}, {}] and g [{}, {}] for a [{}, {}] CSR", fn, x.rows, x.cols, g.rows,
                  g.cols, c.num_rows, c.num_cols);
  bool const want_x = wants_grad_x(ctx, fn, x, grad_x);
  if (c.num_edges == 0) return;
  auto const on_cuda = COOPGNN_CUDA_BRANCH([&] {
    detail::expect_cuda_type<T>(fn);
    if constexpr (std::is_same_v<T, float>) {
      grouped_positions t;
      if (want_x) t = by_source(ctx, c);
      cuda::attention_aggregate_backward(c.indptr, c.indices, c.num_rows, c.num_cols, c.num_edges,
                                         want_x ? t.offsets.data() : nullptr,
                                         want_x ? t.positions.data() : nullptr, alpha.data, x.data,
                                         g.data, heads, f, grad_alpha.data,
                                         want_x ? grad_x.data : nullptr, ctx.cuda()->compute());
    }
  });
  detail::dispatch(ctx, fn, on_cuda, [&] {
    std::int64_t const ne = c.num_edges;
    std::int64_t const cols = x.cols;
    for (std::int64_t s = 0; s < c.num_rows; ++s) {
      const T* gr = g.data + s * cols;
      for (eid_t e = c.indptr[s]; e < c.indptr[s + 1]; ++e) {
        const T* xr = x.data + c.indices[e] * cols;
        for (std::int64_t k = 0; k < heads; ++k) {
          T acc{0};
          for (std::int64_t j = k * f; j < (k + 1) * f; ++j) acc += gr[j] * xr[j];
          grad_alpha.data[k * ne + e] = acc;
        }
      }
    }
    if (!want_x) return;
    // Per source, ascending e, into zeroed partial sums, then added (the CUDA gather's order).
    std::vector<T> part(static_cast<std::size_t>(x.size()), T{0});
    for (std::int64_t s = 0; s < c.num_rows; ++s) {
      const T* gr = g.data + s * cols;
      for (eid_t e = c.indptr[s]; e < c.indptr[s + 1]; ++e) {
        T* pr = part.data() + c.indices[e] * cols;
        for (std::int64_t j = 0; j < cols; ++j) pr[j] += alpha.data[(j / f) * ne + e] * gr[j];
      }
    }
    for (std::int64_t i = 0; i < x.size(); ++i) grad_x.data[i] += part[static_cast<std::size_t>(i)];
  });
}

template <typename T>
void elu_inplace(const exec_context& ctx, tensor_view<T> x) {
  constexpr const char* fn = "elu_inplace";
  detail::expect_space(ctx, x.space, fn, "x");
  if (x.size() == 0) return;
  auto const on_cuda = COOPGNN_CUDA_BRANCH([&] {
    detail::expect_cuda_type<T>(fn);
    if constexpr (std::is_same_v<T, float>)
      cuda::elu_inplace(x.data, x.size(), ctx.cuda()->compute());
  });
  detail::dispatch(ctx, fn, on_cuda, [&] {
    for (std::int64_t i = 0; i < x.size(); ++i) {
      T const v = x.data[i];
      x.data[i] = v > T{0} ? v : std::exp(v) - T{1};
    }
  });
}

template <typename T>
void elu_backward(const exec_context& ctx, tensor_view<const T> grad_out, tensor_view<const T> y,
                  tensor_view<T> grad_in) {
  constexpr const char* fn = "elu_backward";
  detail::expect_spaces(ctx, fn,
                        {{"grad_out", grad_out.space}, {"y", y.space}, {"grad_in", grad_in.space}});
  detail::expect_same_shape<T>(fn, grad_out, "grad_out", y, "y");
  detail::expect_same_shape<T>(fn, grad_out, "grad_out", grad_in, "grad_in");
  if (y.size() == 0) return;
  auto const on_cuda = COOPGNN_CUDA_BRANCH([&] {
    detail::expect_cuda_type<T>(fn);
    if constexpr (std::is_same_v<T, float>) {
      cuda::elu_backward(grad_out.data, y.data, y.size(), grad_in.data, ctx.cuda()->compute());
    }
  });
  detail::dispatch(ctx, fn, on_cuda, [&] {
    for (std::int64_t i = 0; i < y.size(); ++i) {
      T const v = y.data[i];
      grad_in.data[i] = v > T{0} ? grad_out.data[i] : grad_out.data[i] * (v + T{1});
    }
  });
}

#define COOPGNN_INSTANTIATE_ATTENTION(T)                                                           \
  template void attention_project<T>(const exec_context&, tensor_view<const T>,                    \
                                     buffer_view<const T>, std::int64_t, tensor_view<T>);          \
  template void attention_project_backward<T>(const exec_context&, tensor_view<const T>,           \
                                              buffer_view<const T>, tensor_view<const T>,          \
                                              tensor_view<T>, buffer_view<T>);                     \
  template void attention_scores<T>(const exec_context&, const csr_view&, tensor_view<const T>,    \
                                    tensor_view<const T>, T, bool, buffer_view<T>);                \
  template void attention_scores_backward<T>(const exec_context&, const csr_view&,                 \
                                             buffer_view<const T>, buffer_view<const T>, T,        \
                                             tensor_view<T>, tensor_view<T>);                      \
  template void attention_dropout<T>(const exec_context&, const csr_view&,                         \
                                     buffer_view<const vid_t>, std::int64_t, const dropout_key&,   \
                                     float, T, buffer_view<T>, buffer_view<std::uint8_t>);         \
  template void attention_aggregate<T>(const exec_context&, const csr_view&, buffer_view<const T>, \
                                       tensor_view<const T>, std::int64_t, tensor_view<T>);        \
  template void attention_aggregate_backward<T>(                                                   \
      const exec_context&, const csr_view&, buffer_view<const T>, tensor_view<const T>,            \
      tensor_view<const T>, std::int64_t, buffer_view<T>, tensor_view<T>);                         \
  template void elu_inplace<T>(const exec_context&, tensor_view<T>);                               \
  template void elu_backward<T>(const exec_context&, tensor_view<const T>, tensor_view<const T>,   \
                                tensor_view<T>);

COOPGNN_INSTANTIATE_ATTENTION(float)
COOPGNN_INSTANTIATE_ATTENTION(double)
#undef COOPGNN_INSTANTIATE_ATTENTION

}  // namespace coopgnn
