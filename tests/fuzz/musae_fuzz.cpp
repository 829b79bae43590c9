// Fuzz target: MUSAE directories (formats/formats.hpp convert_musae). The input is a
// container (fuzz_common.hpp) with NAME_edges.csv, NAME_target.csv and NAME_features.json (or the
// original release's edges.csv, target.csv and features.json).
#include <filesystem>

#include "formats/formats.hpp"
#include "tests/fuzz/fuzz_common.hpp"

COOPGNN_FUZZ_TARGET(musae) {
  return coopgnn::fuzz::on_container_dir("musae", data, size, [size](const std::filesystem::path& dir) {
    coopgnn::convert_options opt;
    opt.max_dense_bytes = 16 << 20;
    opt.stratified = size % 2 == 1;  // both vertex splits, chosen by the input's length
    (void)coopgnn::convert_musae(dir, opt);
  });
}
