// Dataset summary for `coopgnn info` (docs/design.md section 3): sizes, degree statistics,
// features, classes and splits, as a readable table or one JSON object.
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

/// Sizes of one link-prediction pair set (validation or test).
struct pair_set_info {
  std::int64_t pairs = 0;      ///< rows of seeds
  std::int64_t positives = 0;  ///< label-1 pairs (all pairs when there are no labels)
  std::int64_t queries = 0;    ///< distinct indexes (0 when there are none)
  std::int64_t neg_min = 0;    ///< fewest label-0 pairs in a query (0 when no queries)
  std::int64_t neg_max = 0;    ///< most label-0 pairs in a query
};

/// The link-prediction task of a dataset, as `coopgnn info` reports it.
struct link_info {
  bool present = false;
  std::string name;
  std::int64_t train = 0;  ///< training positives
  pair_set_info valid;
  pair_set_info test;
  std::int64_t item_begin = 0;  ///< user-item data: users [0, item_begin), items [item_begin,
  std::int64_t item_end = 0;    ///< item_end); both 0 otherwise
};

/// One node or edge type of a heterogeneous dataset (hetero_schema).
struct type_info {
  std::string name;              ///< node type, or "src_type:relation:dst_type"
  std::int64_t count = 0;        ///< vertices of the node type, or edges of the edge type
  std::int64_t feature_dim = 0;  ///< node types: columns of the input feature (0 = none)
  std::string feature_dtype;     ///< node types with features: "float32", "float16", "bfloat16"
};

/// What `coopgnn info` reports.
struct dataset_info {
  std::vector<type_info> node_types;  ///< heterogeneous datasets only (empty otherwise)
  std::vector<type_info> edge_types;
  std::string name;
  std::int64_t num_nodes = 0;
  /// Directed edges of the graph `train` trains (build_csc: a repeated edge, or a repeated
  /// (edge, relation) on typed data, counts once); the degrees, self-loops, homophily and edge
  /// type counts are over these.
  std::int64_t num_edges = 0;
  std::int64_t num_edges_stored = 0;  ///< edges as stored; minus num_edges = repeats removed
  degree_stats in_degree;
  degree_stats out_degree;
  std::int64_t isolated = 0;    ///< vertices with neither in- nor out-edges
  std::int64_t self_loops = 0;  ///< edges v -> v
  std::int64_t feature_rows = 0;
  std::int64_t feature_dim = 0;
  /// The input features' element type as stored and kept in memory: "float32", "float16" or
  /// "bfloat16" (2 bytes per element; widened to float32 when gathered).
  std::string feature_dtype = "float32";
  std::int64_t num_classes = 0;
  std::vector<std::int64_t> class_counts;  ///< [num_classes] vertices per label
  std::int64_t unlabeled = 0;              ///< vertices with label -1 (0 when there are no labels)
  double edge_homophily = -1;  ///< fraction of edges joining equal labels (-1: no labels)
  std::int64_t train = 0;
  std::int64_t valid = 0;
  std::int64_t test = 0;
  link_info link;
  // What the directory holds (inspect_dataset), and what was used:
  std::vector<dataset_contents::feature> features;  ///< every feature of metadata.yaml
  std::vector<dataset_contents::task> tasks;        ///< every task of metadata.yaml
  std::string input_feature;                        ///< the node feature read as input ("" = none)
  std::string trained_task;  ///< the task `train` with the same --task would train ("" = none)
  std::vector<std::string> notes;  ///< what the reader skipped (dataset::notes)
};

/// Computes the summary of `ds` over the graph `train` builds from it (cli::graph_of, repeated
/// edges once). O(V log V + E log d) time, O(V + E) memory for that graph. Does not validate `ds`
/// (call validate_dataset first); ids are assumed in range. features/tasks/trained_task stay empty
/// (the caller adds them from inspect_dataset); input_feature and notes come from ds.
dataset_info compute_info(const dataset& ds);

/// The features and tasks of `c` as table rows ("node features", "edge features", "tasks"),
/// marking `input_feature` and `trained_task`; used by format_info_table and on its own when
/// the dataset cannot be read.
std::string format_contents(const std::vector<dataset_contents::feature>& features,
                            const std::vector<dataset_contents::task>& tasks,
                            const std::string& input_feature, const std::string& trained_task);

/// A human-readable multi-line table.
std::string format_info_table(const dataset_info& info);

/// One JSON object with the fields of dataset_info (degree stats nested as "in_degree" and
/// "out_degree"; "edge_homophily" is null when there are no labels; "link" is null without a
/// link task, else {name, train, valid: {pairs, positives, queries, negatives_per_query: [min,
/// max]}, test: {...}, items: [item_begin, item_end] or null}), "features": [{domain, type, name,
/// format, path, dtype, shape, error, input}], "tasks": [{name, kind, num_classes, train,
/// valid, test, error, trained}], "notes": [...].
std::string info_to_json(const dataset_info& info);

}  // namespace coopgnn
