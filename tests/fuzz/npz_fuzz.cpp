// Fuzz target: .npz archives (runtime/graph/npz.hpp) and the npz converter
// (formats/formats.hpp convert_npz: edge arrays, SciPy sparse groups, masks).
#include <cstddef>
#include <span>

#include "formats/formats.hpp"
#include "runtime/graph/npz.hpp"
#include "tests/fuzz/fuzz_common.hpp"

COOPGNN_FUZZ_TARGET(npz) {
  using namespace coopgnn;
  auto const file = fuzz::scratch_file("a.npz");
  fuzz::write_file(file, std::span<const std::uint8_t>(data, size));
  fuzz::rejecting_ok([&] {
    npz_archive const z(file);
    std::size_t k = 0;
    for (const std::string& m : z.members()) {
      if (++k > 8) break;
      fuzz::rejecting_ok([&] { (void)z.header(m); });
      fuzz::rejecting_ok([&] { (void)z.read<float>(m); });
      fuzz::rejecting_ok([&] { (void)z.read<std::int64_t>(m); });
    }
  });
  fuzz::rejecting_ok([&] {
    convert_options opt;
    opt.max_dense_bytes = 16 << 20;
    (void)convert_npz(file, opt);
  });
  return 0;
}
