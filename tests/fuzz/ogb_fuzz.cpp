// Fuzz target: OGB raw node-property directories (formats/formats.hpp convert_ogb). The
// input is a container (fuzz_common.hpp: "=== raw/edge.csv\n0,1\n=== raw/num-node-list.csv\n...")
// written to a fresh directory per input.
#include <filesystem>

#include "formats/formats.hpp"
#include "tests/fuzz/fuzz_common.hpp"

COOPGNN_FUZZ_TARGET(ogb) {
  return coopgnn::fuzz::on_container_dir("ogb", data, size, [](const std::filesystem::path& dir) {
    (void)coopgnn::convert_ogb(dir, {});
  });
}
