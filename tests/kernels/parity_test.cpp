// The kernel parity harness on the emulated device (docs/design.md section 2; ggml's
// test-backend-ops habit): the one list of op cases of tests/common/parity.hpp, each run through
// its exec_context entry on the emulated device and compared bitwise with the host reference. The
// same list runs against CUDA in parity_gpu_test.cpp. The emulated device runs the host code on
// device-marked memory, so this checks the entries' memory-space handling, uploads and downloads;
// the second test checks that wrong spaces are rejected.
#include "tests/common/parity.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

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

}  // namespace
}  // namespace coopgnn
