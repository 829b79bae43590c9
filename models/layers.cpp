#include "models/layers.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <exception>
#include <limits>
#include <thread>

#include "kernels/dense/gemm.hpp"
#include "kernels/sparse/spmm.hpp"
#include "runtime/core/error.hpp"
#include "runtime/core/rng.hpp"

namespace coopgnn::models {
namespace detail {
namespace {

/// Runs f(row_begin, row_end) over [0, n) cut into `threads` contiguous ranges, one std::thread
/// each (the caller's thread takes the first). Rethrows the first exception after joining.
template <typename F>
void parallel_rows(std::int64_t n, int threads, F&& f) {
  std::int64_t const t = std::clamp<std::int64_t>(threads, 1, std::max<std::int64_t>(n, 1));
  if (t == 1) {
    f(std::int64_t{0}, n);
    return;
  }
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(t));
  auto run = [&](std::int64_t w) {
    try {
      f(n * w / t, n * (w + 1) / t);
    } catch (...) {
      errors[static_cast<std::size_t>(w)] = std::current_exception();
    }
  };
  {
    std::vector<std::jthread> pool;
    pool.reserve(static_cast<std::size_t>(t - 1));
    for (std::int64_t w = 1; w < t; ++w) pool.emplace_back(run, w);
    run(0);
  }  // jthreads join here
  for (auto& e : errors) {
    if (e) std::rethrow_exception(e);
  }
}

template <typename T>
parameter<T> make_param(std::string name, std::int64_t rows, std::int64_t cols) {
  return parameter<T>{std::move(name), matrix<T>(rows, cols), matrix<T>(rows, cols)};
}

/// Glorot-uniform: element (r, c) of matrix `which` is (2u - 1) * sqrt(6 / (fan_in + fan_out)).
template <typename T>
void glorot_uniform(parameter<T>& p, std::uint64_t seed, std::uint32_t layer_index,
                    std::uint32_t which) {
  rng::stream const s = rng::make_stream(seed, rng::purpose::init, layer_index);
  double const a = std::sqrt(6.0 / static_cast<double>(p.value.rows() + p.value.cols()));
  for (std::int64_t r = 0; r < p.value.rows(); ++r) {
    for (std::int64_t c = 0; c < p.value.cols(); ++c) {
      auto const w =
          rng::draw4(s, static_cast<std::uint64_t>(r), static_cast<std::uint32_t>(c), which);
      double const u = rng::uniform_double(w[0], w[1]);
      p.value(r, c) = static_cast<T>((2.0 * u - 1.0) * a);
    }
  }
  p.grad.fill(T{0});
}

/// Applies the keyed dropout mask to x (rows keyed by ids). Returns the dropped copy and fills
/// keep [rows * cols].
template <typename T>
matrix<T> apply_dropout(const matrix<T>& x, std::span<const vid_t> ids, const step_key& key,
                        std::uint32_t layer_index, float p, std::vector<std::uint8_t>& keep,
                        T& scale) {
  rng::stream const s = rng::make_stream(key.run_seed, rng::purpose::dropout, layer_index);
  scale = T{1} / (T{1} - static_cast<T>(p));
  matrix<T> y(x.rows(), x.cols());
  keep.assign(static_cast<std::size_t>(x.size()), 0);
  for (std::int64_t i = 0; i < x.rows(); ++i) {
    auto const id = static_cast<std::uint64_t>(ids[static_cast<std::size_t>(i)]);
    const T* xr = x.row(i);
    T* yr = y.row(i);
    std::uint8_t* kr = keep.data() + i * x.cols();
    // One Philox call gives the variates of four consecutive columns (see dropout_keeps).
    for (std::int64_t j0 = 0; j0 < x.cols(); j0 += 4) {
      auto const w = rng::draw4(s, id, static_cast<std::uint32_t>(j0 / 4), key.batch);
      for (std::int64_t j = j0; j < std::min<std::int64_t>(j0 + 4, x.cols()); ++j) {
        bool const k = rng::to_unit(w[static_cast<std::size_t>(j - j0)]) >= p;
        kr[j] = k ? 1 : 0;
        yr[j] = k ? xr[j] * scale : T{0};
      }
    }
  }
  return y;
}

/// g[i, j] *= keep[i, j] ? scale : 0 (the backward of apply_dropout).
template <typename T>
void dropout_backward(matrix<T>& g, const std::vector<std::uint8_t>& keep, T scale) {
  T* gv = g.data();
  for (std::size_t e = 0; e < keep.size(); ++e) gv[e] = keep[e] != 0 ? gv[e] * scale : T{0};
}

/// out[s, :] = relu?(out[s, :] + bias) for s in [r0, r1).
template <typename T>
void bias_activation(matrix<T>& out, const matrix<T>& bias, bool relu, std::int64_t r0,
                     std::int64_t r1) {
  std::int64_t const n = out.cols();
  const T* __restrict bv = bias.data();
  for (std::int64_t s = r0; s < r1; ++s) {
    T* __restrict row = out.row(s);
    if (relu) {
      for (std::int64_t j = 0; j < n; ++j) {
        T const v = row[j] + bv[j];
        row[j] = v > T{0} ? v : T{0};
      }
    } else {
      for (std::int64_t j = 0; j < n; ++j) row[j] += bv[j];
    }
  }
}

/// grad_out masked by the ReLU derivative (out > 0), or copied when no ReLU.
template <typename T>
matrix<T> relu_backward(const matrix<T>& grad_out, const matrix<T>& out, bool relu) {
  matrix<T> g = grad_out;
  if (relu) {
    T* gv = g.data();
    const T* ov = out.data();
    for (std::int64_t e = 0; e < g.size(); ++e) gv[e] = ov[e] > T{0} ? gv[e] : T{0};
  }
  return g;
}

/// bias.grad[0, j] += sum_i g[i, j], rows in ascending order.
template <typename T>
void add_bias_grad(parameter<T>& bias, const matrix<T>& g) {
  T* __restrict bg = bias.grad.data();
  for (std::int64_t i = 0; i < g.rows(); ++i) {
    const T* __restrict gr = g.row(i);
    for (std::int64_t j = 0; j < g.cols(); ++j) bg[j] += gr[j];
  }
}

/// GCN self coefficient 1 / (d_s + 1).
template <typename T>
T gcn_self(const block& b, std::int64_t s) {
  return T{1} / static_cast<T>(b.src_degree[static_cast<std::size_t>(s)] + 1);
}

/// GCN edge coefficients w_e d_s / sqrt((d_s + 1)(d_t + 1)) for the edges of rows [r0, r1).
template <typename T>
void gcn_edge_values(const block& b, std::int64_t r0, std::int64_t r1, std::vector<T>& vals) {
  for (std::int64_t s = r0; s < r1; ++s) {
    T const ds = static_cast<T>(b.src_degree[static_cast<std::size_t>(s)]);
    for (eid_t e = b.indptr[s]; e < b.indptr[s + 1]; ++e) {
      auto const t = static_cast<std::size_t>(b.indices[static_cast<std::size_t>(e)]);
      T const dt = static_cast<T>(b.src_degree[t]);
      vals[static_cast<std::size_t>(e)] = static_cast<T>(b.weights[static_cast<std::size_t>(e)]) *
                                          ds / std::sqrt((ds + T{1}) * (dt + T{1}));
    }
  }
}

/// y[s, :] += c_s * x[s, :] for s in [r0, r1) with c_s the GCN self coefficient.
template <typename T>
void add_gcn_self(const block& b, const matrix<T>& x, matrix<T>& y, std::int64_t r0,
                  std::int64_t r1) {
  std::int64_t const n = y.cols();
  for (std::int64_t s = r0; s < r1; ++s) {
    T const c = gcn_self<T>(b, s);
    const T* __restrict xr = x.row(s);
    T* __restrict yr = y.row(s);
    for (std::int64_t j = 0; j < n; ++j) yr[j] += c * xr[j];
  }
}

void check_dims(std::int64_t in_dim, std::int64_t out_dim, float dropout, const char* what) {
  COOPGNN_EXPECTS(in_dim >= 1 && out_dim >= 1, "{}: in_dim = {} and out_dim = {} must be >= 1",
                  what, in_dim, out_dim);
  COOPGNN_EXPECTS(dropout >= 0.0f && dropout < 1.0f, "{}: dropout = {} is outside [0, 1)", what,
                  dropout);
}

}  // namespace
}  // namespace detail

bool dropout_keeps(std::uint64_t run_seed, std::uint32_t batch, std::uint32_t layer_index,
                   vid_t vertex, std::int64_t column, float p) {
  rng::stream const s = rng::make_stream(run_seed, rng::purpose::dropout, layer_index);
  auto const w = rng::draw4(s, static_cast<std::uint64_t>(vertex),
                            static_cast<std::uint32_t>(column / 4), batch);
  return rng::to_unit(w[static_cast<std::size_t>(column % 4)]) >= p;
}

// ---- conv_layer ----------------------------------------------------------------------------

template <typename T>
conv_layer<T>::conv_layer(conv_kind kind, std::int64_t in_dim, std::int64_t out_dim,
                          std::uint32_t layer_index, bool apply_relu, float dropout)
    : kind_(kind),
      in_dim_(in_dim),
      out_dim_(out_dim),
      layer_index_(layer_index),
      apply_relu_(apply_relu),
      dropout_(dropout) {
  detail::check_dims(in_dim, out_dim, dropout, "conv_layer");
  std::string const prefix =
      fmt::format("{}{}", kind == conv_kind::sage ? "sage" : "gcn", layer_index);
  if (kind == conv_kind::sage) {
    w_self_ = detail::make_param<T>(prefix + ".w_self", in_dim, out_dim);
    w_neigh_ = detail::make_param<T>(prefix + ".w_neigh", in_dim, out_dim);
  } else {
    w_self_ = detail::make_param<T>(prefix + ".weight", in_dim, out_dim);
  }
  bias_ = detail::make_param<T>(prefix + ".bias", 1, out_dim);
}

template <typename T>
void conv_layer<T>::init(std::uint64_t seed) {
  detail::glorot_uniform(w_self_, seed, layer_index_, 0);
  if (kind_ == conv_kind::sage) detail::glorot_uniform(w_neigh_, seed, layer_index_, 1);
  bias_.value.fill(T{0});
  bias_.grad.fill(T{0});
}

template <typename T>
std::vector<parameter<T>*> conv_layer<T>::params() {
  if (kind_ == conv_kind::sage) return {&w_self_, &w_neigh_, &bias_};
  return {&w_self_, &bias_};
}

template <typename T>
void conv_layer<T>::check_block(const block& b, const matrix<T>& h_src, const char* fn) const {
  COOPGNN_EXPECTS(b.num_dst >= 0 && b.num_dst <= b.num_src(),
                  "{}: block has num_dst = {} but {} sources", fn, b.num_dst, b.num_src());
  COOPGNN_EXPECTS(static_cast<std::int64_t>(b.indptr.size()) == b.num_dst + 1,
                  "{}: block indptr has {} offsets for {} destinations", fn, b.indptr.size(),
                  b.num_dst);
  COOPGNN_EXPECTS(b.weights.size() == b.indices.size(), "{}: block has {} weights for {} edges", fn,
                  b.weights.size(), b.indices.size());
  COOPGNN_EXPECTS(h_src.rows() == b.num_src() && h_src.cols() == in_dim_,
                  "{}: h_src is [{}, {}] but the block has {} sources and in_dim is {}", fn,
                  h_src.rows(), h_src.cols(), b.num_src(), in_dim_);
  if (kind_ == conv_kind::gcn) {
    COOPGNN_EXPECTS(static_cast<std::int64_t>(b.src_degree.size()) == b.num_src(),
                    "{}: block src_degree has {} entries for {} sources (GCN needs degrees)", fn,
                    b.src_degree.size(), b.num_src());
    for (std::size_t i = 0; i < b.src_degree.size(); ++i) {
      COOPGNN_EXPECTS(b.src_degree[i] >= 0, "{}: src_degree[{}] = {} is negative", fn, i,
                      b.src_degree[i]);
    }
  }
}

template <typename T>
void conv_layer<T>::compute(const block& b, const matrix<T>& h, int threads, matrix<T>& mid,
                            std::vector<T>& edge_values, matrix<T>& out) const {
  std::int64_t const num_dst = b.num_dst;
  std::int64_t const num_src = b.num_src();
  std::int64_t const in = in_dim_;
  std::int64_t const od = out_dim_;
  bool const gcn = kind_ == conv_kind::gcn;
  if (gcn) {
    edge_values.assign(b.indices.size(), T{0});
  } else {
    edge_values.clear();
  }
  std::span<const T> const ev(edge_values);
  out.reset(num_dst, od);
  const T* w_self = w_self_.value.data();  // SAGE W_self, GCN W
  const T* w_neigh = gcn ? w_self : w_neigh_.value.data();

  if (!transform_first()) {
    // Aggregate [num_dst, in], then transform.
    mid.reset(num_dst, in);
    detail::parallel_rows(num_dst, threads, [&](std::int64_t r0, std::int64_t r1) {
      if (r0 == r1) return;
      if (gcn) {
        detail::gcn_edge_values(b, r0, r1, edge_values);
        spmm<T>(b.indptr, b.indices, ev, h, mid, r0, r1);
        detail::add_gcn_self(b, h, mid, r0, r1);
        gemm<T>(op::none, op::none, r1 - r0, od, in, T{1}, mid.row(r0), in, w_self, od, T{0},
                out.row(r0), od);
      } else {
        spmm<T>(b, h, mid, r0, r1);
        gemm<T>(op::none, op::none, r1 - r0, od, in, T{1}, h.row(r0), in, w_self, od, T{0},
                out.row(r0), od);
        gemm<T>(op::none, op::none, r1 - r0, od, in, T{1}, mid.row(r0), in, w_neigh, od, T{1},
                out.row(r0), od);
      }
      detail::bias_activation(out, bias_.value, apply_relu_, r0, r1);
    });
  } else {
    // Transform every source [num_src, out], then aggregate.
    mid.reset(num_src, od);
    detail::parallel_rows(num_src, threads, [&](std::int64_t r0, std::int64_t r1) {
      if (r0 == r1) return;
      gemm<T>(op::none, op::none, r1 - r0, od, in, T{1}, h.row(r0), in, w_neigh, od, T{0},
              mid.row(r0), od);
    });
    detail::parallel_rows(num_dst, threads, [&](std::int64_t r0, std::int64_t r1) {
      if (r0 == r1) return;
      if (gcn) {
        detail::gcn_edge_values(b, r0, r1, edge_values);
        spmm<T>(b.indptr, b.indices, ev, mid, out, r0, r1);
        detail::add_gcn_self(b, mid, out, r0, r1);
      } else {
        spmm<T>(b, mid, out, r0, r1);
        gemm<T>(op::none, op::none, r1 - r0, od, in, T{1}, h.row(r0), in, w_self, od, T{1},
                out.row(r0), od);
      }
      detail::bias_activation(out, bias_.value, apply_relu_, r0, r1);
    });
  }
}

template <typename T>
matrix<T> conv_layer<T>::forward(const block& b, const matrix<T>& h_src, const step_key& key,
                                 conv_cache<T>* cache) const {
  check_block(b, h_src, "conv_layer::forward");
  conv_cache<T> local;
  conv_cache<T>& c = cache != nullptr ? *cache : local;
  bool const drop = key.training && dropout_ > 0.0f;
  if (drop) {
    c.h = detail::apply_dropout(h_src, std::span<const vid_t>(b.src_ids), key, layer_index_,
                                dropout_, c.keep, c.keep_scale);
  } else {
    c.keep.clear();
    c.keep_scale = T{1};
    if (cache != nullptr) c.h = h_src;
  }
  const matrix<T>& h = drop || cache != nullptr ? c.h : h_src;
  matrix<T> out;
  compute(b, h, 1, c.mid, c.edge_values, out);
  if (cache != nullptr) c.out = out;
  return out;
}

template <typename T>
matrix<T> conv_layer<T>::infer(const block& b, const matrix<T>& h_src, int threads) const {
  check_block(b, h_src, "conv_layer::infer");
  COOPGNN_EXPECTS(threads >= 1, "conv_layer::infer: threads = {} must be >= 1", threads);
  matrix<T> mid;
  std::vector<T> edge_values;
  matrix<T> out;
  compute(b, h_src, threads, mid, edge_values, out);
  return out;
}

template <typename T>
matrix<T> conv_layer<T>::backward(const block& b, const matrix<T>& grad_out,
                                  const conv_cache<T>& cache) {
  check_block(b, cache.h, "conv_layer::backward (cache.h)");
  std::int64_t const num_dst = b.num_dst;
  std::int64_t const num_src = b.num_src();
  std::int64_t const in = in_dim_;
  std::int64_t const od = out_dim_;
  bool const gcn = kind_ == conv_kind::gcn;
  COOPGNN_EXPECTS(grad_out.rows() == num_dst && grad_out.cols() == od,
                  "conv_layer::backward: grad_out is [{}, {}], expected [{}, {}]", grad_out.rows(),
                  grad_out.cols(), num_dst, od);
  COOPGNN_EXPECTS(cache.out.rows() == num_dst && cache.out.cols() == od,
                  "conv_layer::backward: cache.out is [{}, {}], expected [{}, {}] (was forward "
                  "called with this block and a cache?)",
                  cache.out.rows(), cache.out.cols(), num_dst, od);
  std::int64_t const mid_rows = transform_first() ? num_src : num_dst;
  std::int64_t const mid_cols = transform_first() ? od : in;
  COOPGNN_EXPECTS(cache.mid.rows() == mid_rows && cache.mid.cols() == mid_cols,
                  "conv_layer::backward: cache.mid is [{}, {}], expected [{}, {}]",
                  cache.mid.rows(), cache.mid.cols(), mid_rows, mid_cols);
  COOPGNN_EXPECTS(!gcn || cache.edge_values.size() == b.indices.size(),
                  "conv_layer::backward: cache has {} GCN edge values for {} edges",
                  cache.edge_values.size(), b.indices.size());
  COOPGNN_EXPECTS(
      cache.keep.empty() || static_cast<std::int64_t>(cache.keep.size()) == num_src * in,
      "conv_layer::backward: dropout mask has {} entries, expected {}", cache.keep.size(),
      num_src * in);

  matrix<T> const g = detail::relu_backward(grad_out, cache.out, apply_relu_);
  detail::add_bias_grad(bias_, g);
  const matrix<T>& h = cache.h;
  std::span<const T> const ev(cache.edge_values);
  matrix<T> gh(num_src, in);

  if (!transform_first()) {
    const matrix<T>& agg = cache.mid;
    matrix<T> gagg(num_dst, in);
    if (gcn) {
      gemm<T>(op::transpose, op::none, T{1}, agg, g, T{1}, w_self_.grad);  // dW += agg^T g
      gemm<T>(op::none, op::transpose, T{1}, g, w_self_.value, T{0}, gagg);
      spmm_transpose_add<T>(b.indptr, b.indices, ev, gagg, gh);
      detail::add_gcn_self(b, gagg, gh, 0, num_dst);
    } else {
      // dW_self += h_dst^T g (h_dst = first num_dst rows of h), dW_neigh += agg^T g.
      gemm<T>(op::transpose, op::none, in, od, num_dst, T{1}, h.data(), in, g.data(), od, T{1},
              w_self_.grad.data(), od);
      gemm<T>(op::transpose, op::none, T{1}, agg, g, T{1}, w_neigh_.grad);
      gemm<T>(op::none, op::transpose, num_dst, in, od, T{1}, g.data(), od, w_self_.value.data(),
              od, T{0}, gh.data(), in);
      gemm<T>(op::none, op::transpose, T{1}, g, w_neigh_.value, T{0}, gagg);
      spmm_transpose_add<T>(b, gagg, gh);
    }
  } else {
    matrix<T> gz(num_src, od);
    if (gcn) {
      spmm_transpose_add<T>(b.indptr, b.indices, ev, g, gz);
      detail::add_gcn_self(b, g, gz, 0, num_dst);
      gemm<T>(op::transpose, op::none, T{1}, h, gz, T{1}, w_self_.grad);
      gemm<T>(op::none, op::transpose, T{1}, gz, w_self_.value, T{0}, gh);
    } else {
      gemm<T>(op::transpose, op::none, in, od, num_dst, T{1}, h.data(), in, g.data(), od, T{1},
              w_self_.grad.data(), od);
      spmm_transpose_add<T>(b, g, gz);
      gemm<T>(op::transpose, op::none, T{1}, h, gz, T{1}, w_neigh_.grad);
      gemm<T>(op::none, op::transpose, T{1}, gz, w_neigh_.value, T{0}, gh);
      gemm<T>(op::none, op::transpose, num_dst, in, od, T{1}, g.data(), od, w_self_.value.data(),
              od, T{1}, gh.data(), in);
    }
  }
  if (!cache.keep.empty()) detail::dropout_backward(gh, cache.keep, cache.keep_scale);
  return gh;
}

// ---- linear_layer --------------------------------------------------------------------------

template <typename T>
linear_layer<T>::linear_layer(std::int64_t in_dim, std::int64_t out_dim, std::uint32_t layer_index,
                              float dropout)
    : in_dim_(in_dim), out_dim_(out_dim), layer_index_(layer_index), dropout_(dropout) {
  detail::check_dims(in_dim, out_dim, dropout, "linear_layer");
  weight_ = detail::make_param<T>(fmt::format("linear{}.weight", layer_index), in_dim, out_dim);
  bias_ = detail::make_param<T>(fmt::format("linear{}.bias", layer_index), 1, out_dim);
}

template <typename T>
void linear_layer<T>::init(std::uint64_t seed) {
  detail::glorot_uniform(weight_, seed, layer_index_, 0);
  bias_.value.fill(T{0});
  bias_.grad.fill(T{0});
}

template <typename T>
std::vector<parameter<T>*> linear_layer<T>::params() {
  return {&weight_, &bias_};
}

template <typename T>
matrix<T> linear_layer<T>::forward(const matrix<T>& x, std::span<const vid_t> row_ids,
                                   const step_key& key, linear_cache<T>* cache) const {
  COOPGNN_EXPECTS(x.cols() == in_dim_, "linear_layer::forward: x is [{}, {}] but in_dim is {}",
                  x.rows(), x.cols(), in_dim_);
  bool const drop = key.training && dropout_ > 0.0f;
  linear_cache<T> local;
  linear_cache<T>& c = cache != nullptr ? *cache : local;
  if (drop) {
    COOPGNN_EXPECTS(static_cast<std::int64_t>(row_ids.size()) == x.rows(),
                    "linear_layer::forward: {} row_ids for {} rows (dropout needs one id a row)",
                    row_ids.size(), x.rows());
    c.x = detail::apply_dropout(x, row_ids, key, layer_index_, dropout_, c.keep, c.keep_scale);
  } else {
    c.keep.clear();
    c.keep_scale = T{1};
    if (cache != nullptr) c.x = x;
  }
  const matrix<T>& xin = drop || cache != nullptr ? c.x : x;
  matrix<T> y(x.rows(), out_dim_);
  gemm<T>(op::none, op::none, T{1}, xin, weight_.value, T{0}, y);
  detail::bias_activation(y, bias_.value, false, 0, y.rows());
  return y;
}

template <typename T>
matrix<T> linear_layer<T>::infer(const matrix<T>& x, int threads) const {
  COOPGNN_EXPECTS(x.cols() == in_dim_, "linear_layer::infer: x is [{}, {}] but in_dim is {}",
                  x.rows(), x.cols(), in_dim_);
  COOPGNN_EXPECTS(threads >= 1, "linear_layer::infer: threads = {} must be >= 1", threads);
  matrix<T> y(x.rows(), out_dim_);
  detail::parallel_rows(x.rows(), threads, [&](std::int64_t r0, std::int64_t r1) {
    if (r0 == r1) return;
    gemm<T>(op::none, op::none, r1 - r0, out_dim_, in_dim_, T{1}, x.row(r0), in_dim_,
            weight_.value.data(), out_dim_, T{0}, y.row(r0), out_dim_);
    detail::bias_activation(y, bias_.value, false, r0, r1);
  });
  return y;
}

template <typename T>
matrix<T> linear_layer<T>::backward(const matrix<T>& grad_out, const linear_cache<T>& cache) {
  COOPGNN_EXPECTS(cache.x.cols() == in_dim_,
                  "linear_layer::backward: cache.x is [{}, {}] but in_dim is {} (was forward "
                  "called with a cache?)",
                  cache.x.rows(), cache.x.cols(), in_dim_);
  COOPGNN_EXPECTS(grad_out.rows() == cache.x.rows() && grad_out.cols() == out_dim_,
                  "linear_layer::backward: grad_out is [{}, {}], expected [{}, {}]",
                  grad_out.rows(), grad_out.cols(), cache.x.rows(), out_dim_);
  COOPGNN_EXPECTS(
      cache.keep.empty() || static_cast<std::int64_t>(cache.keep.size()) == cache.x.size(),
      "linear_layer::backward: dropout mask has {} entries, expected {}", cache.keep.size(),
      cache.x.size());
  detail::add_bias_grad(bias_, grad_out);
  gemm<T>(op::transpose, op::none, T{1}, cache.x, grad_out, T{1}, weight_.grad);
  matrix<T> gx(grad_out.rows(), in_dim_);
  gemm<T>(op::none, op::transpose, T{1}, grad_out, weight_.value, T{0}, gx);
  if (!cache.keep.empty()) detail::dropout_backward(gx, cache.keep, cache.keep_scale);
  return gx;
}

// ---- loss ----------------------------------------------------------------------------------

template <typename T>
T softmax_cross_entropy(const matrix<T>& logits, std::span<const std::int64_t> labels, T scale,
                        matrix<T>* grad) {
  std::int64_t const n = logits.rows();
  std::int64_t const num_classes = logits.cols();
  COOPGNN_EXPECTS(static_cast<std::int64_t>(labels.size()) == n,
                  "softmax_cross_entropy: {} labels for {} rows of logits", labels.size(), n);
  COOPGNN_EXPECTS(n == 0 || num_classes >= 1,
                  "softmax_cross_entropy: logits have {} rows but no class columns", n);
  COOPGNN_EXPECTS(grad != &logits, "softmax_cross_entropy: grad is the same matrix as logits");
  for (std::int64_t i = 0; i < n; ++i) {
    std::int64_t const y = labels[static_cast<std::size_t>(i)];
    COOPGNN_EXPECTS(0 <= y && y < num_classes,
                    "softmax_cross_entropy: label of row {} is {}, outside [0, {})", i, y,
                    num_classes);
  }
  if (grad != nullptr) grad->reset(n, num_classes);
  double total = 0.0;
  for (std::int64_t i = 0; i < n; ++i) {
    const T* l = logits.row(i);
    std::int64_t const y = labels[static_cast<std::size_t>(i)];
    double mx = -std::numeric_limits<double>::infinity();
    for (std::int64_t j = 0; j < num_classes; ++j) mx = std::max(mx, static_cast<double>(l[j]));
    double sum = 0.0;
    for (std::int64_t j = 0; j < num_classes; ++j) sum += std::exp(static_cast<double>(l[j]) - mx);
    double const lse = mx + std::log(sum);
    total += lse - static_cast<double>(l[y]);
    if (grad != nullptr) {
      T* g = grad->row(i);
      for (std::int64_t j = 0; j < num_classes; ++j) {
        double const p = std::exp(static_cast<double>(l[j]) - lse);
        g[j] = static_cast<T>(static_cast<double>(scale) * (p - (j == y ? 1.0 : 0.0)));
      }
    }
  }
  return static_cast<T>(static_cast<double>(scale) * total);
}

template class conv_layer<float>;
template class conv_layer<double>;
template class linear_layer<float>;
template class linear_layer<double>;
template float softmax_cross_entropy<float>(const matrix<float>&, std::span<const std::int64_t>,
                                            float, matrix<float>*);
template double softmax_cross_entropy<double>(const matrix<double>&, std::span<const std::int64_t>,
                                              double, matrix<double>*);

}  // namespace coopgnn::models
