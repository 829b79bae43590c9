// The kernel parity harness against CUDA (docs/design.md section 2): the one list of op cases of
// tests/common/parity.hpp on the GPU, compared with the host reference within each case's stated
// tolerance (exact where the data make every sum exact); and the GEMM with --gemm-math tf32
// (CUBLAS_TF32_TENSOR_OP_MATH) against the host's FP32 within tf32_gemm_tolerance, the bound
// derived in tests/common/parity.hpp from K and the values. Skips without a device.
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

TEST(KernelParityGpu, GemmWithTf32IsWithinTheTf32BoundOfTheHostReference) {
  COOPGNN_REQUIRE_DEVICE();
#ifdef COOPGNN_WITH_CUDA
  cuda::cuda_context cuda(0);
  cuda.set_tf32_math(true);  // --gemm-math tf32
  auto const r = test::check_gemm_within_tf32_bound(test::gemm_on(exec_context(cuda)));
  ASSERT_GT(r.elements, 0);
  EXPECT_EQ(r.outside, 0) << r.outside << " of " << r.elements
                          << " elements beyond the TF32 bound; the first: " << r.first_outside;
  // Inputs with full 24-bit mantissas: TF32 tensor-op math must change some results, else the
  // cases did not exercise it (an FP32 path would pass the bound vacuously).
  EXPECT_GT(r.differ, 0) << "every element is bitwise the FP32 reference: TF32 was not used";
#endif
}

}  // namespace
}  // namespace coopgnn
