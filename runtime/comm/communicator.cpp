// Out-of-line parts of the communicator interface (communicator.hpp).
#include "runtime/comm/communicator.hpp"

#include "runtime/core/error.hpp"

namespace coopgnn {

communicator::byte_counts communicator::alltoallv_bytes(std::span<const std::int64_t> send_counts,
                                                        std::span<const std::int64_t> recv_counts,
                                                        datatype dtype) const {
  auto const p = static_cast<std::size_t>(size());
  COOPGNN_EXPECTS(send_counts.size() == p && recv_counts.size() == p,
                  "alltoallv needs {} counts per PE, got send {} recv {}", p, send_counts.size(),
                  recv_counts.size());
  auto const bytes = [dtype](std::span<const std::int64_t> counts) {
    std::vector<std::int64_t> out(counts.begin(), counts.end());
    for (auto& b : out) b *= static_cast<std::int64_t>(size_of(dtype));
    return out;
  };
  return {bytes(send_counts), bytes(recv_counts)};
}

namespace detail {

void throw_not_summable(const char* what, datatype t) {
  COOPGNN_FAIL("{}: {} elements cannot be summed (int64, float32 or float64 only)", what,
               t == datatype::uint8 ? "uint8" : "these");
}

}  // namespace detail
}  // namespace coopgnn
