// PyTorch torch.save tensors (runtime/graph/torch_tensor.hpp). The fixtures in tests/data/torch
// come from tools/gen_torch_fixtures.py: NAME.pt written by torch.save and NAME.npy by np.save of
// the same tensor, so the expected values come from torch and numpy, never from the reader.
#include "runtime/graph/torch_tensor.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <zip.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "runtime/core/error.hpp"
#include "runtime/graph/dataset.hpp"
#include "runtime/graph/npy.hpp"
#include "tests/common/files.hpp"

namespace coopgnn {
namespace {

using test::error_of;
using test::read_text;
using test::temp_dir;
using test::write_text;
using ::testing::AllOf;
using ::testing::HasSubstr;

namespace fs = std::filesystem;

fs::path fixture(const std::string& name) {
  return fs::path(COOPGNN_SOURCE_DIR) / "tests" / "data" / "torch" / name;
}

/// read_torch<T>(NAME.pt) equals read_npy<T>(NAME.npy) in shape, stored dtype and every value.
template <typename T>
void expect_matches_npy(const std::string& name) {
  SCOPED_TRACE(name);
  npy_array<T> const got = read_torch<T>(fixture(name + ".pt"));
  npy_array<T> const want = read_npy<T>(fixture(name + ".npy"));
  EXPECT_EQ(got.shape, want.shape);
  EXPECT_EQ(got.stored, want.stored);
  EXPECT_EQ(got.data, want.data);
}

// ---- fixtures from torch.save --------------------------------------------------------------

TEST(TorchTensor, EveryDtypeMatchesNumpy) {
  expect_matches_npy<float>("float32_2d");
  expect_matches_npy<double>("float64_1d");
  expect_matches_npy<std::int64_t>("int64_1d");
  expect_matches_npy<std::int32_t>("int32_2d");
  expect_matches_npy<std::int16_t>("int16_1d");
  expect_matches_npy<std::int8_t>("int8_1d");
  expect_matches_npy<std::uint8_t>("uint8_1d");
  expect_matches_npy<std::uint8_t>("bool_1d");
  expect_matches_npy<float>("requires_grad");
  // The data is not all zeros (a reader returning zeros would pass nothing above by accident).
  npy_array<std::int64_t> const a = read_torch<std::int64_t>(fixture("int64_1d.pt"));
  EXPECT_NE(std::count(a.data.begin(), a.data.end(), 0), a.size());
}

TEST(TorchTensor, ViewsScalarsAndEmptyMatchNumpy) {
  expect_matches_npy<float>("transposed_2d");
  expect_matches_npy<std::int64_t>("slice_offset");
  expect_matches_npy<std::int32_t>("strided_2d");
  expect_matches_npy<float>("scalar_0d");
  expect_matches_npy<float>("empty_0x5");
}

TEST(TorchTensor, ConvertsWithTheRulesOfReadNpy) {
  expect_matches_npy<double>("float32_2d");
  expect_matches_npy<std::int64_t>("int32_2d");
  expect_matches_npy<std::int64_t>("bool_1d");
  expect_matches_npy<double>("transposed_2d");
  expect_matches_npy<std::int64_t>("strided_2d");
  expect_matches_npy<float>("int16_1d");
  // int64 values up to 2^40 do not fit in int32; fractional floats do not convert to integers.
  fs::path const p = fixture("int64_1d.pt");
  fs::path const q = fixture("int64_1d.npy");
  std::string const torch_msg = error_of([&] { (void)read_torch<std::int32_t>(p); });
  std::string const npy_msg = error_of([&] { (void)read_npy<std::int32_t>(q); });
  EXPECT_THAT(torch_msg, AllOf(HasSubstr(p.string()), HasSubstr("does not fit")));
  // One conversion routine: the same message after the file name.
  EXPECT_EQ(torch_msg.substr(p.string().size()), npy_msg.substr(q.string().size()));
  EXPECT_THAT(error_of([&] { (void)read_torch<std::int64_t>(fixture("float32_2d.pt")); }),
              HasSubstr("not a whole number"));
}

TEST(TorchTensor, HeaderDescribesTheView) {
  torch_tensor_header const t = read_torch_header(fixture("transposed_2d.pt"));
  EXPECT_EQ(t.dtype, npy_dtype::float32);
  EXPECT_EQ(t.shape, (std::vector<std::int64_t>{4, 3}));
  EXPECT_EQ(t.strides, (std::vector<std::int64_t>{1, 4}));
  EXPECT_EQ(t.storage_offset, 0);
  EXPECT_EQ(t.storage_numel, 12);
  EXPECT_EQ(t.storage_bytes, 48U);
  EXPECT_EQ(t.storage_record, "transposed_2d/data/0");
  EXPECT_EQ(t.location, "cpu");
  EXPECT_FALSE(t.requires_grad);
  EXPECT_FALSE(t.is_contiguous());
  EXPECT_EQ(t.num_elements(), 12);

  torch_tensor_header const s = read_torch_header(fixture("slice_offset.pt"));
  EXPECT_EQ(s.dtype, npy_dtype::int64);
  EXPECT_EQ(s.shape, (std::vector<std::int64_t>{4}));
  EXPECT_EQ(s.storage_offset, 3);
  EXPECT_EQ(s.storage_numel, 10);  // torch.save writes the whole storage of a slice
  EXPECT_TRUE(s.is_contiguous());

  torch_tensor_header const g = read_torch_header(fixture("strided_2d.pt"));
  EXPECT_EQ(g.dtype, npy_dtype::int32);
  EXPECT_EQ(g.shape, (std::vector<std::int64_t>{2, 3}));
  EXPECT_EQ(g.strides, (std::vector<std::int64_t>{6, 2}));
  EXPECT_EQ(g.storage_offset, 6);

  torch_tensor_header const z = read_torch_header(fixture("scalar_0d.pt"));
  EXPECT_TRUE(z.shape.empty());
  EXPECT_EQ(z.num_elements(), 1);
  torch_tensor_header const e = read_torch_header(fixture("empty_0x5.pt"));
  EXPECT_EQ(e.shape, (std::vector<std::int64_t>{0, 5}));
  EXPECT_EQ(e.num_elements(), 0);
  EXPECT_EQ(e.storage_bytes, 0U);
  EXPECT_TRUE(read_torch_header(fixture("requires_grad.pt")).requires_grad);
  EXPECT_EQ(read_torch_header(fixture("bool_1d.pt")).dtype, npy_dtype::bool_);
  EXPECT_EQ(read_torch_header(fixture("int8_1d.pt")).dtype, npy_dtype::int8);
  EXPECT_EQ(read_torch_header(fixture("uint8_1d.pt")).dtype, npy_dtype::uint8);
  EXPECT_EQ(read_torch_header(fixture("int16_1d.pt")).dtype, npy_dtype::int16);
  EXPECT_EQ(read_torch_header(fixture("float64_1d.pt")).dtype, npy_dtype::float64);
}

TEST(TorchTensor, ArchiveNameIsNotTheFileName) {
  temp_dir d;
  fs::path const renamed = d / "something_else.pt";
  fs::copy_file(fixture("int32_2d.pt"), renamed);
  EXPECT_EQ(read_torch_header(renamed).storage_record, "int32_2d/data/0");
  EXPECT_EQ(read_torch<std::int32_t>(renamed).data,
            read_npy<std::int32_t>(fixture("int32_2d.npy")).data);
}

TEST(TorchTensor, RejectsWhatTorchSavedThatIsNotOneNumericTensor) {
  fs::path const dict = fixture("dict_of_tensors.pt");
  EXPECT_THAT(error_of([&] { (void)read_torch<float>(dict); }),
              AllOf(HasSubstr(dict.string()), HasSubstr("holds a dict, not a single tensor")));
  EXPECT_THAT(error_of([&] { (void)read_torch_header(dict); }), HasSubstr("a dict"));
  // A float16 tensor is read at its width only (read_torch_bits16), never converted.
  fs::path const half = fixture("float16.pt");
  EXPECT_THAT(error_of([&] { (void)read_torch<float>(half); }),
              AllOf(HasSubstr(half.string()),
                    HasSubstr("float16 data is read only at 2 bytes per element")));
  fs::path const legacy = fixture("legacy.pt");
  EXPECT_THAT(error_of([&] { (void)read_torch<float>(legacy); }),
              AllOf(HasSubstr(legacy.string()), HasSubstr("legacy (pre-1.6, non-zip)")));
}

// ---- corrupted fixtures ----------------------------------------------------------------------

TEST(TorchTensor, CorruptedFilesAreIoErrorsNamingTheFile) {
  temp_dir d;
  std::string const good = read_text(fixture("float32_2d.pt"));
  ASSERT_GT(good.size(), 200U);

  fs::path const cut = d / "cut.pt";
  write_text(cut, good.substr(0, good.size() / 2));
  EXPECT_THAT(error_of([&] { (void)read_torch<float>(cut); }),
              AllOf(HasSubstr(cut.string()), HasSubstr("cannot open as a zip archive")));

  // Flip bytes inside data.pkl (stored uncompressed, so its text is in the file): the CRC fails.
  std::string flipped = good;
  std::size_t const at = flipped.find("_rebuild_tensor_v2");
  ASSERT_NE(at, std::string::npos);
  flipped[at] = 'X';
  flipped[at + 1] = 'Y';
  fs::path const flip = d / "flip.pt";
  write_text(flip, flipped);
  EXPECT_THAT(error_of([&] { (void)read_torch<float>(flip); }),
              AllOf(HasSubstr(flip.string()), HasSubstr("data.pkl"), HasSubstr("CRC")));

  // Flip a byte of the storage (found by its values, which numpy wrote at the end of the .npy):
  // the header still reads (it touches no element data), the elements do not.
  std::string const values = read_text(fixture("float32_2d.npy")).substr(128);
  ASSERT_EQ(values.size(), 15U * 4U);
  std::size_t const payload = good.find(values);
  ASSERT_NE(payload, std::string::npos);
  std::string bad_data = good;
  bad_data[payload + 5] = static_cast<char>(bad_data[payload + 5] ^ 0x5a);
  fs::path const bd = d / "bad_data.pt";
  write_text(bd, bad_data);
  EXPECT_NO_THROW((void)read_torch_header(bd));
  EXPECT_THAT(error_of([&] { (void)read_torch<float>(bd); }),
              AllOf(HasSubstr(bd.string()), HasSubstr("float32_2d/data/0"), HasSubstr("CRC")));

  fs::path const text = d / "text.pt";
  write_text(text, "feat_0,feat_1\n1,2\n");
  EXPECT_THAT(error_of([&] { (void)read_torch_header(text); }),
              AllOf(HasSubstr(text.string()), HasSubstr("not a zip archive")));

  // The legacy header: pickle PROTO 2, LONG1 of torch's magic number 0x1950a86a20f9469cfc6c.
  fs::path const legacy = d / "legacy.pt";
  write_text(legacy, std::string("\x80\x02\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19.", 15));
  EXPECT_THAT(error_of([&] { (void)read_torch_header(legacy); }),
              AllOf(HasSubstr(legacy.string()), HasSubstr("legacy")));

  fs::path const missing = d / "missing.pt";
  EXPECT_THAT(error_of([&] { (void)read_torch_header(missing); }),
              AllOf(HasSubstr(missing.string()), HasSubstr("missing file")));
}

// ---- archives built here ---------------------------------------------------------------------

/// Writes the pickle opcodes torch.save (protocol 2) emits, independently of the reader.
class pickle_writer {
 public:
  pickle_writer& proto() { return raw("\x80\x02"); }
  pickle_writer& global(const std::string& module, const std::string& name) {
    return raw("c" + module + "\n" + name + "\n");
  }
  pickle_writer& mark() { return raw("("); }
  pickle_writer& tuple() { return raw("t"); }
  pickle_writer& empty_tuple() { return raw(")"); }
  pickle_writer& integer(std::int64_t v) {
    if (v >= 0 && v < 256) return raw(std::string{'K', static_cast<char>(v)});
    std::string b{'\x8a', '\x08'};
    for (int i = 0; i < 8; ++i)
      b.push_back(static_cast<char>((static_cast<std::uint64_t>(v) >> (8 * i)) & 0xff));
    return raw(b);
  }
  pickle_writer& ints(const std::vector<std::int64_t>& v) {
    mark();
    for (std::int64_t x : v) integer(x);
    return tuple();
  }
  pickle_writer& str(const std::string& s) {
    std::string b{'X'};
    for (int i = 0; i < 4; ++i) b.push_back(static_cast<char>((s.size() >> (8 * i)) & 0xff));
    return raw(b + s);
  }
  pickle_writer& boolean(bool v) { return raw(v ? "\x88" : "\x89"); }
  pickle_writer& raw(const std::string& b) {
    bytes += b;
    return *this;
  }
  std::string bytes;
};

struct view_usecase {
  std::string storage_type = "LongStorage";
  std::string key = "0";
  std::int64_t numel = 6;
  std::int64_t offset = 0;
  std::vector<std::int64_t> size{6};
  std::vector<std::int64_t> stride{1};
};

/// The data.pkl of torch.save(tensor) for the view `u`.
std::string tensor_pickle(const view_usecase& u) {
  pickle_writer w;
  w.proto().global("torch._utils", "_rebuild_tensor_v2").mark();
  w.mark().str("storage").global("torch", u.storage_type).str(u.key).str("cpu").integer(u.numel);
  w.tuple().raw("Q").integer(u.offset).ints(u.size).ints(u.stride).boolean(false);
  w.global("collections", "OrderedDict").empty_tuple().raw("R").tuple().raw("R.");
  return w.bytes;
}

template <typename T>
std::string raw_bytes(const std::vector<T>& v) {
  return {reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T)};
}

struct zip_member {
  std::string name;
  std::string bytes;
  bool deflate = false;
};

void write_zip(const fs::path& p, const std::vector<zip_member>& members) {
  int err = 0;
  zip_t* za = zip_open(p.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &err);
  ASSERT_NE(za, nullptr);
  for (const auto& m : members) {
    zip_source_t* src = zip_source_buffer(za, m.bytes.data(), m.bytes.size(), 0);
    ASSERT_NE(src, nullptr);
    zip_int64_t const idx = zip_file_add(za, m.name.c_str(), src, ZIP_FL_OVERWRITE);
    ASSERT_GE(idx, 0);
    zip_set_file_compression(za, static_cast<zip_uint64_t>(idx),
                             m.deflate ? ZIP_CM_DEFLATE : ZIP_CM_STORE, 0);
  }
  ASSERT_EQ(zip_close(za), 0);
}

/// A torch.save-like archive "<archive>/..." holding `pkl` and storage "0" = `storage`.
std::vector<zip_member> torch_members(const std::string& archive, const std::string& pkl,
                                      const std::string& storage) {
  return {{archive + "/data.pkl", pkl},
          {archive + "/byteorder", "little"},
          {archive + "/data/0", storage},
          {archive + "/version", "3\n"}};
}

const std::vector<std::int64_t> kStorage{10, 11, 12, 13, 14, 15};

TEST(TorchTensor, HandBuiltArchiveWithAnOffsetStridedView) {
  temp_dir d;
  view_usecase u;
  u.offset = 1;
  u.size = {2, 2};
  u.stride = {1, 2};  // element[i][j] = storage[1 + i + 2 j]
  fs::path const p = d / "t.pt";
  write_zip(p, torch_members("any name-1", tensor_pickle(u), raw_bytes(kStorage)));
  npy_array<std::int64_t> const a = read_torch<std::int64_t>(p);
  EXPECT_EQ(a.shape, (std::vector<std::int64_t>{2, 2}));
  EXPECT_EQ(a.data, (std::vector<std::int64_t>{11, 13, 12, 14}));
  EXPECT_EQ(read_torch_header(p).storage_record, "any name-1/data/0");
  // Without a byteorder record (older files) the storage is little-endian.
  auto members = torch_members("a", tensor_pickle(u), raw_bytes(kStorage));
  members.erase(members.begin() + 1);
  write_zip(p, members);
  EXPECT_EQ(read_torch<std::int64_t>(p).data, (std::vector<std::int64_t>{11, 13, 12, 14}));
}

struct reject_usecase {
  std::string name;
  std::vector<zip_member> members;
  std::string message;
};

std::vector<reject_usecase> reject_usecases() {
  std::string const good = tensor_pickle(view_usecase{});
  std::string const storage = raw_bytes(kStorage);
  std::vector<reject_usecase> out;
  auto with = [&](view_usecase u) { return torch_members("t", tensor_pickle(u), storage); };

  out.push_back({"no_data_pkl",
                 {{"t/version", "3\n"}, {"t/data/0", storage}},
                 "without an '<archive>/data.pkl' member"});
  auto compressed = torch_members("t", good, storage);
  compressed[0].deflate = true;
  out.push_back({"compressed_pickle", compressed, "member 't/data.pkl' is compressed"});
  auto compressed_data = torch_members("t", good, storage);
  compressed_data[2].deflate = true;
  out.push_back({"compressed_storage", compressed_data, "member 't/data/0' is compressed"});
  auto big = torch_members("t", good, storage);
  big[1].bytes = "big";
  out.push_back({"big_endian", big, "big-endian"});
  out.push_back({"short_record", torch_members("t", good, storage.substr(0, 40)),
                 "'t/data/0' has 40 bytes but the pickle declares 6 elements of int64"});
  view_usecase past;
  past.size = {7};
  out.push_back({"view_past_end", with(past),
                 "reaches storage element 6 but the storage has only 6 elements"});
  view_usecase past2;
  past2.offset = 3;
  past2.size = {2, 2};
  past2.stride = {2, 1};
  out.push_back({"offset_view_past_end", with(past2), "reaches storage element 6"});
  view_usecase huge;
  huge.numel = std::int64_t{1} << 61;  // a lie: the record has 48 bytes
  huge.size = {std::int64_t{1} << 61};
  out.push_back({"huge_numel", with(huge), "has 48 bytes but the pickle declares"});
  view_usecase expanded;
  expanded.size = {std::int64_t{1} << 40};
  expanded.stride = {0};
  out.push_back({"expanded_view", with(expanded), "stride 0"});
  view_usecase overlap;
  overlap.size = {4, 3};
  overlap.stride = {1, 1};
  out.push_back({"overlapping_view", with(overlap), "maps several elements to one"});
  view_usecase key;
  key.key = "1";
  out.push_back({"missing_record", with(key), "no storage record 't/data/1'"});
  view_usecase half;  // 6 float16 elements declared, 48 bytes stored
  half.storage_type = "HalfStorage";
  out.push_back(
      {"float16", with(half), "has 48 bytes but the pickle declares 6 elements of float16"});
  view_usecase cplx;
  cplx.storage_type = "ComplexFloatStorage";
  out.push_back({"complex", with(cplx), "torch.ComplexFloatStorage is not supported"});
  view_usecase rank;
  rank.stride = {1, 1};
  out.push_back({"rank_mismatch", with(rank), "size has 1 dimensions but stride has 2"});
  out.push_back({"unknown_opcode", torch_members("t", "\x80\x02].", storage),
                 "unsupported pickle opcode 0x5d (EMPTY_LIST (a list))"});
  out.push_back(
      {"model",
       torch_members(
           "t",
           pickle_writer{}.proto().global("torch.nn.modules.linear", "Linear").raw(")\x81.").bytes,
           storage),
       "references torch.nn.modules.linear.Linear"});
  out.push_back({"truncated_pickle", torch_members("t", good.substr(0, 60), storage),
                 "data.pkl is truncated inside the GLOBAL"});
  out.push_back({"truncated_pickle_string", torch_members("t", good.substr(0, 40), storage),
                 "data.pkl is truncated: 4 more bytes needed at offset 38 of 40"});
  out.push_back(
      {"long_string",
       torch_members("t", pickle_writer{}.proto().str(std::string(1000, 'a')).raw(".").bytes,
                     storage),
       "a 1000-byte str"});
  out.push_back({"huge_pickle", torch_members("t", std::string(70000, 'N'), storage),
                 "'t/data.pkl' is 70000 bytes"});
  out.push_back({"not_a_tensor", torch_members("t", "\x80\x02K\x05.", storage),
                 "holds an int, not a single tensor"});
  out.push_back({"flipped_opcode",
                 torch_members("t", std::string(good).replace(good.find('Q'), 1, "P"), storage),
                 "unsupported pickle opcode 0x50"});
  return out;
}

TEST(TorchTensor, Float16FromTorchSaveIsReadAtItsWidth) {
  // tools/gen_torch_fixtures.py: torch.tensor([1.0, 2.0], dtype=torch.float16).
  fs::path const half = fixture("float16.pt");
  EXPECT_EQ(read_torch_header(half).dtype, npy_dtype::float16);
  npy_array<std::uint16_t> const a = read_torch_bits16(half);
  EXPECT_EQ(a.shape, (std::vector<std::int64_t>{2}));
  EXPECT_EQ(a.stored, npy_dtype::float16);
  EXPECT_EQ(a.data, (std::vector<std::uint16_t>{0x3C00, 0x4000}));
  EXPECT_THAT(error_of([&] { (void)read_torch_bits16(fixture("float32_2d.pt")); }),
              HasSubstr("the tensor is float32, not float16 or bfloat16"));
}

TEST(TorchTensor, Bfloat16ViewsAreReadAtTheirWidth) {
  temp_dir d;
  // Storage of 6 bfloat16: 1, -3, 2^-126, -0, +inf, NaN; the view [2, 2] at offset 1 with
  // strides (1, 2): element[i][j] = storage[1 + i + 2 j].
  std::vector<std::uint16_t> const storage = {0x3F80, 0xC040, 0x0080, 0x8000, 0x7F80, 0x7FC0};
  view_usecase u;
  u.storage_type = "BFloat16Storage";
  u.offset = 1;
  u.size = {2, 2};
  u.stride = {1, 2};
  fs::path const p = d / "bf.pt";
  write_zip(p, torch_members("bf", tensor_pickle(u), raw_bytes(storage)));
  torch_tensor_header const h = read_torch_header(p);
  EXPECT_EQ(h.dtype, npy_dtype::bfloat16);
  EXPECT_EQ(h.storage_bytes, 12U);
  npy_array<std::uint16_t> const a = read_torch_bits16(p);
  EXPECT_EQ(a.stored, npy_dtype::bfloat16);
  EXPECT_EQ(a.shape, (std::vector<std::int64_t>{2, 2}));
  EXPECT_EQ(a.data, (std::vector<std::uint16_t>{0xC040, 0x8000, 0x0080, 0x7F80}));
  // Contiguous, whole storage: the record byte for byte.
  view_usecase whole;
  whole.storage_type = "BFloat16Storage";
  write_zip(p, torch_members("bf", tensor_pickle(whole), raw_bytes(storage)));
  EXPECT_EQ(read_torch_bits16(p).data, storage);
  EXPECT_THAT(
      error_of([&] { (void)read_torch<double>(p); }),
      AllOf(HasSubstr(p.string()), HasSubstr("bfloat16 data is read only at 2 bytes per element")));
}

TEST(TorchTensor, Bfloat16NodeFeaturesOfADatasetStayAtTwoBytes) {
  temp_dir d;
  std::vector<std::int64_t> const edges = {0, 1, 2, 1, 2, 0};  // [2, 3]: 0->1, 1->2, 2->0
  std::int64_t const es[] = {2, 3};
  write_npy(d / "edges.npy", std::span<const std::int64_t>(edges), es);
  // [3, 2] bfloat16: 1, -3, 0.5, 2, -0, 0.25.
  std::vector<std::uint16_t> const storage = {0x3F80, 0xC040, 0x3F00, 0x4000, 0x8000, 0x3E80};
  view_usecase u;
  u.storage_type = "BFloat16Storage";
  u.size = {3, 2};
  u.stride = {2, 1};
  write_zip(d / "feat.pt", torch_members("feat", tensor_pickle(u), raw_bytes(storage)));
  write_text(d / "metadata.yaml", R"(dataset_name: bf
graph:
  nodes:
    - num: 3
  edges:
    - format: numpy
      path: edges.npy
feature_data:
  - domain: node
    name: feat
    format: torch
    in_memory: true
    path: feat.pt
)");
  dataset const ds = read_dataset(d.path());
  EXPECT_EQ(ds.feature_type, feature_dtype::bfloat16);
  EXPECT_EQ(ds.features.size(), 0);  // never widened into a float32 table
  EXPECT_EQ(ds.features16.rows(), 3);
  EXPECT_EQ(ds.features16.cols(), 2);
  EXPECT_EQ(ds.features16.values(), storage);
  EXPECT_EQ(ds.feature_row_bytes(), 4);
}

TEST(TorchTensor, MalformedArchivesAreIoErrorsNamingFileAndProblem) {
  temp_dir d;
  for (const auto& c : reject_usecases()) {
    SCOPED_TRACE(c.name);
    fs::path const p = d / (c.name + ".pt");
    write_zip(p, c.members);
    EXPECT_THAT(error_of([&] { (void)read_torch_header(p); }),
                AllOf(HasSubstr(p.string()), HasSubstr(c.message)));
    EXPECT_THAT(error_of([&] { (void)read_torch<std::int64_t>(p); }),
                AllOf(HasSubstr(p.string()), HasSubstr(c.message)));
  }
}

}  // namespace
}  // namespace coopgnn
