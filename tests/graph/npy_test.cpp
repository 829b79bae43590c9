// NumPy .npy / .npz reading and writing (runtime/graph/npy.hpp, npz.hpp).
#include "runtime/graph/npy.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>
#include <zip.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "runtime/core/error.hpp"
#include "runtime/graph/npz.hpp"
#include "tests/common/files.hpp"
namespace coopgnn {
namespace {

using test::error_of;
using test::read_text;
using test::temp_dir;
using test::write_text;

namespace fs = std::filesystem;
using ::testing::HasSubstr;

/// A .npy image built by hand (independent of make_npy_header): magic, version, header length,
/// the dict text padded with spaces to 16 bytes, '\n', then `data`.
std::string npy_image(const std::string& dict, const std::string& data, int major = 1) {
  std::string h = dict;
  std::size_t const prefix = major == 1 ? 10 : 12;
  while ((prefix + h.size() + 1) % 16 != 0) h.push_back(' ');
  h.push_back('\n');
  std::string out = "\x93NUMPY";
  out.push_back(static_cast<char>(major));
  out.push_back('\0');
  std::size_t const len = h.size();
  out.push_back(static_cast<char>(len & 0xff));
  out.push_back(static_cast<char>((len >> 8) & 0xff));
  if (major > 1) {
    out.push_back('\0');
    out.push_back('\0');
  }
  return out + h + data;
}

template <typename T>
std::string raw(const std::vector<T>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
}

void write_file(const fs::path& p, const std::string& bytes) {
  std::ofstream out(p, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::span<const std::byte> as_bytes(const std::string& s) {
  return {reinterpret_cast<const std::byte*>(s.data()), s.size()};
}

// ---- round trips ---------------------------------------------------------------------------

TEST(Npy, Float32RoundTrip2D) {
  temp_dir d;
  std::vector<float> const v = {1.5f, -2.0f, 3.25f, 0.0f, 1e-7f, 42.0f};
  std::int64_t const shape[] = {2, 3};
  write_npy(d / "a.npy", std::span<const float>(v), shape);
  auto const a = read_npy<float>(d / "a.npy");
  EXPECT_EQ(a.shape, (std::vector<std::int64_t>{2, 3}));
  EXPECT_EQ(a.data, v);
  EXPECT_EQ(a.stored, npy_dtype::float32);
  // Data starts on a 64-byte boundary, header is version 1.0 and ends in '\n'.
  auto const h = read_npy_header(d / "a.npy");
  EXPECT_EQ(h.data_offset % 64, 0u);
  EXPECT_EQ(h.version_major, 1);
  EXPECT_EQ(fs::file_size(d / "a.npy"), h.data_offset + 24);
  std::ifstream in(d / "a.npy", std::ios::binary);
  std::string head(h.data_offset, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  EXPECT_EQ(head.back(), '\n');
  EXPECT_THAT(head, HasSubstr("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }"));
}

TEST(Npy, Int64RoundTrip1D) {
  temp_dir d;
  std::vector<std::int64_t> const v = {0, -1, 1LL << 40, 7, -(1LL << 62)};
  std::int64_t const shape[] = {5};
  write_npy(d / "a.npy", std::span<const std::int64_t>(v), shape);
  auto const a = read_npy<std::int64_t>(d / "a.npy");
  EXPECT_EQ(a.shape, (std::vector<std::int64_t>{5}));
  EXPECT_EQ(a.data, v);
  std::ifstream in(d / "a.npy", std::ios::binary);
  std::string head(64, '\0');
  in.read(head.data(), 64);
  EXPECT_THAT(head, HasSubstr("'shape': (5,)"));
  EXPECT_THAT(head, HasSubstr("'<i8'"));
}

TEST(Npy, Int32AndUint8AndBoolRoundTrip) {
  temp_dir d;
  std::vector<std::int32_t> const i32 = {1, -2, 3, -4, 5, -6, 7, -8};
  std::int64_t const s24[] = {2, 4};
  write_npy(d / "i.npy", std::span<const std::int32_t>(i32), s24);
  auto const a = read_npy<std::int32_t>(d / "i.npy");
  EXPECT_EQ(a.data, i32);
  EXPECT_EQ(a.stored, npy_dtype::int32);
  // int32 widened to int64 and to double.
  EXPECT_EQ(read_npy<std::int64_t>(d / "i.npy").data,
            (std::vector<std::int64_t>{1, -2, 3, -4, 5, -6, 7, -8}));
  EXPECT_EQ(read_npy<double>(d / "i.npy").data[3], -4.0);

  std::vector<std::uint8_t> const u8 = {0, 255, 3};
  std::int64_t const s3[] = {3};
  write_npy(d / "u.npy", std::span<const std::uint8_t>(u8), s3);
  EXPECT_EQ(read_npy<std::uint8_t>(d / "u.npy").data, u8);
  EXPECT_EQ(read_npy<std::uint8_t>(d / "u.npy").stored, npy_dtype::uint8);

  std::vector<std::uint8_t> const b = {1, 0, 1, 1};
  std::int64_t const s4[] = {4};
  write_npy(d / "b.npy", std::span<const std::uint8_t>(b), s4, /*as_bool=*/true);
  auto const rb = read_npy<std::uint8_t>(d / "b.npy");
  EXPECT_EQ(rb.stored, npy_dtype::bool_);
  EXPECT_EQ(rb.data, b);
  EXPECT_EQ(read_npy<float>(d / "b.npy").data, (std::vector<float>{1, 0, 1, 1}));
}

TEST(Npy, EmptyAndScalarShapes) {
  temp_dir d;
  std::vector<float> const none;
  std::int64_t const s0[] = {0, 5};
  write_npy(d / "e.npy", std::span<const float>(none), s0);
  auto const e = read_npy<float>(d / "e.npy");
  EXPECT_EQ(e.shape, (std::vector<std::int64_t>{0, 5}));
  EXPECT_TRUE(e.data.empty());
  // A hand-made scalar: shape ().
  write_file(d / "s.npy", npy_image("{'descr': '<i8', 'fortran_order': False, 'shape': (), }",
                                    raw(std::vector<std::int64_t>{9})));
  auto const s = read_npy<std::int64_t>(d / "s.npy");
  EXPECT_TRUE(s.shape.empty());
  EXPECT_EQ(s.data, (std::vector<std::int64_t>{9}));
}

struct dtype_case {
  const char* descr;
  std::string data;
  npy_dtype stored;
};

TEST(Npy, EveryStoredDtypeConvertsToInt64AndDouble) {
  std::vector<dtype_case> const cases = {
      {"|b1", std::string("\x01\x00\x01", 3), npy_dtype::bool_},
      {"|i1", raw(std::vector<std::int8_t>{1, 0, -1}), npy_dtype::int8},
      {"|u1", raw(std::vector<std::uint8_t>{1, 0, 200}), npy_dtype::uint8},
      {"<i2", raw(std::vector<std::int16_t>{1, 0, -300}), npy_dtype::int16},
      {"<u2", raw(std::vector<std::uint16_t>{1, 0, 60000}), npy_dtype::uint16},
      {"<i4", raw(std::vector<std::int32_t>{1, 0, -70000}), npy_dtype::int32},
      {"<u4", raw(std::vector<std::uint32_t>{1, 0, 4000000000u}), npy_dtype::uint32},
      {"<i8", raw(std::vector<std::int64_t>{1, 0, -5000000000LL}), npy_dtype::int64},
      {"<u8", raw(std::vector<std::uint64_t>{1, 0, 6000000000ULL}), npy_dtype::uint64},
      {"<f4", raw(std::vector<float>{1, 0, -2.0f}), npy_dtype::float32},
      {"<f8", raw(std::vector<double>{1, 0, 1e10}), npy_dtype::float64},
  };
  std::vector<std::int64_t> const third = {
      1,  -1,           200, -300, 60000, -70000, 4000000000LL, -5000000000LL, 6000000000LL,
      -2, 10000000000LL};
  for (std::size_t i = 0; i < cases.size(); ++i) {
    SCOPED_TRACE(cases[i].descr);
    std::string const img = npy_image(
        std::string("{'descr': '") + cases[i].descr + "', 'fortran_order': False, 'shape': (3,), }",
        cases[i].data);
    auto const a = read_npy_buffer<std::int64_t>(as_bytes(img), "mem");
    EXPECT_EQ(a.stored, cases[i].stored);
    ASSERT_EQ(a.data.size(), 3u);
    EXPECT_EQ(a.data[0], 1);
    EXPECT_EQ(a.data[1], 0);
    EXPECT_EQ(a.data[2], third[i]);
    auto const f = read_npy_buffer<double>(as_bytes(img), "mem");
    EXPECT_EQ(f.data[2], static_cast<double>(third[i]));
  }
}

TEST(Npy, NarrowingConversionsAreChecked) {
  std::string const img = npy_image("{'descr': '<i8', 'fortran_order': False, 'shape': (2,), }",
                                    raw(std::vector<std::int64_t>{5, 300}));
  EXPECT_EQ(read_npy_buffer<std::int16_t>(as_bytes(img), "m").data,
            (std::vector<std::int16_t>{5, 300}));
  EXPECT_THAT(error_of([&] { (void)read_npy_buffer<std::uint8_t>(as_bytes(img), "arr.npy"); }),
              HasSubstr("arr.npy: element 1 = 300 does not fit"));
  std::string const frac = npy_image("{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }",
                                     raw(std::vector<double>{2.0, 2.5}));
  EXPECT_THAT(error_of([&] { (void)read_npy_buffer<std::int64_t>(as_bytes(frac), "f.npy"); }),
              HasSubstr("f.npy: element 1 = 2.5"));
  std::string const neg = npy_image("{'descr': '<i4', 'fortran_order': False, 'shape': (1,), }",
                                    raw(std::vector<std::int32_t>{-1}));
  EXPECT_THAT(error_of([&] { (void)read_npy_buffer<std::uint32_t>(as_bytes(neg), "n.npy"); }),
              HasSubstr("does not fit"));
}

TEST(Npy, Versions2And3) {
  for (int major : {2, 3}) {
    std::string const img =
        npy_image("{\"descr\": \"<i4\", \"fortran_order\": False, \"shape\": (2, 2)}",
                  raw(std::vector<std::int32_t>{1, 2, 3, 4}), major);
    auto const a = read_npy_buffer<std::int32_t>(as_bytes(img), "v");
    EXPECT_EQ(a.shape, (std::vector<std::int64_t>{2, 2}));
    EXPECT_EQ(a.data, (std::vector<std::int32_t>{1, 2, 3, 4}));
  }
}

TEST(Npy, FortranOrderIsTransposed) {
  // Column-major [[1, 2, 3], [4, 5, 6]] is stored 1 4 2 5 3 6.
  temp_dir d;
  write_file(d / "f.npy", npy_image("{'descr': '<i4', 'fortran_order': True, 'shape': (2, 3), }",
                                    raw(std::vector<std::int32_t>{1, 4, 2, 5, 3, 6})));
  auto const a = read_npy<std::int64_t>(d / "f.npy");
  EXPECT_EQ(a.shape, (std::vector<std::int64_t>{2, 3}));
  EXPECT_EQ(a.data, (std::vector<std::int64_t>{1, 2, 3, 4, 5, 6}));
  // Same dtype path (no conversion) too.
  EXPECT_EQ(read_npy<std::int32_t>(d / "f.npy").data,
            (std::vector<std::int32_t>{1, 2, 3, 4, 5, 6}));
  // Rank 3, shape (2, 2, 2): C element [i][j][k] = 100 i + 10 j + k sits at Fortran offset
  // i + 2 j + 4 k.
  std::vector<std::int32_t> fdata(8);
  std::vector<std::int32_t> expect;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j)
      for (int k = 0; k < 2; ++k) {
        fdata[i + 2 * j + 4 * k] = 100 * i + 10 * j + k;
        expect.push_back(100 * i + 10 * j + k);
      }
  std::string const img =
      npy_image("{'descr': '<i4', 'fortran_order': True, 'shape': (2, 2, 2), }", raw(fdata));
  EXPECT_EQ(read_npy_buffer<std::int32_t>(as_bytes(img), "f3").data, expect);
}

// ---- rejected input ------------------------------------------------------------------------

TEST(Npy, TruncatedFileIsRejected) {
  temp_dir d;
  std::vector<float> const v = {1, 2, 3, 4, 5, 6};
  std::int64_t const shape[] = {6};
  write_npy(d / "t.npy", std::span<const float>(v), shape);
  fs::resize_file(d / "t.npy", fs::file_size(d / "t.npy") - 4);
  std::string const msg = error_of([&] { (void)read_npy<float>(d / "t.npy"); });
  EXPECT_THAT(msg, HasSubstr("t.npy: truncated: expected 24 bytes of data, found 20"));
  EXPECT_THAT(error_of([&] { (void)read_npy_header(d / "t.npy"); }), HasSubstr("truncated"));
}

TEST(Npy, TrailingBytesAreRejected) {
  std::string const img = npy_image("{'descr': '<i4', 'fortran_order': False, 'shape': (1,), }",
                                    raw(std::vector<std::int32_t>{1, 2}));
  EXPECT_THAT(error_of([&] { (void)read_npy_buffer<std::int32_t>(as_bytes(img), "x.npy"); }),
              HasSubstr("x.npy: 4 unexpected trailing bytes"));
}

TEST(Npy, WrongMagicIsRejected) {
  temp_dir d;
  write_file(d / "m.npy", "PK\x03\x04 this is a zip, not an npy file");
  EXPECT_THAT(error_of([&] { (void)read_npy<float>(d / "m.npy"); }),
              HasSubstr("m.npy: not a .npy file (wrong magic"));
  write_file(d / "short.npy", "\x93NU");
  EXPECT_THAT(error_of([&] { (void)read_npy<float>(d / "short.npy"); }), HasSubstr("short.npy"));
}

TEST(Npy, MissingFileIsRejected) {
  temp_dir d;
  EXPECT_THAT(error_of([&] { (void)read_npy<float>(d / "nope.npy"); }),
              HasSubstr("nope.npy: cannot open"));
}

TEST(Npy, UnsupportedDtypesAreRejected) {
  struct bad {
    const char* descr;
    const char* word;
  };
  for (const bad& b : {bad{"|O", "object"}, bad{">f4", "big-endian"}, bad{"<U5", "string"},
                       bad{">f2", "big-endian"}, bad{"<c8", "complex"}, bad{"|V8", "structured"},
                       bad{"<M8[ns]", "datetime"}}) {
    SCOPED_TRACE(b.descr);
    std::string const img = npy_image(
        std::string("{'descr': '") + b.descr + "', 'fortran_order': False, 'shape': (1,), }",
        std::string(8, '\0'));
    std::string const msg = error_of([&] { (void)read_npy_buffer<float>(as_bytes(img), "o.npy"); });
    EXPECT_THAT(msg, HasSubstr("o.npy: unsupported dtype"));
    EXPECT_THAT(msg, HasSubstr(b.word));
  }
  std::string const structured = npy_image(
      "{'descr': [('a', '<i4')], 'fortran_order': False, 'shape': (1,), }", std::string(4, '\0'));
  EXPECT_THAT(error_of([&] { (void)read_npy_buffer<float>(as_bytes(structured), "s.npy"); }),
              HasSubstr("structured"));
}

TEST(Npy, Float16IsReadAtItsWidthAndNeverConverted) {
  temp_dir d;
  // [2, 3] float16 bit patterns: 1, 2, 2^-24 (subnormal), -0, +inf, NaN.
  std::vector<std::uint16_t> const bits = {0x3C00, 0x4000, 0x0001, 0x8000, 0x7C00, 0x7E00};
  write_file(d / "h.npy",
             npy_image("{'descr': '<f2', 'fortran_order': False, 'shape': (2, 3), }", raw(bits)));
  npy_header const h = read_npy_header(d / "h.npy");
  EXPECT_EQ(h.dtype, npy_dtype::float16);
  EXPECT_EQ(h.data_bytes(), 12U);
  EXPECT_EQ(npy_dtype_name(h.dtype), "float16");
  npy_array<std::uint16_t> const a = read_npy_bits16(d / "h.npy");
  EXPECT_EQ(a.shape, (std::vector<std::int64_t>{2, 3}));
  EXPECT_EQ(a.stored, npy_dtype::float16);
  EXPECT_EQ(a.data, bits);
  // Fortran order: element (i, j) at i + 2 j; read in C order, bits unchanged.
  std::vector<std::uint16_t> const f = {0x3C00, 0x8000, 0x4000, 0x7C00, 0x0001, 0x7E00};
  write_file(d / "f.npy",
             npy_image("{'descr': '<f2', 'fortran_order': True, 'shape': (2, 3), }", raw(f)));
  EXPECT_EQ(read_npy_bits16(d / "f.npy").data, bits);
  // Never converted to another type (a 16-bit table is not widened by a reader).
  for (auto const& msg :
       {error_of([&] { (void)read_npy<float>(d / "h.npy"); }),
        error_of([&] { (void)read_npy<std::uint16_t>(d / "h.npy"); }), error_of([&] {
          (void)read_npy_buffer<double>(as_bytes(read_text(d / "h.npy")), "m.npy");
        })}) {
    EXPECT_THAT(msg, HasSubstr("float16 data is read only at 2 bytes per element"));
  }
  // Other dtypes are not float16.
  std::vector<float> const fl = {1.0f, 2.0f};
  write_file(d / "g.npy",
             npy_image("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", raw(fl)));
  EXPECT_THAT(error_of([&] { (void)read_npy_bits16(d / "g.npy"); }),
              HasSubstr("g.npy: the array is float32, not float16"));
  // Truncated data is found by the header check.
  write_file(d / "t.npy", npy_image("{'descr': '<f2', 'fortran_order': False, 'shape': (2, 3), }",
                                    raw(bits).substr(0, 10)));
  EXPECT_THAT(error_of([&] { (void)read_npy_bits16(d / "t.npy"); }), HasSubstr("truncated"));
}

TEST(Npy, WritesFloat16AsF2) {
  temp_dir d;
  std::vector<std::uint16_t> const bits = {0x3C00, 0xC000, 0x0400, 0x7BFF};
  std::int64_t const shape[2] = {2, 2};
  write_npy_bits16(d / "w.npy", bits, shape);
  std::string const img = read_text(d / "w.npy");
  EXPECT_THAT(img, HasSubstr("{'descr': '<f2', 'fortran_order': False, 'shape': (2, 2), }"));
  EXPECT_EQ(img.size() % 64, 8U);  // 64-byte aligned header, then 8 bytes of data
  EXPECT_EQ(img.substr(img.size() - 8), raw(bits));
  EXPECT_EQ(read_npy_bits16(d / "w.npy").data, bits);
  EXPECT_THROW((void)make_npy_header(npy_dtype::bfloat16, shape), logic_error);
}

TEST(Npy, MalformedHeadersAreRejected) {
  struct bad {
    std::string dict;
    const char* word;
  };
  for (const bad& b :
       {bad{"{'descr': '<f4', 'fortran_order': False, }", "no 'shape'"},
        bad{"{'descr': '<f4', 'shape': (1,), }", "no 'fortran_order'"},
        bad{"{'descr': '<f4', 'fortran_order': Maybe, 'shape': (1,), }", "True or False"},
        bad{"{'descr': '<f4', 'fortran_order': False, 'shape': (-1,), }", "negative"},
        bad{"{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'x': 1}", "unexpected key"},
        bad{"['descr', '<f4']", "expected '{'"},
        bad{"{'descr': '<f4' 'fortran_order': False, 'shape': (1,)}", "expected ','"}}) {
    SCOPED_TRACE(b.dict);
    std::string const img = npy_image(b.dict, std::string(4, '\0'));
    std::string const msg = error_of([&] { (void)read_npy_buffer<float>(as_bytes(img), "h.npy"); });
    EXPECT_THAT(msg, HasSubstr("h.npy: invalid .npy header"));
    EXPECT_THAT(msg, HasSubstr(b.word));
  }
  // Header length past the end of the buffer.
  std::string img = npy_image("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", "");
  img[8] = '\xff';
  img[9] = '\x7f';
  EXPECT_THAT(error_of([&] { (void)read_npy_buffer<float>(as_bytes(img), "l.npy"); }),
              HasSubstr("l.npy: header length 32767 runs past the end"));
  // Unknown version.
  std::string v9 =
      npy_image("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", std::string(4, '\0'));
  v9[6] = '\x09';
  EXPECT_THAT(error_of([&] { (void)read_npy_buffer<float>(as_bytes(v9), "v.npy"); }),
              HasSubstr("version 9.0"));
}

TEST(Npy, WriteIsAtomicAndChecksShape) {
  temp_dir d;
  std::vector<float> const v = {1, 2, 3};
  std::int64_t const bad_shape[] = {2, 2};
  EXPECT_THROW(write_npy(d / "w.npy", std::span<const float>(v), bad_shape), logic_error);
  EXPECT_FALSE(fs::exists(d / "w.npy"));
  // Writing into a missing directory fails cleanly and leaves nothing behind.
  std::int64_t const shape[] = {3};
  EXPECT_THAT(error_of([&] { write_npy(d / "no" / "w.npy", std::span<const float>(v), shape); }),
              HasSubstr("w.npy: cannot create"));
  write_npy(d / "w.npy", std::span<const float>(v), shape);
  int files = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(d.path())) ++files;
  EXPECT_EQ(files, 1);  // no temporary left
}

// ---- npz -----------------------------------------------------------------------------------

/// Writes a zip with the given members; deflate or store.
void write_zip(const fs::path& p, const std::vector<std::pair<std::string, std::string>>& members,
               bool deflate) {
  int err = 0;
  zip_t* za = zip_open(p.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &err);
  ASSERT_NE(za, nullptr);
  for (const auto& [name, bytes] : members) {
    zip_source_t* src = zip_source_buffer(za, bytes.data(), bytes.size(), 0);
    ASSERT_NE(src, nullptr);
    zip_int64_t const idx = zip_file_add(za, name.c_str(), src, ZIP_FL_OVERWRITE);
    ASSERT_GE(idx, 0);
    zip_set_file_compression(za, static_cast<zip_uint64_t>(idx),
                             deflate ? ZIP_CM_DEFLATE : ZIP_CM_STORE, 0);
  }
  ASSERT_EQ(zip_close(za), 0);
}

TEST(Npz, ReadsStoredAndDeflatedMembers) {
  temp_dir d;
  std::string const a = npy_image("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }",
                                  raw(std::vector<float>{1, 2, 3, 4}));
  std::string const b = npy_image("{'descr': '<i8', 'fortran_order': False, 'shape': (3,), }",
                                  raw(std::vector<std::int64_t>{7, 8, 9}));
  for (bool deflate : {false, true}) {
    SCOPED_TRACE(deflate);
    write_zip(d / "x.npz", {{"feat.npy", a}, {"ids.npy", b}}, deflate);
    npz_archive const z(d / "x.npz");
    EXPECT_EQ(z.members(), (std::vector<std::string>{"feat", "ids"}));
    EXPECT_TRUE(z.contains("feat"));
    EXPECT_TRUE(z.contains("ids.npy"));
    EXPECT_FALSE(z.contains("labels"));
    EXPECT_EQ(z.read<float>("feat").data, (std::vector<float>{1, 2, 3, 4}));
    EXPECT_EQ(z.read<std::int32_t>("ids").data, (std::vector<std::int32_t>{7, 8, 9}));
    EXPECT_EQ(z.header("feat").shape, (std::vector<std::int64_t>{2, 2}));
  }
}

TEST(Npz, ErrorsNameArchiveAndMember) {
  temp_dir d;
  std::string const bad =
      npy_image("{'descr': '|O', 'fortran_order': False, 'shape': (1,), }", std::string(8, '\0'));
  write_zip(d / "x.npz", {{"obj.npy", bad}}, true);
  npz_archive const z(d / "x.npz");
  std::string const msg = error_of([&] { (void)z.read<float>("obj"); });
  EXPECT_THAT(msg, HasSubstr("x.npz:obj: unsupported dtype"));
  EXPECT_THAT(error_of([&] { (void)z.read<float>("missing"); }),
              HasSubstr("x.npz: no member 'missing' in the archive; members are: obj"));
  write_file(d / "not.npz", "definitely not a zip archive");
  EXPECT_THAT(error_of([&] { npz_archive const y(d / "not.npz"); }),
              HasSubstr("not.npz: cannot open as a .npz (zip) archive"));
  EXPECT_THAT(error_of([&] { npz_archive const y(d / "absent.npz"); }),
              HasSubstr("absent.npz: cannot open: missing file"));
}

}  // namespace
}  // namespace coopgnn

// ---- sizes declared in files (runtime/core/memory_limit.hpp) -----------------------------

namespace coopgnn {
namespace {

using test::in_limited_child;
using test::scoped_env;

constexpr std::uint64_t kChildSlack = 32u << 20;  // what a refusal may allocate: 32 MiB

// A header claiming 1.25e15 float64 = 10^16 bytes over a file with no data: refused from the
// file size before a byte of data is allocated (the child could not allocate 10^16 bytes).
TEST(DeclaredSizes, NpyHeaderClaiming1e16BytesIsRefusedBeforeAllocating) {
  temp_dir d;
  std::string const img =
      npy_image("{'descr': '<f8', 'fortran_order': False, 'shape': (1250000000000000,), }", "");
  write_file(d / "big.npy", img);
  std::string const want =
      "truncated: expected 10000000000000000 bytes of data, found 0 (shape (1250000000000000,), "
      "dtype float64)";
  EXPECT_THAT(
      in_limited_child(kChildSlack,
                       [&] { return error_of([&] { (void)read_npy<double>(d / "big.npy"); }); }),
      HasSubstr((d / "big.npy").string() + ": " + want));
  EXPECT_THAT(
      in_limited_child(kChildSlack,
                       [&] { return error_of([&] { (void)read_npy_header(d / "big.npy"); }); }),
      HasSubstr(want));
  EXPECT_THAT(in_limited_child(kChildSlack,
                               [&] {
                                 return error_of([&] {
                                   (void)read_npy_buffer<float>(as_bytes(img), "mem.npy");
                                 });
                               }),
              HasSubstr("mem.npy: " + want));
}

// A version 2.0 header length of 2^32 - 1 in a 12-byte file: the header buffer is sized by the
// file, not by the declared length (it was 16 MiB per read before).
TEST(DeclaredSizes, NpyHeaderLengthBeyondTheFile) {
  temp_dir d;
  std::string img = "\x93NUMPY";
  img += std::string("\x02\x00\xff\xff\xff\xff", 6);
  write_file(d / "h.npy", img);
  EXPECT_THAT(
      in_limited_child(4u << 20,
                       [&] { return error_of([&] { (void)read_npy_header(d / "h.npy"); }); }),
      HasSubstr("h.npy: header length 4294967295 runs past the end of the file (12 bytes)"));
}

// The array as read may outgrow the file: 100 uint8 read as int64 need 800 bytes.
TEST(DeclaredSizes, NpyConversionCheckedAgainstTheMemoryLimit) {
  temp_dir d;
  write_file(d / "u8.npy", npy_image("{'descr': '|u1', 'fortran_order': False, 'shape': (100,), }",
                                     std::string(100, '\x01')));
  {
    scoped_env const env("COOPGNN_MEMORY_LIMIT", "799");
    EXPECT_THAT(error_of([&] { (void)read_npy<std::int64_t>(d / "u8.npy"); }),
                HasSubstr("u8.npy: the element count of shape (100,) = 100 needs 800 bytes (800 B; "
                          "8 bytes per element once read) but only 799 bytes"));
    EXPECT_EQ(read_npy<std::uint8_t>(d / "u8.npy").data.size(), 100u);  // 100 bytes fit
  }
  scoped_env const env("COOPGNN_MEMORY_LIMIT", "800");
  EXPECT_EQ(read_npy<std::int64_t>(d / "u8.npy").data, std::vector<std::int64_t>(100, 1));
}

/// Overwrites the uncompressed size of the first member in the local and central headers of the
/// zip `p` (offsets 22 and 24 after the signatures PK\3\4 and PK\1\2).
void patch_declared_size(const fs::path& p, std::uint32_t size) {
  std::string z = read_text(p);
  auto put = [&](std::size_t at) {
    for (int i = 0; i < 4; ++i) z[at + i] = static_cast<char>((size >> (8 * i)) & 0xff);
  };
  std::size_t const local = z.find("PK\x03\x04");
  std::size_t const central = z.find("PK\x01\x02");
  ASSERT_NE(local, std::string::npos);
  ASSERT_NE(central, std::string::npos);
  put(local + 22);
  put(central + 24);
  write_file(p, z);
}

std::string small_member() {
  return npy_image("{'descr': '<i8', 'fortran_order': False, 'shape': (4,), }",
                   raw(std::vector<std::int64_t>{1, 2, 3, 4}));
}

TEST(DeclaredSizes, NpzDeflatedMemberDeclaringMoreThanItCanHold) {
  temp_dir d;
  write_zip(d / "x.npz", {{"a.npy", small_member()}}, true);
  patch_declared_size(d / "x.npz", 0xFFFFFFF0u);
  std::string const msg = in_limited_child(kChildSlack, [&] {
    return error_of([&] { (void)npz_archive(d / "x.npz").read<std::int64_t>("a"); });
  });
  EXPECT_THAT(msg, HasSubstr((d / "x.npz").string() +
                             ":a: corrupt member: declares 4294967280 uncompressed bytes, more "
                             "than "));
  EXPECT_THAT(msg, HasSubstr("deflated bytes can hold (at most 1032 : 1)"));
}

TEST(DeclaredSizes, NpzStoredMemberWhoseSizesDisagree) {
  temp_dir d;
  write_zip(d / "x.npz", {{"a.npy", small_member()}}, false);
  std::size_t const stored = small_member().size();  // 16-byte aligned header + 32 bytes
  patch_declared_size(d / "x.npz", 0xFFFFFFF0u);
  EXPECT_THAT(in_limited_child(kChildSlack,
                               [&] {
                                 return error_of([&] {
                                   (void)npz_archive(d / "x.npz").read<std::int64_t>("a");
                                 });
                               }),
              HasSubstr(fmt::format(":a: corrupt member: stored (uncompressed) with {} bytes but "
                                    "its declared size is 4294967280",
                                    stored)));
}

TEST(DeclaredSizes, NpzMemberOverTheMemoryLimit) {
  temp_dir d;
  write_zip(d / "x.npz", {{"a.npy", small_member()}}, false);
  std::size_t const n = small_member().size();
  scoped_env const env("COOPGNN_MEMORY_LIMIT", "40");
  EXPECT_THAT(error_of([&] { (void)npz_archive(d / "x.npz").read<std::int64_t>("a"); }),
              HasSubstr(fmt::format(":a: uncompressed size = {} needs {} bytes", n, n)));
  scoped_env const enough("COOPGNN_MEMORY_LIMIT", std::to_string(n).c_str());
  EXPECT_EQ(npz_archive(d / "x.npz").read<std::int64_t>("a").data,
            (std::vector<std::int64_t>{1, 2, 3, 4}));
}

}  // namespace
}  // namespace coopgnn
