// Fuzz target: MUSAE directories (tools/coopgnn/convert.hpp convert_musae). The input is a
// container (fuzz_common.hpp) with NAME_edges.csv, NAME_target.csv and NAME_features.json.
#include <filesystem>

#include "tests/fuzz/fuzz_common.hpp"
#include "tools/coopgnn/convert.hpp"

COOPGNN_FUZZ_TARGET(musae) {
  return coopgnn::fuzz::on_container_dir("musae", data, size, [](const std::filesystem::path& dir) {
    coopgnn::convert_options opt;
    opt.max_dense_bytes = 16 << 20;
    (void)coopgnn::convert_musae(dir, opt);
  });
}
