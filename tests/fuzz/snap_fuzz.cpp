// Fuzz target: SNAP / plain edge lists (formats/formats.hpp convert_snap), plain or gzip
// (zlib reads either from the same file).
#include <span>

#include "formats/formats.hpp"
#include "tests/fuzz/fuzz_common.hpp"

COOPGNN_FUZZ_TARGET(snap) {
  using namespace coopgnn;
  auto const file = fuzz::scratch_file("edges.txt");
  fuzz::write_file(file, std::span<const std::uint8_t>(data, size));
  fuzz::rejecting_ok([&] { (void)convert_snap(file, {}); });
  fuzz::rejecting_ok([&] {
    convert_options opt;
    opt.symmetrize = true;
    opt.drop_self_loops = true;
    (void)convert_snap(file, opt);
  });
  return 0;
}
