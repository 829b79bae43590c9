// NumPy .npz archives (formats/formats.hpp convert_npz) and their registry entry.
#include <fmt/ranges.h>

#include <algorithm>
#include <initializer_list>
#include <optional>

#include "formats/detail/common.hpp"

namespace coopgnn {

using namespace formats::detail;  // NOLINT(google-build-using-namespace): the readers' helpers

dataset convert_npz(const fs::path& file, const convert_options& opt, convert_report* report) {
  check_options(opt);
  convert_report local;
  convert_report& rep = report != nullptr ? *report : local;
  read_file(rep, file);
  npz_archive const z(file);
  auto pick = [&](std::initializer_list<const char*> names) -> std::optional<std::string> {
    for (const char* nm : names) {
      if (z.contains(nm)) return std::string(nm);
    }
    return std::nullopt;
  };
  auto what = [&](const std::string& m) { return fmt::format("{}:{}", file.string(), m); };
  dataset ds;
  ds.name = opt.name.empty() ? default_name(file) : opt.name;

  // Edges: an edge array, a sparse adjacency adj_*, or a whole-archive SciPy matrix.
  auto e_name = pick({"edges", "edge_index"});
  std::optional<sparse_group> adj;
  if (!e_name) {
    if (has_sparse(z, {"adj"})) {
      adj = sparse_group{"adj"};
    } else if (has_sparse(z, {})) {
      adj = sparse_group{};
    }
  }
  vid_t adj_rows = -1;
  if (adj) {
    sparse_arrays const a = read_sparse(z, *adj);
    e_name = adj->label();
    if (a.rows != a.cols) {
      COOPGNN_IO_FAIL(
          "{}: a {} x {} sparse matrix is not an adjacency (it must be square){}", a.what, a.rows,
          a.cols,
          adj->prefix.empty()
              ? "; a SciPy feature matrix (scipy.sparse.save_npz) goes with --features FILE"
              : "");
    }
    if (adj->prefix.empty()) {
      note(rep, fmt::format("{}: one SciPy sparse {} x {} matrix: read as the adjacency (stored "
                            "entry (i, j) = edge i -> j)",
                            file.string(), a.rows, a.cols));
    }
    std::int64_t const major = a.csc ? a.cols : a.rows;
    for (std::int64_t k = 0; k < major; ++k) {
      for (std::int64_t p = a.indptr[k]; p < a.indptr[k + 1]; ++p) {
        if (a.data[p] == 0.0f) continue;  // an explicit zero is no edge
        ds.src.push_back(a.csc ? a.indices[p] : k);
        ds.dst.push_back(a.csc ? k : a.indices[p]);
      }
    }
    adj_rows = a.rows;
  } else if (!e_name) {
    COOPGNN_IO_FAIL(
        "{}: no edge array: expected a member 'edges' [E, 2] or 'edge_index' [2, E], or a SciPy "
        "sparse adjacency adj_data/adj_indices/adj_indptr/adj_shape (members: {})",
        file.string(), fmt::join(z.members(), ", "));
  } else {
    auto a = z.read<std::int64_t>(*e_name);
    if (a.rank() != 2 || (a.shape[0] != 2 && a.shape[1] != 2)) {
      COOPGNN_IO_FAIL("{}: edges must have shape (E, 2) or (2, E), found {}", what(*e_name),
                      format_npy_shape(a.shape));
    }
    bool const rows_are_pairs =
        (*e_name == "edges" && a.shape[1] == 2) || (*e_name == "edge_index" && a.shape[0] != 2);
    std::int64_t const m = rows_are_pairs ? a.shape[0] : a.shape[1];
    ds.src.resize(static_cast<std::size_t>(m));
    ds.dst.resize(static_cast<std::size_t>(m));
    for (std::int64_t i = 0; i < m; ++i) {
      ds.src[i] = rows_are_pairs ? a.data[2 * i] : a.data[i];
      ds.dst[i] = rows_are_pairs ? a.data[2 * i + 1] : a.data[m + i];
      if (ds.src[i] < 0 || ds.dst[i] < 0) {
        COOPGNN_IO_FAIL("{}: edge {} ({} -> {}) has a negative vertex id", what(*e_name), i,
                        ds.src[i], ds.dst[i]);
      }
    }
  }
  vid_t max_id = -1;
  for (std::size_t i = 0; i < ds.src.size(); ++i) max_id = std::max({max_id, ds.src[i], ds.dst[i]});

  // Features (dense, or a sparse group densified) and labels
  std::optional<std::string> f_name = pick({"node_features", "x", "features", "feat"});
  std::optional<std::string> const l_name = pick({"node_labels", "y", "labels", "label"});
  if (f_name) {
    auto a = z.read<float>(*f_name);
    if (a.rank() != 2) {
      COOPGNN_IO_FAIL("{}: features must be 2-D (N, F), found {}", what(*f_name),
                      format_npy_shape(a.shape));
    }
    ds.features = matrix<float>(a.shape[0], a.shape[1], std::move(a.data));
    ds.num_nodes = a.shape[0];
  } else {
    for (const char* prefix : {"attr", "features", "feat", "x", "node_features"}) {
      sparse_group const g{prefix};
      if (!has_sparse(z, g)) continue;
      ds.features = densify(read_sparse(z, g), opt, rep);
      ds.num_nodes = ds.features.rows();
      f_name = g.label();
      break;
    }
  }
  if (l_name) {
    auto a = z.read<std::int64_t>(*l_name);
    if (a.rank() != 1) {
      COOPGNN_IO_FAIL("{}: labels must be 1-D (N,), found {}", what(*l_name),
                      format_npy_shape(a.shape));
    }
    if (f_name && a.shape[0] != ds.num_nodes) {
      COOPGNN_IO_FAIL("{}: {} labels but {} has {} feature rows", what(*l_name), a.shape[0],
                      what(*f_name), ds.num_nodes);
    }
    ds.num_nodes = a.shape[0];
    ds.labels = std::move(a.data);
    std::int64_t mx = -1;
    for (std::size_t v = 0; v < ds.labels.size(); ++v) {
      if (ds.labels[v] < -1) {
        COOPGNN_IO_FAIL("{}: label index {} = {} is negative", what(*l_name), v, ds.labels[v]);
      }
      mx = std::max(mx, ds.labels[v]);
    }
    ds.num_classes = classes_from_max_label(mx, what(*l_name));
  }
  if (!f_name && !l_name) {
    if (adj_rows < 0)
      check_declared_nodes(what(*e_name), "|V| (1 + the largest vertex id)", plus_one(max_id));
    ds.num_nodes = adj_rows >= 0 ? adj_rows : max_id + 1;
  }
  if (adj_rows >= 0 && adj_rows != ds.num_nodes) {
    COOPGNN_IO_FAIL("{}: {} x {} adjacency but {} has {} rows", what(*e_name), adj_rows, adj_rows,
                    f_name ? what(*f_name) : what(*l_name), ds.num_nodes);
  }
  if (max_id >= ds.num_nodes) {
    COOPGNN_IO_FAIL("{}: vertex id {} is out of range: |V| = {} ({} rows)", what(*e_name), max_id,
                    ds.num_nodes, f_name ? what(*f_name) : what(*l_name));
  }
  vid_t const n = ds.num_nodes;

  // Masks
  auto read_mask = [&](std::initializer_list<const char*> names, std::vector<vid_t>& out) {
    auto const m = pick(names);
    if (!m) return false;
    auto a = z.read<std::uint8_t>(*m);
    std::int64_t const k = opt.split_index;
    std::vector<std::uint8_t> mask;
    if (a.rank() == 1) {
      if (a.shape[0] != n) {
        COOPGNN_IO_FAIL("{}: mask has {} entries but there are {} nodes", what(*m), a.shape[0], n);
      }
      mask = std::move(a.data);
    } else if (a.rank() == 2 && a.shape[1] == n) {  // [K, N]
      if (k < 0 || k >= a.shape[0]) {
        COOPGNN_IO_FAIL("{}: --split-index {} is out of range: the archive has {} splits", what(*m),
                        k, a.shape[0]);
      }
      mask.assign(a.data.begin() + k * n, a.data.begin() + (k + 1) * n);
    } else if (a.rank() == 2 && a.shape[0] == n) {  // [N, K]
      if (k < 0 || k >= a.shape[1]) {
        COOPGNN_IO_FAIL("{}: --split-index {} is out of range: the archive has {} splits", what(*m),
                        k, a.shape[1]);
      }
      mask.resize(static_cast<std::size_t>(n));
      for (vid_t v = 0; v < n; ++v) mask[v] = a.data[v * a.shape[1] + k];
    } else {
      COOPGNN_IO_FAIL("{}: mask must have shape (N,), (K, N) or (N, K) with N = {}, found {}",
                      what(*m), n, format_npy_shape(a.shape));
    }
    for (vid_t v = 0; v < n; ++v) {
      if (mask[v] != 0) out.push_back(v);
    }
    return true;
  };
  bool const any = read_mask({"train_masks", "train_mask"}, ds.train) |
                   read_mask({"val_masks", "val_mask", "valid_mask"}, ds.valid) |
                   read_mask({"test_masks", "test_mask"}, ds.test);
  if (any) rep.split = fmt::format("split index {}", opt.split_index);

  finish_edges(ds, opt, rep, what(*e_name), stored_once_policy::suggest);
  validate_dataset(ds, file.string());
  return ds;
}


namespace formats::detail {

namespace {

bool detect_npz(const fs::path& input) {
  std::error_code ec;
  return fs::is_regular_file(input, ec) && input.extension() == ".npz";
}

constexpr std::string_view kNpzOptions[] = {"--split-index", "--features"};

}  // namespace

const input_format& npz_format() {
  static const input_format f{
      "npz",
      "a NumPy .npz archive (edges or a SciPy adjacency, features, labels, masks)",
      "a NumPy .npz archive (edges/edge_index or a SciPy adj_* matrix, node_features/x or\n"
      "a SciPy sparse attr_* matrix (densified), node_labels/y/labels,\n"
      "train_mask(s)/val_mask(s)/test_mask(s)); kept as stored, as snap.",
      false,
      kNpzOptions,
      detect_npz,
      convert_npz};
  return f;
}

}  // namespace formats::detail

}  // namespace coopgnn
