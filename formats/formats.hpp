// Input formats (docs/design.md section 3.2): readers of OGB raw node-property directories, SNAP
// edge lists, NumPy .npz archives (dense or SciPy sparse members), LightGCN user-item text
// directories, MUSAE directories and HeCo's heterogeneous files into the in-memory `dataset` that
// write_dataset stores in GraphBolt's OnDiskDataset layout, and the registry that names them:
// one input_format per format (name, help, detection, reader, the convert options it reads),
// which `coopgnn convert` lists, detects and dispatches through.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <span>
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
  bool directed = false;         ///< ogb, musae: keep edges as stored (no automatic symmetrizing)
  bool drop_self_loops = false;  ///< remove v -> v edges
  std::string split;             ///< OGB: folder under split/ (empty = the only one present)
  std::int64_t split_index = 0;  ///< npz: row (or column) K of 2-D masks
  std::string name;              ///< dataset name (empty = derived from the input path)
  /// ogb, snap, npz: node features from a separate file when the input has none: a SciPy
  /// sparse .npz (scipy.sparse.save_npz), a .npz with one 2-D member, or a 2-D .npy.
  std::filesystem::path features_file;
  std::string label_column;     ///< musae: target column (empty = first of kMusaeLabelColumns)
  std::string id_column;        ///< musae: node id column (empty = "new_id" if present, else "id")
  double train_fraction = 0.6;  ///< musae: random split, fraction of vertices for training
  double valid_fraction = 0.2;  ///< musae: fraction for validation (test: the rest)
  std::uint64_t seed = 1;       ///< musae: seed of the keyed split (runtime/graph/generate.hpp)
  /// musae: stratified split, the fractions applied within each class (stratified_split).
  bool stratified = false;
  int labels_per_class = 20;    ///< heco: which of HeCo's splits (20, 40 or 60 labels per class)
  /// Sparse features are densified to float32 [N, F]; N * F * 4 bytes must not exceed this many
  /// bytes of memory. 0 = MemAvailable of /proc/meminfo (no memory check where it is unknown).
  std::uint64_t max_dense_bytes = 0;
  /// Where the dataset will be written: the dense features must fit in its free disk space
  /// (std::filesystem::space of the nearest existing ancestor). Empty = no disk check.
  std::filesystem::path output_dir;
  /// Free disk space to check against instead of asking the file system (0 = ask); for tests.
  std::uint64_t disk_free_bytes = 0;
};

/// MUSAE target columns tried in order when convert_options::label_column is empty.
inline constexpr std::string_view kMusaeLabelColumns[] = {"target", "ml_target", "page_type",
                                                          "mature"};

/// Direction pattern of an edge list as stored, self-loops ignored.
enum class edge_order : std::uint8_t {
  none,             ///< no edge other than self-loops
  lower_to_higher,  ///< every src < dst: each undirected edge stored once
  higher_to_lower,  ///< every src > dst: each undirected edge stored once
  mixed,            ///< both src < dst and src > dst occur
};

/// What a conversion read and decided, for the command line to print.
struct convert_report {
  std::vector<std::string> files_read;  ///< every input file, in reading order
  std::string split;                    ///< OGB split folder or npz split index used ("" if none)
  edge_stats edges;
  edge_order order = edge_order::none;  ///< the input's edge directions, as stored
  /// Decisions and skipped input, one line each, in order ("FILE: edges stored once ...",
  /// "FILE:1: header line 'id_1,id_2' skipped", "FILE:attr: sparse csr ... -> dense ...").
  std::vector<std::string> notes;
  /// When set, called with "read FILE" for each file and with each note as it is made (before
  /// a large allocation), so a command line can print progress; notes are still collected.
  std::function<void(const std::string&)> progress;
};

/// Converts an OGB raw node-property directory: raw/num-node-list.csv(.gz) (one line: |V|),
/// raw/edge.csv(.gz) ("src,dst" per line), optional raw/num-edge-list.csv(.gz) (checked against
/// the edge count), optional raw/node-feat.csv(.gz) (|V| lines of F comma-separated floats),
/// optional raw/node-label.csv(.gz) (|V| lines, one integer class; "nan" or empty = unknown -1),
/// optional split/<name>/{train,valid,test}.csv(.gz) (one vertex id per line). Gzip is read with
/// zlib; the plain .csv is used when no .csv.gz exists. num_classes = max label + 1.
/// OGB's binary layout (ogb/io/read_graph_raw.py read_binary_graph_raw; ogbn-papers100M) is
/// read instead when raw/num-node-list.csv(.gz) is absent and raw/data.npz exists: members
/// edge_index int64 [2, E], num_nodes_list [1] (|V|), optional num_edges_list [1] (checked),
/// optional node_feat [N, F] (float16 kept at 2 bytes in features16, other dtypes as float32),
/// other members (edge_feat, node_year, ...) noted and not read; optional raw/node-label.npz
/// member node_label [N] or [N, 1] (float64 with NaN, or integers with -1, for unlabelled). Stored (np.savez) and
/// deflated (np.savez_compressed) members are both read whole into memory, not streamed.
/// Edge directions: an edge list stored once (every src < dst, or every src > dst, self-loops
/// aside; report->order) is symmetrized unless opt.directed (OGB's node-property graphs are used
/// symmetrized by their GNN baselines; ogbn-arxiv stores each citation once); a note says which.
/// opt.symmetrize adds missing reverses to any list; pairs present both ways are not doubled.
/// @throws io_error for opt.symmetrize together with opt.directed; naming the file and line for a
/// missing required file, unreadable gzip,
///         a non-integer or non-numeric token, a negative or out-of-range id, a ragged feature row,
///         a row count that disagrees with num-node-list (and between features and labels),
///         several split folders without opt.split, or a missing split folder; binary layout:
///         "raw/data.npz[:MEMBER]: ..." for a missing member, a wrong shape, a count that
///         disagrees, an id out of range, a truncated or corrupt member; "node-label.npz:
///         node_label: ..." for a wrong length or a label that is not a class id.
dataset convert_ogb(const std::filesystem::path& dir, const convert_options& opt,
                    convert_report* report = nullptr);

/// Converts a SNAP edge list (.txt, or .txt.gz read with zlib), or any two-column edge list:
/// lines starting with '#' or '%' and blank lines are skipped; otherwise "src dst" separated by
/// spaces, tabs, a comma or a mix (one further column, such as a weight or a timestamp, is
/// ignored); LF or CRLF line ends. A header (the first non-comment line, when none of its fields
/// is a number: "id_1,id_2", "source target") is skipped and noted. Ids are kept as they are:
/// |V| = max id + 1. Structure only (opt.features_file aside): no labels or splits. Edges kept as
/// stored unless opt.symmetrize; a list stored once gets a note suggesting --symmetrize.
/// @throws io_error "FILE:LINE: ..." for a non-integer token, a missing destination, a negative
///         id, or more than three columns (an adjacency list, whose edges would be lost);
///         "FILE: no edges" for an input without edges.
dataset convert_snap(const std::filesystem::path& file, const convert_options& opt,
                     convert_report* report = nullptr);

/// Converts a NumPy .npz archive. Recognised members (first match wins):
/// edges "edges" [E, 2] (or [2, E]) or "edge_index" [2, E], or a SciPy sparse adjacency
/// "adj_data", "adj_indices", "adj_indptr", "adj_shape" [N, N] (optional "adj_format" b'csr' or
/// b'csc', default csr; stored entry (i, j) = edge i -> j, explicit zeros skipped); features
/// "node_features", "x", "features" or "feat" [N, F], or a sparse group with prefix "attr",
/// "features", "feat", "x" or "node_features" (PREFIX_data/_indices/_indptr/_shape, optional
/// PREFIX_format; the Shchur et al. / PyG CitationFull layout), densified to float32 (repeated
/// entries summed, as scipy's toarray) after a note with the dense size and the limit checks
/// of convert_options::max_dense_bytes / output_dir; labels "node_labels", "y", "labels" or
/// "label" [N]; masks "train_masks"/"train_mask", "val_masks"/"val_mask"/"valid_mask",
/// "test_masks"/"test_mask": 1-D [N], or 2-D [K, N] / [N, K] from which opt.split_index picks
/// split K (default 0). |V| = feature rows, else label count, else adjacency rows, else max edge
/// id + 1. An archive that is one SciPy matrix (scipy.sparse.save_npz: data, indices, indptr,
/// shape, format) is read as the adjacency when square.
/// @throws io_error "ARCHIVE:MEMBER: ..." for a missing edge array, a wrong shape, ids out of
///         range, feature/label/mask lengths that disagree, or split_index out of range; for a
///         sparse group: a missing member, a format other than csr/csc, an inconsistent indptr,
///         an index out of range, and dense features over the memory or disk limit ("... =
///         SIZE exceed LIMIT ...", before anything is allocated).
dataset convert_npz(const std::filesystem::path& file, const convert_options& opt,
                    convert_report* report = nullptr);

/// Converts a LightGCN / NGCF user-item directory (He et al., SIGIR 2020; as LightGCN-PyTorch's
/// data/gowalla): DIR/train.txt and DIR/test.txt, one line "u i1 i2 ... ik" per user
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

/// Converts a MUSAE directory (Rozemberczki et al., "Multi-scale Attributed Node Embedding",
/// 2021; the SNAP facebook / git / twitch / wikipedia sets): exactly one each of
/// DIR/NAME_edges.csv (header "id_1,id_2", undirected, each edge stored once), NAME_target.csv
/// (a header, one row per node; quoted fields allowed) and NAME_features.json ({"node id":
/// [feature ids...]}, a sparse bag of words); the original release's names edges.csv,
/// target.csv and features.json (karateclub's dataset/node_level layout) are read the same way.
/// |V| = target rows; node ids (column opt.id_column,
/// default "new_id" if present, else "id") must be 0..|V|-1, once each. Labels from column
/// opt.label_column (default: the first present of kMusaeLabelColumns): integers are class ids
/// as they are; otherwise the distinct values sorted by byte order become classes 0..C-1 (a note
/// gives C and, for C <= 20, the mapping). Features: float32 [|V|, max feature id + 1], entry
/// (v, f) = how often f is listed for v, densified as in convert_npz. Edges symmetrized (unless
/// opt.directed), self-loops kept unless opt.drop_self_loops. Split: keyed_split (or
/// stratified_split when opt.stratified) with opt.train_fraction / valid_fraction / seed. Name
/// default: NAME, or the directory's name for the original release's file names.
/// @throws io_error naming the file (and line, column or key) for a missing or repeated file,
///         a missing id or label column (listing the columns), an id out of range or repeated, a
///         negative integer label, invalid JSON, a key that is not a node id, a value that is
///         not an array of non-negative integers, an edge id out of range, or the dense size.
dataset convert_musae(const std::filesystem::path& dir, const convert_options& opt,
                      convert_report* report = nullptr);

/// Converts a HeCo directory (Wang et al., "Self-supervised Heterogeneous Graph Neural Network
/// with Co-contrastive Learning", KDD 2021; its data/acm files) into a
/// heterogeneous dataset (hetero_schema): node types paper (P = |labels.npy|), author (1 + the
/// largest author id of pa.txt) and subject (1 + the largest of ps.txt), in that order; edge
/// types paper:paper-author:author and its reverse author:author-paper:paper (from pa.txt,
/// "paper<TAB>author" lines), paper:paper-subject:subject and subject:subject-paper:paper (from
/// ps.txt), duplicates removed; paper features float32 [P, F] densified from the SciPy sparse
/// p_feat.npz (authors and subjects get none: HeCo's loader gives them one-hot identities and
/// a_feat.npz is not read); labels.npy (float64 class ids) as the papers' labels; the split
/// train_K / val_K / test_K .npy with K = opt.labels_per_class, as the task
/// "node_classification_K" on type paper.
/// @throws io_error naming the file: a missing file, a malformed line, an id out of range, a
///         label that is not a non-negative integer, features whose rows differ from the papers',
///         K not 20, 40 or 60.
dataset convert_heco(const std::filesystem::path& dir, const convert_options& opt,
                     convert_report* report = nullptr);

/// Converts an OGB-LSC MAG240M directory (the layout ogb/lsc/mag240m.py reads) into a
/// heterogeneous dataset (hetero_schema): node types paper (P = the length of
/// processed/paper/node_label.npy), author and institution (1 + the largest id of their edge
/// lists; meta.pt, a pickled dict, is not read), in that order; from the int64 [2, E]
/// processed/paper___cites___paper/edge_index.npy the edge type paper:cites:paper
/// (symmetrized unless opt.directed), from author___writes___paper and
/// author___affiliated_with___institution the edge types author:writes:paper,
/// author:affiliated_with:institution and their reverses paper:rev_writes:author,
/// institution:rev_affiliated_with:author; each relation's pairs sorted and deduplicated.
/// Labels: node_label.npy (float16/32/64 or integer; NaN or -1 = unlabelled) on papers, -1
/// elsewhere. Paper features: processed/paper/node_feat.npy [P, F]: float32 read; float16 (the
/// release's) neither read nor widened but left in its file (hetero_schema::feature_files; the
/// written dataset links to it, 2 bytes per element; other dtypes are read as float32).
/// node_year.npy is not read. Split: DIR/split/{train,valid}.npy
/// and optional test.npy (1-D paper ids; split_dict.pt exported with numpy), task
/// "node_classification" on type paper; no split/ folder gives a dataset without a split and
/// a note. Every other array is read whole into memory (not memory-mapped).
/// @throws io_error naming the file: a missing processed/ folder, node_label.npy, relation
///         edge_index.npy, split/train.npy or split/valid.npy; a wrong shape or dtype, a
///         truncated array, a negative or out-of-range id, a label that is not a class id, a
///         feature row count other than P, a split paper without a label.
dataset convert_mag240m(const std::filesystem::path& dir, const convert_options& opt,
                        convert_report* report = nullptr);

/// Replaces ds.train / valid / test by a stratified keyed split: perm = keyed_permutation(
/// ds.num_nodes, seed, purpose split, 0) (the permutation of keyed_split); the vertices of each
/// class c, in perm order (n_c of them), give train the first round(n_c * train), valid the next
/// round(n_c * valid) (at most what is left), test the rest; vertices labelled -1 go to none.
/// Each part sorted ascending. Pure function of (labels, train, valid, seed). The same per-class
/// cut as scikit-learn's train_test_split(stratify=y), up to rounding.
/// @throws io_error for fractions outside [0, 1] or summing past 1, or labels whose size is not
///         ds.num_nodes.
void stratified_split(dataset& ds, double train, double valid, std::uint64_t seed);

/// Reads one input format into a dataset (convert_ogb, convert_snap, ...).
using format_reader = dataset (*)(const std::filesystem::path& input, const convert_options& opt,
                                  convert_report* report);

/// One registry entry: everything `coopgnn convert` knows about an input format.
struct input_format {
  std::string_view name;     ///< the value of --from ("ogb")
  std::string_view summary;  ///< one line: what the input is
  /// The help paragraph of `convert --help` (lines of at most 80 characters, '\n'-separated).
  std::string_view help;
  bool directory = false;  ///< the input is a directory (false: a file)
  /// The format-specific convert options this reader uses ("--split", "--features", ...);
  /// --symmetrize, --drop-self-loops, --name and --max-dense-bytes apply to every format.
  std::span<const std::string_view> options;
  /// Whether `input` looks like this format (file names only; reads no contents, never throws).
  bool (*detect)(const std::filesystem::path& input);
  format_reader read;  ///< the reader
  /// --features may have more rows than the input has vertices: the extra rows become isolated
  /// vertices (an edge list cannot name a vertex without edges).
  bool features_add_vertices = false;
};

/// Every input format, in the order `convert --help` lists them: ogb, snap, npz, lightgcn,
/// musae, heco, mag240m.
std::span<const input_format* const> input_formats();

/// The format named `name`.
/// @throws io_error "unknown input format 'NAME' (expected ogb, snap, ... or heco)".
const input_format& find_input_format(std::string_view name);

/// The names of the formats that read option `option` ("--features" -> ogb, snap, npz), in
/// registry order.
std::vector<std::string_view> formats_reading(std::string_view option);

/// The one format whose detect() accepts `input`.
/// @throws io_error naming the input when no format or several formats recognise it (the
///         message lists the candidates and asks for --from).
const input_format& detect_input_format(const std::filesystem::path& input);

/// Reads `input` with format `from` (find_input_format), then attaches opt.features_file (the
/// formats that read --features; only when the input has no features; its rows must be at least
/// |V|, and a snap graph grows to that many vertices, the extra ones isolated).
/// @throws io_error for an unknown format name, --symmetrize with --directed, features_file
///         with a format that does not read it or with an input that has features, a row count
///         below |V|, and whatever the reader throws.
dataset convert_dataset(std::string_view from, const std::filesystem::path& input,
                        const convert_options& opt, convert_report* report = nullptr);

}  // namespace coopgnn
