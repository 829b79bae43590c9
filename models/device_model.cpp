// The GNN model on the CUDA backend (declared in device_model.hpp). Plain C++ over the cuda::
// kernel APIs; every step mirrors conv_layer / linear_layer / adam of models/layers.cpp and
// models/optimizer.cpp line by line (same operation order, same intermediates).
#ifdef COOPGNN_WITH_CUDA

#include "models/device_model.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "kernels/dense/elementwise_cuda.hpp"
#include "kernels/dense/gemm_cuda.hpp"
#include "kernels/sparse/sparse_cuda.hpp"
#include "runtime/core/error.hpp"
#include "runtime/core/nvtx.hpp"

namespace coopgnn::cuda {
namespace {

/// Offsets and shapes of one layer's parameters in the flat buffers.
struct layer_layout {
  models::conv_kind kind = models::conv_kind::sage;  // convs only
  std::int64_t in = 0;
  std::int64_t out = 0;
  std::uint32_t layer_index = 0;
  bool relu = false;
  float dropout = 0.0f;
  std::int64_t w_self = 0;   // SAGE W_self, GCN W, head weight
  std::int64_t w_neigh = 0;  // SAGE only
  std::int64_t bias = 0;
  [[nodiscard]] bool transform_first() const { return in > out; }
};

/// A parameter's name and shape, to check a host model against the device layout.
struct param_shape {
  std::string name;
  std::int64_t rows = 0;
  std::int64_t cols = 0;
};

/// The host's dropout scale, computed exactly as apply_dropout does (float).
float keep_scale_of(float p) { return 1.0f / (1.0f - p); }

device_matrix make_matrix(const cuda_context& ctx, std::int64_t rows, std::int64_t cols) {
  device_matrix m;
  m.rows = rows;
  m.cols = cols;
  m.data = ctx.allocate<float>(static_cast<std::size_t>(rows * cols));
  return m;
}

device_matrix copy_matrix(const cuda_context& ctx, const float* src, std::int64_t rows,
                          std::int64_t cols) {
  device_matrix m = make_matrix(ctx, rows, cols);
  if (m.size() > 0) detail::copy_async(m.data.data(), src, m.data.bytes(), ctx.compute());
  return m;
}

void zero(device_matrix& m, stream_t s) {
  if (m.size() > 0) detail::zero_async(m.data.data(), m.data.bytes(), s);
}

block_view view_of(const device_block& b, const float* edge_values) {
  block_view v;
  v.num_dst = b.num_dst;
  v.num_src = static_cast<std::int64_t>(b.src_ids.size());
  v.num_edges = static_cast<std::int64_t>(b.indices.size());
  v.indptr = b.indptr.data();
  v.indices = b.indices.data();
  v.weights = edge_values;
  return v;
}

/// The transposed CSR of a block (build_transpose), with its workspace from the pool.
struct transposed {
  device_buffer<std::int64_t> indptr;
  device_buffer<std::int64_t> edges;
};

transposed transpose_of(const cuda_context& ctx, const block_view& v) {
  std::size_t const bytes = transpose_workspace_bytes(v.num_src, v.num_edges);
  auto workspace = ctx.allocate<unsigned char>(bytes);
  transposed t{ctx.allocate<std::int64_t>(static_cast<std::size_t>(v.num_src + 1)),
               ctx.allocate<std::int64_t>(static_cast<std::size_t>(v.num_edges))};
  build_transpose(v, workspace.data(), bytes, t.indptr.data(), t.edges.data(), ctx.compute());
  return t;  // workspace is freed stream-ordered after build_transpose
}

/// The input a layer computes from: x after keyed dropout (dropout_keeps on ids[row], column;
/// models/layers.cpp apply_dropout) when `drop`, else x itself. The dropped input, its mask and
/// scale go to (kept, keep, keep_scale) when `drop` or `keep_copy` (an undropped input is copied
/// for backward only when a cache asks for it). Writes go to locals first: x may be `kept`'s own
/// previous content (a reused cache). Returns the pointer to compute from (valid while x and
/// kept are). Enqueued on s.
const float* layer_input(const cuda_context& ctx, stream_t s, const device_matrix& x,
                         const vid_t* ids, const models::step_key& key, std::uint32_t layer_index,
                         float p, bool drop, bool keep_copy, device_matrix& kept,
                         device_buffer<std::uint8_t>& keep, float& keep_scale) {
  if (drop) {
    float const scale = keep_scale_of(p);
    device_matrix dropped = make_matrix(ctx, x.rows, x.cols);
    auto mask = ctx.allocate<std::uint8_t>(static_cast<std::size_t>(x.size()));
    dropout_forward(x.data.data(), ids, x.rows, x.cols, key.run_seed, key.batch, layer_index, p,
                    scale, dropped.data.data(), mask.data(), s);
    keep_scale = scale;
    kept = std::move(dropped);
    keep = std::move(mask);
    return kept.data.data();
  }
  keep.reset();
  keep_scale = 1.0f;
  if (!keep_copy) return x.data.data();
  device_matrix copy = copy_matrix(ctx, x.data.data(), x.rows, x.cols);
  kept = std::move(copy);
  return kept.data.data();
}

}  // namespace

struct device_gnn_model::impl {
  const cuda_context& ctx;
  models::model_config config;
  models::adam_options adam;
  std::vector<layer_layout> convs;
  std::optional<layer_layout> head;
  std::vector<param_shape> shapes;  // gnn_model::params() order
  std::int64_t num_params = 0;
  device_buffer<float> values;
  device_buffer<float> grads;
  device_buffer<float> m;
  device_buffer<float> v;
  std::int64_t steps = 0;

  impl(const cuda_context& c, const models::model_config& cfg, const models::adam_options& a)
      : ctx(c), config(cfg), adam(a) {}

  [[nodiscard]] stream_t s() const { return ctx.compute(); }
  [[nodiscard]] float* w(std::int64_t off) { return values.data() + off; }
  [[nodiscard]] float* g(std::int64_t off) { return grads.data() + off; }

  /// Offsets consecutive in params() order: w_self (, w_neigh), bias.
  layer_layout place(layer_layout l, int mats) {
    l.w_self = num_params;
    num_params += l.in * l.out;
    if (mats == 2) {
      l.w_neigh = num_params;
      num_params += l.in * l.out;
    }
    l.bias = num_params;
    num_params += l.out;
    return l;
  }
};

namespace {

/// Checks that `params` (gnn_model::params()) has the names and shapes recorded in `shapes`.
void check_layout(const std::vector<models::parameter<float>*>& params,
                  const std::vector<param_shape>& shapes, const char* fn) {
  COOPGNN_EXPECTS(params.size() == shapes.size(),
                  "{}: the host model has {} parameters, expected {}", fn, params.size(),
                  shapes.size());
  for (std::size_t i = 0; i < params.size(); ++i) {
    const auto& q = *params[i];
    const auto& e = shapes[i];
    COOPGNN_EXPECTS(q.name == e.name && q.value.rows() == e.rows && q.value.cols() == e.cols,
                    "{}: host parameter {} is '{}' [{}, {}], expected '{}' [{}, {}]", fn, i, q.name,
                    q.value.rows(), q.value.cols(), e.name, e.rows, e.cols);
  }
}

}  // namespace

device_gnn_model::device_gnn_model(const cuda_context& ctx, const models::gnn_model& host,
                                   const models::adam_options& adam)
    : impl_(nullptr) {
  // Validates the options with models::adam's own checks and messages.
  (void)models::adam({}, adam);
  auto p = std::make_unique<impl>(ctx, host.config(), adam);
  for (int i = 0; i < host.num_layers(); ++i) {
    const auto& c = host.layer(i);
    layer_layout l;
    l.kind = c.kind();
    l.in = c.in_dim();
    l.out = c.out_dim();
    l.layer_index = c.layer_index();
    l.relu = c.apply_relu();
    l.dropout = c.dropout();
    p->convs.push_back(p->place(l, c.kind() == models::conv_kind::sage ? 2 : 1));
  }
  if (const auto* h = host.head(); h != nullptr) {
    layer_layout l;
    l.in = h->in_dim();
    l.out = h->out_dim();
    l.layer_index = h->layer_index();
    l.dropout = h->dropout();
    p->head = p->place(l, 1);
  }
  // params() hands out mutable pointers but only reads here: the host model is not changed.
  auto const params = const_cast<models::gnn_model&>(host).params();
  std::vector<float> flat;
  flat.reserve(static_cast<std::size_t>(p->num_params));
  for (const auto* q : params) {
    p->shapes.push_back({q->name, q->value.rows(), q->value.cols()});
    flat.insert(flat.end(), q->value.data(), q->value.data() + q->value.size());
  }
  COOPGNN_EXPECTS(static_cast<std::int64_t>(flat.size()) == p->num_params &&
                      p->num_params == host.num_parameters(),
                  "device_gnn_model: the host parameters hold {} values, the layout {}",
                  flat.size(), p->num_params);
  auto const n = static_cast<std::size_t>(p->num_params);
  p->values = ctx.to_device(std::span<const float>(flat));
  p->grads = ctx.allocate<float>(n);
  p->m = ctx.allocate<float>(n);
  p->v = ctx.allocate<float>(n);
  for (auto* buf : {&p->grads, &p->m, &p->v}) {
    if (n > 0) detail::zero_async(buf->data(), buf->bytes(), ctx.compute());
  }
  detail::synchronize(ctx.compute());  // `flat` is pageable and goes out of scope
  impl_ = p.release();
}

device_gnn_model::~device_gnn_model() { std::unique_ptr<impl> const owned(impl_); }

const models::model_config& device_gnn_model::config() const { return impl_->config; }
int device_gnn_model::num_layers() const { return static_cast<int>(impl_->convs.size()); }
bool device_gnn_model::has_head() const { return impl_->head.has_value(); }
std::int64_t device_gnn_model::num_parameters() const { return impl_->num_params; }
float* device_gnn_model::grads() { return impl_->grads.data(); }
const float* device_gnn_model::values() const { return impl_->values.data(); }

void device_gnn_model::zero_grad() {
  if (impl_->num_params > 0) {
    detail::zero_async(impl_->grads.data(), impl_->grads.bytes(), impl_->s());
  }
}

device_matrix device_gnn_model::conv_forward(int i, const device_block& b,
                                             const device_matrix& h_src,
                                             const models::step_key& key,
                                             device_conv_cache* cache) const {
  COOPGNN_NVTX_RANGE("model/conv/forward");
  impl& d = *impl_;
  COOPGNN_EXPECTS(i >= 0 && i < num_layers(),
                  "device_gnn_model::conv_forward: layer {} outside [0, {})", i, num_layers());
  const layer_layout& l = d.convs[static_cast<std::size_t>(i)];
  auto const num_src = static_cast<std::int64_t>(b.src_ids.size());
  auto const num_edges = static_cast<std::int64_t>(b.indices.size());
  std::int64_t const num_dst = b.num_dst;
  bool const gcn = l.kind == models::conv_kind::gcn;
  COOPGNN_EXPECTS(num_dst >= 0 && num_dst <= num_src &&
                      static_cast<std::int64_t>(b.indptr.size()) == num_dst + 1 &&
                      static_cast<std::int64_t>(b.weights.size()) == num_edges,
                  "device_gnn_model::conv_forward: block has {} destinations, {} sources, {} "
                  "offsets, {} edges and {} weights",
                  num_dst, num_src, b.indptr.size(), num_edges, b.weights.size());
  COOPGNN_EXPECTS(h_src.rows == num_src && h_src.cols == l.in,
                  "device_gnn_model::conv_forward: h_src is [{}, {}] but the block has {} "
                  "sources and layer {} has in_dim {}",
                  h_src.rows, h_src.cols, num_src, i, l.in);
  COOPGNN_EXPECTS(!gcn || static_cast<std::int64_t>(b.src_degree.size()) == num_src,
                  "device_gnn_model::conv_forward: block src_degree has {} entries for {} "
                  "sources (GCN needs degrees)",
                  b.src_degree.size(), num_src);
  stream_t const s = d.s();
  device_conv_cache local;
  device_conv_cache& c = cache != nullptr ? *cache : local;
  bool const drop = key.training && l.dropout > 0.0f;
  const float* h = layer_input(d.ctx, s, h_src, b.src_ids.data(), key, l.layer_index, l.dropout,
                               drop, cache != nullptr, c.h, c.keep, c.keep_scale);

  // compute (conv_layer::compute with one thread).
  std::int64_t const in = l.in;
  std::int64_t const od = l.out;
  if (gcn) {
    c.edge_values = d.ctx.allocate<float>(static_cast<std::size_t>(num_edges));
    gcn_edge_values(b.indptr.data(), b.indices.data(), b.weights.data(), b.src_degree.data(),
                    num_dst, c.edge_values.data(), s);
  } else {
    c.edge_values.reset();
  }
  block_view const v = view_of(b, gcn ? c.edge_values.data() : b.weights.data());
  const float* w_self = d.w(l.w_self);
  const float* w_neigh = gcn ? w_self : d.w(l.w_neigh);
  device_matrix out = make_matrix(d.ctx, num_dst, od);
  cublas_handle_t const blas = d.ctx.cublas();
  if (!l.transform_first()) {
    c.mid = make_matrix(d.ctx, num_dst, in);
    spmm(v, h, in, c.mid.data.data(), s);
    if (gcn) {
      gcn_self_add(b.src_degree.data(), h, num_dst, in, c.mid.data.data(), s);
      gemm(blas, op::none, op::none, num_dst, od, in, 1.0f, c.mid.data.data(), in, w_self, od, 0.0f,
           out.data.data(), od, s);
    } else {
      gemm(blas, op::none, op::none, num_dst, od, in, 1.0f, h, in, w_self, od, 0.0f,
           out.data.data(), od, s);
      gemm(blas, op::none, op::none, num_dst, od, in, 1.0f, c.mid.data.data(), in, w_neigh, od,
           1.0f, out.data.data(), od, s);
    }
  } else {
    c.mid = make_matrix(d.ctx, num_src, od);
    gemm(blas, op::none, op::none, num_src, od, in, 1.0f, h, in, w_neigh, od, 0.0f,
         c.mid.data.data(), od, s);
    spmm(v, c.mid.data.data(), od, out.data.data(), s);
    if (gcn) {
      gcn_self_add(b.src_degree.data(), c.mid.data.data(), num_dst, od, out.data.data(), s);
    } else {
      gemm(blas, op::none, op::none, num_dst, od, in, 1.0f, h, in, w_self, od, 1.0f,
           out.data.data(), od, s);
    }
  }
  bias_relu(out.data.data(), d.w(l.bias), num_dst, od, l.relu, s);
  if (cache != nullptr) c.out = copy_matrix(d.ctx, out.data.data(), num_dst, od);
  return out;
}

device_matrix device_gnn_model::conv_backward(int i, const device_block& b,
                                              const device_matrix& grad_out,
                                              const device_conv_cache& cache, bool input_grad) {
  COOPGNN_NVTX_RANGE("model/conv/backward");
  impl& d = *impl_;
  constexpr const char* fn = "device_gnn_model::conv_backward";
  COOPGNN_EXPECTS(i >= 0 && i < num_layers(), "{}: layer {} outside [0, {})", fn, i, num_layers());
  const layer_layout& l = d.convs[static_cast<std::size_t>(i)];
  auto const num_src = static_cast<std::int64_t>(b.src_ids.size());
  auto const num_edges = static_cast<std::int64_t>(b.indices.size());
  std::int64_t const num_dst = b.num_dst;
  std::int64_t const in = l.in;
  std::int64_t const od = l.out;
  bool const gcn = l.kind == models::conv_kind::gcn;
  COOPGNN_EXPECTS(num_dst >= 0 && num_dst <= num_src &&
                      static_cast<std::int64_t>(b.indptr.size()) == num_dst + 1 &&
                      static_cast<std::int64_t>(b.weights.size()) == num_edges,
                  "{}: block has {} destinations, {} sources, {} offsets, {} edges and {} weights",
                  fn, num_dst, num_src, b.indptr.size(), num_edges, b.weights.size());
  COOPGNN_EXPECTS(!gcn || static_cast<std::int64_t>(b.src_degree.size()) == num_src,
                  "{}: block src_degree has {} entries for {} sources", fn, b.src_degree.size(),
                  num_src);
  COOPGNN_EXPECTS(cache.h.rows == num_src && cache.h.cols == in,
                  "{}: cache.h is [{}, {}], expected [{}, {}]", fn, cache.h.rows, cache.h.cols,
                  num_src, in);
  COOPGNN_EXPECTS(grad_out.rows == num_dst && grad_out.cols == od,
                  "{}: grad_out is [{}, {}], expected [{}, {}]", fn, grad_out.rows, grad_out.cols,
                  num_dst, od);
  COOPGNN_EXPECTS(cache.out.rows == num_dst && cache.out.cols == od,
                  "{}: cache.out is [{}, {}], expected [{}, {}] (was conv_forward called with "
                  "this block and a cache?)",
                  fn, cache.out.rows, cache.out.cols, num_dst, od);
  std::int64_t const mid_rows = l.transform_first() ? num_src : num_dst;
  std::int64_t const mid_cols = l.transform_first() ? od : in;
  COOPGNN_EXPECTS(cache.mid.rows == mid_rows && cache.mid.cols == mid_cols,
                  "{}: cache.mid is [{}, {}], expected [{}, {}]", fn, cache.mid.rows,
                  cache.mid.cols, mid_rows, mid_cols);
  COOPGNN_EXPECTS(!gcn || static_cast<std::int64_t>(cache.edge_values.size()) == num_edges,
                  "{}: cache has {} GCN edge values for {} edges", fn, cache.edge_values.size(),
                  num_edges);
  COOPGNN_EXPECTS(
      cache.keep.empty() || static_cast<std::int64_t>(cache.keep.size()) == num_src * in,
      "{}: dropout mask has {} entries, expected {}", fn, cache.keep.size(), num_src * in);

  stream_t const s = d.s();
  cublas_handle_t const blas = d.ctx.cublas();
  // g = relu'(out) * grad_out (grad_out itself without ReLU).
  device_matrix relu_g;
  const float* g = grad_out.data.data();
  if (l.relu) {
    relu_g = make_matrix(d.ctx, num_dst, od);
    relu_backward(grad_out.data.data(), cache.out.data.data(), num_dst * od, relu_g.data.data(), s);
    g = relu_g.data.data();
  }
  bias_grad_add(g, num_dst, od, d.g(l.bias), s);
  const float* h = cache.h.data.data();
  block_view const v = view_of(b, gcn ? cache.edge_values.data() : b.weights.data());
  float* gw_self = d.g(l.w_self);  // SAGE W_self, GCN W
  const float* w_self = d.w(l.w_self);
  device_matrix gh;
  if (input_grad) {
    gh = make_matrix(d.ctx, num_src, in);
    zero(gh, s);
  }

  if (!l.transform_first()) {
    const float* agg = cache.mid.data.data();
    if (gcn) {
      // dW += agg^T g
      gemm(blas, op::transpose, op::none, in, od, num_dst, 1.0f, agg, in, g, od, 1.0f, gw_self, od,
           s);
    } else {
      // dW_self += h_dst^T g, dW_neigh += agg^T g
      gemm(blas, op::transpose, op::none, in, od, num_dst, 1.0f, h, in, g, od, 1.0f, gw_self, od,
           s);
      gemm(blas, op::transpose, op::none, in, od, num_dst, 1.0f, agg, in, g, od, 1.0f,
           d.g(l.w_neigh), od, s);
    }
    if (input_grad) {
      if (!gcn) {
        gemm(blas, op::none, op::transpose, num_dst, in, od, 1.0f, g, od, w_self, od, 0.0f,
             gh.data.data(), in, s);
      }
      device_matrix gagg = make_matrix(d.ctx, num_dst, in);
      gemm(blas, op::none, op::transpose, num_dst, in, od, 1.0f, g, od,
           gcn ? w_self : d.w(l.w_neigh), od, 0.0f, gagg.data.data(), in, s);
      transposed const t = transpose_of(d.ctx, v);
      spmm_transpose_add(v, t.indptr.data(), t.edges.data(), gagg.data.data(), in, gh.data.data(),
                         s);
      if (gcn) gcn_self_add(b.src_degree.data(), gagg.data.data(), num_dst, in, gh.data.data(), s);
    }
  } else {
    device_matrix gz = make_matrix(d.ctx, num_src, od);
    zero(gz, s);
    transposed const t = transpose_of(d.ctx, v);
    if (!gcn) {
      gemm(blas, op::transpose, op::none, in, od, num_dst, 1.0f, h, in, g, od, 1.0f, gw_self, od,
           s);
    }
    spmm_transpose_add(v, t.indptr.data(), t.edges.data(), g, od, gz.data.data(), s);
    if (gcn) gcn_self_add(b.src_degree.data(), g, num_dst, od, gz.data.data(), s);
    // GCN: dW += h^T gz; SAGE: dW_neigh += h^T gz.
    float* gw_z = gcn ? gw_self : d.g(l.w_neigh);
    const float* w_z = gcn ? w_self : d.w(l.w_neigh);
    gemm(blas, op::transpose, op::none, in, od, num_src, 1.0f, h, in, gz.data.data(), od, 1.0f,
         gw_z, od, s);
    if (input_grad) {
      gemm(blas, op::none, op::transpose, num_src, in, od, 1.0f, gz.data.data(), od, w_z, od, 0.0f,
           gh.data.data(), in, s);
      if (!gcn) {
        gemm(blas, op::none, op::transpose, num_dst, in, od, 1.0f, g, od, w_self, od, 1.0f,
             gh.data.data(), in, s);
      }
    }
  }
  if (input_grad && !cache.keep.empty()) {
    dropout_backward(gh.data.data(), cache.keep.data(), gh.size(), cache.keep_scale, s);
  }
  return gh;
}

device_matrix device_gnn_model::head_forward(const device_matrix& x, const vid_t* row_ids,
                                             const models::step_key& key,
                                             device_linear_cache* cache) const {
  COOPGNN_NVTX_RANGE("model/head/forward");
  impl& d = *impl_;
  COOPGNN_EXPECTS(d.head.has_value(), "device_gnn_model::head_forward: the model has no head");
  const layer_layout& l = *d.head;
  COOPGNN_EXPECTS(x.cols == l.in && x.rows >= 0,
                  "device_gnn_model::head_forward: x is [{}, {}] but the head's in_dim is {}",
                  x.rows, x.cols, l.in);
  stream_t const s = d.s();
  device_linear_cache local;
  device_linear_cache& c = cache != nullptr ? *cache : local;
  bool const drop = key.training && l.dropout > 0.0f;
  COOPGNN_EXPECTS(!drop || row_ids != nullptr || x.rows == 0,
                  "device_gnn_model::head_forward: row_ids is null for {} rows (dropout needs "
                  "one id a row)",
                  x.rows);
  const float* xin = layer_input(d.ctx, s, x, row_ids, key, l.layer_index, l.dropout, drop,
                                 cache != nullptr, c.x, c.keep, c.keep_scale);
  device_matrix y = make_matrix(d.ctx, x.rows, l.out);
  gemm(d.ctx.cublas(), op::none, op::none, x.rows, l.out, l.in, 1.0f, xin, l.in, d.w(l.w_self),
       l.out, 0.0f, y.data.data(), l.out, s);
  bias_relu(y.data.data(), d.w(l.bias), y.rows, y.cols, false, s);
  return y;
}

device_matrix device_gnn_model::head_backward(const device_matrix& grad_out,
                                              const device_linear_cache& cache) {
  COOPGNN_NVTX_RANGE("model/head/backward");
  impl& d = *impl_;
  constexpr const char* fn = "device_gnn_model::head_backward";
  COOPGNN_EXPECTS(d.head.has_value(), "{}: the model has no head", fn);
  const layer_layout& l = *d.head;
  COOPGNN_EXPECTS(cache.x.cols == l.in,
                  "{}: cache.x is [{}, {}] but in_dim is {} (was head_forward called with a "
                  "cache?)",
                  fn, cache.x.rows, cache.x.cols, l.in);
  COOPGNN_EXPECTS(grad_out.rows == cache.x.rows && grad_out.cols == l.out,
                  "{}: grad_out is [{}, {}], expected [{}, {}]", fn, grad_out.rows, grad_out.cols,
                  cache.x.rows, l.out);
  COOPGNN_EXPECTS(
      cache.keep.empty() || static_cast<std::int64_t>(cache.keep.size()) == cache.x.size(),
      "{}: dropout mask has {} entries, expected {}", fn, cache.keep.size(), cache.x.size());
  stream_t const s = d.s();
  std::int64_t const n = grad_out.rows;
  bias_grad_add(grad_out.data.data(), n, l.out, d.g(l.bias), s);
  gemm(d.ctx.cublas(), op::transpose, op::none, l.in, l.out, n, 1.0f, cache.x.data.data(), l.in,
       grad_out.data.data(), l.out, 1.0f, d.g(l.w_self), l.out, s);
  device_matrix gx = make_matrix(d.ctx, n, l.in);
  gemm(d.ctx.cublas(), op::none, op::transpose, n, l.in, l.out, 1.0f, grad_out.data.data(), l.out,
       d.w(l.w_self), l.out, 0.0f, gx.data.data(), l.in, s);
  if (!cache.keep.empty()) {
    dropout_backward(gx.data.data(), cache.keep.data(), gx.size(), cache.keep_scale, s);
  }
  return gx;
}

double device_gnn_model::loss(const device_matrix& logits,
                              const device_buffer<std::int64_t>& labels, float scale,
                              device_matrix* grad) const {
  COOPGNN_NVTX_RANGE("model/loss");
  impl& d = *impl_;
  COOPGNN_EXPECTS(static_cast<std::int64_t>(labels.size()) == logits.rows,
                  "device_gnn_model::loss: {} labels for {} rows of logits", labels.size(),
                  logits.rows);
  COOPGNN_EXPECTS(grad != &logits, "device_gnn_model::loss: grad is the same matrix as logits");
  stream_t const s = d.s();
  std::int64_t const n = logits.rows;
  if (grad != nullptr) *grad = make_matrix(d.ctx, n, logits.cols);
  auto row_loss = d.ctx.allocate<double>(static_cast<std::size_t>(n));
  auto total = d.ctx.allocate<float>(1);
  softmax_cross_entropy(logits.data.data(), labels.data(), n, logits.cols, scale,
                        grad != nullptr ? grad->data.data() : nullptr, row_loss.data(),
                        total.data(), s);
  return static_cast<double>(d.ctx.to_host(total)[0]);
}

void device_gnn_model::adam_step() {
  COOPGNN_NVTX_RANGE("model/adam");
  impl& d = *impl_;
  auto const t = d.steps + 1;  // counted only once the update is enqueued
  adam_step_params a;
  a.lr = d.adam.lr;
  a.beta1 = d.adam.beta1;
  a.beta2 = d.adam.beta2;
  a.eps = d.adam.eps;
  a.weight_decay = d.adam.weight_decay;
  a.bc1 = 1.0 - std::pow(a.beta1, static_cast<double>(t));
  a.bc2 = 1.0 - std::pow(a.beta2, static_cast<double>(t));
  cuda::adam_step(d.values.data(), d.grads.data(), d.m.data(), d.v.data(), d.num_params, a, d.s());
  d.steps = t;
}

void device_gnn_model::download(models::gnn_model& host) const {
  const impl& d = *impl_;
  auto const params = host.params();
  check_layout(params, d.shapes, "device_gnn_model::download");
  std::vector<float> const flat = d.ctx.to_host(d.values);
  std::size_t off = 0;
  for (auto* q : params) {
    auto const n = static_cast<std::size_t>(q->value.size());
    std::copy(flat.begin() + static_cast<std::ptrdiff_t>(off),
              flat.begin() + static_cast<std::ptrdiff_t>(off + n), q->value.data());
    off += n;
  }
}

}  // namespace coopgnn::cuda

#endif  // COOPGNN_WITH_CUDA
