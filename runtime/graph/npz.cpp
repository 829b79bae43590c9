#include "runtime/graph/npz.hpp"

#include <fmt/ranges.h>
#include <zip.h>

#include <algorithm>
#include <cstdint>

#include "runtime/core/error.hpp"
#include "runtime/core/memory_limit.hpp"
#include "runtime/graph/npy_columns.hpp"

namespace coopgnn {

namespace {

std::string_view strip_npy(std::string_view n) {
  if (n.size() >= 4 && n.substr(n.size() - 4) == ".npy") n.remove_suffix(4);
  return n;
}

}  // namespace

struct npz_archive::impl {
  zip_t* za = nullptr;
  ~impl() {
    if (za != nullptr) zip_discard(za);
  }
};

npz_archive::npz_archive(const std::filesystem::path& file) : path_(file), impl_(new impl) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(file, ec)) {
    COOPGNN_IO_FAIL("{}: cannot open: missing file (or not a regular file)", file.string());
  }
  int err = 0;
  impl_->za = zip_open(file.c_str(), ZIP_RDONLY, &err);
  if (impl_->za == nullptr) {
    zip_error_t ze;
    zip_error_init_with_code(&ze, err);
    std::string const why = zip_error_strerror(&ze);
    zip_error_fini(&ze);
    COOPGNN_IO_FAIL("{}: cannot open as a .npz (zip) archive: {}", file.string(), why);
  }
  zip_int64_t const n = zip_get_num_entries(impl_->za, 0);
  for (zip_int64_t i = 0; i < n; ++i) {
    const char* name = zip_get_name(impl_->za, static_cast<zip_uint64_t>(i), 0);
    if (name == nullptr) continue;
    std::string_view const nv(name);
    if (!nv.empty() && nv.back() == '/') continue;  // a directory entry
    names_.emplace_back(strip_npy(nv));
    index_.push_back(i);
  }
}

npz_archive::~npz_archive() = default;

bool npz_archive::contains(std::string_view name) const {
  std::string_view const want = strip_npy(name);
  for (const auto& n : names_) {
    if (n == want) return true;
  }
  return false;
}

std::uint64_t npz_archive::locate(std::string_view name) const {
  std::string_view const want = strip_npy(name);
  for (std::size_t i = 0; i < names_.size(); ++i) {
    if (names_[i] == want) return static_cast<std::uint64_t>(index_[i]);
  }
  COOPGNN_IO_FAIL("{}: no member '{}' in the archive; members are: {}", path_.string(), want,
                  fmt::join(names_, ", "));
}

namespace {

/// The zip_stat of member `uidx`, checked as every reader needs it: a size, a supported
/// compression method, and a declared size the compressed bytes can hold.
zip_stat_t checked_stat(zip_t* za, zip_uint64_t uidx, const std::string& what) {
  zip_stat_t st;
  zip_stat_init(&st);
  if (zip_stat_index(za, uidx, 0, &st) != 0 || (st.valid & ZIP_STAT_SIZE) == 0) {
    COOPGNN_IO_FAIL("{}: cannot stat the member: {}", what, zip_strerror(za));
  }
  if ((st.valid & ZIP_STAT_COMP_METHOD) != 0 &&
      zip_compression_method_supported(static_cast<zip_int32_t>(st.comp_method), 0) == 0) {
    COOPGNN_IO_FAIL(
        "{}: compression method {} is not supported (use numpy.savez or "
        "numpy.savez_compressed)",
        what, st.comp_method);
  }
  // The declared uncompressed size drives allocations: bound it by what the compressed bytes
  // can expand to (stored: equal; deflate: at most 1032 : 1).
  if ((st.valid & ZIP_STAT_COMP_SIZE) != 0 && (st.valid & ZIP_STAT_COMP_METHOD) != 0) {
    if (st.comp_method == ZIP_CM_STORE && st.size != st.comp_size) {
      COOPGNN_IO_FAIL(
          "{}: corrupt member: stored (uncompressed) with {} bytes but its declared size is {}",
          what, st.comp_size, st.size);
    }
    constexpr std::uint64_t kMaxDeflateRatio = 1032;
    if (st.comp_method == ZIP_CM_DEFLATE && st.size / kMaxDeflateRatio > st.comp_size + 1) {
      COOPGNN_IO_FAIL(
          "{}: corrupt member: declares {} uncompressed bytes, more than {} deflated bytes can "
          "hold (at most {} : 1)",
          what, st.size, st.comp_size, kMaxDeflateRatio);
    }
  }
  return st;
}

}  // namespace

namespace {

/// One position in a member, read front to back (stored members seek forward).
struct member_cursor {
  zip_t* za = nullptr;
  zip_uint64_t index = 0;
  bool stored = false;
  std::string what;
  zip_file_t* zf = nullptr;
  std::uint64_t pos = 0;  ///< bytes of the member image consumed
  std::vector<std::byte> skipped;

  member_cursor(zip_t* a, zip_uint64_t i, bool s, std::string w)
      : za(a), index(i), stored(s), what(std::move(w)) {}
  ~member_cursor() {
    if (zf != nullptr) zip_fclose(zf);
  }
  member_cursor(const member_cursor&) = delete;
  member_cursor& operator=(const member_cursor&) = delete;

  void open() {
    if (zf != nullptr) zip_fclose(zf);
    zf = zip_fopen_index(za, index, 0);
    if (zf == nullptr) COOPGNN_IO_FAIL("{}: cannot open the member: {}", what, zip_strerror(za));
    pos = 0;
  }
  void read_exact(std::byte* out, std::size_t n) {
    std::size_t got = 0;
    while (got < n) {
      zip_int64_t const r = zip_fread(zf, out + got, n - got);
      if (r < 0) {
        COOPGNN_IO_FAIL("{}: cannot read the member (corrupt archive?): {}", what,
                        zip_file_strerror(zf));
      }
      if (r == 0) {
        COOPGNN_IO_FAIL("{}: truncated member: ended after {} bytes", what, pos + got);
      }
      got += static_cast<std::size_t>(r);
    }
    pos += n;
  }
  /// Bytes [offset, offset + out.size()) of the member image.
  void read(std::uint64_t offset, std::span<std::byte> out) {
    if (zf == nullptr || offset < pos) open();
    if (offset > pos && stored) {
      if (zip_fseek(zf, static_cast<zip_int64_t>(offset), SEEK_SET) != 0) {
        COOPGNN_IO_FAIL("{}: cannot seek to byte {}: {}", what, offset, zip_file_strerror(zf));
      }
      pos = offset;
    }
    while (pos < offset) {  // deflated: inflate and drop what lies before
      auto const n = static_cast<std::size_t>(std::min<std::uint64_t>(offset - pos, 1 << 20));
      skipped.resize(n);
      read_exact(skipped.data(), n);
    }
    read_exact(out.data(), out.size());
  }
};

}  // namespace

struct npz_two_row_reader::cursor : member_cursor {
  using member_cursor::member_cursor;
};

npz_two_row_reader::npz_two_row_reader(const npz_archive& z, std::string_view name)
    : what_(fmt::format("{}:{}", z.path().string(), strip_npy(name))) {
  auto const uidx = static_cast<zip_uint64_t>(z.locate(name));
  zip_stat_t const st = checked_stat(z.impl_->za, uidx, what_);
  bool const stored = (st.valid & ZIP_STAT_COMP_METHOD) != 0 && st.comp_method == ZIP_CM_STORE;
  for (auto& c : cursors_) c = std::make_unique<cursor>(z.impl_->za, uidx, stored, what_);
  std::vector<std::byte> head(static_cast<std::size_t>(std::min<std::uint64_t>(st.size, 1 << 20)));
  cursors_[0]->read(0, head);
  header_ = parse_npy_header(head, what_);
  if (header_.data_offset + header_.data_bytes() != st.size) {
    COOPGNN_IO_FAIL("{}: the member holds {} bytes but its header (shape {}) says {}", what_,
                    st.size, format_npy_shape(header_.shape),
                    header_.data_offset + header_.data_bytes());
  }
  if (header_.shape.size() != 2 || header_.shape[0] != 2) {
    COOPGNN_IO_FAIL(
        "{}: edges must have shape (2, E) (row 0 sources, row 1 destinations), found {}", what_,
        format_npy_shape(header_.shape));
  }
}

npz_two_row_reader::~npz_two_row_reader() = default;

void npz_two_row_reader::read(std::int64_t first, std::span<std::int64_t> row0,
                              std::span<std::int64_t> row1) {
  detail::read_two_row_columns(
      header_, what_, first, row0, row1,
      [&](int c, std::uint64_t offset, std::span<std::byte> out) {
        cursors_[c]->read(header_.data_offset + offset, out);
      },
      bytes_, pairs_);
}

std::vector<std::byte> npz_archive::read_bytes(std::string_view name) const {
  std::string const what = fmt::format("{}:{}", path_.string(), strip_npy(name));
  auto const uidx = static_cast<zip_uint64_t>(locate(name));
  zip_stat_t const st = checked_stat(impl_->za, uidx, what);
  check_declared_bytes(what, "uncompressed size", st.size, st.size,
                       "the member is read into memory whole");
  zip_file_t* zf = zip_fopen_index(impl_->za, uidx, 0);
  if (zf == nullptr) {
    COOPGNN_IO_FAIL("{}: cannot open the member: {}", what, zip_strerror(impl_->za));
  }
  std::vector<std::byte> out(static_cast<std::size_t>(st.size));
  std::size_t got = 0;
  while (got < out.size()) {
    zip_int64_t const r = zip_fread(zf, out.data() + got, out.size() - got);
    if (r < 0) {
      std::string const why = zip_file_strerror(zf);
      zip_fclose(zf);
      COOPGNN_IO_FAIL("{}: cannot read the member (corrupt archive?): {}", what, why);
    }
    if (r == 0) break;
    got += static_cast<std::size_t>(r);
  }
  // A final read confirms the end of data and lets libzip check the CRC.
  std::byte extra[1];
  zip_int64_t const tail = zip_fread(zf, extra, 1);
  std::string const tail_err = tail < 0 ? zip_file_strerror(zf) : "";
  zip_fclose(zf);
  if (got != out.size()) {
    COOPGNN_IO_FAIL("{}: truncated member: expected {} bytes, read {}", what, out.size(), got);
  }
  if (tail < 0) COOPGNN_IO_FAIL("{}: corrupt member: {}", what, tail_err);
  if (tail > 0) {
    COOPGNN_IO_FAIL("{}: corrupt member: more data than its declared size of {} bytes", what,
                    out.size());
  }
  return out;
}

npy_header npz_archive::header(std::string_view name) const {
  std::string const what = fmt::format("{}:{}", path_.string(), strip_npy(name));
  auto const uidx = static_cast<zip_uint64_t>(locate(name));
  zip_stat_t const st = checked_stat(impl_->za, uidx, what);
  member_cursor c(impl_->za, uidx, false, what);
  std::vector<std::byte> head(static_cast<std::size_t>(std::min<std::uint64_t>(st.size, 1 << 20)));
  c.read(0, head);
  return parse_npy_header(head, what);
}

template <typename T>
npy_array<T> npz_archive::read(std::string_view name) const {
  std::vector<std::byte> const bytes = read_bytes(name);
  return read_npy_buffer<T>(bytes, fmt::format("{}:{}", path_.string(), strip_npy(name)));
}

template npy_array<float> npz_archive::read<float>(std::string_view) const;
template npy_array<double> npz_archive::read<double>(std::string_view) const;
template npy_array<std::int8_t> npz_archive::read<std::int8_t>(std::string_view) const;
template npy_array<std::uint8_t> npz_archive::read<std::uint8_t>(std::string_view) const;
template npy_array<std::int16_t> npz_archive::read<std::int16_t>(std::string_view) const;
template npy_array<std::uint16_t> npz_archive::read<std::uint16_t>(std::string_view) const;
template npy_array<std::int32_t> npz_archive::read<std::int32_t>(std::string_view) const;
template npy_array<std::uint32_t> npz_archive::read<std::uint32_t>(std::string_view) const;
template npy_array<std::int64_t> npz_archive::read<std::int64_t>(std::string_view) const;
template npy_array<std::uint64_t> npz_archive::read<std::uint64_t>(std::string_view) const;

void write_npz(const std::filesystem::path& file, std::span<const npz_float32_member> members) {
  std::vector<std::string> images;  // libzip reads the buffers at zip_close
  images.reserve(members.size());
  for (std::size_t i = 0; i < members.size(); ++i) {
    auto const& m = members[i];
    COOPGNN_EXPECTS(!m.name.empty(), "write_npz({}): member {} has no name", file.string(), i);
    for (std::size_t j = 0; j < i; ++j) {
      COOPGNN_EXPECTS(members[j].name != m.name, "write_npz({}): member '{}' appears twice",
                      file.string(), m.name);
    }
    std::int64_t n = 1;
    for (auto d : m.shape) n *= d;
    COOPGNN_EXPECTS(n == static_cast<std::int64_t>(m.data.size()),
                    "write_npz({}): member '{}' has {} values, its shape {} holds {}",
                    file.string(), m.name, m.data.size(), format_npy_shape(m.shape), n);
    std::string image = make_npy_header(npy_dtype::float32, m.shape);
    image.append(reinterpret_cast<const char*>(m.data.data()), m.data.size_bytes());
    images.push_back(std::move(image));
  }
  int err = 0;
  zip_t* za = zip_open(file.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &err);
  if (za == nullptr) {
    zip_error_t ze;
    zip_error_init_with_code(&ze, err);
    std::string const why = zip_error_strerror(&ze);
    zip_error_fini(&ze);
    COOPGNN_IO_FAIL("{}: cannot write the .npz archive: {}", file.string(), why);
  }
  auto const fail = [&](const std::string& what) {
    std::string const why = zip_strerror(za);
    zip_discard(za);
    COOPGNN_IO_FAIL("{}: cannot write the .npz archive ({}): {}", file.string(), what, why);
  };
  for (std::size_t i = 0; i < members.size(); ++i) {
    zip_source_t* src = zip_source_buffer(za, images[i].data(), images[i].size(), 0);
    if (src == nullptr) fail(members[i].name);
    zip_int64_t const idx =
        zip_file_add(za, (members[i].name + ".npy").c_str(), src, ZIP_FL_ENC_UTF_8);
    if (idx < 0) {
      zip_source_free(src);
      fail(members[i].name);
    }
    if (zip_set_file_compression(za, static_cast<zip_uint64_t>(idx), ZIP_CM_STORE, 0) != 0) {
      fail(members[i].name);
    }
  }
  if (zip_close(za) != 0) fail("close");
}

}  // namespace coopgnn
