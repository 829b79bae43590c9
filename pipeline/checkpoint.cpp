#include "pipeline/checkpoint.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <regex>
#include <sstream>
#include <utility>
#include <vector>

#include "kernels/sample/sample.hpp"
#include "models/layers.hpp"
#include "models/link_layers.hpp"
#include "runtime/core/error.hpp"
#include "runtime/core/hash.hpp"
#include "runtime/graph/npy.hpp"
#include "runtime/graph/npz.hpp"

namespace coopgnn {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr const char* kFormat = "coopgnn-checkpoint";
constexpr int kVersion = 1;
/// Saved models: version 2 is model.npz of named tensors; version 1 (params.npy) is still read.
constexpr int kModelVersion = 2;

/// fsync of a file or directory (directories: so that a rename inside it is durable).
void fsync_path(const fs::path& p) {
  int const fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) COOPGNN_IO_FAIL("{}: cannot open for fsync: {}", p.string(), std::strerror(errno));
  int const rc = ::fsync(fd);
  int const err = errno;
  ::close(fd);
  if (rc != 0) COOPGNN_IO_FAIL("{}: fsync failed: {}", p.string(), std::strerror(err));
}

/// Writes `text` to `file` durably: "<file>.tmp.PID" written and fsync'ed, renamed over `file`,
/// then the directory fsync'ed. A crash at any point leaves the old or the new file, complete.
void write_durable(const fs::path& file, const std::string& text) {
  fs::path const tmp = file.string() + fmt::format(".tmp.{}", ::getpid());
  int const fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) COOPGNN_IO_FAIL("{}: cannot create: {}", tmp.string(), std::strerror(errno));
  std::size_t off = 0;
  while (off < text.size()) {
    ssize_t const n = ::write(fd, text.data() + off, text.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      int const err = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      COOPGNN_IO_FAIL("{}: cannot write: {}", tmp.string(), std::strerror(err));
    }
    off += static_cast<std::size_t>(n);
  }
  bool const synced = ::fsync(fd) == 0;
  int const err = errno;
  ::close(fd);
  if (!synced || ::rename(tmp.c_str(), file.c_str()) != 0) {
    ::unlink(tmp.c_str());
    COOPGNN_IO_FAIL("{}: cannot {}: {}", file.string(), synced ? "rename into place" : "fsync",
                    std::strerror(synced ? errno : err));
  }
  fsync_path(file.parent_path().empty() ? fs::path(".") : file.parent_path());
}

std::string read_all(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) COOPGNN_IO_FAIL("{}: cannot open", p.string());
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// CRC-32 of `n` bytes at `p`, continuing from `c` (crc32's uInt length taken in 1 GiB pieces).
std::uint32_t crc_update(std::uint32_t c, const void* p, std::size_t n) {
  uLong crc = c;
  auto const* b = static_cast<const Bytef*>(p);
  while (n > 0) {
    auto const k = static_cast<uInt>(std::min<std::size_t>(n, 1U << 30));
    crc = crc32(crc, b, k);
    b += k;
    n -= k;
  }
  return static_cast<std::uint32_t>(crc);
}

std::uint32_t crc_of(const std::string& bytes) {
  return crc_update(static_cast<std::uint32_t>(crc32(0L, Z_NULL, 0)), bytes.data(), bytes.size());
}

/// Writes one float32 array `name`.npy into `dir` and returns its manifest entry. Size and
/// CRC-32 are those of the file's bytes, computed from the header write_npy emits and the data
/// (no read-back).
json put_array(const fs::path& dir, const std::string& name, std::span<const float> data,
               std::vector<std::int64_t> shape) {
  auto const file = dir / (name + ".npy");
  write_npy(file, data, shape);
  fsync_path(file);
  std::string const header = make_npy_header(npy_dtype::float32, shape);
  std::uint32_t const crc = crc_update(crc_of(header), data.data(), data.size_bytes());
  return {{"file", name + ".npy"},
          {"dtype", "float32"},
          {"shape", shape},
          {"bytes", header.size() + data.size_bytes()},
          {"crc32", crc}};
}

template <typename T>
T get_key(const json& j, const char* key, const fs::path& manifest) {
  if (!j.is_object() || !j.contains(key)) {
    COOPGNN_IO_FAIL("{}: the manifest has no '{}' (not a coopgnn checkpoint, or a damaged one)",
                    manifest.string(), key);
  }
  try {
    return j.at(key).get<T>();
  } catch (const json::exception& e) {
    COOPGNN_IO_FAIL("{}: manifest key '{}': {}", manifest.string(), key, e.what());
  }
}

/// Reads array `name` of the manifest `m` in directory `dir`: size and CRC-32 first, then the
/// .npy itself, whose shape must be the manifest's.
/// The bytes of the file manifest entry `a` names in `dir`, its size and CRC-32 checked.
std::string checked_bytes(const fs::path& dir, const json& a, const fs::path& manifest) {
  auto const file = dir / get_key<std::string>(a, "file", manifest);
  if (!fs::is_regular_file(file)) {
    COOPGNN_IO_FAIL("{}: missing (listed in {})", file.string(), manifest.string());
  }
  std::string const bytes = read_all(file);
  auto const want_bytes = get_key<std::uint64_t>(a, "bytes", manifest);
  if (bytes.size() != want_bytes) {
    COOPGNN_IO_FAIL(
        "{}: {} bytes, the manifest says {}: the checkpoint is corrupt (truncated or "
        "overwritten)",
        file.string(), bytes.size(), want_bytes);
  }
  auto const want_crc = get_key<std::uint32_t>(a, "crc32", manifest);
  if (auto const got = crc_of(bytes); got != want_crc) {
    COOPGNN_IO_FAIL("{}: CRC-32 {:08x}, the manifest says {:08x}: the checkpoint is corrupt",
                    file.string(), got, want_crc);
  }
  return bytes;
}

matrix<float> get_array(const fs::path& dir, const json& m, const std::string& name,
                        const fs::path& manifest) {
  const json arrays = get_key<json>(m, "arrays", manifest);
  const json a = get_key<json>(arrays, name.c_str(), manifest);
  auto const file = dir / get_key<std::string>(a, "file", manifest);
  std::string const bytes = checked_bytes(dir, a, manifest);
  auto arr =
      read_npy_buffer<float>(std::as_bytes(std::span(bytes.data(), bytes.size())), file.string());
  auto const shape = get_key<std::vector<std::int64_t>>(a, "shape", manifest);
  if (arr.shape != shape) {
    COOPGNN_IO_FAIL("{}: shape {}, the manifest says {}", file.string(),
                    format_npy_shape(arr.shape), format_npy_shape(shape));
  }
  return matrix<float>(arr.dim(0), arr.rank() == 1 ? 1 : arr.dim(1), std::move(arr.data));
}

std::span<const float> flat(const matrix<float>& m) {
  return {m.data(), static_cast<std::size_t>(m.rows() * m.cols())};
}

std::vector<std::int64_t> shape_of(const matrix<float>& m) { return {m.rows(), m.cols()}; }

/// The manifest of `dir`, its format and version (1 .. newest) checked, and its kind `kind`.
json read_manifest(const fs::path& dir, const char* kind, int newest = kVersion) {
  auto const file = dir / "manifest.json";
  if (!fs::is_regular_file(file)) {
    COOPGNN_IO_FAIL("{}: missing: {} is not a coopgnn {}", file.string(), dir.string(), kind);
  }
  json m;
  try {
    m = json::parse(read_all(file));
  } catch (const json::parse_error& e) {
    COOPGNN_IO_FAIL("{}: not valid JSON ({}): the {} is corrupt", file.string(), e.what(), kind);
  }
  if (get_key<std::string>(m, "format", file) != kFormat) {
    COOPGNN_IO_FAIL("{}: format '{}', expected '{}'", file.string(), m["format"].dump(), kFormat);
  }
  if (auto const v = get_key<int>(m, "version", file); v < 1 || v > newest) {
    COOPGNN_IO_FAIL("{}: version {}; this coopgnn reads versions 1 to {}", file.string(), v,
                    newest);
  }
  if (auto const k = get_key<std::string>(m, "kind", file); k != kind) {
    COOPGNN_IO_FAIL("{}: a saved {}, not a {}", file.string(), k, kind);
  }
  return m;
}

json model_config_json(const models::model_config& c) {
  json j = {{"kind", models::to_string(c.kind)},
            {"in_dim", c.in_dim},
            {"hidden", c.hidden},
            {"num_classes", c.num_classes},
            {"num_layers", c.num_layers},
            {"linear_head", c.linear_head},
            {"dropout", c.dropout},
            {"seed", c.seed},
            {"layer_norm", c.layer_norm},
            {"activation", models::to_string(c.activation)},
            {"decoder_hidden", c.decoder_hidden}};
  j["decoder"] = c.decoder ? json(models::to_string(*c.decoder)) : json(nullptr);
  if (c.decoder == models::decoder_kind::distmult) j["decoder_relations"] = c.decoder_relations;
  if (c.kind == models::conv_kind::gat) {
    j["gat"] = {{"heads", c.gat.heads},
                {"out_heads", c.out_heads},
                {"attn_dropout", c.gat.attn_dropout},
                {"negative_slope", c.gat.negative_slope},
                {"residual", c.gat.residual},
                {"self_loops", c.gat.self_loops}};
  }
  if (c.kind == models::conv_kind::rgcn) {
    j["rgcn"] = {{"num_relations", c.rgcn.num_relations},
                 {"num_bases", c.rgcn.num_bases},
                 {"num_blocks", c.rgcn.num_blocks},
                 {"self_loop", c.rgcn.self_loop}};
  }
  return j;
}

models::model_config model_config_of(const json& j, const fs::path& manifest) {
  models::model_config c;
  try {
    c.kind = models::parse_conv_kind(get_key<std::string>(j, "kind", manifest));
    c.activation = models::parse_activation_kind(get_key<std::string>(j, "activation", manifest));
    if (j.contains("decoder") && !j["decoder"].is_null()) {
      c.decoder = models::parse_decoder_kind(get_key<std::string>(j, "decoder", manifest));
    }
  } catch (const logic_error& e) {
    COOPGNN_IO_FAIL("{}: model: {}", manifest.string(), e.what());
  }
  c.in_dim = get_key<std::int64_t>(j, "in_dim", manifest);
  c.hidden = get_key<std::int64_t>(j, "hidden", manifest);
  c.num_classes = get_key<std::int64_t>(j, "num_classes", manifest);
  c.num_layers = get_key<int>(j, "num_layers", manifest);
  c.linear_head = get_key<bool>(j, "linear_head", manifest);
  c.dropout = get_key<float>(j, "dropout", manifest);
  c.seed = get_key<std::uint64_t>(j, "seed", manifest);
  c.layer_norm = get_key<bool>(j, "layer_norm", manifest);
  c.decoder_hidden = get_key<std::int64_t>(j, "decoder_hidden", manifest);
  if (c.decoder == models::decoder_kind::distmult) {
    c.decoder_relations = get_key<std::int64_t>(j, "decoder_relations", manifest);
    if (c.decoder_relations < 1 || c.decoder_relations > 65535) {
      COOPGNN_IO_FAIL("{}: model.decoder_relations = {} is outside [1, 65535]", manifest.string(),
                      c.decoder_relations);
    }
  }
  if (c.kind == models::conv_kind::gat) {
    json const g = get_key<json>(j, "gat", manifest);
    c.gat.heads = get_key<std::int64_t>(g, "heads", manifest);
    c.out_heads = get_key<std::int64_t>(g, "out_heads", manifest);
    c.gat.attn_dropout = get_key<float>(g, "attn_dropout", manifest);
    c.gat.negative_slope = get_key<float>(g, "negative_slope", manifest);
    c.gat.residual = get_key<bool>(g, "residual", manifest);
    c.gat.self_loops = get_key<bool>(g, "self_loops", manifest);
    if (c.gat.heads < 1 || c.out_heads < 1 || c.gat.heads > 256 || c.out_heads > 256) {
      COOPGNN_IO_FAIL("{}: model: GAT heads out of range ({})", manifest.string(), g.dump());
    }
  }
  if (c.kind == models::conv_kind::rgcn) {
    json const r = get_key<json>(j, "rgcn", manifest);
    c.rgcn.num_relations = get_key<std::int32_t>(r, "num_relations", manifest);
    c.rgcn.num_bases = get_key<std::int64_t>(r, "num_bases", manifest);
    // Written since the block-diagonal decomposition; absent (0, none) in older manifests.
    c.rgcn.num_blocks = r.contains("num_blocks") ? get_key<std::int64_t>(r, "num_blocks", manifest)
                                                 : std::int64_t{0};
    c.rgcn.self_loop = get_key<bool>(r, "self_loop", manifest);
    if (c.rgcn.num_relations < 1 || c.rgcn.num_relations > 65535 || c.rgcn.num_bases < 0 ||
        c.rgcn.num_bases > 65535 || c.rgcn.num_blocks < 0 || c.rgcn.num_blocks > 65535 ||
        (c.rgcn.num_bases > 0 && c.rgcn.num_blocks > 0)) {
      COOPGNN_IO_FAIL("{}: model: R-GCN relations, bases or blocks out of range ({})",
                      manifest.string(), r.dump());
    }
  }
  if (c.in_dim < 1 || c.hidden < 1 || c.num_classes < 1 || c.num_layers < 1 || c.num_layers > 64) {
    COOPGNN_IO_FAIL("{}: model widths or layer count out of range ({})", manifest.string(),
                    j.dump());
  }
  return c;
}

/// The fields of work_counters by name, for both directions of its JSON form.
constexpr std::pair<const char*, std::int64_t work_counters::*> kWorkFields[] = {
    {"seeds", &work_counters::seeds},
    {"sampled_edges", &work_counters::sampled_edges},
    {"sampled_vertices", &work_counters::sampled_vertices},
    {"feature_rows", &work_counters::feature_rows},
    {"feature_bytes", &work_counters::feature_bytes},
    {"alltoall_bytes", &work_counters::alltoall_bytes},
    {"alltoall_calls", &work_counters::alltoall_calls},
    {"allreduce_bytes", &work_counters::allreduce_bytes},
    {"cache_hits", &work_counters::cache_hits},
    {"cache_misses", &work_counters::cache_misses}};
/// Fields that checkpoints written before they were counted lack (read when present).
constexpr std::pair<const char*, std::int64_t work_counters::*> kOptionalWorkFields[] = {
    {"collective_calls", &work_counters::collective_calls},
    {"count_exchanges", &work_counters::count_exchanges},
    {"kernel_calls", &work_counters::kernel_calls}};

}  // namespace

json work_counters_json(const work_counters& w) {
  json j = json::object();
  for (auto const& [key, member] : kWorkFields) j[key] = w.*member;
  j["collectives"] = w.collectives;
  for (auto const& [key, member] : kOptionalWorkFields) j[key] = w.*member;
  // Typed graphs: the counts per node type and per relation (absent when empty).
  if (!w.rows_per_type.empty()) j["rows_per_type"] = w.rows_per_type;
  if (!w.edges_per_relation.empty()) j["edges_per_relation"] = w.edges_per_relation;
  return j;
}

work_counters work_counters_of(const json& j, const fs::path& file) {
  work_counters w;
  for (auto const& [key, member] : kWorkFields) w.*member = get_key<std::int64_t>(j, key, file);
  // Optional: checkpoints written before the collectives were counted hold none.
  if (j.contains("collectives")) w.collectives = get_key<std::int64_t>(j, "collectives", file);
  for (auto const& [key, member] : kOptionalWorkFields) {
    if (j.contains(key)) w.*member = get_key<std::int64_t>(j, key, file);
  }
  // Optional (untyped runs, and checkpoints written before they were saved).
  for (auto const& [key, member] :
       {std::pair{"rows_per_type", &work_counters::rows_per_type},
        std::pair{"edges_per_relation", &work_counters::edges_per_relation}}) {
    if (!j.contains(key)) continue;
    w.*member = get_key<std::vector<std::int64_t>>(j, key, file);
    for (auto v : w.*member) {
      if (v < 0) COOPGNN_IO_FAIL("{}: work.{} holds a negative count", file.string(), key);
    }
  }
  return w;
}

namespace {

/// Appends a vector's element count, then its elements' bytes.
template <class T>
void update_array(xxh64_stream& s, const std::vector<T>& v) {
  s.update_value(static_cast<std::int64_t>(v.size()));
  s.update(v.data(), v.size() * sizeof(T));
}

/// The sources then the destinations of the (2, E) edges file `file` as int64, read a chunk at
/// a time: the bytes of src then dst in memory. @throws io_error naming it.
void hash_file_edges(xxh64_stream& s, const fs::path& file) {
  npy_two_row_reader reader(file);
  std::vector<std::int64_t> buf(static_cast<std::size_t>(
      std::min(edge_chunk_edges, std::max<std::int64_t>(reader.columns(), 1))));
  s.update_value(reader.columns());
  for (int row = 0; row < 2; ++row) {
    if (row == 1) s.update_value(reader.columns());
    for (std::int64_t first = 0; first < reader.columns(); first += edge_chunk_edges) {
      std::span<std::int64_t> const chunk(
          buf.data(),
          static_cast<std::size_t>(std::min(edge_chunk_edges, reader.columns() - first)));
      reader.read(first, row == 0 ? chunk : std::span<std::int64_t>(),
                  row == 1 ? chunk : std::span<std::int64_t>());
      s.update(chunk.data(), chunk.size_bytes());
    }
  }
}

/// A file's size and modification time (ns), the key of its cached hash.
struct file_stamp {
  std::int64_t size = 0;
  std::int64_t mtime_ns = 0;
  bool operator==(const file_stamp&) const = default;
};

std::optional<file_stamp> stamp_of(const fs::path& p) {
  struct stat st {};
  if (::stat(p.c_str(), &st) != 0) return std::nullopt;
  return file_stamp{static_cast<std::int64_t>(st.st_size),
                    static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1000000000 +
                        static_cast<std::int64_t>(st.st_mtim.tv_nsec)};
}

/// Hashes computed by this process, by absolute file path (the cache when the dataset directory
/// is not writable).
std::mutex hash_memo_mutex;
std::map<std::string, std::pair<file_stamp, std::uint64_t>> hash_memo;

/// The cached XXH64 of `file`'s feature bytes, when the memo or the cache file beside it holds
/// one for this size and modification time.
std::optional<std::uint64_t> cached_table_hash(const fs::path& file, const file_stamp& st) {
  {
    std::lock_guard<std::mutex> lock(hash_memo_mutex);
    auto const it = hash_memo.find(fs::absolute(file).string());
    if (it != hash_memo.end() && it->second.first == st) return it->second.second;
  }
  std::ifstream in(file.parent_path() / kContentHashCache, std::ios::binary);
  if (!in) return std::nullopt;
  json const j = json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("files") || !j["files"].is_object()) return std::nullopt;
  auto const e = j["files"].find(file.filename().string());
  if (e == j["files"].end() || !e->is_object()) return std::nullopt;
  auto const size = e->find("size");
  auto const mtime = e->find("mtime_ns");
  auto const hash = e->find("xxh64");
  if (size == e->end() || mtime == e->end() || hash == e->end() || !size->is_number_integer() ||
      !mtime->is_number_integer() || !hash->is_string() || size->get<std::int64_t>() != st.size ||
      mtime->get<std::int64_t>() != st.mtime_ns) {
    return std::nullopt;
  }
  std::string const hex = hash->get<std::string>();
  std::uint64_t h = 0;
  auto const [end, ec] = std::from_chars(hex.data(), hex.data() + hex.size(), h, 16);
  if (ec != std::errc() || end != hex.data() + hex.size() || hex.size() != 16) return std::nullopt;
  return h;
}

/// Records `h` for `file` at stamp `st`: in this process, and in the cache file beside it when
/// its directory is writable (written to a temporary sibling, then renamed into place; any
/// failure leaves the cache as it was).
void store_table_hash(const fs::path& file, const file_stamp& st, std::uint64_t h) {
  {
    std::lock_guard<std::mutex> lock(hash_memo_mutex);
    hash_memo[fs::absolute(file).string()] = {st, h};
  }
  fs::path const dir = file.parent_path().empty() ? fs::path(".") : file.parent_path();
  if (::access(dir.c_str(), W_OK) != 0) return;
  fs::path const cache = dir / kContentHashCache;
  json j;
  if (std::ifstream in(cache, std::ios::binary); in) {
    j = json::parse(in, nullptr, /*allow_exceptions=*/false);
  }
  if (!j.is_object()) j = json::object();
  if (!j.contains("files") || !j["files"].is_object()) j["files"] = json::object();
  j["format"] = "coopgnn-content-hash";
  j["version"] = 1;
  j["files"][file.filename().string()] = {
      {"size", st.size}, {"mtime_ns", st.mtime_ns}, {"xxh64", fmt::format("{:016x}", h)}};
  fs::path const tmp = dir / fmt::format("{}.tmp.{}", kContentHashCache, ::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << j.dump(1) << '\n';
    if (!out.flush()) {
      std::error_code ec;
      fs::remove(tmp, ec);
      return;
    }
  }
  std::error_code ec;
  fs::rename(tmp, cache, ec);
  if (ec) fs::remove(tmp, ec);
}

/// XXH64 of the element bytes of one feature table: `bytes` bytes at `data` (in memory), or the
/// element data of the .npy `file` when `data` is null (left in its file). The two agree for
/// the same table. A table of at least `cache_from` bytes with a .npy file whose element data is
/// exactly those bytes takes its hash from the cache beside the file when its size and mtime
/// match, and stores it there otherwise. @throws io_error naming the file when it cannot be read.
std::uint64_t table_hash(const void* data, std::uint64_t bytes, const fs::path& file,
                         std::int64_t cache_from) {
  std::optional<npy_header> hd;
  if (!file.empty() && file.extension() == ".npy") {
    try {
      hd = read_npy_header(file);
    } catch (const io_error&) {
      if (data == nullptr) throw;
    }
  }
  bool const file_holds_it = hd && !hd->fortran_order && hd->data_bytes() == bytes;
  if (data == nullptr && !file_holds_it) {
    COOPGNN_IO_FAIL("{}: holds no {} bytes of features to fingerprint", file.string(), bytes);
  }
  std::optional<file_stamp> const before =
      file_holds_it && bytes >= static_cast<std::uint64_t>(std::max<std::int64_t>(cache_from, 0))
          ? stamp_of(file)
          : std::nullopt;
  if (before) {
    if (auto const h = cached_table_hash(file, *before)) return *h;
  }
  xxh64_stream s;
  if (data != nullptr) {
    s.update(data, bytes);
  } else {
    std::ifstream in(file, std::ios::binary);
    if (!in) COOPGNN_IO_FAIL("{}: cannot be read to fingerprint the features", file.string());
    in.seekg(static_cast<std::streamoff>(hd->data_offset));
    std::vector<char> buf(std::size_t{8} << 20);
    for (std::uint64_t done = 0; done < bytes;) {
      auto const k = static_cast<std::size_t>(std::min<std::uint64_t>(buf.size(), bytes - done));
      in.read(buf.data(), static_cast<std::streamsize>(k));
      if (in.gcount() != static_cast<std::streamsize>(k)) {
        COOPGNN_IO_FAIL("{}: ends after {} of its {} feature bytes; cannot fingerprint them",
                        file.string(), done + static_cast<std::uint64_t>(in.gcount()), bytes);
      }
      s.update(buf.data(), k);
      done += k;
    }
  }
  std::uint64_t const h = s.digest();
  if (before && stamp_of(file) == before) store_table_hash(file, *before, h);
  return h;
}

/// Appends one [n, F] feature table of element type `type` to `s`: n, F, the type and
/// table_hash of its bytes (`data` in memory, or null when the rows stay in `file`).
void hash_table(xxh64_stream& s, std::int64_t n, std::int64_t cols, feature_dtype type,
                const void* data, const fs::path& file, std::int64_t cache_from) {
  s.update_value(n);
  s.update_value(cols);
  s.update_value(static_cast<std::int32_t>(type));
  std::uint64_t const bytes = static_cast<std::uint64_t>(n) * static_cast<std::uint64_t>(cols) *
                              static_cast<std::uint64_t>(feature_dtype_size(type));
  s.update_value(bytes == 0 ? std::uint64_t{0} : table_hash(data, bytes, file, cache_from));
}

/// hash_table of a table left in its .npy file: its shape from the header.
void hash_file_table(xxh64_stream& s, const fs::path& file, feature_dtype type,
                     std::int64_t cache_from) {
  npy_header const hd = read_npy_header(file);
  std::int64_t const n = hd.shape.empty() ? 1 : hd.shape[0];
  std::int64_t const cols = n == 0 ? 0 : hd.num_elements() / n;
  hash_table(s, n, cols, type, nullptr, file, cache_from);
}

void hash_pairs(xxh64_stream& s, const pair_set& p) {
  update_array(s, p.src);
  update_array(s, p.dst);
  update_array(s, p.labels);
  update_array(s, p.indexes);
  update_array(s, p.relation);
}

/// The first word of a dataset_fingerprint string (older versions wrote none), and its parts.
constexpr const char* kFingerprintTag = "xxh64";
constexpr std::array<const char*, 5> kFingerprintParts = {"edges", "features", "split", "labels",
                                                          "link_split"};

/// The value of part `key` ("split") of fingerprint `s`; "" when `s` has none.
std::string fingerprint_part(const std::string& s, std::string_view key) {
  std::string const tag = std::string(key) + ":";
  std::size_t at = 0;
  while ((at = s.find(tag, at)) != std::string::npos) {
    if (at == 0 || s[at - 1] == ' ') {
      auto const from = at + tag.size();
      return s.substr(from, s.find(' ', from) - from);
    }
    at += tag.size();
  }
  return {};
}

}  // namespace

std::string dataset_fingerprint(const dataset& ds, std::int64_t cache_from_bytes) {
  xxh64_stream e;
  e.update_value(static_cast<std::int64_t>(ds.num_nodes));
  if (ds.edges_in_file > 0) {
    hash_file_edges(e, ds.edge_file);
  } else {
    update_array(e, ds.src);
    update_array(e, ds.dst);
  }
  xxh64_stream f;
  if (ds.features.rows() > 0) {
    hash_table(f, ds.features.rows(), ds.features.cols(), feature_dtype::float32,
               ds.features.data(), ds.feature_file, cache_from_bytes);
  } else if (ds.features16.rows() > 0) {
    hash_table(f, ds.features16.rows(), ds.features16.cols(), ds.feature_type, ds.features16.data(),
               ds.feature_file, cache_from_bytes);
  } else if (!ds.feature_file.empty() && ds.feature_dim() > 0) {
    hash_file_table(f, ds.feature_file, ds.feature_type, cache_from_bytes);
  }
  if (ds.hetero) {
    // Each node type's table in turn (an empty one for a type without features).
    const hetero_schema& hs = *ds.hetero;
    for (std::size_t t = 0; t < hs.node_types.size(); ++t) {
      feature_dtype const type =
          t < hs.feature_types.size() ? hs.feature_types[t] : feature_dtype::float32;
      if (t < hs.features.size() && hs.features[t].rows() > 0) {
        hash_table(f, hs.features[t].rows(), hs.features[t].cols(), feature_dtype::float32,
                   hs.features[t].data(), fs::path(), cache_from_bytes);
      } else if (t < hs.features16.size() && hs.features16[t].rows() > 0) {
        hash_table(f, hs.features16[t].rows(), hs.features16[t].cols(), type,
                   hs.features16[t].data(), fs::path(), cache_from_bytes);
      } else if (hs.features_in_file(static_cast<std::int64_t>(t))) {
        hash_file_table(f, hs.feature_files[t], type, cache_from_bytes);
      } else {
        hash_table(f, 0, 0, feature_dtype::float32, nullptr, fs::path(), cache_from_bytes);
      }
    }
  }
  std::string out =
      fmt::format("{} edges:{:016x} features:{:016x}", kFingerprintTag, e.digest(), f.digest());
  if (!ds.train.empty() || !ds.valid.empty() || !ds.test.empty()) {
    xxh64_stream s;
    update_array(s, ds.train);
    update_array(s, ds.valid);
    update_array(s, ds.test);
    if (ds.hetero) s.update(ds.hetero->target_type.data(), ds.hetero->target_type.size());
    out += fmt::format(" split:{:016x}", s.digest());
  }
  if (!ds.labels.empty()) {
    xxh64_stream l;
    update_array(l, ds.labels);
    l.update_value(ds.num_classes);
    out += fmt::format(" labels:{:016x}", l.digest());
  }
  if (ds.link) {
    xxh64_stream s;
    hash_pairs(s, ds.link->train);
    hash_pairs(s, ds.link->valid);
    hash_pairs(s, ds.link->test);
    s.update_value(ds.link->item_begin);
    s.update_value(ds.link->item_end);
    out += fmt::format(" link_split:{:016x}", s.digest());
  }
  return out;
}

bool full_content_fingerprint(const std::string& fp) {
  return fp.starts_with(kFingerprintTag) && fp.size() > std::strlen(kFingerprintTag) &&
         fp[std::strlen(kFingerprintTag)] == ' ';
}

std::string fingerprint_difference(const std::string& a, const std::string& b) {
  if (a == b) return {};
  if (full_content_fingerprint(a) != full_content_fingerprint(b)) {
    return "content (fingerprints of different coopgnn versions)";
  }
  std::vector<std::string> what;
  for (const char* key : kFingerprintParts) {
    std::string const pa = fingerprint_part(a, key);
    std::string const pb = fingerprint_part(b, key);
    // A task one side did not load (its part absent) is no difference.
    if (pa != pb && ((!pa.empty() && !pb.empty()) || std::strcmp(key, "edges") == 0 ||
                     std::strcmp(key, "features") == 0)) {
      what.emplace_back(std::strcmp(key, "link_split") == 0 ? "link split" : key);
    }
  }
  if (what.empty()) return {};
  if (what.size() == 1) return what[0];
  std::string const last = what.back();
  what.pop_back();
  return fmt::format("{} and {}", fmt::join(what, ", "), last);
}

std::string older_content_note(const json& saved, std::string_view what) {
  auto const it = saved.find("dataset.content");
  if (it != saved.end() && it->is_string() && full_content_fingerprint(it->get<std::string>())) {
    return {};
  }
  return fmt::format(
      "{} was written before the dataset's content fingerprint covered every feature byte and "
      "the split: its dataset is compared by name and sizes only",
      what);
}

json run_identity(const dataset& ds, const train_config& cfg, const json& extra) {
  // The options that change the arithmetic come from the option table (config.hpp); the rest is
  // what the run was resolved to (task, protocol, PEs, backend) and the dataset.
  json j = arithmetic_options(cfg);
  j["dataset"] = ds.name;
  j["dataset.num_nodes"] = ds.num_nodes;
  j["dataset.num_edges"] = ds.num_edges();
  j["dataset.feature_dim"] = ds.feature_dim();
  j["dataset.num_classes"] = ds.num_classes;
  j["--task"] = to_string(cfg.task);
  j["--mode"] = to_string(cfg.mode);
  j["--pes"] = cfg.num_pes;
  j["--backend"] = to_string(cfg.compute_backend);
  if (!cfg.relation_fanouts.empty()) j["--relation-fanout"] = cfg.relation_fanouts;
  // Only when set, so that checkpoints written before it existed still resume.
  if (cfg.wrap_around) j["wrap_around"] = true;
  for (auto const& [k, v] : extra.items()) j[k] = v;
  if (!j.contains("dataset.content")) j["dataset.content"] = dataset_fingerprint(ds);
  return j;
}

std::string identity_difference(const json& saved, const json& current) {
  for (auto const& [k, v] : current.items()) {
    if (!saved.contains(k)) {
      // Checkpoints written before the content fingerprint existed resume on the sizes alone.
      if (k == "dataset.content") continue;
      return fmt::format("the checkpoint does not record {} (this run: {})", k, v.dump());
    }
    // An older fingerprint (edges and sampled feature rows, FNV-1a) is not comparable with
    // today's: such checkpoints resume on the sizes too (older_content_note says so).
    if (k == "dataset.content" && !older_content_note(saved, "").empty()) continue;
    if (k == "dataset.content" && saved[k].is_string() && v.is_string() &&
        fingerprint_difference(saved[k].get<std::string>(), v.get<std::string>()).empty()) {
      continue;  // equal, or differing only in a task one side did not load
    }
    if (saved[k] != v) {
      std::string const what =
          k == "dataset.content" && saved[k].is_string() && v.is_string()
              ? fmt::format(" (same name and sizes, other {})",
                            fingerprint_difference(saved[k].get<std::string>(),
                                                   v.get<std::string>()))
              : std::string();
      return fmt::format("{} is {} in the checkpoint, {} in this run{}", k, saved[k].dump(),
                         v.dump(), what);
    }
  }
  for (auto const& [k, v] : saved.items()) {
    if (!current.contains(k)) {
      return fmt::format("{} is {} in the checkpoint, unset in this run", k, v.dump());
    }
  }
  return {};
}

void check_resumable(const json& saved, const json& current, const fs::path& manifest) {
  if (std::string const d = identity_difference(saved, current); !d.empty()) {
    COOPGNN_IO_FAIL("{}: cannot resume: {}", manifest.string(), d);
  }
}

std::string checkpoint_name(const epoch_position& p) {
  return fmt::format("ckpt-{:06}-{:06}", p.epoch, p.next_batch);
}

namespace {

/// The checkpoint name DIR/latest holds, or "" when there is none.
std::string latest_name(const fs::path& dir) {
  auto const file = dir / "latest";
  if (!fs::exists(file)) return {};
  std::string s = read_all(file);
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  static const std::regex ok("ckpt-[0-9]{6,}-[0-9]{6,}");
  if (!std::regex_match(s, ok)) {
    COOPGNN_IO_FAIL("{}: holds '{}', not a checkpoint name (ckpt-EEEEEE-BBBBBB)", file.string(),
                    s.substr(0, 80));
  }
  return s;
}

}  // namespace

std::int64_t manifest_int(const json& j, const char* key, const fs::path& manifest,
                          std::string_view field, std::int64_t lo, std::int64_t hi) {
  json const v = get_key<json>(j, key, manifest);
  bool ok = v.is_number_integer();
  if (ok && v.is_number_unsigned() &&
      v.get<std::uint64_t>() >
          static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
    ok = false;
  }
  std::int64_t const x = ok ? v.get<std::int64_t>() : 0;
  if (!ok || x < lo || x > hi) {
    COOPGNN_IO_FAIL(
        "{}: {} = {} is impossible: not an integer in [{}, {}] (a damaged or edited "
        "manifest)",
        manifest.string(), field, v.dump(), lo, hi);
  }
  return x;
}

namespace {

/// The manifest's position (epoch, next_batch, batches_per_epoch, loss_sum, work) into `p` and
/// `batches_per_epoch`, each integer range-checked (manifest_int) and the whole a possible one.
void read_position(const json& m, const fs::path& file, epoch_position& pos,
                   std::int64_t& batches_per_epoch) {
  json const p = get_key<json>(m, "position", file);
  pos.epoch =
      static_cast<int>(manifest_int(p, "epoch", file, "position.epoch", 1, kMaxCheckpointEpoch));
  batches_per_epoch = manifest_int(p, "batches_per_epoch", file, "position.batches_per_epoch", 1,
                                   kMaxCheckpointCount);
  pos.next_batch = manifest_int(p, "next_batch", file, "position.next_batch", 0, batches_per_epoch);
  pos.loss_sum = get_key<double>(p, "loss_sum", file);
  if (!std::isfinite(pos.loss_sum)) {
    COOPGNN_IO_FAIL("{}: position.loss_sum = {} is not finite", file.string(), pos.loss_sum);
  }
  pos.work = work_counters_of(get_key<json>(p, "work", file), file);
}

}  // namespace

checkpoint_lock::checkpoint_lock(const fs::path& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) {
    COOPGNN_IO_FAIL("{}: cannot create the checkpoint directory: {}", dir.string(), ec.message());
  }
  fs::path const file = dir / ".lock";
  fd_ = ::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0)
    COOPGNN_IO_FAIL("{}: cannot open the lock file: {}", file.string(), std::strerror(errno));
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    int const err = errno;
    char buf[32] = {};
    ssize_t const n = ::pread(fd_, buf, sizeof buf - 1, 0);
    std::string holder(buf, n > 0 ? static_cast<std::size_t>(n) : 0);
    while (!holder.empty() && (holder.back() == '\n' || holder.back() == ' ')) holder.pop_back();
    ::close(fd_);
    fd_ = -1;
    if (err == EWOULDBLOCK) {
      COOPGNN_IO_FAIL(
          "{}: in use by another run ({} holds {}): two runs cannot share a checkpoint "
          "directory; give this run another one, or wait until the other ends",
          dir.string(), holder.empty() ? std::string("another process") : "process " + holder,
          file.string());
    }
    COOPGNN_IO_FAIL("{}: cannot lock: {}", file.string(), std::strerror(err));
  }
  std::string const pid = fmt::format("{}\n", ::getpid());
  if (::ftruncate(fd_, 0) != 0 ||
      ::pwrite(fd_, pid.data(), pid.size(), 0) != static_cast<ssize_t>(pid.size())) {
    int const err = errno;
    ::close(fd_);
    fd_ = -1;
    COOPGNN_IO_FAIL("{}: cannot write: {}", file.string(), std::strerror(err));
  }
}

checkpoint_lock::~checkpoint_lock() {
  if (fd_ >= 0) ::close(fd_);  // releases the lock
}

namespace {

/// The checkpoint folder `dir` names: `dir` itself when it holds a manifest.json, else the one
/// DIR/latest names; std::nullopt when neither (a missing `dir` included).
/// @throws io_error for an unreadable DIR/latest (latest_name).
std::optional<fs::path> locate_checkpoint(const fs::path& dir) {
  if (fs::exists(dir / "manifest.json")) return dir;
  if (!fs::is_directory(dir)) return std::nullopt;
  std::string const name = latest_name(dir);
  if (name.empty()) return std::nullopt;
  return dir / name;
}

/// The manifest of checkpoint folder `cdir` (read_manifest), its identity and its position
/// (read_position) into the fields of `out` (a checkpoint or a checkpoint_summary).
/// @throws io_error naming the manifest (format, version, kind, keys, ranges).
template <class Head>
json read_head(const fs::path& cdir, Head& out) {
  json m = read_manifest(cdir, "checkpoint");
  auto const file = cdir / "manifest.json";
  out.path = cdir;
  out.identity = get_key<json>(m, "identity", file);
  read_position(m, file, out.position, out.batches_per_epoch);
  return m;
}

}  // namespace

std::optional<checkpoint_summary> peek_checkpoint(const fs::path& dir) {
  auto const cdir = locate_checkpoint(dir);
  if (!cdir) return std::nullopt;
  checkpoint_summary s;
  (void)read_head(*cdir, s);
  return s;
}

fs::path write_checkpoint(const fs::path& dir, const checkpoint& c) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec)
    COOPGNN_IO_FAIL("{}: cannot create the checkpoint directory: {}", dir.string(), ec.message());
  std::string const name = checkpoint_name(c.position);
  std::string const previous = latest_name(dir);
  fs::path const final_dir = dir / name;
  if (previous == name && fs::is_directory(final_dir)) return final_dir;
  fs::path const tmp = dir / fmt::format("{}.tmp.{}", name, ::getpid());
  fs::remove_all(tmp, ec);
  fs::create_directories(tmp, ec);
  if (ec) COOPGNN_IO_FAIL("{}: cannot create: {}", tmp.string(), ec.message());

  const trainer_state& s = c.state;
  auto const n = static_cast<std::int64_t>(s.params.size());
  json arrays = json::object();
  arrays["params"] = put_array(tmp, "params", s.params, {n});
  arrays["adam_m"] = put_array(tmp, "adam_m", s.adam_m, {n});
  arrays["adam_v"] = put_array(tmp, "adam_v", s.adam_v, {n});
  if (s.emb.rows() > 0) {
    arrays["embeddings"] = put_array(tmp, "embeddings", flat(s.emb), shape_of(s.emb));
    arrays["embeddings_adam_m"] =
        put_array(tmp, "embeddings_adam_m", flat(s.emb_m), shape_of(s.emb_m));
    arrays["embeddings_adam_v"] =
        put_array(tmp, "embeddings_adam_v", flat(s.emb_v), shape_of(s.emb_v));
  }
  if (!c.selected_params.empty()) {
    arrays["selected_params"] = put_array(tmp, "selected_params", c.selected_params,
                                          {static_cast<std::int64_t>(c.selected_params.size())});
  }
  if (c.selected_emb.rows() > 0) {
    arrays["selected_embeddings"] =
        put_array(tmp, "selected_embeddings", flat(c.selected_emb), shape_of(c.selected_emb));
  }
  json m = {{"format", kFormat},
            {"version", kVersion},
            {"kind", "checkpoint"},
            {"identity", c.identity},
            {"position",
             {{"epoch", c.position.epoch},
              {"next_batch", c.position.next_batch},
              {"batches_per_epoch", c.batches_per_epoch},
              {"loss_sum", c.position.loss_sum},
              {"work", work_counters_json(c.position.work)}}},
            {"adam_steps", s.adam_steps},
            {"embedding_steps", s.emb_steps},
            {"extra", c.extra},
            {"arrays", arrays}};
  write_durable(tmp / "manifest.json", m.dump(2) + "\n");
  fsync_path(tmp);
  fs::remove_all(final_dir, ec);  // a leftover of an older run at this position, not the latest
  fs::rename(tmp, final_dir, ec);
  if (ec) COOPGNN_IO_FAIL("{}: cannot rename into place: {}", final_dir.string(), ec.message());
  fsync_path(dir);
  write_durable(dir / "latest", name + "\n");
  // Keep the new one and the one before it; remove older ones and stale temporaries.
  for (auto const& e : fs::directory_iterator(dir)) {
    auto const entry = e.path().filename().string();
    if (entry.rfind("ckpt-", 0) != 0 || entry == name || entry == previous) continue;
    fs::remove_all(e.path(), ec);
  }
  return final_dir;
}

checkpoint read_checkpoint(const fs::path& dir) {
  auto const located = locate_checkpoint(dir);
  if (!located) {
    if (!fs::is_directory(dir)) COOPGNN_IO_FAIL("{}: no such checkpoint directory", dir.string());
    COOPGNN_IO_FAIL("{}: no checkpoint here (neither {} nor a manifest.json)", dir.string(),
                    (dir / "latest").string());
  }
  fs::path const& cdir = *located;
  checkpoint c;
  json const m = read_head(cdir, c);
  auto const file = cdir / "manifest.json";
  c.extra = m.contains("extra") ? m["extra"] : json::object();
  auto vec = [](matrix<float>&& a) { return std::move(a.values()); };
  c.state.params = vec(get_array(cdir, m, "params", file));
  c.state.adam_m = vec(get_array(cdir, m, "adam_m", file));
  c.state.adam_v = vec(get_array(cdir, m, "adam_v", file));
  c.state.adam_steps = manifest_int(m, "adam_steps", file, "adam_steps", 0, kMaxCheckpointCount);
  if (get_key<json>(m, "arrays", file).contains("embeddings")) {
    c.state.emb = get_array(cdir, m, "embeddings", file);
    c.state.emb_m = get_array(cdir, m, "embeddings_adam_m", file);
    c.state.emb_v = get_array(cdir, m, "embeddings_adam_v", file);
    c.state.emb_steps =
        manifest_int(m, "embedding_steps", file, "embedding_steps", 0, kMaxCheckpointCount);
  }
  // Optional: absent without a selected epoch's parameters, and in older checkpoints.
  if (get_key<json>(m, "arrays", file).contains("selected_params")) {
    c.selected_params = vec(get_array(cdir, m, "selected_params", file));
    if (c.selected_params.size() != c.state.params.size()) {
      COOPGNN_IO_FAIL("{}: selected_params holds {} values, params {}", file.string(),
                      c.selected_params.size(), c.state.params.size());
    }
  }
  if (get_key<json>(m, "arrays", file).contains("selected_embeddings")) {
    c.selected_emb = get_array(cdir, m, "selected_embeddings", file);
  }
  if (c.state.adam_m.size() != c.state.params.size() ||
      c.state.adam_v.size() != c.state.params.size()) {
    COOPGNN_IO_FAIL("{}: params, adam_m and adam_v differ in length", file.string());
  }
  return c;
}

namespace {

/// The parameter tensors of the model `config` builds (names, shapes, offsets in params()),
/// from its layout: nothing of the model's size is allocated.
std::vector<models::param_info> tensors_of(const models::model_config& config) {
  return models::layout_of(config).tensors;
}

/// Version 1 (params.npy, embeddings.npy): read as before version 2 existed.
void read_saved_model_v1(const fs::path& dir, const json& m, const fs::path& file,
                         saved_model& sm) {
  sm.params = std::move(get_array(dir, m, "params", file).values());
  if (get_key<json>(m, "arrays", file).contains("embeddings")) {
    sm.embeddings = get_array(dir, m, "embeddings", file);
  }
}

/// Version 2: model.npz, every tensor the manifest lists, with its shape and dtype checked.
void read_saved_model_v2(const fs::path& dir, const json& m, const fs::path& file,
                         saved_model& sm) {
  json const entry = get_key<json>(m, "file", file);
  (void)checked_bytes(dir, entry, file);  // size and CRC-32 of the whole archive
  npz_archive const npz(dir / get_key<std::string>(entry, "file", file));
  json const tensors = get_key<json>(m, "tensors", file);
  if (!tensors.is_array()) COOPGNN_IO_FAIL("{}: 'tensors' is not a list", file.string());
  std::int64_t offset = 0;
  for (auto const& tj : tensors) {
    auto const name = get_key<std::string>(tj, "name", file);
    auto const shape = get_key<std::vector<std::int64_t>>(tj, "shape", file);
    auto const role = get_key<std::string>(tj, "role", file);
    if (get_key<std::string>(tj, "dtype", file) != "float32" ||
        get_key<std::string>(tj, "order", file) != "C" || shape.size() != 2) {
      COOPGNN_IO_FAIL("{}: tensor '{}' must be a row-major (order C) float32 matrix ({})",
                      file.string(), name, tj.dump());
    }
    if (!npz.contains(name)) {
      COOPGNN_IO_FAIL("{}: no tensor '{}' (listed in {}); it holds {}", npz.path().string(), name,
                      file.string(), fmt::join(npz.members(), ", "));
    }
    auto arr = npz.read<float>(name);
    if (arr.shape != shape || arr.stored != npy_dtype::float32) {
      COOPGNN_IO_FAIL("{}: tensor '{}' is {} {}, the manifest says float32 {}",
                      npz.path().string(), name, npy_dtype_name(arr.stored),
                      format_npy_shape(arr.shape), format_npy_shape(shape));
    }
    if (role == "embedding") {
      sm.embeddings = matrix<float>(shape[0], shape[1], std::move(arr.data));
    } else if (role == "parameter") {
      sm.tensors.push_back({name, shape[0], shape[1], offset});
      sm.params.insert(sm.params.end(), arr.data.begin(), arr.data.end());
      offset += shape[0] * shape[1];
    } else {
      COOPGNN_IO_FAIL("{}: tensor '{}' has role '{}' (parameter or embedding)", file.string(), name,
                      role);
    }
  }
}

}  // namespace

void write_saved_model(const fs::path& dir, const saved_model& sm) {
  auto const infos = tensors_of(sm.config);
  std::int64_t total = 0;
  for (auto const& i : infos) total += i.rows * i.cols;
  COOPGNN_EXPECTS(total == static_cast<std::int64_t>(sm.params.size()),
                  "write_saved_model: {} parameters, the model configuration has {}",
                  sm.params.size(), total);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) COOPGNN_IO_FAIL("{}: cannot create the model directory: {}", dir.string(), ec.message());
  std::vector<npz_float32_member> members;
  json tensors = json::array();
  for (auto const& i : infos) {
    members.push_back({i.name,
                       std::span<const float>(sm.params).subspan(
                           static_cast<std::size_t>(i.offset),
                           static_cast<std::size_t>(i.rows * i.cols)),
                       {i.rows, i.cols}});
    tensors.push_back({{"name", i.name},
                       {"shape", {i.rows, i.cols}},
                       {"dtype", "float32"},
                       {"order", "C"},
                       {"role", "parameter"}});
  }
  if (sm.embeddings) {
    members.push_back({"embeddings", flat(*sm.embeddings), shape_of(*sm.embeddings)});
    tensors.push_back({{"name", "embeddings"},
                       {"shape", shape_of(*sm.embeddings)},
                       {"dtype", "float32"},
                       {"order", "C"},
                       {"role", "embedding"}});
  }
  auto const npz = dir / "model.npz";
  write_npz(npz, members);
  fsync_path(npz);
  std::string const bytes = read_all(npz);
  json const m = {{"format", kFormat},
                  {"version", kModelVersion},
                  {"kind", "model"},
                  {"model", model_config_json(sm.config)},
                  {"identity", sm.identity},
                  {"transductive", sm.embeddings.has_value()},
                  {"file", {{"file", "model.npz"}, {"bytes", bytes.size()}, {"crc32", crc_of(bytes)}}},
                  {"tensors", tensors}};
  write_durable(dir / "manifest.json", m.dump(2) + "\n");
}

saved_model read_saved_model(const fs::path& dir) {
  if (!fs::is_directory(dir)) {
    COOPGNN_IO_FAIL("{}: no such model directory (written by `coopgnn train --save-model` or "
                    "`coopgnn tma`)",
                    dir.string());
  }
  json const m = read_manifest(dir, "model", kModelVersion);
  auto const file = dir / "manifest.json";
  saved_model sm;
  sm.config = model_config_of(get_key<json>(m, "model", file), file);
  sm.identity = get_key<json>(m, "identity", file);
  if (get_key<int>(m, "version", file) == 1) {
    read_saved_model_v1(dir, m, file, sm);
  } else {
    read_saved_model_v2(dir, m, file, sm);
  }
  if (sm.embeddings && sm.embeddings->cols() != sm.config.in_dim) {
    COOPGNN_IO_FAIL("{}: embeddings are {} wide, the model's input {}", file.string(),
                    sm.embeddings->cols(), sm.config.in_dim);
  }
  return sm;
}

std::unique_ptr<models::gnn_model> build_saved_model(const saved_model& m, const exec_context& ctx,
                                                     const std::string& what) {
  // The count first, from the layout: a manifest whose widths ask for more parameters than its
  // tensors hold is refused before a model of that size is allocated.
  std::int64_t const expected = models::layout_of(m.config).num_values;
  if (static_cast<std::int64_t>(m.params.size()) != expected) {
    COOPGNN_IO_FAIL("{}: {} parameters, the model configuration has {}", what, m.params.size(),
                    expected);
  }
  auto model = std::make_unique<models::gnn_model>(ctx, m.config);
  auto const& want = model->params().infos();
  if (!m.tensors.empty()) {
    for (std::size_t i = 0; i < std::max(want.size(), m.tensors.size()); ++i) {
      auto const text = [](const std::vector<models::param_info>& v, std::size_t k) {
        return k < v.size() ? fmt::format("{} [{}, {}]", v[k].name, v[k].rows, v[k].cols)
                            : std::string("absent");
      };
      if (i >= want.size() || i >= m.tensors.size() || want[i].name != m.tensors[i].name ||
          want[i].rows != m.tensors[i].rows || want[i].cols != m.tensors[i].cols) {
        COOPGNN_IO_FAIL("{}: tensor {} is {}, the model configuration's is {}", what, i,
                        text(m.tensors, i), text(want, i));
      }
    }
  }
  model->copy_parameters_from(m.params);
  return model;
}

}  // namespace coopgnn
