// Dataset converters (DESIGN.md section 3, "Converters read the formats people have"): OGB raw
// node-property directories, SNAP edge lists, NumPy .npz archives and LightGCN user-item text
// directories, into the in-memory
// `dataset` that write_dataset stores in GraphBolt's OnDiskDataset layout.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/core/types.hpp"
#include "runtime/graph/dataset.hpp"
#include "runtime/graph/edges.hpp"

namespace coopgnn {

/// Options shared by the converters.
struct convert_options {
  bool symmetrize = false;       ///< add reverse edges (undirected inputs stored once)
  bool drop_self_loops = false;  ///< remove v -> v edges
  std::string split;             ///< OGB: folder under split/ (empty = the only one present)
  std::int64_t split_index = 0;  ///< npz: row (or column) K of 2-D masks
  std::string name;              ///< dataset name (empty = derived from the input path)
};

/// What a conversion read, for the command line to print.
struct convert_report {
  std::vector<std::string> files_read;  ///< every input file, in reading order
  std::string split;                    ///< OGB split folder or npz split index used ("" if none)
  edge_stats edges;
};

/// Converts an OGB raw node-property directory: raw/num-node-list.csv(.gz) (one line: |V|),
/// raw/edge.csv(.gz) ("src,dst" per line), optional raw/num-edge-list.csv(.gz) (checked against
/// the edge count), optional raw/node-feat.csv(.gz) (|V| lines of F comma-separated floats),
/// optional raw/node-label.csv(.gz) (|V| lines, one integer class; "nan" or empty = unknown -1),
/// optional split/<name>/{train,valid,test}.csv(.gz) (one vertex id per line). Gzip is read with
/// zlib; the plain .csv is used when no .csv.gz exists. num_classes = max label + 1.
/// @throws io_error naming the file and line for a missing required file, unreadable gzip,
///         a non-integer or non-numeric token, a negative or out-of-range id, a ragged feature row,
///         a row count that disagrees with num-node-list (and between features and labels),
///         several split folders without opt.split, or a missing split folder.
dataset convert_ogb(const std::filesystem::path& dir, const convert_options& opt,
                    convert_report* report = nullptr);

/// Converts a SNAP edge list (.txt, or .txt.gz read with zlib): lines starting with '#' (or '%')
/// and blank lines are skipped; otherwise "src dst" separated by whitespace or a comma (one
/// further column, such as a weight or a timestamp, is ignored). Ids are kept as they are: |V| =
/// max id + 1. Structure only: no features, labels or splits.
/// @throws io_error "FILE:LINE: ..." for a non-integer token, a missing destination, a negative
///         id, or more than three columns (an adjacency list, whose edges would be lost);
///         "FILE: no edges" for an input without edges.
dataset convert_snap(const std::filesystem::path& file, const convert_options& opt,
                     convert_report* report = nullptr);

/// Converts a NumPy .npz archive. Recognised members (first match wins):
/// edges "edges" [E, 2] (or [2, E]) or "edge_index" [2, E]; features "node_features", "x",
/// "features" or "feat" [N, F]; labels "node_labels", "y", "labels" or "label" [N];
/// masks "train_masks"/"train_mask", "val_masks"/"val_mask"/"valid_mask",
/// "test_masks"/"test_mask": 1-D [N], or 2-D [K, N] / [N, K] from which opt.split_index picks
/// split K (default 0). |V| = feature rows, else label count, else max edge id + 1.
/// @throws io_error "ARCHIVE:MEMBER: ..." for a missing edge array, a wrong shape, ids out of
///         range, feature/label/mask lengths that disagree, or split_index out of range.
dataset convert_npz(const std::filesystem::path& file, const convert_options& opt,
                    convert_report* report = nullptr);

/// Converts a LightGCN / NGCF user-item directory (He et al., SIGIR 2020; the layout of
/// shared/data/gowalla): DIR/train.txt and DIR/test.txt, one line "u i1 i2 ... ik" per user
/// (whitespace-separated non-negative ints; a user with no items may have a line "u"; blank
/// lines skipped). train.txt lists users 0..U-1 in order (U = its number of user lines); test.txt
/// may list any of them, in any order. I = 1 + the largest item id of both files. Vertices: users
/// [0, U), items [U, U + I) (item i = vertex U + i). Edges: every distinct train pair, both
/// directions (an undirected bipartite graph), sorted. link: train = the distinct train pairs
/// (u, U + i) ascending; test = the test pairs (u, U + i) in file order, positives only (labels,
/// indexes empty); valid empty; item_begin = U, item_end = U + I. No features, labels or vertex
/// split. opt.symmetrize / drop_self_loops / split are not used.
/// @throws io_error "FILE:LINE: ..." for a token that is not an integer, a negative id, a train
///         user id out of sequence, a test user id >= U; "FILE: empty file" for a file without
///         user lines (and "FILE: missing file").
dataset convert_lightgcn(const std::filesystem::path& dir, const convert_options& opt,
                         convert_report* report = nullptr);

/// Dispatches on `from` ("ogb", "snap", "npz" or "lightgcn").
/// @throws io_error for an unknown format name, and whatever the converter throws.
dataset convert_dataset(std::string_view from, const std::filesystem::path& input,
                        const convert_options& opt, convert_report* report = nullptr);

}  // namespace coopgnn
