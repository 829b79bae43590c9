// Shared pieces of the input-format readers (formats/*.cpp): a line reader for plain or gzip
// text, token parsing that names FILE:LINE, the edge-direction policy every reader applies, the
// dense-size checks, and SciPy sparse matrices stored in .npz archives. Internal to the formats
// layer: include formats/formats.hpp from outside.
#pragma once

#include <fmt/format.h>
#include <zlib.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "formats/formats.hpp"
#include "runtime/core/error.hpp"
#include "runtime/core/matrix.hpp"
#include "runtime/graph/npz.hpp"

namespace coopgnn::formats::detail {

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

/// Whether `s` holds only spaces, tabs and carriage returns.
bool blank(std::string_view s);

/// `s` without leading and trailing spaces and tabs.
std::string_view strip(std::string_view s);

/// Parses a whole token as an integer; reports FILE:LINE on failure.
std::int64_t parse_int(std::string_view tok, const line_reader& in, const char* what);

/// parse_int that also refuses a negative id ("WHAT N is a negative vertex id").
vid_t parse_id(std::string_view tok, const line_reader& in, const char* what);

/// v + 1, saturating at the largest vid_t (a vertex count from a largest id).
vid_t plus_one(vid_t v);

/// OGB file stem under `dir`: prefers STEM.csv.gz, then STEM.csv. Empty when neither exists.
std::optional<fs::path> find_csv(const fs::path& dir, const std::string& stem);

/// find_csv, or io_error "DIR/STEM.csv.gz: missing file (WHY; STEM.csv also accepted)".
fs::path require_csv(const fs::path& dir, const std::string& stem, const char* why);

/// A list of vertex ids, one per line (OGB split files), each in [0, n).
std::vector<vid_t> read_id_list(const fs::path& file, vid_t n);

/// The dataset name derived from an input path: its last component without .gz, .txt, .npz or
/// .csv ("dataset" when nothing is left).
std::string default_name(const fs::path& input);

/// Records that `file` is read (report.files_read) and tells report.progress.
void read_file(convert_report& rep, const fs::path& file);

/// Records a decision (report.notes) and tells report.progress.
void note(convert_report& rep, std::string line);

/// @throws io_error for --symmetrize together with --directed.
void check_options(const convert_options& opt);

/// How a converter treats an edge list stored once (every src < dst or every src > dst).
enum class stored_once_policy : std::uint8_t {
  suggest,            ///< keep as stored, note that --symmetrize exists (snap, npz)
  symmetrize,         ///< symmetrize unless --directed (ogb)
  undirected_format,  ///< the format is undirected: always symmetrize unless --directed (musae)
};

/// Detects the stored direction pattern, symmetrizes by `policy` and the options, removes
/// duplicates, and notes what was done. `what` names the edge file in the note.
void finish_edges(dataset& ds, const convert_options& opt, convert_report& rep,
                  const std::string& what, stored_once_policy policy);

/// Splits `line` into fields separated by spaces, tabs and commas (runs count as one).
void split_fields(std::string_view line, std::vector<std::string_view>& out);

/// Reads edge-list lines "src dst [x]" of `file` into ds.src / ds.dst (see convert_snap for the
/// accepted syntax). Ids must be below `limit` when limit >= 0 (`limit_why` says why).
/// @returns the largest id read (-1 for none).
vid_t read_edge_lines(const fs::path& file, dataset& ds, convert_report& rep, vid_t limit = -1,
                      const std::string& limit_why = {});

/// Notes the dense float32 size of a rows x cols matrix made from `source` (a description), then
/// checks it against the memory and disk limits of `opt`, before anything is allocated.
void check_dense_size(const std::string& what, const std::string& source, std::int64_t rows,
                      std::int64_t cols, const convert_options& opt, convert_report& rep);

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
bool has_sparse(const npz_archive& z, const sparse_group& g);

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

/// Reads and checks sparse group `g` of `z` (csr, csc or coo; coo is sorted into csr).
sparse_arrays read_sparse(const npz_archive& z, const sparse_group& g);

/// The dense float32 [rows, cols] matrix of `a` (repeated entries summed, as scipy's toarray),
/// after the size note and limit checks of check_dense_size.
matrix<float> densify(const sparse_arrays& a, const convert_options& opt, convert_report& rep);

/// Node features from a separate file (convert_options::features_file): a SciPy sparse .npz, a
/// .npz with one 2-D member, or a 2-D .npy.
matrix<float> read_feature_file(const fs::path& file, const convert_options& opt,
                                convert_report& rep);

/// The registry entry of each format (formats/<name>.cpp), listed by formats/registry.cpp.
/// Reads the split of an OGB directory into ds.train/valid/test: split/<name>/{train,valid,
/// test}.csv(.gz) (one vertex id per line), <name> = opt.split or the only folder present;
/// nothing when split/ is absent. Ids must be below ds.num_nodes and, when ds.labels is set,
/// labelled. Sets rep.split. @throws io_error naming the folder or file (several folders
/// without opt.split, a missing folder or file, a bad id, an unlabelled split vertex).
void read_ogb_split(const fs::path& dir, const convert_options& opt, convert_report& rep,
                    dataset& ds);

/// Class ids from a label array `a` of shape [n] or [n, 1] (any numeric dtype read as double):
/// NaN and -1 become -1 (unlabelled). @throws io_error "WHAT: ..." for another shape or a value
/// that is not a non-negative integer below 2^31.
std::vector<std::int64_t> class_labels(const npy_array<double>& a, const std::string& what,
                                       std::int64_t n);

/// The largest entry of `labels` (-1 when empty or all unlabelled).
std::int64_t max_label_of(const std::vector<std::int64_t>& labels);

/// The bit patterns of the C-order 2-D float16 array whose whole .npy image is `image` (header
/// `h`), copied at 2 bytes per element. @throws io_error "WHAT: ..." for another dtype or rank,
/// Fortran order, or an image shorter than the header's shape needs.
matrix<std::uint16_t> float16_rows(std::span<const std::byte> image, const npy_header& h,
                                   const std::string& what);

/// Reads OGB's binary node-property layout (raw/data.npz, raw/node-label.npz, the split of
/// read_ogb_split); convert_ogb calls it when raw/num-node-list.csv(.gz) is absent and
/// raw/data.npz exists. Documented with convert_ogb (formats/formats.hpp).
dataset convert_ogb_binary(const fs::path& dir, const convert_options& opt,
                           convert_report* report);

/// The registry entries, one per file (formats/ogb.cpp, ...): each a function-local static,
/// built on first use; formats/registry.cpp lists them in help order. Do not throw beyond
/// std::bad_alloc.
const input_format& ogb_format();
const input_format& snap_format();
const input_format& npz_format();
const input_format& lightgcn_format();
const input_format& musae_format();
const input_format& heco_format();
const input_format& mag240m_format();

}  // namespace coopgnn::formats::detail
