// The kernel parity harness on the emulated device (docs/design.md section 2; ggml's
// test-backend-ops habit): the one list of op cases of tests/common/parity.hpp, each run through
// its exec_context entry on the emulated device and compared bitwise with the host reference. The
// same list runs against CUDA in parity_gpu_test.cpp. The emulated device runs the host code on
// device-marked memory, so this checks the entries' memory-space handling, uploads and downloads;
// the second test checks that wrong spaces are rejected; the TF32 tests check the bound the GPU
// harness uses for --gemm-math tf32 against a host emulation of the TF32 conversion.
#include "tests/common/parity.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/dense/gemm.hpp"
#include "runtime/core/memory.hpp"

namespace coopgnn {
namespace {

TEST(KernelParity, EveryOpOnTheEmulatedDeviceIsBitwiseTheHostReference) {
  test::expect_parity(exec_context(backend::emulated), "emulated", true);
}

TEST(KernelParity, EntriesRejectOperandsInTheWrongMemorySpace) {
  exec_context const emulated(backend::emulated);
  matrix<float> a(2, 3), b(3, 2), c(2, 2);
  auto da = upload(emulated, a);
  auto db = upload(emulated, b);
  auto dc = upload(emulated, c);
  // A host operand on a device context is an error naming it, never a silent copy.
  try {
    gemm<float>(emulated, op::none, op::none, 1.0f, host_view(a), db.view(), 0.0f, dc.view());
    FAIL() << "expected logic_error";
  } catch (const logic_error& e) {
    EXPECT_NE(std::string(e.what()).find("A is host memory"), std::string::npos) << e.what();
  }
  EXPECT_THROW(
      gemm<float>(exec_context{}, op::none, op::none, 1.0f, da.view(), db.view(), 0.0f, dc.view()),
      logic_error);
  // Device memory is not readable through the host accessors.
  EXPECT_THROW((void)dc.view().host_row(0), logic_error);
  EXPECT_THROW((void)dc.storage().host(), logic_error);
  // A fresh emulated allocation is poisoned (NaN), so a kernel reading unwritten memory shows.
  tensor<float> fresh(emulated, 1, 1);
  EXPECT_TRUE(std::isnan(download<float>(emulated, fresh.view())(0, 0)));
  EXPECT_EQ(download<float>(emulated, zeros<float>(emulated, 1, 1).view())(0, 0), 0.0f);
}

/// The host GEMM on inputs whose mantissas are cut to `bits` explicit bits (TF32: 10; bfloat16:
/// 7), as a Tensor Core that reads only the leading bits would see them: a host emulation of
/// the conversion, independent of cuBLAS.
test::gemm_under_test host_gemm_on_truncated_inputs(int bits) {
  return [bits](const test::tf32_gemm_case& c, const std::vector<float>& a,
                const std::vector<float>& b, const std::vector<float>& c0) {
    auto cut = [bits](std::vector<float> v) {
      std::uint32_t const mask = ~((std::uint32_t{1} << (23 - bits)) - 1);
      for (float& x : v) x = std::bit_cast<float>(std::bit_cast<std::uint32_t>(x) & mask);
      return v;
    };
    return test::gemm_on(exec_context{})(c, cut(a), cut(b), c0);
  };
}

TEST(KernelParityTf32, TheBoundGrowsWithKAndTheValues) {
  // Hand-computed: u = 2^-10, eps = 2^-24, gamma_k = k eps / (1 - k eps).
  double const u = 1.0 / 1024;
  double const eps = 1.0 / 16777216;
  double const g64 = 64 * eps / (1 - 64 * eps);
  EXPECT_DOUBLE_EQ(test::tf32_gemm_tolerance(64, 10.0, 0.0),
                   10.0 * (2 * u + u * u + g64 * ((1 + u) * (1 + u) + 1)) + 4 * eps * 10.0);
  EXPECT_NEAR(test::tf32_gemm_tolerance(64, 1.0, 0.0), 1.96e-3, 1e-5);
  EXPECT_LT(test::tf32_gemm_tolerance(1, 1.0, 0.0), test::tf32_gemm_tolerance(4096, 1.0, 0.0));
  EXPECT_DOUBLE_EQ(test::tf32_gemm_tolerance(17, 2.0, 0.0),
                   2 * test::tf32_gemm_tolerance(17, 1.0, 0.0));
  EXPECT_GT(test::tf32_gemm_tolerance(17, 1.0, 3.0), test::tf32_gemm_tolerance(17, 1.0, 0.0));
}

TEST(KernelParityTf32, EmulatedTf32InputsStayWithinTheBoundAndChangeTheResults) {
  auto const r = test::check_gemm_within_tf32_bound(host_gemm_on_truncated_inputs(10));
  ASSERT_GT(r.elements, 0);
  EXPECT_EQ(r.outside, 0) << r.first_outside;
  EXPECT_GT(r.differ, r.elements / 2) << "the cases' values must be changed by TF32";
}

TEST(KernelParityTf32, TheBoundCatchesAPrecisionLowerThanTf32) {
  // bfloat16's 7 mantissa bits lose 8x more per input than TF32's 10: the check must fail.
  auto const r = test::check_gemm_within_tf32_bound(host_gemm_on_truncated_inputs(7));
  EXPECT_GT(r.outside, 0);
  EXPECT_NE(r.first_outside.find("K = "), std::string::npos) << r.first_outside;
}

TEST(KernelParityTf32, Fp32IsBitwiseTheReference) {
  auto const r = test::check_gemm_within_tf32_bound(test::gemm_on(exec_context(backend::emulated)));
  EXPECT_EQ(r.outside, 0);
  EXPECT_EQ(r.differ, 0);
}

}  // namespace
}  // namespace coopgnn
