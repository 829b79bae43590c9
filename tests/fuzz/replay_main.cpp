// The corpus replay driver of the ordinary (gcc, non-fuzz) build: runs every committed input of
// tests/fuzz/corpus/<target>/ through its fuzz target, so ctest exercises each regression input
// without clang or libFuzzer. Usage: coopgnn_fuzz_replay TARGET PATH... (files, or directories
// whose regular files are replayed in name order). Exit status 0 when every input passed; 1 when
// one raised anything but coopgnn::error (the target's rejecting_ok lets those through), naming
// the input; 2 for a usage error. A crash kills the process after the "replay FILE" line of the
// input that caused it.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "tests/fuzz/fuzz_common.hpp"

namespace fs = std::filesystem;

int main(int argc, char** argv) {
  using coopgnn::fuzz::targets;
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s TARGET PATH...\ntargets:", argv[0]);
    for (const auto& t : targets()) std::fprintf(stderr, " %s", t.name);
    std::fprintf(stderr, "\n");
    return 2;
  }
  auto it = std::find_if(targets().begin(), targets().end(),
                         [&](const auto& t) { return std::strcmp(t.name, argv[1]) == 0; });
  if (it == targets().end()) {
    std::fprintf(stderr, "%s: no fuzz target '%s'\n", argv[0], argv[1]);
    return 2;
  }
  coopgnn::fuzz::init_process();
  std::vector<fs::path> files;
  for (int i = 2; i < argc; ++i) {
    fs::path const p = argv[i];
    if (fs::is_directory(p)) {
      for (const auto& e : fs::directory_iterator(p)) {
        if (e.is_regular_file()) files.push_back(e.path());
      }
    } else if (fs::is_regular_file(p)) {
      files.push_back(p);
    } else {
      std::fprintf(stderr, "%s: %s: no such file or directory\n", argv[0], argv[i]);
      return 2;
    }
  }
  std::sort(files.begin(), files.end());
  int failed = 0;
  for (const fs::path& f : files) {
    std::printf("replay %s\n", f.c_str());
    std::fflush(stdout);
    std::ifstream in(f, std::ios::binary);
    std::vector<char> const bytes((std::istreambuf_iterator<char>(in)),
                                  std::istreambuf_iterator<char>());
    try {
      it->fn(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
    } catch (const std::exception& e) {
      std::printf("FAIL %s %s: uncaught %s\n", argv[1], f.c_str(), e.what());
      ++failed;
    } catch (...) {
      std::printf("FAIL %s %s: uncaught non-standard exception\n", argv[1], f.c_str());
      ++failed;
    }
  }
  std::printf("%s: replayed %zu inputs, %d failed\n", argv[1], files.size(), failed);
  return failed == 0 ? 0 : 1;
}
