// Host references and backend dispatch of the link-prediction and TMA layer ops (link_ops.hpp).
// The host loops are the reference the CUDA kernels of link_ops.cu reproduce.
#include "kernels/dense/link_ops.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/dispatch.hpp"
#include "kernels/sparse/spmm.hpp"
#include "runtime/core/parallel.hpp"

#ifdef COOPGNN_WITH_CUDA
#include "kernels/dense/link_ops_cuda.hpp"
#endif

namespace coopgnn {

template <typename T>
void row_dot(const exec_context& ctx, tensor_view<const T> a, tensor_view<const T> b,
             buffer_view<T> out) {
  constexpr const char* fn = "row_dot";
  detail::expect_spaces(ctx, fn, {{"a", a.space}, {"b", b.space}, {"out", out.space}});
  detail::expect_same_shape<T>(fn, a, "a", b, "b");
  COOPGNN_EXPECTS(static_cast<std::int64_t>(out.size) == a.rows,
                  "{}: out has {} values for {} rows", fn, out.size, a.rows);
  if (a.rows == 0) return;
  auto const on_cuda = COOPGNN_CUDA_BRANCH([&] {
    detail::expect_cuda_type<T>(fn);
    if constexpr (std::is_same_v<T, float>) {
      cuda::row_dot(a.data, b.data, a.rows, a.cols, out.data, ctx.cuda()->compute());
    }
  });
  detail::dispatch(ctx, fn, on_cuda, [&] {
    std::int64_t const d = a.cols;
    parallel_rows(a.rows, ctx.threads(), [&](std::int64_t r0, std::int64_t r1) {
      for (std::int64_t i = r0; i < r1; ++i) {
        const T* ar = a.data + i * d;
        const T* br = b.data + i * d;
        T acc{0};
        for (std::int64_t j = 0; j < d; ++j) acc += ar[j] * br[j];
        out.data[i] = acc;
      }
    });
  });
}

template <typename T>
void scale_rows(const exec_context& ctx, buffer_view<const T> s, tensor_view<const T> x,
                tensor_view<T> y) {
  constexpr const char* fn = "scale_rows";
  detail::expect_spaces(ctx, fn, {{"s", s.space}, {"x", x.space}, {"y", y.space}});
  detail::expect_same_shape<T>(fn, x, "x", y, "y");
  COOPGNN_EXPECTS(static_cast<std::int64_t>(s.size) == x.rows, "{}: s has {} values for {} rows",
                  fn, s.size, x.rows);
  if (x.size() == 0) return;
  auto const on_cuda = COOPGNN_CUDA_BRANCH([&] {
    detail::expect_cuda_type<T>(fn);
    if constexpr (std::is_same_v<T, float>) {
      cuda::scale_rows(s.data, x.data, x.rows, x.cols, y.data, ctx.cuda()->compute());
    }
  });
  detail::dispatch(ctx, fn, on_cuda, [&] {
    std::int64_t const d = x.cols;
    parallel_rows(x.rows, ctx.threads(), [&](std::int64_t r0, std::int64_t r1) {
      for (std::int64_t i = r0; i < r1; ++i) {
        T const si = s.data[i];
        for (std::int64_t j = 0; j < d; ++j) y.data[i * d + j] = si * x.data[i * d + j];
      }
    });
  });
}

template <typename T>
void hadamard(const exec_context& ctx, tensor_view<const T> a, tensor_view<const T> b,
              tensor_view<T> out) {
  constexpr const char* fn = "hadamard";
  detail::expect_spaces(ctx, fn, {{"a", a.space}, {"b", b.space}, {"out", out.space}});
  detail::expect_same_shape<T>(fn, a, "a", b, "b");
  detail::expect_same_shape<T>(fn, a, "a", out, "out");
  if (a.size() == 0) return;
  auto const on_cuda = COOPGNN_CUDA_BRANCH([&] {
    detail::expect_cuda_type<T>(fn);
    if constexpr (std::is_same_v<T, float>) {
      cuda::hadamard(a.data, b.data, a.size(), out.data, ctx.cuda()->compute());
    }
  });
  detail::dispatch(ctx, fn, on_cuda, [&] {
    for (std::int64_t e = 0; e < a.size(); ++e) out.data[e] = a.data[e] * b.data[e];
  });
}

template <typename T>
void scatter_add_rows(const exec_context& ctx, tensor_view<const T> x,
                      buffer_view<const std::int64_t> ids, tensor_view<T> out) {
  constexpr const char* fn = "scatter_add_rows";
  detail::expect_spaces(ctx, fn, {{"x", x.space}, {"ids", ids.space}, {"out", out.space}});
  COOPGNN_EXPECTS(static_cast<std::int64_t>(ids.size) == x.rows, "{}: {} ids for {} rows of x", fn,
                  ids.size, x.rows);
  COOPGNN_EXPECTS(out.cols == x.cols, "{}: out has {} columns but x has {}", fn, out.cols, x.cols);
  if (x.size() == 0) return;
  auto const on_cuda = COOPGNN_CUDA_BRANCH([&] {
    detail::expect_cuda_type<T>(fn);
    if constexpr (std::is_same_v<T, float>) {
      // The positions grouped by id make the scatter a gather with one writer per output row.
      auto const g = group_by_value(ctx, out.rows, ids);
      cuda::scatter_add_rows(x.data, x.cols, g.offsets.data(), g.positions.data(), out.rows,
                             out.data, ctx.cuda()->compute());
    }
  });
  detail::dispatch(ctx, fn, on_cuda, [&] {
    for (std::int64_t i = 0; i < x.rows; ++i) {
      std::int64_t const r = ids.data[i];
      COOPGNN_EXPECTS(0 <= r && r < out.rows, "{}: id {} at position {} is outside [0, {})", fn, r,
                      i, out.rows);
    }
    std::int64_t const d = x.cols;
    for (std::int64_t i = 0; i < x.rows; ++i) {
      T* o = out.data + ids.data[i] * d;
      const T* xr = x.data + i * d;
      for (std::int64_t j = 0; j < d; ++j) o[j] += xr[j];
    }
  });
}

namespace {

/// True for one slope per column, false for one shared slope; throws unless alpha has cols or
/// one value.
bool prelu_per_channel(const char* fn, std::size_t alpha_size, std::int64_t cols) {
  COOPGNN_EXPECTS(alpha_size == 1 || static_cast<std::int64_t>(alpha_size) == cols,
                  "{}: alpha has {} values for {} columns (expected {} or 1)", fn, alpha_size, cols,
                  cols);
  return static_cast<std::int64_t>(alpha_size) == cols;
}

}  // namespace

template <typename T>
void prelu_forward(const exec_context& ctx, tensor_view<const T> x, buffer_view<const T> alpha,
                   tensor_view<T> y) {
  constexpr const char* fn = "prelu_forward";
  detail::expect_spaces(ctx, fn, {{"x", x.space}, {"alpha", alpha.space}, {"y", y.space}});
  detail::expect_same_shape<T>(fn, x, "x", y, "y");
  bool const per_channel = prelu_per_channel(fn, alpha.size, x.cols);
  if (x.size() == 0) return;
  auto const on_cuda = COOPGNN_CUDA_BRANCH([&] {
    detail::expect_cuda_type<T>(fn);
    if constexpr (std::is_same_v<T, float>) {
      cuda::prelu_forward(x.data, x.rows, x.cols, alpha.data, per_channel, y.data,
                          ctx.cuda()->compute());
    }
  });
  detail::dispatch(ctx, fn, on_cuda, [&] {
    std::int64_t const d = x.cols;
    parallel_rows(x.rows, ctx.threads(), [&](std::int64_t r0, std::int64_t r1) {
      for (std::int64_t e = r0 * d; e < r1 * d; ++e) {
        T const v = x.data[e];
        T const a = alpha.data[per_channel ? e % d : 0];
        y.data[e] = v > T{0} ? v : a * v;
      }
    });
  });
}

template <typename T>
void prelu_backward(const exec_context& ctx, tensor_view<const T> grad_out, tensor_view<const T> x,
                    buffer_view<const T> alpha, tensor_view<T> grad_in, buffer_view<T> alpha_grad) {
  constexpr const char* fn = "prelu_backward";
  detail::expect_spaces(ctx, fn,
                        {{"grad_out", grad_out.space},
                         {"x", x.space},
                         {"alpha", alpha.space},
                         {"grad_in", grad_in.space},
                         {"alpha_grad", alpha_grad.space}});
  detail::expect_same_shape<T>(fn, grad_out, "grad_out", x, "x");
  detail::expect_same_shape<T>(fn, grad_out, "grad_out", grad_in, "grad_in");
  bool const per_channel = prelu_per_channel(fn, alpha.size, x.cols);
  COOPGNN_EXPECTS(alpha_grad.size == alpha.size, "{}: alpha_grad has {} values but alpha {}", fn,
                  alpha_grad.size, alpha.size);
  if (x.size() == 0) return;
  auto const on_cuda = COOPGNN_CUDA_BRANCH([&] {
    detail::expect_cuda_type<T>(fn);
    if constexpr (std::is_same_v<T, float>) {
      cuda::prelu_backward(grad_out.data, x.data, x.rows, x.cols, alpha.data, per_channel,
                           grad_in.data, alpha_grad.data, ctx.cuda()->compute());
    }
  });
  detail::dispatch(ctx, fn, on_cuda, [&] {
    std::int64_t const d = x.cols;
    std::vector<T> sums(alpha.size, T{0});
    for (std::int64_t e = 0; e < x.size(); ++e) {
      std::size_t const c = per_channel ? static_cast<std::size_t>(e % d) : 0;
      T const v = x.data[e];
      T const g = grad_out.data[e];
      if (v <= T{0}) sums[c] += v * g;
      grad_in.data[e] = v > T{0} ? g : alpha.data[c] * g;
    }
    for (std::size_t c = 0; c < sums.size(); ++c) alpha_grad.data[c] += sums[c];
  });
}

template <typename T>
void layer_norm_forward(const exec_context& ctx, tensor_view<const T> x, buffer_view<const T> gamma,
                        buffer_view<const T> beta, T eps, tensor_view<T> y, buffer_view<T> mean,
                        buffer_view<T> rstd) {
  constexpr const char* fn = "layer_norm_forward";
  detail::expect_spaces(ctx, fn,
                        {{"x", x.space},
                         {"gamma", gamma.space},
                         {"beta", beta.space},
                         {"y", y.space},
                         {"mean", mean.space},
                         {"rstd", rstd.space}});
  detail::expect_same_shape<T>(fn, x, "x", y, "y");
  std::int64_t const m = x.rows;
  std::int64_t const d = x.cols;
  COOPGNN_EXPECTS(
      static_cast<std::int64_t>(gamma.size) == d && static_cast<std::int64_t>(beta.size) == d,
      "{}: gamma has {} and beta {} values for {} columns", fn, gamma.size, beta.size, d);
  COOPGNN_EXPECTS(
      static_cast<std::int64_t>(mean.size) == m && static_cast<std::int64_t>(rstd.size) == m,
      "{}: mean has {} and rstd {} values for {} rows", fn, mean.size, rstd.size, m);
  COOPGNN_EXPECTS(m == 0 || d >= 1, "{}: x has {} rows but no columns", fn, m);
  COOPGNN_EXPECTS(eps >= T{0}, "{}: eps = {} is negative", fn, eps);
  COOPGNN_EXPECTS(m == 0 || y.data != x.data, "{}: y is the same matrix as x", fn);
  if (m == 0) return;
  auto const on_cuda = COOPGNN_CUDA_BRANCH([&] {
    detail::expect_cuda_type<T>(fn);
    if constexpr (std::is_same_v<T, float>) {
      cuda::layer_norm_forward(x.data, m, d, gamma.data, beta.data, eps, y.data, mean.data,
                               rstd.data, ctx.cuda()->compute());
    }
  });
  detail::dispatch(ctx, fn, on_cuda, [&] {
    parallel_rows(m, ctx.threads(), [&](std::int64_t r0, std::int64_t r1) {
      for (std::int64_t i = r0; i < r1; ++i) {
        const T* xr = x.data + i * d;
        T* yr = y.data + i * d;
        double sum = 0.0;
        for (std::int64_t j = 0; j < d; ++j) sum += static_cast<double>(xr[j]);
        double const mu = sum / static_cast<double>(d);
        double sq = 0.0;
        for (std::int64_t j = 0; j < d; ++j) {
          double const c = static_cast<double>(xr[j]) - mu;
          sq += c * c;
        }
        double const var = sq / static_cast<double>(d);
        T const mu_t = static_cast<T>(mu);
        T const rs_t = static_cast<T>(1.0 / std::sqrt(var + static_cast<double>(eps)));
        mean.data[i] = mu_t;
        rstd.data[i] = rs_t;
        for (std::int64_t j = 0; j < d; ++j) {
          yr[j] = (xr[j] - mu_t) * rs_t * gamma.data[j] + beta.data[j];
        }
      }
    });
  });
}

template <typename T>
void layer_norm_backward(const exec_context& ctx, tensor_view<const T> grad_out,
                         tensor_view<const T> x, buffer_view<const T> gamma,
                         buffer_view<const T> mean, buffer_view<const T> rstd,
                         tensor_view<T> grad_in, buffer_view<T> gamma_grad,
                         buffer_view<T> beta_grad) {
  constexpr const char* fn = "layer_norm_backward";
  detail::expect_spaces(ctx, fn,
                        {{"grad_out", grad_out.space},
                         {"x", x.space},
                         {"gamma", gamma.space},
                         {"mean", mean.space},
                         {"rstd", rstd.space},
                         {"grad_in", grad_in.space},
                         {"gamma_grad", gamma_grad.space},
                         {"beta_grad", beta_grad.space}});
  detail::expect_same_shape<T>(fn, grad_out, "grad_out", x, "x");
  detail::expect_same_shape<T>(fn, grad_out, "grad_out", grad_in, "grad_in");
  std::int64_t const m = x.rows;
  std::int64_t const d = x.cols;
  COOPGNN_EXPECTS(static_cast<std::int64_t>(gamma.size) == d &&
                      static_cast<std::int64_t>(gamma_grad.size) == d &&
                      static_cast<std::int64_t>(beta_grad.size) == d,
                  "{}: gamma has {}, gamma_grad {} and beta_grad {} values for {} columns", fn,
                  gamma.size, gamma_grad.size, beta_grad.size, d);
  COOPGNN_EXPECTS(
      static_cast<std::int64_t>(mean.size) == m && static_cast<std::int64_t>(rstd.size) == m,
      "{}: mean has {} and rstd {} values for {} rows", fn, mean.size, rstd.size, m);
  COOPGNN_EXPECTS(m == 0 || d >= 1, "{}: x has {} rows but no columns", fn, m);
  COOPGNN_EXPECTS(m == 0 || grad_in.data != x.data, "{}: grad_in is the same matrix as x", fn);
  if (m == 0) return;
  auto const on_cuda = COOPGNN_CUDA_BRANCH([&] {
    detail::expect_cuda_type<T>(fn);
    if constexpr (std::is_same_v<T, float>) {
      cuda::layer_norm_backward(grad_out.data, x.data, m, d, gamma.data, mean.data, rstd.data,
                                grad_in.data, gamma_grad.data, beta_grad.data,
                                ctx.cuda()->compute());
    }
  });
  detail::dispatch(ctx, fn, on_cuda, [&] {
    std::vector<T> gsum(static_cast<std::size_t>(d), T{0});
    std::vector<T> bsum(static_cast<std::size_t>(d), T{0});
    for (std::int64_t i = 0; i < m; ++i) {
      const T* gr = grad_out.data + i * d;
      const T* xr = x.data + i * d;
      T* gi = grad_in.data + i * d;
      T const mu = mean.data[i];
      T const rs = rstd.data[i];
      double c1 = 0.0;  // sum_j gy
      double c2 = 0.0;  // sum_j gy xh
      for (std::int64_t j = 0; j < d; ++j) {
        auto const uj = static_cast<std::size_t>(j);
        T const xh = (xr[j] - mu) * rs;
        T const gy = gr[j] * gamma.data[j];
        gsum[uj] += gr[j] * xh;
        bsum[uj] += gr[j];
        c1 += static_cast<double>(gy);
        c2 += static_cast<double>(gy) * static_cast<double>(xh);
      }
      c1 /= static_cast<double>(d);
      c2 /= static_cast<double>(d);
      // Row i of grad_in may be row i of grad_out: every read of it above precedes these writes.
      for (std::int64_t j = 0; j < d; ++j) {
        T const xh = (xr[j] - mu) * rs;
        double const gy = static_cast<double>(gr[j] * gamma.data[j]);
        gi[j] = static_cast<T>(static_cast<double>(rs) * (gy - c1 - static_cast<double>(xh) * c2));
      }
    }
    for (std::int64_t j = 0; j < d; ++j) {
      gamma_grad.data[j] += gsum[static_cast<std::size_t>(j)];
      beta_grad.data[j] += bsum[static_cast<std::size_t>(j)];
    }
  });
}

template <typename T>
T bce_with_logits(const exec_context& ctx, buffer_view<const T> logits, buffer_view<const T> labels,
                  T scale, buffer_view<T> grad) {
  constexpr const char* fn = "bce_with_logits";
  bool const want_grad = grad.data != nullptr || grad.size > 0;
  detail::expect_spaces(ctx, fn, {{"logits", logits.space}, {"labels", labels.space}});
  if (want_grad) detail::expect_space(ctx, grad.space, fn, "grad");
  COOPGNN_EXPECTS(labels.size == logits.size, "{}: {} labels for {} logits", fn, labels.size,
                  logits.size);
  COOPGNN_EXPECTS(!want_grad || grad.size == logits.size, "{}: grad has {} values for {} logits",
                  fn, grad.size, logits.size);
  auto const n = static_cast<std::int64_t>(logits.size);
  if (n == 0) return T{0};
  auto const on_cuda = COOPGNN_CUDA_BRANCH([&] {
    detail::expect_cuda_type<T>(fn);
    if constexpr (std::is_same_v<T, float>) {
      buffer<double> row_loss(ctx, logits.size);
      buffer<float> total(ctx, 1);
      cuda::bce_with_logits(logits.data, labels.data, n, scale, want_grad ? grad.data : nullptr,
                            row_loss.data(), total.data(), ctx.cuda()->compute());
      return download<float>(ctx, total.view()).at(0);
    }
    return T{0};
  });
  return detail::dispatch(ctx, fn, on_cuda, [&] {
    for (std::int64_t i = 0; i < n; ++i) {
      T const y = labels.data[i];
      COOPGNN_EXPECTS(y == T{0} || y == T{1}, "{}: label at position {} is {}, not 0 or 1", fn, i,
                      y);
    }
    double total = 0.0;
    for (std::int64_t i = 0; i < n; ++i) {
      auto const x = static_cast<double>(logits.data[i]);
      auto const y = static_cast<double>(labels.data[i]);
      total += std::max(x, 0.0) - x * y + std::log1p(std::exp(-std::abs(x)));
      if (want_grad) {
        double const sig =
            x >= 0.0 ? 1.0 / (1.0 + std::exp(-x)) : std::exp(x) / (1.0 + std::exp(x));
        grad.data[i] = static_cast<T>(static_cast<double>(scale) * (sig - y));
      }
    }
    return static_cast<T>(static_cast<double>(scale) * total);
  });
}

void adam_update_rows(const exec_context& ctx, tensor_view<float> value,
                      tensor_view<const float> grad, tensor_view<float> m, tensor_view<float> v,
                      buffer_view<const std::int64_t> rows, const adam_step_params& params) {
  constexpr const char* fn = "adam_update_rows";
  detail::expect_spaces(ctx, fn,
                        {{"value", value.space},
                         {"grad", grad.space},
                         {"m", m.space},
                         {"v", v.space},
                         {"rows", rows.space}});
  detail::expect_same_shape<float>(fn, value, "value", m, "m");
  detail::expect_same_shape<float>(fn, value, "value", v, "v");
  auto const r = static_cast<std::int64_t>(rows.size);
  std::int64_t const d = value.cols;
  COOPGNN_EXPECTS(grad.rows == r && grad.cols == d,
                  "{}: grad is [{}, {}], expected [{}, {}] (one row per selected row)", fn,
                  grad.rows, grad.cols, r, d);
  if (r == 0 || d == 0) return;
  auto const on_cuda = COOPGNN_CUDA_BRANCH([&] {
    cuda::adam_update_rows(value.data, grad.data, m.data, v.data, d, rows.data, r, params,
                           ctx.cuda()->compute());
  });
  detail::dispatch(ctx, fn, on_cuda, [&] {
    for (std::int64_t k = 0; k < r; ++k) {
      COOPGNN_EXPECTS(0 <= rows.data[k] && rows.data[k] < value.rows,
                      "{}: row {} at position {} is outside [0, {})", fn, rows.data[k], k,
                      value.rows);
    }
    for (std::int64_t k = 0; k < r; ++k) {
      std::int64_t const base = rows.data[k] * d;
      for (std::int64_t j = 0; j < d; ++j) {
        adam_element(value.data[base + j], grad.data[k * d + j], m.data[base + j], v.data[base + j],
                     params);
      }
    }
  });
}

#define COOPGNN_INSTANTIATE_LINK_OPS(T)                                                            \
  template void row_dot<T>(const exec_context&, tensor_view<const T>, tensor_view<const T>,        \
                           buffer_view<T>);                                                        \
  template void scale_rows<T>(const exec_context&, buffer_view<const T>, tensor_view<const T>,     \
                              tensor_view<T>);                                                     \
  template void hadamard<T>(const exec_context&, tensor_view<const T>, tensor_view<const T>,       \
                            tensor_view<T>);                                                       \
  template void scatter_add_rows<T>(const exec_context&, tensor_view<const T>,                     \
                                    buffer_view<const std::int64_t>, tensor_view<T>);              \
  template void prelu_forward<T>(const exec_context&, tensor_view<const T>, buffer_view<const T>,  \
                                 tensor_view<T>);                                                  \
  template void prelu_backward<T>(const exec_context&, tensor_view<const T>, tensor_view<const T>, \
                                  buffer_view<const T>, tensor_view<T>, buffer_view<T>);           \
  template void layer_norm_forward<T>(const exec_context&, tensor_view<const T>,                   \
                                      buffer_view<const T>, buffer_view<const T>, T,               \
                                      tensor_view<T>, buffer_view<T>, buffer_view<T>);             \
  template void layer_norm_backward<T>(                                                            \
      const exec_context&, tensor_view<const T>, tensor_view<const T>, buffer_view<const T>,       \
      buffer_view<const T>, buffer_view<const T>, tensor_view<T>, buffer_view<T>, buffer_view<T>); \
  template T bce_with_logits<T>(const exec_context&, buffer_view<const T>, buffer_view<const T>,   \
                                T, buffer_view<T>);

COOPGNN_INSTANTIATE_LINK_OPS(float)
COOPGNN_INSTANTIATE_LINK_OPS(double)
#undef COOPGNN_INSTANTIATE_LINK_OPS

}  // namespace coopgnn
