// NumPy .npz archives (docs/design.md section 3.2, converters): a zip file whose members are .npy
// files, stored or deflated, as numpy.savez / numpy.savez_compressed write them. Read and written
// with libzip.
#pragma once

#include <cstddef>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/graph/npy.hpp"

namespace coopgnn {

/// A read-only .npz archive. Member names are listed without the ".npy" suffix that numpy adds
/// ("node_features.npy" is member "node_features"); lookups accept either spelling.
/// Not thread-safe: one archive object per thread.
class npz_archive {
 public:
  /// Opens `file`. @throws io_error "FILE: cannot open as a .npz (zip) archive: <libzip reason>".
  explicit npz_archive(const std::filesystem::path& file);
  ~npz_archive();
  npz_archive(const npz_archive&) = delete;
  npz_archive& operator=(const npz_archive&) = delete;

  /// The archive path as given.
  [[nodiscard]] const std::filesystem::path& path() const { return path_; }
  /// Member names in archive order, ".npy" stripped.
  [[nodiscard]] const std::vector<std::string>& members() const { return names_; }
  /// Whether a member `name` (with or without ".npy") exists.
  [[nodiscard]] bool contains(std::string_view name) const;

  /// The uncompressed bytes of member `name` (a whole .npy image). The size the zip headers
  /// declare is checked before the buffer is allocated: a stored member's must equal its
  /// compressed size, a deflated member's must be at most 1032 times it (deflate's largest
  /// ratio), and it must fit in host_memory_limit() (runtime/core/memory_limit.hpp).
  /// @throws io_error "ARCHIVE:MEMBER: ..." when the member is missing ("no member ..., members
  ///         are: ..."), uses an unsupported compression method, declares an impossible or too
  ///         large size ("corrupt member: declares N uncompressed bytes ...", "uncompressed size
  ///         = N needs N bytes ..."), holds more or fewer bytes than declared, or fails its
  ///         CRC/decompression.
  [[nodiscard]] std::vector<std::byte> read_bytes(std::string_view name) const;

  /// The header of member `name`, from the member's first bytes only (at most 1 MiB read and
  /// inflated: a large member is not read whole; its data is checked when it is read).
  [[nodiscard]] npy_header header(std::string_view name) const;

  /// Member `name` parsed as a .npy array and converted to T (the types and rules of read_npy).
  /// @throws io_error "ARCHIVE:MEMBER: ..." for every problem read_bytes and read_npy report.
  template <typename T>
  [[nodiscard]] npy_array<T> read(std::string_view name) const;

 private:
  friend class npz_two_row_reader;
  /// The archive index of member `name`. @throws io_error "ARCHIVE: no member ..." naming them.
  [[nodiscard]] std::uint64_t locate(std::string_view name) const;
  struct impl;
  std::filesystem::path path_;
  std::unique_ptr<impl> impl_;
  std::vector<std::string> names_;  // stripped
  std::vector<long long> index_;    // archive index of names_[i]
};

/// The (2, N) integer member `name` of an archive (OGB's raw/data.npz `edge_index`) read a range
/// of columns at a time, as npy_two_row_reader reads a file, without holding the member: a
/// stored member (numpy.savez) is read at the offsets asked for; a deflated one
/// (numpy.savez_compressed) is inflated front to back, one stream per row, and a stream is
/// reopened when a range lies behind it (reading in ascending ranges inflates the member about
/// twice: once per row). Host memory: the buffers of the last range. Elements are converted to
/// int64 with read_npy's rules; C and Fortran order. The archive must outlive the reader; not
/// thread-safe.
class npz_two_row_reader {
 public:
  /// Opens member `name` and parses its header from its first bytes.
  /// @throws io_error "ARCHIVE:MEMBER: ..." for a missing member, an unsupported compression
  ///         method, a bad header, a member size other than the header's, or a shape other than
  ///         (2, N) ("edges must have shape (2, E) ...").
  npz_two_row_reader(const npz_archive& z, std::string_view name);
  ~npz_two_row_reader();
  npz_two_row_reader(const npz_two_row_reader&) = delete;
  npz_two_row_reader& operator=(const npz_two_row_reader&) = delete;
  /// N, the number of columns.
  [[nodiscard]] std::int64_t columns() const { return header_.shape[1]; }
  /// As npy_two_row_reader::read. @throws io_error "ARCHIVE:MEMBER: ..." for a read or inflate
  ///         failure (a corrupt or truncated member) or a value that does not convert.
  void read(std::int64_t first, std::span<std::int64_t> row0, std::span<std::int64_t> row1);

 private:
  struct cursor;
  std::string what_;
  npy_header header_;
  std::unique_ptr<cursor> cursors_[2];
  std::vector<std::byte> bytes_;
  std::vector<std::int64_t> pairs_;
};

/// One float32 member of an archive write_npz writes.
struct npz_float32_member {
  std::string name;                 ///< member name without ".npy" (".npy" is appended)
  std::span<const float> data;      ///< row-major, prod(shape) values, host memory
  std::vector<std::int64_t> shape;  ///< the .npy shape
};

/// Writes `members` to `file` as numpy.savez does: a zip archive with one uncompressed
/// (stored) version 1.0 .npy per member ("<name>.npy", make_npy_header + the little-endian
/// values), in the given order; numpy.load(file)[name] and npz_archive read it back. libzip
/// writes to a temporary file beside `file` and renames it into place when complete, so `file`
/// is never seen half written. Synchronous; allocates a copy of each member while writing.
/// @throws logic_error when a name is empty or repeated, or prod(shape) != data.size();
///         io_error "FILE: cannot write the .npz archive: <libzip reason>".
void write_npz(const std::filesystem::path& file, std::span<const npz_float32_member> members);

}  // namespace coopgnn
