#include "tools/coopgnn/convert.hpp"

#include <fmt/ranges.h>
#include <zlib.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <optional>
#include <utility>

#include "runtime/core/error.hpp"
#include "runtime/graph/npz.hpp"

namespace coopgnn {

namespace {

namespace fs = std::filesystem;

// ---- text input (plain or gzip) ------------------------------------------------------------

/// Reads lines from a plain or gzip-compressed text file with zlib (gzread reads uncompressed
/// files transparently). Lines are returned without '\n' and '\r'.
class line_reader {
 public:
  explicit line_reader(const fs::path& file) : name_(file.string()) {
    std::error_code ec;
    if (!fs::is_regular_file(file, ec)) COOPGNN_IO_FAIL("{}: missing file", name_);
    gz_ = gzopen(name_.c_str(), "rb");
    if (gz_ == nullptr) COOPGNN_IO_FAIL("{}: cannot open", name_);
    gzbuffer(gz_, 1 << 18);
    buf_.resize(1 << 20);
  }
  ~line_reader() {
    if (gz_ != nullptr) gzclose(gz_);
  }
  line_reader(const line_reader&) = delete;
  line_reader& operator=(const line_reader&) = delete;

  /// The next line; false at the end of the file.
  bool next(std::string_view& line) {
    while (true) {
      if (const void* nl = std::memchr(buf_.data() + pos_, '\n', end_ - pos_)) {
        std::size_t const at = static_cast<const char*>(nl) - buf_.data();
        line = trim_cr(std::string_view(buf_.data() + pos_, at - pos_));
        pos_ = at + 1;
        ++lineno_;
        return true;
      }
      if (eof_) {
        if (pos_ == end_) return false;
        line = trim_cr(std::string_view(buf_.data() + pos_, end_ - pos_));
        pos_ = end_;
        ++lineno_;
        return true;
      }
      fill();
    }
  }

  [[nodiscard]] std::int64_t lineno() const { return lineno_; }
  [[nodiscard]] const std::string& name() const { return name_; }

  [[noreturn]] void fail(const std::string& msg) const {
    COOPGNN_IO_FAIL("{}:{}: {}", name_, lineno_, msg);
  }

 private:
  static std::string_view trim_cr(std::string_view s) {
    if (!s.empty() && s.back() == '\r') s.remove_suffix(1);
    return s;
  }
  void fill() {
    // Keep the partial line, grow if one line exceeds the buffer.
    std::size_t const rest = end_ - pos_;
    if (pos_ > 0) std::memmove(buf_.data(), buf_.data() + pos_, rest);
    pos_ = 0;
    end_ = rest;
    if (end_ == buf_.size()) buf_.resize(buf_.size() * 2);
    int const want = static_cast<int>(std::min<std::size_t>(buf_.size() - end_, 1 << 30));
    int const got = gzread(gz_, buf_.data() + end_, static_cast<unsigned>(want));
    int errnum = Z_OK;
    const char* msg = gzerror(gz_, &errnum);
    if (got < 0 || (errnum != Z_OK && errnum != Z_STREAM_END)) {
      COOPGNN_IO_FAIL("{}: cannot read (corrupt or truncated gzip?): {}", name_,
                      msg != nullptr ? msg : "unknown zlib error");
    }
    if (got == 0) eof_ = true;
    end_ += static_cast<std::size_t>(got);
  }

  std::string name_;
  gzFile gz_ = nullptr;
  std::vector<char> buf_;
  std::size_t pos_ = 0;
  std::size_t end_ = 0;
  bool eof_ = false;
  std::int64_t lineno_ = 0;
};

bool blank(std::string_view s) { return s.find_first_not_of(" \t\r") == std::string_view::npos; }

std::string_view strip(std::string_view s) {
  std::size_t b = 0;
  while (b < s.size() && (s[b] == ' ' || s[b] == '\t')) ++b;
  std::size_t e = s.size();
  while (e > b && (s[e - 1] == ' ' || s[e - 1] == '\t')) --e;
  return s.substr(b, e - b);
}

/// Parses a whole token as an integer; reports FILE:LINE on failure.
std::int64_t parse_int(std::string_view tok, const line_reader& in, const char* what) {
  tok = strip(tok);
  std::int64_t v = 0;
  auto [p, ec] = std::from_chars(tok.data(), tok.data() + tok.size(), v);
  if (ec != std::errc() || p != tok.data() + tok.size() || tok.empty()) {
    in.fail(fmt::format("{} '{}' is not an integer", what, tok));
  }
  return v;
}

vid_t parse_id(std::string_view tok, const line_reader& in, const char* what) {
  std::int64_t const v = parse_int(tok, in, what);
  if (v < 0) in.fail(fmt::format("{} {} is a negative vertex id", what, v));
  return v;
}

/// OGB file stem under `dir`: prefers STEM.csv.gz, then STEM.csv. Empty when neither exists.
std::optional<fs::path> find_csv(const fs::path& dir, const std::string& stem) {
  std::error_code ec;
  for (const char* ext : {".csv.gz", ".csv"}) {
    fs::path p = dir / (stem + ext);
    if (fs::is_regular_file(p, ec)) return p;
  }
  return std::nullopt;
}

fs::path require_csv(const fs::path& dir, const std::string& stem, const char* why) {
  auto p = find_csv(dir, stem);
  if (!p) {
    COOPGNN_IO_FAIL("{}: missing file ({}; {}.csv also accepted)",
                    (dir / (stem + ".csv.gz")).string(), why, stem);
  }
  return *p;
}

/// A list of vertex ids, one per line (OGB split files), each in [0, n).
std::vector<vid_t> read_id_list(const fs::path& file, vid_t n) {
  line_reader in(file);
  std::vector<vid_t> ids;
  std::string_view line;
  while (in.next(line)) {
    if (blank(line)) continue;
    vid_t const v = parse_id(line, in, "vertex id");
    if (v >= n) in.fail(fmt::format("vertex id {} is out of range: |V| = {}", v, n));
    ids.push_back(v);
  }
  return ids;
}

std::string default_name(const fs::path& input) {
  fs::path p = input;
  if (p.filename().empty()) p = p.parent_path();  // trailing slash
  std::string s = p.filename().string();
  for (const char* ext : {".gz", ".txt", ".npz", ".csv"}) {
    if (s.size() > std::strlen(ext) && s.ends_with(ext)) s.resize(s.size() - std::strlen(ext));
  }
  return s.empty() ? "dataset" : s;
}

void finish_edges(dataset& ds, const convert_options& opt, convert_report* report) {
  edge_stats const st = clean_edges(ds.src, ds.dst, opt.symmetrize, opt.drop_self_loops);
  if (report != nullptr) report->edges = st;
}

}  // namespace

// ---- OGB -------------------------------------------------------------------------------------

dataset convert_ogb(const fs::path& dir, const convert_options& opt, convert_report* report) {
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
  convert_report local;
  convert_report& rep = report != nullptr ? *report : local;
  dataset ds;
  ds.name = opt.name.empty() ? default_name(dir) : opt.name;

  // |V|
  fs::path const nn_file = require_csv(raw, "num-node-list", "it holds the number of nodes");
  rep.files_read.push_back(nn_file.string());
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
  vid_t const n = ds.num_nodes;

  // Edges
  fs::path const e_file = require_csv(raw, "edge", "the edge list");
  rep.files_read.push_back(e_file.string());
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
    rep.files_read.push_back(ne_file->string());
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
    rep.files_read.push_back(f_file->string());
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
    rep.files_read.push_back(l_file->string());
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
        if (err2 != std::errc() || q != tok.data() + tok.size() || d != std::floor(d)) {
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
    ds.num_classes = mx + 1;
  }

  // Split
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
      for (const auto& p : {tr, va, te}) rep.files_read.push_back(p.string());
      ds.train = read_id_list(tr, n);
      ds.valid = read_id_list(va, n);
      ds.test = read_id_list(te, n);
      if (!ds.labels.empty()) {
        for (const auto* part : {&ds.train, &ds.valid, &ds.test}) {
          for (vid_t v : *part) {
            if (ds.labels[static_cast<std::size_t>(v)] < 0) {
              COOPGNN_IO_FAIL("{}: split vertex {} has no label (nan) in node-label", sdir.string(),
                              v);
            }
          }
        }
      }
    }
  } else if (!opt.split.empty()) {
    COOPGNN_IO_FAIL("{}: missing directory (asked for --split {})", split_root.string(), opt.split);
  }

  finish_edges(ds, opt, &rep);
  validate_dataset(ds, dir.string());
  return ds;
}

// ---- SNAP ------------------------------------------------------------------------------------

dataset convert_snap(const fs::path& file, const convert_options& opt, convert_report* report) {
  convert_report local;
  convert_report& rep = report != nullptr ? *report : local;
  rep.files_read.push_back(file.string());
  dataset ds;
  ds.name = opt.name.empty() ? default_name(file) : opt.name;
  line_reader in(file);
  std::string_view line;
  vid_t mx = -1;
  while (in.next(line)) {
    std::size_t const b = line.find_first_not_of(" \t");
    if (b == std::string_view::npos || line[b] == '#' || line[b] == '%') continue;
    // First two whitespace-separated tokens.
    std::string_view tok[2];
    std::size_t pos = b;
    for (int k = 0; k < 2; ++k) {
      pos = line.find_first_not_of(" \t,", pos);
      if (pos == std::string_view::npos) {
        in.fail(fmt::format("expected 'src dst', found '{}'", line));
      }
      std::size_t const end = line.find_first_of(" \t,", pos);
      tok[k] = line.substr(pos, end == std::string_view::npos ? line.npos : end - pos);
      pos = end == std::string_view::npos ? line.size() : end;
    }
    // A third column (a weight or a time stamp) is allowed and ignored; more columns mean an
    // adjacency list (e.g. LightGCN's "u i1 i2 ..."), whose other edges must not be dropped.
    int extra = 0;
    for (std::size_t p = line.find_first_not_of(" \t,\r", pos); p != std::string_view::npos;
         p = line.find_first_not_of(" \t,\r", line.find_first_of(" \t,", p))) {
      ++extra;
      if (line.find_first_of(" \t,", p) == std::string_view::npos) break;
    }
    if (extra > 1) {
      in.fail(
          fmt::format("{} columns: a SNAP edge list has 'src dst' and at most one more column "
                      "(weight or time); this looks like an adjacency list",
                      extra + 2));
    }
    vid_t const s = parse_id(tok[0], in, "source id");
    vid_t const d = parse_id(tok[1], in, "destination id");
    mx = std::max({mx, s, d});
    ds.src.push_back(s);
    ds.dst.push_back(d);
  }
  if (ds.src.empty()) COOPGNN_IO_FAIL("{}: no edges (only comments or blank lines)", file.string());
  ds.num_nodes = mx + 1;
  finish_edges(ds, opt, &rep);
  validate_dataset(ds, file.string());
  return ds;
}

// ---- NPZ -------------------------------------------------------------------------------------

dataset convert_npz(const fs::path& file, const convert_options& opt, convert_report* report) {
  convert_report local;
  convert_report& rep = report != nullptr ? *report : local;
  rep.files_read.push_back(file.string());
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

  // Edges
  auto const e_name = pick({"edges", "edge_index"});
  if (!e_name) {
    COOPGNN_IO_FAIL(
        "{}: no edge array: expected a member 'edges' [E, 2] or 'edge_index' [2, E] "
        "(members: {})",
        file.string(), fmt::join(z.members(), ", "));
  }
  {
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

  // Features and labels
  std::optional<std::string> const f_name = pick({"node_features", "x", "features", "feat"});
  std::optional<std::string> const l_name = pick({"node_labels", "y", "labels", "label"});
  if (f_name) {
    auto a = z.read<float>(*f_name);
    if (a.rank() != 2) {
      COOPGNN_IO_FAIL("{}: features must be 2-D (N, F), found {}", what(*f_name),
                      format_npy_shape(a.shape));
    }
    ds.features = matrix<float>(a.shape[0], a.shape[1], std::move(a.data));
    ds.num_nodes = a.shape[0];
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
    ds.num_classes = mx + 1;
  }
  if (!f_name && !l_name) ds.num_nodes = max_id + 1;
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

  finish_edges(ds, opt, &rep);
  validate_dataset(ds, file.string());
  return ds;
}

// ---- LightGCN --------------------------------------------------------------------------------

namespace {

/// Reads one LightGCN file, calling f(in, user, items) per non-blank line "u i1 i2 ...".
/// @returns the number of user lines; @throws io_error for an empty file.
template <typename F>
std::int64_t read_user_lines(const fs::path& file, convert_report& rep, F&& f) {
  rep.files_read.push_back(file.string());
  line_reader in(file);
  std::string_view line;
  std::vector<vid_t> items;
  std::int64_t users = 0;
  while (in.next(line)) {
    if (blank(line)) continue;
    items.clear();
    vid_t user = -1;
    std::size_t pos = line.find_first_not_of(" \t");
    while (pos != std::string_view::npos) {
      std::size_t const end = line.find_first_of(" \t", pos);
      std::string_view const tok =
          line.substr(pos, end == std::string_view::npos ? line.npos : end - pos);
      if (user < 0) {
        user = parse_id(tok, in, "user id");
      } else {
        items.push_back(parse_id(tok, in, "item id"));
      }
      pos = end == std::string_view::npos ? end : line.find_first_not_of(" \t", end);
    }
    f(in, user, items);
    ++users;
  }
  if (users == 0) {
    COOPGNN_IO_FAIL("{}: empty file: expected one line 'user item item ...' per user",
                    file.string());
  }
  return users;
}

}  // namespace

dataset convert_lightgcn(const fs::path& dir, const convert_options& opt, convert_report* report) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    COOPGNN_IO_FAIL("{}: not a directory (a LightGCN dataset directory holds train.txt, test.txt)",
                    dir.string());
  }
  convert_report local;
  convert_report& rep = report != nullptr ? *report : local;
  std::vector<std::pair<vid_t, vid_t>> train;  // (user, item)
  std::vector<std::pair<vid_t, vid_t>> test;
  vid_t max_item = -1;
  vid_t next_user = 0;
  read_user_lines(
      dir / "train.txt", rep, [&](const line_reader& in, vid_t u, const std::vector<vid_t>& items) {
        if (u != next_user) {
          in.fail(
              fmt::format("user id {}, expected {}: train.txt lists users 0..U-1 in order, one "
                          "line each",
                          u, next_user));
        }
        ++next_user;
        for (vid_t i : items) {
          train.emplace_back(u, i);
          max_item = std::max(max_item, i);
        }
      });
  vid_t const users = next_user;
  read_user_lines(
      dir / "test.txt", rep, [&](const line_reader& in, vid_t u, const std::vector<vid_t>& items) {
        if (u >= users) {
          in.fail(fmt::format("user id {} is out of range: train.txt has {} users (ids 0..{})", u,
                              users, users - 1));
        }
        for (vid_t i : items) {
          test.emplace_back(u, i);
          max_item = std::max(max_item, i);
        }
      });
  if (train.empty()) {
    COOPGNN_IO_FAIL("{}: no interactions (every user line is empty)", (dir / "train.txt").string());
  }
  vid_t const items = max_item + 1;
  dataset ds;
  ds.name = opt.name.empty() ? default_name(dir) : opt.name;
  ds.num_nodes = users + items;
  std::sort(train.begin(), train.end());
  std::int64_t const read = static_cast<std::int64_t>(train.size());
  train.erase(std::unique(train.begin(), train.end()), train.end());
  link_task lt;
  lt.name = "link_prediction";
  lt.item_begin = users;
  lt.item_end = users + items;
  for (auto [u, i] : train) {
    lt.train.src.push_back(u);
    lt.train.dst.push_back(users + i);
    ds.src.push_back(u);
    ds.dst.push_back(users + i);
    ds.src.push_back(users + i);
    ds.dst.push_back(u);
  }
  for (auto [u, i] : test) {
    lt.test.src.push_back(u);
    lt.test.dst.push_back(users + i);
  }
  ds.link = std::move(lt);
  edge_stats& st = rep.edges;
  st.edges_read = read;
  st.reverse_edges_added = static_cast<std::int64_t>(train.size());
  st.duplicates_removed = read - static_cast<std::int64_t>(train.size());
  // Sorted by (src, dst), as the other converters leave their edges.
  clean_edges(ds.src, ds.dst, false, false);
  st.edges_final = ds.num_edges();
  validate_dataset(ds, dir.string());
  return ds;
}

dataset convert_dataset(std::string_view from, const fs::path& input, const convert_options& opt,
                        convert_report* report) {
  if (from == "ogb") return convert_ogb(input, opt, report);
  if (from == "snap") return convert_snap(input, opt, report);
  if (from == "npz") return convert_npz(input, opt, report);
  if (from == "lightgcn") return convert_lightgcn(input, opt, report);
  COOPGNN_IO_FAIL("unknown input format '{}' (expected ogb, snap, npz or lightgcn)", from);
}

}  // namespace coopgnn
