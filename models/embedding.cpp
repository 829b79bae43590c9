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
                                 const adam_options& options, std::vector<row_range> frozen)
    : ctx_(ctx), options_(options), num_rows_(num_rows), frozen_(std::move(frozen)) {
  COOPGNN_EXPECTS(num_rows >= 0, "embedding_table: {} rows", num_rows);
  COOPGNN_EXPECTS(dim >= 1, "embedding_table: --embedding-dim {} must be >= 1", dim);
  validate(options);
  std::sort(frozen_.begin(), frozen_.end());
  std::int64_t next = 0, base = 0;
  for (auto const& [a, b] : frozen_) {
    COOPGNN_EXPECTS(0 <= a && a <= b && b <= num_rows,
                    "embedding_table: frozen rows [{}, {}) outside the table's {}", a, b, num_rows);
    COOPGNN_EXPECTS(a >= next, "embedding_table: frozen rows [{}, {}) overlap another range", a, b);
    if (a > next) stored_.push_back({next, a, base});
    base += a - next;
    next = b;
  }
  if (next < num_rows) stored_.push_back({next, num_rows, base});
  std::int64_t const stored = base + (num_rows - next);
  // Frozen ids gather the extra zero row at the end.
  matrix<float> init(stored + (frozen_.empty() ? 0 : 1), dim);
  rng::stream const s = rng::make_stream(seed, rng::purpose::init, layer_index);
  double const a = std::sqrt(3.0) * 0.1;
  for (stored_range const& sr : stored_) {
    for (std::int64_t r = sr.first; r < sr.last; ++r) {
      for (std::int64_t c = 0; c < dim; ++c) {
        auto const w =
            rng::draw4(s, static_cast<std::uint64_t>(r), static_cast<std::uint32_t>(c), 0);
        init(sr.base + r - sr.first, c) =
            static_cast<float>((2.0 * rng::uniform_double(w[0], w[1]) - 1.0) * a);
      }
    }
  }
  values_ = to_space(ctx, std::move(init));
  m_ = zeros<float>(ctx, stored, dim);
  v_ = zeros<float>(ctx, stored, dim);
}

std::int64_t embedding_table::stored_row(std::int64_t r) const {
  auto it = std::upper_bound(stored_.begin(), stored_.end(), r,
                             [](std::int64_t x, const stored_range& sr) { return x < sr.first; });
  if (it == stored_.begin()) return zero_row();
  --it;
  return r < it->last ? it->base + (r - it->first) : zero_row();
}

tensor<float> embedding_table::gather(buffer_view<const vid_t> ids) const {
  tensor<float> out(ctx_, static_cast<std::int64_t>(ids.size), dim());
  if (frozen_.empty()) {
    gather_rows(ctx_, values_.view(), ids, out.view());
    return out;
  }
  // Ids to stored rows (frozen ids to the zero row), on the host.
  std::vector<vid_t> copied;
  std::span<const vid_t> const h = host_readable<vid_t>(ctx_, ids, copied);
  std::vector<std::int64_t> rows(h.size());
  for (std::size_t i = 0; i < h.size(); ++i) {
    COOPGNN_EXPECTS(h[i] >= 0 && h[i] < num_rows_,
                    "embedding_table::gather: id {} at position {} is outside [0, {})", h[i], i,
                    num_rows_);
    rows[i] = stored_row(h[i]);
  }
  buffer<std::int64_t> const placed =
      upload<std::int64_t>(ctx_, std::span<const std::int64_t>(rows));
  gather_rows(ctx_, values_.view(), placed.view(), out.view());
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
  auto const t = t_ + 1;
  adam_step_params const a = step_params(options_, t);
  tensor_view<float> const stored{values_.data(), stored_rows(), dim(), values_.space()};
  // The compact sums go straight to Adam: the step costs O(k dim), not O(rows dim).
  if (frozen_.empty()) {
    buffer_view<const std::int64_t> const rows_touched{u.unique.data(), u.unique.size(),
                                                       u.unique.space()};
    adam_update_rows(ctx_, stored, sum.view(), m_.view(), v_.view(), rows_touched, a);
  } else {
    // The touched ids outside every frozen range: runs of the sorted unique ids (read on the
    // host; off the host a copy of the k ids), each one Adam call on its slice of the sums, at
    // the ids' stored rows.
    std::vector<vid_t> copied;
    std::span<const vid_t> const uh = host_readable<vid_t>(ctx_, u.unique.view(), copied);
    std::vector<std::int64_t> rows(uh.size());
    for (std::size_t i = 0; i < uh.size(); ++i) rows[i] = stored_row(uh[i]);
    buffer<std::int64_t> const placed =
        upload<std::int64_t>(ctx_, std::span<const std::int64_t>(rows));
    auto frozen_at = [&](std::int64_t i) {
      return rows[static_cast<std::size_t>(i)] == zero_row();
    };
    std::int64_t i = 0;
    while (i < k) {
      if (frozen_at(i)) {
        ++i;
        continue;
      }
      std::int64_t j = i + 1;
      while (j < k && !frozen_at(j)) ++j;
      tensor_view<const float> const g_run{sum.data() + i * dim(), j - i, dim(), sum.view().space};
      buffer_view<const std::int64_t> const rows_run{
          placed.data() + i, static_cast<std::size_t>(j - i), placed.space()};
      adam_update_rows(ctx_, stored, g_run, m_.view(), v_.view(), rows_run, a);
      i = j;
    }
  }
  t_ = t;
}

matrix<float> embedding_table::expand(tensor_view<const float> stored_values) const {
  COOPGNN_EXPECTS(stored_values.rows == stored_rows() && stored_values.cols == dim(),
                  "embedding_table::expand: [{}, {}] for a table of {} stored rows of width {}",
                  stored_values.rows, stored_values.cols, stored_rows(), dim());
  matrix<float> const compact = download<float>(ctx_, stored_values);
  if (frozen_.empty()) return compact;
  matrix<float> out(num_rows_, dim());
  for (stored_range const& sr : stored_) {
    std::copy_n(compact.data() + sr.base * dim(), (sr.last - sr.first) * dim(),
                out.data() + sr.first * dim());
  }
  return out;
}

void embedding_table::restore(std::span<const float> values, std::span<const float> m,
                              std::span<const float> v, std::int64_t t) {
  auto const n = static_cast<std::size_t>(rows() * dim());
  COOPGNN_EXPECTS(values.size() == n && m.size() == n && v.size() == n,
                  "embedding_table::restore: {}, {} and {} values for a [{}, {}] table",
                  values.size(), m.size(), v.size(), rows(), dim());
  COOPGNN_EXPECTS(t >= 0, "embedding_table::restore: step count {} is negative", t);
  for (stored_range const& sr : stored_) {
    auto const at = static_cast<std::size_t>(sr.first * dim());
    auto const len = static_cast<std::size_t>((sr.last - sr.first) * dim());
    auto const to = static_cast<std::size_t>(sr.base * dim());
    copy<float>(ctx_, buffer_view<float>{values_.data() + to, len, values_.space()},
                host_view(values.subspan(at, len)));
    copy<float>(ctx_, buffer_view<float>{m_.data() + to, len, m_.space()},
                host_view(m.subspan(at, len)));
    copy<float>(ctx_, buffer_view<float>{v_.data() + to, len, v_.space()},
                host_view(v.subspan(at, len)));
  }
  synchronize(ctx_);
  t_ = t;
}

}  // namespace coopgnn::models
