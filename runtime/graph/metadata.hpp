// The metadata.yaml of a dataset directory in DGL GraphBolt's OnDiskDataset layout
// (docs/design.md section 3.1). The model covers node and edge types, so heterogeneous datasets
// parse; read_dataset (dataset.hpp) decides what it accepts. Paths are relative to the dataset
// directory.
//
//   dataset_name: cora
//   graph:
//     nodes: [{type: paper (optional), num: 2708}]
//     edges: [{type: "paper:cites:paper" (optional), format: csv | numpy, path: edges/edges.npy}]
//   feature_data:
//     - {domain: node | edge, type: (optional), name: feat, format: numpy, in_memory: true,
//        path: data/feat.npy}
//   tasks:
//     - name: node_classification
//       num_classes: 7
//       train_set / validation_set / test_set:
//         - type: (optional)
//           data: [{name: seeds | labels | indexes | ..., format: numpy, path:
//           set/train_seeds.npy}]
//     - name: link_prediction
//       item_begin: 29858   (coopgnn's extra keys for user-item data; optional, both or neither)
//       item_end: 70839
//       train_set / validation_set / test_set:
//         - data: [{name: seeds, ...}, {name: labels, ...}, {name: indexes, ...}]
//
// GraphBolt keeps a task's keys other than the three sets as free-form metadata
// (dgl python/dgl/graphbolt/impl/ondisk_metadata.py, OnDiskTaskData(ExtraMetaData) with
// extra="allow", v2.1.0 and later), so item_begin / item_end load in DGL unchanged.
//
// Numpy edges are int arrays shaped [2, E] (row 0 sources, row 1 destinations); csv edges are
// "src,dst" lines without a header.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace coopgnn {

/// One entry of graph.nodes: a node type (absent for a homogeneous graph) and its count.
struct node_meta {
  std::optional<std::string> type;
  std::int64_t num = 0;
};

/// One entry of graph.edges. `type` is "src_type:edge_type:dst_type" (absent when homogeneous).
struct edge_meta {
  std::optional<std::string> type;
  std::string format;  ///< "csv" or "numpy"
  std::string path;
};

/// One entry of feature_data.
struct feature_meta {
  std::string domain;  ///< "node" or "edge"
  std::optional<std::string> type;
  std::string name;
  std::string format = "numpy";  ///< "numpy" (.npy) or "torch" (torch.save of one tensor)
  bool in_memory = true;
  std::string path;
};

/// One array of an item set: seeds, labels, indexes, ...
struct item_data_meta {
  std::optional<std::string> name;  ///< GraphBolt allows unnamed data
  std::string format = "numpy";     ///< "numpy" or "torch"
  bool in_memory = true;
  std::string path;
};

/// One item set of a train/validation/test set (one per node type in heterogeneous tasks).
struct item_set_meta {
  std::optional<std::string> type;
  std::vector<item_data_meta> data;
};

/// One entry of tasks.
struct task_meta {
  std::string name;
  std::optional<std::int64_t> num_classes;
  std::optional<std::int64_t> item_begin;  ///< user-item link prediction: first item vertex
  std::optional<std::int64_t> item_end;    ///< one past the last item vertex
  std::vector<item_set_meta> train_set;
  std::vector<item_set_meta> validation_set;
  std::vector<item_set_meta> test_set;
};

/// The whole metadata.yaml.
struct dataset_metadata {
  std::string dataset_name;
  std::vector<node_meta> nodes;
  std::vector<edge_meta> edges;
  std::vector<feature_meta> feature_data;
  std::vector<task_meta> tasks;
};

/// Parses metadata.yaml text. `what` names the file in messages (normally its path).
/// Unknown keys are ignored (GraphBolt ignores them too); dataset_name defaults to "".
/// @throws io_error "WHAT: yaml error at line L, column C: ..." for malformed YAML;
///         "WHAT: missing required key 'graph.nodes[0].num'" for a missing key;
///         "WHAT: key 'K' (line L) must be ..." for a value of the wrong kind (a negative num, an
///         edge format other than csv or numpy, a feature or item format other than numpy or
///         torch, a domain other
///         than node or edge, a non-boolean in_memory, a negative num_classes, item_begin or
///         item_end);
///         "WHAT: 'graph_topology' ... preprocessed" for GraphBolt's preprocessed metadata.
dataset_metadata parse_metadata(std::string_view yaml_text, const std::string& what);

/// Reads and parses `file`. @throws io_error "FILE: cannot open ..." or as parse_metadata.
dataset_metadata read_metadata(const std::filesystem::path& file);

/// The YAML text of `meta` in GraphBolt's layout (block style; optional keys omitted when absent,
/// empty lists omitted). parse_metadata(emit_metadata(m)) == m.
std::string emit_metadata(const dataset_metadata& meta);

/// Writes emit_metadata(meta) to `file` through a temporary and a rename.
/// @throws io_error when the file cannot be written.
void write_metadata(const dataset_metadata& meta, const std::filesystem::path& file);

}  // namespace coopgnn
