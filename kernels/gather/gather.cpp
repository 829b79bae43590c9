#include "kernels/gather/gather.hpp"

#include <algorithm>

namespace coopgnn {

matrix<float> gather_rows(const float* table, std::int64_t rows, std::int64_t cols,
                          std::span<const vid_t> ids) {
  auto const m = static_cast<std::int64_t>(ids.size());
  matrix<float> out(m, cols);
  for (std::int64_t i = 0; i < m; ++i) {
    COOPGNN_EXPECTS(ids[i] >= 0 && ids[i] < rows,
                    "gather_rows: id {} at position {} is outside [0, {})", ids[i], i, rows);
    if (cols > 0) std::copy_n(table + ids[i] * cols, cols, out.row(i));
  }
  return out;
}

matrix<float> gather_rows(const matrix<float>& table, std::span<const vid_t> ids) {
  return gather_rows(table.rows() > 0 ? table.row(0) : nullptr, table.rows(), table.cols(), ids);
}

}  // namespace coopgnn
