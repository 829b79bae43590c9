// An in-memory dataset (node classification and/or link prediction) and its on-disk form
// (docs/design.md section 3.1): a directory in DGL GraphBolt's OnDiskDataset layout, metadata.yaml
// plus NumPy .npy arrays.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/core/half.hpp"
#include "runtime/core/matrix.hpp"
#include "runtime/core/types.hpp"
#include "runtime/graph/edges.hpp"

namespace coopgnn {

/// Pairs (u, v) of a link-prediction item set, as GraphBolt's `link_prediction` task stores them
/// (docs/design.md sections 3.1 and 7.1): `seeds` [M, 2] (column 0 = src, 1 = dst), optional
/// `labels` [M] (1 = a true edge, 0 = a negative) and `indexes` [M] (the query each pair belongs
/// to: a positive and its negatives share one index; DGL's ogbl-citation2 example writes them so).
/// GraphBolt's older per-positive layout (`node_pairs` / `seeds` [N, 2] with `negative_dsts` [N,
/// K]) is read into this form: query i = positive i (label 1) followed by its K tail-corrupted
/// pairs (label 0). Invariants (validate_dataset, read_dataset): ids in [0, |V|); labels 0 or 1;
/// indexes >= 0 and non-decreasing (gaps allowed), every query holding at least one label-1 pair
/// when both are present; labels without indexes = independent labelled pairs (AUC-style
/// evaluation). Heterogeneous graphs (GraphBolt's typed item sets, `type:
/// "src_type:relation:dst_type"`): one item set per relation, the seeds local ids of the relation's
/// source and destination types, shifted to global ids on reading; `relation` says each pair's edge
/// type. Query ids of a later item set are shifted past the earlier ones' when they would overlap.
struct pair_set {
  std::vector<vid_t> src;             ///< [M] pair sources
  std::vector<vid_t> dst;             ///< [M] pair destinations
  std::vector<std::int64_t> labels;   ///< [M] 1 or 0; empty = every pair is a positive
  std::vector<std::int64_t> indexes;  ///< [M] query ids, non-decreasing; empty = no queries
  /// [M] the relation of each pair on a heterogeneous graph: an index into
  /// hetero_schema::edge_types, whose "src_type:relation:dst_type" the pair's ends fit (read
  /// from the item set's `type`); empty on untyped graphs.
  std::vector<std::int32_t> relation;

  [[nodiscard]] std::int64_t size() const { return static_cast<std::int64_t>(src.size()); }
  [[nodiscard]] bool empty() const { return src.empty(); }
};

/// A link-prediction task (docs/design.md section 7.1): the training positives (whose edges the
/// dataset's graph holds, unless they were held out) and the evaluation pairs.
struct link_task {
  std::string name;  ///< the task's name in metadata.yaml
  pair_set train;    ///< positives to train on (labels and indexes empty)
  pair_set valid;    ///< validation pairs (positives with their negatives, or positives only)
  pair_set test;     ///< test pairs
  /// User-item data (LightGCN layout, coopgnn convert --from lightgcn): users are the vertices
  /// [0, item_begin), items [item_begin, item_end); evaluation ranks every item for each user
  /// (Recall@K / NDCG@K). item_end == 0: not user-item data. Stored in metadata.yaml as the
  /// task's extra keys `item_begin` / `item_end`.
  vid_t item_begin = 0;
  vid_t item_end = 0;
  [[nodiscard]] bool user_item() const { return item_end > item_begin; }
};

/// The types of a heterogeneous graph (DGL GraphBolt's typed OnDiskDataset layout: node types,
/// edge types "src_type:relation:dst_type", typed features and typed item sets), laid over the
/// dataset's one global id space as GraphBolt's FusedCSCSamplingGraph does: node type t holds the
/// global ids [node_offsets[t], node_offsets[t + 1]) in metadata.yaml order, and a type's local id
/// i is global id node_offsets[t] + i. dataset::src/dst hold global ids; edge_type[e] is the
/// relation of edge e.
struct hetero_schema {
  std::vector<std::string> node_types;     ///< [T] distinct names, metadata order
  std::vector<vid_t> node_offsets;         ///< [T + 1] ascending, node_offsets[T] = |V|
  std::vector<std::string> edge_types;     ///< [R] distinct "src_type:relation:dst_type"
  std::vector<std::int32_t> edge_type;     ///< [E] relation index in [0, R) of each edge
  std::vector<matrix<float>> features;     ///< [T] input features of type t, [count_t, F_t] float32
                                           ///< (0 x 0: the type has none, or they are 16-bit or
                                           ///< left in their file)
  std::vector<std::string> feature_names;  ///< [T] their names in feature_data ("" = none)
  /// [T], or empty when every type's features are float32 and in memory: the bit patterns of
  /// type t's 16-bit input features, [count_t, F_t] (feature_types[t] float16 or bfloat16), kept
  /// at 2 bytes per element as dataset::features16 is (0 x 0 for the other types).
  std::vector<matrix<std::uint16_t>> features16;
  /// [T] or empty (= float32 for every type): the element type of type t's input features, in
  /// memory and in feature_files[t] alike.
  std::vector<feature_dtype> feature_types;
  /// [T] or empty: the .npy file of type t's input features when they were left there
  /// (dataset_read_options::load_features false; the trainer maps it, storage tier mmap), with
  /// their width in feature_cols[t]; "" for types whose features are in memory or absent.
  std::vector<std::filesystem::path> feature_files;
  std::vector<std::int64_t> feature_cols;  ///< [T] or empty: F_t of the types in feature_files
  /// The node type of the node-classification task's seeds ("" when there is none); labels of
  /// vertices of other types are -1.
  std::string target_type;

  [[nodiscard]] std::int64_t num_node_types() const {
    return static_cast<std::int64_t>(node_types.size());
  }
  /// Vertices of type t. @pre 0 <= t < T
  [[nodiscard]] vid_t count(std::int64_t t) const {
    return node_offsets[static_cast<std::size_t>(t) + 1] -
           node_offsets[static_cast<std::size_t>(t)];
  }
  /// The element type of type t's input features (float32 when feature_types is empty).
  [[nodiscard]] feature_dtype feature_type(std::int64_t t) const {
    return feature_types.empty() ? feature_dtype::float32
                                 : feature_types[static_cast<std::size_t>(t)];
  }
  /// F_t: the width of type t's input features wherever they are (float32 or 16-bit in memory,
  /// or left in their file); 0 when the type has none. @pre 0 <= t < T
  [[nodiscard]] std::int64_t feature_dim(std::int64_t t) const;
  /// Whether type t's input features are left in feature_files[t] (not in memory).
  [[nodiscard]] bool features_in_file(std::int64_t t) const {
    return !feature_files.empty() && !feature_files[static_cast<std::size_t>(t)].empty();
  }
  /// Bytes of one of type t's feature rows as stored: F_t * feature_dtype_size(feature_type(t)).
  [[nodiscard]] std::int64_t feature_row_bytes(std::int64_t t) const {
    return feature_dim(t) * feature_dtype_size(feature_type(t));
  }
  /// The index of node type `name`, or -1.
  [[nodiscard]] std::int64_t node_type_index(std::string_view name) const;
  /// The index of edge type `name` ("src:relation:dst"), or -1.
  [[nodiscard]] std::int64_t edge_type_index(std::string_view name) const;
  /// The node type of global id v (binary search). @pre 0 <= v < |V|
  [[nodiscard]] std::int64_t type_of(vid_t v) const;
};

/// The reverse relation of edge type r ("s:rel:d"): the one edge type "d:*:s" of the schema
/// (for s == d, the one edge type "s:*:s", which may be r itself: its reverse edges are its
/// own). -1 when there is none. What `--exclude reverse` and `coopgnn split-edges` remove.
/// @throws logic_error for r outside [0, R), or when several edge types fit (naming them:
///         the schema does not say which is the reverse).
std::int64_t reverse_edge_type(const hetero_schema& h, std::int64_t r);

/// Splits "src_type:relation:dst_type" into its three parts.
/// @throws io_error "WHAT: edge type 'X' must be 'src_type:relation:dst_type'" otherwise
///         (two colons, three non-empty parts).
std::array<std::string, 3> split_edge_type(std::string_view type, std::string_view what);

/// A graph with node features, labels and a train/validation/test split, and optionally a
/// link-prediction task; homogeneous unless `hetero` is set.
/// The edge list is directed as stored: an undirected graph holds both directions.
struct dataset {
  std::string name;
  vid_t num_nodes = 0;
  std::vector<vid_t> src;  ///< [E] edge sources (edge src[e] -> dst[e])
  std::vector<vid_t> dst;  ///< [E] edge destinations
  /// The (2, E) .npy holding the edges when read_dataset left them there
  /// (dataset_read_options::load_edges false): src and dst are then empty, edges_in_file is E,
  /// and read_edge_csc (csc.hpp) builds the CSC from the file. Empty otherwise.
  std::filesystem::path edge_file;
  std::int64_t edges_in_file = 0;  ///< E of edge_file (0 when the edges are in src / dst)
  /// [num_nodes, F] float32 input features (feature_type float32); F = 0 when there are none.
  matrix<float> features;
  /// [num_nodes, F] the bit patterns of 16-bit input features (feature_type float16 or
  /// bfloat16), kept at 2 bytes per element: a 16-bit feature file is never widened into
  /// `features` (which is then empty); the gather widens the rows it loads
  /// (cache/storage.hpp). Empty when feature_type is float32.
  matrix<std::uint16_t> features16;
  /// The element type of the input features, in memory and in feature_file alike.
  feature_dtype feature_type = feature_dtype::float32;
  /// The .npy file the features come from (read_dataset), for the memory-mapped storage tier
  /// (cache/storage.hpp); empty for datasets built in memory.
  std::filesystem::path feature_file;
  /// F when the features were left in `feature_file` (dataset_read_options::load_features
  /// false; `features` is then empty); read_dataset also sets it when it loads them.
  std::int64_t feature_cols = 0;
  std::vector<std::int64_t> labels;  ///< [num_nodes] class ids, -1 = unknown; empty = no labels
  std::int64_t num_classes = 0;      ///< 0 when there is no classification task
  std::vector<vid_t> train;          ///< training seed vertices
  std::vector<vid_t> valid;          ///< validation vertices
  std::vector<vid_t> test;           ///< test vertices
  /// The link-prediction task, when the dataset has one (then labels/num_classes may be empty).
  std::optional<link_task> link;
  /// read_dataset: the name of the node feature read as `features` ("" when none), the name of
  /// the node-classification task that gave labels and the split ("" when none), whether the
  /// link-prediction task comes before it in metadata.yaml, and what the reader skipped (one
  /// sentence each, for the caller to print).
  std::string feature_name;
  std::string task_name;
  bool link_first = false;
  std::vector<std::string> notes;
  /// The node and edge types of a heterogeneous graph (dataset_read_options::heterogeneous);
  /// `features` is then empty (each type's input features are in hetero->features).
  std::optional<hetero_schema> hetero;

  /// E: src.size(), or edges_in_file when the edges were left in edge_file.
  [[nodiscard]] std::int64_t num_edges() const {
    return src.empty() ? edges_in_file : static_cast<std::int64_t>(src.size());
  }
  /// F: the loaded features' width, else feature_cols (features left in their file).
  [[nodiscard]] std::int64_t feature_dim() const {
    if (features.rows() > 0 || features.cols() > 0) return features.cols();
    if (features16.rows() > 0 || features16.cols() > 0) return features16.cols();
    return feature_cols;
  }
  /// Whether the features are in memory: in `features` (float32) or in `features16` (16-bit;
  /// feature_type says which); false when left in feature_file or absent.
  [[nodiscard]] bool features_in_memory() const {
    return features.rows() > 0 || features16.rows() > 0;
  }
  /// Whether the input features are 16-bit (float16 or bfloat16).
  [[nodiscard]] bool features_are_16bit() const { return feature_type != feature_dtype::float32; }
  /// Bytes of one feature row as stored: F * feature_dtype_size(feature_type).
  [[nodiscard]] std::int64_t feature_row_bytes() const {
    return feature_dim() * feature_dtype_size(feature_type);
  }
};

/// What read_dataset reads.
struct dataset_read_options {
  /// false: read only the features' .npy header (shape, dtype) and leave the rows in the file,
  /// setting feature_file, feature_cols and feature_type; the trainer then maps it (storage
  /// tier mmap).
  bool load_features = true;
  /// false: an untyped graph whose graph.edges is a `numpy` file is not read into src / dst;
  /// only its header is checked, and edge_file / edges_in_file name it, so that the caller builds
  /// the CSC from the file (read_edge_csc) with one copy of the edges in memory instead of three
  /// (the file's [2, E] array, src / dst, the CSC). Typed graphs and `csv` edges are read as usual.
  bool load_edges = true;
  /// The input node feature, by its name in feature_data. Empty: the one named "feat", or none
  /// when the graph has no node feature other than "label"; any other case is an error that
  /// lists the node features (never a silent pick).
  std::string feature;
  /// The task to read: a task's name in metadata.yaml, or node_classification /
  /// link_prediction (the first task of that kind when no task has that name); only that task
  /// is read, and a problem in it is an error. Empty or "auto": the first node-classification
  /// and the first link-prediction task; one that cannot be read is skipped (dataset::notes)
  /// when another can.
  std::string task;
  /// Whether a heterogeneous graph (several node or edge types) is read (into dataset::hetero):
  /// false (the default) refuses one with an io_error saying which commands take it (the
  /// untyped models and tools). true also reads a link-prediction task whose item sets are
  /// typed by relation (pair_set::relation), as well as the node-classification task.
  bool heterogeneous = false;
};

/// Reads a dataset directory (metadata.yaml + arrays), validating every array against the
/// metadata (with opt.load_features false, the features' header only): sizes, dtypes, vertex
/// ids against |V|, label range against num_classes. The input node feature is read at its
/// width: float32 into `features`; float16 ('<f2' .npy, torch.HalfStorage) and bfloat16
/// (torch.BFloat16Storage) bit patterns into `features16` with feature_type set, 2 bytes per
/// element (never widened); any other dtype (integers, float64) is converted to float32. Arrays are
/// .npy (`format: numpy`) or torch.save'd tensors (`format: torch`,
/// runtime/graph/torch_tensor.hpp); every feature's row count is checked, node and edge features
/// alike, though only the input feature is read. Accepts what DGL GraphBolt writes for a
/// homogeneous graph. Tasks are told apart by the seeds of their first item set: [N] (or [N, 1])
/// vertices make a node-classification task, [N, 2] pairs (or the legacy name `node_pairs`) a
/// link-prediction task. The first node-classification task fills labels, num_classes and
/// train/valid/test; labels come from its item sets (seeds + labels) or from a node feature named
/// "label". The first link-prediction task fills `link`: each set's `seeds` [M, 2], optional
/// `labels` [M] (0/1) and `indexes` [M] (query ids; the pairs are reordered stably by index when
/// the file lists them out of order, as DGL's OnDiskDataset tutorial does: all positives, then all
/// negatives), or the legacy `negative_dsts` [M, K] (converted as pair_set describes); the task's
/// extra keys `item_begin` / `item_end` give the user-item range. The training set keeps its
/// positives only (label-0 pairs and indexes dropped: training draws its own negatives). A dataset
/// may have both kinds, or only a link task (labels empty, num_classes 0 unless a "label" node
/// feature exists). Which tasks and which feature are read: opt.task, opt.feature.
/// @throws io_error naming the file and the problem (missing file, broken yaml, truncated .npy,
///         wrong shape or dtype, id >= |V|, empty graph; for link tasks: seeds not shaped
///         (N, 2), labels not 0/1, labels or indexes whose length differs from the seeds',
///         indexes "not grouped" (decreasing), a query with no positive, negative_dsts not
///         (N, K), item_begin without item_end or outside [0, |V|]); no such task or feature
///         (the message lists the tasks or the node features); a torch-format input feature
///         with opt.load_features false (memory mapping needs .npy).
/// Heterogeneous graphs: each node type's input feature is read as the untyped one is, float32
/// into hetero_schema::features, float16 / bfloat16 bit patterns into features16 with
/// feature_types set (never widened); with opt.load_features false only the headers of .npy
/// files are read (feature_files, feature_cols; a torch-format typed feature is then an error).
dataset read_dataset(const std::filesystem::path& dir, const dataset_read_options& opt = {});

/// What a dataset directory holds, from metadata.yaml and the arrays' headers only (no element
/// data is read), for `coopgnn info`: every feature and every task, readable or not.
struct dataset_contents {
  struct feature {
    std::string domain;  ///< "node" or "edge"
    std::string type;    ///< node or edge type; "" when homogeneous
    std::string name;
    std::string format;  ///< "numpy" or "torch"
    std::string path;    ///< relative to the dataset directory
    std::string dtype;   ///< numpy dtype name as stored ("" when unreadable)
    std::vector<std::int64_t> shape;
    std::string error;  ///< why the header cannot be read; "" when it can
  };
  struct task {
    std::string name;
    std::string kind;  ///< "node_classification", "link_prediction", or "" when unknown
    std::optional<std::int64_t> num_classes;
    std::int64_t train = 0;  ///< items (seeds rows) of each set, summed over item sets
    std::int64_t valid = 0;
    std::int64_t test = 0;
    std::string error;  ///< why the task cannot be classified or sized; "" when it can
  };
  std::string name;
  std::int64_t num_nodes = 0;  ///< summed over node types
  std::size_t node_types = 0;
  std::size_t edge_types = 0;
  std::vector<feature> features;
  std::vector<task> tasks;
};

/// Lists `dir`'s features and tasks (dataset_contents). Problems of single arrays are recorded
/// in the entries, not thrown. @throws io_error for a missing or malformed metadata.yaml.
dataset_contents inspect_dataset(const std::filesystem::path& dir);

/// Writes `ds` to `dir` (created if needed) in the same layout; files are written to temporaries
/// and renamed, so an interrupted write never leaves a half-written array under a final name.
/// Features are written at their width: float32 as '<f4', float16 (`features16`) as '<f2'; a
/// node type's features left in their file (hetero_schema::feature_files) are not copied: the
/// dataset's data/<type>_<name>.npy is a symbolic link to that file (absolute path).
/// The vertex split becomes a "node_classification" task; `link` becomes a second task named
/// link.name (default "link_prediction") with set/link_{train,valid,test}_{seeds,labels,indexes}
/// .npy (int64; seeds [M, 2]; labels and indexes omitted when empty) and item_begin / item_end
/// when link->user_item().
/// @throws io_error when a file cannot be written; logic_error when `ds` is inconsistent, or
///         holds bfloat16 features (.npy has no bfloat16 dtype).
/// The edges go to edges/edges.npy (int64 [2, E]) straight from src and dst, with no [2, E]
/// copy in memory.
void write_dataset(const dataset& ds, const std::filesystem::path& dir);

/// write_dataset with the edges taken from `rows` (edge_rows, edges.hpp) instead of ds.src /
/// ds.dst, which must be empty: edges/edges.npy is written a chunk at a time from the rows (its
/// row 0 expanded from rows.offsets, row 1 widened from rows.targets), so the edges are never
/// held as int64. Byte for byte the file write_dataset writes for the same edges.
/// @throws as write_dataset; logic_error when ds holds edges or rows.num_nodes != ds.num_nodes.
void write_dataset(const dataset& ds, const edge_rows& rows, const std::filesystem::path& dir);

/// Validates the in-memory invariants of `ds` (sizes agree, ids in range, labels in range; for
/// `link`: the pair_set invariants, link.train positives only, a valid user-item range).
/// `what` names the source in messages. @throws io_error on the first violation.
void validate_dataset(const dataset& ds, const std::string& what);

/// The most classes a dataset may have: class ids stay in int32 (per-class arrays and the
/// model's output layer are sized by the count).
inline constexpr std::int64_t kMaxNumClasses = 2147483647;

/// The number of classes max_label + 1 implies (0 for max_label < 0), refusing class ids that
/// would not leave the count in int32 (per-class arrays and the model's output layer are sized by
/// it). @throws io_error "WHAT: class id L is too large (at most 2147483646) ..." otherwise.
std::int64_t classes_from_max_label(std::int64_t max_label, std::string_view what);

/// Bytes per vertex that reading and training on a dataset allocate at the least, whatever else
/// it holds: an int64 label and an int64 CSC offset (csc.hpp) per vertex.
inline constexpr std::uint64_t kBytesPerNode = 16;

/// Refuses a vertex count a file declares (metadata.yaml's graph.nodes[0].num, OGB's
/// num-node-list, 1 + the largest id of an edge list) before any per-node array is allocated:
/// |V| * kBytesPerNode must not exceed host_memory_limit() (runtime/core/memory_limit.hpp; the
/// environment variable COOPGNN_MEMORY_LIMIT sets the bound for tests). `file` and `key` name
/// where the count came from. Allocates nothing.
/// @throws io_error "FILE: KEY = N needs B bytes (...) but only L bytes ... are available ..."
///         (check_declared_bytes).
void check_declared_nodes(std::string_view file, std::string_view key, std::int64_t num_nodes);

}  // namespace coopgnn
