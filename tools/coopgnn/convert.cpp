#include "tools/coopgnn/convert.hpp"

#include <fmt/ranges.h>
#include <zlib.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <utility>

#include "runtime/core/error.hpp"
#include "runtime/core/memory_limit.hpp"
#include "runtime/graph/generate.hpp"
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
    buf_.resize(1 << 16);  // grows when a line is longer; 1 MiB per file cost small inputs dearly
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

/// v + 1, saturating at the largest vid_t (a vertex count from a largest id).
vid_t plus_one(vid_t v) { return v == std::numeric_limits<vid_t>::max() ? v : v + 1; }

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

void read_file(convert_report& rep, const fs::path& file) {
  rep.files_read.push_back(file.string());
  if (rep.progress) rep.progress(fmt::format("read {}", file.string()));
}

void note(convert_report& rep, std::string line) {
  if (rep.progress) rep.progress(line);
  rep.notes.push_back(std::move(line));
}

void check_options(const convert_options& opt) {
  if (opt.symmetrize && opt.directed) {
    COOPGNN_IO_FAIL(
        "--symmetrize and --directed contradict each other: --symmetrize adds reverse edges, "
        "--directed keeps the edges as stored; pass one");
  }
}

/// How a converter treats an edge list stored once (every src < dst or every src > dst).
enum class stored_once_policy : std::uint8_t {
  suggest,            ///< keep as stored, note that --symmetrize exists (snap, npz)
  symmetrize,         ///< symmetrize unless --directed (ogb)
  undirected_format,  ///< the format is undirected: always symmetrize unless --directed (musae)
};

struct order_counts {
  edge_order order = edge_order::none;
  std::int64_t lower = 0;   ///< edges with src < dst
  std::int64_t higher = 0;  ///< edges with src > dst
};

order_counts count_order(const std::vector<vid_t>& src, const std::vector<vid_t>& dst) {
  order_counts c;
  for (std::size_t i = 0; i < src.size(); ++i) {
    c.lower += src[i] < dst[i] ? 1 : 0;
    c.higher += src[i] > dst[i] ? 1 : 0;
  }
  if (c.lower > 0 && c.higher > 0) {
    c.order = edge_order::mixed;
  } else if (c.lower > 0) {
    c.order = edge_order::lower_to_higher;
  } else if (c.higher > 0) {
    c.order = edge_order::higher_to_lower;
  }
  return c;
}

/// Detects the stored direction pattern, symmetrizes by `policy` and the options, removes
/// duplicates, and notes what was done. `what` names the edge file in the note.
void finish_edges(dataset& ds, const convert_options& opt, convert_report& rep,
                  const std::string& what, stored_once_policy policy) {
  order_counts const c = count_order(ds.src, ds.dst);
  rep.order = c.order;
  bool const once =
      c.order == edge_order::lower_to_higher || c.order == edge_order::higher_to_lower;
  bool const automatic = !opt.directed && !opt.symmetrize &&
                         (policy == stored_once_policy::undirected_format ||
                          (policy == stored_once_policy::symmetrize && once));
  bool const sym = opt.symmetrize || automatic;
  std::int64_t const read = ds.num_edges();
  rep.edges = clean_edges(ds.src, ds.dst, sym, opt.drop_self_loops);
  std::int64_t const fin = rep.edges.edges_final;
  std::string msg;
  if (policy == stored_once_policy::undirected_format) {
    msg = sym ? fmt::format(
                    "{}: edges are undirected, each stored once: symmetrized, {} -> {} edges{}",
                    what, read, fin, opt.symmetrize ? "" : "; --directed keeps them as stored")
              : fmt::format(
                    "{}: edges are undirected, each stored once: kept as stored (--directed), {} "
                    "edges",
                    what, fin);
  } else if (once) {
    std::string const head = fmt::format("{}: edges stored once (every src {} dst)", what,
                                         c.order == edge_order::lower_to_higher ? "<" : ">");
    if (automatic) {
      msg = fmt::format("{}: symmetrized, {} -> {} edges; --directed keeps them as stored", head,
                        read, fin);
    } else if (sym) {
      msg = fmt::format("{}: symmetrized (--symmetrize), {} -> {} edges", head, read, fin);
    } else if (policy == stored_once_policy::symmetrize) {
      msg = fmt::format(
          "{}: kept as stored (--directed), {} edges; without --directed they would be "
          "symmetrized",
          head, fin);
    } else {
      msg = fmt::format(
          "{}: kept as stored, {} directed edges; if the graph is undirected, --symmetrize adds "
          "the reverse edges",
          head, fin);
    }
  } else if (c.order == edge_order::mixed) {
    std::string const head =
        fmt::format("{}: edges in both directions ({} with src < dst, {} with src > dst)", what,
                    c.lower, c.higher);
    msg = sym ? fmt::format(
                    "{}: --symmetrize added the missing reverses, {} -> {} edges (pairs already "
                    "stored both ways are not doubled)",
                    head, read, fin)
              : fmt::format("{}: kept as stored, {} edges (--symmetrize adds missing reverses)",
                            head, fin);
  }
  if (!msg.empty()) note(rep, std::move(msg));
}

/// Splits `line` into fields separated by spaces, tabs and commas (runs count as one).
void split_fields(std::string_view line, std::vector<std::string_view>& out) {
  out.clear();
  std::size_t pos = line.find_first_not_of(" \t,");
  while (pos != std::string_view::npos) {
    std::size_t const end = line.find_first_of(" \t,", pos);
    out.push_back(line.substr(pos, end == std::string_view::npos ? line.npos : end - pos));
    pos = end == std::string_view::npos ? end : line.find_first_not_of(" \t,", end);
  }
}

bool looks_numeric(std::string_view tok) {
  double v = 0;
  auto [p, ec] = std::from_chars(tok.data(), tok.data() + tok.size(), v);
  return ec == std::errc() && p == tok.data() + tok.size() && !tok.empty();
}

/// Reads edge-list lines "src dst [x]" of `file` into ds.src / ds.dst (see convert_snap for the
/// accepted syntax). Ids must be below `limit` when limit >= 0 (`limit_why` says why).
/// @returns the largest id read (-1 for none).
vid_t read_edge_lines(const fs::path& file, dataset& ds, convert_report& rep, vid_t limit = -1,
                      const std::string& limit_why = {}) {
  read_file(rep, file);
  line_reader in(file);
  std::string_view line;
  std::vector<std::string_view> tok;
  vid_t mx = -1;
  bool first = true;
  while (in.next(line)) {
    std::size_t const b = line.find_first_not_of(" \t");
    if (b == std::string_view::npos || line[b] == '#' || line[b] == '%') continue;
    split_fields(line, tok);
    if (first) {
      first = false;
      if (std::none_of(tok.begin(), tok.end(), looks_numeric)) {
        note(rep, fmt::format("{}:{}: header line '{}' skipped", in.name(), in.lineno(), line));
        continue;
      }
    }
    if (tok.size() < 2) {
      in.fail(fmt::format(
          "expected 'src dst' (two non-negative integer ids separated by spaces, tabs or a "
          "comma), found '{}'",
          line));
    }
    // A third column (a weight or a time stamp) is allowed and ignored; more columns mean an
    // adjacency list (e.g. LightGCN's "u i1 i2 ..."), whose other edges must not be dropped.
    if (tok.size() > 3) {
      in.fail(
          fmt::format("{} columns: a SNAP edge list has 'src dst' and at most one more column "
                      "(weight or time); this looks like an adjacency list",
                      tok.size()));
    }
    vid_t const s = parse_id(tok[0], in, "source id");
    vid_t const d = parse_id(tok[1], in, "destination id");
    if (limit >= 0 && (s >= limit || d >= limit)) {
      in.fail(fmt::format("edge {} -> {} has an id out of range: {}", s, d, limit_why));
    }
    mx = std::max({mx, s, d});
    ds.src.push_back(s);
    ds.dst.push_back(d);
  }
  return mx;
}

// ---- dense size limits -----------------------------------------------------------------------

/// Notes the dense float32 size of a rows x cols matrix made from `source` (a description), then
/// checks it against the memory and disk limits of `opt`, before anything is allocated.
void check_dense_size(const std::string& what, const std::string& source, std::int64_t rows,
                      std::int64_t cols, const convert_options& opt, convert_report& rep) {
  std::uint64_t const bytes = saturating_bytes(rows, saturating_bytes(cols, sizeof(float)));
  bool const overflow = bytes == std::numeric_limits<std::uint64_t>::max();
  std::string const size =
      fmt::format("{} x {} float32 = {} ({} bytes)", rows, cols, format_bytes(bytes),
                  overflow ? "> 2^64" : fmt::format("{}", bytes));
  note(rep, fmt::format("{}: {} -> dense {}", what, source, size));
  memory_limit const lim = opt.max_dense_bytes > 0
                               ? memory_limit{opt.max_dense_bytes, "--max-dense-bytes"}
                               : host_memory_limit();
  if (lim.bytes != std::numeric_limits<std::uint64_t>::max() && bytes > lim.bytes) {
    COOPGNN_IO_FAIL(
        "{}: dense features {} exceed the memory limit of {} ({} bytes, {}); a dense feature "
        "matrix must fit in memory: reduce the feature width{}",
        what, size, format_bytes(lim.bytes), lim.bytes, lim.source,
        opt.max_dense_bytes > 0 ? ", or raise --max-dense-bytes" : "");
  }
  if (opt.disk_free_bytes == 0 && opt.output_dir.empty()) return;
  std::uint64_t free = opt.disk_free_bytes;
  fs::path at = opt.output_dir;
  if (free == 0) {
    std::error_code ec;
    at = fs::absolute(at, ec);
    while (!at.empty() && !fs::exists(at, ec) && at != at.parent_path()) at = at.parent_path();
    fs::space_info const sp = fs::space(at, ec);
    if (ec) return;  // unknown: the write reports a full disk itself
    free = sp.available;
  }
  if (bytes > free) {
    COOPGNN_IO_FAIL(
        "{}: dense features {} exceed the free disk space of {} ({} bytes) at {}; write the "
        "dataset to a file system with more room",
        what, size, format_bytes(free), free,
        at.empty() ? std::string("the output directory") : at.string());
  }
}

// ---- SciPy sparse matrices in .npz archives ---------------------------------------------------

/// The member names of one SciPy sparse matrix: PREFIX_data, ... (or data, ... for PREFIX "").
struct sparse_group {
  std::string prefix;
  [[nodiscard]] std::string member(std::string_view part) const {
    return prefix.empty() ? std::string(part) : fmt::format("{}_{}", prefix, part);
  }
  [[nodiscard]] std::string label() const {
    return prefix.empty() ? std::string("data/indices/indptr/shape") : prefix + "_*";
  }
};

/// Whether `z` holds sparse group `g` (data, shape and indices + indptr, or row + col for COO);
/// throws for a partial group.
bool has_sparse(const npz_archive& z, const sparse_group& g) {
  bool const coo = z.contains(g.member("row")) || z.contains(g.member("col"));
  std::vector<std::string_view> const parts =
      coo ? std::vector<std::string_view>{"data", "row", "col", "shape"}
          : std::vector<std::string_view>{"data", "indices", "indptr", "shape"};
  std::vector<std::string> present;
  std::vector<std::string> missing;
  for (std::string_view part : parts) {
    (z.contains(g.member(part)) ? present : missing).push_back(g.member(part));
  }
  if (present.empty()) return false;
  if (!missing.empty() && (!g.prefix.empty() || coo)) {
    COOPGNN_IO_FAIL(
        "{}:{}: incomplete SciPy sparse matrix: has {} but not {} (a CSR/CSC matrix is stored as "
        "DATA, INDICES, INDPTR, SHAPE and optionally FORMAT; a COO matrix as DATA, ROW, COL, "
        "SHAPE, FORMAT{})",
        z.path().string(), g.label(), fmt::join(present, ", "), fmt::join(missing, ", "),
        g.prefix.empty() ? std::string() : fmt::format(", each prefixed {}_", g.prefix));
  }
  return missing.empty();
}

/// A 0-d byte or unicode string member (numpy dtype S or U), as scipy.sparse.save_npz writes
/// `format` (np.array(b'csr')). The .npy reader does not read strings, so the header is read here.
std::string npz_string(const npz_archive& z, const std::string& name) {
  std::vector<std::byte> const b = z.read_bytes(name);
  std::string const what = fmt::format("{}:{}", z.path().string(), name);
  auto byte = [&](std::size_t i) { return static_cast<unsigned char>(b[i]); };
  if (b.size() < 10 || std::memcmp(b.data(), "\x93NUMPY", 6) != 0) {
    COOPGNN_IO_FAIL("{}: not a .npy member (no \\x93NUMPY magic)", what);
  }
  std::size_t hlen = byte(8) | (static_cast<std::size_t>(byte(9)) << 8);
  std::size_t off = 10;
  if (byte(6) >= 2) {
    if (b.size() < 12) COOPGNN_IO_FAIL("{}: truncated .npy header", what);
    hlen |= (static_cast<std::size_t>(byte(10)) << 16) | (static_cast<std::size_t>(byte(11)) << 24);
    off = 12;
  }
  if (off + hlen > b.size()) COOPGNN_IO_FAIL("{}: truncated .npy header", what);
  std::string_view const header(reinterpret_cast<const char*>(b.data()) + off, hlen);
  std::string descr;
  if (std::size_t k = header.find("'descr'"); k != std::string_view::npos) {
    std::size_t const q1 = header.find('\'', k + 7);
    std::size_t const q2 = q1 == std::string_view::npos ? q1 : header.find('\'', q1 + 1);
    if (q2 != std::string_view::npos) descr = std::string(header.substr(q1 + 1, q2 - q1 - 1));
  }
  std::string_view d = descr;
  if (!d.empty() && (d[0] == '|' || d[0] == '<' || d[0] == '>' || d[0] == '=')) d.remove_prefix(1);
  std::size_t width = 0;
  if (d.size() >= 2) std::from_chars(d.data() + 1, d.data() + d.size(), width);
  std::string_view const data(reinterpret_cast<const char*>(b.data()) + off + hlen,
                              b.size() - off - hlen);
  std::string out;
  if (!d.empty() && (d[0] == 'S' || d[0] == 'a') && width <= data.size()) {
    out.assign(data.substr(0, width));
  } else if (!d.empty() && d[0] == 'U' && descr[0] != '>' && width <= data.size() / 4) {
    for (std::size_t i = 0; i < width; ++i) {
      unsigned char const ch = static_cast<unsigned char>(data[4 * i]);
      out.push_back(data[4 * i + 1] == 0 && ch < 128 ? static_cast<char>(ch) : '?');
    }
  } else {
    COOPGNN_IO_FAIL("{}: expected a string such as b'csr' (numpy dtype S or U), found dtype '{}'",
                    what, descr);
  }
  while (!out.empty() && out.back() == '\0') out.pop_back();
  return out;
}

/// One SciPy CSR or CSC matrix read from its members, checked.
struct sparse_arrays {
  bool csc = false;
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::vector<std::int64_t> indptr;   ///< [major + 1]
  std::vector<std::int64_t> indices;  ///< [nnz] minor index of each stored entry
  std::vector<float> data;            ///< [nnz]
  std::string what;                   ///< "ARCHIVE:GROUP" for messages
};

sparse_arrays read_sparse(const npz_archive& z, const sparse_group& g) {
  sparse_arrays a;
  std::string const file = z.path().string();
  bool const coo_members = z.contains(g.member("row"));
  a.what = fmt::format("{}:{}", file, g.label());
  {
    auto const sh = z.read<std::int64_t>(g.member("shape"));
    if (sh.rank() != 1 || sh.size() != 2 || sh.data[0] < 0 || sh.data[1] < 0) {
      COOPGNN_IO_FAIL("{}:{}: expected 2 non-negative integers (rows, cols), found shape {}", file,
                      g.member("shape"), format_npy_shape(sh.shape));
    }
    a.rows = sh.data[0];
    a.cols = sh.data[1];
  }
  std::string format = coo_members ? "coo" : "csr";
  if (z.contains(g.member("format"))) format = npz_string(z, g.member("format"));
  if (format != "csr" && format != "csc" && format != "coo") {
    COOPGNN_IO_FAIL(
        "{}:{}: sparse format '{}' is not supported: expected b'csr', b'csc' or b'coo' (convert "
        "with m.tocsr() before scipy.sparse.save_npz)",
        file, g.member("format"), format);
  }
  a.csc = format == "csc";
  a.data = z.read<float>(g.member("data")).data;
  if (format == "coo") {
    // Counting sort by row into CSR (entries of a row keep their order).
    auto const r = z.read<std::int64_t>(g.member("row")).data;
    auto const c = z.read<std::int64_t>(g.member("col")).data;
    if (r.size() != c.size() || r.size() != a.data.size()) {
      COOPGNN_IO_FAIL("{}: {} rows, {} cols and {} values must have equal lengths", a.what,
                      r.size(), c.size(), a.data.size());
    }
    a.indptr.assign(static_cast<std::size_t>(a.rows) + 1, 0);
    for (std::size_t p = 0; p < r.size(); ++p) {
      if (r[p] < 0 || r[p] >= a.rows || c[p] < 0 || c[p] >= a.cols) {
        COOPGNN_IO_FAIL("{}: entry {} = ({}, {}) is out of range: the matrix is {} x {}", a.what, p,
                        r[p], c[p], a.rows, a.cols);
      }
      ++a.indptr[r[p] + 1];
    }
    for (std::int64_t i = 0; i < a.rows; ++i) a.indptr[i + 1] += a.indptr[i];
    std::vector<std::int64_t> next(a.indptr.begin(), a.indptr.end() - 1);
    a.indices.resize(r.size());
    std::vector<float> vals(r.size());
    for (std::size_t p = 0; p < r.size(); ++p) {
      auto const at = static_cast<std::size_t>(next[r[p]]++);
      a.indices[at] = c[p];
      vals[at] = a.data[p];
    }
    a.data = std::move(vals);
    return a;
  }
  a.indptr = z.read<std::int64_t>(g.member("indptr")).data;
  a.indices = z.read<std::int64_t>(g.member("indices")).data;
  std::int64_t const major = a.csc ? a.cols : a.rows;
  std::int64_t const minor = a.csc ? a.rows : a.cols;
  auto const nnz = static_cast<std::int64_t>(a.indices.size());
  if (static_cast<std::int64_t>(a.indptr.size()) != major + 1) {
    COOPGNN_IO_FAIL("{}:{}: {} entries, expected {} ({} + 1 for a {} {} x {} matrix)", file,
                    g.member("indptr"), a.indptr.size(), major + 1, major, format, a.rows, a.cols);
  }
  if (static_cast<std::int64_t>(a.data.size()) != nnz) {
    COOPGNN_IO_FAIL("{}:{}: {} values but {} has {} indices", file, g.member("data"), a.data.size(),
                    g.member("indices"), nnz);
  }
  if (a.indptr[0] != 0 || a.indptr[major] != nnz) {
    COOPGNN_IO_FAIL("{}:{}: must start at 0 and end at the number of indices {}, found {} ... {}",
                    file, g.member("indptr"), nnz, a.indptr[0], a.indptr[major]);
  }
  for (std::int64_t k = 0; k < major; ++k) {
    if (a.indptr[k + 1] < a.indptr[k]) {
      COOPGNN_IO_FAIL("{}:{}: decreases at entry {} ({} -> {}); indptr must be non-decreasing",
                      file, g.member("indptr"), k + 1, a.indptr[k], a.indptr[k + 1]);
    }
  }
  for (std::int64_t p = 0; p < nnz; ++p) {
    if (a.indices[p] < 0 || a.indices[p] >= minor) {
      COOPGNN_IO_FAIL("{}:{}: entry {} = {} is out of range: the matrix has {} {}", file,
                      g.member("indices"), p, a.indices[p], minor, a.csc ? "rows" : "columns");
    }
  }
  return a;
}

/// The dense float32 [rows, cols] matrix of `a` (repeated entries summed, as scipy's toarray),
/// after the size note and limit checks of check_dense_size.
matrix<float> densify(const sparse_arrays& a, const convert_options& opt, convert_report& rep) {
  check_dense_size(a.what,
                   fmt::format("sparse {} {} x {} with {} stored entries", a.csc ? "csc" : "csr",
                               a.rows, a.cols, a.indices.size()),
                   a.rows, a.cols, opt, rep);
  matrix<float> m(a.rows, a.cols);
  std::int64_t const major = a.csc ? a.cols : a.rows;
  for (std::int64_t k = 0; k < major; ++k) {
    for (std::int64_t p = a.indptr[k]; p < a.indptr[k + 1]; ++p) {
      std::int64_t const j = a.indices[p];
      (a.csc ? m(j, k) : m(k, j)) += a.data[p];
    }
  }
  return m;
}

/// Node features from a separate file (convert_options::features_file).
matrix<float> read_feature_file(const fs::path& file, const convert_options& opt,
                                convert_report& rep) {
  read_file(rep, file);
  if (file.extension() == ".npy") {
    auto a = read_npy<float>(file);
    if (a.rank() != 2) {
      COOPGNN_IO_FAIL("{}: features must be 2-D (N, F), found {}", file.string(),
                      format_npy_shape(a.shape));
    }
    return {a.shape[0], a.shape[1], std::move(a.data)};
  }
  npz_archive const z(file);
  if (has_sparse(z, {})) return densify(read_sparse(z, {}), opt, rep);
  if (z.members().size() == 1) {
    auto a = z.read<float>(z.members()[0]);
    if (a.rank() == 2) return {a.shape[0], a.shape[1], std::move(a.data)};
  }
  COOPGNN_IO_FAIL(
      "{}: expected a SciPy sparse matrix (members data, indices, indptr, shape, format, as "
      "scipy.sparse.save_npz writes them) or a single 2-D array, or a 2-D .npy file; members: {}",
      file.string(), fmt::join(z.members(), ", "));
}

}  // namespace

// ---- OGB -------------------------------------------------------------------------------------

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
      for (const auto& p : {tr, va, te}) read_file(rep, p.string());
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

  finish_edges(ds, opt, rep, e_file.string(), stored_once_policy::symmetrize);
  validate_dataset(ds, dir.string());
  return ds;
}

// ---- SNAP ------------------------------------------------------------------------------------

dataset convert_snap(const fs::path& file, const convert_options& opt, convert_report* report) {
  check_options(opt);
  convert_report local;
  convert_report& rep = report != nullptr ? *report : local;
  dataset ds;
  ds.name = opt.name.empty() ? default_name(file) : opt.name;
  vid_t const mx = read_edge_lines(file, ds, rep);
  if (ds.src.empty()) COOPGNN_IO_FAIL("{}: no edges (only comments or blank lines)", file.string());
  check_declared_nodes(file.string(), "|V| (1 + the largest vertex id)", plus_one(mx));
  ds.num_nodes = mx + 1;
  finish_edges(ds, opt, rep, file.string(), stored_once_policy::suggest);
  validate_dataset(ds, file.string());
  return ds;
}

// ---- NPZ -------------------------------------------------------------------------------------

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

// ---- LightGCN --------------------------------------------------------------------------------

namespace {

/// Reads one LightGCN file, calling f(in, user, items) per non-blank line "u i1 i2 ...".
/// @returns the number of user lines; @throws io_error for an empty file.
template <typename F>
std::int64_t read_user_lines(const fs::path& file, convert_report& rep, F&& f) {
  read_file(rep, file.string());
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
  vid_t const items = plus_one(max_item);
  check_declared_nodes(
      (dir / "train.txt").string() + ", test.txt", "|V| (users + 1 + the largest item id)",
      items > std::numeric_limits<vid_t>::max() - users ? std::numeric_limits<vid_t>::max()
                                                        : users + items);
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

// ---- MUSAE -----------------------------------------------------------------------------------

namespace {

/// Splits one CSV record (RFC 4180: a field in double quotes may hold commas, "" is a quote).
/// @returns false for an unterminated quote.
bool split_csv(std::string_view line, std::vector<std::string>& out) {
  out.clear();
  std::string field;
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    char const ch = line[i];
    if (quoted) {
      if (ch == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        field.push_back('"');
        ++i;
      } else if (ch == '"') {
        quoted = false;
      } else {
        field.push_back(ch);
      }
    } else if (ch == '"') {
      quoted = true;
    } else if (ch == ',') {
      out.push_back(std::move(field));
      field.clear();
    } else {
      field.push_back(ch);
    }
  }
  out.push_back(std::move(field));
  return !quoted;
}

/// The one regular file in `dir` whose name ends in `suffix`.
fs::path find_by_suffix(const fs::path& dir, std::string_view suffix) {
  std::vector<std::string> all;
  std::vector<fs::path> hits;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (!e.is_regular_file()) continue;
    std::string const f = e.path().filename().string();
    all.push_back(f);
    if (f.size() > suffix.size() && f.ends_with(suffix)) hits.push_back(e.path());
  }
  std::sort(all.begin(), all.end());
  std::sort(hits.begin(), hits.end());
  if (hits.empty()) {
    COOPGNN_IO_FAIL(
        "{}: missing file NAME{} (a MUSAE directory holds NAME_edges.csv, NAME_target.csv and "
        "NAME_features.json; files here: {})",
        dir.string(), suffix,
        all.empty() ? std::string("none") : fmt::format("{}", fmt::join(all, ", ")));
  }
  if (hits.size() > 1) {
    std::vector<std::string> names;
    for (const auto& h : hits) names.push_back(h.filename().string());
    COOPGNN_IO_FAIL("{}: several files NAME{} ({}): a MUSAE directory holds one dataset",
                    dir.string(), suffix, fmt::join(names, ", "));
  }
  return hits[0];
}

std::int64_t column_index(const std::vector<std::string>& cols, std::string_view name) {
  auto const it = std::find(cols.begin(), cols.end(), name);
  return it == cols.end() ? -1 : static_cast<std::int64_t>(it - cols.begin());
}

}  // namespace

dataset convert_musae(const fs::path& dir, const convert_options& opt, convert_report* report) {
  check_options(opt);
  COOPGNN_EXPECTS(opt.train_fraction >= 0 && opt.valid_fraction >= 0 &&
                      opt.train_fraction + opt.valid_fraction <= 1.0 + 1e-12,
                  "--train-fraction {} and --valid-fraction {} must be in [0, 1] and sum to at "
                  "most 1",
                  opt.train_fraction, opt.valid_fraction);
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    COOPGNN_IO_FAIL(
        "{}: not a directory (a MUSAE dataset directory holds NAME_edges.csv, NAME_target.csv "
        "and NAME_features.json)",
        dir.string());
  }
  convert_report local;
  convert_report& rep = report != nullptr ? *report : local;
  fs::path const e_file = find_by_suffix(dir, "_edges.csv");
  fs::path const t_file = find_by_suffix(dir, "_target.csv");
  fs::path const f_file = find_by_suffix(dir, "_features.json");
  dataset ds;
  std::string const stem = e_file.filename().string();
  ds.name = opt.name.empty() ? stem.substr(0, stem.size() - std::strlen("_edges.csv")) : opt.name;

  // Targets: one row per node, N = rows, ids 0..N-1.
  read_file(rep, t_file);
  std::vector<std::string> cols;
  std::int64_t id_col = -1;
  std::int64_t label_col = -1;
  struct row {
    vid_t id;
    std::string label;
    std::int64_t line;
  };
  std::vector<row> rows;
  {
    line_reader in(t_file);
    std::string_view line;
    std::vector<std::string> fields;
    while (in.next(line)) {
      if (blank(line)) continue;
      if (!split_csv(line, fields)) in.fail("unterminated quoted field");
      if (cols.empty()) {
        cols = fields;
        std::string id_name = opt.id_column;
        if (id_name.empty()) id_name = column_index(cols, "new_id") >= 0 ? "new_id" : "id";
        id_col = column_index(cols, id_name);
        if (id_col < 0) {
          in.fail(
              fmt::format("no node id column '{}'; columns are: {}; choose one with "
                          "--id-column NAME",
                          id_name, fmt::join(cols, ", ")));
        }
        if (!opt.label_column.empty()) {
          label_col = column_index(cols, opt.label_column);
          if (label_col < 0) {
            in.fail(fmt::format("no label column '{}' (--label-column); columns are: {}",
                                opt.label_column, fmt::join(cols, ", ")));
          }
        } else {
          for (std::string_view c : kMusaeLabelColumns) {
            if ((label_col = column_index(cols, c)) >= 0) break;
          }
          if (label_col < 0) {
            in.fail(
                fmt::format("no label column (tried {}); columns are: {}; choose one with "
                            "--label-column NAME",
                            fmt::join(kMusaeLabelColumns, ", "), fmt::join(cols, ", ")));
          }
        }
        continue;
      }
      if (fields.size() != cols.size()) {
        in.fail(fmt::format("{} fields, but the header has {} columns ({})", fields.size(),
                            cols.size(), fmt::join(cols, ", ")));
      }
      vid_t const id = parse_id(fields[id_col], in, "node id");
      std::string const& label = fields[label_col];
      if (strip(label).empty()) {
        in.fail(fmt::format("empty value in label column '{}'", cols[label_col]));
      }
      rows.push_back({id, std::string(strip(label)), in.lineno()});
    }
    if (rows.empty()) {
      COOPGNN_IO_FAIL("{}: no rows: expected a header and one row per node", t_file.string());
    }
  }
  auto const n = static_cast<vid_t>(rows.size());
  ds.num_nodes = n;
  std::vector<const std::string*> label_of(static_cast<std::size_t>(n), nullptr);
  for (const row& r : rows) {
    if (r.id >= n) {
      COOPGNN_IO_FAIL("{}:{}: node id {} is out of range: {} rows, so ids must be 0..{}",
                      t_file.string(), r.line, r.id, n, n - 1);
    }
    if (label_of[r.id] != nullptr) {
      COOPGNN_IO_FAIL("{}:{}: node id {} appears twice", t_file.string(), r.line, r.id);
    }
    label_of[r.id] = &r.label;
  }
  std::string const& lname = cols[label_col];
  bool const integer = std::all_of(rows.begin(), rows.end(), [](const row& r) {
    std::int64_t v = 0;
    auto [p, e] = std::from_chars(r.label.data(), r.label.data() + r.label.size(), v);
    return e == std::errc() && p == r.label.data() + r.label.size();
  });
  ds.labels.resize(static_cast<std::size_t>(n));
  if (integer) {
    for (const row& r : rows) {
      std::int64_t v = 0;
      std::from_chars(r.label.data(), r.label.data() + r.label.size(), v);
      if (v < 0) {
        COOPGNN_IO_FAIL("{}:{}: label {} in column '{}' is negative: class ids start at 0",
                        t_file.string(), r.line, v, lname);
      }
      ds.labels[r.id] = v;
    }
    ds.num_classes = classes_from_max_label(*std::max_element(ds.labels.begin(), ds.labels.end()),
                                            t_file.string());
    note(rep, fmt::format("{}: labels from column '{}': integer class ids, {} classes (max + 1)",
                          t_file.string(), lname, ds.num_classes));
  } else {
    std::map<std::string, std::int64_t> ids;
    for (const row& r : rows) ids.emplace(r.label, 0);
    std::int64_t next = 0;
    std::vector<std::string> shown;
    for (auto& [value, id] : ids) {
      id = next++;
      shown.push_back(fmt::format("{}={}", value, id));
    }
    for (const row& r : rows) ds.labels[r.id] = ids.at(r.label);
    ds.num_classes = next;
    note(rep, fmt::format("{}: labels from column '{}': {} distinct values mapped to class ids "
                          "0..{} in sorted order{}",
                          t_file.string(), lname, next, next - 1,
                          next <= 20 ? fmt::format(" ({})", fmt::join(shown, ", ")) : ""));
  }

  // Edges
  (void)read_edge_lines(e_file, ds, rep, n,
                        fmt::format("{} has {} nodes (ids 0..{})", t_file.string(), n, n - 1));
  if (ds.src.empty()) COOPGNN_IO_FAIL("{}: no edges", e_file.string());

  // Features: {"node id": [feature ids...]}
  read_file(rep, f_file);
  nlohmann::json j;
  {
    std::ifstream f(f_file, std::ios::binary);
    if (!f) COOPGNN_IO_FAIL("{}: cannot open", f_file.string());
    try {
      j = nlohmann::json::parse(f);
    } catch (const nlohmann::json::exception& e) {
      COOPGNN_IO_FAIL(
          "{}: not valid JSON: {} (expected an object {{\"node id\": [feature ids, ...]}})",
          f_file.string(), e.what());
    }
  }
  if (!j.is_object()) {
    COOPGNN_IO_FAIL("{}: expected a JSON object {{\"node id\": [feature ids, ...]}}, found {}",
                    f_file.string(), j.type_name());
  }
  std::int64_t max_feature = -1;
  std::int64_t listed = 0;
  for (const auto& [key, value] : j.items()) {
    std::int64_t v = -1;
    auto [p, e] = std::from_chars(key.data(), key.data() + key.size(), v);
    if (e != std::errc() || p != key.data() + key.size() || v < 0 || v >= n) {
      COOPGNN_IO_FAIL("{}: key \"{}\" is not a node id: expected an integer 0..{} ({} has {} rows)",
                      f_file.string(), key, n - 1, t_file.string(), n);
    }
    bool ok = value.is_array();
    for (const auto& x : value) {
      ok = ok && x.is_number_integer() && x.get<std::int64_t>() >= 0 &&
           x.get<std::int64_t>() < std::numeric_limits<std::int64_t>::max();
      if (ok) max_feature = std::max(max_feature, x.get<std::int64_t>());
    }
    if (!ok) {
      // Shown as JSON only when flat: dump() recurses, and a deeply nested value (accepted by
      // the iterative parser) would overflow the stack.
      bool const flat = std::all_of(value.begin(), value.end(),
                                    [](const nlohmann::json& x) { return x.is_primitive(); });
      std::string shown =
          flat ? value.dump() : fmt::format("{} holding arrays or objects", value.type_name());
      if (shown.size() > 60) shown = shown.substr(0, 57) + "...";
      COOPGNN_IO_FAIL(
          "{}: key \"{}\": expected an array of non-negative integer feature ids, found {}",
          f_file.string(), key, shown);
    }
    listed += static_cast<std::int64_t>(value.size());
  }
  if (max_feature >= 0) {
    check_dense_size(
        f_file.string(),
        fmt::format("bag of words, {} feature ids listed for {} of {} nodes", listed, j.size(), n),
        n, max_feature + 1, opt, rep);
    ds.features = matrix<float>(n, max_feature + 1);
    for (const auto& [key, value] : j.items()) {
      vid_t const v = std::stoll(key);
      for (const auto& x : value) ds.features(v, x.get<std::int64_t>()) += 1.0f;
    }
  } else {
    note(rep, fmt::format("{}: no feature ids listed: no features", f_file.string()));
  }

  finish_edges(ds, opt, rep, e_file.string(), stored_once_policy::undirected_format);
  keyed_split(ds, opt.train_fraction, opt.valid_fraction, opt.seed);
  rep.split = fmt::format("random {}/{}/{} (fractions {}/{}, keyed, seed {})", ds.train.size(),
                          ds.valid.size(), ds.test.size(), opt.train_fraction, opt.valid_fraction,
                          opt.seed);
  validate_dataset(ds, dir.string());
  return ds;
}

// ---- HeCo ------------------------------------------------------------------------------------

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

dataset convert_dataset(std::string_view from, const fs::path& input, const convert_options& opt,
                        convert_report* report) {
  convert_report local;
  convert_report& rep = report != nullptr ? *report : local;
  check_options(opt);
  bool const takes_features = from == "ogb" || from == "snap" || from == "npz";
  if (!opt.features_file.empty() && (from == "lightgcn" || from == "musae" || from == "heco")) {
    COOPGNN_IO_FAIL("{}: --features applies to ogb, snap and npz inputs, not {}",
                    opt.features_file.string(), from);
  }
  dataset ds;
  if (from == "ogb") {
    ds = convert_ogb(input, opt, &rep);
  } else if (from == "snap") {
    ds = convert_snap(input, opt, &rep);
  } else if (from == "npz") {
    ds = convert_npz(input, opt, &rep);
  } else if (from == "lightgcn") {
    ds = convert_lightgcn(input, opt, &rep);
  } else if (from == "musae") {
    ds = convert_musae(input, opt, &rep);
  } else if (from == "heco") {
    ds = convert_heco(input, opt, &rep);
  } else {
    COOPGNN_IO_FAIL("unknown input format '{}' (expected ogb, snap, npz, lightgcn, musae or heco)",
                    from);
  }
  if (takes_features && !opt.features_file.empty()) {
    if (ds.feature_dim() > 0) {
      COOPGNN_IO_FAIL("{}: --features given, but {} already has {} features per node",
                      opt.features_file.string(), input.string(), ds.feature_dim());
    }
    matrix<float> x = read_feature_file(opt.features_file, opt, rep);
    bool const grow = from == "snap" && x.rows() > ds.num_nodes;
    if (x.rows() != ds.num_nodes && !grow) {
      COOPGNN_IO_FAIL("{}: {} feature rows, but {} has {} nodes", opt.features_file.string(),
                      x.rows(), input.string(), ds.num_nodes);
    }
    if (grow) {
      note(rep, fmt::format("{}: {} feature rows: vertices {}..{} have no edges",
                            opt.features_file.string(), x.rows(), ds.num_nodes, x.rows() - 1));
      ds.num_nodes = x.rows();
    }
    ds.features = std::move(x);
    validate_dataset(ds, input.string());
  }
  return ds;
}

}  // namespace coopgnn
