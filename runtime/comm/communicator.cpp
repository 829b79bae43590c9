// Out-of-line parts of the communicator interface (communicator.hpp).
#include "runtime/comm/communicator.hpp"

#include "runtime/core/error.hpp"

namespace coopgnn::detail {

void throw_not_summable(const char* what, datatype t) {
  COOPGNN_FAIL("{}: {} elements cannot be summed (int64, float32 or float64 only)", what,
               t == datatype::uint8 ? "uint8" : "these");
}

}  // namespace coopgnn::detail
