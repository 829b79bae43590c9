// An in-memory node-classification dataset and its on-disk form (DESIGN.md section 3): a
// directory in DGL GraphBolt's OnDiskDataset layout, metadata.yaml plus NumPy .npy arrays.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "runtime/core/matrix.hpp"
#include "runtime/core/types.hpp"

namespace coopgnn {

/// A homogeneous graph with node features, labels and a train/validation/test split.
/// The edge list is directed as stored: an undirected graph holds both directions.
struct dataset {
  std::string name;
  vid_t num_nodes = 0;
  std::vector<vid_t> src;            ///< [E] edge sources (edge src[e] -> dst[e])
  std::vector<vid_t> dst;            ///< [E] edge destinations
  matrix<float> features;            ///< [num_nodes, F] float32; F = 0 when there are none
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

  [[nodiscard]] std::int64_t num_edges() const { return static_cast<std::int64_t>(src.size()); }
  /// F: the loaded features' width, else feature_cols (features left in their file).
  [[nodiscard]] std::int64_t feature_dim() const {
    return features.rows() > 0 || features.cols() > 0 ? features.cols() : feature_cols;
  }
  /// Whether the features are in `features` (false when left in feature_file or absent).
  [[nodiscard]] bool features_in_memory() const { return features.rows() > 0; }
};

/// What read_dataset reads.
struct dataset_read_options {
  /// false: read only the features' .npy header (shape, dtype) and leave the rows in the file,
  /// setting feature_file and feature_cols; the trainer then maps it (storage tier mmap).
  bool load_features = true;
};

/// Reads a dataset directory (metadata.yaml + .npy files), validating every array against the
/// metadata (with opt.load_features false, the features' header only): sizes, dtypes, vertex
/// ids against |V|, label range against num_classes.
/// Accepts what DGL GraphBolt writes for a homogeneous graph with one node-classification task;
/// labels come from the task's item sets (seeds + labels) or from a node feature named "label".
/// @throws io_error naming the file and the problem (missing file, broken yaml, truncated .npy,
///         wrong shape or dtype, id >= |V|, empty graph).
dataset read_dataset(const std::filesystem::path& dir, const dataset_read_options& opt = {});

/// Writes `ds` to `dir` (created if needed) in the same layout; files are written to temporaries
/// and renamed, so an interrupted write never leaves a half-written array under a final name.
/// @throws io_error when a file cannot be written; logic_error when `ds` is inconsistent.
void write_dataset(const dataset& ds, const std::filesystem::path& dir);

/// Validates the in-memory invariants of `ds` (sizes agree, ids in range, labels in range).
/// `what` names the source in messages. @throws io_error on the first violation.
void validate_dataset(const dataset& ds, const std::string& what);

}  // namespace coopgnn
