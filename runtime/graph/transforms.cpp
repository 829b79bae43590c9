#include "runtime/graph/transforms.hpp"

#include <algorithm>
#include <cmath>

#include "runtime/core/error.hpp"

namespace coopgnn {

feature_normalization parse_feature_normalization(const std::string& name) {
  if (name == "none") return feature_normalization::none;
  if (name == "row") return feature_normalization::row;
  COOPGNN_FAIL("--normalize-features '{}': expected none or row", name);
}

std::string to_string(feature_normalization n) {
  return n == feature_normalization::row ? "row" : "none";
}

void normalize_feature_rows(matrix<float>& x) {
  std::int64_t const rows = x.rows();
  std::int64_t const cols = x.cols();
  if (rows == 0 || cols == 0) return;
  float* d = x.data();
  float lo = d[0];
  for (std::int64_t i = 0; i < rows * cols; ++i) {
    COOPGNN_EXPECTS(std::isfinite(d[i]),
                    "normalize_feature_rows: feature row {} column {} is {} (not finite)", i / cols,
                    i % cols, d[i]);
    lo = std::min(lo, d[i]);
  }
  for (std::int64_t r = 0; r < rows; ++r) {
    float* row = d + r * cols;
    double sum = 0;
    for (std::int64_t c = 0; c < cols; ++c) sum += static_cast<double>(row[c]) - lo;
    double const div = std::max(sum, 1.0);
    for (std::int64_t c = 0; c < cols; ++c) {
      row[c] = static_cast<float>((static_cast<double>(row[c]) - lo) / div);
    }
  }
}

}  // namespace coopgnn
