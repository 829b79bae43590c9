// R-GCN (Schlichtkrull, Kipf, Bloem, van den Berg, Titov & Welling, "Modeling Relational Data
// with Graph Convolutional Networks", ESWC 2018, eqs. 2 and 3): the conv_kind::rgcn paths of
// conv_layer (models/layers.hpp documents the formula and the parameters). Written once on the
// kernel entries (SpMM over the typed block's destination x relation rows, GEMM), so it runs on
// every backend; no kernel of its own.

#include <cstdint>

#include "kernels/dense/elementwise.hpp"
#include "kernels/dense/gemm.hpp"
#include "kernels/sparse/spmm.hpp"
#include "models/layers.hpp"
#include "models/param_init.hpp"
#include "runtime/core/error.hpp"

namespace coopgnn::models {

namespace {

/// The typed block's CSR over its num_dst * R rows (row s R + r: destination s, relation r).
csr_view relation_rows(const block_view& b) {
  return {b.num_rows(), b.num_src, b.num_edges, b.indptr, b.indices, b.space};
}

/// A contiguous [rows, cols] reinterpretation of `t` (rows * cols == t.size()).
template <typename T>
tensor_view<T> reshaped(tensor_view<T> t, std::int64_t rows, std::int64_t cols) {
  COOPGNN_EXPECTS(rows * cols == t.size(), "rgcn: [{}, {}] cannot view [{}, {}]", rows, cols,
                  t.rows, t.cols);
  return {t.data, rows, cols, t.space};
}

}  // namespace

template <typename T>
tensor_view<const T> conv_layer<T>::rgcn_relation_weight(const exec_context& ctx,
                                                         tensor<T>& owned) const {
  if (rgcn_.num_bases == 0) return params_->value(w_neigh_);
  std::int64_t const R = rgcn_.num_relations;
  std::int64_t const B = rgcn_.num_bases;
  std::int64_t const io = in_dim_ * out_dim_;
  // W [R, in out] = a [R, B] V [B, in out]: row r is W_r row-major, so W is [R in, out].
  owned = tensor<T>(ctx, R * in_dim_, out_dim_);
  gemm<T>(ctx, op::none, op::none, T{1}, params_->value(coeff_),
          reshaped<const T>(params_->value(w_neigh_), B, io), T{0},
          reshaped<T>(owned.view(), R, io));
  return owned.view();
}

template <typename T>
tensor<T> conv_layer<T>::rgcn_forward(const exec_context& ctx, const block_view& b,
                                      tensor_view<const T> h, conv_cache<T>& c) const {
  std::int64_t const R = rgcn_.num_relations;
  std::int64_t const num_dst = b.num_dst;
  std::int64_t const in = in_dim_;
  auto const w = detail::weights_of<T>(ctx, b);
  // agg row s = [sum of relation 0's weighted rows | ... | relation R-1's], [num_dst, R in].
  c.edge_values = {};
  c.mid = tensor<T>(ctx, num_dst, R * in);
  spmm<T>(ctx, relation_rows(b), w.view, h, reshaped<T>(c.mid.view(), num_dst * R, in));
  tensor<T> stacked;
  tensor_view<const T> const w_rel = rgcn_relation_weight(ctx, stacked);
  tensor<T> out(ctx, num_dst, out_dim_);
  gemm<T>(ctx, op::none, op::none, T{1}, c.mid.view(), w_rel, T{0}, out.view());
  if (rgcn_.self_loop) {
    gemm<T>(ctx, op::none, op::none, T{1}, h.first_rows(num_dst), params_->value(w_self_), T{1},
            out.view());
  }
  bias_activation<T>(ctx, out.view(), params_->value(bias_).flat(), apply_relu_);
  return out;
}

template <typename T>
tensor<T> conv_layer<T>::rgcn_backward(const exec_context& ctx, const block_view& b,
                                       tensor_view<const T> grad_out, const conv_cache<T>& cache,
                                       bool input_grad) {
  constexpr const char* fn = "conv_layer::backward (R-GCN)";
  std::int64_t const R = rgcn_.num_relations;
  std::int64_t const B = rgcn_.num_bases;
  std::int64_t const num_dst = b.num_dst;
  std::int64_t const num_src = b.num_src;
  std::int64_t const in = in_dim_;
  std::int64_t const od = out_dim_;
  COOPGNN_EXPECTS(cache.mid.rows() == num_dst && cache.mid.cols() == R * in,
                  "{}: cache.mid is [{}, {}], expected [{}, {}]", fn, cache.mid.rows(),
                  cache.mid.cols(), num_dst, R * in);
  tensor<T> relu_g;
  tensor_view<const T> const g =
      detail::relu_grad<T>(ctx, grad_out, cache.out.view(), apply_relu_, relu_g);
  bias_grad_add<T>(ctx, g, params_->grad(bias_).flat());
  tensor_view<const T> const h = cache.h.view();
  tensor_view<const T> const agg = cache.mid.view();
  if (rgcn_.self_loop) {
    gemm<T>(ctx, op::transpose, op::none, T{1}, h.first_rows(num_dst), g, T{1},
            params_->grad(w_self_));
  }
  if (B == 0) {
    gemm<T>(ctx, op::transpose, op::none, T{1}, agg, g, T{1}, params_->grad(w_neigh_));
  } else {
    // dW [R in, out] = agg^T g; dV [B, in out] += a^T dW; da [R, B] += dW V^T (eq. 3's chain).
    std::int64_t const io = in * od;
    tensor<T> dw(ctx, R * in, od);
    gemm<T>(ctx, op::transpose, op::none, T{1}, agg, g, T{0}, dw.view());
    tensor_view<const T> const dw_flat = reshaped<T>(dw.view(), R, io);
    gemm<T>(ctx, op::transpose, op::none, T{1}, params_->value(coeff_), dw_flat, T{1},
            reshaped<T>(params_->grad(w_neigh_), B, io));
    gemm<T>(ctx, op::none, op::transpose, T{1}, dw_flat,
            reshaped<const T>(params_->value(w_neigh_), B, io), T{1}, params_->grad(coeff_));
  }
  if (!input_grad) return {};
  tensor<T> stacked;
  tensor_view<const T> const w_rel = rgcn_relation_weight(ctx, stacked);
  tensor<T> gagg(ctx, num_dst, R * in);
  gemm<T>(ctx, op::none, op::transpose, T{1}, g, w_rel, T{0}, gagg.view());
  tensor<T> gh = zeros<T>(ctx, num_src, in);
  auto const w = detail::weights_of<T>(ctx, b);
  spmm_transpose_add<T>(ctx, relation_rows(b), w.view,
                        reshaped<const T>(gagg.view(), num_dst * R, in), gh.view());
  if (rgcn_.self_loop) {
    gemm<T>(ctx, op::none, op::transpose, T{1}, g, params_->value(w_self_), T{1},
            gh.view().first_rows(num_dst));
  }
  if (!cache.keep.empty()) {
    dropout_backward<T>(ctx, gh.view(), cache.keep.view(), cache.keep_scale);
  }
  return gh;
}

#define COOPGNN_RGCN_INSTANTIATE(T)                                                           \
  template tensor_view<const T> conv_layer<T>::rgcn_relation_weight(const exec_context&,      \
                                                                    tensor<T>&) const;        \
  template tensor<T> conv_layer<T>::rgcn_forward(const exec_context&, const block_view&,      \
                                                 tensor_view<const T>, conv_cache<T>&) const; \
  template tensor<T> conv_layer<T>::rgcn_backward(                                            \
      const exec_context&, const block_view&, tensor_view<const T>, const conv_cache<T>&, bool);
COOPGNN_RGCN_INSTANTIATE(float)
COOPGNN_RGCN_INSTANTIATE(double)
#undef COOPGNN_RGCN_INSTANTIATE

}  // namespace coopgnn::models
