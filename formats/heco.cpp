// HeCo heterogeneous directories (formats/formats.hpp convert_heco) and their registry entry.
#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "formats/detail/common.hpp"

namespace coopgnn {

using namespace formats::detail;  // NOLINT(google-build-using-namespace): the readers' helpers

namespace {

/// "paper<TAB>other" lines of a HeCo relation file: (paper, other) pairs, checked against the
/// paper and other counts.
std::vector<std::pair<vid_t, vid_t>> read_heco_pairs(const fs::path& file, vid_t papers,
                                                     vid_t others, const char* other_name,
                                                     convert_report& rep) {
  read_file(rep, file);
  line_reader in(file);
  std::vector<std::pair<vid_t, vid_t>> pairs;
  std::vector<std::string_view> f;
  std::string_view line;
  while (in.next(line)) {
    if (blank(line)) continue;
    split_fields(line, f);
    if (f.size() != 2)
      in.fail(fmt::format("expected 'paper<TAB>{}', found {} fields", other_name, f.size()));
    vid_t const p = parse_id(f[0], in, "paper id");
    vid_t const o = parse_id(f[1], in, other_name);
    if (p >= papers)
      in.fail(fmt::format("paper id {} is out of range: there are {} papers", p, papers));
    if (o >= others && others > 0) {
      in.fail(fmt::format("{} id {} is out of range: there are {}", other_name, o, others));
    }
    pairs.emplace_back(p, o);
  }
  if (pairs.empty()) COOPGNN_IO_FAIL("{}: no pairs", file.string());
  return pairs;
}

/// A 1-D int64 id array (HeCo's train_K/val_K/test_K.npy), each in [0, n).
std::vector<vid_t> read_heco_ids(const fs::path& file, vid_t n, convert_report& rep) {
  read_file(rep, file);
  auto a = read_npy<std::int64_t>(file);
  if (a.rank() != 1 && !(a.rank() == 2 && a.shape[1] == 1)) {
    COOPGNN_IO_FAIL("{}: expected a 1-D array of paper ids, found {}", file.string(),
                    format_npy_shape(a.shape));
  }
  for (std::size_t i = 0; i < a.data.size(); ++i) {
    if (a.data[i] < 0 || a.data[i] >= n) {
      COOPGNN_IO_FAIL("{}: index {} = {} is not a paper id (there are {} papers)", file.string(), i,
                      a.data[i], n);
    }
  }
  return std::move(a.data);
}

}  // namespace

dataset convert_heco(const fs::path& dir, const convert_options& opt, convert_report* report) {
  convert_report local;
  convert_report& rep = report != nullptr ? *report : local;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) COOPGNN_IO_FAIL("{}: not a directory", dir.string());
  if (opt.labels_per_class != 20 && opt.labels_per_class != 40 && opt.labels_per_class != 60) {
    COOPGNN_IO_FAIL("--labels-per-class {}: HeCo's splits have 20, 40 or 60", opt.labels_per_class);
  }
  for (const char* f : {"labels.npy", "pa.txt", "ps.txt", "p_feat.npz"}) {
    if (!fs::is_regular_file(dir / f, ec)) {
      COOPGNN_IO_FAIL(
          "{}: missing file (a HeCo directory holds labels.npy, pa.txt, ps.txt, "
          "p_feat.npz and train/val/test_{{20,40,60}}.npy)",
          (dir / f).string());
    }
  }
  // Papers: labels (stored as float64 class ids) give their count.
  read_file(rep, dir / "labels.npy");
  auto lab = read_npy<double>(dir / "labels.npy");
  if (lab.rank() != 1 && !(lab.rank() == 2 && lab.shape[1] == 1)) {
    COOPGNN_IO_FAIL("{}: expected labels shaped (P,), found {}", (dir / "labels.npy").string(),
                    format_npy_shape(lab.shape));
  }
  auto const papers = static_cast<vid_t>(lab.data.size());
  std::vector<std::int64_t> paper_labels(lab.data.size());
  std::int64_t max_label = -1;
  for (std::size_t i = 0; i < lab.data.size(); ++i) {
    double const v = lab.data[i];
    if (!(v >= 0 && v < 2147483647.0) || v != std::floor(v)) {
      COOPGNN_IO_FAIL("{}: label of paper {} = {} is not a class id", (dir / "labels.npy").string(),
                      i, v);
    }
    paper_labels[i] = static_cast<std::int64_t>(v);
    max_label = std::max(max_label, paper_labels[i]);
  }
  auto const pa = read_heco_pairs(dir / "pa.txt", papers, 0, "author id", rep);
  auto const ps = read_heco_pairs(dir / "ps.txt", papers, 0, "subject id", rep);
  vid_t authors = 0;
  vid_t subjects = 0;
  for (auto [p, a] : pa) authors = std::max(authors, a + 1);
  for (auto [p, x] : ps) subjects = std::max(subjects, x + 1);
  note(rep, fmt::format("{} papers, {} authors (1 + the largest id in pa.txt), {} subjects (from "
                        "ps.txt)",
                        papers, authors, subjects));

  dataset ds;
  ds.name = opt.name.empty() ? default_name(dir) : opt.name;
  hetero_schema h;
  h.node_types = {"paper", "author", "subject"};
  h.node_offsets = {0, papers, papers + authors, papers + authors + subjects};
  h.edge_types = {"paper:paper-author:author", "author:author-paper:paper",
                  "paper:paper-subject:subject", "subject:subject-paper:paper"};
  ds.num_nodes = h.node_offsets.back();
  // Both directions of each relation, duplicates removed, in (src, dst) order per relation.
  auto add_relation = [&](std::vector<std::pair<vid_t, vid_t>> pairs, vid_t other_offset,
                          std::int32_t forward, const fs::path& file) {
    std::sort(pairs.begin(), pairs.end());
    auto const before = pairs.size();
    pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
    if (pairs.size() != before) {
      note(rep,
           fmt::format("{}: {} duplicate pairs removed", file.string(), before - pairs.size()));
    }
    rep.edges.edges_read += static_cast<std::int64_t>(before);
    rep.edges.duplicates_removed += static_cast<std::int64_t>(before - pairs.size());
    rep.edges.reverse_edges_added += static_cast<std::int64_t>(pairs.size());
    rep.edges.edges_final += 2 * static_cast<std::int64_t>(pairs.size());
    for (auto [p, o] : pairs) {
      ds.src.push_back(p);
      ds.dst.push_back(o + other_offset);
      h.edge_type.push_back(forward);
    }
    std::vector<std::pair<vid_t, vid_t>> rev;
    rev.reserve(pairs.size());
    for (auto [p, o] : pairs) rev.emplace_back(o, p);
    std::sort(rev.begin(), rev.end());
    for (auto [o, p] : rev) {
      ds.src.push_back(o + other_offset);
      ds.dst.push_back(p);
      h.edge_type.push_back(forward + 1);
    }
  };
  add_relation(pa, papers, 0, dir / "pa.txt");
  add_relation(ps, papers + authors, 2, dir / "ps.txt");

  // Paper features (SciPy sparse, densified); authors and subjects have none (HeCo's own loader
  // gives them one-hot identities; a_feat.npz, the sum of an author's papers, is not read).
  read_file(rep, dir / "p_feat.npz");
  npz_archive const z(dir / "p_feat.npz");
  if (!has_sparse(z, {})) {
    COOPGNN_IO_FAIL("{}: expected a SciPy sparse matrix (scipy.sparse.save_npz)",
                    (dir / "p_feat.npz").string());
  }
  matrix<float> x = densify(read_sparse(z, {}), opt, rep);
  if (x.rows() != papers) {
    COOPGNN_IO_FAIL("{}: {} feature rows but labels.npy has {} papers",
                    (dir / "p_feat.npz").string(), x.rows(), papers);
  }
  h.features = {std::move(x), matrix<float>(), matrix<float>()};
  h.feature_names = {"feat", "", ""};
  note(rep,
       "authors and subjects have no input features (HeCo gives them one-hot identities; "
       "a_feat.npz is not read)");

  // The split with K labels per class.
  std::string const k = std::to_string(opt.labels_per_class);
  ds.train = read_heco_ids(dir / ("train_" + k + ".npy"), papers, rep);
  ds.valid = read_heco_ids(dir / ("val_" + k + ".npy"), papers, rep);
  ds.test = read_heco_ids(dir / ("test_" + k + ".npy"), papers, rep);
  ds.labels.assign(static_cast<std::size_t>(ds.num_nodes), -1);
  std::copy(paper_labels.begin(), paper_labels.end(), ds.labels.begin());
  ds.num_classes = max_label + 1;
  ds.task_name = "node_classification_" + k;
  h.target_type = "paper";
  rep.split = k + " labels per class";
  ds.hetero = std::move(h);
  validate_dataset(ds, dir.string());
  return ds;
}


namespace formats::detail {

namespace {

bool detect_heco(const fs::path& input) {
  std::error_code ec;
  for (const char* f : {"labels.npy", "pa.txt", "ps.txt", "p_feat.npz"}) {
    if (!fs::is_regular_file(input / f, ec)) return false;
  }
  return true;
}

constexpr std::string_view kHecoOptions[] = {"--labels-per-class"};

}  // namespace

const input_format& heco_format() {
  static const input_format f{
      "heco",
      "a HeCo directory (HeCo's data/acm: labels.npy, pa.txt, ps.txt, p_feat.npz)",
      "a HeCo directory (labels.npy, pa.txt, ps.txt, p_feat.npz, train/val/test_K.npy;\n"
      "HeCo's data/acm): a HETEROGENEOUS dataset in GraphBolt's typed layout, node\n"
      "types paper/author/subject, both directions of paper-author and paper-subject,\n"
      "paper features (authors and subjects have none), the split with\n"
      "--labels-per-class K (20, 40 or 60) as task node_classification_K on papers.\n"
      "`coopgnn info` reads it; `coopgnn train --model rgcn` trains it.",
      true,
      kHecoOptions,
      detect_heco,
      convert_heco};
  return f;
}

}  // namespace formats::detail

}  // namespace coopgnn
