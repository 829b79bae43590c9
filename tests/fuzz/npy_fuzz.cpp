// Fuzz target: .npy headers and arrays (runtime/graph/npy.hpp), from memory and from a file.
#include <cstddef>
#include <span>

#include "runtime/graph/npy.hpp"
#include "tests/fuzz/fuzz_common.hpp"

COOPGNN_FUZZ_TARGET(npy) {
  using namespace coopgnn;
  std::span<const std::byte> const bytes(reinterpret_cast<const std::byte*>(data), size);
  fuzz::rejecting_ok([&] { (void)parse_npy_header(bytes, "fuzz.npy"); });
  fuzz::rejecting_ok([&] { (void)read_npy_buffer<float>(bytes, "fuzz.npy"); });
  fuzz::rejecting_ok([&] { (void)read_npy_buffer<std::int64_t>(bytes, "fuzz.npy"); });
  fuzz::rejecting_ok([&] { (void)read_npy_buffer<std::uint8_t>(bytes, "fuzz.npy"); });
  auto const file = fuzz::scratch_file("a.npy");
  fuzz::write_file(file, std::span<const std::uint8_t>(data, size));
  fuzz::rejecting_ok([&] { (void)read_npy_header(file); });
  fuzz::rejecting_ok([&] { (void)read_npy<std::int32_t>(file); });
  fuzz::rejecting_ok([&] { (void)read_npy<double>(file); });
  fuzz::rejecting_ok([&] { (void)read_npy_bits16(file); });
  return 0;
}
