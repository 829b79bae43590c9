// Fuzz target: torch.save'd tensors (runtime/graph/torch_tensor.hpp read_torch_header,
// read_torch and read_torch_bits16: zip directory, data.pkl pickle, byteorder, storage records,
// views).
#include <cstdint>
#include <span>

#include "runtime/graph/torch_tensor.hpp"
#include "tests/fuzz/fuzz_common.hpp"

COOPGNN_FUZZ_TARGET(torch) {
  using namespace coopgnn;
  auto const file = fuzz::scratch_file("a.pt");
  fuzz::write_file(file, std::span<const std::uint8_t>(data, size));
  fuzz::rejecting_ok([&] { (void)read_torch_header(file); });
  fuzz::rejecting_ok([&] { (void)read_torch<float>(file); });
  fuzz::rejecting_ok([&] { (void)read_torch<std::int64_t>(file); });
  fuzz::rejecting_ok([&] { (void)read_torch_bits16(file); });
  return 0;
}
