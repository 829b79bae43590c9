// OGB raw node-property directories (formats/formats.hpp convert_ogb) and their registry entry.
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <optional>

#include "formats/detail/common.hpp"

namespace coopgnn {

using namespace formats::detail;  // NOLINT(google-build-using-namespace): the readers' helpers

namespace formats::detail {

void read_ogb_split(const fs::path& dir, const convert_options& opt, convert_report& rep,
                    dataset& ds) {
  std::error_code ec;
  vid_t const n = ds.num_nodes;
  fs::path const split_root = dir / "split";
  if (fs::is_directory(split_root, ec)) {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(split_root)) {
      if (e.is_directory()) names.push_back(e.path().filename().string());
    }
    std::sort(names.begin(), names.end());
    std::string chosen = opt.split;
    if (chosen.empty()) {
      if (names.size() > 1) {
        COOPGNN_IO_FAIL("{}: several split folders ({}); choose one with --split NAME",
                        split_root.string(), fmt::join(names, ", "));
      }
      if (names.size() == 1) chosen = names[0];
    } else if (std::find(names.begin(), names.end(), chosen) == names.end()) {
      COOPGNN_IO_FAIL(
          "{}: missing split folder '{}' (present: {})", (split_root / chosen).string(), chosen,
          names.empty() ? std::string("none") : fmt::format("{}", fmt::join(names, ", ")));
    }
    if (!chosen.empty()) {
      fs::path const sdir = split_root / chosen;
      rep.split = chosen;
      fs::path const tr = require_csv(sdir, "train", "the training ids");
      fs::path const va = require_csv(sdir, "valid", "the validation ids");
      fs::path const te = require_csv(sdir, "test", "the test ids");
      for (const auto& p : {tr, va, te}) read_file(rep, p.string());
      ds.train = read_id_list(tr, n);
      ds.valid = read_id_list(va, n);
      ds.test = read_id_list(te, n);
      if (!ds.labels.empty()) {
        for (const auto* part : {&ds.train, &ds.valid, &ds.test}) {
          for (vid_t v : *part) {
            if (ds.labels[static_cast<std::size_t>(v)] < 0) {
              COOPGNN_IO_FAIL("{}: split vertex {} has no label (nan or -1) in node-label", sdir.string(),
                              v);
            }
          }
        }
      }
    }
  } else if (!opt.split.empty()) {
    COOPGNN_IO_FAIL("{}: missing directory (asked for --split {})", split_root.string(), opt.split);
  }

}

}  // namespace formats::detail

dataset convert_ogb(const fs::path& dir, const convert_options& opt, convert_report* report) {
  check_options(opt);
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    COOPGNN_IO_FAIL("{}: not a directory (an OGB dataset directory holds raw/ and split/)",
                    dir.string());
  }
  fs::path const raw = dir / "raw";
  if (!fs::is_directory(raw, ec)) {
    COOPGNN_IO_FAIL(
        "{}: missing directory (an OGB node-property dataset has raw/edge.csv.gz, "
        "raw/num-node-list.csv.gz, ...)",
        raw.string());
  }
  if (!find_csv(raw, "num-node-list") && fs::is_regular_file(raw / "data.npz", ec)) {
    return convert_ogb_binary(dir, opt, report);  // OGB's binary layout (ogbn-papers100M)
  }
  convert_report local;
  convert_report& rep = report != nullptr ? *report : local;
  dataset ds;
  ds.name = opt.name.empty() ? default_name(dir) : opt.name;

  // |V|
  fs::path const nn_file = require_csv(raw, "num-node-list", "it holds the number of nodes");
  read_file(rep, nn_file.string());
  {
    line_reader in(nn_file);
    std::string_view line;
    std::int64_t graphs = 0;
    while (in.next(line)) {
      if (blank(line)) continue;
      ++graphs;
      if (graphs > 1) {
        in.fail("more than one graph: only single-graph node-property datasets are supported");
      }
      ds.num_nodes = parse_int(line, in, "node count");
      if (ds.num_nodes <= 0) in.fail(fmt::format("node count {} must be positive", ds.num_nodes));
    }
    if (graphs == 0) COOPGNN_IO_FAIL("{}: empty file: expected the number of nodes", in.name());
  }
  check_declared_nodes(nn_file.string(), "node count", ds.num_nodes);
  vid_t const n = ds.num_nodes;

  // Edges
  fs::path const e_file = require_csv(raw, "edge", "the edge list");
  read_file(rep, e_file.string());
  {
    line_reader in(e_file);
    std::string_view line;
    while (in.next(line)) {
      if (blank(line)) continue;
      std::size_t const comma = line.find(',');
      if (comma == std::string_view::npos)
        in.fail(fmt::format("expected 'src,dst', found '{}'", line));
      vid_t const s = parse_id(line.substr(0, comma), in, "source id");
      vid_t const d = parse_id(line.substr(comma + 1), in, "destination id");
      if (s >= n || d >= n) {
        in.fail(
            fmt::format("edge {} -> {} has an id out of range: |V| = {} (num-node-list)", s, d, n));
      }
      ds.src.push_back(s);
      ds.dst.push_back(d);
    }
  }
  if (auto ne_file = find_csv(raw, "num-edge-list")) {
    read_file(rep, ne_file->string());
    line_reader in(*ne_file);
    std::string_view line;
    while (in.next(line)) {
      if (blank(line)) continue;
      std::int64_t const m = parse_int(line, in, "edge count");
      if (m != static_cast<std::int64_t>(ds.src.size())) {
        in.fail(fmt::format("says {} edges but {} has {}", m, e_file.string(), ds.src.size()));
      }
      break;
    }
  }

  // Features
  std::optional<fs::path> const f_file = find_csv(raw, "node-feat");
  if (f_file) {
    read_file(rep, f_file->string());
    line_reader in(*f_file);
    std::vector<float> values;
    std::int64_t cols = -1;
    std::int64_t rows = 0;
    std::string_view line;
    while (in.next(line)) {
      if (blank(line)) continue;
      std::int64_t c = 0;
      std::size_t start = 0;
      while (true) {
        std::size_t const comma = line.find(',', start);
        std::string_view tok =
            strip(line.substr(start, comma == std::string_view::npos ? line.npos : comma - start));
        float v = 0;
        auto [p, err] = std::from_chars(tok.data(), tok.data() + tok.size(), v);
        if (err != std::errc() || p != tok.data() + tok.size() || tok.empty()) {
          in.fail(fmt::format("feature column {} '{}' is not a number", c, tok));
        }
        values.push_back(v);
        ++c;
        if (comma == std::string_view::npos) break;
        start = comma + 1;
      }
      if (cols < 0) cols = c;
      if (c != cols) in.fail(fmt::format("{} values, but the first row has {}", c, cols));
      ++rows;
      if (rows > n) in.fail(fmt::format("more feature rows than nodes ({}, num-node-list)", n));
    }
    if (rows != n) {
      COOPGNN_IO_FAIL("{}: {} feature rows but num-node-list says {} nodes", f_file->string(), rows,
                      n);
    }
    ds.features = matrix<float>(n, cols, std::move(values));
  }

  // Labels
  if (auto l_file = find_csv(raw, "node-label")) {
    read_file(rep, l_file->string());
    line_reader in(*l_file);
    std::string_view line;
    while (in.next(line)) {
      if (static_cast<vid_t>(ds.labels.size()) >= n && !blank(line)) {
        in.fail(
            fmt::format("more label rows than nodes ({}, num-node-list{})", n,
                        f_file ? fmt::format(", and {} has {} rows", f_file->string(), n) : ""));
      }
      std::string_view tok = strip(line);
      if (tok.find(',') != std::string_view::npos) {
        in.fail("several label columns: multi-label tasks are not supported");
      }
      if (tok.empty() || tok == "nan" || tok == "NaN") {
        ds.labels.push_back(-1);
        continue;
      }
      std::int64_t v = 0;
      auto [p, err] = std::from_chars(tok.data(), tok.data() + tok.size(), v);
      if (err != std::errc() || p != tok.data() + tok.size()) {
        double d = 0;
        auto [q, err2] = std::from_chars(tok.data(), tok.data() + tok.size(), d);
        // 2^63 bounds the conversion below (a larger double, or inf, does not fit an int64).
        if (err2 != std::errc() || q != tok.data() + tok.size() || d != std::floor(d) ||
            !(std::abs(d) < 9223372036854775808.0)) {
          in.fail(fmt::format("label '{}' is not an integer class id", tok));
        }
        v = static_cast<std::int64_t>(d);
      }
      if (v < 0) in.fail(fmt::format("label {} is negative", v));
      ds.labels.push_back(v);
    }
    if (static_cast<vid_t>(ds.labels.size()) != n) {
      COOPGNN_IO_FAIL("{}: {} label rows but {} nodes ({})", l_file->string(), ds.labels.size(), n,
                      f_file ? fmt::format("{} has {} feature rows", f_file->string(), n)
                             : std::string("num-node-list"));
    }
    std::int64_t mx = -1;
    for (std::int64_t l : ds.labels) mx = std::max(mx, l);
    ds.num_classes = classes_from_max_label(mx, l_file->string());
  }

  read_ogb_split(dir, opt, rep, ds);

  finish_edges(ds, opt, rep, e_file.string(), stored_once_policy::symmetrize);
  validate_dataset(ds, dir.string());
  return ds;
}


namespace formats::detail {

namespace {

bool detect_ogb(const fs::path& input) {
  std::error_code ec;
  if (!fs::is_directory(input / "raw", ec)) return false;
  return (find_csv(input / "raw", "num-node-list") && find_csv(input / "raw", "edge")) ||
         fs::is_regular_file(input / "raw" / "data.npz", ec);
}

constexpr std::string_view kOgbOptions[] = {"--directed", "--split", "--features"};

}  // namespace

const input_format& ogb_format() {
  static const input_format f{
      "ogb",
      "an OGB node-property directory (raw/*.csv.gz or raw/data.npz, split/<name>/)",
      "an OGB node-property directory in either of OGB's layouts:\n"
      "  CSV: raw/edge.csv.gz, raw/num-node-list.csv.gz, raw/node-feat.csv.gz,\n"
      "    raw/node-label.csv.gz (as ogbn-arxiv and ogbn-products are distributed);\n"
      "  binary (read when raw/num-node-list.csv(.gz) is absent): raw/data.npz with\n"
      "    edge_index int64 [2, E], num_nodes_list [1], num_edges_list [1], node_feat\n"
      "    [N, F] float32 or float16 (kept at 2 bytes; optional), and\n"
      "    raw/node-label.npz with node_label [N, 1] (NaN or -1 = unlabelled; as\n"
      "    ogbn-papers100M is distributed). Each .npz member is read whole into memory\n"
      "    (stored or deflated; not streamed): edge_index needs 16 bytes per edge.\n"
      "The split comes from split/<name>/{train,valid,test}.csv(.gz) (--split NAME).\n"
      "An edge list stored once (every src < dst, or every src > dst) is SYMMETRIZED by\n"
      "default: OGB's node-property graphs are used undirected by their GNN baselines\n"
      "(ogbn-arxiv stores each citation once; a GCN on the one-way graph loses over 10\n"
      "accuracy points). --directed keeps the edges as stored.",
      true,
      kOgbOptions,
      detect_ogb,
      convert_ogb};
  return f;
}

}  // namespace formats::detail

}  // namespace coopgnn
