// read_dataset / write_dataset / validate_dataset (runtime/graph/dataset.hpp) for homogeneous
// graphs in DGL GraphBolt's OnDiskDataset layout (metadata.hpp).
#include <algorithm>
#include <charconv>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "runtime/core/error.hpp"
#include "runtime/graph/dataset.hpp"
#include "runtime/graph/metadata.hpp"
#include "runtime/graph/npy.hpp"

namespace coopgnn {

namespace {

namespace fs = std::filesystem;

constexpr const char* kMetadataFile = "metadata.yaml";

/// `rel` resolved against the dataset directory; must exist as a regular file.
fs::path data_file(const fs::path& dir, const std::string& rel, const std::string& key) {
  fs::path const p = dir / rel;
  std::error_code ec;
  if (!fs::is_regular_file(p, ec)) {
    COOPGNN_IO_FAIL("{}: missing file (referenced by {} '{}' in {})", p.string(), key, rel,
                    (dir / kMetadataFile).string());
  }
  return p;
}

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

struct label_merge {
  std::vector<std::int64_t>& labels;
  vid_t n;
  std::optional<std::int64_t> num_classes;
};

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
  const item_set_meta& s = sets[0];
  std::optional<std::string> seeds_file;
  std::optional<std::string> labels_file;
  for (std::size_t j = 0; j < s.data.size(); ++j) {
    const item_data_meta& d = s.data[j];
    std::string const dkey = fmt::format("{}[0].data[{}].path", key, j);
    fs::path const p = data_file(dir, d.path, dkey);
    std::string const nm = d.name.value_or("seeds");
    if (nm == "seeds" || nm == "seed_nodes") {
      seeds_file = p.string();
      auto a = read_npy<std::int64_t>(p);
      if (a.rank() == 2 && a.shape[1] == 2) {
        COOPGNN_IO_FAIL(
            "{}: seeds are node pairs (shape {}): link prediction tasks are not "
            "supported yet",
            p.string(), format_npy_shape(a.shape));
      }
      seeds = as_column(std::move(a), p.string(), "seeds");
      check_ids(seeds, lm.n, p.string(), "seed");
    } else if (nm == "labels") {
      labels_file = p.string();
    } else {
      (void)read_npy_header(p);  // other item data (indexes, ...): check it is a readable .npy
    }
  }
  if (!seeds_file) {
    COOPGNN_IO_FAIL("{}: {} has no 'seeds' data: only node-classification tasks are supported",
                    (dir / kMetadataFile).string(), key);
  }
  if (labels_file) {
    std::vector<std::int64_t> const lab =
        as_column(read_npy<std::int64_t>(*labels_file), *labels_file, "labels");
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

bool type_matches(const std::optional<std::string>& t,
                  const std::optional<std::string>& node_type) {
  return !t || !node_type || *t == *node_type;
}

}  // namespace

dataset read_dataset(const fs::path& dir, const dataset_read_options& opt) {
  fs::path const meta_path = dir / kMetadataFile;
  std::string const meta_name = meta_path.string();
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) COOPGNN_IO_FAIL("{}: not a directory", dir.string());
  if (!fs::is_regular_file(meta_path, ec)) {
    COOPGNN_IO_FAIL(
        "{}: missing file: a dataset directory needs a metadata.yaml "
        "(DGL GraphBolt OnDiskDataset layout)",
        meta_name);
  }
  dataset_metadata const meta = read_metadata(meta_path);
  if (meta.nodes.empty()) COOPGNN_IO_FAIL("{}: graph.nodes is empty", meta_name);
  if (meta.edges.empty()) COOPGNN_IO_FAIL("{}: graph.edges is empty", meta_name);
  if (meta.nodes.size() > 1 || meta.edges.size() > 1) {
    COOPGNN_IO_FAIL(
        "{}: {} node types and {} edge types: heterogeneous graphs are not supported "
        "yet",
        meta_name, meta.nodes.size(), meta.edges.size());
  }
  const node_meta& nm = meta.nodes[0];
  if (nm.num == 0) {
    COOPGNN_IO_FAIL("{}: empty graph: graph.nodes[0].num is 0 (a dataset needs at least one node)",
                    meta_name);
  }
  dataset ds;
  ds.name = meta.dataset_name;
  ds.num_nodes = nm.num;
  vid_t const n = nm.num;

  // ---- edges
  const edge_meta& em = meta.edges[0];
  fs::path const epath = data_file(dir, em.path, "graph.edges[0].path");
  if (em.format == "numpy") {
    auto a = read_npy<std::int64_t>(epath);
    if (a.rank() != 2 || a.shape[0] != 2) {
      COOPGNN_IO_FAIL(
          "{}: edges must have shape (2, E) (row 0 sources, row 1 destinations), "
          "found {}",
          epath.string(), format_npy_shape(a.shape));
    }
    auto const e = static_cast<std::size_t>(a.shape[1]);
    ds.src.assign(a.data.begin(), a.data.begin() + static_cast<std::ptrdiff_t>(e));
    ds.dst.assign(a.data.begin() + static_cast<std::ptrdiff_t>(e), a.data.end());
  } else {
    read_csv_edges(epath, ds.src, ds.dst);
  }
  check_ids(ds.src, n, epath.string(), "edge source");
  check_ids(ds.dst, n, epath.string(), "edge destination");

  // ---- features
  std::optional<std::size_t> feat_idx;
  std::optional<std::size_t> label_idx;
  for (std::size_t i = 0; i < meta.feature_data.size(); ++i) {
    const feature_meta& f = meta.feature_data[i];
    std::string const key = fmt::format("feature_data[{}].path", i);
    fs::path const p = data_file(dir, f.path, key);
    npy_header const h = read_npy_header(p);
    std::int64_t const rows = h.shape.empty() ? 1 : h.shape[0];
    std::int64_t const want = f.domain == "node" ? n : ds.num_edges();
    if (rows != want) {
      COOPGNN_IO_FAIL("{}: {} feature '{}' has {} rows (shape {}) but the graph has {} {}s",
                      p.string(), f.domain, f.name, rows, format_npy_shape(h.shape), want,
                      f.domain);
    }
    if (f.domain != "node" || !type_matches(f.type, nm.type)) continue;
    if (f.name == "feat") feat_idx = i;
    if (f.name == "label") label_idx = i;
  }
  if (!feat_idx) {
    for (std::size_t i = 0; i < meta.feature_data.size(); ++i) {
      const feature_meta& f = meta.feature_data[i];
      if (f.domain != "node" || f.name == "label" || !type_matches(f.type, nm.type)) continue;
      if (read_npy_header(dir / f.path).shape.size() == 2) {
        feat_idx = i;
        break;
      }
    }
  }
  if (feat_idx && !opt.load_features) {
    // Only the header: the rows stay in the file (memory-mapped later, cache/storage.hpp).
    fs::path const p = dir / meta.feature_data[*feat_idx].path;
    npy_header const h = read_npy_header(p);
    if (h.shape.empty() || h.shape.size() > 2) {
      COOPGNN_IO_FAIL("{}: node features must be 1-D or 2-D, found shape {}", p.string(),
                      format_npy_shape(h.shape));
    }
    ds.feature_file = p;
    ds.feature_cols = h.shape.size() == 2 ? h.shape[1] : 1;
  } else if (feat_idx) {
    fs::path const p = dir / meta.feature_data[*feat_idx].path;
    auto a = read_npy<float>(p);
    if (a.rank() > 2) {
      COOPGNN_IO_FAIL("{}: node features must be 1-D or 2-D, found shape {}", p.string(),
                      format_npy_shape(a.shape));
    }
    std::int64_t const cols = a.rank() == 2 ? a.shape[1] : 1;
    ds.features = matrix<float>(n, cols, std::move(a.data));
    ds.feature_file = p;
    ds.feature_cols = cols;
  }

  // ---- labels and splits
  std::optional<std::int64_t> num_classes;
  if (!meta.tasks.empty()) num_classes = meta.tasks[0].num_classes;
  if (label_idx) {
    fs::path const p = dir / meta.feature_data[*label_idx].path;
    ds.labels = as_column(read_npy<std::int64_t>(p), p.string(), "the 'label' node feature");
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
  if (!meta.tasks.empty()) {
    const task_meta& t = meta.tasks[0];
    label_merge lm{ds.labels, n, num_classes};
    ds.train = read_item_set(dir, t.train_set, "tasks[0].train_set", lm);
    ds.valid = read_item_set(dir, t.validation_set, "tasks[0].validation_set", lm);
    ds.test = read_item_set(dir, t.test_set, "tasks[0].test_set", lm);
  }
  if (num_classes) {
    ds.num_classes = *num_classes;
  } else if (!ds.labels.empty()) {
    std::int64_t mx = -1;
    for (std::int64_t l : ds.labels) mx = std::max(mx, l);
    ds.num_classes = mx + 1;
  }
  if (ds.num_classes > 0 && ds.labels.empty() && !meta.tasks.empty() &&
      (!ds.train.empty() || !ds.valid.empty() || !ds.test.empty())) {
    COOPGNN_IO_FAIL(
        "{}: tasks[0] declares {} classes but no labels were found (neither 'labels' "
        "item data nor a node feature named 'label')",
        meta_name, ds.num_classes);
  }
  validate_dataset(ds, dir.string());
  return ds;
}

void write_dataset(const dataset& ds, const fs::path& dir) {
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
  dataset_metadata meta;
  meta.dataset_name = ds.name;
  meta.nodes.push_back(node_meta{std::nullopt, ds.num_nodes});

  // Edges as int64 [2, E].
  {
    std::vector<std::int64_t> e;
    e.reserve(ds.src.size() * 2);
    e.insert(e.end(), ds.src.begin(), ds.src.end());
    e.insert(e.end(), ds.dst.begin(), ds.dst.end());
    std::int64_t const shape[2] = {2, ds.num_edges()};
    write_npy(dir / "edges" / "edges.npy", std::span<const std::int64_t>(e), shape);
    meta.edges.push_back(edge_meta{std::nullopt, "numpy", "edges/edges.npy"});
  }
  if (ds.feature_dim() > 0) {
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
    task_meta task;
    task.name = "node_classification";
    if (ds.num_classes > 0) task.num_classes = ds.num_classes;
    auto write_set = [&](const std::vector<vid_t>& seeds, const char* stem) {
      std::vector<item_set_meta> sets;
      if (seeds.empty()) return sets;
      item_set_meta s;
      std::int64_t const shape[1] = {static_cast<std::int64_t>(seeds.size())};
      std::string const seeds_rel = fmt::format("set/{}_seeds.npy", stem);
      write_npy(dir / seeds_rel, std::span<const std::int64_t>(seeds), shape);
      s.data.push_back(item_data_meta{"seeds", "numpy", true, seeds_rel});
      if (!ds.labels.empty()) {
        std::vector<std::int64_t> lab(seeds.size());
        for (std::size_t i = 0; i < seeds.size(); ++i) {
          lab[i] = ds.labels[static_cast<std::size_t>(seeds[i])];
        }
        std::string const labels_rel = fmt::format("set/{}_labels.npy", stem);
        write_npy(dir / labels_rel, std::span<const std::int64_t>(lab), shape);
        s.data.push_back(item_data_meta{"labels", "numpy", true, labels_rel});
      }
      sets.push_back(std::move(s));
      return sets;
    };
    task.train_set = write_set(ds.train, "train");
    task.validation_set = write_set(ds.valid, "valid");
    task.test_set = write_set(ds.test, "test");
    meta.tasks.push_back(std::move(task));
  }
  // metadata.yaml last: a directory whose metadata.yaml exists is complete.
  write_metadata(meta, dir / kMetadataFile);
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
