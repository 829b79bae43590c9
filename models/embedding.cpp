#include "models/embedding.hpp"

#include <cmath>
#include <vector>

#include "kernels/dense/link_ops.hpp"
#include "kernels/gather/gather.hpp"
#include "runtime/core/error.hpp"
#include "runtime/core/nvtx.hpp"
#include "runtime/core/rng.hpp"

namespace coopgnn::models {

embedding_table::embedding_table(const exec_context& ctx, std::int64_t num_rows, std::int64_t dim,
                                 std::uint64_t seed, std::uint32_t layer_index,
                                 const adam_options& options)
    : ctx_(ctx), options_(options) {
  COOPGNN_EXPECTS(num_rows >= 0, "embedding_table: {} rows", num_rows);
  COOPGNN_EXPECTS(dim >= 1, "embedding_table: --embedding-dim {} must be >= 1", dim);
  validate(options);
  matrix<float> init(num_rows, dim);
  rng::stream const s = rng::make_stream(seed, rng::purpose::init, layer_index);
  double const a = std::sqrt(3.0) * 0.1;
  for (std::int64_t r = 0; r < num_rows; ++r) {
    for (std::int64_t c = 0; c < dim; ++c) {
      auto const w = rng::draw4(s, static_cast<std::uint64_t>(r), static_cast<std::uint32_t>(c), 0);
      init(r, c) = static_cast<float>((2.0 * rng::uniform_double(w[0], w[1]) - 1.0) * a);
    }
  }
  values_ = to_space(ctx, std::move(init));
  grads_ = zeros<float>(ctx, num_rows, dim);
  tensor<float> t = zeros<float>(ctx, num_rows, 1);
  touched_ = std::move(t.storage());
  m_ = zeros<float>(ctx, num_rows, dim);
  v_ = zeros<float>(ctx, num_rows, dim);
}

tensor<float> embedding_table::gather(buffer_view<const vid_t> ids) const {
  tensor<float> out(ctx_, static_cast<std::int64_t>(ids.size), dim());
  gather_rows(ctx_, values_.view(), ids, out.view());
  return out;
}

void embedding_table::accumulate(buffer_view<const vid_t> ids, tensor_view<const float> g) {
  COOPGNN_NVTX_RANGE("model/embedding/accumulate");
  COOPGNN_EXPECTS(static_cast<std::int64_t>(ids.size) == g.rows && g.cols == dim(),
                  "embedding_table::accumulate: {} ids for a [{}, {}] gradient (dim {})", ids.size,
                  g.rows, g.cols, dim());
  scatter_add_rows<float>(ctx_, g, ids, grads_.view());
  tensor<float> ones(ctx_, g.rows, 1);
  std::vector<float> const one(static_cast<std::size_t>(g.rows), 1.0f);
  copy<float>(ctx_, ones.view().flat(), host_view(one));
  scatter_add_rows<float>(ctx_, ones.view(), ids,
                          tensor_view<float>{touched_.data(), rows(), 1, touched_.space()});
}

void embedding_table::step() {
  COOPGNN_NVTX_RANGE("model/embedding/adam");
  std::vector<float> const counts = download<float>(ctx_, touched_.view());
  std::vector<std::int64_t> rows_touched;
  for (std::size_t r = 0; r < counts.size(); ++r) {
    if (counts[r] != 0.0f) rows_touched.push_back(static_cast<std::int64_t>(r));
  }
  auto const t = t_ + 1;
  adam_step_params a;
  a.lr = options_.lr;
  a.beta1 = options_.beta1;
  a.beta2 = options_.beta2;
  a.eps = options_.eps;
  a.weight_decay = options_.weight_decay;
  a.bc1 = 1.0 - std::pow(a.beta1, static_cast<double>(t));
  a.bc2 = 1.0 - std::pow(a.beta2, static_cast<double>(t));
  buffer<std::int64_t> const placed = to_space(ctx_, std::move(rows_touched));
  adam_update_rows(ctx_, values_.view(), grads_.view(), m_.view(), v_.view(), placed.view(), a);
  t_ = t;
  // Clear exactly what the step read (the gradient is zero elsewhere).
  fill_zero(ctx_, grads_.view().flat());
  fill_zero(ctx_, touched_.view());
}

matrix<float> embedding_table::to_host_matrix() const { return download<float>(ctx_, values()); }

void embedding_table::copy_values_from(const embedding_table& other) {
  COOPGNN_EXPECTS(other.rows() == rows() && other.dim() == dim(),
                  "embedding_table::copy_values_from: [{}, {}] into [{}, {}]", other.rows(),
                  other.dim(), rows(), dim());
  const exec_context& ctx =
      values_.space() == memory_space::device ? ctx_ : other.ctx_;
  copy<float>(ctx, values_.view().flat(), other.values_.view().flat());
}

}  // namespace coopgnn::models
