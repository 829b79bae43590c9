// NumPy .npy arrays (docs/design.md section 3.1: a dataset directory's arrays are .npy files).
//
// Format (numpy.lib.format, versions 1.0, 2.0 and 3.0): the magic "\x93NUMPY", a major and a minor
// version byte, the header length (2 bytes little-endian in 1.0, 4 bytes in 2.0 and 3.0), then an
// ASCII (3.0: UTF-8) Python dict literal {'descr': '<f4', 'fortran_order': False, 'shape': (N, F),
// } padded with spaces and ending in '\n', then the raw element data in C or Fortran order. Readers
// here accept little-endian numeric dtypes only; writers emit version 1.0 headers padded so that
// the data starts at a multiple of 64 bytes, exactly as numpy.save does.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace coopgnn {

/// Element types a .npy file may hold that coopgnn reads (numpy descr in parentheses).
enum class npy_dtype : std::uint8_t {
  bool_,     ///< '|b1', one byte 0 or 1
  int8,      ///< '|i1'
  uint8,     ///< '|u1'
  int16,     ///< '<i2'
  uint16,    ///< '<u2'
  int32,     ///< '<i4'
  uint32,    ///< '<u4'
  int64,     ///< '<i8'
  uint64,    ///< '<u8'
  float32,   ///< '<f4'
  float64,   ///< '<f8'
  float16,   ///< '<f2' (IEEE binary16); read only at its width (read_npy_bits16), never converted
  bfloat16,  ///< no .npy descr: torch.BFloat16Storage only (torch_tensor.hpp); as float16
};

/// The numpy name of `t` ("float32", "bool", "float16", ...; "bfloat16" as torch names it).
std::string_view npy_dtype_name(npy_dtype t);

/// Size of one element of `t` in bytes.
std::size_t npy_dtype_size(npy_dtype t);

/// The parsed header of a .npy file or buffer.
struct npy_header {
  int version_major = 1;  ///< 1, 2 or 3
  npy_dtype dtype = npy_dtype::float32;
  bool fortran_order = false;       ///< element data in column-major order
  std::vector<std::int64_t> shape;  ///< any rank; () is a scalar with one element
  std::size_t data_offset = 0;      ///< bytes from the start of the file to the element data

  /// Product of `shape` (1 for a scalar).
  [[nodiscard]] std::int64_t num_elements() const;
  /// num_elements() * element size, in bytes.
  [[nodiscard]] std::uint64_t data_bytes() const;
};

/// An n-dimensional array read from .npy, always in C (row-major) order.
template <typename T>
struct npy_array {
  std::vector<std::int64_t> shape;        ///< dimensions, outermost first
  std::vector<T> data;                    ///< prod(shape) elements, row-major
  npy_dtype stored = npy_dtype::float32;  ///< the element type in the file before conversion

  [[nodiscard]] std::size_t rank() const { return shape.size(); }
  /// Extent of dimension i; 1 for i >= rank() (so a 1-D array reads as [N, 1]).
  [[nodiscard]] std::int64_t dim(std::size_t i) const { return i < shape.size() ? shape[i] : 1; }
  [[nodiscard]] std::int64_t size() const { return static_cast<std::int64_t>(data.size()); }
};

/// Formats a shape as numpy prints it: "(3,)", "(2, 5)", "()".
std::string format_npy_shape(std::span<const std::int64_t> shape);

/// Parses the header at the start of `bytes` (a whole .npy file or at least its header).
/// `what` names the source (a path, or "archive.npz:member") in error messages.
/// @throws io_error "WHAT: ..." for a wrong magic string, an unknown version, a header length past
///         the end of the buffer, a malformed dict, a missing or unknown key, a negative
///         dimension, a big-endian dtype, or a dtype coopgnn cannot read (object arrays and
///         pickles, strings, structured and complex dtypes, datetimes). '<f2' parses as
///         npy_dtype::float16.
npy_header parse_npy_header(std::span<const std::byte> bytes, const std::string& what);

/// Reads only the header of the .npy file `file` (a few hundred bytes) and checks the file size
/// against the shape. @throws io_error as parse_npy_header, plus "FILE: cannot open", and
/// "FILE: truncated: expected N bytes of data, found M" when the file is too short.
npy_header read_npy_header(const std::filesystem::path& file);

/// Reads the .npy file `file` and converts its elements to T (one of float, double, int8_t,
/// uint8_t, int16_t, uint16_t, int32_t, uint32_t, int64_t, uint64_t; bool arrays read as 0/1).
/// float16 (and bfloat16) data is not converted: it is read at its width by read_npy_bits16, so
/// that a 2-byte feature table is never widened in host memory.
/// Fortran-ordered data is transposed to C order, for any rank.
/// Conversion rules: integer -> integer and float -> integer require every value to fit in T
/// (float -> integer also requires whole numbers: no NaN, no fraction); integer or float -> float
/// rounds to nearest. Reads the whole array into host memory once (no intermediate copy when the
/// stored dtype equals T and the order is C).
/// Sizes: the shape is checked against the file size (truncated, trailing bytes), and the array as
/// T against host_memory_limit() (runtime/core/memory_limit.hpp), before anything is allocated.
/// @throws io_error "FILE: ..." for every problem of parse_npy_header, a truncated file ("FILE:
///         truncated: expected N bytes of data, found M"), trailing bytes after the data, an
///         array over the memory limit ("FILE: the element count of shape S = N needs B bytes
///         ..."), a value that does not convert ("FILE: element I = V does not fit in
///         int32"), and float16 data ("FILE: float16 data is read only at 2 bytes per element
///         ...").
template <typename T>
npy_array<T> read_npy(const std::filesystem::path& file);

/// Reads the .npy file `file` holding float16 elements ('<f2') without converting them: `data`
/// holds each element's 16-bit pattern (IEEE binary16; runtime/core/half.hpp widens them), in C
/// order (Fortran-ordered data is transposed), `stored` is npy_dtype::float16. Host memory, 2
/// bytes per element, checked against host_memory_limit() before it is allocated.
/// @throws io_error "FILE: ..." as read_npy, and "FILE: ... is DTYPE, not float16" for another
///         dtype.
npy_array<std::uint16_t> read_npy_bits16(const std::filesystem::path& file);

/// Same as read_npy but from an in-memory image of a whole .npy file (for example an .npz
/// member). `what` names the source in error messages.
template <typename T>
npy_array<T> read_npy_buffer(std::span<const std::byte> bytes, const std::string& what);

/// Converts `dst.size()` elements of type `stored`, packed little-endian in `src` (any alignment),
/// to T with exactly the rules of read_npy (the types and conversion rules listed there); this is
/// the conversion read_npy and read_npy_buffer use, exposed for readers of other containers.
/// Copies bytes unchanged when `stored` is T's own dtype. Host memory only; does not allocate.
/// Precondition: src.size() >= dst.size() * npy_dtype_size(stored) (not checked).
/// @throws io_error "WHAT: element I = V ..." for a value that does not convert; dst is then
///         partially written; "WHAT: float16 data is read only at 2 bytes per element ..." for
///         stored float16 or bfloat16 (never converted: read_npy_bits16, read_torch_bits16).
template <typename T>
void convert_npy_elements(const std::byte* src, npy_dtype stored, std::span<T> dst,
                          const std::string& what);

/// Writes `data` (row-major, prod(shape) elements) to `file` as a version 1.0 .npy with a
/// little-endian descr, padded so that the data starts at a multiple of 64 bytes.
/// The bytes go to a temporary file beside `file` that is renamed over `file` when complete, so
/// `file` is never seen half written. Overloads: float32, int64, int32, uint8; the uint8 overload
/// writes dtype bool instead when `as_bool` is true (values must then be 0 or 1);
/// write_npy_bits16 writes 16-bit patterns as float16 ('<f2').
/// @throws logic_error when prod(shape) != data.size() or a dimension is negative;
///         io_error "FILE: cannot write ..." when the file system refuses.
void write_npy(const std::filesystem::path& file, std::span<const float> data,
               std::span<const std::int64_t> shape);
void write_npy(const std::filesystem::path& file, std::span<const std::int64_t> data,
               std::span<const std::int64_t> shape);
void write_npy(const std::filesystem::path& file, std::span<const std::int32_t> data,
               std::span<const std::int64_t> shape);
void write_npy(const std::filesystem::path& file, std::span<const std::uint8_t> data,
               std::span<const std::int64_t> shape, bool as_bool = false);
/// `bits`: IEEE binary16 patterns, written unchanged as dtype float16 ('<f2').
void write_npy_bits16(const std::filesystem::path& file, std::span<const std::uint16_t> bits,
                      std::span<const std::int64_t> shape);

/// The .npy header that write_npy emits for `dtype` and `shape` (magic, version 1.0, dict padded
/// to a multiple of 64 bytes, ending in '\n'). Exposed for .npz writers and tests.
/// @throws logic_error for npy_dtype::bfloat16 (.npy has no descr for it).
std::string make_npy_header(npy_dtype dtype, std::span<const std::int64_t> shape);

/// Reads a 2-D .npy of shape (2, N) (edges/edges.npy: row 0 sources, row 1 destinations) a range
/// of columns at a time, without holding the array: the open file plus a byte buffer of the
/// last range read. Elements are converted to int64 with read_npy's rules; C and Fortran order.
class npy_two_row_reader {
 public:
  /// Opens `file` and checks its header (read_npy_header).
  /// @throws io_error as read_npy_header, and "FILE: edges must have shape (2, E) (row 0
  ///         sources, row 1 destinations), found S" for another shape.
  explicit npy_two_row_reader(std::filesystem::path file);
  /// N, the number of columns.
  [[nodiscard]] std::int64_t columns() const { return columns_; }
  [[nodiscard]] const std::filesystem::path& path() const { return file_; }
  /// Columns [first, first + k) of row 0 into row0 and of row 1 into row1 (host buffers), k
  /// the length of the non-empty one (an empty span skips its row; both non-empty: equal
  /// lengths). @pre 0 <= first, first + k <= columns()
  /// @throws io_error "FILE: cannot read ..." on a read failure, or read_npy's conversion errors
  ///         (the element index counted within the range read).
  void read(std::int64_t first, std::span<std::int64_t> row0, std::span<std::int64_t> row1);

 private:
  void read_bytes(std::uint64_t offset, std::size_t n);
  std::filesystem::path file_;
  npy_header header_;
  std::int64_t columns_ = 0;
  std::ifstream in_;
  std::vector<std::byte> buf_;
  std::vector<std::int64_t> pairs_;  ///< Fortran order: [2 k] interleaved columns
};

/// A file written under a temporary name beside its final name and renamed into place by
/// commit(); destroyed without commit(), it removes the temporary. Used by every writer of a
/// dataset directory so that an interrupted write never leaves a partial file under a final name.
class atomic_file {
 public:
  /// Opens "<final>.tmp.<unique>" for binary writing.
  /// @throws io_error "FILE: cannot create ..." naming the final path.
  explicit atomic_file(std::filesystem::path final_path);
  ~atomic_file();
  atomic_file(const atomic_file&) = delete;
  atomic_file& operator=(const atomic_file&) = delete;

  /// Appends `n` bytes. @throws io_error "FILE: cannot write ..." on a stream failure.
  void write(const void* bytes, std::size_t n);
  /// Flushes, closes and renames the temporary onto the final path.
  /// @throws io_error when flushing or renaming fails (the temporary is removed).
  void commit();

 private:
  std::filesystem::path final_;
  std::filesystem::path tmp_;
  std::ofstream out_;
  bool committed_ = false;
};

}  // namespace coopgnn
