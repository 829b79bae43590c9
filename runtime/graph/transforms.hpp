// Train-time transforms of a dataset's node features (README "Datasets"; PyG's
// torch_geometric.transforms).
#pragma once

#include <string>

#include "runtime/core/matrix.hpp"

namespace coopgnn {

/// How the input features are normalised before training (--normalize-features).
enum class feature_normalization {
  none,  ///< as stored
  row,   ///< normalize_feature_rows
};

/// Parses "none" or "row". @throws logic_error naming --normalize-features otherwise.
feature_normalization parse_feature_normalization(const std::string& name);
std::string to_string(feature_normalization n);

/// Row normalisation exactly as PyG's NormalizeFeatures (torch_geometric 2.x,
/// transforms/normalize_features.py), which Kipf & Welling (ICLR 2017, section 5.1) apply to the
/// citation graphs' bag-of-words features: x <- x - min(x) (the minimum over the whole table),
/// then every row divided by max(its sum, 1). For non-negative tables whose non-zero rows sum
/// to at least 1 (bag-of-words counts) this is Kipf & Welling's D^-1 X.
/// @param x  [N, F] float32 host matrix, changed in place; sums are taken in double and each
///           value is rounded once. An empty table is left as is.
/// @throws logic_error when x holds a NaN or Inf (the result would be garbage).
void normalize_feature_rows(matrix<float>& x);

}  // namespace coopgnn
