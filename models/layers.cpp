#include "models/layers.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "kernels/dense/elementwise.hpp"
#include "kernels/dense/gemm.hpp"
#include "kernels/sparse/attention.hpp"
#include "kernels/sparse/edge_softmax.hpp"
#include "kernels/sparse/spmm.hpp"
#include "models/param_init.hpp"
#include "runtime/core/error.hpp"
#include "runtime/core/nvtx.hpp"
#include "runtime/core/rng.hpp"

namespace coopgnn::models {

// ---- parameter_set ---------------------------------------------------------------------------

template <typename T>
std::size_t parameter_set<T>::add(std::string name, std::int64_t rows, std::int64_t cols) {
  COOPGNN_EXPECTS(!allocated_, "parameter_set::add: '{}' after allocate()", name);
  COOPGNN_EXPECTS(rows >= 0 && cols >= 0, "parameter_set::add: '{}' has shape [{}, {}]", name, rows,
                  cols);
  for (auto const& p : infos_) {
    COOPGNN_EXPECTS(p.name != name, "parameter_set::add: '{}' is registered twice", name);
  }
  infos_.push_back({std::move(name), rows, cols, total_});
  // A total beyond 64 bits saturates (allocate refuses it) so that size checks see it.
  std::int64_t n = 0;
  if (__builtin_mul_overflow(rows, cols, &n) || __builtin_add_overflow(total_, n, &total_)) {
    total_ = std::numeric_limits<std::int64_t>::max();
  }
  return infos_.size() - 1;
}

template <typename T>
void parameter_set<T>::allocate(const exec_context& ctx) {
  COOPGNN_EXPECTS(!allocated_, "parameter_set::allocate: called twice");
  COOPGNN_EXPECTS(total_ < std::numeric_limits<std::int64_t>::max(),
                  "parameter_set::allocate: the parameters' sizes overflow 64 bits");
  values_ = buffer<T>(ctx, static_cast<std::size_t>(total_));
  grads_ = buffer<T>(ctx, static_cast<std::size_t>(total_));
  fill_zero(ctx, values_.view());
  fill_zero(ctx, grads_.view());
  allocated_ = true;
}

namespace {
template <typename T, typename B>
tensor_view<T> param_view(B& buf, const std::vector<param_info>& infos, std::size_t i,
                          bool allocated) {
  COOPGNN_EXPECTS(allocated, "parameter_set: parameter {} read before allocate()", i);
  COOPGNN_EXPECTS(i < infos.size(), "parameter_set: parameter {} of {}", i, infos.size());
  auto const& p = infos[i];
  return {buf.data() + p.offset, p.rows, p.cols, buf.space()};
}
}  // namespace

template <typename T>
tensor_view<T> parameter_set<T>::value(std::size_t i) {
  return param_view<T>(values_, infos_, i, allocated_);
}
template <typename T>
tensor_view<const T> parameter_set<T>::value(std::size_t i) const {
  return param_view<const T>(values_, infos_, i, allocated_);
}
template <typename T>
tensor_view<T> parameter_set<T>::grad(std::size_t i) {
  return param_view<T>(grads_, infos_, i, allocated_);
}
template <typename T>
tensor_view<const T> parameter_set<T>::grad(std::size_t i) const {
  return param_view<const T>(grads_, infos_, i, allocated_);
}

namespace detail {

/// Glorot-uniform values of parameter `i` on the host: element (r, c) of matrix `which` is
/// (2u - 1) * sqrt(6 / (fan_in + fan_out)); copied into the set's space, gradient cleared.
template <typename T>
void glorot_uniform(const exec_context& ctx, parameter_set<T>& ps, std::size_t i,
                    std::uint64_t seed, std::uint32_t layer_index, std::uint32_t which,
                    std::int64_t fan_sum) {
  auto const& info = ps.info(i);
  rng::stream const s = rng::make_stream(seed, rng::purpose::init, layer_index);
  double const a =
      std::sqrt(6.0 / static_cast<double>(fan_sum > 0 ? fan_sum : info.rows + info.cols));
  matrix<T> v(info.rows, info.cols);
  for (std::int64_t r = 0; r < info.rows; ++r) {
    for (std::int64_t c = 0; c < info.cols; ++c) {
      auto const w =
          rng::draw4(s, static_cast<std::uint64_t>(r), static_cast<std::uint32_t>(c), which);
      double const u = rng::uniform_double(w[0], w[1]);
      v(r, c) = static_cast<T>((2.0 * u - 1.0) * a);
    }
  }
  copy<T>(ctx, ps.value(i).flat(), host_view(v).flat());
  fill_zero(ctx, ps.grad(i).flat());
}

/// Zero value and gradient of parameter i (biases).
template <typename T>
void zero_param(const exec_context& ctx, parameter_set<T>& ps, std::size_t i) {
  fill_zero(ctx, ps.value(i).flat());
  fill_zero(ctx, ps.grad(i).flat());
}

/// The input a layer computes from: x after keyed dropout when `drop`, else x itself. The
/// dropped input, its mask and scale go to (kept, keep, keep_scale); an undropped input is
/// copied into `kept` only when `keep_copy` (a cache asks for it). Results go to locals first:
/// x may be `kept`'s own previous content (a reused cache).
template <typename T>
tensor_view<const T> layer_input(const exec_context& ctx, tensor_view<const T> x,
                                 buffer_view<const vid_t> ids, const step_key& key,
                                 std::uint32_t layer_index, float p, bool drop, bool keep_copy,
                                 tensor<T>& kept, buffer<std::uint8_t>& keep, T& keep_scale) {
  if (drop) {
    T const scale = T{1} / (T{1} - static_cast<T>(p));
    // Both written in full by dropout_forward: no zero fill first.
    tensor<T> dropped(ctx, x.rows, x.cols, no_init);
    buffer<std::uint8_t> mask(ctx, static_cast<std::size_t>(x.size()), no_init);
    dropout_forward<T>(ctx, x, ids, dropout_key{key.run_seed, key.batch, layer_index}, p, scale,
                       dropped.view(), mask.view());
    keep_scale = scale;
    kept = std::move(dropped);
    keep = std::move(mask);
    return kept.view();
  }
  keep = {};
  keep_scale = T{1};
  if (!keep_copy) return x;
  tensor<T> c(ctx, x.rows, x.cols, no_init);
  copy<T>(ctx, c.view().flat(), x.flat());
  kept = std::move(c);
  return kept.view();
}

template void glorot_uniform<float>(const exec_context&, parameter_set<float>&, std::size_t,
                                    std::uint64_t, std::uint32_t, std::uint32_t, std::int64_t);
template void glorot_uniform<double>(const exec_context&, parameter_set<double>&, std::size_t,
                                     std::uint64_t, std::uint32_t, std::uint32_t, std::int64_t);
template void zero_param<float>(const exec_context&, parameter_set<float>&, std::size_t);
template void zero_param<double>(const exec_context&, parameter_set<double>&, std::size_t);
template tensor_view<const float> layer_input<float>(const exec_context&, tensor_view<const float>,
                                                     buffer_view<const vid_t>, const step_key&,
                                                     std::uint32_t, float, bool, bool,
                                                     tensor<float>&, buffer<std::uint8_t>&, float&);
template tensor_view<const double> layer_input<double>(
    const exec_context&, tensor_view<const double>, buffer_view<const vid_t>, const step_key&,
    std::uint32_t, float, bool, bool, tensor<double>&, buffer<std::uint8_t>&, double&);

template <typename T>
edge_weights<T> weights_of(const exec_context& ctx, const block_view& b) {
  edge_weights<T> w;
  if constexpr (std::is_same_v<T, float>) {
    w.view = {b.weights, static_cast<std::size_t>(b.num_edges), b.space};
  } else {
    COOPGNN_EXPECTS(ctx.runs_on_host(), "conv_layer: float64 layers run on the host only");
    w.owned = buffer<T>(ctx, static_cast<std::size_t>(b.num_edges));
    for (std::int64_t e = 0; e < b.num_edges; ++e) w.owned.data()[e] = static_cast<T>(b.weights[e]);
    w.view = w.owned.view();
  }
  return w;
}
template <typename T>
tensor_view<const T> relu_grad(const exec_context& ctx, tensor_view<const T> grad_out,
                               tensor_view<const T> out, bool apply_relu, tensor<T>& owned) {
  if (!apply_relu) return grad_out;
  owned = tensor<T>(ctx, grad_out.rows, grad_out.cols);
  relu_backward<T>(ctx, grad_out, out, owned.view());
  return owned.view();
}
template tensor_view<const float> relu_grad<float>(const exec_context&, tensor_view<const float>,
                                                   tensor_view<const float>, bool, tensor<float>&);
template tensor_view<const double> relu_grad<double>(const exec_context&, tensor_view<const double>,
                                                     tensor_view<const double>, bool,
                                                     tensor<double>&);
template edge_weights<float> weights_of<float>(const exec_context&, const block_view&);
template edge_weights<double> weights_of<double>(const exec_context&, const block_view&);

namespace {

buffer_view<const std::int64_t> degrees_of(const block_view& b) {
  return {b.src_degree, b.src_degree == nullptr ? 0 : static_cast<std::size_t>(b.num_src), b.space};
}

void check_dims(std::int64_t in_dim, std::int64_t out_dim, float dropout, const char* what) {
  COOPGNN_EXPECTS(in_dim >= 1 && out_dim >= 1, "{}: in_dim = {} and out_dim = {} must be >= 1",
                  what, in_dim, out_dim);
  COOPGNN_EXPECTS(dropout >= 0.0f && dropout < 1.0f, "{}: dropout = {} is outside [0, 1)", what,
                  dropout);
}

}  // namespace
}  // namespace detail

std::string to_string(conv_kind k) {
  switch (k) {
    case conv_kind::gcn:
      return "gcn";
    case conv_kind::mlp:
      return "mlp";
    case conv_kind::gat:
      return "gat";
    case conv_kind::rgcn:
      return "rgcn";
    default:
      return "sage";
  }
}

conv_kind parse_conv_kind(const std::string& name) {
  if (name == "sage") return conv_kind::sage;
  if (name == "gcn") return conv_kind::gcn;
  if (name == "mlp") return conv_kind::mlp;
  if (name == "gat") return conv_kind::gat;
  if (name == "rgcn") return conv_kind::rgcn;
  COOPGNN_FAIL("unknown model '{}': expected 'sage', 'gcn', 'mlp', 'gat' or 'rgcn'", name);
}

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
                          std::uint32_t layer_index, bool apply_relu, float dropout,
                          parameter_set<T>& params, const gat_options& gat,
                          const rgcn_options& rgcn)
    : kind_(kind),
      in_dim_(in_dim),
      out_dim_(out_dim),
      layer_index_(layer_index),
      apply_relu_(apply_relu),
      dropout_(dropout),
      params_(&params),
      gat_(gat),
      rgcn_(rgcn) {
  detail::check_dims(in_dim, out_dim, dropout, "conv_layer");
  std::string const prefix = fmt::format("{}{}", to_string(kind), layer_index);
  if (kind == conv_kind::gat) {
    std::int64_t const h = gat.heads;
    COOPGNN_EXPECTS(h >= 1 && (!gat.concat || out_dim % h == 0),
                    "conv_layer: {} attention heads for out_dim = {} (concatenated heads must "
                    "divide it)",
                    h, out_dim);
    COOPGNN_EXPECTS(gat.attn_dropout >= 0.0f && gat.attn_dropout < 1.0f,
                    "conv_layer: attention dropout = {} is outside [0, 1)", gat.attn_dropout);
    COOPGNN_EXPECTS(gat.negative_slope >= 0.0f, "conv_layer: negative slope = {} is below 0",
                    gat.negative_slope);
    std::int64_t const width = gat.concat ? out_dim : h * out_dim;  // H F
    w_self_ = params.add(prefix + ".weight", in_dim, width);
    w_neigh_ = params.add(prefix + ".attn_dst", 1, width);
    attn_src_ = params.add(prefix + ".attn_src", 1, width);
    if (gat.residual) w_res_ = params.add(prefix + ".res_weight", in_dim, out_dim);
  } else if (kind == conv_kind::rgcn) {
    std::int64_t const R = rgcn.num_relations;
    std::int64_t const B = rgcn.num_bases;
    COOPGNN_EXPECTS(R >= 1, "conv_layer: R-GCN with {} relations (>= 1 expected)", R);
    COOPGNN_EXPECTS(B >= 0, "conv_layer: R-GCN with {} bases (>= 1, or 0 for none)", B);
    std::int64_t const nb = rgcn.num_blocks;
    COOPGNN_EXPECTS(nb >= 0, "conv_layer: R-GCN with {} diagonal blocks (>= 1, or 0 for none)", nb);
    COOPGNN_EXPECTS(nb == 0 || B == 0,
                    "conv_layer: R-GCN with both {} bases and {} diagonal blocks (choose one "
                    "decomposition)",
                    B, nb);
    COOPGNN_EXPECTS(nb == 0 || (in_dim % nb == 0 && out_dim % nb == 0),
                    "conv_layer: R-GCN layer {} is {} -> {} wide; {} diagonal blocks must divide "
                    "both widths",
                    layer_index, in_dim, out_dim, nb);
    if (rgcn.self_loop) w_self_ = params.add(prefix + ".w_self", in_dim, out_dim);
    if (nb > 0) {
      w_neigh_ = params.add(prefix + ".blocks", R * in_dim, out_dim / nb);
    } else if (B > 0) {
      w_neigh_ = params.add(prefix + ".bases", B * in_dim, out_dim);
      coeff_ = params.add(prefix + ".coeff", R, B);
    } else {
      w_neigh_ = params.add(prefix + ".weight", R * in_dim, out_dim);
    }
  } else if (kind == conv_kind::sage) {
    w_self_ = params.add(prefix + ".w_self", in_dim, out_dim);
    w_neigh_ = params.add(prefix + ".w_neigh", in_dim, out_dim);
  } else {
    w_self_ = params.add(prefix + ".weight", in_dim, out_dim);
  }
  bias_ = params.add(prefix + ".bias", 1, out_dim);
}

template <typename T>
void conv_layer<T>::init(const exec_context& ctx, std::uint64_t seed) {
  if (kind_ == conv_kind::rgcn) {
    // Every W_r (or V_b) with its own fan: in + out; every block Q_rb with (in + out) / B.
    if (rgcn_.self_loop) detail::glorot_uniform(ctx, *params_, w_self_, seed, layer_index_, 0);
    std::int64_t const nb = rgcn_.num_blocks > 0 ? rgcn_.num_blocks : 1;
    detail::glorot_uniform(ctx, *params_, w_neigh_, seed, layer_index_, 1,
                           (in_dim_ + out_dim_) / nb);
    if (rgcn_.num_bases > 0) detail::glorot_uniform(ctx, *params_, coeff_, seed, layer_index_, 2);
    detail::zero_param(ctx, *params_, bias_);
    return;
  }
  detail::glorot_uniform(ctx, *params_, w_self_, seed, layer_index_, 0);
  if (kind_ == conv_kind::sage || kind_ == conv_kind::gat)
    detail::glorot_uniform(ctx, *params_, w_neigh_, seed, layer_index_, 1);
  if (kind_ == conv_kind::gat) {
    detail::glorot_uniform(ctx, *params_, attn_src_, seed, layer_index_, 2);
    if (gat_.residual) detail::glorot_uniform(ctx, *params_, w_res_, seed, layer_index_, 3);
  }
  detail::zero_param(ctx, *params_, bias_);
}

template <typename T>
std::vector<std::size_t> conv_layer<T>::param_indices() const {
  if (kind_ == conv_kind::sage) return {w_self_, w_neigh_, bias_};
  if (kind_ == conv_kind::rgcn) {
    std::vector<std::size_t> out;
    if (rgcn_.self_loop) out.push_back(w_self_);
    out.push_back(w_neigh_);
    if (rgcn_.num_bases > 0) out.push_back(coeff_);
    out.push_back(bias_);
    return out;
  }
  if (kind_ == conv_kind::gat) {
    if (gat_.residual) return {w_self_, w_neigh_, attn_src_, w_res_, bias_};
    return {w_self_, w_neigh_, attn_src_, bias_};
  }
  return {w_self_, bias_};
}

template <typename T>
void conv_layer<T>::check_block(const exec_context& ctx, const block_view& b, std::int64_t h_rows,
                                std::int64_t h_cols, const char* fn) const {
  coopgnn::detail::expect_space(ctx, b.space, fn, "block");
  COOPGNN_EXPECTS(b.num_dst >= 0 && b.num_dst <= b.num_src,
                  "{}: block has num_dst = {} but {} sources", fn, b.num_dst, b.num_src);
  if (kind_ == conv_kind::rgcn) {
    COOPGNN_EXPECTS(b.num_relations == rgcn_.num_relations,
                    "{}: the R-GCN layer has {} relations, the block {} rows per destination", fn,
                    rgcn_.num_relations, b.num_relations);
  } else {
    COOPGNN_EXPECTS(b.num_relations == 1,
                    "{}: a {} layer takes an untyped block, this one has {} relations per "
                    "destination (typed graphs need an R-GCN)",
                    fn, to_string(kind_), b.num_relations);
  }
  COOPGNN_EXPECTS(h_rows == b.num_src && h_cols == in_dim_,
                  "{}: h_src is [{}, {}] but the block has {} sources and in_dim is {}", fn, h_rows,
                  h_cols, b.num_src, in_dim_);
  if (kind_ == conv_kind::gcn) {
    COOPGNN_EXPECTS(b.src_degree != nullptr || b.num_src == 0,
                    "{}: the block has no src_degree for its {} sources (GCN needs degrees)", fn,
                    b.num_src);
    if (b.space == memory_space::host) {
      for (std::int64_t i = 0; i < b.num_src; ++i) {
        COOPGNN_EXPECTS(b.src_degree[i] >= 0, "{}: src_degree[{}] = {} is negative", fn, i,
                        b.src_degree[i]);
      }
    }
  }
}

template <typename T>
tensor<T> conv_layer<T>::forward(const exec_context& ctx, const block_view& b,
                                 tensor_view<const T> h_src, const step_key& key,
                                 conv_cache<T>* cache) const {
  constexpr const char* fn = "conv_layer::forward";
  COOPGNN_NVTX_RANGE("model/conv/forward");
  check_block(ctx, b, h_src.rows, h_src.cols, fn);
  coopgnn::detail::expect_space(ctx, h_src.space, fn, "h_src");
  std::int64_t const num_dst = b.num_dst;
  std::int64_t const num_src = b.num_src;
  std::int64_t const in = in_dim_;
  std::int64_t const od = out_dim_;
  bool const gcn = kind_ == conv_kind::gcn;
  conv_cache<T> local;
  conv_cache<T>& c = cache != nullptr ? *cache : local;
  bool const drop = key.training && dropout_ > 0.0f;
  tensor_view<const T> const h = detail::layer_input<T>(
      ctx, h_src, {b.src_ids, static_cast<std::size_t>(num_src), b.space}, key, layer_index_,
      dropout_, drop, cache != nullptr, c.h, c.keep, c.keep_scale);

  if (kind_ == conv_kind::gat || kind_ == conv_kind::rgcn) {
    tensor<T> out =
        kind_ == conv_kind::gat ? gat_forward(ctx, b, h, key, c) : rgcn_forward(ctx, b, h, c);
    if (cache != nullptr) {
      c.out = tensor<T>(ctx, num_dst, od);
      copy<T>(ctx, c.out.view().flat(), out.view().flat());
    }
    return out;
  }
  if (kind_ == conv_kind::mlp) {
    // No message passing: the destinations' own rows through W and the bias.
    c.edge_values = {};
    c.mid = {};
    tensor<T> out(ctx, num_dst, od);
    gemm<T>(ctx, op::none, op::none, T{1}, h.first_rows(num_dst), params_->value(w_self_), T{0},
            out.view());
    bias_activation<T>(ctx, out.view(), params_->value(bias_).flat(), apply_relu_);
    if (cache != nullptr) {
      c.out = tensor<T>(ctx, num_dst, od);
      copy<T>(ctx, c.out.view().flat(), out.view().flat());
    }
    return out;
  }
  detail::edge_weights<T> sage_w;
  buffer_view<const T> ev;
  if (gcn) {
    c.edge_values = buffer<T>(ctx, static_cast<std::size_t>(b.num_edges));
    gcn_edge_values<T>(ctx, b, c.edge_values.view());
    ev = c.edge_values.view();
  } else {
    c.edge_values = {};
    sage_w = detail::weights_of<T>(ctx, b);
    ev = sage_w.view;
  }
  csr_view const a = csr_of(b);
  auto const deg = detail::degrees_of(b);
  tensor_view<const T> const w_self = params_->value(w_self_);  // SAGE W_self, GCN W
  tensor_view<const T> const w_neigh = gcn ? w_self : params_->value(w_neigh_);
  tensor<T> out(ctx, num_dst, od);
  if (!transform_first()) {
    // Aggregate [num_dst, in], then transform.
    c.mid = tensor<T>(ctx, num_dst, in);
    spmm<T>(ctx, a, ev, h, c.mid.view());
    if (gcn) {
      gcn_self_add<T>(ctx, deg, h, c.mid.view());
      gemm<T>(ctx, op::none, op::none, T{1}, c.mid.view(), w_self, T{0}, out.view());
    } else {
      gemm<T>(ctx, op::none, op::none, T{1}, h.first_rows(num_dst), w_self, T{0}, out.view());
      gemm<T>(ctx, op::none, op::none, T{1}, c.mid.view(), w_neigh, T{1}, out.view());
    }
  } else {
    // Transform every source [num_src, out], then aggregate.
    c.mid = tensor<T>(ctx, num_src, od);
    gemm<T>(ctx, op::none, op::none, T{1}, h, w_neigh, T{0}, c.mid.view());
    spmm<T>(ctx, a, ev, c.mid.view(), out.view());
    if (gcn) {
      gcn_self_add<T>(ctx, deg, c.mid.view(), out.view());
    } else {
      gemm<T>(ctx, op::none, op::none, T{1}, h.first_rows(num_dst), w_self, T{1}, out.view());
    }
  }
  bias_activation<T>(ctx, out.view(), params_->value(bias_).flat(), apply_relu_);
  if (cache != nullptr) {
    c.out = tensor<T>(ctx, num_dst, od);
    copy<T>(ctx, c.out.view().flat(), out.view().flat());
  }
  return out;
}

template <typename T>
tensor<T> conv_layer<T>::backward(const exec_context& ctx, const block_view& b,
                                  tensor_view<const T> grad_out, const conv_cache<T>& cache,
                                  bool input_grad) {
  constexpr const char* fn = "conv_layer::backward";
  COOPGNN_NVTX_RANGE("model/conv/backward");
  check_block(ctx, b, cache.h.rows(), cache.h.cols(), "conv_layer::backward (cache.h)");
  coopgnn::detail::expect_space(ctx, grad_out.space, fn, "grad_out");
  std::int64_t const num_dst = b.num_dst;
  std::int64_t const num_src = b.num_src;
  std::int64_t const in = in_dim_;
  std::int64_t const od = out_dim_;
  bool const gcn = kind_ == conv_kind::gcn;
  COOPGNN_EXPECTS(grad_out.rows == num_dst && grad_out.cols == od,
                  "{}: grad_out is [{}, {}], expected [{}, {}]", fn, grad_out.rows, grad_out.cols,
                  num_dst, od);
  COOPGNN_EXPECTS(cache.out.rows() == num_dst && cache.out.cols() == od,
                  "{}: cache.out is [{}, {}], expected [{}, {}] (was forward called with this "
                  "block and a cache?)",
                  fn, cache.out.rows(), cache.out.cols(), num_dst, od);
  COOPGNN_EXPECTS(
      cache.keep.empty() || static_cast<std::int64_t>(cache.keep.size()) == num_src * in,
      "{}: dropout mask has {} entries, expected {}", fn, cache.keep.size(), num_src * in);
  if (kind_ == conv_kind::gat) return gat_backward(ctx, b, grad_out, cache, input_grad);
  if (kind_ == conv_kind::rgcn) return rgcn_backward(ctx, b, grad_out, cache, input_grad);
  std::int64_t const mid_rows = transform_first() ? num_src : num_dst;
  std::int64_t const mid_cols = transform_first() ? od : in;
  bool const mlp = kind_ == conv_kind::mlp;  // no aggregate in the cache
  COOPGNN_EXPECTS(mlp || (cache.mid.rows() == mid_rows && cache.mid.cols() == mid_cols),
                  "{}: cache.mid is [{}, {}], expected [{}, {}]", fn, cache.mid.rows(),
                  cache.mid.cols(), mid_rows, mid_cols);
  COOPGNN_EXPECTS(!gcn || static_cast<std::int64_t>(cache.edge_values.size()) == b.num_edges,
                  "{}: cache has {} GCN edge values for {} edges", fn, cache.edge_values.size(),
                  b.num_edges);
  COOPGNN_EXPECTS(
      cache.keep.empty() || static_cast<std::int64_t>(cache.keep.size()) == num_src * in,
      "{}: dropout mask has {} entries, expected {}", fn, cache.keep.size(), num_src * in);

  // g = relu'(out) * grad_out (grad_out itself without ReLU).
  tensor<T> relu_g;
  tensor_view<const T> const g =
      detail::relu_grad<T>(ctx, grad_out, cache.out.view(), apply_relu_, relu_g);
  bias_grad_add<T>(ctx, g, params_->grad(bias_).flat());
  tensor_view<const T> const h = cache.h.view();
  if (mlp) {
    // dW += h_dst^T g; only the destinations' rows get an input gradient.
    gemm<T>(ctx, op::transpose, op::none, T{1}, h.first_rows(num_dst), g, T{1},
            params_->grad(w_self_));
    if (!input_grad) return {};
    tensor<T> gh = zeros<T>(ctx, num_src, in);
    gemm<T>(ctx, op::none, op::transpose, T{1}, g, params_->value(w_self_), T{0},
            gh.view().first_rows(num_dst));
    if (!cache.keep.empty()) {
      dropout_backward<T>(ctx, gh.view(), cache.keep.view(), cache.keep_scale);
    }
    return gh;
  }
  detail::edge_weights<T> sage_w;
  buffer_view<const T> ev;
  if (gcn) {
    ev = cache.edge_values.view();
  } else {
    sage_w = detail::weights_of<T>(ctx, b);
    ev = sage_w.view;
  }
  csr_view const a = csr_of(b);
  auto const deg = detail::degrees_of(b);
  tensor_view<T> const gw_self = params_->grad(w_self_);  // SAGE W_self, GCN W
  tensor_view<const T> const w_self = params_->value(w_self_);
  tensor<T> gh;

  if (!transform_first()) {
    tensor_view<const T> const agg = cache.mid.view();
    if (gcn) {
      gemm<T>(ctx, op::transpose, op::none, T{1}, agg, g, T{1}, gw_self);  // dW += agg^T g
    } else {
      // dW_self += h_dst^T g, dW_neigh += agg^T g.
      gemm<T>(ctx, op::transpose, op::none, T{1}, h.first_rows(num_dst), g, T{1}, gw_self);
      gemm<T>(ctx, op::transpose, op::none, T{1}, agg, g, T{1}, params_->grad(w_neigh_));
    }
    if (input_grad) {
      gh = zeros<T>(ctx, num_src, in);
      if (!gcn) {
        gemm<T>(ctx, op::none, op::transpose, T{1}, g, w_self, T{0}, gh.view().first_rows(num_dst));
      }
      tensor<T> gagg(ctx, num_dst, in);
      gemm<T>(ctx, op::none, op::transpose, T{1}, g, gcn ? w_self : params_->value(w_neigh_), T{0},
              gagg.view());
      spmm_transpose_add<T>(ctx, a, ev, gagg.view(), gh.view());
      if (gcn) gcn_self_add<T>(ctx, deg, gagg.view(), gh.view().first_rows(num_dst));
    }
  } else {
    tensor<T> gz = zeros<T>(ctx, num_src, od);
    if (!gcn) {
      gemm<T>(ctx, op::transpose, op::none, T{1}, h.first_rows(num_dst), g, T{1}, gw_self);
    }
    spmm_transpose_add<T>(ctx, a, ev, g, gz.view());
    if (gcn) gcn_self_add<T>(ctx, deg, g, gz.view().first_rows(num_dst));
    // GCN: dW += h^T gz; SAGE: dW_neigh += h^T gz.
    tensor_view<T> const gw_z = gcn ? gw_self : params_->grad(w_neigh_);
    tensor_view<const T> const w_z = gcn ? w_self : params_->value(w_neigh_);
    gemm<T>(ctx, op::transpose, op::none, T{1}, h, gz.view(), T{1}, gw_z);
    if (input_grad) {
      gh = tensor<T>(ctx, num_src, in);
      gemm<T>(ctx, op::none, op::transpose, T{1}, gz.view(), w_z, T{0}, gh.view());
      if (!gcn) {
        gemm<T>(ctx, op::none, op::transpose, T{1}, g, w_self, T{1}, gh.view().first_rows(num_dst));
      }
    }
  }
  if (input_grad && !cache.keep.empty()) {
    dropout_backward<T>(ctx, gh.view(), cache.keep.view(), cache.keep_scale);
  }
  return gh;
}

// ---- conv_layer: GAT ------------------------------------------------------------------------

namespace detail {
namespace {

/// The attention CSR of a block: its adjacency, with a self-loop in front of every row when asked.
struct attention_csr {
  self_loop_csr owned;
  csr_view view;
};

attention_csr attention_csr_of(const exec_context& ctx, const block_view& b, bool self_loops) {
  attention_csr a;
  if (self_loops) {
    a.owned = add_self_loops(ctx, csr_of(b));
    a.view = a.owned.view();
  } else {
    a.view = csr_of(b);
  }
  return a;
}

/// [H F, F] with M[k F + f, f] = 1 / H: z M is the mean over heads (eq. 6), g M^T its backward.
template <typename T>
tensor<T> head_mean_matrix(const exec_context& ctx, std::int64_t heads, std::int64_t f) {
  matrix<T> m(heads * f, f);
  for (std::int64_t k = 0; k < heads; ++k) {
    for (std::int64_t j = 0; j < f; ++j) m(k * f + j, j) = T{1} / static_cast<T>(heads);
  }
  return upload<T>(ctx, m);
}

/// Head k's [E] slice of a head-major edge array.
template <typename T>
buffer_view<T> head_slice(buffer_view<T> v, std::int64_t k, std::int64_t e) {
  return {v.data + k * e, static_cast<std::size_t>(e), v.space};
}

}  // namespace
}  // namespace detail

template <typename T>
tensor<T> conv_layer<T>::gat_forward(const exec_context& ctx, const block_view& b,
                                     tensor_view<const T> h, const step_key& key,
                                     conv_cache<T>& c) const {
  COOPGNN_NVTX_RANGE("model/gat/forward");
  std::int64_t const num_dst = b.num_dst;
  std::int64_t const num_src = b.num_src;
  std::int64_t const heads = gat_.heads;
  std::int64_t const width = params_->value(w_self_).cols;  // H F
  c.edge_values = {};
  // z = h W for every source; the destinations' rows are its first num_dst rows.
  c.mid = tensor<T>(ctx, num_src, width);
  gemm<T>(ctx, op::none, op::none, T{1}, h, params_->value(w_self_), T{0}, c.mid.view());
  tensor_view<const T> const z = c.mid.view();
  tensor<T> el(ctx, num_dst, heads);
  tensor<T> er(ctx, num_src, heads);
  attention_project<T>(ctx, z.first_rows(num_dst), params_->value(w_neigh_).flat(), heads,
                       el.view());
  attention_project<T>(ctx, z, params_->value(attn_src_).flat(), heads, er.view());
  auto const a = detail::attention_csr_of(ctx, b, gat_.self_loops);
  std::int64_t const ne = a.view.num_edges;
  auto const n_att = static_cast<std::size_t>(heads * ne);
  c.scores = buffer<T>(ctx, n_att);
  attention_scores<T>(ctx, a.view, el.view(), er.view(), static_cast<T>(gat_.negative_slope),
                      gat_.self_loops, c.scores.view());
  c.softmax = buffer<T>(ctx, n_att);
  for (std::int64_t k = 0; k < heads; ++k) {
    edge_softmax<T>(ctx, a.view, detail::head_slice<const T>(c.scores.view(), k, ne),
                    detail::head_slice(c.softmax.view(), k, ne));
  }
  c.alpha = buffer<T>(ctx, n_att);
  copy<T>(ctx, c.alpha.view(), c.softmax.view());
  c.att_keep = {};
  c.att_scale = T{1};
  if (key.training && gat_.attn_dropout > 0.0f && ne > 0) {
    c.att_scale = T{1} / (T{1} - static_cast<T>(gat_.attn_dropout));
    c.att_keep = buffer<std::uint8_t>(ctx, n_att);
    attention_dropout<T>(ctx, a.view, {b.src_ids, static_cast<std::size_t>(num_src), b.space},
                         heads, dropout_key{key.run_seed, key.batch, layer_index_},
                         gat_.attn_dropout, c.att_scale, c.alpha.view(), c.att_keep.view());
  }
  tensor<T> agg(ctx, num_dst, width);
  attention_aggregate<T>(ctx, a.view, c.alpha.view(), z, heads, agg.view());
  tensor<T> out;
  if (gat_.concat) {
    out = std::move(agg);
  } else {
    out = tensor<T>(ctx, num_dst, out_dim_);
    tensor<T> const m = detail::head_mean_matrix<T>(ctx, heads, out_dim_);
    gemm<T>(ctx, op::none, op::none, T{1}, agg.view(), m.view(), T{0}, out.view());
  }
  if (gat_.residual) {
    gemm<T>(ctx, op::none, op::none, T{1}, h.first_rows(num_dst), params_->value(w_res_), T{1},
            out.view());
  }
  bias_activation<T>(ctx, out.view(), params_->value(bias_).flat(), false);
  if (apply_relu_) elu_inplace<T>(ctx, out.view());
  return out;
}

template <typename T>
tensor<T> conv_layer<T>::gat_backward(const exec_context& ctx, const block_view& b,
                                      tensor_view<const T> grad_out, const conv_cache<T>& cache,
                                      bool input_grad) {
  constexpr const char* fn = "conv_layer::backward (gat)";
  COOPGNN_NVTX_RANGE("model/gat/backward");
  std::int64_t const num_dst = b.num_dst;
  std::int64_t const num_src = b.num_src;
  std::int64_t const heads = gat_.heads;
  std::int64_t const width = params_->value(w_self_).cols;
  auto const a = detail::attention_csr_of(ctx, b, gat_.self_loops);
  std::int64_t const ne = a.view.num_edges;
  auto const n_att = static_cast<std::size_t>(heads * ne);
  COOPGNN_EXPECTS(
      cache.mid.rows() == num_src && cache.mid.cols() == width && cache.scores.size() == n_att &&
          cache.softmax.size() == n_att && cache.alpha.size() == n_att,
      "{}: the cache holds z [{}, {}] and {} attention values, expected [{}, {}] and "
      "{} (was forward called with this block and a cache?)",
      fn, cache.mid.rows(), cache.mid.cols(), cache.alpha.size(), num_src, width, n_att);
  tensor_view<const T> const h = cache.h.view();
  tensor_view<const T> const z = cache.mid.view();
  // g = elu'(out) * grad_out.
  tensor<T> act_g;
  tensor_view<const T> g = grad_out;
  if (apply_relu_) {
    act_g = tensor<T>(ctx, num_dst, out_dim_);
    elu_backward<T>(ctx, grad_out, cache.out.view(), act_g.view());
    g = act_g.view();
  }
  bias_grad_add<T>(ctx, g, params_->grad(bias_).flat());
  tensor<T> gh;
  if (input_grad) gh = zeros<T>(ctx, num_src, in_dim_);
  if (gat_.residual) {
    gemm<T>(ctx, op::transpose, op::none, T{1}, h.first_rows(num_dst), g, T{1},
            params_->grad(w_res_));
    if (input_grad) {
      gemm<T>(ctx, op::none, op::transpose, T{1}, g, params_->value(w_res_), T{0},
              gh.view().first_rows(num_dst));
    }
  }
  // dL/d(aggregate) [num_dst, H F].
  tensor<T> gagg_mean;
  tensor_view<const T> gagg = g;
  if (!gat_.concat) {
    gagg_mean = tensor<T>(ctx, num_dst, width);
    tensor<T> const m = detail::head_mean_matrix<T>(ctx, heads, out_dim_);
    gemm<T>(ctx, op::none, op::transpose, T{1}, g, m.view(), T{0}, gagg_mean.view());
    gagg = gagg_mean.view();
  }
  tensor<T> gz = zeros<T>(ctx, num_src, width);
  buffer<T> g_alpha(ctx, n_att);
  attention_aggregate_backward<T>(ctx, a.view, cache.alpha.view(), z, gagg, heads, g_alpha.view(),
                                  gz.view());
  if (!cache.att_keep.empty()) {
    dropout_backward<T>(ctx, tensor_view<T>{g_alpha.data(), heads, ne, g_alpha.space()},
                        cache.att_keep.view(), cache.att_scale);
  }
  buffer<T> g_scores(ctx, n_att);
  for (std::int64_t k = 0; k < heads; ++k) {
    edge_softmax_backward<T>(ctx, a.view, detail::head_slice<const T>(cache.softmax.view(), k, ne),
                             detail::head_slice<const T>(g_alpha.view(), k, ne),
                             detail::head_slice(g_scores.view(), k, ne));
  }
  tensor<T> g_el = zeros<T>(ctx, num_dst, heads);
  tensor<T> g_er = zeros<T>(ctx, num_src, heads);
  attention_scores_backward<T>(ctx, a.view, cache.scores.view(), g_scores.view(),
                               static_cast<T>(gat_.negative_slope), g_el.view(), g_er.view());
  attention_project_backward<T>(ctx, z.first_rows(num_dst), params_->value(w_neigh_).flat(),
                                g_el.view(), gz.view().first_rows(num_dst),
                                params_->grad(w_neigh_).flat());
  attention_project_backward<T>(ctx, z, params_->value(attn_src_).flat(), g_er.view(), gz.view(),
                                params_->grad(attn_src_).flat());
  // z = h W: dW += h^T gz, dh += gz W^T.
  gemm<T>(ctx, op::transpose, op::none, T{1}, h, gz.view(), T{1}, params_->grad(w_self_));
  if (!input_grad) return {};
  gemm<T>(ctx, op::none, op::transpose, T{1}, gz.view(), params_->value(w_self_), T{1}, gh.view());
  if (!cache.keep.empty()) {
    dropout_backward<T>(ctx, gh.view(), cache.keep.view(), cache.keep_scale);
  }
  return gh;
}

// ---- linear_layer --------------------------------------------------------------------------

template <typename T>
linear_layer<T>::linear_layer(std::int64_t in_dim, std::int64_t out_dim, std::uint32_t layer_index,
                              float dropout, parameter_set<T>& params)
    : in_dim_(in_dim),
      out_dim_(out_dim),
      layer_index_(layer_index),
      dropout_(dropout),
      params_(&params) {
  detail::check_dims(in_dim, out_dim, dropout, "linear_layer");
  weight_ = params.add(fmt::format("linear{}.weight", layer_index), in_dim, out_dim);
  bias_ = params.add(fmt::format("linear{}.bias", layer_index), 1, out_dim);
}

template <typename T>
void linear_layer<T>::init(const exec_context& ctx, std::uint64_t seed) {
  detail::glorot_uniform(ctx, *params_, weight_, seed, layer_index_, 0);
  detail::zero_param(ctx, *params_, bias_);
}

template <typename T>
tensor<T> linear_layer<T>::forward(const exec_context& ctx, tensor_view<const T> x,
                                   buffer_view<const vid_t> row_ids, const step_key& key,
                                   linear_cache<T>* cache) const {
  constexpr const char* fn = "linear_layer::forward";
  COOPGNN_NVTX_RANGE("model/head/forward");
  coopgnn::detail::expect_space(ctx, x.space, fn, "x");
  COOPGNN_EXPECTS(x.cols == in_dim_, "{}: x is [{}, {}] but in_dim is {}", fn, x.rows, x.cols,
                  in_dim_);
  bool const drop = key.training && dropout_ > 0.0f;
  if (drop) {
    COOPGNN_EXPECTS(static_cast<std::int64_t>(row_ids.size) == x.rows,
                    "{}: {} row_ids for {} rows (dropout needs one id a row)", fn, row_ids.size,
                    x.rows);
  }
  linear_cache<T> local;
  linear_cache<T>& c = cache != nullptr ? *cache : local;
  tensor_view<const T> const xin =
      detail::layer_input<T>(ctx, x, row_ids, key, layer_index_, dropout_, drop, cache != nullptr,
                             c.x, c.keep, c.keep_scale);
  tensor<T> y(ctx, x.rows, out_dim_);
  gemm<T>(ctx, op::none, op::none, T{1}, xin, params_->value(weight_), T{0}, y.view());
  bias_activation<T>(ctx, y.view(), params_->value(bias_).flat(), false);
  return y;
}

template <typename T>
tensor<T> linear_layer<T>::backward(const exec_context& ctx, tensor_view<const T> grad_out,
                                    const linear_cache<T>& cache) {
  constexpr const char* fn = "linear_layer::backward";
  COOPGNN_NVTX_RANGE("model/head/backward");
  COOPGNN_EXPECTS(cache.x.cols() == in_dim_,
                  "{}: cache.x is [{}, {}] but in_dim is {} (was forward called with a cache?)", fn,
                  cache.x.rows(), cache.x.cols(), in_dim_);
  COOPGNN_EXPECTS(grad_out.rows == cache.x.rows() && grad_out.cols == out_dim_,
                  "{}: grad_out is [{}, {}], expected [{}, {}]", fn, grad_out.rows, grad_out.cols,
                  cache.x.rows(), out_dim_);
  COOPGNN_EXPECTS(
      cache.keep.empty() || static_cast<std::int64_t>(cache.keep.size()) == cache.x.size(),
      "{}: dropout mask has {} entries, expected {}", fn, cache.keep.size(), cache.x.size());
  bias_grad_add<T>(ctx, grad_out, params_->grad(bias_).flat());
  gemm<T>(ctx, op::transpose, op::none, T{1}, cache.x.view(), grad_out, T{1},
          params_->grad(weight_));
  tensor<T> gx(ctx, grad_out.rows, in_dim_);
  gemm<T>(ctx, op::none, op::transpose, T{1}, grad_out, params_->value(weight_), T{0}, gx.view());
  if (!cache.keep.empty()) {
    dropout_backward<T>(ctx, gx.view(), cache.keep.view(), cache.keep_scale);
  }
  return gx;
}

template class parameter_set<float>;
template class parameter_set<double>;
template class conv_layer<float>;
template class conv_layer<double>;
template class linear_layer<float>;
template class linear_layer<double>;

}  // namespace coopgnn::models
