// read_dataset / write_dataset / validate_dataset (runtime/graph/dataset.hpp) for homogeneous
// graphs in DGL GraphBolt's OnDiskDataset layout (metadata.hpp).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <functional>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "runtime/core/error.hpp"
#include "runtime/core/memory_limit.hpp"
#include "runtime/graph/dataset.hpp"
#include "runtime/graph/metadata.hpp"
#include "runtime/graph/npy.hpp"
#include "runtime/graph/torch_tensor.hpp"

namespace coopgnn {

namespace {

namespace fs = std::filesystem;

constexpr const char* kMetadataFile = "metadata.yaml";

/// Requires `p` to be a readable regular file: absent (or not a regular file) fails with
/// `missing`, a file that cannot be reached or opened (a directory without permission) with
/// "P: cannot read: REASON" (the errno text), so that the two are never confused.
void require_readable_file(const fs::path& p, const std::string& missing) {
  struct stat st {};
  if (::stat(p.c_str(), &st) != 0) {
    int const err = errno;
    if (err == ENOENT || err == ENOTDIR) throw io_error(missing);
    COOPGNN_IO_FAIL("{}: cannot read: {}", p.string(), std::strerror(err));
  }
  if (!S_ISREG(st.st_mode)) throw io_error(missing);
  int const fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) COOPGNN_IO_FAIL("{}: cannot read: {}", p.string(), std::strerror(errno));
  ::close(fd);
}

/// `rel` resolved against the dataset directory; must exist as a readable regular file.
fs::path data_file(const fs::path& dir, const std::string& rel, const std::string& key) {
  fs::path const p = dir / rel;
  require_readable_file(p, fmt::format("{}: missing file (referenced by {} '{}' in {})", p.string(),
                                       key, rel, (dir / kMetadataFile).string()));
  return p;
}

/// The header (dtype, shape) of an array stored as `format` ("numpy" or "torch").
npy_header array_header(const fs::path& p, const std::string& format) {
  if (format != "torch") return read_npy_header(p);
  torch_tensor_header const t = read_torch_header(p);
  npy_header h;
  h.dtype = t.dtype;
  h.shape = t.shape;
  return h;
}

/// An array stored as `format`, converted to T as read_npy converts.
template <typename T>
npy_array<T> read_array(const fs::path& p, const std::string& format) {
  return format == "torch" ? read_torch<T>(p) : read_npy<T>(p);
}

/// A file of the dataset directory and the format metadata.yaml gives it.
struct stored_array {
  fs::path path;
  std::string format;
  template <typename T>
  [[nodiscard]] npy_array<T> read() const {
    return read_array<T>(path, format);
  }
};

/// Reads a CSV edge list "src,dst" (no header) as GraphBolt's pandas reader does.
void read_csv_edges(const fs::path& file, std::vector<vid_t>& src, std::vector<vid_t>& dst) {
  std::ifstream in(file, std::ios::binary);
  if (!in) COOPGNN_IO_FAIL("{}: cannot open", file.string());
  std::string line;
  std::int64_t lineno = 0;
  auto parse = [&](const char*& p, const char* end, const char* which) {
    while (p < end && (*p == ' ' || *p == '\t')) ++p;
    std::int64_t v = 0;
    auto [q, ec] = std::from_chars(p, end, v);
    if (ec != std::errc() || q == p) {
      COOPGNN_IO_FAIL("{}:{}: expected an integer {} id in '{}'", file.string(), lineno, which,
                      line);
    }
    p = q;
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\r')) ++p;
    return v;
  };
  while (std::getline(in, line)) {
    ++lineno;
    const char* p = line.data();
    const char* const end = line.data() + line.size();
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    std::int64_t const s = parse(p, end, "source");
    if (p >= end || *p != ',') {
      COOPGNN_IO_FAIL("{}:{}: expected 'src,dst', found '{}'", file.string(), lineno, line);
    }
    ++p;
    std::int64_t const d = parse(p, end, "destination");
    if (p != end) {
      COOPGNN_IO_FAIL("{}:{}: expected 'src,dst', found '{}'", file.string(), lineno, line);
    }
    src.push_back(s);
    dst.push_back(d);
  }
}

/// An edge file of graph.edges: `numpy` int64 [2, E] (row 0 sources, row 1 destinations) or
/// `csv` "src,dst" lines. @throws io_error naming the file for another shape or a bad line.
void read_edge_file(const fs::path& epath, const std::string& format, std::vector<vid_t>& src,
                    std::vector<vid_t>& dst) {
  if (format != "numpy") {
    read_csv_edges(epath, src, dst);
    return;
  }
  // Straight into src / dst a chunk at a time: no [2, E] array besides them.
  npy_two_row_reader reader(epath);
  auto const e = static_cast<std::size_t>(reader.columns());
  src.resize(e);
  dst.resize(e);
  for (std::size_t first = 0; first < e; first += edge_chunk_edges) {
    std::size_t const k = std::min(static_cast<std::size_t>(edge_chunk_edges), e - first);
    reader.read(static_cast<std::int64_t>(first), std::span<std::int64_t>(src.data() + first, k),
                std::span<std::int64_t>(dst.data() + first, k));
  }
}

void check_ids(std::span<const vid_t> ids, vid_t n, const std::string& file, const char* what) {
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] < 0) {
      COOPGNN_IO_FAIL("{}: {} index {} = {} is a negative vertex id", file, what, i, ids[i]);
    }
    if (ids[i] >= n) {
      COOPGNN_IO_FAIL("{}: {} index {} = {} is out of range: ids must be < |V| = {}", file, what, i,
                      ids[i], n);
    }
  }
}

/// A 1-D array, or a 2-D array with one column, as a vector.
template <typename T>
std::vector<T> as_column(npy_array<T>&& a, const std::string& file, const char* what) {
  if (a.rank() == 1 || (a.rank() == 2 && a.shape[1] == 1)) return std::move(a.data);
  COOPGNN_IO_FAIL("{}: {} must be a 1-D array, found shape {}", file, what,
                  format_npy_shape(a.shape));
}

/// Whether item data named `name` holds a set's items (GraphBolt's `seeds`, and the legacy
/// `seed_nodes` / `node_pairs`).
bool is_seeds(const std::string& name) {
  return name == "seeds" || name == "seed_nodes" || name == "node_pairs";
}

struct label_merge {
  std::vector<std::int64_t>& labels;
  vid_t n;
  std::optional<std::int64_t> num_classes;
};

std::vector<vid_t> read_one_item_set(const fs::path& dir, const item_set_meta& s,
                                     const std::string& key, label_merge& lm, vid_t offset,
                                     vid_t count);

/// One train/validation/test set of a node-classification task.
std::vector<vid_t> read_item_set(const fs::path& dir, const std::vector<item_set_meta>& sets,
                                 const std::string& key, label_merge& lm) {
  std::vector<vid_t> seeds;
  if (sets.empty()) return seeds;
  if (sets.size() > 1) {
    COOPGNN_IO_FAIL(
        "{}: {} has {} item sets (one per type): heterogeneous graphs are not "
        "supported yet",
        (dir / kMetadataFile).string(), key, sets.size());
  }
  return read_one_item_set(dir, sets[0], key + "[0]", lm, 0, lm.n);
}

/// One item set of a node-classification set, whose seeds are ids of a node type holding the
/// global ids [offset, offset + count): the seeds (global ids) and their labels merged into lm.
std::vector<vid_t> read_one_item_set(const fs::path& dir, const item_set_meta& s,
                                     const std::string& key, label_merge& lm, vid_t offset,
                                     vid_t count) {
  std::vector<vid_t> seeds;
  std::optional<std::string> seeds_file;
  std::optional<std::string> labels_file;
  std::string labels_format;
  for (std::size_t j = 0; j < s.data.size(); ++j) {
    const item_data_meta& d = s.data[j];
    std::string const dkey = fmt::format("{}.data[{}].path", key, j);
    fs::path const p = data_file(dir, d.path, dkey);
    std::string const nm = d.name.value_or("seeds");
    if (nm == "seeds" || nm == "seed_nodes") {  // node_pairs: a link task (classify_task)
      seeds_file = p.string();
      auto a = read_array<std::int64_t>(p, d.format);
      if (a.rank() == 2 && a.shape[1] == 2) {
        COOPGNN_IO_FAIL(
            "{}: seeds are node pairs (shape {}) but {} is a node-classification task (its "
            "first item set holds single vertices)",
            p.string(), format_npy_shape(a.shape), key.substr(0, key.find('.')));
      }
      seeds = as_column(std::move(a), p.string(), "seeds");
      check_ids(seeds, count, p.string(), "seed");
      for (vid_t& v : seeds) v += offset;
    } else if (nm == "labels") {
      labels_file = p.string();
      labels_format = d.format;
    } else {
      (void)array_header(p, d.format);  // other item data (indexes, ...): check it is readable
    }
  }
  if (!seeds_file) {
    COOPGNN_IO_FAIL("{}: {} has no 'seeds' data (node classification needs seeds [N])",
                    (dir / kMetadataFile).string(), key);
  }
  if (labels_file) {
    std::vector<std::int64_t> const lab =
        as_column(read_array<std::int64_t>(*labels_file, labels_format), *labels_file, "labels");
    if (lab.size() != seeds.size()) {
      COOPGNN_IO_FAIL("{}: has {} labels but {} has {} seeds", *labels_file, lab.size(),
                      *seeds_file, seeds.size());
    }
    if (lm.labels.empty()) lm.labels.assign(static_cast<std::size_t>(lm.n), -1);
    for (std::size_t i = 0; i < lab.size(); ++i) {
      if (lab[i] < 0) {
        COOPGNN_IO_FAIL("{}: label index {} = {} is negative: labels must be in [0, num_classes)",
                        *labels_file, i, lab[i]);
      }
      if (lm.num_classes && lab[i] >= *lm.num_classes) {
        COOPGNN_IO_FAIL("{}: label index {} = {} is out of range: num_classes is {}", *labels_file,
                        i, lab[i], *lm.num_classes);
      }
      std::int64_t& slot = lm.labels[static_cast<std::size_t>(seeds[i])];
      if (slot >= 0 && slot != lab[i]) {
        COOPGNN_IO_FAIL("{}: label index {} = {} for vertex {} conflicts with its earlier label {}",
                        *labels_file, i, lab[i], seeds[i], slot);
      }
      slot = lab[i];
    }
  }
  return seeds;
}

/// Names used in the messages of check_pair_set: the files (or in-memory fields) holding a pair
/// set's seeds, labels and indexes.
struct pair_names {
  std::string seeds;
  std::string labels;
  std::string indexes;
};

/// The invariants of a pair_set (dataset.hpp) with messages naming `nm`: equal lengths, ids in
/// [0, n), labels 0 or 1, indexes >= 0 and non-decreasing, a positive in every query.
/// Sources are checked against [0, n_src), destinations against [0, n_dst) (a typed item set's
/// local ids; both |V| when untyped).
void check_pair_set(const pair_set& s, vid_t n_src, vid_t n_dst, const pair_names& nm) {
  std::size_t const m = s.src.size();
  if (s.dst.size() != m) {
    COOPGNN_IO_FAIL("{}: {} pair sources but {} pair destinations", nm.seeds, m, s.dst.size());
  }
  check_ids(s.src, n_src, nm.seeds, "pair source (column 0)");
  check_ids(s.dst, n_dst, nm.seeds, "pair destination (column 1)");
  if (!s.labels.empty() && s.labels.size() != m) {
    COOPGNN_IO_FAIL("{}: has {} labels but {} has {} pairs", nm.labels, s.labels.size(), nm.seeds,
                    m);
  }
  if (!s.indexes.empty() && s.indexes.size() != m) {
    COOPGNN_IO_FAIL("{}: has {} indexes but {} has {} pairs", nm.indexes, s.indexes.size(),
                    nm.seeds, m);
  }
  for (std::size_t i = 0; i < s.labels.size(); ++i) {
    if (s.labels[i] != 0 && s.labels[i] != 1) {
      COOPGNN_IO_FAIL(
          "{}: label index {} = {} is not 0 or 1 (link-prediction labels are 1 for a true "
          "edge, 0 for a negative)",
          nm.labels, i, s.labels[i]);
    }
  }
  for (std::size_t i = 0; i < s.indexes.size(); ++i) {
    if (s.indexes[i] < 0) {
      COOPGNN_IO_FAIL("{}: index {} = {} is a negative query id", nm.indexes, i, s.indexes[i]);
    }
    if (i > 0 && s.indexes[i] < s.indexes[i - 1]) {
      COOPGNN_IO_FAIL(
          "{}: not grouped: index {} = {} follows {} (the pairs of one query must be "
          "contiguous, so indexes must be non-decreasing)",
          nm.indexes, i, s.indexes[i], s.indexes[i - 1]);
    }
  }
  if (!s.labels.empty() && !s.indexes.empty()) {
    for (std::size_t b = 0; b < m;) {
      std::size_t e = b;
      bool pos = false;
      for (; e < m && s.indexes[e] == s.indexes[b]; ++e) pos = pos || s.labels[e] == 1;
      if (!pos) {
        COOPGNN_IO_FAIL("{}: query {} (pairs {}..{}) has no positive (label 1)", nm.labels,
                        s.indexes[b], b, e - 1);
      }
      b = e;
    }
  }
}

void check_pair_set(const pair_set& s, vid_t n, const pair_names& nm) {
  check_pair_set(s, n, n, nm);
}

/// The user-item range of a link task: both zero (none) or 0 <= begin < end <= n.
void check_item_range(vid_t begin, vid_t end, vid_t n, const std::string& what) {
  if (begin == 0 && end == 0) return;
  if (begin < 0 || begin >= end || end > n) {
    COOPGNN_IO_FAIL(
        "{}: item_begin = {}, item_end = {}: user-item data needs 0 <= item_begin < item_end <= "
        "|V| = {}",
        what, begin, end, n);
  }
}

/// Whether a task is node classification or link prediction, from the seeds of its first item
/// set: [N] (or [N, 1]) vertices, or [N, 2] pairs (or GraphBolt's legacy `node_pairs`).
enum class task_kind { node_classification, link_prediction };

task_kind classify_task(const fs::path& dir, const task_meta& t, std::size_t ti) {
  const std::vector<item_set_meta>* first = nullptr;
  const char* set_key = nullptr;
  for (auto [sets, key] :
       {std::pair{&t.train_set, "train_set"}, std::pair{&t.validation_set, "validation_set"},
        std::pair{&t.test_set, "test_set"}}) {
    if (!sets->empty()) {
      first = sets;
      set_key = key;
      break;
    }
  }
  if (first == nullptr) return task_kind::node_classification;  // no sets: num_classes only
  for (std::size_t j = 0; j < (*first)[0].data.size(); ++j) {
    const item_data_meta& d = (*first)[0].data[j];
    std::string const nm = d.name.value_or("seeds");
    if (nm == "node_pairs") return task_kind::link_prediction;
    if (!is_seeds(nm)) continue;
    fs::path const p =
        data_file(dir, d.path, fmt::format("tasks[{}].{}[0].data[{}].path", ti, set_key, j));
    npy_header const h = array_header(p, d.format);
    if (h.shape.size() == 1 || (h.shape.size() == 2 && h.shape[1] == 1)) {
      return task_kind::node_classification;
    }
    if (h.shape.size() == 2 && h.shape[1] == 2) return task_kind::link_prediction;
    COOPGNN_IO_FAIL(
        "{}: seeds must have shape (N,) (node classification) or (N, 2) (link prediction), "
        "found {}",
        p.string(), format_npy_shape(h.shape));
  }
  return task_kind::node_classification;  // read_item_set reports the missing seeds
}

/// Orders a pair set's pairs by query (stable: within a query the stored order is kept) when
/// its indexes are not already non-decreasing. DGL's OnDiskDataset tutorial writes all positives
/// first and then all negatives, each with its query's index; GraphBolt groups by index value.
/// Sets whose arrays differ in length are left for check_pair_set to report.
void group_by_index(pair_set& s) {
  std::size_t const m = s.src.size();
  if (s.indexes.size() != m || s.dst.size() != m || (!s.labels.empty() && s.labels.size() != m) ||
      std::is_sorted(s.indexes.begin(), s.indexes.end())) {
    return;
  }
  std::vector<std::size_t> order(m);
  for (std::size_t i = 0; i < m; ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return s.indexes[a] < s.indexes[b]; });
  auto permute = [&](auto& v) {
    if (v.empty()) return;
    std::remove_reference_t<decltype(v)> out(m);
    for (std::size_t i = 0; i < m; ++i) out[i] = v[order[i]];
    v = std::move(out);
  };
  permute(s.src);
  permute(s.dst);
  permute(s.labels);
  permute(s.indexes);
}

/// One train/validation/test set of a link-prediction task: `seeds` (or `node_pairs`) [M, 2],
/// optional `labels` [M] and `indexes` [M], or the legacy `negative_dsts` [M, K] (converted to
/// the grouped form of pair_set). The training set keeps its positives only.
/// One item set `set` (metadata key `key`, e.g. "tasks[0].train_set[1]") of a link-prediction
/// task, its sources checked against [0, n_src) and destinations against [0, n_dst) (local ids
/// of a typed item set; |V| both when untyped).
pair_set read_one_pair_set(const fs::path& dir, const item_set_meta& set, const std::string& key,
                           vid_t n_src, vid_t n_dst, bool training) {
  pair_set out;
  std::optional<stored_array> pairs_file;
  std::optional<stored_array> labels_file;
  std::optional<stored_array> indexes_file;
  std::optional<stored_array> neg_file;
  for (std::size_t j = 0; j < set.data.size(); ++j) {
    const item_data_meta& d = set.data[j];
    fs::path const p = data_file(dir, d.path, fmt::format("{}.data[{}].path", key, j));
    std::string const nm = d.name.value_or("seeds");
    stored_array const a{p, d.format};
    if (is_seeds(nm)) {
      pairs_file = a;
    } else if (nm == "labels") {
      labels_file = a;
    } else if (nm == "indexes") {
      indexes_file = a;
    } else if (nm == "negative_dsts") {
      neg_file = a;
    } else if (nm == "negative_srcs") {
      COOPGNN_IO_FAIL(
          "{}: negative_srcs (head-corrupted negatives) are not supported; write the negatives "
          "as seeds with labels 0 and indexes",
          p.string());
    } else {
      (void)array_header(p, d.format);  // other item data: check it is readable
    }
  }
  if (!pairs_file) {
    COOPGNN_IO_FAIL("{}: {} has no 'seeds' data (link prediction needs seeds [N, 2])",
                    (dir / kMetadataFile).string(), key);
  }
  {
    auto a = pairs_file->read<std::int64_t>();
    if (a.rank() != 2 || a.shape[1] != 2) {
      COOPGNN_IO_FAIL(
          "{}: seeds of a link-prediction task must be node pairs of shape (N, 2) (column 0 "
          "sources, column 1 destinations), found {}",
          pairs_file->path.string(), format_npy_shape(a.shape));
    }
    auto const m = static_cast<std::size_t>(a.shape[0]);
    out.src.resize(m);
    out.dst.resize(m);
    for (std::size_t i = 0; i < m; ++i) {
      out.src[i] = a.data[2 * i];
      out.dst[i] = a.data[2 * i + 1];
    }
  }
  pair_names names{pairs_file->path.string(), labels_file ? labels_file->path.string() : "",
                   indexes_file ? indexes_file->path.string() : ""};
  if (labels_file) {
    out.labels = as_column(labels_file->read<std::int64_t>(), names.labels, "labels");
  }
  if (indexes_file) {
    out.indexes = as_column(indexes_file->read<std::int64_t>(), names.indexes, "indexes");
  }
  if (neg_file) {
    if (labels_file || indexes_file) {
      COOPGNN_IO_FAIL(
          "{}: negative_dsts together with labels or indexes: use one layout (seeds + labels + "
          "indexes, or the legacy seeds + negative_dsts)",
          neg_file->path.string());
    }
    check_pair_set(out, n_src, n_dst, names);
    auto neg = neg_file->read<std::int64_t>();
    if (neg.rank() != 2 || neg.shape[0] != out.size()) {
      COOPGNN_IO_FAIL("{}: negative_dsts must have shape ({}, K) ({} has {} pairs), found {}",
                      neg_file->path.string(), out.size(), pairs_file->path.string(), out.size(),
                      format_npy_shape(neg.shape));
    }
    check_ids(neg.data, n_dst, neg_file->path.string(), "negative destination");
    auto const k = static_cast<std::size_t>(neg.shape[1]);
    pair_set g;
    std::size_t const m = out.src.size();
    for (auto* v : {&g.src, &g.dst}) v->reserve(m * (k + 1));
    g.labels.reserve(m * (k + 1));
    g.indexes.reserve(m * (k + 1));
    for (std::size_t i = 0; i < m; ++i) {
      for (std::size_t j = 0; j <= k; ++j) {
        g.src.push_back(out.src[i]);
        g.dst.push_back(j == 0 ? out.dst[i] : neg.data[i * k + j - 1]);
        g.labels.push_back(j == 0 ? 1 : 0);
        g.indexes.push_back(static_cast<std::int64_t>(i));
      }
    }
    out = std::move(g);
    names.labels = names.indexes = neg_file->path.string();
  }
  group_by_index(out);
  check_pair_set(out, n_src, n_dst, names);
  if (training && (!out.labels.empty() || !out.indexes.empty())) {
    // Training draws its own negatives (docs/design.md section 7.1): keep the positives.
    pair_set pos;
    for (std::size_t i = 0; i < out.src.size(); ++i) {
      if (out.labels.empty() || out.labels[i] == 1) {
        pos.src.push_back(out.src[i]);
        pos.dst.push_back(out.dst[i]);
      }
    }
    out = std::move(pos);
  }
  return out;
}

/// One train/validation/test set of a link-prediction task on an untyped graph: at most one
/// item set (read_one_pair_set), ids in [0, n).
pair_set read_pair_set(const fs::path& dir, const std::vector<item_set_meta>& sets,
                       const std::string& key, vid_t n, bool training) {
  if (sets.empty()) return {};
  if (sets.size() > 1) {
    COOPGNN_IO_FAIL(
        "{}: {} has {} item sets (one per type): typed item sets need a heterogeneous graph "
        "(several node or edge types)",
        (dir / kMetadataFile).string(), key, sets.size());
  }
  return read_one_pair_set(dir, sets[0], key + "[0]", n, n, training);
}

/// One train/validation/test set of a link-prediction task on a heterogeneous graph: one item
/// set per relation, each typed "src_type:relation:dst_type" (an edge type of graph.edges), its
/// local ids shifted to global ones, its pairs' relation recorded; the query ids of a later item
/// set are shifted past the earlier sets' largest when they would overlap.
pair_set read_typed_pair_set(const fs::path& dir, const hetero_schema& h,
                             const std::vector<item_set_meta>& sets, const std::string& key,
                             bool training) {
  std::string const meta_name = (dir / kMetadataFile).string();
  pair_set out;
  for (std::size_t j = 0; j < sets.size(); ++j) {
    std::string const k = fmt::format("{}[{}]", key, j);
    if (!sets[j].type) {
      COOPGNN_IO_FAIL(
          "{}: {} has no type: link-prediction item sets of a heterogeneous graph name their "
          "relation as 'src_type:relation:dst_type'",
          meta_name, k);
    }
    std::string const& type = *sets[j].type;
    auto const parts = split_edge_type(type, fmt::format("{}: {}.type", meta_name, k));
    std::int64_t const r = h.edge_type_index(type);
    if (r < 0) {
      COOPGNN_IO_FAIL("{}: {}.type '{}' is not an edge type of graph.edges", meta_name, k, type);
    }
    std::int64_t const st = h.node_type_index(parts[0]);
    std::int64_t const dt = h.node_type_index(parts[2]);
    pair_set part = read_one_pair_set(dir, sets[j], k, h.count(st), h.count(dt), training);
    vid_t const so = h.node_offsets[static_cast<std::size_t>(st)];
    vid_t const d_off = h.node_offsets[static_cast<std::size_t>(dt)];
    std::int64_t shift = 0;
    if (!part.indexes.empty() && !out.indexes.empty() &&
        part.indexes.front() <= out.indexes.back()) {
      shift = out.indexes.back() + 1 - part.indexes.front();
    }
    if (!out.empty() && out.indexes.empty() != part.indexes.empty()) {
      COOPGNN_IO_FAIL("{}: {} {} indexes but the earlier item sets of {} {}", meta_name, k,
                      part.indexes.empty() ? "has no" : "has", key,
                      out.indexes.empty() ? "have none" : "have them");
    }
    if (!out.empty() && out.labels.empty() != part.labels.empty()) {
      COOPGNN_IO_FAIL("{}: {} {} labels but the earlier item sets of {} {}", meta_name, k,
                      part.labels.empty() ? "has no" : "has", key,
                      out.labels.empty() ? "have none" : "have them");
    }
    for (std::size_t i = 0; i < part.src.size(); ++i) {
      out.src.push_back(part.src[i] + so);
      out.dst.push_back(part.dst[i] + d_off);
      out.relation.push_back(static_cast<std::int32_t>(r));
    }
    out.labels.insert(out.labels.end(), part.labels.begin(), part.labels.end());
    for (std::int64_t q : part.indexes) out.indexes.push_back(q + shift);
  }
  return out;
}

/// Writes `values` (int64, `shape`) to dir/rel and records it as item data `name` of `set`.
void write_item(const fs::path& dir, item_set_meta& set, const char* name, const std::string& rel,
                std::span<const std::int64_t> values, std::span<const std::int64_t> shape) {
  write_npy(dir / rel, values, shape);
  set.data.push_back(item_data_meta{name, "numpy", true, rel});
}

/// The node-classification task `name` of `ds` (its vertex split, with labels when ds has them)
/// written under dir/set: seeds stored as id - offset (a type's local ids; 0 when homogeneous),
/// item sets typed `type` when given.
task_meta write_node_task(const fs::path& dir, const dataset& ds,
                          const std::optional<std::string>& type, vid_t offset,
                          const std::string& name) {
  task_meta task;
  task.name = name;
  if (ds.num_classes > 0) task.num_classes = ds.num_classes;
  auto write_set = [&](const std::vector<vid_t>& seeds, const char* stem) {
    std::vector<item_set_meta> sets;
    if (seeds.empty()) return sets;
    item_set_meta s;
    s.type = type;
    std::vector<std::int64_t> local(seeds.size());
    for (std::size_t i = 0; i < seeds.size(); ++i) local[i] = seeds[i] - offset;
    std::int64_t const shape[1] = {static_cast<std::int64_t>(seeds.size())};
    write_item(dir, s, "seeds", fmt::format("set/{}_seeds.npy", stem), local, shape);
    if (!ds.labels.empty()) {
      std::vector<std::int64_t> lab(seeds.size());
      for (std::size_t i = 0; i < seeds.size(); ++i) {
        lab[i] = ds.labels[static_cast<std::size_t>(seeds[i])];
      }
      write_item(dir, s, "labels", fmt::format("set/{}_labels.npy", stem), lab, shape);
    }
    sets.push_back(std::move(s));
    return sets;
  };
  task.train_set = write_set(ds.train, "train");
  task.validation_set = write_set(ds.valid, "valid");
  task.test_set = write_set(ds.test, "test");
  return task;
}

bool type_matches(const std::optional<std::string>& t,
                  const std::optional<std::string>& node_type) {
  return !t || !node_type || *t == *node_type;
}

/// "'a' (tasks[0]), 'b' (tasks[1])".
std::string task_names(const dataset_metadata& meta) {
  std::string s;
  for (std::size_t i = 0; i < meta.tasks.size(); ++i) {
    s += fmt::format("{}'{}' (tasks[{}])", i == 0 ? "" : ", ", meta.tasks[i].name, i);
  }
  return s.empty() ? "none" : s;
}

/// "; --task NAME reads another task: ..." when metadata.yaml has more than one task, else "".
std::string other_tasks_hint(const dataset_metadata& meta) {
  return meta.tasks.size() > 1
             ? fmt::format("; --task NAME reads another task: {}", task_names(meta))
             : std::string();
}

/// The input node feature (dataset_read_options::feature): the one named `want`, else "feat",
/// else none when no node feature other than "label" exists. @throws io_error listing the node
/// features (name, dtype, shape) when the wanted one does not exist or the choice is ambiguous.
std::optional<std::size_t> pick_feature(const dataset_metadata& meta,
                                        const std::vector<npy_header>& headers, const node_meta& nm,
                                        const std::string& want, const std::string& meta_name) {
  std::vector<std::size_t> cands;
  for (std::size_t i = 0; i < meta.feature_data.size(); ++i) {
    const feature_meta& f = meta.feature_data[i];
    if (f.domain == "node" && type_matches(f.type, nm.type) && f.name != "label") {
      cands.push_back(i);
    }
  }
  std::string const name = want.empty() ? "feat" : want;
  for (std::size_t i : cands) {
    if (meta.feature_data[i].name == name) return i;
  }
  if (want.empty() && cands.empty()) return std::nullopt;  // no input features at all
  std::string list;
  for (std::size_t i : cands) {
    list += fmt::format("{}'{}' ({}, {})", list.empty() ? "" : ", ", meta.feature_data[i].name,
                        npy_dtype_name(headers[i].dtype), format_npy_shape(headers[i].shape));
  }
  if (cands.empty()) {
    COOPGNN_IO_FAIL("{}: no node feature named '{}' (--feature): the dataset has no node features",
                    meta_name, name);
  }
  COOPGNN_IO_FAIL("{}: no node feature named '{}'{}: pick the input with --feature NAME, one of {}",
                  meta_name, name, want.empty() ? " (the default input feature)" : " (--feature)",
                  list);
}

/// The tasks read_dataset reads (dataset_read_options::task).
struct task_choice {
  std::optional<std::size_t> nc;     ///< node-classification task index
  std::optional<std::size_t> lp;     ///< link-prediction task index
  bool by_default = true;            ///< no task was named
  std::vector<std::string> skipped;  ///< default choice: tasks whose seeds cannot be read
};

task_choice choose_tasks(const fs::path& dir, const dataset_metadata& meta,
                         const std::string& want) {
  task_choice c;
  auto set_kind = [&](std::size_t i, task_kind k) {
    auto& slot = k == task_kind::node_classification ? c.nc : c.lp;
    if (!slot) slot = i;
  };
  if (want.empty() || want == "auto") {
    // A task whose seeds cannot be read is skipped (and said) unless no task can be read.
    for (std::size_t i = 0; i < meta.tasks.size(); ++i) {
      try {
        set_kind(i, classify_task(dir, meta.tasks[i], i));
      } catch (const io_error& e) {
        c.skipped.push_back(fmt::format("{} (tasks[{}] '{}')", e.what(), i, meta.tasks[i].name));
      }
    }
    if (!c.nc && !c.lp && !c.skipped.empty()) {
      COOPGNN_IO_FAIL("{}{}", c.skipped.front(), other_tasks_hint(meta));
    }
    return c;
  }
  c.by_default = false;
  for (std::size_t i = 0; i < meta.tasks.size(); ++i) {
    if (meta.tasks[i].name == want) {
      set_kind(i, classify_task(dir, meta.tasks[i], i));
      return c;
    }
  }
  std::optional<task_kind> kind;
  if (want == "node_classification") kind = task_kind::node_classification;
  if (want == "link_prediction") kind = task_kind::link_prediction;
  if (kind) {
    for (std::size_t i = 0; i < meta.tasks.size(); ++i) {
      std::optional<task_kind> k;
      try {
        k = classify_task(dir, meta.tasks[i], i);
      } catch (const io_error&) {
        continue;  // not this one: its seeds cannot be read
      }
      if (k == kind) {
        set_kind(i, *k);
        return c;
      }
    }
  }
  COOPGNN_IO_FAIL(
      "{}: no task named '{}' (--task){}: the tasks are {}; node_classification or "
      "link_prediction picks the first task of that kind",
      (dir / kMetadataFile).string(), want,
      kind ? fmt::format(" and no readable {} task", want) : std::string(), task_names(meta));
}

/// The heterogeneous form of read_dataset (dataset_read_options::heterogeneous): node types laid
/// over one global id space in metadata order (hetero_schema), every edge type read with its
/// local ids shifted to global ones, each type's input feature (opt.feature, default "feat")
/// where the type has it, and one node-classification task whose item sets all hold seeds of
/// one node type, and a link-prediction task of typed item sets (read_typed_pair_set).
dataset read_hetero(const fs::path& dir, const dataset_metadata& meta,
                    const dataset_read_options& opt) {
  std::string const meta_name = (dir / kMetadataFile).string();
  dataset ds;
  ds.name = meta.dataset_name;
  hetero_schema h;
  h.node_offsets.push_back(0);
  for (std::size_t t = 0; t < meta.nodes.size(); ++t) {
    const node_meta& nm = meta.nodes[t];
    if (!nm.type || nm.type->empty()) {
      COOPGNN_IO_FAIL("{}: graph.nodes[{}] has no type: a graph with several node types names each",
                      meta_name, t);
    }
    if (h.node_type_index(*nm.type) >= 0) {
      COOPGNN_IO_FAIL("{}: graph.nodes[{}]: node type '{}' appears twice", meta_name, t, *nm.type);
    }
    h.node_types.push_back(*nm.type);
    vid_t const total = h.node_offsets.back();
    if (nm.num > std::numeric_limits<vid_t>::max() - total) {
      COOPGNN_IO_FAIL("{}: graph.nodes: the node counts overflow int64", meta_name);
    }
    h.node_offsets.push_back(total + nm.num);
  }
  vid_t const n = h.node_offsets.back();
  if (n == 0) {
    COOPGNN_IO_FAIL("{}: empty graph: every node type has num 0 (a dataset needs a node)",
                    meta_name);
  }
  check_declared_nodes(meta_name, "the sum of graph.nodes[*].num", n);
  ds.num_nodes = n;

  // ---- edges, one file per edge type
  std::vector<std::int64_t> edges_of_type;
  for (std::size_t r = 0; r < meta.edges.size(); ++r) {
    const edge_meta& em = meta.edges[r];
    std::string const key = fmt::format("graph.edges[{}]", r);
    if (!em.type) {
      COOPGNN_IO_FAIL(
          "{}: {} has no type: a heterogeneous graph types every edge set as "
          "'src_type:relation:dst_type'",
          meta_name, key);
    }
    auto const parts = split_edge_type(*em.type, fmt::format("{}: {}.type", meta_name, key));
    std::int64_t const st = h.node_type_index(parts[0]);
    std::int64_t const dt = h.node_type_index(parts[2]);
    if (st < 0 || dt < 0) {
      COOPGNN_IO_FAIL("{}: {}.type '{}': node type '{}' is not in graph.nodes", meta_name, key,
                      *em.type, st < 0 ? parts[0] : parts[2]);
    }
    if (h.edge_type_index(*em.type) >= 0) {
      COOPGNN_IO_FAIL("{}: {}: edge type '{}' appears twice", meta_name, key, *em.type);
    }
    h.edge_types.push_back(*em.type);
    fs::path const epath = data_file(dir, em.path, key + ".path");
    std::vector<vid_t> src;
    std::vector<vid_t> dst;
    read_edge_file(epath, em.format, src, dst);
    check_ids(
        src, h.count(st), epath.string(),
        fmt::format("'{}' edge source (a local id of type '{}')", *em.type, parts[0]).c_str());
    check_ids(
        dst, h.count(dt), epath.string(),
        fmt::format("'{}' edge destination (a local id of type '{}')", *em.type, parts[2]).c_str());
    vid_t const so = h.node_offsets[static_cast<std::size_t>(st)];
    vid_t const d_off = h.node_offsets[static_cast<std::size_t>(dt)];
    for (std::size_t e = 0; e < src.size(); ++e) {
      ds.src.push_back(src[e] + so);
      ds.dst.push_back(dst[e] + d_off);
      h.edge_type.push_back(static_cast<std::int32_t>(r));
    }
    edges_of_type.push_back(static_cast<std::int64_t>(src.size()));
  }

  // ---- features: every one checked against its type's count; per node type one input feature
  std::string const want = opt.feature.empty() ? "feat" : opt.feature;
  h.features.resize(h.node_types.size());
  h.feature_names.resize(h.node_types.size());
  h.features16.resize(h.node_types.size());
  h.feature_types.assign(h.node_types.size(), feature_dtype::float32);
  h.feature_files.resize(h.node_types.size());
  h.feature_cols.assign(h.node_types.size(), 0);
  std::vector<std::optional<std::size_t>> label_of(h.node_types.size());
  bool found_input = false;
  for (std::size_t i = 0; i < meta.feature_data.size(); ++i) {
    const feature_meta& f = meta.feature_data[i];
    std::string const key = fmt::format("feature_data[{}]", i);
    if (!f.type) {
      COOPGNN_IO_FAIL(
          "{}: {} ('{}') has no type: features of a heterogeneous graph name their "
          "node or edge type",
          meta_name, key, f.name);
    }
    std::int64_t rows_wanted = 0;
    std::int64_t t = -1;
    if (f.domain == "node") {
      t = h.node_type_index(*f.type);
      if (t < 0) {
        COOPGNN_IO_FAIL("{}: {}.type '{}' is not a node type of graph.nodes", meta_name, key,
                        *f.type);
      }
      rows_wanted = h.count(t);
    } else {
      std::int64_t const r = h.edge_type_index(*f.type);
      if (r < 0) {
        COOPGNN_IO_FAIL("{}: {}.type '{}' is not an edge type of graph.edges", meta_name, key,
                        *f.type);
      }
      rows_wanted = edges_of_type[static_cast<std::size_t>(r)];
    }
    fs::path const p = data_file(dir, f.path, key + ".path");
    npy_header const hd = array_header(p, f.format);
    std::int64_t const rows = hd.shape.empty() ? 1 : hd.shape[0];
    if (rows != rows_wanted) {
      COOPGNN_IO_FAIL("{}: {} feature '{}' of type '{}' has {} rows (shape {}) but the type has {}",
                      p.string(), f.domain, f.name, *f.type, rows, format_npy_shape(hd.shape),
                      rows_wanted);
    }
    if (f.domain != "node") continue;
    auto const ti = static_cast<std::size_t>(t);
    if (f.name == "label") label_of[ti] = i;
    if (f.name != want) continue;
    if (hd.shape.empty() || hd.shape.size() > 2) {
      COOPGNN_IO_FAIL("{}: node features must be 1-D or 2-D, found shape {}", p.string(),
                      format_npy_shape(hd.shape));
    }
    std::int64_t const cols = hd.shape.size() == 2 ? hd.shape[1] : 1;
    // 16-bit floats stay 16-bit (bit patterns, never widened); other dtypes read as float32.
    bool const bits16 = hd.dtype == npy_dtype::float16 || hd.dtype == npy_dtype::bfloat16;
    if (bits16) {
      h.feature_types[ti] =
          hd.dtype == npy_dtype::float16 ? feature_dtype::float16 : feature_dtype::bfloat16;
    }
    if (!opt.load_features) {
      // Only the header: the rows stay in the file (memory-mapped by the trainer).
      if (f.format != "numpy" || (!bits16 && hd.dtype != npy_dtype::float32)) {
        COOPGNN_IO_FAIL(
            "{}: node feature '{}' of type '{}' is {} {}: features left in their file "
            "(memory-mapped) must be float32 or float16 .npy; load them into memory instead "
            "(--feature-storage host) or convert the file with numpy.save",
            p.string(), f.name, *f.type, f.format, npy_dtype_name(hd.dtype));
      }
      h.feature_files[ti] = p;
      h.feature_cols[ti] = cols;
    } else if (bits16) {
      h.features16[ti] = matrix<std::uint16_t>(
          h.count(t), cols, (f.format == "torch" ? read_torch_bits16(p) : read_npy_bits16(p)).data);
    } else {
      h.features[ti] = matrix<float>(h.count(t), cols, read_array<float>(p, f.format).data);
    }
    h.feature_names[ti] = f.name;
    found_input = true;
  }
  if (!opt.feature.empty() && !found_input) {
    COOPGNN_IO_FAIL("{}: no node type has a feature named '{}' (--feature)", meta_name,
                    opt.feature);
  }
  for (std::size_t t = 0; t < h.node_types.size(); ++t) {
    if (h.feature_names[t].empty() && h.count(static_cast<std::int64_t>(t)) > 0) {
      ds.notes.push_back(
          fmt::format("node type '{}' has no feature named '{}': its {} vertices "
                      "have no input features",
                      h.node_types[t], want, h.count(static_cast<std::int64_t>(t))));
    }
  }

  // ---- the link-prediction task: typed item sets, one per relation (read_typed_pair_set)
  task_choice const choice = choose_tasks(dir, meta, opt.task);
  if (choice.lp) {
    const task_meta& t = meta.tasks[*choice.lp];
    std::string const tkey = fmt::format("tasks[{}]", *choice.lp);
    try {
      if (t.item_begin || t.item_end) {
        COOPGNN_IO_FAIL(
            "{}: {} has item_begin / item_end: user-item ranges are for untyped graphs (on a "
            "heterogeneous graph users and items are node types)",
            meta_name, tkey);
      }
      link_task lt;
      lt.name = t.name;
      lt.train = read_typed_pair_set(dir, h, t.train_set, tkey + ".train_set", true);
      lt.valid = read_typed_pair_set(dir, h, t.validation_set, tkey + ".validation_set", false);
      lt.test = read_typed_pair_set(dir, h, t.test_set, tkey + ".test_set", false);
      ds.link = std::move(lt);
      ds.link_first = choice.nc && *choice.lp < *choice.nc;
    } catch (const io_error& e) {
      if (!choice.by_default || !choice.nc) throw;
      ds.notes.push_back(fmt::format("skipped a task that cannot be read: {}", e.what()));
    }
  }
  for (const auto& e : choice.skipped) {
    ds.notes.push_back(fmt::format("skipped a task that cannot be read: {}", e));
  }
  if (choice.nc) {
    const task_meta& t = meta.tasks[*choice.nc];
    std::string const tkey = fmt::format("tasks[{}]", *choice.nc);
    label_merge lm{ds.labels, n, t.num_classes};
    std::vector<vid_t>* out[3] = {&ds.train, &ds.valid, &ds.test};
    const std::vector<item_set_meta>* sets[3] = {&t.train_set, &t.validation_set, &t.test_set};
    const char* keys[3] = {"train_set", "validation_set", "test_set"};
    for (int k = 0; k < 3; ++k) {
      for (std::size_t j = 0; j < sets[k]->size(); ++j) {
        const item_set_meta& set = (*sets[k])[j];
        std::string const key = fmt::format("{}.{}[{}]", tkey, keys[k], j);
        if (!set.type) {
          COOPGNN_IO_FAIL(
              "{}: {} has no type: item sets of a heterogeneous graph name the node "
              "type of their seeds",
              meta_name, key);
        }
        std::int64_t const ty = h.node_type_index(*set.type);
        if (ty < 0) {
          COOPGNN_IO_FAIL("{}: {}.type '{}' is not a node type of graph.nodes", meta_name, key,
                          *set.type);
        }
        if (h.target_type.empty()) h.target_type = *set.type;
        if (*set.type != h.target_type) {
          COOPGNN_IO_FAIL(
              "{}: {} holds seeds of type '{}' but earlier sets hold '{}': node "
              "classification over several node types is not supported",
              meta_name, key, *set.type, h.target_type);
        }
        auto part = read_one_item_set(dir, set, key, lm,
                                      h.node_offsets[static_cast<std::size_t>(ty)], h.count(ty));
        out[k]->insert(out[k]->end(), part.begin(), part.end());
      }
    }
    std::int64_t const target = h.target_type.empty() ? -1 : h.node_type_index(h.target_type);
    if (target >= 0 && label_of[static_cast<std::size_t>(target)]) {
      // The target type's 'label' feature ([count], -1 = unknown), merged with the sets' labels.
      const feature_meta& f = meta.feature_data[*label_of[static_cast<std::size_t>(target)]];
      fs::path const p = dir / f.path;
      std::vector<std::int64_t> const lab =
          as_column(read_array<std::int64_t>(p, f.format), p.string(), "the 'label' node feature");
      if (ds.labels.empty()) ds.labels.assign(static_cast<std::size_t>(n), -1);
      vid_t const off = h.node_offsets[static_cast<std::size_t>(target)];
      for (std::size_t i = 0; i < lab.size(); ++i) {
        if (lab[i] < -1 || (t.num_classes && lab[i] >= *t.num_classes)) {
          COOPGNN_IO_FAIL(
              "{}: label index {} = {} is out of range: labels must be in [0, {}) or "
              "-1 for unknown",
              p.string(), i, lab[i], t.num_classes ? fmt::to_string(*t.num_classes) : "C");
        }
        std::int64_t& slot = ds.labels[static_cast<std::size_t>(off) + i];
        if (lab[i] >= 0 && slot >= 0 && slot != lab[i]) {
          COOPGNN_IO_FAIL("{}: label index {} = {} conflicts with the label {} of the task's sets",
                          p.string(), i, lab[i], slot);
        }
        if (lab[i] >= 0) slot = lab[i];
      }
    }
    if (t.num_classes) {
      ds.num_classes = *t.num_classes;
    } else if (!ds.labels.empty()) {
      std::int64_t mx = -1;
      for (std::int64_t l : ds.labels) mx = std::max(mx, l);
      ds.num_classes = classes_from_max_label(mx, meta_name);
    }
    ds.task_name = t.name;
  }
  ds.hetero = std::move(h);
  validate_dataset(ds, dir.string());
  return ds;
}

}  // namespace

dataset read_dataset(const fs::path& dir, const dataset_read_options& opt) {
  fs::path const meta_path = dir / kMetadataFile;
  std::string const meta_name = meta_path.string();
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) COOPGNN_IO_FAIL("{}: not a directory", dir.string());
  require_readable_file(meta_path, fmt::format("{}: missing file: a dataset directory needs a "
                                               "metadata.yaml (DGL GraphBolt OnDiskDataset layout)",
                                               meta_name));
  dataset_metadata const meta = read_metadata(meta_path);
  if (meta.nodes.empty()) COOPGNN_IO_FAIL("{}: graph.nodes is empty", meta_name);
  if (meta.edges.empty()) COOPGNN_IO_FAIL("{}: graph.edges is empty", meta_name);
  bool const typed = meta.nodes.size() > 1 || meta.edges.size() > 1 ||
                     (meta.nodes[0].type && meta.edges[0].type &&
                      meta.edges[0].type->find(':') != std::string::npos);
  if (typed && opt.heterogeneous) return read_hetero(dir, meta, opt);
  if (meta.nodes.size() > 1 || meta.edges.size() > 1) {
    COOPGNN_IO_FAIL(
        "{}: {} node types and {} edge types: a heterogeneous graph; `coopgnn info` lists it and "
        "`coopgnn train`/`compare --model rgcn` train it, this command takes untyped graphs",
        meta_name, meta.nodes.size(), meta.edges.size());
  }
  const node_meta& nm = meta.nodes[0];
  if (nm.num == 0) {
    COOPGNN_IO_FAIL("{}: empty graph: graph.nodes[0].num is 0 (a dataset needs at least one node)",
                    meta_name);
  }
  check_declared_nodes(meta_name, "graph.nodes[0].num", nm.num);
  dataset ds;
  ds.name = meta.dataset_name;
  ds.num_nodes = nm.num;
  vid_t const n = nm.num;

  // ---- edges
  const edge_meta& em = meta.edges[0];
  fs::path const epath = data_file(dir, em.path, "graph.edges[0].path");
  if (!opt.load_edges && em.format == "numpy") {
    // Only the header: read_edge_csc checks the ids as it builds the CSC from the file.
    ds.edges_in_file = npy_two_row_reader(epath).columns();
    ds.edge_file = epath;
  } else {
    read_edge_file(epath, em.format, ds.src, ds.dst);
    check_ids(ds.src, n, epath.string(), "edge source");
    check_ids(ds.dst, n, epath.string(), "edge destination");
  }

  // ---- features: every one is checked against the graph; one node feature is the input.
  std::vector<npy_header> headers;
  headers.reserve(meta.feature_data.size());
  std::optional<std::size_t> label_idx;
  for (std::size_t i = 0; i < meta.feature_data.size(); ++i) {
    const feature_meta& f = meta.feature_data[i];
    std::string const key = fmt::format("feature_data[{}].path", i);
    fs::path const p = data_file(dir, f.path, key);
    headers.push_back(array_header(p, f.format));
    const npy_header& h = headers.back();
    std::int64_t const rows = h.shape.empty() ? 1 : h.shape[0];
    std::int64_t const want = f.domain == "node" ? n : ds.num_edges();
    if (rows != want) {
      COOPGNN_IO_FAIL("{}: {} feature '{}' has {} rows (shape {}) but the graph has {} {}s",
                      p.string(), f.domain, f.name, rows, format_npy_shape(h.shape), want,
                      f.domain);
    }
    if (f.domain == "node" && type_matches(f.type, nm.type) && f.name == "label") label_idx = i;
  }
  std::optional<std::size_t> const feat_idx =
      pick_feature(meta, headers, nm, opt.feature, meta_name);
  if (feat_idx) {
    const feature_meta& f = meta.feature_data[*feat_idx];
    fs::path const p = dir / f.path;
    const npy_header& h = headers[*feat_idx];
    if (h.shape.empty() || h.shape.size() > 2) {
      COOPGNN_IO_FAIL("{}: node features must be 1-D or 2-D, found shape {}", p.string(),
                      format_npy_shape(h.shape));
    }
    std::int64_t const cols = h.shape.size() == 2 ? h.shape[1] : 1;
    // 16-bit floats stay 16-bit (read as bit patterns, never widened); others read as float32.
    bool const bits16 = h.dtype == npy_dtype::float16 || h.dtype == npy_dtype::bfloat16;
    if (bits16) {
      ds.feature_type =
          h.dtype == npy_dtype::float16 ? feature_dtype::float16 : feature_dtype::bfloat16;
    }
    if (!opt.load_features) {
      // Only the header: the rows stay in the file (memory-mapped later, cache/storage.hpp).
      if (f.format != "numpy") {
        COOPGNN_IO_FAIL(
            "{}: node feature '{}' is stored as {}: features left in their file (memory-mapped) "
            "must be .npy; load them into memory instead (--feature-storage memory) or convert "
            "the file with numpy.save",
            p.string(), f.name, f.format);
      }
    } else if (bits16) {
      ds.features16 = matrix<std::uint16_t>(
          n, cols, (f.format == "torch" ? read_torch_bits16(p) : read_npy_bits16(p)).data);
    } else {
      ds.features = matrix<float>(n, cols, read_array<float>(p, f.format).data);
    }
    ds.feature_file = p;
    ds.feature_cols = cols;
    ds.feature_name = f.name;
  }

  // ---- tasks (opt.task): the chosen task, or the first node-classification and the first
  // link-prediction task; others are not read.
  task_choice const choice = choose_tasks(dir, meta, opt.task);
  std::optional<std::int64_t> num_classes;
  if (choice.nc) num_classes = meta.tasks[*choice.nc].num_classes;
  if (label_idx) {
    fs::path const p = dir / meta.feature_data[*label_idx].path;
    ds.labels = as_column(read_array<std::int64_t>(p, meta.feature_data[*label_idx].format),
                          p.string(), "the 'label' node feature");
    for (std::size_t v = 0; v < ds.labels.size(); ++v) {
      std::int64_t const l = ds.labels[v];
      if (l < -1 || (num_classes && l >= *num_classes)) {
        COOPGNN_IO_FAIL(
            "{}: label index {} = {} is out of range: labels must be in [0, {}) or -1 "
            "for unknown",
            p.string(), v, l, num_classes ? fmt::to_string(*num_classes) : "C");
      }
    }
  }
  // With the default choice a task that cannot be read is skipped (and said in ds.notes) when
  // the other kind can be; a task the caller named must be read.
  std::optional<std::string> nc_error;
  std::optional<std::string> lp_error;
  auto attempt = [&](std::size_t ti, auto&& read) -> std::optional<std::string> {
    try {
      read();
      return std::nullopt;
    } catch (const io_error& e) {
      if (!choice.by_default) throw;
      return fmt::format("{} (tasks[{}] '{}')", e.what(), ti, meta.tasks[ti].name);
    }
  };
  if (choice.nc) {
    std::vector<std::int64_t> const labels_before = ds.labels;
    nc_error = attempt(*choice.nc, [&] {
      const task_meta& t = meta.tasks[*choice.nc];
      std::string const tkey = fmt::format("tasks[{}]", *choice.nc);
      label_merge lm{ds.labels, n, num_classes};
      ds.train = read_item_set(dir, t.train_set, tkey + ".train_set", lm);
      ds.valid = read_item_set(dir, t.validation_set, tkey + ".validation_set", lm);
      ds.test = read_item_set(dir, t.test_set, tkey + ".test_set", lm);
      ds.task_name = t.name;
    });
    if (nc_error) {
      ds.labels = labels_before;
      ds.train.clear();
      ds.valid.clear();
      ds.test.clear();
      num_classes.reset();
    }
  }
  if (num_classes) {
    ds.num_classes = *num_classes;
  } else if (!ds.labels.empty()) {
    std::int64_t mx = -1;
    for (std::int64_t l : ds.labels) mx = std::max(mx, l);
    ds.num_classes = classes_from_max_label(mx, meta_name);
  }
  if (ds.num_classes > 0 && ds.labels.empty() && choice.nc && !nc_error &&
      (!ds.train.empty() || !ds.valid.empty() || !ds.test.empty())) {
    COOPGNN_IO_FAIL(
        "{}: tasks[{}] declares {} classes but no labels were found (neither 'labels' "
        "item data nor a node feature named 'label')",
        meta_name, *choice.nc, ds.num_classes);
  }
  if (choice.lp) {
    lp_error = attempt(*choice.lp, [&] {
      const task_meta& t = meta.tasks[*choice.lp];
      std::string const tkey = fmt::format("tasks[{}]", *choice.lp);
      link_task lt;
      lt.name = t.name;
      lt.train = read_pair_set(dir, t.train_set, tkey + ".train_set", n, true);
      lt.valid = read_pair_set(dir, t.validation_set, tkey + ".validation_set", n, false);
      lt.test = read_pair_set(dir, t.test_set, tkey + ".test_set", n, false);
      if (t.item_begin.has_value() != t.item_end.has_value()) {
        COOPGNN_IO_FAIL("{}: {} has {} but not {}: user-item data needs both", meta_name, tkey,
                        t.item_begin ? "item_begin" : "item_end",
                        t.item_begin ? "item_end" : "item_begin");
      }
      if (t.item_begin) {
        check_item_range(*t.item_begin, *t.item_end, n, fmt::format("{}: {}", meta_name, tkey));
        lt.item_begin = *t.item_begin;
        lt.item_end = *t.item_end;
      }
      ds.link = std::move(lt);
    });
  }
  bool const nc_ok = choice.nc && !nc_error;
  bool const lp_ok = choice.lp && !lp_error;
  if ((nc_error || lp_error) && !nc_ok && !lp_ok) {
    COOPGNN_IO_FAIL("{}{}", nc_error ? *nc_error : *lp_error, other_tasks_hint(meta));
  }
  std::vector<std::string> skipped = choice.skipped;
  for (const auto& e : {nc_error, lp_error}) {
    if (e) skipped.push_back(*e);
  }
  for (const auto& e : skipped) {
    ds.notes.push_back(fmt::format("skipped a task that cannot be read: {}", e));
  }
  ds.link_first = nc_ok && lp_ok && *choice.lp < *choice.nc;
  validate_dataset(ds, dir.string());
  return ds;
}

dataset_contents inspect_dataset(const fs::path& dir) {
  dataset_metadata const meta = read_metadata(dir / kMetadataFile);
  dataset_contents c;
  c.name = meta.dataset_name;
  c.node_types = meta.nodes.size();
  c.edge_types = meta.edges.size();
  for (const node_meta& nm : meta.nodes) {  // saturating: each num is a non-negative int64
    c.num_nodes = nm.num > std::numeric_limits<std::int64_t>::max() - c.num_nodes
                      ? std::numeric_limits<std::int64_t>::max()
                      : c.num_nodes + nm.num;
  }
  for (std::size_t i = 0; i < meta.feature_data.size(); ++i) {
    const feature_meta& f = meta.feature_data[i];
    dataset_contents::feature e{f.domain, f.type.value_or(""), f.name, f.format, f.path, "", {},
                                ""};
    try {
      npy_header const h =
          array_header(data_file(dir, f.path, fmt::format("feature_data[{}].path", i)), f.format);
      e.dtype = std::string(npy_dtype_name(h.dtype));
      e.shape = h.shape;
    } catch (const io_error& err) {
      e.error = err.what();
    }
    c.features.push_back(std::move(e));
  }
  for (std::size_t i = 0; i < meta.tasks.size(); ++i) {
    const task_meta& t = meta.tasks[i];
    dataset_contents::task e;
    e.name = t.name;
    e.num_classes = t.num_classes;
    try {
      e.kind = classify_task(dir, t, i) == task_kind::node_classification ? "node_classification"
                                                                          : "link_prediction";
      auto items = [&](const std::vector<item_set_meta>& sets, const char* key) {
        std::int64_t total = 0;
        for (std::size_t si = 0; si < sets.size(); ++si) {
          for (std::size_t j = 0; j < sets[si].data.size(); ++j) {
            const item_data_meta& d = sets[si].data[j];
            std::string const nm = d.name.value_or("seeds");
            if (!is_seeds(nm)) continue;
            fs::path const p = data_file(
                dir, d.path, fmt::format("tasks[{}].{}[{}].data[{}].path", i, key, si, j));
            npy_header const h = array_header(p, d.format);
            total += h.shape.empty() ? 1 : h.shape[0];
          }
        }
        return total;
      };
      e.train = items(t.train_set, "train_set");
      e.valid = items(t.validation_set, "validation_set");
      e.test = items(t.test_set, "test_set");
    } catch (const io_error& err) {
      e.error = err.what();
    }
    c.tasks.push_back(std::move(e));
  }
  return c;
}

namespace {
void validate_hetero(const dataset& ds, const std::string& what);
void write_hetero(const dataset& ds, const fs::path& dir);
}  // namespace

namespace {
void write_dataset_with(const dataset& ds, const edge_rows* rows, const fs::path& dir);

/// Writes the [2, E] int64 edges file, row 0 then row 1, each produced a chunk at a time by
/// fill(row, first, out) for columns [first, first + out.size()).
void write_edges_npy(const fs::path& file, std::int64_t num_edges,
                     const std::function<void(int, std::int64_t, std::span<std::int64_t>)>& fill) {
  std::int64_t const shape[2] = {2, num_edges};
  atomic_file out(file);
  std::string const header = make_npy_header(npy_dtype::int64, shape);
  out.write(header.data(), header.size());
  std::vector<std::int64_t> buf(static_cast<std::size_t>(std::min(edge_chunk_edges, num_edges)));
  for (int row = 0; row < 2; ++row) {
    for (std::int64_t first = 0; first < num_edges; first += edge_chunk_edges) {
      std::span<std::int64_t> const chunk(
          buf.data(), static_cast<std::size_t>(std::min(edge_chunk_edges, num_edges - first)));
      fill(row, first, chunk);
      out.write(chunk.data(), chunk.size_bytes());
    }
  }
  out.commit();
}
}  // namespace

void write_dataset(const dataset& ds, const fs::path& dir) { write_dataset_with(ds, nullptr, dir); }

void write_dataset(const dataset& ds, const edge_rows& rows, const fs::path& dir) {
  COOPGNN_EXPECTS(ds.src.empty() && ds.dst.empty(),
                  "write_dataset: the edges come from the rows, but the dataset holds {} edges",
                  ds.src.size());
  COOPGNN_EXPECTS(rows.num_nodes == ds.num_nodes,
                  "write_dataset: the edge rows have {} vertices, the dataset {}", rows.num_nodes,
                  ds.num_nodes);
  write_dataset_with(ds, &rows, dir);
}

namespace {
void write_dataset_with(const dataset& ds, const edge_rows* rows, const fs::path& dir) {
  COOPGNN_EXPECTS(ds.edges_in_file == 0,
                  "write_dataset: the edges of '{}' were left in {} (read without loading them)",
                  ds.name, ds.edge_file.string());
  COOPGNN_EXPECTS(rows == nullptr || !ds.hetero,
                  "write_dataset: edge rows carry no edge types; a heterogeneous dataset needs "
                  "its edges in src / dst");
  try {
    validate_dataset(ds, fmt::format("dataset '{}'", ds.name));
  } catch (const io_error& e) {
    COOPGNN_FAIL("write_dataset: {}", e.what());
  }
  std::error_code ec;
  for (const char* sub : {"edges", "data", "set"}) {
    fs::create_directories(dir / sub, ec);
    if (ec) COOPGNN_IO_FAIL("{}: cannot create directory: {}", (dir / sub).string(), ec.message());
  }
  if (ds.hetero) {
    write_hetero(ds, dir);
    return;
  }
  dataset_metadata meta;
  meta.dataset_name = ds.name;
  meta.nodes.push_back(node_meta{std::nullopt, ds.num_nodes});

  // Edges as int64 [2, E], a chunk at a time.
  if (rows != nullptr) {
    eid_t u = 0;  // the row of edge `first` (rows are visited in order, row 0 then row 1)
    write_edges_npy(dir / "edges" / "edges.npy", rows->num_edges(),
                    [&](int row, std::int64_t first, std::span<std::int64_t> out) {
                      for (std::size_t i = 0; i < out.size(); ++i) {
                        auto const e = first + static_cast<std::int64_t>(i);
                        if (row == 1) {
                          out[i] = rows->targets[static_cast<std::size_t>(e)];
                          continue;
                        }
                        while (rows->offsets[static_cast<std::size_t>(u) + 1] <= e) ++u;
                        out[i] = u;
                      }
                    });
  } else {
    write_edges_npy(dir / "edges" / "edges.npy", ds.num_edges(),
                    [&](int row, std::int64_t first, std::span<std::int64_t> out) {
                      const std::vector<vid_t>& ids = row == 0 ? ds.src : ds.dst;
                      std::copy_n(ids.begin() + first, out.size(), out.begin());
                    });
  }
  meta.edges.push_back(edge_meta{std::nullopt, "numpy", "edges/edges.npy"});
  if (ds.feature_dim() > 0 && ds.features_are_16bit()) {
    // At their width: float16 stays '<f2' on disk (.npy has no bfloat16).
    COOPGNN_EXPECTS(ds.feature_type == feature_dtype::float16,
                    "write_dataset: {} features cannot be written as .npy (no such numpy dtype)",
                    to_string(ds.feature_type));
    std::int64_t const shape[2] = {ds.features16.rows(), ds.features16.cols()};
    write_npy_bits16(dir / "data" / "feat.npy", ds.features16.values(), shape);
    meta.feature_data.push_back(
        feature_meta{"node", std::nullopt, "feat", "numpy", true, "data/feat.npy"});
  } else if (ds.feature_dim() > 0) {
    std::int64_t const shape[2] = {ds.features.rows(), ds.features.cols()};
    write_npy(dir / "data" / "feat.npy", std::span<const float>(ds.features.values()), shape);
    meta.feature_data.push_back(
        feature_meta{"node", std::nullopt, "feat", "numpy", true, "data/feat.npy"});
  }
  if (!ds.labels.empty()) {
    std::int64_t const shape[1] = {static_cast<std::int64_t>(ds.labels.size())};
    write_npy(dir / "data" / "label.npy", std::span<const std::int64_t>(ds.labels), shape);
    meta.feature_data.push_back(
        feature_meta{"node", std::nullopt, "label", "numpy", true, "data/label.npy"});
  }
  bool const has_split = !ds.train.empty() || !ds.valid.empty() || !ds.test.empty();
  if (has_split) {
    meta.tasks.push_back(write_node_task(dir, ds, std::nullopt, 0, "node_classification"));
  }
  if (ds.link) {
    const link_task& lt = *ds.link;
    task_meta task;
    task.name = lt.name.empty() ? "link_prediction" : lt.name;
    if (lt.user_item()) {
      task.item_begin = lt.item_begin;
      task.item_end = lt.item_end;
    }
    // GraphBolt's grouped layout: seeds [M, 2], labels [M], indexes [M] (dgl
    // tests/python/pytorch/graphbolt/impl/test_ondisk_dataset.py, "link_prediction" task with
    // names ("seeds", "labels", "indexes"); examples/graphbolt/link_prediction.py reads
    // split._items[0..2] as seeds, labels, indexes for MRR).
    auto write_set = [&](const pair_set& s, const char* stem) {
      std::vector<item_set_meta> sets;
      if (s.empty()) return sets;
      item_set_meta set;
      std::vector<std::int64_t> pairs(2 * s.src.size());
      for (std::size_t i = 0; i < s.src.size(); ++i) {
        pairs[2 * i] = s.src[i];
        pairs[2 * i + 1] = s.dst[i];
      }
      std::int64_t const pshape[2] = {s.size(), 2};
      write_item(dir, set, "seeds", fmt::format("set/link_{}_seeds.npy", stem), pairs, pshape);
      std::int64_t const shape[1] = {s.size()};
      for (auto [v, what] : {std::pair{&s.labels, "labels"}, std::pair{&s.indexes, "indexes"}}) {
        if (!v->empty()) {
          write_item(dir, set, what, fmt::format("set/link_{}_{}.npy", stem, what), *v, shape);
        }
      }
      sets.push_back(std::move(set));
      return sets;
    };
    task.train_set = write_set(lt.train, "train");
    task.validation_set = write_set(lt.valid, "valid");
    task.test_set = write_set(lt.test, "test");
    meta.tasks.push_back(std::move(task));
  }
  // metadata.yaml last: a directory whose metadata.yaml exists is complete.
  write_metadata(meta, dir / kMetadataFile);
}
}  // namespace

std::int64_t hetero_schema::node_type_index(std::string_view name) const {
  auto const it = std::find(node_types.begin(), node_types.end(), name);
  return it == node_types.end() ? -1 : it - node_types.begin();
}

std::int64_t hetero_schema::edge_type_index(std::string_view name) const {
  auto const it = std::find(edge_types.begin(), edge_types.end(), name);
  return it == edge_types.end() ? -1 : it - edge_types.begin();
}

std::int64_t reverse_edge_type(const hetero_schema& h, std::int64_t r) {
  COOPGNN_EXPECTS(r >= 0 && r < static_cast<std::int64_t>(h.edge_types.size()),
                  "reverse_edge_type: relation {} is outside [0, {})", r, h.edge_types.size());
  auto const me = split_edge_type(h.edge_types[static_cast<std::size_t>(r)], "reverse_edge_type");
  std::vector<std::int64_t> fits;
  for (std::size_t q = 0; q < h.edge_types.size(); ++q) {
    auto const other = split_edge_type(h.edge_types[q], "reverse_edge_type");
    if (other[0] == me[2] && other[2] == me[0]) fits.push_back(static_cast<std::int64_t>(q));
  }
  if (fits.empty()) return -1;
  if (fits.size() > 1) {
    std::string names;
    for (auto q : fits) {
      names += fmt::format("{}'{}'", names.empty() ? "" : ", ", h.edge_types[q]);
    }
    COOPGNN_FAIL(
        "the reverse of edge type '{}' is ambiguous: {} all run the other way (the dataset "
        "declares a reverse by having exactly one)",
        h.edge_types[static_cast<std::size_t>(r)], names);
  }
  return fits.front();
}

std::int64_t hetero_schema::feature_dim(std::int64_t t) const {
  auto const i = static_cast<std::size_t>(t);
  if (features[i].rows() > 0 || features[i].cols() > 0) return features[i].cols();
  if (!features16.empty() && (features16[i].rows() > 0 || features16[i].cols() > 0)) {
    return features16[i].cols();
  }
  return feature_cols.empty() ? 0 : feature_cols[i];
}

std::int64_t hetero_schema::type_of(vid_t v) const {
  auto const it = std::upper_bound(node_offsets.begin(), node_offsets.end(), v);
  return (it - node_offsets.begin()) - 1;
}

std::array<std::string, 3> split_edge_type(std::string_view type, std::string_view what) {
  auto const a = type.find(':');
  auto const b = a == std::string_view::npos ? a : type.find(':', a + 1);
  if (a == std::string_view::npos || b == std::string_view::npos ||
      type.find(':', b + 1) != std::string_view::npos || a == 0 || b == a + 1 ||
      b + 1 == type.size()) {
    COOPGNN_IO_FAIL("{}: edge type '{}' must be 'src_type:relation:dst_type'", what, type);
  }
  return {std::string(type.substr(0, a)), std::string(type.substr(a + 1, b - a - 1)),
          std::string(type.substr(b + 1))};
}

namespace {

/// The hetero_schema invariants of `ds` (validate_dataset).
void validate_hetero(const dataset& ds, const std::string& what) {
  const hetero_schema& h = *ds.hetero;
  std::size_t const t = h.node_types.size();
  if (t == 0) COOPGNN_IO_FAIL("{}: a heterogeneous graph without node types", what);
  if (h.node_offsets.size() != t + 1 || h.node_offsets.front() != 0 ||
      h.node_offsets.back() != ds.num_nodes ||
      !std::is_sorted(h.node_offsets.begin(), h.node_offsets.end())) {
    COOPGNN_IO_FAIL("{}: node type offsets must be {} ascending values from 0 to |V| = {}", what,
                    t + 1, ds.num_nodes);
  }
  for (std::size_t i = 0; i < t; ++i) {
    if (h.node_types[i].empty() ||
        h.node_type_index(h.node_types[i]) != static_cast<std::int64_t>(i)) {
      COOPGNN_IO_FAIL("{}: node type {} ('{}') is empty or repeated", what, i, h.node_types[i]);
    }
  }
  std::vector<std::array<std::int64_t, 2>> ends;
  for (std::size_t r = 0; r < h.edge_types.size(); ++r) {
    auto const parts = split_edge_type(h.edge_types[r], what);
    std::int64_t const st = h.node_type_index(parts[0]);
    std::int64_t const dt = h.node_type_index(parts[2]);
    if (st < 0 || dt < 0 || h.edge_type_index(h.edge_types[r]) != static_cast<std::int64_t>(r)) {
      COOPGNN_IO_FAIL("{}: edge type '{}' names an unknown node type or is repeated", what,
                      h.edge_types[r]);
    }
    ends.push_back({st, dt});
  }
  if (h.edge_type.size() != ds.src.size()) {
    COOPGNN_IO_FAIL("{}: {} edge types for {} edges", what, h.edge_type.size(), ds.src.size());
  }
  for (std::size_t e = 0; e < ds.src.size(); ++e) {
    std::int32_t const r = h.edge_type[e];
    if (r < 0 || static_cast<std::size_t>(r) >= ends.size() ||
        h.type_of(ds.src[e]) != ends[static_cast<std::size_t>(r)][0] ||
        h.type_of(ds.dst[e]) != ends[static_cast<std::size_t>(r)][1]) {
      COOPGNN_IO_FAIL("{}: edge {} ({} -> {}) does not fit its edge type {}", what, e, ds.src[e],
                      ds.dst[e], r);
    }
  }
  if (h.features.size() != t || h.feature_names.size() != t) {
    COOPGNN_IO_FAIL("{}: {} typed feature matrices for {} node types", what, h.features.size(), t);
  }
  auto sized = [&](std::size_t n, const char* name) {
    if (n != 0 && n != t) COOPGNN_IO_FAIL("{}: {} {} for {} node types", what, n, name, t);
  };
  sized(h.features16.size(), "16-bit typed feature matrices");
  sized(h.feature_types.size(), "typed feature dtypes");
  sized(h.feature_files.size(), "typed feature files");
  sized(h.feature_cols.size(), "typed feature widths");
  for (std::size_t i = 0; i < t; ++i) {
    auto const ti = static_cast<std::int64_t>(i);
    std::int64_t const rows = h.features[i].rows() != 0 ? h.features[i].rows()
                              : h.features16.empty()    ? 0
                                                        : h.features16[i].rows();
    if (rows != 0 && rows != h.count(ti)) {
      COOPGNN_IO_FAIL("{}: node type '{}' has {} vertices but {} feature rows", what,
                      h.node_types[i], h.count(ti), rows);
    }
    bool const wide = h.feature_type(ti) == feature_dtype::float32;
    bool const has16 = !h.features16.empty() && h.features16[i].rows() > 0;
    if ((wide && has16) || (!wide && h.features[i].rows() > 0)) {
      COOPGNN_IO_FAIL("{}: node type '{}' holds {} features but its feature dtype is {}", what,
                      h.node_types[i], has16 ? "16-bit" : "float32", to_string(h.feature_type(ti)));
    }
  }
  if (ds.features.rows() != 0 || ds.features16.rows() != 0) {
    COOPGNN_IO_FAIL("{}: a heterogeneous dataset keeps its features per node type", what);
  }
  std::int64_t const target = h.target_type.empty() ? -1 : h.node_type_index(h.target_type);
  if (!h.target_type.empty() && target < 0) {
    COOPGNN_IO_FAIL("{}: target type '{}' is not a node type", what, h.target_type);
  }
  for (const std::vector<vid_t>* split : {&ds.train, &ds.valid, &ds.test}) {
    for (vid_t v : *split) {
      if (v >= 0 && v < ds.num_nodes && h.type_of(v) != target) {
        COOPGNN_IO_FAIL("{}: seed {} is not of the target type '{}'", what, v, h.target_type);
      }
    }
  }
  for (std::size_t v = 0; v < ds.labels.size(); ++v) {
    if (ds.labels[v] >= 0 && h.type_of(static_cast<vid_t>(v)) != target) {
      COOPGNN_IO_FAIL("{}: vertex {} is labelled but not of the target type '{}'", what, v,
                      h.target_type);
    }
  }
  if (ds.link) {
    const link_task& lt = *ds.link;
    if (lt.user_item()) {
      COOPGNN_IO_FAIL(
          "{}: link: a user-item range on a heterogeneous graph (users and items are "
          "node types there)",
          what);
    }
    for (auto [s, key] : {std::pair{&lt.train, "link.train"}, std::pair{&lt.valid, "link.valid"},
                          std::pair{&lt.test, "link.test"}}) {
      if (s->relation.size() != s->src.size()) {
        COOPGNN_IO_FAIL(
            "{}: {} has {} pairs but {} relations (every pair of a heterogeneous "
            "graph's task names its relation)",
            what, key, s->src.size(), s->relation.size());
      }
      for (std::size_t i = 0; i < s->relation.size(); ++i) {
        std::int32_t const r = s->relation[i];
        if (r < 0 || static_cast<std::size_t>(r) >= ends.size()) {
          COOPGNN_IO_FAIL("{}: {} pair {} has relation {} outside [0, {})", what, key, i, r,
                          ends.size());
        }
        vid_t const u = s->src[i];
        vid_t const v = s->dst[i];
        if (u < 0 || u >= ds.num_nodes || v < 0 || v >= ds.num_nodes ||
            h.type_of(u) != ends[static_cast<std::size_t>(r)][0] ||
            h.type_of(v) != ends[static_cast<std::size_t>(r)][1]) {
          COOPGNN_IO_FAIL("{}: {} pair {} ({} -> {}) does not fit its relation '{}'", what, key, i,
                          u, v, h.edge_types[static_cast<std::size_t>(r)]);
        }
      }
    }
  }
}

/// A file-name-safe form of a type name: [A-Za-z0-9_-] kept, ':' as "__", every other byte as
/// _XX (hex). Distinct type names can share a stem only through such escapes; write_hetero
/// refuses a repeated stem.
std::string file_stem(std::string_view type) {
  std::string out;
  for (unsigned char c : type) {
    if (c == ':') {
      out += "__";
    } else if (std::isalnum(c) != 0 || c == '_' || c == '-') {
      out += static_cast<char>(c);
    } else {
      out += fmt::format("_{:02x}", c);
    }
  }
  return out;
}

/// write_dataset for a heterogeneous dataset: GraphBolt's typed layout (local ids per type).
void write_hetero(const dataset& ds, const fs::path& dir) {
  const hetero_schema& h = *ds.hetero;
  dataset_metadata meta;
  meta.dataset_name = ds.name;
  for (std::size_t t = 0; t < h.node_types.size(); ++t) {
    meta.nodes.push_back(node_meta{h.node_types[t], h.count(static_cast<std::int64_t>(t))});
  }
  for (std::size_t r = 0; r < h.edge_types.size(); ++r) {
    auto const parts = split_edge_type(h.edge_types[r], ds.name);
    vid_t const so = h.node_offsets[static_cast<std::size_t>(h.node_type_index(parts[0]))];
    vid_t const d_off = h.node_offsets[static_cast<std::size_t>(h.node_type_index(parts[2]))];
    std::vector<std::int64_t> src;
    std::vector<std::int64_t> dst;
    for (std::size_t e = 0; e < ds.src.size(); ++e) {
      if (h.edge_type[e] != static_cast<std::int32_t>(r)) continue;
      src.push_back(ds.src[e] - so);
      dst.push_back(ds.dst[e] - d_off);
    }
    src.insert(src.end(), dst.begin(), dst.end());
    std::int64_t const shape[2] = {2, static_cast<std::int64_t>(dst.size())};
    std::string const rel = fmt::format("edges/{}.npy", file_stem(h.edge_types[r]));
    for (const edge_meta& other : meta.edges) {
      if (other.path == rel) {
        COOPGNN_FAIL("write_dataset: edge types '{}' and '{}' map to one file name {}", *other.type,
                     h.edge_types[r], rel);
      }
    }
    write_npy(dir / rel, std::span<const std::int64_t>(src), shape);
    meta.edges.push_back(edge_meta{h.edge_types[r], "numpy", rel});
  }
  for (std::size_t t = 0; t < h.node_types.size(); ++t) {
    auto const ti = static_cast<std::int64_t>(t);
    if (h.feature_dim(ti) == 0) continue;
    std::string const name = h.feature_names[t].empty() ? "feat" : h.feature_names[t];
    std::string const rel =
        fmt::format("data/{}_{}.npy", file_stem(h.node_types[t]), file_stem(name));
    std::int64_t const shape[2] = {h.count(ti), h.feature_dim(ti)};
    if (h.features_in_file(ti)) {
      // Not copied: a link to the file the features were left in.
      fs::create_directories((dir / rel).parent_path());
      fs::create_symlink(fs::absolute(h.feature_files[t]), dir / rel);
    } else if (h.feature_type(ti) == feature_dtype::float32) {
      write_npy(dir / rel, std::span<const float>(h.features[t].values()), shape);
    } else {
      COOPGNN_EXPECTS(h.feature_type(ti) == feature_dtype::float16,
                      "write_dataset: node type '{}' holds bfloat16 features, which .npy cannot "
                      "store",
                      h.node_types[t]);
      write_npy_bits16(dir / rel, std::span<const std::uint16_t>(h.features16[t].values()), shape);
    }
    meta.feature_data.push_back(feature_meta{"node", h.node_types[t], name, "numpy", true, rel});
  }
  if (!ds.labels.empty() && !h.target_type.empty()) {
    // Every label of the target type (-1 = unknown), also those outside the splits.
    auto const t = h.node_type_index(h.target_type);
    vid_t const off = h.node_offsets[static_cast<std::size_t>(t)];
    std::vector<std::int64_t> const lab(ds.labels.begin() + off,
                                        ds.labels.begin() + off + h.count(t));
    std::string const rel = fmt::format("data/{}_label.npy", file_stem(h.target_type));
    std::int64_t const shape[1] = {h.count(t)};
    write_npy(dir / rel, std::span<const std::int64_t>(lab), shape);
    meta.feature_data.push_back(feature_meta{"node", h.target_type, "label", "numpy", true, rel});
  }
  if (!ds.train.empty() || !ds.valid.empty() || !ds.test.empty()) {
    vid_t const off = h.node_offsets[static_cast<std::size_t>(h.node_type_index(h.target_type))];
    meta.tasks.push_back(write_node_task(
        dir, ds, h.target_type, off, ds.task_name.empty() ? "node_classification" : ds.task_name));
  }
  if (ds.link) {
    // One item set per relation, typed "src:relation:dst", local ids; pairs in stored order.
    const link_task& lt = *ds.link;
    task_meta task;
    task.name = lt.name.empty() ? "link_prediction" : lt.name;
    auto write_set = [&](const pair_set& s, const char* stem) {
      std::vector<item_set_meta> sets;
      for (std::size_t r = 0; r < h.edge_types.size(); ++r) {
        auto const parts = split_edge_type(h.edge_types[r], ds.name);
        vid_t const so = h.node_offsets[static_cast<std::size_t>(h.node_type_index(parts[0]))];
        vid_t const d_off = h.node_offsets[static_cast<std::size_t>(h.node_type_index(parts[2]))];
        std::vector<std::int64_t> pairs, labels, indexes;
        for (std::size_t i = 0; i < s.src.size(); ++i) {
          if (s.relation[i] != static_cast<std::int32_t>(r)) continue;
          pairs.push_back(s.src[i] - so);
          pairs.push_back(s.dst[i] - d_off);
          if (!s.labels.empty()) labels.push_back(s.labels[i]);
          if (!s.indexes.empty()) indexes.push_back(s.indexes[i]);
        }
        if (pairs.empty()) continue;
        item_set_meta set;
        set.type = h.edge_types[r];
        auto const m = static_cast<std::int64_t>(pairs.size() / 2);
        std::int64_t const pshape[2] = {m, 2};
        std::int64_t const shape[1] = {m};
        std::string const base = fmt::format("set/link_{}_{}", stem, file_stem(h.edge_types[r]));
        write_item(dir, set, "seeds", base + "_seeds.npy", pairs, pshape);
        if (!labels.empty()) write_item(dir, set, "labels", base + "_labels.npy", labels, shape);
        if (!indexes.empty()) {
          write_item(dir, set, "indexes", base + "_indexes.npy", indexes, shape);
        }
        sets.push_back(std::move(set));
      }
      return sets;
    };
    task.train_set = write_set(lt.train, "train");
    task.validation_set = write_set(lt.valid, "valid");
    task.test_set = write_set(lt.test, "test");
    if (ds.link_first) {
      meta.tasks.insert(meta.tasks.begin(), std::move(task));
    } else {
      meta.tasks.push_back(std::move(task));
    }
  }
  write_metadata(meta, dir / kMetadataFile);
}

}  // namespace

std::int64_t classes_from_max_label(std::int64_t max_label, std::string_view what) {
  constexpr std::int64_t kMaxClassId = kMaxNumClasses - 1;
  if (max_label > kMaxClassId) {
    COOPGNN_IO_FAIL(
        "{}: class id {} is too large (at most {}): the number of classes, max + 1, sizes "
        "per-class arrays and the model's output layer",
        what, max_label, kMaxClassId);
  }
  return max_label < 0 ? 0 : max_label + 1;
}

void check_declared_nodes(std::string_view file, std::string_view key, std::int64_t num_nodes) {
  check_declared_bytes(
      file, key, static_cast<std::uint64_t>(std::max<std::int64_t>(num_nodes, 0)),
      saturating_bytes(num_nodes, kBytesPerNode),
      fmt::format("{} bytes per node: an int64 label and an int64 CSC offset each", kBytesPerNode));
}

void validate_dataset(const dataset& ds, const std::string& what) {
  vid_t const n = ds.num_nodes;
  if (n <= 0) {
    COOPGNN_IO_FAIL("{}: empty graph: {} nodes (a dataset needs at least one node)", what, n);
  }
  if (ds.src.size() != ds.dst.size()) {
    COOPGNN_IO_FAIL("{}: {} edge sources but {} edge destinations", what, ds.src.size(),
                    ds.dst.size());
  }
  check_ids(ds.src, n, what, "edge source");
  check_ids(ds.dst, n, what, "edge destination");
  if (ds.features.size() > 0 || ds.features.rows() > 0) {
    if (ds.features.rows() != n) {
      COOPGNN_IO_FAIL("{}: features have {} rows but the graph has {} nodes", what,
                      ds.features.rows(), n);
    }
  }
  if (ds.features16.size() > 0 || ds.features16.rows() > 0) {
    if (ds.features16.rows() != n) {
      COOPGNN_IO_FAIL("{}: features have {} rows but the graph has {} nodes", what,
                      ds.features16.rows(), n);
    }
    if (!ds.features_are_16bit() || ds.features.size() > 0) {
      COOPGNN_IO_FAIL(
          "{}: 16-bit features (features16) need feature_type float16 or bfloat16 "
          "and no float32 features",
          what);
    }
  }
  if (!ds.labels.empty()) {
    if (static_cast<vid_t>(ds.labels.size()) != n) {
      COOPGNN_IO_FAIL("{}: {} labels but the graph has {} nodes", what, ds.labels.size(), n);
    }
    if (ds.num_classes <= 0) {
      COOPGNN_IO_FAIL("{}: labels are present but num_classes is {}", what, ds.num_classes);
    }
    for (std::size_t v = 0; v < ds.labels.size(); ++v) {
      if (ds.labels[v] < -1 || ds.labels[v] >= ds.num_classes) {
        COOPGNN_IO_FAIL("{}: label of vertex {} = {} is out of range [0, {}) (-1 = unknown)", what,
                        v, ds.labels[v], ds.num_classes);
      }
    }
  }
  if (ds.num_classes < 0) COOPGNN_IO_FAIL("{}: negative num_classes {}", what, ds.num_classes);
  if (ds.hetero) validate_hetero(ds, what);
  if (ds.link) {
    const link_task& lt = *ds.link;
    for (auto [s, key] : {std::pair{&lt.train, "link.train"}, std::pair{&lt.valid, "link.valid"},
                          std::pair{&lt.test, "link.test"}}) {
      check_pair_set(*s, n,
                     pair_names{fmt::format("{}: {} seeds", what, key),
                                fmt::format("{}: {} labels", what, key),
                                fmt::format("{}: {} indexes", what, key)});
    }
    if (!lt.train.labels.empty() || !lt.train.indexes.empty()) {
      COOPGNN_IO_FAIL(
          "{}: link.train holds training positives only: its labels and indexes must be empty",
          what);
    }
    if (!ds.hetero) {
      for (const pair_set* s : {&lt.train, &lt.valid, &lt.test}) {
        if (!s->relation.empty()) {
          COOPGNN_IO_FAIL("{}: link pairs carry relations but the graph is untyped", what);
        }
      }
    }
    check_item_range(lt.item_begin, lt.item_end, n, fmt::format("{}: link", what));
  }
  // Splits: ids in range, no vertex twice (within or across splits), labelled when labels exist.
  std::vector<std::uint8_t> seen(static_cast<std::size_t>(n), 0);
  const std::vector<vid_t>* splits[3] = {&ds.train, &ds.valid, &ds.test};
  const char* names[3] = {"train", "validation", "test"};
  for (int k = 0; k < 3; ++k) {
    const std::vector<vid_t>& s = *splits[k];
    for (std::size_t i = 0; i < s.size(); ++i) {
      vid_t const v = s[i];
      if (v < 0 || v >= n) {
        COOPGNN_IO_FAIL("{}: {} seed index {} = {} is out of range [0, {})", what, names[k], i, v,
                        n);
      }
      auto& mark = seen[static_cast<std::size_t>(v)];
      if (mark != 0) {
        COOPGNN_IO_FAIL("{}: vertex {} appears twice in the splits ({} index {}, already in {})",
                        what, v, names[k], i, names[mark - 1]);
      }
      mark = static_cast<std::uint8_t>(k + 1);
      if (!ds.labels.empty() && ds.labels[static_cast<std::size_t>(v)] < 0) {
        COOPGNN_IO_FAIL("{}: {} vertex {} has no label (-1)", what, names[k], v);
      }
    }
  }
}

}  // namespace coopgnn
