// OGB's binary node-property layout (raw/data.npz, raw/node-label.npz: ogb/io/read_graph_raw.py
// read_binary_graph_raw and ogb/nodeproppred/dataset.py), read by convert_ogb
// (formats/formats.hpp), and the class-label and 16-bit helpers the MAG240M reader shares.
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "formats/detail/common.hpp"
#include "runtime/core/half.hpp"

namespace coopgnn {

namespace formats::detail {

std::vector<std::int64_t> class_labels(const npy_array<double>& a, const std::string& what,
                                       std::int64_t n) {
  if (a.shape.empty() || a.shape.size() > 2 || a.shape[0] != n ||
      (a.shape.size() == 2 && a.shape[1] != 1)) {
    COOPGNN_IO_FAIL("{}: shape ({}) but expected [{}] or [{}, 1] (one class per node)", what,
                    fmt::join(a.shape, ", "), n, n);
  }
  std::vector<std::int64_t> labels(static_cast<std::size_t>(n));
  for (std::size_t i = 0; i < labels.size(); ++i) {
    double const v = a.data[i];
    if (std::isnan(v) || v == -1.0) {
      labels[i] = -1;
      continue;
    }
    // 2^31 bounds the class ids (classes_from_max_label refuses larger ones).
    if (v != std::floor(v) || v < 0 || v >= 2147483648.0) {
      COOPGNN_IO_FAIL("{}: row {}: label {} is not a class id (a non-negative integer; NaN or -1 "
                      "= unlabelled)",
                      what, i, v);
    }
    labels[i] = static_cast<std::int64_t>(v);
  }
  return labels;
}

std::int64_t max_label_of(const std::vector<std::int64_t>& labels) {
  std::int64_t mx = -1;
  for (std::int64_t l : labels) mx = std::max(mx, l);
  return mx;
}

matrix<std::uint16_t> float16_rows(std::span<const std::byte> image, const npy_header& h,
                                   const std::string& what) {
  if (h.dtype != npy_dtype::float16 || h.shape.size() != 2 || h.fortran_order) {
    COOPGNN_IO_FAIL("{}: expected a C-order 2-D float16 array", what);
  }
  if (image.size() < h.data_offset + h.data_bytes()) {
    COOPGNN_IO_FAIL("{}: truncated: {} bytes of elements, shape [{}, {}] needs {}", what,
                    image.size() - std::min(image.size(), h.data_offset), h.shape[0], h.shape[1],
                    h.data_bytes());
  }
  std::vector<std::uint16_t> bits(static_cast<std::size_t>(h.num_elements()));
  std::memcpy(bits.data(), image.data() + h.data_offset, bits.size() * sizeof(std::uint16_t));
  return matrix<std::uint16_t>(h.shape[0], h.shape[1], std::move(bits));
}

namespace {

/// The one value of a [1] count member ("num_nodes_list", "num_edges_list").
std::int64_t single_count(const npz_archive& z, std::string_view member) {
  npy_array<std::int64_t> const a = z.read<std::int64_t>(member);
  std::string const what = fmt::format("{}:{}", z.path().string(), member);
  if (a.data.size() != 1) {
    COOPGNN_IO_FAIL("{}: {} values: only single-graph node-property datasets are supported", what,
                    a.data.size());
  }
  if (a.data[0] < 0) COOPGNN_IO_FAIL("{}: count {} is negative", what, a.data[0]);
  return a.data[0];
}

}  // namespace

dataset convert_ogb_binary(const fs::path& dir, const convert_options& opt,
                           convert_report* report) {
  convert_report local;
  convert_report& rep = report != nullptr ? *report : local;
  dataset ds;
  ds.name = opt.name.empty() ? default_name(dir) : opt.name;
  fs::path const data_file = dir / "raw" / "data.npz";
  std::string const data_name = data_file.string();
  read_file(rep, data_file);
  npz_archive const z(data_file);
  for (const char* m : {"edge_index", "num_nodes_list"}) {
    if (!z.contains(m)) {
      COOPGNN_IO_FAIL("{}: no member '{}' (OGB's binary layout has edge_index, num_nodes_list, "
                      "num_edges_list, node_feat; members are: {})",
                      data_name, m, fmt::join(z.members(), ", "));
    }
  }

  // |V|
  std::int64_t const n = single_count(z, "num_nodes_list");
  if (n <= 0) COOPGNN_IO_FAIL("{}:num_nodes_list: node count {} must be positive", data_name, n);
  check_declared_nodes(data_name + ":num_nodes_list", "node count", n);
  ds.num_nodes = n;

  // Edges: [2, E], row 0 sources, row 1 destinations.
  {
    // A chunk at a time straight into src / dst: the member (papers100M's is 26 GB) is never
    // held, stored or deflated.
    npz_two_row_reader reader(z, "edge_index");
    std::int64_t const e = reader.columns();
    ds.src.resize(static_cast<std::size_t>(e));
    ds.dst.resize(static_cast<std::size_t>(e));
    for (std::int64_t first = 0; first < e; first += edge_chunk_edges) {
      auto const k = static_cast<std::size_t>(std::min(edge_chunk_edges, e - first));
      reader.read(first, std::span<std::int64_t>(ds.src.data() + first, k),
                  std::span<std::int64_t>(ds.dst.data() + first, k));
    }
    for (std::int64_t i = 0; i < e; ++i) {
      vid_t const s = ds.src[static_cast<std::size_t>(i)];
      vid_t const d = ds.dst[static_cast<std::size_t>(i)];
      if (s < 0 || d < 0 || s >= n || d >= n) {
        COOPGNN_IO_FAIL("{}:edge_index: edge {} ({} -> {}) has an id out of range: |V| = {} "
                        "(num_nodes_list)",
                        data_name, i, s, d, n);
      }
    }
    if (z.contains("num_edges_list")) {
      std::int64_t const m = single_count(z, "num_edges_list");
      if (m != e) {
        COOPGNN_IO_FAIL("{}:num_edges_list: says {} edges but edge_index has {}", data_name, m, e);
      }
    }
  }

  // Features: float16 kept at 2 bytes, anything else read as float32.
  if (z.contains("node_feat")) {
    std::string const what = data_name + ":node_feat";
    npy_header const h = z.header("node_feat");
    if (h.shape.size() != 2 || h.shape[0] != n) {
      COOPGNN_IO_FAIL("{}: shape ({}) but expected [{}, F] (num_nodes_list)", what,
                      fmt::join(h.shape, ", "), n);
    }
    if (h.dtype == npy_dtype::float16) {
      std::vector<std::byte> const image = z.read_bytes("node_feat");
      ds.features16 = float16_rows(image, h, what);
      ds.feature_type = feature_dtype::float16;
    } else {
      npy_array<float> x = z.read<float>("node_feat");
      ds.features = matrix<float>(h.shape[0], h.shape[1], std::move(x.data));
    }
  }
  for (const std::string& m : z.members()) {
    if (m != "edge_index" && m != "node_feat" && m != "num_nodes_list" && m != "num_edges_list") {
      note(rep, fmt::format("{}:{}: not read ({})", data_name, m,
                            m.starts_with("edge_") ? "edge features" : "extra node or graph data"));
    }
  }

  // Labels
  fs::path const label_file = dir / "raw" / "node-label.npz";
  std::error_code ec;
  if (fs::is_regular_file(label_file, ec)) {
    read_file(rep, label_file);
    npz_archive const lz(label_file);
    std::string const what = label_file.string() + ":node_label";
    if (!lz.contains("node_label")) {
      COOPGNN_IO_FAIL("{}: no member 'node_label' (members are: {})", label_file.string(),
                      fmt::join(lz.members(), ", "));
    }
    ds.labels = class_labels(lz.read<double>("node_label"), what, n);
    ds.num_classes = classes_from_max_label(max_label_of(ds.labels), what);
  }

  read_ogb_split(dir, opt, rep, ds);
  finish_edges(ds, opt, rep, data_name + ":edge_index", stored_once_policy::symmetrize);
  validate_dataset(ds, dir.string());
  return ds;
}

}  // namespace formats::detail

}  // namespace coopgnn
