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

// A completion query (cudaStreamQuery, cudaEventQuery) that is still running returns
// cudaErrorNotReady, which the runtime also keeps as the thread's last error; a poll that only
// returned false left it there, and the next checked launch threw "device not ready". The
// statuses are injected, so this runs without a GPU.
TEST(CudaCheck, CompletionQueryClearsNotReadyAndOnlyThat) {
  int clears = 0;
  auto clear = [&] { ++clears; };
  EXPECT_FALSE(detail::query_completed(cudaErrorNotReady, "q", __FILE__, __LINE__, clear));
  EXPECT_EQ(clears, 1);  // the pending status is cleared on every "not yet"
  EXPECT_FALSE(detail::query_completed(cudaErrorNotReady, "q", __FILE__, __LINE__, clear));
  EXPECT_EQ(clears, 2);
  EXPECT_TRUE(detail::query_completed(cudaSuccess, "q", __FILE__, __LINE__, clear));
  EXPECT_EQ(clears, 2);  // nothing to clear when done
  try {
    detail::query_completed(cudaErrorIllegalAddress, "cudaStreamQuery(s)", __FILE__, __LINE__,
                            clear);
    FAIL() << "an asynchronous fault must throw";
  } catch (const cuda_error& e) {
    std::string const what = e.what();
    EXPECT_NE(what.find("cudaErrorIllegalAddress"), std::string::npos) << what;
    EXPECT_NE(what.find("cudaStreamQuery(s)"), std::string::npos) << what;
  }
  EXPECT_EQ(clears, 2);  // a real error is reported, never swallowed as "not ready"
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
