// Host references and backend dispatch of the element-wise ops, the loss and the Adam update
// (elementwise.hpp). The host loops are the reference the CUDA kernels of elementwise.cu and
// model_ops.cu reproduce.
#include "kernels/dense/elementwise.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <limits>
#include <type_traits>

#include "kernels/dispatch.hpp"
#include "runtime/core/parallel.hpp"
#include "runtime/core/rng.hpp"
#include "runtime/core/rng_lanes.hpp"

#ifdef COOPGNN_WITH_CUDA
#include "kernels/dense/elementwise_cuda.hpp"
#endif

namespace coopgnn {

template <typename T>
void bias_activation(const exec_context& ctx, tensor_view<T> out, buffer_view<const T> bias,
                     bool relu) {
  constexpr const char* fn = "bias_activation";
  detail::expect_spaces(ctx, fn, {{"out", out.space}, {"bias", bias.space}});
  COOPGNN_EXPECTS(static_cast<std::int64_t>(bias.size) == out.cols,
                  "{}: bias has {} values for {} columns", fn, bias.size, out.cols);
  if (out.size() == 0) return;
  auto const on_cuda = COOPGNN_CUDA_BRANCH([&] {
    detail::expect_cuda_type<T>(fn);
    if constexpr (std::is_same_v<T, float>) {
      cuda::bias_relu(out.data, bias.data, out.rows, out.cols, relu, ctx.cuda()->compute());
    }
  });
  detail::dispatch(ctx, fn, on_cuda, [&] {
    std::int64_t const n = out.cols;
    parallel_rows(out.rows, ctx.threads(), [&](std::int64_t r0, std::int64_t r1) {
      const T* __restrict bv = bias.data;
      for (std::int64_t s = r0; s < r1; ++s) {
        T* __restrict row = out.data + s * n;
        if (relu) {
          for (std::int64_t j = 0; j < n; ++j) {
            T const v = row[j] + bv[j];
            row[j] = v > T{0} ? v : T{0};
          }
        } else {
          for (std::int64_t j = 0; j < n; ++j) row[j] += bv[j];
        }
      }
    });
  });
}

template <typename T>
void relu_backward(const exec_context& ctx, tensor_view<const T> grad_out, tensor_view<const T> out,
                   tensor_view<T> grad_in) {
  constexpr const char* fn = "relu_backward";
  detail::expect_spaces(
      ctx, fn, {{"grad_out", grad_out.space}, {"out", out.space}, {"grad_in", grad_in.space}});
  detail::expect_same_shape<T>(fn, grad_out, "grad_out", out, "out");
  detail::expect_same_shape<T>(fn, grad_out, "grad_out", grad_in, "grad_in");
  if (grad_in.size() == 0) return;
  auto const on_cuda = COOPGNN_CUDA_BRANCH([&] {
    detail::expect_cuda_type<T>(fn);
    if constexpr (std::is_same_v<T, float>) {
      cuda::relu_backward(grad_out.data, out.data, grad_in.size(), grad_in.data,
                          ctx.cuda()->compute());
    }
  });
  detail::dispatch(ctx, fn, on_cuda, [&] {
    parallel_rows(
        grad_in.size(), ctx.threads(),
        [&](std::int64_t e0, std::int64_t e1) {
          for (std::int64_t e = e0; e < e1; ++e) {
            grad_in.data[e] = out.data[e] > T{0} ? grad_out.data[e] : T{0};
          }
        },
        rows_for_work(1));
  });
}

template <typename T>
void bias_grad_add(const exec_context& ctx, tensor_view<const T> g, buffer_view<T> bias_grad) {
  constexpr const char* fn = "bias_grad_add";
  detail::expect_spaces(ctx, fn, {{"g", g.space}, {"bias_grad", bias_grad.space}});
  COOPGNN_EXPECTS(static_cast<std::int64_t>(bias_grad.size) == g.cols,
                  "{}: bias_grad has {} values for {} columns", fn, bias_grad.size, g.cols);
  if (g.size() == 0) return;
  auto const on_cuda = COOPGNN_CUDA_BRANCH([&] {
    detail::expect_cuda_type<T>(fn);
    if constexpr (std::is_same_v<T, float>) {
      cuda::bias_grad_add(g.data, g.rows, g.cols, bias_grad.data, ctx.cuda()->compute());
    }
  });
  detail::dispatch(ctx, fn, on_cuda, [&] {
    T* __restrict bg = bias_grad.data;
    for (std::int64_t i = 0; i < g.rows; ++i) {
      const T* __restrict gr = g.data + i * g.cols;
      for (std::int64_t j = 0; j < g.cols; ++j) bg[j] += gr[j];
    }
  });
}

namespace {

#ifdef COOPGNN_RNG_LANES_X86
COOPGNN_INTRINSICS_BEGIN
/// Whether dropout_row_avx512 runs here (AVX-512F and BW, BMI2; asked once, then cached).
bool dropout_row_avx512_usable() {
  static bool const yes = __builtin_cpu_supports("avx512f") != 0 &&
                          __builtin_cpu_supports("avx512bw") != 0 &&
                          __builtin_cpu_supports("bmi2") != 0;
  return yes;
}

/// One float row of dropout_forward, 64 columns per step: the 16 Philox blocks of
/// rng::detail::draw4_x16_avx512, keep bit 4b + q = (word q of block b >> 9) >= t, the bits
/// spread into column order with pdep, then the 0/1 keep bytes and y = keep ? x * sc : +0 as
/// masked stores (the last step masks the columns past `cols`). The same bits as the portable
/// loop of dropout_forward. Only call when dropout_row_avx512_usable().
__attribute__((target("avx512f,avx512bw,bmi2"))) void dropout_row_avx512(
    rng::stream s, std::uint64_t id, std::uint32_t batch, std::uint32_t t, float sc,
    const float* xr, float* yr, std::uint8_t* kr, std::int64_t cols) {
  alignas(64) std::uint32_t w[4][16];
  __m512i const tv = _mm512_set1_epi32(static_cast<int>(t));
  __m512i const one = _mm512_set1_epi8(1);
  __m512 const scv = _mm512_set1_ps(sc);
  for (std::int64_t j0 = 0; j0 < cols; j0 += 64) {
    rng::detail::draw4_x16_avx512(s, id, static_cast<std::uint32_t>(j0 / 4), batch, w[0], w[1],
                                  w[2], w[3]);
    std::uint64_t bits = 0;
    for (int q = 0; q < 4; ++q) {
      __m512i const words = _mm512_load_si512(w[q]);
      __mmask16 const k = _mm512_cmpge_epu32_mask(_mm512_srli_epi32(words, 9), tv);
      bits |= _pdep_u64(static_cast<std::uint64_t>(k), 0x1111111111111111ull << q);
    }
    std::int64_t const n = std::min<std::int64_t>(64, cols - j0);
    std::uint64_t const live = n == 64 ? ~0ull : ((1ull << n) - 1);
    _mm512_mask_storeu_epi8(kr + j0, live, _mm512_maskz_mov_epi8(bits, one));
    for (std::int64_t c = 0; c < n; c += 16) {
      auto const lv = static_cast<__mmask16>(live >> c);
      auto const kp = static_cast<__mmask16>(bits >> c);
      __m512 const xv = _mm512_maskz_loadu_ps(lv, xr + j0 + c);
      _mm512_mask_storeu_ps(yr + j0 + c, lv, _mm512_maskz_mul_ps(kp, xv, scv));
    }
  }
}
COOPGNN_INTRINSICS_END
#endif

}  // namespace

template <typename T>
void dropout_forward(const exec_context& ctx, tensor_view<const T> x, buffer_view<const vid_t> ids,
                     const dropout_key& key, float p, T scale, tensor_view<T> y,
                     buffer_view<std::uint8_t> keep) {
  constexpr const char* fn = "dropout_forward";
  detail::expect_spaces(ctx, fn,
                        {{"x", x.space}, {"ids", ids.space}, {"y", y.space}, {"keep", keep.space}});
  detail::expect_same_shape<T>(fn, x, "x", y, "y");
  COOPGNN_EXPECTS(static_cast<std::int64_t>(ids.size) == x.rows, "{}: {} ids for {} rows", fn,
                  ids.size, x.rows);
  COOPGNN_EXPECTS(static_cast<std::int64_t>(keep.size) == x.size(),
                  "{}: keep has {} entries for [{}, {}]", fn, keep.size, x.rows, x.cols);
  COOPGNN_EXPECTS(p >= 0.0f && p < 1.0f, "{}: p = {} is outside [0, 1)", fn, p);
  if (x.size() == 0) return;
  auto const on_cuda = COOPGNN_CUDA_BRANCH([&] {
    detail::expect_cuda_type<T>(fn);
    if constexpr (std::is_same_v<T, float>) {
      cuda::dropout_forward(x.data, ids.data, x.rows, x.cols, key.run_seed, key.batch,
                            key.layer_index, p, scale, y.data, keep.data, ctx.cuda()->compute());
    }
  });
  detail::dispatch(ctx, fn, on_cuda, [&] {
    rng::stream const s = rng::make_stream(key.run_seed, rng::purpose::dropout, key.layer_index);
    std::int64_t const cols = x.cols;
    // keep <=> to_unit(word) >= p <=> (word >> 9) >= t, t the least k with (k + 0.5) / 2^23 >= p
    // in the same float arithmetic (to_unit is monotone in k), found by bisection: the decisions
    // are exactly those of the float comparison, with an integer test per element.
    std::uint32_t t_lo = 0;
    std::uint32_t t_hi = 1u << 23;  // to_unit never reaches 1 > p: k = 2^23 keeps nothing
    while (t_lo < t_hi) {
      std::uint32_t const mid = t_lo + (t_hi - t_lo) / 2;
      if (rng::to_unit(mid << 9) >= p) {
        t_hi = mid;
      } else {
        t_lo = mid + 1;
      }
    }
    std::uint32_t const t = t_lo;
    parallel_rows(
        x.rows, ctx.threads(),
        [&](std::int64_t i0, std::int64_t i1) {
          // One Philox block gives the variates of four consecutive columns
          // (models::dropout_keeps): block c = columns 4c .. 4c + 3, word w = column 4c + w.
          // Blocks are drawn kLanes at a time (rng::draw4_lanes, the same words as draw4).
          constexpr int kLanes = 16;
          constexpr std::int64_t kSpan = 4 * kLanes;
          std::array<std::array<std::uint32_t, kLanes>, 4> w{};
          std::uint8_t mask[kSpan];
          T const sc = scale;
#ifdef COOPGNN_RNG_LANES_X86
          if constexpr (std::is_same_v<T, float>) {
            if (dropout_row_avx512_usable()) {
              for (std::int64_t i = i0; i < i1; ++i) {
                dropout_row_avx512(s, static_cast<std::uint64_t>(ids.data[i]), key.batch, t, sc,
                                   x.data + i * cols, y.data + i * cols, keep.data + i * cols,
                                   cols);
              }
              return;
            }
          }
#endif
          for (std::int64_t i = i0; i < i1; ++i) {
            auto const id = static_cast<std::uint64_t>(ids.data[i]);
            const T* __restrict__ xr = x.data + i * cols;
            T* __restrict__ yr = y.data + i * cols;
            std::uint8_t* __restrict__ kr = keep.data + i * cols;
            for (std::int64_t j0 = 0; j0 < cols; j0 += kSpan) {
              rng::draw4_lanes<kLanes>(s, id, static_cast<std::uint32_t>(j0 / 4), key.batch, w);
              for (int b = 0; b < kLanes; ++b) {
                for (int q = 0; q < 4; ++q) {
                  mask[4 * b + q] =
                      (w[static_cast<std::size_t>(q)][static_cast<std::size_t>(b)] >> 9) >= t ? 1
                                                                                              : 0;
                }
              }
              std::int64_t const n = std::min<std::int64_t>(kSpan, cols - j0);
              for (std::int64_t j = 0; j < n; ++j) kr[j0 + j] = mask[j];
              if constexpr (std::is_same_v<T, float>) {
                // y = keep ? x * scale : +0 as a bit mask (vectorises; the same bits as the
                // select).
                for (std::int64_t j = 0; j < n; ++j) {
                  std::uint32_t const m = 0u - static_cast<std::uint32_t>(mask[j]);
                  yr[j0 + j] =
                      std::bit_cast<float>(std::bit_cast<std::uint32_t>(xr[j0 + j] * sc) & m);
                }
              } else {
                for (std::int64_t j = 0; j < n; ++j) {
                  yr[j0 + j] = mask[j] != 0 ? xr[j0 + j] * sc : T{0};
                }
              }
            }
          }
        },
        rows_for_work(8 * cols));
  });
}

template <typename T>
void dropout_backward(const exec_context& ctx, tensor_view<T> g,
                      buffer_view<const std::uint8_t> keep, T scale) {
  constexpr const char* fn = "dropout_backward";
  detail::expect_spaces(ctx, fn, {{"g", g.space}, {"keep", keep.space}});
  COOPGNN_EXPECTS(static_cast<std::int64_t>(keep.size) == g.size(),
                  "{}: keep has {} entries for [{}, {}]", fn, keep.size, g.rows, g.cols);
  if (g.size() == 0) return;
  auto const on_cuda = COOPGNN_CUDA_BRANCH([&] {
    detail::expect_cuda_type<T>(fn);
    if constexpr (std::is_same_v<T, float>) {
      cuda::dropout_backward(g.data, keep.data, g.size(), scale, ctx.cuda()->compute());
    }
  });
  detail::dispatch(ctx, fn, on_cuda, [&] {
    parallel_rows(
        g.size(), ctx.threads(),
        [&](std::int64_t e0, std::int64_t e1) {
          for (std::int64_t e = e0; e < e1; ++e) {
            g.data[e] = keep.data[e] != 0 ? g.data[e] * scale : T{0};
          }
        },
        rows_for_work(1));
  });
}

template <typename T>
void gcn_edge_values(const exec_context& ctx, const block_view& b, buffer_view<T> out) {
  constexpr const char* fn = "gcn_edge_values";
  detail::expect_spaces(ctx, fn, {{"block", b.space}, {"out", out.space}});
  COOPGNN_EXPECTS(static_cast<std::int64_t>(out.size) == b.num_edges,
                  "{}: out has {} values for {} edges", fn, out.size, b.num_edges);
  COOPGNN_EXPECTS(b.src_degree != nullptr || b.num_src == 0,
                  "{}: the block has no src_degree (GCN needs full-graph degrees)", fn);
  if (b.num_edges == 0) return;
  auto const on_cuda = COOPGNN_CUDA_BRANCH([&] {
    detail::expect_cuda_type<T>(fn);
    if constexpr (std::is_same_v<T, float>) {
      cuda::gcn_edge_values(b.indptr, b.indices, b.weights, b.src_degree, b.num_dst, out.data,
                            ctx.cuda()->compute());
    }
  });
  detail::dispatch(ctx, fn, on_cuda, [&] {
    std::int64_t const per_row =
        8 * std::max<std::int64_t>(1, b.num_edges / std::max<std::int64_t>(b.num_dst, 1));
    parallel_rows(
        b.num_dst, ctx.threads(),
        [&](std::int64_t s0, std::int64_t s1) {
          for (std::int64_t s = s0; s < s1; ++s) {
            T const ds = static_cast<T>(b.src_degree[s]);
            for (eid_t e = b.indptr[s]; e < b.indptr[s + 1]; ++e) {
              T const dt = static_cast<T>(b.src_degree[b.indices[e]]);
              out.data[e] =
                  static_cast<T>(b.weights[e]) * ds / std::sqrt((ds + T{1}) * (dt + T{1}));
            }
          }
        },
        rows_for_work(per_row));
  });
}

template <typename T>
void gcn_self_add(const exec_context& ctx, buffer_view<const std::int64_t> src_degree,
                  tensor_view<const T> x, tensor_view<T> y) {
  constexpr const char* fn = "gcn_self_add";
  detail::expect_spaces(ctx, fn,
                        {{"src_degree", src_degree.space}, {"x", x.space}, {"y", y.space}});
  COOPGNN_EXPECTS(
      x.rows >= y.rows && x.cols == y.cols && static_cast<std::int64_t>(src_degree.size) >= y.rows,
      "{}: x is [{}, {}], y is [{}, {}] and src_degree has {} entries", fn, x.rows, x.cols, y.rows,
      y.cols, src_degree.size);
  if (y.size() == 0) return;
  auto const on_cuda = COOPGNN_CUDA_BRANCH([&] {
    detail::expect_cuda_type<T>(fn);
    if constexpr (std::is_same_v<T, float>) {
      cuda::gcn_self_add(src_degree.data, x.data, y.rows, y.cols, y.data, ctx.cuda()->compute());
    }
  });
  detail::dispatch(ctx, fn, on_cuda, [&] {
    std::int64_t const n = y.cols;
    parallel_rows(
        y.rows, ctx.threads(),
        [&](std::int64_t s0, std::int64_t s1) {
          for (std::int64_t s = s0; s < s1; ++s) {
            T const c = T{1} / static_cast<T>(src_degree.data[s] + 1);
            const T* __restrict xr = x.data + s * n;
            T* __restrict yr = y.data + s * n;
            for (std::int64_t j = 0; j < n; ++j) yr[j] += c * xr[j];
          }
        },
        rows_for_work(n));
  });
}

template <typename T>
T softmax_cross_entropy(const exec_context& ctx, tensor_view<const T> logits,
                        buffer_view<const std::int64_t> labels, T scale, tensor_view<T> grad) {
  constexpr const char* fn = "softmax_cross_entropy";
  bool const want_grad = grad.data != nullptr || grad.size() > 0;
  detail::expect_spaces(ctx, fn, {{"logits", logits.space}, {"labels", labels.space}});
  if (want_grad) detail::expect_space(ctx, grad.space, fn, "grad");
  std::int64_t const n = logits.rows;
  std::int64_t const num_classes = logits.cols;
  COOPGNN_EXPECTS(static_cast<std::int64_t>(labels.size) == n,
                  "{}: {} labels for {} rows of logits", fn, labels.size, n);
  COOPGNN_EXPECTS(n == 0 || num_classes >= 1, "{}: logits have {} rows but no class columns", fn,
                  n);
  COOPGNN_EXPECTS(!want_grad || (grad.rows == n && grad.cols == num_classes),
                  "{}: grad is [{}, {}], expected [{}, {}]", fn, grad.rows, grad.cols, n,
                  num_classes);
  COOPGNN_EXPECTS(!want_grad || grad.data != logits.data || n == 0,
                  "{}: grad is the same matrix as logits", fn);
  auto const on_cuda = COOPGNN_CUDA_BRANCH([&] {
    detail::expect_cuda_type<T>(fn);
    if constexpr (std::is_same_v<T, float>) {
      buffer<double> row_loss(ctx, static_cast<std::size_t>(n));
      buffer<float> total(ctx, 1);
      cuda::softmax_cross_entropy(logits.data, labels.data, n, num_classes, scale,
                                  want_grad ? grad.data : nullptr, row_loss.data(), total.data(),
                                  ctx.cuda()->compute());
      return download<float>(ctx, total.view()).at(0);
    }
    return T{0};
  });
  return detail::dispatch(ctx, fn, on_cuda, [&] {
    for (std::int64_t i = 0; i < n; ++i) {
      std::int64_t const y = labels.data[i];
      COOPGNN_EXPECTS(0 <= y && y < num_classes, "{}: label of row {} is {}, outside [0, {})", fn,
                      i, y, num_classes);
    }
    double total = 0.0;
    for (std::int64_t i = 0; i < n; ++i) {
      const T* l = logits.data + i * num_classes;
      std::int64_t const y = labels.data[i];
      double mx = -std::numeric_limits<double>::infinity();
      for (std::int64_t j = 0; j < num_classes; ++j) mx = std::max(mx, static_cast<double>(l[j]));
      double sum = 0.0;
      for (std::int64_t j = 0; j < num_classes; ++j)
        sum += std::exp(static_cast<double>(l[j]) - mx);
      double const lse = mx + std::log(sum);
      total += lse - static_cast<double>(l[y]);
      if (want_grad) {
        T* g = grad.data + i * num_classes;
        for (std::int64_t j = 0; j < num_classes; ++j) {
          double const p = std::exp(static_cast<double>(l[j]) - lse);
          g[j] = static_cast<T>(static_cast<double>(scale) * (p - (j == y ? 1.0 : 0.0)));
        }
      }
    }
    return static_cast<T>(static_cast<double>(scale) * total);
  });
}

void adam_update(const exec_context& ctx, buffer_view<float> value, buffer_view<const float> grad,
                 buffer_view<float> m, buffer_view<float> v, const adam_step_params& a) {
  constexpr const char* fn = "adam_update";
  detail::expect_spaces(
      ctx, fn, {{"value", value.space}, {"grad", grad.space}, {"m", m.space}, {"v", v.space}});
  COOPGNN_EXPECTS(grad.size == value.size && m.size == value.size && v.size == value.size,
                  "{}: value has {} elements, grad {}, m {}, v {}", fn, value.size, grad.size,
                  m.size, v.size);
  if (value.empty()) return;
  auto const on_cuda = COOPGNN_CUDA_BRANCH([&] {
    cuda::adam_step(value.data, grad.data, m.data, v.data, static_cast<std::int64_t>(value.size), a,
                    ctx.cuda()->compute());
  });
  detail::dispatch(ctx, fn, on_cuda, [&] {
    // Element-wise: any split gives the same bits.
    parallel_rows(
        static_cast<std::int64_t>(value.size), ctx.threads(),
        [&](std::int64_t e0, std::int64_t e1) {
          for (std::int64_t e = e0; e < e1; ++e) {
            adam_element(value.data[e], grad.data[e], m.data[e], v.data[e], a);
          }
        },
        rows_for_work(16));
  });
}

#define COOPGNN_INSTANTIATE_ELEMENTWISE(T)                                                        \
  template void bias_activation<T>(const exec_context&, tensor_view<T>, buffer_view<const T>,     \
                                   bool);                                                         \
  template void relu_backward<T>(const exec_context&, tensor_view<const T>, tensor_view<const T>, \
                                 tensor_view<T>);                                                 \
  template void bias_grad_add<T>(const exec_context&, tensor_view<const T>, buffer_view<T>);      \
  template void dropout_forward<T>(const exec_context&, tensor_view<const T>,                     \
                                   buffer_view<const vid_t>, const dropout_key&, float, T,        \
                                   tensor_view<T>, buffer_view<std::uint8_t>);                    \
  template void dropout_backward<T>(const exec_context&, tensor_view<T>,                          \
                                    buffer_view<const std::uint8_t>, T);                          \
  template void gcn_edge_values<T>(const exec_context&, const block_view&, buffer_view<T>);       \
  template void gcn_self_add<T>(const exec_context&, buffer_view<const std::int64_t>,             \
                                tensor_view<const T>, tensor_view<T>);                            \
  template T softmax_cross_entropy<T>(const exec_context&, tensor_view<const T>,                  \
                                      buffer_view<const std::int64_t>, T, tensor_view<T>);

COOPGNN_INSTANTIATE_ELEMENTWISE(float)
COOPGNN_INSTANTIATE_ELEMENTWISE(double)
#undef COOPGNN_INSTANTIATE_ELEMENTWISE

}  // namespace coopgnn
