// The kernel parity harness against CUDA (docs/design.md section 2): the one list of op cases of
// tests/common/parity.hpp on the GPU, compared with the host reference within each case's stated
// tolerance (exact where the data make every sum exact). Skips without a device.
#include <gtest/gtest.h>

#include "runtime/core/cuda_context.hpp"
#include "tests/common/gpu.hpp"
#include "tests/common/parity.hpp"

namespace coopgnn {
namespace {

TEST(KernelParityGpu, EveryOpOnCudaMatchesTheHostReference) {
  COOPGNN_REQUIRE_DEVICE();
#ifdef COOPGNN_WITH_CUDA
  cuda::cuda_context cuda(0);
  test::expect_parity(exec_context(cuda), "cuda", false);
#endif
}

}  // namespace
}  // namespace coopgnn
