#include "models/link_layers.hpp"

#include "kernels/dense/elementwise.hpp"
#include "kernels/dense/link_ops.hpp"
#include "kernels/gather/gather.hpp"
#include "models/param_init.hpp"
#include "runtime/core/error.hpp"
#include "runtime/core/nvtx.hpp"

namespace coopgnn::models {

std::string to_string(activation_kind k) { return k == activation_kind::prelu ? "prelu" : "relu"; }

activation_kind parse_activation_kind(const std::string& name) {
  if (name == "relu") return activation_kind::relu;
  if (name == "prelu") return activation_kind::prelu;
  throw logic_error(fmt::format("--activation '{}' is not one of: relu, prelu", name));
}

std::string to_string(decoder_kind k) {
  switch (k) {
    case decoder_kind::mlp:
      return "mlp";
    case decoder_kind::distmult:
      return "distmult";
    case decoder_kind::dot:
      break;
  }
  return "dot";
}

decoder_kind parse_decoder_kind(const std::string& name) {
  if (name == "dot") return decoder_kind::dot;
  if (name == "mlp") return decoder_kind::mlp;
  if (name == "distmult") return decoder_kind::distmult;
  throw logic_error(fmt::format("--decoder '{}' is not one of: dot, mlp, distmult", name));
}

namespace {

/// Sets every element of parameter i to `value` (computed on the host, copied) and clears its
/// gradient.
template <typename T>
void fill_param(const exec_context& ctx, parameter_set<T>& ps, std::size_t i, T value) {
  auto const& info = ps.info(i);
  std::vector<T> v(static_cast<std::size_t>(info.rows * info.cols), value);
  copy<T>(ctx, ps.value(i).flat(), host_view(std::as_const(v)));
  fill_zero(ctx, ps.grad(i).flat());
}

/// A copy of x in ctx.space() (what caches keep).
template <typename T>
tensor<T> copy_of(const exec_context& ctx, tensor_view<const T> x) {
  return tensor<T>(clone<T>(ctx, x.flat()), x.rows, x.cols);
}

/// rows[i, :] = z[idx[i], :] in T (gather_rows is float32; the double path gathers on the host).
template <typename T>
tensor<T> gather_pairs(const exec_context& ctx, tensor_view<const T> z,
                       buffer_view<const std::int64_t> idx) {
  tensor<T> out(ctx, static_cast<std::int64_t>(idx.size), z.cols);
  if constexpr (std::is_same_v<T, float>) {
    gather_rows(ctx, z, idx, out.view());
  } else {
    // Host or emulated memory (double runs on no device): the reference loop.
    coopgnn::detail::expect_space(ctx, z.space, "link_decoder", "z");
    auto const* zs = z.data;
    for (std::size_t i = 0; i < idx.size; ++i) {
      std::int64_t const r = idx.data[i];
      COOPGNN_EXPECTS(r >= 0 && r < z.rows,
                      "link_decoder: pair row {} at position {} is outside "
                      "[0, {})",
                      r, i, z.rows);
      for (std::int64_t j = 0; j < z.cols; ++j) {
        out.data()[static_cast<std::int64_t>(i) * z.cols + j] = zs[r * z.cols + j];
      }
    }
  }
  return out;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// norm_activation

template <typename T>
norm_activation<T>::norm_activation(std::int64_t dim, bool layer_norm, activation_kind act,
                                    std::uint32_t layer_index, parameter_set<T>& params)
    : dim_(dim), layer_norm_(layer_norm), act_(act), params_(&params) {
  COOPGNN_EXPECTS(dim >= 1, "norm_activation: dim = {} must be >= 1", dim);
  if (layer_norm) {
    gamma_ = params.add(fmt::format("ln{}.gamma", layer_index), 1, dim);
    beta_ = params.add(fmt::format("ln{}.beta", layer_index), 1, dim);
  }
  if (act == activation_kind::prelu) {
    alpha_ = params.add(fmt::format("prelu{}.alpha", layer_index), 1, 1);
  }
}

template <typename T>
void norm_activation<T>::init(const exec_context& ctx) {
  if (layer_norm_) {
    fill_param<T>(ctx, *params_, gamma_, T{1});
    fill_param<T>(ctx, *params_, beta_, T{0});
  }
  if (act_ == activation_kind::prelu) fill_param<T>(ctx, *params_, alpha_, T(0.25));
}

template <typename T>
tensor<T> norm_activation<T>::forward(const exec_context& ctx, tensor_view<const T> x,
                                      norm_activation_cache<T>* cache) const {
  COOPGNN_NVTX_RANGE("model/norm_activation/forward");
  coopgnn::detail::expect_space(ctx, x.space, "norm_activation::forward", "x");
  COOPGNN_EXPECTS(x.cols == dim_, "norm_activation::forward: x is [{}, {}], dim is {}", x.rows,
                  x.cols, dim_);
  norm_activation_cache<T> local;
  norm_activation_cache<T>& c = cache != nullptr ? *cache : local;
  tensor_view<const T> a = x;
  tensor<T> normed;
  if (layer_norm_) {
    normed = tensor<T>(ctx, x.rows, x.cols);
    c.mean = buffer<T>(ctx, static_cast<std::size_t>(x.rows));
    c.rstd = buffer<T>(ctx, static_cast<std::size_t>(x.rows));
    layer_norm_forward<T>(ctx, x, params_->value(gamma_).flat(), params_->value(beta_).flat(),
                          T(1e-5), normed.view(), c.mean.view(), c.rstd.view());
    a = normed.view();
  }
  tensor<T> y(ctx, x.rows, x.cols);
  if (act_ == activation_kind::prelu) {
    prelu_forward<T>(ctx, a, params_->value(alpha_).flat(), y.view());
  } else {
    copy<T>(ctx, y.view().flat(), a.flat());
    tensor<T> const zero = zeros<T>(ctx, 1, x.cols);
    bias_activation<T>(ctx, y.view(), zero.view().flat(), true);
  }
  if (cache != nullptr) {
    c.x = copy_of<T>(ctx, x);
    c.pre = std::move(normed);
    if (act_ == activation_kind::relu) c.out = copy_of<T>(ctx, y.view());
  }
  return y;
}

template <typename T>
tensor<T> norm_activation<T>::backward(const exec_context& ctx, tensor_view<const T> grad_out,
                                       const norm_activation_cache<T>& cache) {
  COOPGNN_NVTX_RANGE("model/norm_activation/backward");
  COOPGNN_EXPECTS(
      grad_out.rows == cache.x.rows() && grad_out.cols == dim_ && cache.x.cols() == dim_,
      "norm_activation::backward: grad_out is [{}, {}], the cache's input [{}, {}]", grad_out.rows,
      grad_out.cols, cache.x.rows(), cache.x.cols());
  // The activation's input: LayerNorm's output, or x itself.
  tensor_view<const T> const a = layer_norm_ ? cache.pre.view() : cache.x.view();
  tensor<T> g(ctx, grad_out.rows, grad_out.cols);
  if (act_ == activation_kind::prelu) {
    prelu_backward<T>(ctx, grad_out, a, params_->value(alpha_).flat(), g.view(),
                      params_->grad(alpha_).flat());
  } else {
    relu_backward<T>(ctx, grad_out, cache.out.view(), g.view());
  }
  if (!layer_norm_) return g;
  tensor<T> gx(ctx, grad_out.rows, grad_out.cols);
  layer_norm_backward<T>(ctx, g.view(), cache.x.view(), params_->value(gamma_).flat(),
                         cache.mean.view(), cache.rstd.view(), gx.view(),
                         params_->grad(gamma_).flat(), params_->grad(beta_).flat());
  return gx;
}

// ---------------------------------------------------------------------------------------------
// link_decoder

template <typename T>
link_decoder<T>::link_decoder(decoder_kind kind, std::int64_t dim, std::int64_t hidden,
                              std::uint32_t layer_index, parameter_set<T>& params,
                              std::int64_t num_relations)
    : kind_(kind), dim_(dim), hidden_(hidden), layer_index_(layer_index), params_(&params) {
  COOPGNN_EXPECTS(dim >= 1, "link_decoder: dim = {} must be >= 1", dim);
  if (kind == decoder_kind::distmult) {
    COOPGNN_EXPECTS(num_relations >= 1, "link_decoder: distmult needs >= 1 relation, got {}",
                    num_relations);
    num_relations_ = num_relations;
    rel_weight_ = params.add(fmt::format("distmult{}.relation", layer_index), num_relations, dim);
    return;
  }
  if (kind != decoder_kind::mlp) return;
  COOPGNN_EXPECTS(hidden >= 1, "link_decoder: --decoder-hidden = {} must be >= 1", hidden);
  linears_.reserve(2);
  linears_.emplace_back(dim, hidden, layer_index, 0.0f, params);
  alpha_ = params.add(fmt::format("prelu{}.alpha", layer_index), 1, 1);
  linears_.emplace_back(hidden, 1, layer_index + 1, 0.0f, params);
}

template <typename T>
void link_decoder<T>::init(const exec_context& ctx, std::uint64_t seed) {
  if (kind_ == decoder_kind::distmult) {
    fill_param<T>(ctx, *params_, rel_weight_, T(1));
    return;
  }
  if (kind_ != decoder_kind::mlp) return;
  for (auto& l : linears_) l.init(ctx, seed);
  fill_param<T>(ctx, *params_, alpha_, T(0.25));
}

template <typename T>
buffer<T> link_decoder<T>::forward(const exec_context& ctx, tensor_view<const T> z,
                                   buffer_view<const std::int64_t> src,
                                   buffer_view<const std::int64_t> dst,
                                   decoder_cache<T>* cache) const {
  return forward(ctx, z, src, dst, buffer_view<const std::int64_t>{nullptr, 0, ctx.space()}, cache);
}

template <typename T>
tensor<T> link_decoder<T>::backward(const exec_context& ctx, buffer_view<const T> grad_scores,
                                    buffer_view<const std::int64_t> src,
                                    buffer_view<const std::int64_t> dst, std::int64_t n,
                                    const decoder_cache<T>& cache) {
  return backward(ctx, grad_scores, src, dst,
                  buffer_view<const std::int64_t>{nullptr, 0, ctx.space()}, n, cache);
}

namespace {

/// The pairs' relation indices: `rel` itself, or (empty rel) m zeros in ctx.space().
/// @throws logic_error when rel is neither empty nor m long.
buffer_view<const std::int64_t> relations_or_zero(const exec_context& ctx,
                                                  buffer_view<const std::int64_t> rel,
                                                  std::size_t m, buffer<std::int64_t>& owned,
                                                  const char* fn) {
  COOPGNN_EXPECTS(rel.size == 0 || rel.size == m, "{}: {} relations for {} pairs", fn, rel.size, m);
  if (rel.size == m && m > 0) {
    coopgnn::detail::expect_space(ctx, rel.space, fn, "rel");
    return rel;
  }
  owned = buffer<std::int64_t>(ctx, m);
  fill_zero(ctx, owned.view());
  return std::as_const(owned).view();
}

}  // namespace

template <typename T>
buffer<T> link_decoder<T>::forward(const exec_context& ctx, tensor_view<const T> z,
                                   buffer_view<const std::int64_t> src,
                                   buffer_view<const std::int64_t> dst,
                                   buffer_view<const std::int64_t> rel,
                                   decoder_cache<T>* cache) const {
  COOPGNN_NVTX_RANGE("model/decoder/forward");
  constexpr const char* fn = "link_decoder::forward";
  coopgnn::detail::expect_space(ctx, z.space, fn, "z");
  coopgnn::detail::expect_space(ctx, src.space, fn, "src");
  coopgnn::detail::expect_space(ctx, dst.space, fn, "dst");
  COOPGNN_EXPECTS(z.cols == dim_, "{}: z is [{}, {}] but dim is {}", fn, z.rows, z.cols, dim_);
  COOPGNN_EXPECTS(src.size == dst.size, "{}: {} sources for {} destinations", fn, src.size,
                  dst.size);
  auto const m = static_cast<std::int64_t>(src.size);
  tensor<T> zu = gather_pairs<T>(ctx, z, src);
  tensor<T> zv = gather_pairs<T>(ctx, z, dst);
  buffer<T> scores(ctx, static_cast<std::size_t>(m));
  decoder_cache<T> local;
  decoder_cache<T>& c = cache != nullptr ? *cache : local;
  if (kind_ == decoder_kind::dot) {
    row_dot<T>(ctx, zu.view(), zv.view(), scores.view());
  } else if (kind_ == decoder_kind::distmult) {
    // s_i = <z_u * w_{r_i}, z_v>.
    buffer<std::int64_t> zero_rel;
    auto const r = relations_or_zero(ctx, rel, src.size, zero_rel, fn);
    tensor<T> wr = gather_pairs<T>(ctx, params_->value(rel_weight_), r);
    tensor<T> a(ctx, m, dim_);
    hadamard<T>(ctx, zu.view(), wr.view(), a.view());
    row_dot<T>(ctx, a.view(), zv.view(), scores.view());
    if (cache != nullptr) c.wr = std::move(wr);
  } else {
    tensor<T> x(ctx, m, dim_);
    hadamard<T>(ctx, zu.view(), zv.view(), x.view());
    step_key const none{};
    tensor<T> pre = linears_[0].forward(ctx, x.view(), {}, none, cache ? &c.l1 : nullptr);
    tensor<T> act(ctx, m, hidden_);
    prelu_forward<T>(ctx, pre.view(), params_->value(alpha_).flat(), act.view());
    tensor<T> s = linears_[1].forward(ctx, act.view(), {}, none, cache ? &c.l2 : nullptr);
    copy<T>(ctx, scores.view(), s.view().flat());
    if (cache != nullptr) c.pre = std::move(pre);
  }
  if (cache != nullptr) {
    c.zu = std::move(zu);
    c.zv = std::move(zv);
  }
  return scores;
}

template <typename T>
tensor<T> link_decoder<T>::backward(const exec_context& ctx, buffer_view<const T> grad_scores,
                                    buffer_view<const std::int64_t> src,
                                    buffer_view<const std::int64_t> dst,
                                    buffer_view<const std::int64_t> rel, std::int64_t n,
                                    const decoder_cache<T>& cache) {
  COOPGNN_NVTX_RANGE("model/decoder/backward");
  constexpr const char* fn = "link_decoder::backward";
  auto const m = static_cast<std::int64_t>(src.size);
  COOPGNN_EXPECTS(static_cast<std::int64_t>(grad_scores.size) == m && dst.size == src.size &&
                      cache.zu.rows() == m && cache.zv.rows() == m,
                  "{}: {} score gradients, {} sources, {} destinations, {} cached pairs", fn,
                  grad_scores.size, src.size, dst.size, cache.zu.rows());
  tensor<T> gu(ctx, m, dim_);
  tensor<T> gv(ctx, m, dim_);
  if (kind_ == decoder_kind::dot) {
    // d<zu, zv>/dzu = zv, and the reverse.
    scale_rows<T>(ctx, grad_scores, cache.zv.view(), gu.view());
    scale_rows<T>(ctx, grad_scores, cache.zu.view(), gv.view());
  } else if (kind_ == decoder_kind::distmult) {
    COOPGNN_EXPECTS(cache.wr.rows() == m && cache.wr.cols() == dim_,
                    "{}: the cache holds {} relation rows for {} pairs", fn, cache.wr.rows(), m);
    buffer<std::int64_t> zero_rel;
    auto const r = relations_or_zero(ctx, rel, src.size, zero_rel, fn);
    tensor<T> t(ctx, m, dim_);
    // dz_u = g (w_r * z_v), dz_v = g (z_u * w_r), dw_r += g (z_u * z_v).
    hadamard<T>(ctx, cache.wr.view(), cache.zv.view(), t.view());
    scale_rows<T>(ctx, grad_scores, t.view(), gu.view());
    hadamard<T>(ctx, cache.zu.view(), cache.wr.view(), t.view());
    scale_rows<T>(ctx, grad_scores, t.view(), gv.view());
    hadamard<T>(ctx, cache.zu.view(), cache.zv.view(), t.view());
    scale_rows<T>(ctx, grad_scores, t.view(), t.view());
    scatter_add_rows<T>(ctx, t.view(), r, params_->grad(rel_weight_));
  } else {
    tensor_view<const T> const gs{grad_scores.data, m, 1, grad_scores.space};
    tensor<T> gact = linears_[1].backward(ctx, gs, cache.l2);
    tensor<T> gpre(ctx, m, hidden_);
    prelu_backward<T>(ctx, gact.view(), cache.pre.view(), params_->value(alpha_).flat(),
                      gpre.view(), params_->grad(alpha_).flat());
    tensor<T> gx = linears_[0].backward(ctx, gpre.view(), cache.l1);
    hadamard<T>(ctx, gx.view(), cache.zv.view(), gu.view());
    hadamard<T>(ctx, gx.view(), cache.zu.view(), gv.view());
  }
  tensor<T> gz = zeros<T>(ctx, n, dim_);
  scatter_add_rows<T>(ctx, gu.view(), src, gz.view());
  scatter_add_rows<T>(ctx, gv.view(), dst, gz.view());
  return gz;
}

template class norm_activation<float>;
template class norm_activation<double>;
template class link_decoder<float>;
template class link_decoder<double>;

}  // namespace coopgnn::models
