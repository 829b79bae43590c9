#include "formats/detail/common.hpp"

#include <fmt/ranges.h>

#include <charconv>
#include <cmath>
#include <limits>
#include <utility>

#include "runtime/core/memory_limit.hpp"
#include "runtime/graph/edges.hpp"

namespace coopgnn::formats::detail {

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

namespace {

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

}  // namespace

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

namespace {

bool looks_numeric(std::string_view tok) {
  double v = 0;
  auto [p, ec] = std::from_chars(tok.data(), tok.data() + tok.size(), v);
  return ec == std::errc() && p == tok.data() + tok.size() && !tok.empty();
}

}  // namespace

/// Reads edge-list lines "src dst [x]" of `file` into ds.src / ds.dst (see convert_snap for the
/// accepted syntax). Ids must be below `limit` when limit >= 0 (`limit_why` says why).
/// @returns the largest id read (-1 for none).
vid_t read_edge_lines(const fs::path& file, dataset& ds, convert_report& rep, vid_t limit,
                      const std::string& limit_why) {
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

namespace {

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

}  // namespace

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


}  // namespace coopgnn::formats::detail
