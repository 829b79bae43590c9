#include "kernels/gather/gather.hpp"

#include <algorithm>

namespace coopgnn {

matrix<float> gather_rows(const matrix<float>& table, std::span<const vid_t> ids) {
  auto const m = static_cast<std::int64_t>(ids.size());
  matrix<float> out(m, table.cols());
  for (std::int64_t i = 0; i < m; ++i) {
    COOPGNN_EXPECTS(ids[i] >= 0 && ids[i] < table.rows(),
                    "gather_rows: id {} at position {} is outside [0, {})", ids[i], i,
                    table.rows());
    std::copy_n(table.row(ids[i]), table.cols(), out.row(i));
  }
  return out;
}

}  // namespace coopgnn
