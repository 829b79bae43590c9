// Fuzz target: LightGCN user-item directories (formats/formats.hpp convert_lightgcn). The
// input is a container (fuzz_common.hpp) with train.txt and test.txt.
#include <filesystem>

#include "formats/formats.hpp"
#include "tests/fuzz/fuzz_common.hpp"

COOPGNN_FUZZ_TARGET(lightgcn) {
  return coopgnn::fuzz::on_container_dir(
      "lightgcn", data, size,
      [](const std::filesystem::path& dir) { (void)coopgnn::convert_lightgcn(dir, {}); });
}
