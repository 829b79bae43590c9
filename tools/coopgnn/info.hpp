// Dataset summary for `coopgnn info` (DESIGN.md section 3): sizes, degree statistics, features,
// classes and splits, as a readable table or one JSON object.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/graph/dataset.hpp"

namespace coopgnn {

/// Statistics of one degree distribution over all |V| vertices.
struct degree_stats {
  std::int64_t min = 0;
  std::int64_t max = 0;
  double mean = 0;        ///< |E| / |V|
  double median = 0;      ///< middle value; mean of the two middle values when |V| is even
  std::int64_t p99 = 0;   ///< nearest-rank 99th percentile: sorted[ceil(0.99 |V|) - 1]
  std::int64_t zero = 0;  ///< vertices of degree 0
};

/// What `coopgnn info` reports.
struct dataset_info {
  std::string name;
  std::int64_t num_nodes = 0;
  std::int64_t num_edges = 0;  ///< directed edges as stored
  degree_stats in_degree;
  degree_stats out_degree;
  std::int64_t isolated = 0;    ///< vertices with neither in- nor out-edges
  std::int64_t self_loops = 0;  ///< edges v -> v
  std::int64_t feature_rows = 0;
  std::int64_t feature_dim = 0;
  std::int64_t num_classes = 0;
  std::vector<std::int64_t> class_counts;  ///< [num_classes] vertices per label
  std::int64_t unlabeled = 0;              ///< vertices with label -1 (0 when there are no labels)
  double edge_homophily = -1;  ///< fraction of edges joining equal labels (-1: no labels)
  std::int64_t train = 0;
  std::int64_t valid = 0;
  std::int64_t test = 0;
};

/// Computes the summary of `ds`. O(V log V + E) time. Does not validate `ds` (call
/// validate_dataset first); ids are assumed in range.
dataset_info compute_info(const dataset& ds);

/// A human-readable multi-line table.
std::string format_info_table(const dataset_info& info);

/// One JSON object with the fields of dataset_info (degree stats nested as "in_degree" and
/// "out_degree"; "edge_homophily" is null when there are no labels).
std::string info_to_json(const dataset_info& info);

}  // namespace coopgnn
