#include "runtime/graph/torch_tensor.hpp"

#include <fmt/ranges.h>
#include <zip.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <fstream>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <unordered_map>
#include <utility>

#include "runtime/core/error.hpp"
#include "runtime/core/memory_limit.hpp"

namespace coopgnn {

namespace {

/// A single tensor's data.pkl is a few hundred bytes; anything far larger is not one tensor.
constexpr std::uint64_t kMaxPickleBytes = 64 << 10;
/// Longest str a tensor's pickle holds (names, keys, devices); bounds the cost of memo copies.
constexpr std::uint64_t kMaxStringBytes = 256;
/// More dimensions than any real tensor; bounds the work per view.
constexpr std::size_t kMaxRank = 64;

// ---- the zip container -----------------------------------------------------------------------

/// One zip member: its index in the archive and its uncompressed size.
struct member {
  zip_uint64_t index = 0;
  std::uint64_t size = 0;
};

/// A torch.save zip opened read-only with libzip, its <archive> prefix located.
class torch_zip {
 public:
  explicit torch_zip(const std::filesystem::path& file) : what_(file.string()) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(file, ec)) {
      COOPGNN_IO_FAIL("{}: cannot open: missing file (or not a regular file)", what_);
    }
    file_size_ = std::filesystem::file_size(file, ec);
    if (ec) COOPGNN_IO_FAIL("{}: cannot read the file size: {}", what_, ec.message());
    check_signature(file);
    int err = 0;
    za_.reset(zip_open(file.c_str(), ZIP_RDONLY, &err));
    if (za_ == nullptr) {
      zip_error_t ze;
      zip_error_init_with_code(&ze, err);
      std::string const why = zip_error_strerror(&ze);
      zip_error_fini(&ze);
      COOPGNN_IO_FAIL(
          "{}: cannot open as a zip archive (truncated or corrupt torch.save file?): {}", what_,
          why);
    }
    find_archive();
  }
  torch_zip(const torch_zip&) = delete;
  torch_zip& operator=(const torch_zip&) = delete;

  [[nodiscard]] const std::string& what() const { return what_; }
  /// "<archive>/", the folder every member lives in.
  [[nodiscard]] const std::string& prefix() const { return prefix_; }

  /// The member `name` (a full name), or nullopt when absent. Checks that it is stored
  /// uncompressed and unencrypted and that its size fits inside the file.
  [[nodiscard]] std::optional<member> find(const std::string& name) const {
    zip_int64_t const idx = zip_name_locate(za_.get(), name.c_str(), 0);
    if (idx < 0) return std::nullopt;
    zip_stat_t st;
    zip_stat_init(&st);
    if (zip_stat_index(za_.get(), static_cast<zip_uint64_t>(idx), 0, &st) != 0 ||
        (st.valid & ZIP_STAT_SIZE) == 0) {
      COOPGNN_IO_FAIL("{}: cannot stat member '{}': {}", what_, name, zip_strerror(za_.get()));
    }
    if ((st.valid & ZIP_STAT_COMP_METHOD) != 0 && st.comp_method != ZIP_CM_STORE) {
      COOPGNN_IO_FAIL(
          "{}: member '{}' is compressed (zip method {}); torch.save stores members "
          "uncompressed, so the file was re-packed: re-save it with torch.save",
          what_, name, st.comp_method);
    }
    if ((st.valid & ZIP_STAT_ENCRYPTION_METHOD) != 0 && st.encryption_method != ZIP_EM_NONE) {
      COOPGNN_IO_FAIL("{}: member '{}' is encrypted", what_, name);
    }
    if (st.size > file_size_) {
      COOPGNN_IO_FAIL("{}: member '{}' claims {} bytes but the file has only {} (corrupt zip)",
                      what_, name, st.size, file_size_);
    }
    return member{static_cast<zip_uint64_t>(idx), st.size};
  }

  /// Reads the whole member `m` (named `name` in messages) into `dst` (exactly m.size bytes),
  /// then confirms the end of its data so that libzip checks the CRC.
  void read(const member& m, const std::string& name, std::span<std::byte> dst) const {
    zip_file_t* zf = zip_fopen_index(za_.get(), m.index, 0);
    if (zf == nullptr) {
      COOPGNN_IO_FAIL("{}: cannot open member '{}': {}", what_, name, zip_strerror(za_.get()));
    }
    std::unique_ptr<zip_file_t, int (*)(zip_file_t*)> const guard(zf, zip_fclose);
    std::size_t got = 0;
    while (got < dst.size()) {
      zip_int64_t const r = zip_fread(zf, dst.data() + got, dst.size() - got);
      if (r < 0) {
        COOPGNN_IO_FAIL("{}: cannot read member '{}' (corrupt file?): {}", what_, name,
                        zip_file_strerror(zf));
      }
      if (r == 0) break;
      got += static_cast<std::size_t>(r);
    }
    if (got != dst.size()) {
      COOPGNN_IO_FAIL("{}: member '{}' is truncated: expected {} bytes, read {}", what_, name,
                      dst.size(), got);
    }
    std::byte extra[1];
    if (zip_fread(zf, extra, 1) < 0) {
      COOPGNN_IO_FAIL("{}: member '{}' is corrupt: {}", what_, name, zip_file_strerror(zf));
    }
  }

  [[nodiscard]] std::vector<std::byte> read_all(const member& m, const std::string& name) const {
    std::vector<std::byte> out(static_cast<std::size_t>(m.size));
    read(m, name, out);
    return out;
  }

 private:
  /// Tells a legacy torch.save file or some other file from a zip before libzip sees it.
  void check_signature(const std::filesystem::path& file) const {
    std::array<unsigned char, 262> head{};
    std::ifstream in(file, std::ios::binary);
    if (!in) COOPGNN_IO_FAIL("{}: cannot open (no permission?)", what_);
    in.read(reinterpret_cast<char*>(head.data()), head.size());
    auto const n = static_cast<std::size_t>(in.gcount());
    if (n >= 4 && std::memcmp(head.data(), "PK\x03\x04", 4) == 0) return;
    if (n >= 4 && std::memcmp(head.data(), "PK\x05\x06", 4) == 0) return;  // empty zip
    // Legacy format: pickle PROTO n, then LONG1 of the 10-byte magic 0x1950a86a20f9469cfc6c.
    constexpr unsigned char kLegacy[] = {0x8a, 0x0a, 0x6c, 0xfc, 0x9c, 0x46,
                                         0xf9, 0x20, 0x6a, 0xa8, 0x50, 0x19};
    if (n >= 2 + sizeof(kLegacy) && head[0] == 0x80 &&
        std::memcmp(head.data() + 2, kLegacy, sizeof(kLegacy)) == 0) {
      COOPGNN_IO_FAIL(
          "{}: legacy (pre-1.6, non-zip) torch.save format is not supported; re-save it "
          "with a current PyTorch: torch.save(torch.load(path), path)",
          what_);
    }
    if (n >= 262 && std::memcmp(head.data() + 257, "ustar", 5) == 0) {
      COOPGNN_IO_FAIL(
          "{}: legacy tar-based torch.save format (PyTorch < 0.4) is not supported; re-save "
          "it with a current PyTorch",
          what_);
    }
    std::string shown;
    for (std::size_t i = 0; i < std::min<std::size_t>(n, 4); ++i) {
      shown += fmt::format("{}{:02x}", i == 0 ? "" : " ", head[i]);
    }
    COOPGNN_IO_FAIL(
        "{}: not a torch.save file: not a zip archive (starts with bytes [{}], a torch.save "
        "file starts with 50 4b 03 04)",
        what_, shown);
  }

  /// Finds the one "<archive>/data.pkl" member (the archive name is whatever the writer chose).
  void find_archive() {
    constexpr std::string_view kPkl = "/data.pkl";
    zip_int64_t const n = zip_get_num_entries(za_.get(), 0);
    std::vector<std::string> names;
    std::vector<std::string> found;
    for (zip_int64_t i = 0; i < n; ++i) {
      const char* c = zip_get_name(za_.get(), static_cast<zip_uint64_t>(i), 0);
      if (c == nullptr) continue;
      std::string_view const name(c);
      if (names.size() < 8) names.emplace_back(name);
      if (name.size() > kPkl.size() && name.ends_with(kPkl) &&
          name.find('/') == name.size() - kPkl.size()) {
        found.emplace_back(name.substr(0, name.size() - kPkl.size() + 1));
      }
    }
    if (found.empty()) {
      COOPGNN_IO_FAIL(
          "{}: a zip archive without an '<archive>/data.pkl' member, so not a torch.save file "
          "({} members{}{})",
          what_, n, n > 0 ? ": " : "", fmt::join(names, ", "));
    }
    if (found.size() > 1) {
      COOPGNN_IO_FAIL("{}: several data.pkl members (under {}); expected one torch.save archive",
                      what_, fmt::join(found, ", "));
    }
    prefix_ = found.front();
  }

  std::string what_;
  std::uint64_t file_size_ = 0;
  std::unique_ptr<zip_t, void (*)(zip_t*)> za_{nullptr, zip_discard};
  std::string prefix_;
};

// ---- the pickle machine ----------------------------------------------------------------------

/// A storage type torch.<Name>Storage and the dtype of its elements.
struct storage_type {
  std::string_view name;
  npy_dtype dtype;
};
constexpr std::array<storage_type, 10> kStorageTypes = {{
    {"FloatStorage", npy_dtype::float32},
    {"DoubleStorage", npy_dtype::float64},
    {"LongStorage", npy_dtype::int64},
    {"IntStorage", npy_dtype::int32},
    {"ShortStorage", npy_dtype::int16},
    {"CharStorage", npy_dtype::int8},
    {"ByteStorage", npy_dtype::uint8},
    {"BoolStorage", npy_dtype::bool_},
    {"HalfStorage", npy_dtype::float16},
    {"BFloat16Storage", npy_dtype::bfloat16},
}};

/// A Python value the machine can build. Tuples and dicts share their items on copy (as Python
/// objects do), so memo lookups cost O(1) whatever the nesting.
struct pvalue {
  enum class kind : std::uint8_t {
    none,
    boolean,
    integer,
    string,
    global,
    tuple,
    dict,
    storage,
    tensor
  };
  kind k = kind::none;
  std::int64_t i = 0;                          ///< integer, boolean; storage: numel
  std::string s;                               ///< string; global: "module.name"; storage: key
  std::string s2;                              ///< storage: location
  npy_dtype dtype = npy_dtype::float32;        ///< global or storage: storage dtype
  std::shared_ptr<std::vector<pvalue>> items;  ///< tuple; dict: key, value, key, ...
  std::shared_ptr<const torch_tensor_header> tensor;  ///< tensor
};

const char* kind_name(pvalue::kind k) {
  switch (k) {
    case pvalue::kind::none:
      return "None";
    case pvalue::kind::boolean:
      return "a bool";
    case pvalue::kind::integer:
      return "an int";
    case pvalue::kind::string:
      return "a str";
    case pvalue::kind::global:
      return "a Python class or function";
    case pvalue::kind::tuple:
      return "a tuple";
    case pvalue::kind::dict:
      return "a dict";
    case pvalue::kind::storage:
      return "a storage";
    case pvalue::kind::tensor:
      return "a tensor";
  }
  return "?";
}

/// Names of common pickle opcodes the machine rejects, for the error message.
const char* opcode_name(unsigned char op) {
  switch (op) {
    case ']':
      return "EMPTY_LIST (a list)";
    case 'e':
    case 'a':
      return "APPENDS/APPEND (a list)";
    case 'b':
      return "BUILD (an object's state)";
    case 0x81:
      return "NEWOBJ (an object)";
    case 0x95:
      return "FRAME (pickle protocol 4+)";
    case 0x93:
      return "STACK_GLOBAL (pickle protocol 4+)";
    case 0x94:
      return "MEMOIZE (pickle protocol 4+)";
    case 'G':
      return "BINFLOAT (a float)";
    case 'C':
    case 'B':
      return "SHORT_BINBYTES/BINBYTES (bytes)";
    case 'P':
      return "PERSID (a text persistent id)";
    default:
      return "unknown";
  }
}

/// Interprets data.pkl: the subset of pickle (protocols 2 and below) that
/// torch.save(tensor) emits. Runs no code: the only callables are _rebuild_tensor_v2 and
/// collections.OrderedDict, both evaluated here.
class pickle_machine {
 public:
  pickle_machine(std::span<const std::byte> bytes, std::string what)
      : p_(bytes), what_(std::move(what)) {}
  ~pickle_machine() {
    for (auto& c : containers_) c->clear();  // breaks reference cycles (see container())
  }
  pickle_machine(const pickle_machine&) = delete;
  pickle_machine& operator=(const pickle_machine&) = delete;

  pvalue run() {
    while (true) {
      std::size_t const at = pos_;
      auto const op = static_cast<unsigned char>(take(1)[0]);
      switch (op) {
        case 0x80: {  // PROTO
          auto const v = static_cast<unsigned>(take(1)[0]);
          if (v > 5) fail(at, fmt::format("unknown pickle protocol {}", v));
          break;
        }
        case '.':  // STOP
          if (stack_.size() != 1 || !marks_.empty()) {
            fail(at, fmt::format("STOP with {} values on the stack", stack_.size()));
          }
          return stack_.back();
        case 'c':  // GLOBAL module\nname\n
        {
          std::string const module = line(at);  // two statements: argument order is unspecified
          std::string const name = line(at);
          push(global(at, module, name));
          break;
        }
        case 'Q': {  // BINPERSID
          pvalue pid = pop(at);
          push(persistent_load(at, pid));
          break;
        }
        case 'q':  // BINPUT
          memo_[static_cast<std::uint32_t>(uint_le(1))] = top(at);
          break;
        case 'r':  // LONG_BINPUT
          memo_[static_cast<std::uint32_t>(uint_le(4))] = top(at);
          break;
        case 'h':  // BINGET
          push(memo_get(at, uint_le(1)));
          break;
        case 'j':  // LONG_BINGET
          push(memo_get(at, uint_le(4)));
          break;
        case '(':  // MARK
          marks_.push_back(stack_.size());
          break;
        case 't':  // TUPLE
          push(make_tuple(pop_mark(at)));
          break;
        case ')':  // EMPTY_TUPLE
          push(make_tuple({}));
          break;
        case 0x85:  // TUPLE1
        case 0x86:  // TUPLE2
        case 0x87:  // TUPLE3
          push(make_tuple(pop_n(at, op - 0x84)));
          break;
        case 'J':  // BININT: 4-byte signed
          push(integer(static_cast<std::int32_t>(uint_le(4))));
          break;
        case 'K':  // BININT1
          push(integer(static_cast<std::int64_t>(uint_le(1))));
          break;
        case 'M':  // BININT2
          push(integer(static_cast<std::int64_t>(uint_le(2))));
          break;
        case 0x8a: {  // LONG1: n-byte two's complement little-endian
          auto const n = static_cast<int>(uint_le(1));
          if (n > 8) fail(at, fmt::format("a {}-byte integer is too large", n));
          std::uint64_t v = n > 0 ? uint_le(n) : 0;
          if (n > 0 && n < 8 && ((v >> (8 * n - 1)) & 1) != 0) v |= ~0ULL << (8 * n);
          push(integer(static_cast<std::int64_t>(v)));
          break;
        }
        case 'X':  // BINUNICODE
          push(string(at, uint_le(4)));
          break;
        case 0x8c:  // SHORT_BINUNICODE
          push(string(at, uint_le(1)));
          break;
        case 0x88:    // NEWTRUE
        case 0x89: {  // NEWFALSE
          pvalue v;
          v.k = pvalue::kind::boolean;
          v.i = op == 0x88 ? 1 : 0;
          push(std::move(v));
          break;
        }
        case 'N':  // NONE
          push(pvalue{});
          break;
        case '}': {  // EMPTY_DICT
          pvalue v;
          v.k = pvalue::kind::dict;
          v.items = container();
          push(std::move(v));
          break;
        }
        case 'u':    // SETITEMS
        case 's': {  // SETITEM
          std::vector<pvalue> kv = op == 'u' ? pop_mark(at) : pop_n(at, 2);
          if (kv.size() % 2 != 0) fail(at, "SETITEMS with an odd number of values");
          pvalue& d = top(at);
          if (d.k != pvalue::kind::dict) fail(at, "SETITEMS on something other than a dict");
          for (auto& x : kv) d.items->push_back(std::move(x));
          break;
        }
        case 'R': {  // REDUCE
          pvalue args = pop(at);
          pvalue fn = pop(at);
          push(reduce(at, fn, args));
          break;
        }
        default:
          fail(at, fmt::format("unsupported pickle opcode 0x{:02x} ({}); only a file holding a "
                               "single tensor, saved with torch.save(tensor, path), is read",
                               op, opcode_name(op)));
      }
    }
  }

 private:
  [[noreturn]] void fail(std::size_t at, const std::string& msg) const {
    COOPGNN_IO_FAIL("{}: data.pkl offset {}: {}", what_, at, msg);
  }

  std::span<const std::byte> take(std::uint64_t n) {
    if (n > p_.size() - pos_) {
      COOPGNN_IO_FAIL("{}: data.pkl is truncated: {} more bytes needed at offset {} of {}", what_,
                      n, pos_, p_.size());
    }
    auto const out = p_.subspan(pos_, static_cast<std::size_t>(n));
    pos_ += static_cast<std::size_t>(n);
    return out;
  }
  std::uint64_t uint_le(int n) {
    auto const b = take(static_cast<std::uint64_t>(n));
    std::uint64_t v = 0;
    for (int i = n; i-- > 0;)
      v = (v << 8) | static_cast<std::uint8_t>(b[static_cast<std::size_t>(i)]);
    return v;
  }
  std::string line(std::size_t at) {
    std::size_t const end = std::min(p_.size(), pos_ + 256);
    for (std::size_t i = pos_; i < end; ++i) {
      if (p_[i] == std::byte{'\n'}) {
        std::string out(reinterpret_cast<const char*>(p_.data() + pos_), i - pos_);
        pos_ = i + 1;
        return out;
      }
    }
    if (end == p_.size()) {
      COOPGNN_IO_FAIL("{}: data.pkl is truncated inside the GLOBAL at offset {} of {}", what_, at,
                      p_.size());
    }
    fail(at, "GLOBAL name longer than 256 bytes");
  }

  void push(pvalue v) { stack_.push_back(std::move(v)); }
  pvalue& top(std::size_t at) {
    if (stack_.empty() || (!marks_.empty() && marks_.back() == stack_.size())) {
      fail(at, "stack underflow");
    }
    return stack_.back();
  }
  pvalue pop(std::size_t at) {
    pvalue v = std::move(top(at));
    stack_.pop_back();
    return v;
  }
  std::vector<pvalue> pop_n(std::size_t at, std::size_t n) {
    std::size_t const floor = marks_.empty() ? 0 : marks_.back();
    if (stack_.size() < floor + n) fail(at, "stack underflow");
    std::vector<pvalue> out(std::make_move_iterator(stack_.end() - static_cast<std::ptrdiff_t>(n)),
                            std::make_move_iterator(stack_.end()));
    stack_.resize(stack_.size() - n);
    return out;
  }
  std::vector<pvalue> pop_mark(std::size_t at) {
    if (marks_.empty()) fail(at, "no MARK on the stack");
    std::size_t const m = marks_.back();
    marks_.pop_back();
    std::vector<pvalue> out(
        std::make_move_iterator(stack_.begin() + static_cast<std::ptrdiff_t>(m)),
        std::make_move_iterator(stack_.end()));
    stack_.resize(m);
    return out;
  }
  pvalue memo_get(std::size_t at, std::uint64_t key) {
    auto const it = memo_.find(static_cast<std::uint32_t>(key));
    if (it == memo_.end()) fail(at, fmt::format("memo key {} was never stored", key));
    return it->second;
  }

  static pvalue integer(std::int64_t v) {
    pvalue out;
    out.k = pvalue::kind::integer;
    out.i = v;
    return out;
  }
  pvalue string(std::size_t at, std::uint64_t n) {
    if (n > kMaxStringBytes) {
      fail(at, fmt::format("a {}-byte str; a tensor's pickle holds only short names", n));
    }
    auto const b = take(n);
    pvalue out;
    out.k = pvalue::kind::string;
    out.s.assign(reinterpret_cast<const char*>(b.data()), b.size());
    return out;
  }
  pvalue make_tuple(std::vector<pvalue> items) {
    pvalue out;
    out.k = pvalue::kind::tuple;
    out.items = container(std::move(items));
    return out;
  }
  /// A new tuple or dict body, owned by this machine as well: a pickle can make containers hold
  /// each other (a dict memoised, fetched with BINGET and SETITEM'd into itself or into a tuple
  /// it holds), a cycle of shared_ptrs that would never be freed; the destructor empties every
  /// container, which breaks any cycle (the fuzzer found the leak).
  std::shared_ptr<std::vector<pvalue>> container(std::vector<pvalue> items = {}) {
    containers_.push_back(std::make_shared<std::vector<pvalue>>(std::move(items)));
    return containers_.back();
  }

  /// GLOBAL: only the names a tensor's pickle uses resolve; anything else means the file holds
  /// some other Python object.
  pvalue global(std::size_t at, const std::string& module, const std::string& name) {
    pvalue g;
    g.k = pvalue::kind::global;
    g.s = module + "." + name;
    if (g.s == "torch._utils._rebuild_tensor_v2" || g.s == "collections.OrderedDict") return g;
    if (module == "torch") {
      for (const auto& t : kStorageTypes) {
        if (name == t.name) {
          g.dtype = t.dtype;
          return g;
        }
      }
      if (name.ends_with("Storage")) {
        fail(at, fmt::format("storage type torch.{} is not supported (complex, quantized and "
                             "untyped storages are not read); save a real numeric tensor",
                             name));
      }
    }
    if (g.s == "torch._utils._rebuild_parameter") {
      fail(at, "the file holds a torch.nn.Parameter, not a plain tensor; save param.detach()");
    }
    fail(at, fmt::format("the pickle references {}: the file holds something other than a "
                         "single tensor (a model, an object); only torch.save(tensor, path) "
                         "files are read",
                         g.s));
  }

  /// BINPERSID: ('storage', torch.<Type>Storage, key, location, numel).
  pvalue persistent_load(std::size_t at, const pvalue& pid) {
    auto bad = [&](const char* why) {
      fail(at, fmt::format("persistent id is not ('storage', torch.<Type>Storage, key, location, "
                           "numel): {}",
                           why));
    };
    if (pid.k != pvalue::kind::tuple || pid.items->size() != 5) bad("not a 5-tuple");
    const auto& v = *pid.items;
    if (v[0].k != pvalue::kind::string || v[0].s != "storage") bad("the tag is not 'storage'");
    if (v[1].k != pvalue::kind::global || !v[1].s.ends_with("Storage")) {
      bad("the second item is not a storage type");
    }
    if (v[2].k != pvalue::kind::string || v[2].s.empty() ||
        v[2].s.find_first_of("/\\") != std::string::npos ||
        v[2].s.find("..") != std::string::npos) {
      bad("the key is not a plain name");
    }
    if (v[3].k != pvalue::kind::string) bad("the location is not a str");
    if (v[4].k != pvalue::kind::integer || v[4].i < 0) bad("numel is not an int >= 0");
    pvalue s;
    s.k = pvalue::kind::storage;
    s.dtype = v[1].dtype;
    s.s = v[2].s;
    s.s2 = v[3].s;
    s.i = v[4].i;
    return s;
  }

  static std::vector<std::int64_t> int_tuple(const pvalue& v, bool& ok) {
    std::vector<std::int64_t> out;
    ok = v.k == pvalue::kind::tuple && v.items->size() <= kMaxRank;
    if (!ok) return out;
    for (const auto& x : *v.items) {
      if (x.k != pvalue::kind::integer || x.i < 0) {
        ok = false;
        return {};
      }
      out.push_back(x.i);
    }
    return out;
  }

  pvalue reduce(std::size_t at, const pvalue& fn, const pvalue& args) {
    if (fn.k != pvalue::kind::global || args.k != pvalue::kind::tuple) {
      fail(at, fmt::format("REDUCE of {} with {}", kind_name(fn.k), kind_name(args.k)));
    }
    const auto& a = *args.items;
    if (fn.s == "collections.OrderedDict") {
      if (!a.empty()) fail(at, "collections.OrderedDict with arguments");
      pvalue d;
      d.k = pvalue::kind::dict;
      d.items = container();
      return d;
    }
    if (fn.s != "torch._utils._rebuild_tensor_v2") {
      fail(at, fmt::format("{} is not callable here", fn.s));
    }
    auto bad = [&](const std::string& why) {
      fail(at, fmt::format("_rebuild_tensor_v2(storage, storage_offset, size, stride, "
                           "requires_grad, backward_hooks[, metadata]): {}",
                           why));
    };
    if (a.size() != 6 && a.size() != 7) bad(fmt::format("{} arguments", a.size()));
    if (a[0].k != pvalue::kind::storage) bad("the first argument is not a storage");
    if (a[1].k != pvalue::kind::integer || a[1].i < 0) bad("storage_offset is not an int >= 0");
    bool ok_size = false;
    bool ok_stride = false;
    auto h = std::make_shared<torch_tensor_header>();
    h->shape = int_tuple(a[2], ok_size);
    h->strides = int_tuple(a[3], ok_stride);
    if (!ok_size) bad("size is not a tuple of ints >= 0");
    if (!ok_stride) bad("stride is not a tuple of ints >= 0");
    if (h->shape.size() != h->strides.size()) {
      bad(fmt::format("size has {} dimensions but stride has {}", h->shape.size(),
                      h->strides.size()));
    }
    if (a[4].k != pvalue::kind::boolean) bad("requires_grad is not a bool");
    if (a[5].k != pvalue::kind::dict || !a[5].items->empty()) {
      bad("backward hooks are not supported (save tensor.detach())");
    }
    if (a.size() == 7 && (a[6].k != pvalue::kind::dict || !a[6].items->empty())) {
      bad("tensor metadata (a non-empty dict) is not supported");
    }
    h->dtype = a[0].dtype;
    h->storage_offset = a[1].i;
    h->storage_numel = a[0].i;
    h->storage_record = a[0].s;  // the key; the caller prefixes "<archive>/data/"
    h->location = a[0].s2;
    h->requires_grad = a[4].i != 0;
    pvalue t;
    t.k = pvalue::kind::tensor;
    t.tensor = std::move(h);
    return t;
  }

  std::span<const std::byte> p_;
  std::string what_;
  std::size_t pos_ = 0;
  std::vector<pvalue> stack_;
  std::vector<std::shared_ptr<std::vector<pvalue>>> containers_;  // every tuple and dict body
  std::vector<std::size_t> marks_;
  std::unordered_map<std::uint32_t, pvalue> memo_;
};

// ---- the view ----------------------------------------------------------------------------------

/// Checks that the view fits its storage and maps distinct indices to distinct storage elements
/// (so it never holds more elements than the storage, which bounds every allocation by the file
/// size). Sufficient test: with the dimensions of extent > 1 sorted by stride, each stride is at
/// least the previous stride times the previous extent (true for any slice or permutation of a
/// contiguous tensor).
void check_view(const torch_tensor_header& h, const std::string& what) {
  std::int64_t const n = h.num_elements();
  std::string const view = fmt::format("offset {}, size {}, stride {}", h.storage_offset,
                                       format_npy_shape(h.shape), format_npy_shape(h.strides));
  if (n == 0) {
    if (h.storage_offset > h.storage_numel) {
      COOPGNN_IO_FAIL("{}: storage_offset {} is past the end of the {}-element storage", what,
                      h.storage_offset, h.storage_numel);
    }
    return;
  }
  std::int64_t last = h.storage_offset;
  std::vector<std::pair<std::int64_t, std::int64_t>> dims;  // (stride, extent)
  for (std::size_t d = 0; d < h.shape.size(); ++d) {
    if (h.shape[d] == 1) continue;
    std::int64_t step = 0;
    if (__builtin_mul_overflow(h.shape[d] - 1, h.strides[d], &step) ||
        __builtin_add_overflow(last, step, &last)) {
      COOPGNN_IO_FAIL("{}: the view ({}) overflows 64-bit indices", what, view);
    }
    dims.emplace_back(h.strides[d], h.shape[d]);
  }
  if (last >= h.storage_numel) {
    COOPGNN_IO_FAIL(
        "{}: the tensor view ({}) reaches storage element {} but the storage has only {} "
        "elements",
        what, view, last, h.storage_numel);
  }
  std::sort(dims.begin(), dims.end());
  for (std::size_t i = 1; i < dims.size(); ++i) {
    // No overflow: stride * extent <= last < storage_numel for every dimension here.
    if (dims[i].first < dims[i - 1].first * dims[i - 1].second) {
      COOPGNN_IO_FAIL(
          "{}: the tensor view ({}) maps several elements to one storage element (an expanded "
          "or overlapping view); save tensor.contiguous() instead",
          what, view);
    }
  }
  if (!dims.empty() && dims.front().first == 0) {
    COOPGNN_IO_FAIL(
        "{}: the tensor view ({}) has stride 0 in a dimension of extent > 1 (an expanded view); "
        "save tensor.contiguous() instead",
        what, view);
  }
}

/// Copies the view's elements, in C order, from `storage` (the record's bytes) into `out`
/// (num_elements * element size bytes).
void gather(const torch_tensor_header& h, const std::byte* storage, std::byte* out) {
  std::size_t const es = npy_dtype_size(h.dtype);
  std::size_t const rank = h.shape.size();
  auto const n = static_cast<std::size_t>(h.num_elements());
  std::vector<std::int64_t> idx(rank, 0);
  std::int64_t off = h.storage_offset;
  for (std::size_t i = 0; i < n; ++i) {
    std::memcpy(out + i * es, storage + static_cast<std::size_t>(off) * es, es);
    for (std::size_t d = rank; d-- > 0;) {
      if (++idx[d] < h.shape[d]) {
        off += h.strides[d];
        break;
      }
      off -= (h.shape[d] - 1) * h.strides[d];
      idx[d] = 0;
    }
  }
}

/// The tensor's header and the zip member of its storage.
struct located_tensor {
  torch_tensor_header header;
  member record;
};

located_tensor read_header(const torch_zip& z) {
  std::string const& what = z.what();
  std::string const pkl_name = z.prefix() + "data.pkl";
  std::optional<member> const pkl = z.find(pkl_name);
  if (!pkl) COOPGNN_IO_FAIL("{}: no member '{}'", what, pkl_name);
  if (pkl->size > kMaxPickleBytes) {
    COOPGNN_IO_FAIL(
        "{}: '{}' is {} bytes; a single tensor's pickle is a few hundred, so the file holds "
        "something else (a model or a collection of tensors)",
        what, pkl_name, pkl->size);
  }
  std::vector<std::byte> const pkl_bytes = z.read_all(*pkl, pkl_name);

  std::string const bo_name = z.prefix() + "byteorder";
  if (std::optional<member> const bo = z.find(bo_name)) {
    if (bo->size > 16) COOPGNN_IO_FAIL("{}: '{}' is {} bytes long", what, bo_name, bo->size);
    std::vector<std::byte> const b = z.read_all(*bo, bo_name);
    std::string_view const order(reinterpret_cast<const char*>(b.data()), b.size());
    if (order == "big") {
      COOPGNN_IO_FAIL(
          "{}: saved on a big-endian machine (byteorder record 'big'); only little-endian "
          "storages are read: re-save it on a little-endian machine",
          what);
    }
    if (order != "little") {
      COOPGNN_IO_FAIL("{}: unknown byteorder record '{}' (expected 'little')", what, order);
    }
  }

  pvalue const v = pickle_machine(pkl_bytes, what).run();
  if (v.k != pvalue::kind::tensor) {
    COOPGNN_IO_FAIL(
        "{}: the file holds {}, not a single tensor; save each array with its own "
        "torch.save(tensor, path)",
        what, kind_name(v.k));
  }
  torch_tensor_header h = *v.tensor;
  h.storage_record = z.prefix() + "data/" + h.storage_record;
  std::optional<member> const record = z.find(h.storage_record);
  if (!record) {
    COOPGNN_IO_FAIL("{}: no storage record '{}' for the tensor", what, h.storage_record);
  }
  std::size_t const es = npy_dtype_size(h.dtype);
  if (h.storage_numel > std::numeric_limits<std::int64_t>::max() / 8 ||
      record->size != static_cast<std::uint64_t>(h.storage_numel) * es) {
    COOPGNN_IO_FAIL(
        "{}: storage record '{}' has {} bytes but the pickle declares {} elements of {} ({} bytes "
        "each); truncated or corrupt file",
        what, h.storage_record, record->size, h.storage_numel, npy_dtype_name(h.dtype), es);
  }
  h.storage_bytes = record->size;
  check_view(h, what);
  return {std::move(h), *record};
}

/// The dtype whose elements are T's bit for bit (bool is never: it reads as 0/1 of T).
template <typename T>
constexpr npy_dtype native_dtype() {
  if constexpr (std::is_same_v<T, float>) return npy_dtype::float32;
  if constexpr (std::is_same_v<T, double>) return npy_dtype::float64;
  if constexpr (std::is_same_v<T, std::int8_t>) return npy_dtype::int8;
  if constexpr (std::is_same_v<T, std::uint8_t>) return npy_dtype::uint8;
  if constexpr (std::is_same_v<T, std::int16_t>) return npy_dtype::int16;
  if constexpr (std::is_same_v<T, std::uint16_t>) return npy_dtype::uint16;
  if constexpr (std::is_same_v<T, std::int32_t>) return npy_dtype::int32;
  if constexpr (std::is_same_v<T, std::uint32_t>) return npy_dtype::uint32;
  if constexpr (std::is_same_v<T, std::int64_t>) return npy_dtype::int64;
  if constexpr (std::is_same_v<T, std::uint64_t>) return npy_dtype::uint64;
}

}  // namespace

std::int64_t torch_tensor_header::num_elements() const {
  std::int64_t n = 1;
  for (std::int64_t d : shape) {
    if (d == 0) return 0;
  }
  for (std::int64_t d : shape) {
    if (__builtin_mul_overflow(n, d, &n)) return std::numeric_limits<std::int64_t>::max();
  }
  return n;
}

bool torch_tensor_header::is_contiguous() const {
  std::int64_t expected = 1;
  for (std::size_t d = shape.size(); d-- > 0;) {
    if (shape[d] == 1) continue;
    if (strides[d] != expected) return num_elements() == 0;
    expected *= shape[d];
  }
  return true;
}

torch_tensor_header read_torch_header(const std::filesystem::path& file) {
  torch_zip const z(file);
  return read_header(z).header;
}

namespace {
/// read_torch, and with `bits16` (T = std::uint16_t) read_torch_bits16: the elements of a
/// float16 or bfloat16 tensor copied unchanged.
template <typename T>
npy_array<T> read_torch_as(const std::filesystem::path& file, bool bits16) {
  torch_zip const z(file);
  // Named members, not a structured binding: the lambda below captures the header, and clang
  // before 16 refuses to capture structured bindings.
  auto const read = read_header(z);
  auto const& h = read.header;
  auto const& record = read.record;
  bool const half = h.dtype == npy_dtype::float16 || h.dtype == npy_dtype::bfloat16;
  if (bits16 && !half) {
    COOPGNN_IO_FAIL(
        "{}: the tensor is {}, not float16 or bfloat16 (read as 16-bit floating-point data)",
        z.what(), npy_dtype_name(h.dtype));
  }
  npy_array<T> a;
  a.shape = h.shape;
  a.stored = h.dtype;
  auto const n = static_cast<std::size_t>(h.num_elements());
  // As read_npy: T may be wider than the stored type (uint8 read as int64: 8 times the record).
  check_declared_bytes(z.what(),
                       fmt::format("the element count of shape {}", format_npy_shape(h.shape)), n,
                       saturating_bytes(h.num_elements(), sizeof(T)),
                       fmt::format("{} bytes per element once read", sizeof(T)));
  a.data.resize(n);
  std::size_t const es = npy_dtype_size(h.dtype);
  bool const same = bits16 || h.dtype == native_dtype<T>();
  if (same && h.is_contiguous() && h.storage_offset == 0 && n * es == record.size) {
    // The usual torch.save(tensor): the record is the result, byte for byte.
    z.read(record, h.storage_record,
           std::span<std::byte>(reinterpret_cast<std::byte*>(a.data.data()), n * es));
    return a;
  }
  // Before the storage is read: a 16-bit float tensor read as T fails as it would after.
  if (half && !same) convert_npy_elements<T>(nullptr, h.dtype, std::span<T>(a.data), z.what());
  std::vector<std::byte> const storage = z.read_all(record, h.storage_record);
  auto finish = [&](const std::byte* src) {
    if (same) {
      if (n > 0) std::memcpy(a.data.data(), src, n * es);
    } else {
      convert_npy_elements<T>(src, h.dtype, std::span<T>(a.data), z.what());
    }
  };
  if (h.is_contiguous()) {
    finish(storage.data() + static_cast<std::size_t>(h.storage_offset) * es);
    return a;
  }
  std::vector<std::byte> packed(n * es);
  gather(h, storage.data(), packed.data());
  finish(packed.data());
  return a;
}
}  // namespace

template <typename T>
npy_array<T> read_torch(const std::filesystem::path& file) {
  return read_torch_as<T>(file, false);
}

npy_array<std::uint16_t> read_torch_bits16(const std::filesystem::path& file) {
  return read_torch_as<std::uint16_t>(file, true);
}

#define COOPGNN_TORCH_INSTANTIATE(T) \
  template npy_array<T> read_torch<T>(const std::filesystem::path&);
COOPGNN_TORCH_INSTANTIATE(float)
COOPGNN_TORCH_INSTANTIATE(double)
COOPGNN_TORCH_INSTANTIATE(std::int8_t)
COOPGNN_TORCH_INSTANTIATE(std::uint8_t)
COOPGNN_TORCH_INSTANTIATE(std::int16_t)
COOPGNN_TORCH_INSTANTIATE(std::uint16_t)
COOPGNN_TORCH_INSTANTIATE(std::int32_t)
COOPGNN_TORCH_INSTANTIATE(std::uint32_t)
COOPGNN_TORCH_INSTANTIATE(std::int64_t)
COOPGNN_TORCH_INSTANTIATE(std::uint64_t)
#undef COOPGNN_TORCH_INSTANTIATE

}  // namespace coopgnn
