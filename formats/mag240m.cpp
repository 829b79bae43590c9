// OGB-LSC's MAG240M directory (formats/formats.hpp convert_mag240m; the layout ogb/lsc/mag240m.py
// reads) and its registry entry.
#include <fmt/ranges.h>

#include <algorithm>
#include <utility>

#include "formats/detail/common.hpp"
#include "runtime/core/half.hpp"

namespace coopgnn {

using namespace formats::detail;  // NOLINT(google-build-using-namespace): the readers' helpers

namespace {

/// One relation folder of processed/: its name and node types in MAG240M's spelling.
struct mag_relation {
  const char* folder;  ///< "author___writes___paper"
  const char* src;     ///< node type of edge_index row 0
  const char* rel;     ///< relation name
  const char* dst;     ///< node type of edge_index row 1
};

// Node types in ogb/lsc/mag240m.py's order (num_papers, num_authors, num_institutions).
constexpr const char* kTypes[] = {"paper", "author", "institution"};
constexpr mag_relation kRelations[] = {
    {"paper___cites___paper", "paper", "cites", "paper"},
    {"author___writes___paper", "author", "writes", "paper"},
    {"author___affiliated_with___institution", "author", "affiliated_with", "institution"},
};

/// Reads processed/FOLDER/edge_index.npy, int64 [2, E].
npy_array<std::int64_t> read_edge_index(const fs::path& file, convert_report& rep) {
  read_file(rep, file);
  std::error_code ec;
  if (!fs::is_regular_file(file, ec)) COOPGNN_IO_FAIL("{}: missing file", file.string());
  npy_array<std::int64_t> a = read_npy<std::int64_t>(file);
  if (a.shape.size() != 2 || a.shape[0] != 2) {
    COOPGNN_IO_FAIL("{}: shape ({}) but expected [2, E]", file.string(), fmt::join(a.shape, ", "));
  }
  for (std::int64_t v : a.data) {
    if (v < 0) COOPGNN_IO_FAIL("{}: negative id {}", file.string(), v);
  }
  return a;
}

/// Largest entry of row `row` of a [2, E] array, -1 when E = 0.
std::int64_t row_max(const npy_array<std::int64_t>& a, int row) {
  std::int64_t const e = a.shape[1];
  auto first = a.data.begin() + row * e;
  return e == 0 ? -1 : *std::max_element(first, first + e);
}

/// A vertex id list (split/NAME.npy, any integer dtype, 1-D), each below `n`.
std::vector<vid_t> read_split_ids(const fs::path& file, vid_t n, convert_report& rep) {
  read_file(rep, file);
  npy_array<std::int64_t> a = read_npy<std::int64_t>(file);
  if (a.shape.size() != 1) {
    COOPGNN_IO_FAIL("{}: shape ({}) but expected a 1-D array of paper ids", file.string(),
                    fmt::join(a.shape, ", "));
  }
  for (std::int64_t v : a.data) {
    if (v < 0 || v >= n) {
      COOPGNN_IO_FAIL("{}: paper id {} out of range: {} papers (node_label.npy)", file.string(), v,
                      n);
    }
  }
  return std::move(a.data);
}

}  // namespace

dataset convert_mag240m(const fs::path& dir, const convert_options& opt, convert_report* report) {
  check_options(opt);
  std::error_code ec;
  fs::path const proc = dir / "processed";
  if (!fs::is_directory(proc, ec)) {
    COOPGNN_IO_FAIL(
        "{}: missing directory (a MAG240M directory has processed/paper/node_label.npy and "
        "processed/<src>___<relation>___<dst>/edge_index.npy)",
        proc.string());
  }
  convert_report local;
  convert_report& rep = report != nullptr ? *report : local;
  dataset ds;
  ds.name = opt.name.empty() ? default_name(dir) : opt.name;

  // Papers: their count is node_label.npy's length.
  fs::path const label_file = proc / "paper" / "node_label.npy";
  if (!fs::is_regular_file(label_file, ec)) {
    COOPGNN_IO_FAIL("{}: missing file (the papers' labels; their length is the paper count)",
                    label_file.string());
  }
  read_file(rep, label_file);
  npy_header const lh = read_npy_header(label_file);
  if (lh.shape.empty()) COOPGNN_IO_FAIL("{}: a scalar, expected [papers]", label_file.string());
  vid_t const papers = lh.shape[0];
  check_declared_nodes(label_file.string(), "papers", papers);
  std::vector<std::int64_t> paper_labels;
  if (lh.dtype == npy_dtype::float16) {
    npy_array<std::uint16_t> const bits = read_npy_bits16(label_file);
    npy_array<double> wide{bits.shape, {}, npy_dtype::float16};
    wide.data.reserve(bits.data.size());
    for (std::uint16_t b : bits.data) wide.data.push_back(half_to_float(b));
    paper_labels = class_labels(wide, label_file.string(), papers);
  } else {
    paper_labels = class_labels(read_npy<double>(label_file), label_file.string(), papers);
  }

  // Relations; authors and institutions counted as 1 + their largest id.
  npy_array<std::int64_t> rel[3];
  for (std::size_t r = 0; r < 3; ++r) {
    rel[r] = read_edge_index(proc / kRelations[r].folder / "edge_index.npy", rep);
  }
  vid_t const authors = 1 + std::max(row_max(rel[1], 0), row_max(rel[2], 0));
  vid_t const institutions = 1 + row_max(rel[2], 1);
  note(rep, fmt::format("{} papers (node_label.npy), {} authors and {} institutions (1 + the "
                        "largest id of the edge lists; meta.pt is not read)",
                        papers, authors, institutions));
  hetero_schema h;
  h.node_types.assign(std::begin(kTypes), std::end(kTypes));
  h.node_offsets = {0, papers, papers + authors, papers + authors + institutions};
  ds.num_nodes = h.node_offsets.back();
  check_declared_nodes(dir.string(), "nodes", ds.num_nodes);
  auto offset_of = [&](std::string_view type) {
    return h.node_offsets[static_cast<std::size_t>(h.node_type_index(type))];
  };
  auto count_of = [&](std::string_view type) { return h.count(h.node_type_index(type)); };

  // Each relation and its reverse as edge types (PyG's "rev_" naming, as ToUndirected); the
  // citations, one edge type paper:cites:paper, symmetrized unless opt.directed (OGB-LSC's
  // R-GNN baseline uses them undirected). Pairs sorted, duplicates removed.
  for (std::size_t r = 0; r < 3; ++r) {
    const mag_relation& m = kRelations[r];
    fs::path const file = proc / m.folder / "edge_index.npy";
    std::int64_t const e = rel[r].shape[1];
    vid_t const so = offset_of(m.src);
    vid_t const doff = offset_of(m.dst);
    std::vector<std::pair<vid_t, vid_t>> pairs;
    pairs.reserve(static_cast<std::size_t>(e));
    for (std::int64_t i = 0; i < e; ++i) {
      vid_t const s = rel[r].data[static_cast<std::size_t>(i)];
      vid_t const d = rel[r].data[static_cast<std::size_t>(e + i)];
      if (s >= count_of(m.src) || d >= count_of(m.dst)) {
        COOPGNN_IO_FAIL("{}: edge {} ({} -> {}) out of range: {} {}s, {} {}s", file.string(), i, s,
                        d, count_of(m.src), m.src, count_of(m.dst), m.dst);
      }
      pairs.emplace_back(s, d);
    }
    rel[r].data = {};
    bool const self = std::string_view(m.src) == m.dst;
    bool const both_ways_in_one = self && !opt.directed;
    if (both_ways_in_one) {
      for (std::int64_t i = 0; i < e; ++i) {
        auto [s, d] = pairs[static_cast<std::size_t>(i)];
        pairs.emplace_back(d, s);
      }
    }
    std::sort(pairs.begin(), pairs.end());
    std::size_t const before = pairs.size();
    pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
    rep.edges.edges_read += e;
    rep.edges.duplicates_removed += static_cast<std::int64_t>(before - pairs.size());
    if (both_ways_in_one) {
      rep.edges.reverse_edges_added += static_cast<std::int64_t>(pairs.size()) - e;
      note(rep, fmt::format("{}: citations symmetrized into edge type paper:cites:paper ({} -> {} "
                            "edges; --directed keeps them as stored)",
                            file.string(), e, pairs.size()));
    }
    auto const forward = static_cast<std::int32_t>(h.edge_types.size());
    h.edge_types.push_back(fmt::format("{}:{}:{}", m.src, m.rel, m.dst));
    for (auto [s, d] : pairs) {
      ds.src.push_back(s + so);
      ds.dst.push_back(d + doff);
      h.edge_type.push_back(forward);
    }
    if (self) {
      rep.edges.edges_final += static_cast<std::int64_t>(pairs.size());
      continue;
    }
    h.edge_types.push_back(fmt::format("{}:rev_{}:{}", m.dst, m.rel, m.src));
    for (auto& p : pairs) std::swap(p.first, p.second);
    std::sort(pairs.begin(), pairs.end());
    for (auto [d, s] : pairs) {
      ds.src.push_back(d + doff);
      ds.dst.push_back(s + so);
      h.edge_type.push_back(forward + 1);
    }
    rep.edges.reverse_edges_added += static_cast<std::int64_t>(pairs.size());
    rep.edges.edges_final += 2 * static_cast<std::int64_t>(pairs.size());
  }

  // Paper features: float32 read; float16 (the release's) neither widened nor copied: the
  // output links to the release's file, which training reads at 2 bytes per element.
  h.features.assign(3, matrix<float>());
  h.feature_names.assign(3, "");
  fs::path const feat_file = proc / "paper" / "node_feat.npy";
  if (fs::is_regular_file(feat_file, ec)) {
    npy_header const fh = read_npy_header(feat_file);
    if (fh.shape.size() != 2 || fh.shape[0] != papers) {
      COOPGNN_IO_FAIL("{}: shape ({}) but expected [{}, F] ({} papers in node_label.npy)",
                      feat_file.string(), fmt::join(fh.shape, ", "), papers, papers);
    }
    if (fh.dtype == npy_dtype::float16) {
      h.feature_types.assign(3, feature_dtype::float32);
      h.feature_types[0] = feature_dtype::float16;
      h.feature_files.assign(3, fs::path());
      h.feature_files[0] = fs::absolute(feat_file);
      h.feature_cols.assign(3, 0);
      h.feature_cols[0] = fh.shape[1];
      h.feature_names[0] = "feat";
      note(rep, fmt::format("{}: float16 [{}, {}] paper features kept at 2 bytes per element and "
                            "not copied: the output's data/paper_feat.npy links to this file",
                            feat_file.string(), fh.shape[0], fh.shape[1]));
    } else {
      read_file(rep, feat_file);
      npy_array<float> x = read_npy<float>(feat_file);
      h.features[0] = matrix<float>(papers, fh.shape[1], std::move(x.data));
      h.feature_names[0] = "feat";
    }
  }
  if (fs::is_regular_file(proc / "paper" / "node_year.npy", ec)) {
    note(rep, "processed/paper/node_year.npy is not read (no per-node data besides features)");
  }

  // Labels (papers only) and the split exported from split_dict.pt.
  ds.labels.assign(static_cast<std::size_t>(ds.num_nodes), -1);
  std::copy(paper_labels.begin(), paper_labels.end(), ds.labels.begin());
  ds.num_classes = classes_from_max_label(max_label_of(paper_labels), label_file.string());
  h.target_type = "paper";
  fs::path const split_dir = dir / "split";
  if (fs::is_directory(split_dir, ec)) {
    std::pair<const char*, std::vector<vid_t>*> const parts[] = {
        {"train", &ds.train}, {"valid", &ds.valid}, {"test", &ds.test}};
    for (auto [name, out] : parts) {
      fs::path const f = split_dir / (std::string(name) + ".npy");
      if (fs::is_regular_file(f, ec)) {
        *out = read_split_ids(f, papers, rep);
      } else if (std::string_view(name) != "test") {
        COOPGNN_IO_FAIL("{}: missing file (the {} paper ids, exported from split_dict.pt)",
                        f.string(), name);
      }
      for (vid_t v : *out) {
        if (paper_labels[static_cast<std::size_t>(v)] < 0) {
          COOPGNN_IO_FAIL("{}: paper {} has no label (NaN) in {}", f.string(), v,
                          label_file.string());
        }
      }
    }
    if (ds.test.empty()) {
      note(rep, fmt::format("{}: no test.npy: the test set is empty (test-dev and "
                            "test-challenge labels are not public)",
                            split_dir.string()));
    }
    rep.split = "split";
  } else {
    note(rep, fmt::format("{}: no split: export split_dict.pt's arrays as split/train.npy and "
                          "split/valid.npy (torch.load cannot be replayed here)",
                          dir.string()));
  }
  ds.task_name = "node_classification";
  ds.hetero = std::move(h);
  validate_dataset(ds, dir.string());
  return ds;
}

namespace formats::detail {

namespace {

bool detect_mag240m(const fs::path& input) {
  std::error_code ec;
  return fs::is_regular_file(input / "processed" / "paper" / "node_label.npy", ec) &&
         fs::is_regular_file(input / "processed" / "paper___cites___paper" / "edge_index.npy", ec);
}

constexpr std::string_view kMag240mOptions[] = {"--directed"};

}  // namespace

const input_format& mag240m_format() {
  static const input_format f{
      "mag240m",
      "an OGB-LSC MAG240M directory (processed/paper/, processed/*___*___*/edge_index.npy)",
      "an OGB-LSC MAG240M directory (mag240m_kddcup2021/): a HETEROGENEOUS dataset,\n"
      "node types paper/author/institution. Reads processed/paper/node_label.npy\n"
      "(float, NaN = unlabelled; its length is the paper count), the int64 [2, E]\n"
      "edge_index.npy of paper___cites___paper, author___writes___paper and\n"
      "author___affiliated_with___institution (edge types paper:cites:paper,\n"
      "symmetrized unless --directed; author:writes:paper, author:affiliated_with:\n"
      "institution and their reverses paper:rev_writes:author, institution:\n"
      "rev_affiliated_with:author). Authors and institutions: 1 + the largest id\n"
      "(meta.pt is not read). processed/paper/node_feat.npy is read when float32; the\n"
      "release's float16 features are neither widened nor copied: the output's\n"
      "data/paper_feat.npy links to the file (2 bytes per element; authors and\n"
      "institutions learn embeddings). The split: split/train.npy, split/valid.npy and optional\n"
      "split/test.npy, exported from split_dict.pt (a pickled dict, not read here):\n"
      "  python3 -c \"import torch,numpy as n;[n.save(f'split/{k}.npy',n.asarray(v))\n"
      "  for k,v in torch.load('split_dict.pt').items()]\"",
      true,
      kMag240mOptions,
      detect_mag240m,
      convert_mag240m};
  return f;
}

}  // namespace formats::detail

}  // namespace coopgnn
