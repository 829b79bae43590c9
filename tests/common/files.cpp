#include "tests/common/files.hpp"

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <sstream>

namespace coopgnn::test {

namespace fs = std::filesystem;

temp_dir::temp_dir() {
  static std::atomic<int> counter{0};
  path_ = fs::temp_directory_path() /
          ("coopgnn-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
  fs::remove_all(path_);
  fs::create_directories(path_);
}

temp_dir::~temp_dir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

void write_text(const fs::path& p, const std::string& bytes) {
  if (p.has_parent_path()) fs::create_directories(p.parent_path());
  std::ofstream out(p, std::ios::binary);
  out << bytes;
}

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

scoped_env::scoped_env(const char* name, const char* value) : name_(name) {
  if (const char* old = std::getenv(name)) {
    had_ = true;
    old_ = old;
  }
  if (value != nullptr) {
    ::setenv(name, value, 1);
  } else {
    ::unsetenv(name);
  }
}

scoped_env::~scoped_env() {
  if (had_) {
    ::setenv(name_.c_str(), old_.c_str(), 1);
  } else {
    ::unsetenv(name_.c_str());
  }
}

namespace {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
#else
constexpr bool kSanitized = false;
#endif

}  // namespace

std::string in_limited_child(std::uint64_t extra_bytes, const std::function<std::string()>& f) {
  if (kSanitized) return f();
  int fds[2];
  if (::pipe(fds) != 0) return "<child failed: pipe>";
  pid_t const pid = ::fork();
  if (pid < 0) return "<child failed: fork>";
  if (pid == 0) {
    ::close(fds[0]);
    std::string out;
    int code = 0;
    {
      // The address space in use now (first field of /proc/self/statm, in pages) plus the slack.
      std::ifstream statm("/proc/self/statm");
      std::uint64_t pages = 0;
      statm >> pages;
      auto const page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
      rlimit const lim{pages * page + extra_bytes, pages * page + extra_bytes};
      ::setrlimit(RLIMIT_AS, &lim);
      try {
        out = f();
      } catch (const std::exception& e) {
        out = std::string("<child failed: threw ") + e.what() + ">";
        code = 1;
      }
    }
    std::size_t done = 0;
    while (done < out.size()) {
      ssize_t const w = ::write(fds[1], out.data() + done, out.size() - done);
      if (w <= 0) break;
      done += static_cast<std::size_t>(w);
    }
    ::_exit(code);
  }
  ::close(fds[1]);
  std::string out;
  char buf[4096];
  ssize_t r = 0;
  while ((r = ::read(fds[0], buf, sizeof buf)) > 0) out.append(buf, static_cast<std::size_t>(r));
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (!WIFEXITED(status))
    return "<child failed: killed by signal " + std::to_string(WTERMSIG(status)) + ">";
  return out;
}

}  // namespace coopgnn::test
