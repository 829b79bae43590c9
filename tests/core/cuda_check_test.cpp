// COOPGNN_CUDA_CHECK and the NVTX helpers: both work without a GPU (CUDA builds only).
#include <gtest/gtest.h>

#include <string>

#include "runtime/core/nvtx.hpp"

#if defined(COOPGNN_WITH_CUDA)
#include "runtime/core/cuda_check.hpp"
#include "runtime/core/error.hpp"

namespace coopgnn {
namespace {

TEST(CudaCheck, ThrowsCudaErrorWithCallFileLineAndErrorString) {
  try {
    COOPGNN_CUDA_CHECK(cudaErrorInvalidValue);
    FAIL() << "no exception";
  } catch (const cuda_error& e) {
    std::string const what = e.what();
    EXPECT_NE(what.find("cudaErrorInvalidValue"), std::string::npos) << what;
    EXPECT_NE(what.find("cuda_check_test.cpp:"), std::string::npos) << what;
    EXPECT_NE(what.find(cudaGetErrorString(cudaErrorInvalidValue)), std::string::npos) << what;
  }
  EXPECT_NO_THROW(COOPGNN_CUDA_CHECK(cudaSuccess));
  EXPECT_NO_THROW(COOPGNN_CUDA_CHECK_NO_THROW(cudaErrorInvalidValue));
  EXPECT_THROW(COOPGNN_CUBLAS_CHECK(7), cuda_error);
  EXPECT_THROW(COOPGNN_CUDA_EXPECTS(1 == 2, std::string("bad")), logic_error);
}

}  // namespace
}  // namespace coopgnn
#endif

TEST(Nvtx, RangesAndNamesAreHarmlessWithoutATool) {
  COOPGNN_NVTX_RANGE("test/range");
  coopgnn::nvtx::scoped_range const r{"test/scoped"};
  coopgnn::nvtx::name_thread("pe0");
  SUCCEED();
}
