#include "tests/common/files.hpp"

#include <unistd.h>

#include <atomic>
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

}  // namespace coopgnn::test
