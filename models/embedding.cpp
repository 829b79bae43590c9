#include "models/embedding.hpp"

#include <algorithm>
#include <climits>
#include <iterator>
#include <vector>

#include "kernels/dense/link_ops.hpp"
#include "kernels/gather/gather.hpp"
#include "kernels/sample/sampling.hpp"
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
  m_ = zeros<float>(ctx, num_rows, dim);
  v_ = zeros<float>(ctx, num_rows, dim);
}

tensor<float> embedding_table::gather(buffer_view<const vid_t> ids) const {
  tensor<float> out(ctx_, static_cast<std::int64_t>(ids.size), dim());
  gather_rows(ctx_, values_.view(), ids, out.view());
  return out;
}

void embedding_table::apply(buffer_view<const vid_t> ids, tensor_view<const float> g) {
  COOPGNN_NVTX_RANGE("model/embedding/adam");
  COOPGNN_EXPECTS(static_cast<std::int64_t>(ids.size) == g.rows && g.cols == dim(),
                  "embedding_table::apply: {} ids for a [{}, {}] gradient (dim {})", ids.size,
                  g.rows, g.cols, dim());
  // The distinct rows and each one's gradient sum (compact, in ascending i per row).
  auto u = unique_with_inverse(ctx_, ids);
  auto const k = static_cast<std::int64_t>(u.unique.size());
  tensor<float> sum = zeros<float>(ctx_, k, dim());
  scatter_add_rows<float>(ctx_, g, u.inverse.view(), sum.view());
  buffer_view<const std::int64_t> const rows_touched{u.unique.data(), u.unique.size(),
                                                     u.unique.space()};
  auto const t = t_ + 1;
  adam_step_params const a = step_params(options_, t);
  // The compact sums go straight to Adam: the step costs O(k dim), not O(rows dim).
  if (frozen_.empty()) {
    adam_update_rows(ctx_, values_.view(), sum.view(), m_.view(), v_.view(), rows_touched, a);
  } else {
    // The touched rows outside every frozen range: runs of the sorted unique ids (read on the
    // host; off the host a copy of the k ids), each one Adam call on its slice of the sums.
    std::vector<vid_t> copied;
    std::span<const vid_t> const uh = host_readable<vid_t>(ctx_, u.unique.view(), copied);
    auto frozen_at = [&](vid_t r) {
      auto it = std::upper_bound(frozen_.begin(), frozen_.end(),
                                 std::pair<std::int64_t, std::int64_t>{r, INT64_MAX});
      return it != frozen_.begin() && r < std::prev(it)->second;
    };
    std::int64_t i = 0;
    while (i < k) {
      if (frozen_at(uh[static_cast<std::size_t>(i)])) {
        ++i;
        continue;
      }
      std::int64_t j = i + 1;
      while (j < k && !frozen_at(uh[static_cast<std::size_t>(j)])) ++j;
      tensor_view<const float> const g_run{sum.data() + i * dim(), j - i, dim(), sum.view().space};
      buffer_view<const std::int64_t> const rows_run{
          u.unique.data() + i, static_cast<std::size_t>(j - i), u.unique.space()};
      adam_update_rows(ctx_, values_.view(), g_run, m_.view(), v_.view(), rows_run, a);
      i = j;
    }
  }
  t_ = t;
}

void embedding_table::set_frozen_rows(std::int64_t first, const matrix<float>& values) {
  std::int64_t const last = first + values.rows();
  COOPGNN_EXPECTS(first >= 0 && last <= rows(),
                  "embedding_table::set_frozen_rows: rows [{}, {}) outside the table's {}", first,
                  last, rows());
  COOPGNN_EXPECTS(values.rows() == 0 || values.cols() == dim(),
                  "embedding_table::set_frozen_rows: {} columns for a table of width {}",
                  values.cols(), dim());
  for (auto const& [a, b] : frozen_) {
    COOPGNN_EXPECTS(last <= a || b <= first,
                    "embedding_table::set_frozen_rows: rows [{}, {}) overlap frozen [{}, {})",
                    first, last, a, b);
  }
  if (values.rows() == 0) return;
  copy<float>(ctx_,
              buffer_view<float>{values_.data() + first * dim(),
                                 static_cast<std::size_t>(values.size()), values_.space()},
              host_view(values).flat());
  synchronize(ctx_);
  frozen_.emplace_back(first, last);
  std::sort(frozen_.begin(), frozen_.end());
}

void embedding_table::restore(std::span<const float> values, std::span<const float> m,
                              std::span<const float> v, std::int64_t t) {
  auto const n = static_cast<std::size_t>(rows() * dim());
  COOPGNN_EXPECTS(values.size() == n && m.size() == n && v.size() == n,
                  "embedding_table::restore: {}, {} and {} values for a [{}, {}] table",
                  values.size(), m.size(), v.size(), rows(), dim());
  COOPGNN_EXPECTS(t >= 0, "embedding_table::restore: step count {} is negative", t);
  copy<float>(ctx_, values_.view().flat(), host_view(values));
  copy<float>(ctx_, m_.view().flat(), host_view(m));
  copy<float>(ctx_, v_.view().flat(), host_view(v));
  synchronize(ctx_);
  t_ = t;
}

matrix<float> embedding_table::to_host_matrix() const { return download<float>(ctx_, values()); }

}  // namespace coopgnn::models
