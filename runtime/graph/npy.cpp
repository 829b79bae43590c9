#include "runtime/graph/npy.hpp"

#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <limits>
#include <system_error>
#include <type_traits>
#include <utility>

#include "runtime/core/error.hpp"
#include "runtime/core/memory_limit.hpp"
#include "runtime/graph/npy_columns.hpp"

namespace coopgnn {

static_assert(std::endian::native == std::endian::little,
              "the .npy reader and writer assume a little-endian host");

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr std::size_t kMagicLen = 6;
constexpr std::size_t kAlign = 64;

std::string path_str(const std::filesystem::path& p) { return p.string(); }

// ---- header dict parser --------------------------------------------------------------------

/// A tiny recursive-descent parser for the Python dict literal of a .npy header.
class header_parser {
 public:
  header_parser(std::string_view text, const std::string& what) : s_(text), what_(what) {}

  void parse(npy_header& h) {
    bool have_descr = false;
    bool have_order = false;
    bool have_shape = false;
    skip_ws();
    expect('{');
    while (true) {
      skip_ws();
      if (peek() == '}') {
        ++pos_;
        break;
      }
      std::string const key = parse_string();
      skip_ws();
      expect(':');
      skip_ws();
      if (key == "descr") {
        if (peek() == '[') {
          fail("structured dtype (a list descr) is not supported; save a plain numeric array");
        }
        h.dtype = parse_descr(parse_string());
        have_descr = true;
      } else if (key == "fortran_order") {
        h.fortran_order = parse_bool();
        have_order = true;
      } else if (key == "shape") {
        h.shape = parse_shape();
        have_shape = true;
      } else {
        fail(fmt::format("unexpected key '{}' in the header dict", key));
      }
      skip_ws();
      if (peek() == ',') {
        ++pos_;
      } else if (peek() != '}') {
        fail(fmt::format("expected ',' or '}}' at header offset {}", pos_));
      }
    }
    skip_ws();
    if (pos_ != s_.size()) fail("unexpected text after the header dict");
    if (!have_descr) fail("the header dict has no 'descr' key");
    if (!have_order) fail("the header dict has no 'fortran_order' key");
    if (!have_shape) fail("the header dict has no 'shape' key");
  }

 private:
  [[noreturn]] void fail(const std::string& msg) const {
    COOPGNN_IO_FAIL("{}: invalid .npy header: {}", what_, msg);
  }
  [[noreturn]] void fail_dtype(const std::string& d, const char* why) const {
    COOPGNN_IO_FAIL("{}: unsupported dtype '{}' ({})", what_, d, why);
  }
  char peek() const { return pos_ < s_.size() ? s_[pos_] : '\0'; }
  void skip_ws() {
    while (pos_ < s_.size() &&
           (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r')) {
      ++pos_;
    }
  }
  void expect(char c) {
    if (peek() != c) fail(fmt::format("expected '{}' at header offset {}", c, pos_));
    ++pos_;
  }
  std::string parse_string() {
    char const q = peek();
    if (q != '\'' && q != '"') fail(fmt::format("expected a quoted string at offset {}", pos_));
    ++pos_;
    std::size_t const end = s_.find(q, pos_);
    if (end == std::string_view::npos) fail("unterminated string");
    std::string out(s_.substr(pos_, end - pos_));
    pos_ = end + 1;
    return out;
  }
  bool parse_bool() {
    if (s_.substr(pos_, 4) == "True") {
      pos_ += 4;
      return true;
    }
    if (s_.substr(pos_, 5) == "False") {
      pos_ += 5;
      return false;
    }
    fail(fmt::format("fortran_order must be True or False (offset {})", pos_));
  }
  std::vector<std::int64_t> parse_shape() {
    std::vector<std::int64_t> shape;
    expect('(');
    while (true) {
      skip_ws();
      if (peek() == ')') {
        ++pos_;
        break;
      }
      bool neg = false;
      if (peek() == '-') {
        neg = true;
        ++pos_;
      }
      if (peek() < '0' || peek() > '9') fail(fmt::format("expected an integer in 'shape'"));
      std::int64_t v = 0;
      while (peek() >= '0' && peek() <= '9') {
        if (v > (std::numeric_limits<std::int64_t>::max() - 9) / 10) fail("dimension overflows");
        v = v * 10 + (peek() - '0');
        ++pos_;
      }
      if (peek() == 'L') ++pos_;  // Python 2 long suffix
      if (neg) fail(fmt::format("negative dimension -{} in 'shape'", v));
      shape.push_back(v);
      skip_ws();
      if (peek() == ',') {
        ++pos_;
      } else if (peek() != ')') {
        fail("expected ',' or ')' in 'shape'");
      }
    }
    return shape;
  }
  npy_dtype parse_descr(const std::string& d) {
    if (d.size() < 2) fail(fmt::format("unsupported dtype '{}'", d));
    char const order = d[0];
    char kind = d[1];
    std::string size_str = d.substr(2);
    if (order != '<' && order != '>' && order != '|' && order != '=') {
      // A descr without byte-order character, e.g. "u1".
      kind = d[0];
      size_str = d.substr(1);
    }
    int size = 0;
    for (char c : size_str) {
      if (c < '0' || c > '9' || size > 1000) {
        size = -1;
        break;
      }
      size = size * 10 + (c - '0');
    }
    auto unsupported = [&](const char* why) { fail_dtype(d, why); };
    switch (kind) {
      case 'O':
        fail_dtype(d,
                   "object arrays hold pickled Python objects and cannot be read; save a "
                   "numeric array");
      case 'U':
      case 'S':
      case 'a':
        fail_dtype(d, "string arrays are not supported");
      case 'V':
        fail_dtype(d, "void or structured arrays are not supported");
      case 'c':
        fail_dtype(d, "complex numbers are not supported");
      case 'M':
      case 'm':
        fail_dtype(d, "datetime arrays are not supported");
      default:
        break;
    }
    if (order == '>' && size > 1) {
      unsupported(
          "big-endian data is not supported; convert with arr.astype(arr.dtype.newbyteorder"
          "('<'))");
    }
    switch (kind) {
      case 'b':
        if (size == 1) return npy_dtype::bool_;
        break;
      case 'i':
        if (size == 1) return npy_dtype::int8;
        if (size == 2) return npy_dtype::int16;
        if (size == 4) return npy_dtype::int32;
        if (size == 8) return npy_dtype::int64;
        break;
      case 'u':
        if (size == 1) return npy_dtype::uint8;
        if (size == 2) return npy_dtype::uint16;
        if (size == 4) return npy_dtype::uint32;
        if (size == 8) return npy_dtype::uint64;
        break;
      case 'f':
        if (size == 4) return npy_dtype::float32;
        if (size == 8) return npy_dtype::float64;
        if (size == 2) return npy_dtype::float16;
        break;
      default:
        break;
    }
    unsupported(
        "not a numeric dtype coopgnn reads: bool, int8..int64, uint8..uint64, float16, "
        "float32, float64");
    return npy_dtype::float32;  // unreachable
  }

  std::string_view s_;
  const std::string& what_;
  std::size_t pos_ = 0;
};

std::uint32_t read_le(const std::byte* p, int n) {
  std::uint32_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | static_cast<std::uint8_t>(p[i]);
  return v;
}

// ---- element conversion --------------------------------------------------------------------

template <typename S>
S load(const std::byte* p) {
  S v;
  std::memcpy(&v, p, sizeof(S));
  return v;
}

template <typename T, typename S>
void convert_from(const std::byte* src, T* dst, std::size_t n, npy_dtype stored,
                  const std::string& what) {
  for (std::size_t i = 0; i < n; ++i) {
    S const v = load<S>(src + i * sizeof(S));
    if constexpr (std::is_floating_point_v<T>) {
      dst[i] = static_cast<T>(v);
    } else if constexpr (std::is_floating_point_v<S>) {
      constexpr int digits = std::numeric_limits<T>::digits;
      double const hi = std::ldexp(1.0, digits);  // exclusive
      double const lo = std::is_signed_v<T> ? -hi : 0.0;
      double const d = static_cast<double>(v);
      if (!std::isfinite(d) || d != std::trunc(d) || d < lo || d >= hi) {
        COOPGNN_IO_FAIL(
            "{}: element {} = {} cannot be converted from {} to an integer type "
            "({} digits): it is not a whole number in range",
            what, i, d, npy_dtype_name(stored), digits);
      }
      dst[i] = static_cast<T>(d);
    } else {
      if (!std::in_range<T>(v)) {
        COOPGNN_IO_FAIL(
            "{}: element {} = {} does not fit in the requested integer type "
            "(converting from {})",
            what, i, v, npy_dtype_name(stored));
      }
      dst[i] = static_cast<T>(v);
    }
  }
}

template <typename T>
void convert(const std::byte* src, T* dst, std::size_t n, npy_dtype stored,
             const std::string& what) {
  switch (stored) {
    case npy_dtype::bool_:
      for (std::size_t i = 0; i < n; ++i) dst[i] = static_cast<T>(src[i] != std::byte{0});
      return;
    case npy_dtype::int8:
      return convert_from<T, std::int8_t>(src, dst, n, stored, what);
    case npy_dtype::uint8:
      return convert_from<T, std::uint8_t>(src, dst, n, stored, what);
    case npy_dtype::int16:
      return convert_from<T, std::int16_t>(src, dst, n, stored, what);
    case npy_dtype::uint16:
      return convert_from<T, std::uint16_t>(src, dst, n, stored, what);
    case npy_dtype::int32:
      return convert_from<T, std::int32_t>(src, dst, n, stored, what);
    case npy_dtype::uint32:
      return convert_from<T, std::uint32_t>(src, dst, n, stored, what);
    case npy_dtype::int64:
      return convert_from<T, std::int64_t>(src, dst, n, stored, what);
    case npy_dtype::uint64:
      return convert_from<T, std::uint64_t>(src, dst, n, stored, what);
    case npy_dtype::float32:
      return convert_from<T, float>(src, dst, n, stored, what);
    case npy_dtype::float64:
      return convert_from<T, double>(src, dst, n, stored, what);
    case npy_dtype::float16:
    case npy_dtype::bfloat16:
      COOPGNN_IO_FAIL(
          "{}: {} data is read only at 2 bytes per element, as a node feature table (widened to "
          "float32 row by row when gathered); it is not converted to a {}-byte type here: save "
          "this array as float32 or an integer type",
          what, npy_dtype_name(stored), sizeof(T));
  }
}

template <typename T>
constexpr bool same_as_stored(npy_dtype t) {
  switch (t) {
    case npy_dtype::bool_:
      return false;
    case npy_dtype::int8:
      return std::is_same_v<T, std::int8_t>;
    case npy_dtype::uint8:
      return std::is_same_v<T, std::uint8_t>;
    case npy_dtype::int16:
      return std::is_same_v<T, std::int16_t>;
    case npy_dtype::uint16:
      return std::is_same_v<T, std::uint16_t>;
    case npy_dtype::int32:
      return std::is_same_v<T, std::int32_t>;
    case npy_dtype::uint32:
      return std::is_same_v<T, std::uint32_t>;
    case npy_dtype::int64:
      return std::is_same_v<T, std::int64_t>;
    case npy_dtype::uint64:
      return std::is_same_v<T, std::uint64_t>;
    case npy_dtype::float32:
      return std::is_same_v<T, float>;
    case npy_dtype::float64:
      return std::is_same_v<T, double>;
    case npy_dtype::float16:
    case npy_dtype::bfloat16:
      return false;  // never converted (convert); read_npy_bits16 copies the bits
  }
  return false;
}

/// Reorders `in` (Fortran order, first index fastest) into C order for `shape`.
template <typename T>
std::vector<T> fortran_to_c(const std::vector<T>& in, const std::vector<std::int64_t>& shape) {
  std::vector<T> out(in.size());
  std::size_t const rank = shape.size();
  if (in.empty()) return out;
  if (rank == 2) {
    std::int64_t const rows = shape[0];
    std::int64_t const cols = shape[1];
    for (std::int64_t r = 0; r < rows; ++r) {
      for (std::int64_t c = 0; c < cols; ++c) out[r * cols + c] = in[c * rows + r];
    }
    return out;
  }
  // General rank: walk the C-order multi-index (last dimension fastest) like an odometer and keep
  // the Fortran offset sum_d idx[d] * prod_{j<d} shape[j] up to date.
  std::vector<std::int64_t> fstride(rank, 1);
  for (std::size_t d = 1; d < rank; ++d) fstride[d] = fstride[d - 1] * shape[d - 1];
  std::vector<std::int64_t> idx(rank, 0);
  std::int64_t off = 0;
  for (std::size_t i = 0; i < out.size(); ++i) {
    out[i] = in[off];
    for (std::size_t d = rank; d-- > 0;) {
      if (++idx[d] < shape[d]) {
        off += fstride[d];
        break;
      }
      off -= (shape[d] - 1) * fstride[d];
      idx[d] = 0;
    }
  }
  return out;
}

template <typename T>
npy_array<T> decode(const npy_header& h, const std::byte* data, const std::string& what) {
  npy_array<T> a;
  a.shape = h.shape;
  a.stored = h.dtype;
  auto const n = static_cast<std::size_t>(h.num_elements());
  a.data.resize(n);
  convert_npy_elements<T>(data, h.dtype, std::span<T>(a.data), what);
  if (h.fortran_order && h.shape.size() >= 2) a.data = fortran_to_c(a.data, a.shape);
  return a;
}

/// The array read as T may be larger than the file (uint8 data read as int64: 8 times): its
/// bytes must fit in the memory limit before they are allocated.
template <typename T>
void check_decoded_size(const npy_header& h, const std::string& what) {
  auto const n = static_cast<std::uint64_t>(h.num_elements());
  check_declared_bytes(what,
                       fmt::format("the element count of shape {}", format_npy_shape(h.shape)), n,
                       saturating_bytes(h.num_elements(), sizeof(T)),
                       fmt::format("{} bytes per element once read", sizeof(T)));
}

void check_data_size(const npy_header& h, std::uint64_t available, const std::string& what) {
  std::uint64_t const need = h.data_bytes();
  if (available < need) {
    COOPGNN_IO_FAIL("{}: truncated: expected {} bytes of data, found {} (shape {}, dtype {})", what,
                    need, available, format_npy_shape(h.shape), npy_dtype_name(h.dtype));
  }
  if (available > need) {
    COOPGNN_IO_FAIL(
        "{}: {} unexpected trailing bytes after the {} bytes of data for shape {} "
        "(dtype {}); the header and the data disagree",
        what, available - need, need, format_npy_shape(h.shape), npy_dtype_name(h.dtype));
  }
}

std::string descr_of(npy_dtype t) {
  switch (t) {
    case npy_dtype::bool_:
      return "|b1";
    case npy_dtype::int8:
      return "|i1";
    case npy_dtype::uint8:
      return "|u1";
    case npy_dtype::int16:
      return "<i2";
    case npy_dtype::uint16:
      return "<u2";
    case npy_dtype::int32:
      return "<i4";
    case npy_dtype::uint32:
      return "<u4";
    case npy_dtype::int64:
      return "<i8";
    case npy_dtype::uint64:
      return "<u8";
    case npy_dtype::float32:
      return "<f4";
    case npy_dtype::float64:
      return "<f8";
    case npy_dtype::float16:
      return "<f2";
    case npy_dtype::bfloat16:
      break;
  }
  COOPGNN_FAIL(".npy has no descr for dtype {} (save it with torch.save, or as float32)",
               npy_dtype_name(t));
}

void write_raw(const std::filesystem::path& file, npy_dtype dtype, const void* data,
               std::size_t count, std::span<const std::int64_t> shape) {
  std::int64_t n = 1;
  for (std::int64_t d : shape) {
    COOPGNN_EXPECTS(d >= 0, "write_npy({}): negative dimension in shape {}", path_str(file),
                    format_npy_shape(shape));
    n *= d;
  }
  COOPGNN_EXPECTS(static_cast<std::uint64_t>(n) == count,
                  "write_npy({}): shape {} holds {} elements but {} were given", path_str(file),
                  format_npy_shape(shape), n, count);
  std::string const header = make_npy_header(dtype, shape);
  atomic_file out(file);
  out.write(header.data(), header.size());
  out.write(data, count * npy_dtype_size(dtype));
  out.commit();
}

}  // namespace

// ---- public ----------------------------------------------------------------------------------

std::string_view npy_dtype_name(npy_dtype t) {
  switch (t) {
    case npy_dtype::bool_:
      return "bool";
    case npy_dtype::int8:
      return "int8";
    case npy_dtype::uint8:
      return "uint8";
    case npy_dtype::int16:
      return "int16";
    case npy_dtype::uint16:
      return "uint16";
    case npy_dtype::int32:
      return "int32";
    case npy_dtype::uint32:
      return "uint32";
    case npy_dtype::int64:
      return "int64";
    case npy_dtype::uint64:
      return "uint64";
    case npy_dtype::float32:
      return "float32";
    case npy_dtype::float64:
      return "float64";
    case npy_dtype::float16:
      return "float16";
    case npy_dtype::bfloat16:
      return "bfloat16";
  }
  return "?";
}

std::size_t npy_dtype_size(npy_dtype t) {
  switch (t) {
    case npy_dtype::bool_:
    case npy_dtype::int8:
    case npy_dtype::uint8:
      return 1;
    case npy_dtype::int16:
    case npy_dtype::uint16:
    case npy_dtype::float16:
    case npy_dtype::bfloat16:
      return 2;
    case npy_dtype::int32:
    case npy_dtype::uint32:
    case npy_dtype::float32:
      return 4;
    case npy_dtype::int64:
    case npy_dtype::uint64:
    case npy_dtype::float64:
      return 8;
  }
  return 0;
}

std::int64_t npy_header::num_elements() const {
  std::int64_t n = 1;
  for (std::int64_t d : shape) n *= d;
  return n;
}

std::uint64_t npy_header::data_bytes() const {
  return static_cast<std::uint64_t>(num_elements()) * npy_dtype_size(dtype);
}

std::string format_npy_shape(std::span<const std::int64_t> shape) {
  if (shape.size() == 1) return fmt::format("({},)", shape[0]);
  return fmt::format("({})", fmt::join(shape, ", "));
}

npy_header parse_npy_header(std::span<const std::byte> bytes, const std::string& what) {
  if (bytes.size() < kMagicLen + 2 || std::memcmp(bytes.data(), kMagic, kMagicLen) != 0) {
    COOPGNN_IO_FAIL("{}: not a .npy file (wrong magic string; expected \\x93NUMPY)", what);
  }
  npy_header h;
  int const major = static_cast<int>(bytes[6]);
  int const minor = static_cast<int>(bytes[7]);
  if (major < 1 || major > 3 || minor != 0) {
    COOPGNN_IO_FAIL("{}: unsupported .npy format version {}.{} (1.0, 2.0 and 3.0 are read)", what,
                    major, minor);
  }
  h.version_major = major;
  std::size_t const len_bytes = major == 1 ? 2 : 4;
  std::size_t const prefix = kMagicLen + 2 + len_bytes;
  if (bytes.size() < prefix) {
    COOPGNN_IO_FAIL("{}: truncated .npy header (file has {} bytes)", what, bytes.size());
  }
  std::uint64_t const header_len =
      read_le(bytes.data() + kMagicLen + 2, static_cast<int>(len_bytes));
  if (header_len > bytes.size() - prefix) {
    COOPGNN_IO_FAIL("{}: header length {} runs past the end of the file ({} bytes)", what,
                    header_len, bytes.size());
  }
  std::string_view const text(reinterpret_cast<const char*>(bytes.data() + prefix), header_len);
  header_parser(text, what).parse(h);
  // Overflow-checked element count and byte size.
  std::uint64_t n = 1;
  for (std::int64_t d : h.shape) {
    if (d != 0 && n > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()) /
                          static_cast<std::uint64_t>(d) / 8) {
      COOPGNN_IO_FAIL("{}: shape {} is too large", what, format_npy_shape(h.shape));
    }
    n *= static_cast<std::uint64_t>(d);
  }
  h.data_offset = prefix + header_len;
  return h;
}

npy_header read_npy_header(const std::filesystem::path& file) {
  std::string const what = path_str(file);
  std::ifstream in(file, std::ios::binary);
  if (!in) COOPGNN_IO_FAIL("{}: cannot open: {}", what, std::strerror(errno));
  std::error_code ec;
  std::uint64_t const size = std::filesystem::file_size(file, ec);
  if (ec) COOPGNN_IO_FAIL("{}: cannot read the file size: {}", what, ec.message());
  std::vector<std::byte> buf(12);
  in.read(reinterpret_cast<char*>(buf.data()), static_cast<std::streamsize>(buf.size()));
  buf.resize(static_cast<std::size_t>(in.gcount()));
  if (buf.size() >= 10 && std::memcmp(buf.data(), kMagic, kMagicLen) == 0) {
    int const major = static_cast<int>(buf[6]);
    std::size_t const len_bytes = major == 1 ? 2 : 4;
    if (buf.size() >= kMagicLen + 2 + len_bytes) {
      std::uint64_t const hl = read_le(buf.data() + kMagicLen + 2, static_cast<int>(len_bytes));
      // The declared header length is bounded by the file before it sizes the buffer.
      std::size_t const want = std::min<std::uint64_t>(
          kMagicLen + 2 + len_bytes + std::min<std::uint64_t>(hl, 1 << 24), size);
      std::size_t const have = buf.size();
      if (want > have) {
        buf.resize(want);
        in.read(reinterpret_cast<char*>(buf.data() + have),
                static_cast<std::streamsize>(want - have));
        buf.resize(have + static_cast<std::size_t>(in.gcount()));
      }
    }
  }
  npy_header h = parse_npy_header(buf, what);
  check_data_size(h, size - h.data_offset, what);
  return h;
}

namespace {
/// read_npy, and with `bits16` (T = std::uint16_t) read_npy_bits16: the elements of a float16
/// file copied unchanged.
template <typename T>
npy_array<T> read_npy_as(const std::filesystem::path& file, bool bits16) {
  std::string const what = path_str(file);
  npy_header const h = read_npy_header(file);
  if (bits16 && h.dtype != npy_dtype::float16) {
    COOPGNN_IO_FAIL("{}: the array is {}, not float16 (read as 16-bit floating-point data)", what,
                    npy_dtype_name(h.dtype));
  }
  check_decoded_size<T>(h, what);
  std::ifstream in(file, std::ios::binary);
  if (!in) COOPGNN_IO_FAIL("{}: cannot open: {}", what, std::strerror(errno));
  in.seekg(static_cast<std::streamoff>(h.data_offset));
  auto const nbytes = static_cast<std::size_t>(h.data_bytes());
  auto const n = static_cast<std::size_t>(h.num_elements());
  if (bits16 || same_as_stored<T>(h.dtype)) {
    npy_array<T> a;
    a.shape = h.shape;
    a.stored = h.dtype;
    a.data.resize(n);
    in.read(reinterpret_cast<char*>(a.data.data()), static_cast<std::streamsize>(nbytes));
    if (static_cast<std::size_t>(in.gcount()) != nbytes) {
      COOPGNN_IO_FAIL("{}: truncated: expected {} bytes of data, found {}", what, nbytes,
                      in.gcount());
    }
    if (h.fortran_order && h.shape.size() >= 2) a.data = fortran_to_c(a.data, a.shape);
    return a;
  }
  std::vector<std::byte> raw(nbytes);
  in.read(reinterpret_cast<char*>(raw.data()), static_cast<std::streamsize>(nbytes));
  if (static_cast<std::size_t>(in.gcount()) != nbytes) {
    COOPGNN_IO_FAIL("{}: truncated: expected {} bytes of data, found {}", what, nbytes,
                    in.gcount());
  }
  return decode<T>(h, raw.data(), what);
}
}  // namespace

template <typename T>
npy_array<T> read_npy(const std::filesystem::path& file) {
  return read_npy_as<T>(file, false);
}

npy_array<std::uint16_t> read_npy_bits16(const std::filesystem::path& file) {
  return read_npy_as<std::uint16_t>(file, true);
}

template <typename T>
npy_array<T> read_npy_buffer(std::span<const std::byte> bytes, const std::string& what) {
  npy_header const h = parse_npy_header(bytes, what);
  check_data_size(h, bytes.size() - h.data_offset, what);
  check_decoded_size<T>(h, what);
  return decode<T>(h, bytes.data() + h.data_offset, what);
}

template <typename T>
void convert_npy_elements(const std::byte* src, npy_dtype stored, std::span<T> dst,
                          const std::string& what) {
  if (dst.empty()) return;
  if (same_as_stored<T>(stored)) {
    std::memcpy(dst.data(), src, dst.size() * sizeof(T));
  } else {
    convert<T>(src, dst.data(), dst.size(), stored, what);
  }
}

#define COOPGNN_NPY_INSTANTIATE(T)                                                          \
  template npy_array<T> read_npy<T>(const std::filesystem::path&);                          \
  template npy_array<T> read_npy_buffer<T>(std::span<const std::byte>, const std::string&); \
  template void convert_npy_elements<T>(const std::byte*, npy_dtype, std::span<T>,          \
                                        const std::string&);
COOPGNN_NPY_INSTANTIATE(float)
COOPGNN_NPY_INSTANTIATE(double)
COOPGNN_NPY_INSTANTIATE(std::int8_t)
COOPGNN_NPY_INSTANTIATE(std::uint8_t)
COOPGNN_NPY_INSTANTIATE(std::int16_t)
COOPGNN_NPY_INSTANTIATE(std::uint16_t)
COOPGNN_NPY_INSTANTIATE(std::int32_t)
COOPGNN_NPY_INSTANTIATE(std::uint32_t)
COOPGNN_NPY_INSTANTIATE(std::int64_t)
COOPGNN_NPY_INSTANTIATE(std::uint64_t)
#undef COOPGNN_NPY_INSTANTIATE

std::string make_npy_header(npy_dtype dtype, std::span<const std::int64_t> shape) {
  std::string dict = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': {}, }}",
                                 descr_of(dtype), format_npy_shape(shape));
  std::size_t const prefix = kMagicLen + 2 + 2;
  std::size_t const unpadded = prefix + dict.size() + 1;  // + '\n'
  std::size_t const total = (unpadded + kAlign - 1) / kAlign * kAlign;
  dict.append(total - unpadded, ' ');
  dict.push_back('\n');
  std::size_t const hl = dict.size();
  std::string out(kMagic, kMagicLen);
  out.push_back('\x01');
  out.push_back('\x00');
  out.push_back(static_cast<char>(hl & 0xff));
  out.push_back(static_cast<char>((hl >> 8) & 0xff));
  out += dict;
  return out;
}

void write_npy(const std::filesystem::path& file, std::span<const float> data,
               std::span<const std::int64_t> shape) {
  write_raw(file, npy_dtype::float32, data.data(), data.size(), shape);
}

void write_npy(const std::filesystem::path& file, std::span<const std::int64_t> data,
               std::span<const std::int64_t> shape) {
  write_raw(file, npy_dtype::int64, data.data(), data.size(), shape);
}

void write_npy(const std::filesystem::path& file, std::span<const std::int32_t> data,
               std::span<const std::int64_t> shape) {
  write_raw(file, npy_dtype::int32, data.data(), data.size(), shape);
}

void write_npy(const std::filesystem::path& file, std::span<const std::uint8_t> data,
               std::span<const std::int64_t> shape, bool as_bool) {
  if (as_bool) {
    for (std::size_t i = 0; i < data.size(); ++i) {
      COOPGNN_EXPECTS(data[i] <= 1, "write_npy({}): bool element {} = {} is not 0 or 1",
                      path_str(file), i, data[i]);
    }
  }
  write_raw(file, as_bool ? npy_dtype::bool_ : npy_dtype::uint8, data.data(), data.size(), shape);
}

void write_npy_bits16(const std::filesystem::path& file, std::span<const std::uint16_t> bits,
                      std::span<const std::int64_t> shape) {
  write_raw(file, npy_dtype::float16, bits.data(), bits.size(), shape);
}

// ---- atomic_file -----------------------------------------------------------------------------

atomic_file::atomic_file(std::filesystem::path final_path) : final_(std::move(final_path)) {
  static std::atomic<std::uint64_t> counter{0};
  tmp_ = final_;
  tmp_ += fmt::format(".tmp.{}.{}", static_cast<long>(::getpid()), counter.fetch_add(1));
  out_.open(tmp_, std::ios::binary | std::ios::trunc);
  if (!out_) {
    COOPGNN_IO_FAIL("{}: cannot create (is the directory missing or read-only?)", path_str(final_));
  }
}

atomic_file::~atomic_file() {
  if (!committed_) {
    out_.close();
    std::error_code ec;
    std::filesystem::remove(tmp_, ec);
  }
}

void atomic_file::write(const void* bytes, std::size_t n) {
  out_.write(static_cast<const char*>(bytes), static_cast<std::streamsize>(n));
  if (!out_) COOPGNN_IO_FAIL("{}: cannot write {} bytes (disk full?)", path_str(final_), n);
}

void atomic_file::commit() {
  out_.flush();
  out_.close();
  if (out_.fail()) COOPGNN_IO_FAIL("{}: cannot write (flush failed; disk full?)", path_str(final_));
  std::error_code ec;
  std::filesystem::rename(tmp_, final_, ec);
  if (ec) {
    std::string const why = ec.message();
    std::filesystem::remove(tmp_, ec);
    COOPGNN_IO_FAIL("{}: cannot rename the temporary into place: {}", path_str(final_), why);
  }
  committed_ = true;
}

npy_two_row_reader::npy_two_row_reader(std::filesystem::path file)
    : file_(std::move(file)), header_(read_npy_header(file_)) {
  if (header_.shape.size() != 2 || header_.shape[0] != 2) {
    COOPGNN_IO_FAIL(
        "{}: edges must have shape (2, E) (row 0 sources, row 1 destinations), found {}",
        path_str(file_), format_npy_shape(header_.shape));
  }
  columns_ = header_.shape[1];
  in_.open(file_, std::ios::binary);
  if (!in_) COOPGNN_IO_FAIL("{}: cannot open: {}", path_str(file_), std::strerror(errno));
}

void npy_two_row_reader::read_bytes(std::uint64_t offset, std::size_t n) {
  buf_.resize(n);
  in_.seekg(static_cast<std::streamoff>(header_.data_offset + offset));
  in_.read(reinterpret_cast<char*>(buf_.data()), static_cast<std::streamsize>(n));
  if (!in_ || static_cast<std::size_t>(in_.gcount()) != n) {
    COOPGNN_IO_FAIL("{}: cannot read {} bytes at data offset {}", path_str(file_), n, offset);
  }
}

void npy_two_row_reader::read(std::int64_t first, std::span<std::int64_t> row0,
                              std::span<std::int64_t> row1) {
  std::vector<std::byte> bytes;  // what read_two_row_columns converts; buf_ holds each read
  detail::read_two_row_columns(
      header_, path_str(file_), first, row0, row1,
      [&](int, std::uint64_t offset, std::span<std::byte> out) {
        read_bytes(offset, out.size());
        std::copy(buf_.begin(), buf_.end(), out.begin());
      },
      bytes, pairs_);
}

namespace detail {

void read_two_row_columns(const npy_header& h, const std::string& what, std::int64_t first,
                          std::span<std::int64_t> row0, std::span<std::int64_t> row1,
                          const npy_fetch& fetch, std::vector<std::byte>& bytes,
                          std::vector<std::int64_t>& pairs) {
  std::int64_t const columns = h.shape.size() == 2 ? h.shape[1] : 0;
  std::size_t const k = std::max(row0.size(), row1.size());
  COOPGNN_EXPECTS((row0.empty() || row0.size() == k) && (row1.empty() || row1.size() == k) &&
                      first >= 0 && first + static_cast<std::int64_t>(k) <= columns,
                  "{}: columns [{}, {}) of {} (rows of {} and {})", what, first,
                  first + static_cast<std::int64_t>(k), columns, row0.size(), row1.size());
  std::size_t const size = npy_dtype_size(h.dtype);
  if (!h.fortran_order) {
    // Row r's columns are contiguous, starting at r * N elements.
    int r = 0;
    for (std::span<std::int64_t> row : {row0, row1}) {
      if (!row.empty()) {
        bytes.resize(k * size);
        fetch(r, static_cast<std::uint64_t>(r * columns + first) * size, bytes);
        convert_npy_elements<std::int64_t>(bytes.data(), h.dtype, row, what);
      }
      ++r;
    }
    return;
  }
  // Fortran order: column c is the pair (row 0, row 1) at 2 c elements.
  bytes.resize(2 * k * size);
  fetch(0, static_cast<std::uint64_t>(2 * first) * size, bytes);
  pairs.resize(2 * k);
  convert_npy_elements<std::int64_t>(bytes.data(), h.dtype, std::span<std::int64_t>(pairs), what);
  for (std::size_t i = 0; i < k; ++i) {
    if (!row0.empty()) row0[i] = pairs[2 * i];
    if (!row1.empty()) row1[i] = pairs[2 * i + 1];
  }
}

}  // namespace detail

}  // namespace coopgnn
