// Output paths of the subcommands (tools/coopgnn/output_paths.hpp).
#include "tools/coopgnn/output_paths.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "runtime/core/error.hpp"

namespace coopgnn::cli {

namespace fs = std::filesystem;

fs::path resolved_path(const fs::path& p) {
  std::error_code ec;
  fs::path a = fs::absolute(p, ec);
  if (ec) a = p;
  fs::path w = fs::weakly_canonical(a, ec);
  if (ec) w = a.lexically_normal();
  if (w.has_parent_path() && !w.has_filename()) w = w.parent_path();  // "dir/" -> "dir"
  return w;
}

namespace {

/// Whether resolved path `inner` lies inside resolved directory `outer` (not equal to it).
bool is_inside(const fs::path& inner, const fs::path& outer) {
  auto i = inner.begin();
  for (auto o = outer.begin(); o != outer.end(); ++o, ++i) {
    if (i == inner.end() || *i != *o) return false;
  }
  return i != inner.end();
}

std::atomic<int> temp_counter{0};

}  // namespace

void check_output_dir(const fs::path& out, const std::vector<fs::path>& inputs, bool overwrite,
                      const std::string& option) {
  fs::path const o = resolved_path(out);
  for (const fs::path& in : inputs) {
    if (in.empty()) continue;
    fs::path const i = resolved_path(in);
    std::error_code ec;
    if (o == i || fs::equivalent(out, in, ec)) {
      COOPGNN_IO_FAIL(
          "{} {} is the input {} (both resolve to {}): writing there would replace the input "
          "while it is read; choose another output directory",
          option, out.string(), in.string(), i.string());
    }
    if (is_inside(i, o)) {
      COOPGNN_IO_FAIL(
          "{} {} holds the input {}: replacing that directory would delete the input; choose "
          "another output directory",
          option, out.string(), in.string());
    }
    if (is_inside(o, i) && fs::is_directory(i, ec)) {
      COOPGNN_IO_FAIL(
          "{} {} lies inside the input directory {}: the output would be written into the input "
          "dataset (and read as part of it by a later run); choose an output directory outside "
          "it",
          option, out.string(), in.string());
    }
  }
  std::error_code ec;
  fs::file_status const st = fs::status(out, ec);
  if (!fs::exists(st)) return;
  if (!fs::is_directory(st)) {
    COOPGNN_IO_FAIL("{} {}: exists and is not a directory; choose another output directory", option,
                    out.string());
  }
  if (overwrite) return;
  std::size_t entries = 0;
  for (fs::directory_iterator it(out, ec), end; !ec && it != end; it.increment(ec)) ++entries;
  if (ec) {
    COOPGNN_IO_FAIL("{} {}: cannot read the existing directory: {}", option, out.string(),
                    ec.message());
  }
  if (entries > 0) {
    COOPGNN_IO_FAIL(
        "{} {}: exists and is not empty ({} entr{}); pass --overwrite to replace it (the new "
        "output is written beside it and takes its place only when complete)",
        option, out.string(), entries, entries == 1 ? "y" : "ies");
  }
}

void write_dir_atomically(const fs::path& out,
                          const std::function<void(const fs::path& tmp)>& write) {
  fs::path const target = resolved_path(out);  // a symbolic link keeps pointing at its target
  fs::path const parent = target.parent_path();
  std::error_code ec;
  fs::create_directories(parent, ec);
  if (ec) {
    COOPGNN_IO_FAIL("{}: cannot create the output's parent directory: {}", parent.string(),
                    ec.message());
  }
  auto sibling = [&](const char* what) {
    return parent / fmt::format(".{}.{}.{}.{}", target.filename().string(), what, ::getpid(),
                                temp_counter.fetch_add(1));
  };
  fs::path const tmp = sibling("tmp");
  fs::remove_all(tmp, ec);
  fs::create_directory(tmp, ec);
  if (ec) COOPGNN_IO_FAIL("{}: cannot create: {}", tmp.string(), ec.message());
  try {
    write(tmp);
  } catch (...) {
    fs::remove_all(tmp, ec);
    throw;
  }
  auto fail = [&](const fs::path& what, int err) {
    fs::remove_all(tmp, ec);
    COOPGNN_IO_FAIL("{}: cannot rename the new output {} into place: {}", what.string(),
                    tmp.string(), std::strerror(err));
  };
  if (::rename(tmp.c_str(), target.c_str()) == 0) return;  // absent or empty: replaced
  int const err = errno;
  if (err != ENOTEMPTY && err != EEXIST) fail(target, err);
  // A non-empty directory (--overwrite): swap the two, then remove the old contents.
  if (::renameat2(AT_FDCWD, tmp.c_str(), AT_FDCWD, target.c_str(), RENAME_EXCHANGE) == 0) {
    fs::remove_all(tmp, ec);
    return;
  }
  // No RENAME_EXCHANGE on this file system: the old directory steps aside first and comes back
  // if the new one cannot take its place.
  fs::path const old = sibling("old");
  if (::rename(target.c_str(), old.c_str()) != 0) fail(target, errno);
  if (::rename(tmp.c_str(), target.c_str()) != 0) {
    int const e = errno;
    (void)::rename(old.c_str(), target.c_str());
    fail(target, e);
  }
  fs::remove_all(old, ec);
}

void check_writable_dir(const fs::path& dir, const std::string& option) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) {
    COOPGNN_IO_FAIL("{} {}: cannot write there: cannot create the directory: {}", option,
                    dir.string(), ec.message());
  }
  fs::path const probe =
      dir / fmt::format(".coopgnn-probe.{}.{}", ::getpid(), temp_counter.fetch_add(1));
  int const fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) {
    COOPGNN_IO_FAIL("{} {}: cannot write there: {}", option, dir.string(), std::strerror(errno));
  }
  ::close(fd);
  ::unlink(probe.c_str());
}

void check_writable_file(const fs::path& file, const std::string& option) {
  fs::path const parent = file.has_parent_path() ? file.parent_path() : fs::path(".");
  std::error_code ec;
  fs::create_directories(parent, ec);
  if (ec) {
    COOPGNN_IO_FAIL("{} {}: cannot write there: cannot create the directory {}: {}", option,
                    file.string(), parent.string(), ec.message());
  }
  if (fs::is_directory(file, ec)) {
    COOPGNN_IO_FAIL("{} {}: cannot write there: it is a directory", option, file.string());
  }
  if (fs::exists(file, ec)) {
    int const fd = ::open(file.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
    if (fd < 0) {
      COOPGNN_IO_FAIL("{} {}: cannot write there: {}", option, file.string(), std::strerror(errno));
    }
    ::close(fd);
  }
  // A new file (or the temporary a replacement is written to) must be creatable beside it.
  fs::path const probe =
      parent / fmt::format(".coopgnn-probe.{}.{}", ::getpid(), temp_counter.fetch_add(1));
  int const fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) {
    COOPGNN_IO_FAIL("{} {}: cannot write there: {}", option, file.string(), std::strerror(errno));
  }
  ::close(fd);
  ::unlink(probe.c_str());
}

}  // namespace coopgnn::cli
