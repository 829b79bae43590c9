// R-GCN (Schlichtkrull, Kipf, Bloem, van den Berg, Titov & Welling, "Modeling Relational Data
// with Graph Convolutional Networks", ESWC 2018, eqs. 2 and 3): the conv_kind::rgcn paths of
// conv_layer (models/layers.hpp documents the formula and the parameters). Written once on the
// kernel entries (SpMM over the typed block's destination x relation rows, GEMM), so it runs on
// every backend; no kernel of its own. The block-diagonal decomposition (eq. 4) expands its
// blocks into the dense stacked weight through SpMM (a scatter) and gathers their gradient back
// through SpMM, so it too uses only the existing entries.

#include <cstdint>
#include <utility>
#include <vector>

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

/// Where the block-diagonal parameter's rows go in the stacked weight (eq. 4). The blocks
/// parameter Q [K, ob] (K = R in, ob = out / nb, row k = r in + b ib + i of Q_rb, ib = in / nb)
/// and the stacked W [K, out] seen as [K nb, ob] (row k nb + c is W's row k, column block c):
/// W row k holds Q row k in column block b(k) = (k mod in) / ib and zeros elsewhere. `csr` has K
/// rows, row k's first edge reading column k nb + b(k) (value 1); with `accumulate` a second
/// edge reads column K nb + k, so that spmm over [dW as [K nb, ob]; old dQ [K, ob]] gives
/// old dQ + the gathered dW. Built on the host (O(K)), moved into ctx.space().
template <typename T>
struct block_diagonal_map {
  buffer<eid_t> indptr;
  buffer<std::int64_t> indices;
  buffer<T> ones;
  csr_view csr;

  block_diagonal_map(const exec_context& ctx, std::int64_t R, std::int64_t in, std::int64_t nb,
                     bool accumulate) {
    std::int64_t const K = R * in;
    std::int64_t const ib = in / nb;
    std::int64_t const per_row = accumulate ? 2 : 1;
    std::vector<eid_t> ip(static_cast<std::size_t>(K + 1));
    std::vector<std::int64_t> ix(static_cast<std::size_t>(K * per_row));
    for (std::int64_t k = 0; k < K; ++k) {
      ip[static_cast<std::size_t>(k)] = static_cast<eid_t>(k * per_row);
      ix[static_cast<std::size_t>(k * per_row)] = k * nb + (k % in) / ib;
      if (accumulate) ix[static_cast<std::size_t>(k * per_row + 1)] = K * nb + k;
    }
    ip[static_cast<std::size_t>(K)] = static_cast<eid_t>(K * per_row);
    indptr = to_space(ctx, std::move(ip));
    indices = to_space(ctx, std::move(ix));
    ones = to_space(ctx, std::vector<T>(static_cast<std::size_t>(K * per_row), T{1}));
    csr = {K,          K * nb + (accumulate ? K : 0), K * per_row, indptr.data(), indices.data(),
           ctx.space()};
  }
};

}  // namespace

template <typename T>
tensor_view<const T> conv_layer<T>::rgcn_relation_weight(const exec_context& ctx,
                                                         tensor<T>& owned) const {
  std::int64_t const nb = rgcn_.num_blocks;
  if (nb > 0) {
    // W = scatter of the blocks into zeros: W_flat [K nb, ob] += map^T Q (one edge per row).
    std::int64_t const K = rgcn_.num_relations * in_dim_;
    block_diagonal_map<T> const map(ctx, rgcn_.num_relations, in_dim_, nb, false);
    owned = zeros<T>(ctx, K, out_dim_);
    spmm_transpose_add<T>(ctx, map.csr, map.ones.view(), params_->value(w_neigh_),
                          reshaped<T>(owned.view(), K * nb, out_dim_ / nb));
    return owned.view();
  }
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
  if (rgcn_.num_blocks > 0) {
    // dW [R in, out] = agg^T g (dense, the off-block entries computed and dropped), then dQ +=
    // the diagonal blocks of dW, gathered by one spmm over [dW as [K nb, ob]; dQ].
    std::int64_t const nb = rgcn_.num_blocks;
    std::int64_t const K = R * in;
    std::int64_t const ob = od / nb;
    tensor<T> x(ctx, K * nb + K, ob);
    gemm<T>(ctx, op::transpose, op::none, T{1}, agg, g, T{0},
            reshaped<T>(x.view().first_rows(K * nb), K, od));
    tensor_view<T> const dq = params_->grad(w_neigh_);
    copy<T>(ctx,
            buffer_view<T>{x.data() + K * nb * ob, static_cast<std::size_t>(K * ob), x.space()},
            buffer_view<const T>{dq.data, dq.flat().size, dq.space});
    block_diagonal_map<T> const map(ctx, R, in, nb, true);
    spmm<T>(ctx, map.csr, map.ones.view(), x.view(), dq);
  } else if (B == 0) {
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
