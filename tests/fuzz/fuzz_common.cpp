#include "tests/fuzz/fuzz_common.hpp"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <system_error>

namespace coopgnn::fuzz {

namespace fs = std::filesystem;

namespace {

const fs::path& scratch_root() {
  static const fs::path root = [] {
    // tmpfs when there is one: rewriting a file per input on ext4 costs a journal flush each
    // time (auto_da_alloc), which slows the targets down a hundredfold.
    const char* tmp = std::getenv("TMPDIR");
    std::error_code ec;
    fs::path base = tmp != nullptr && *tmp != '\0' ? tmp : "/tmp";
    if (fs::is_directory("/dev/shm", ec) && ::access("/dev/shm", W_OK) == 0) base = "/dev/shm";
    // libFuzzer leaves with _Exit on some paths (a crash, -max_total_time), so atexit does not
    // always run: remove what earlier processes that no longer exist left behind.
    for (const auto& e : fs::directory_iterator(base, ec)) {
      std::string const n = e.path().filename().string();
      if (!n.starts_with("coopgnn_fuzz.")) continue;
      long const pid = std::strtol(n.c_str() + 13, nullptr, 10);
      if (pid > 0 && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) {
        fs::remove_all(e.path(), ec);
      }
    }
    fs::path const p = base / ("coopgnn_fuzz." + std::to_string(::getpid()));
    fs::create_directories(p);
    std::atexit([] {
      std::error_code ec;
      fs::remove_all(scratch_root(), ec);
    });
    return p;
  }();
  return root;
}

bool sane_component(std::string_view c) {
  if (c.empty() || c == "." || c == "..") return false;
  for (char ch : c) {
    bool const ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                    (ch >= '0' && ch <= '9') || ch == '.' || ch == '_' || ch == '-';
    if (!ok) return false;
  }
  return true;
}

bool sane_name(std::string_view name) {
  int depth = 0;
  std::size_t pos = 0;
  while (true) {
    std::size_t const slash = name.find('/', pos);
    std::string_view const c =
        name.substr(pos, slash == std::string_view::npos ? name.npos : slash - pos);
    if (!sane_component(c) || ++depth > 3) return false;
    if (slash == std::string_view::npos) return true;
    pos = slash + 1;
  }
}

}  // namespace

std::vector<registered_target>& targets() {
  static std::vector<registered_target> t;
  return t;
}

bool register_target(const char* name, target_fn fn) {
  targets().push_back({name, fn});
  return true;
}

void init_process() {
  static const bool done = [] {
    ::setenv("COOPGNN_MEMORY_LIMIT", "16777216", 1);
    (void)scratch_root();
    return true;
  }();
  (void)done;
}

fs::path fresh_dir(std::string_view name) {
  fs::path const d = scratch_root() / std::string(name);
  std::error_code ec;
  fs::remove_all(d, ec);
  fs::create_directories(d);
  return d;
}

fs::path scratch_file(std::string_view name) { return scratch_root() / std::string(name); }

void write_file(const fs::path& file, std::string_view bytes) {
  std::error_code ec;
  if (file.has_parent_path()) fs::create_directories(file.parent_path(), ec);
  if (ec) return;  // an ancestor is a file: a reader then finds this member missing
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

void write_file(const fs::path& file, std::span<const std::uint8_t> bytes) {
  write_file(file, std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
}

void copy_file(const fs::path& from, const fs::path& to) {
  std::ifstream in(from, std::ios::binary);
  std::string const bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  write_file(to, std::string_view(bytes));
}

std::vector<member> split_container(std::string_view in) {
  std::vector<member> out;
  constexpr std::string_view kMarker = "=== ";
  std::size_t pos = in.starts_with(kMarker) ? 0 : in.find("\n=== ");
  if (pos != std::string_view::npos && pos != 0) ++pos;  // skip the newline
  while (pos != std::string_view::npos && out.size() < 16) {
    std::size_t const name_begin = pos + kMarker.size();
    std::size_t const eol = in.find('\n', name_begin);
    if (eol == std::string_view::npos) break;
    std::string name(in.substr(name_begin, eol - name_begin));
    std::size_t const next = in.find("\n=== ", eol + 1);
    std::size_t const end = next == std::string_view::npos ? in.size() : next;
    std::string_view const bytes =
        eol + 1 <= end ? in.substr(eol + 1, end - eol - 1) : std::string_view();
    if (sane_name(name)) out.push_back({std::move(name), bytes});
    pos = next == std::string_view::npos ? next : next + 1;
  }
  return out;
}

std::size_t write_container(const fs::path& dir, std::string_view input) {
  std::vector<member> const ms = split_container(input);
  for (const member& m : ms) {
    std::error_code ec;
    // A name used as a directory by an earlier member (a/b then a) is skipped.
    if (fs::is_directory(dir / m.name, ec)) continue;
    write_file(dir / m.name, m.bytes);
  }
  return ms.size();
}

}  // namespace coopgnn::fuzz

#include "runtime/graph/npy.hpp"

namespace coopgnn::fuzz {

void write_fixed_arrays(const fs::path& dir) {
  auto i64 = [&](const char* name, std::vector<std::int64_t> v, std::vector<std::int64_t> shape) {
    write_npy(dir / name, std::span<const std::int64_t>(v), shape);
  };
  i64("edges.npy", {0, 1, 2, 3, 4, 5, 6, 7, 0, 2, 1, 2, 3, 4, 5, 6, 7, 0, 4, 6}, {2, 10});
  write_file(dir / "edges.csv", std::string_view("0,1\n1,2\n2,3\n3,0\n4,5\n"));
  std::vector<float> feat(24);
  for (std::size_t i = 0; i < feat.size(); ++i) feat[i] = static_cast<float>(i) * 0.5f;
  std::int64_t const fshape[] = {8, 3};
  write_npy(dir / "feat.npy", std::span<const float>(feat), fshape);
  i64("label.npy", {0, 1, 2, 0, 1, 2, 0, -1}, {8});
  i64("train_seeds.npy", {0, 1}, {2});
  i64("train_labels.npy", {0, 1}, {2});
  i64("valid_seeds.npy", {2, 3}, {2});
  i64("valid_labels.npy", {2, 0}, {2});
  i64("test_seeds.npy", {4, 5}, {2});
  i64("test_labels.npy", {1, 2}, {2});
  i64("pairs.npy", {0, 1, 0, 5, 2, 3, 2, 7}, {4, 2});
  i64("pair_labels.npy", {1, 0, 1, 0}, {4});
  i64("pair_indexes.npy", {0, 0, 1, 1}, {4});
  i64("neg.npy", {3, 4, 5, 6, 7, 0, 1, 2}, {4, 2});
}

}  // namespace coopgnn::fuzz
