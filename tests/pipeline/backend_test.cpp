// Choosing the backend (`--backend`, train_config::compute_backend) and the errors a CUDA run
// gives where CUDA is unavailable (the host backend stays the default without a GPU).
#include <gtest/gtest.h>

#include "runtime/core/device.hpp"
#include "runtime/core/error.hpp"
#include "pipeline/trainer.hpp"
#include "tests/common/graphs.hpp"

namespace coopgnn {
namespace {

#ifdef COOPGNN_WITH_CUDA
constexpr bool kBuiltWithCuda = true;
#else
constexpr bool kBuiltWithCuda = false;
#endif

TEST(Backend, AutoPicksCudaOnlyWithADeviceInACudaBuild) {
  EXPECT_EQ(resolve_backend("auto", 0, "no device"), backend::host);
  EXPECT_EQ(resolve_backend("auto", 2, ""), kBuiltWithCuda ? backend::cuda : backend::host);
  EXPECT_EQ(resolve_backend("host", 8, ""), backend::host);
}

TEST(Backend, CudaWithoutADeviceOrBuildIsAClearError) {
  try {
    (void)resolve_backend("cuda", 0, "no CUDA-capable device is detected");
    FAIL() << "expected a logic_error";
  } catch (const logic_error& e) {
    std::string const what = e.what();
    EXPECT_NE(what.find("--backend cuda"), std::string::npos) << what;
    if (kBuiltWithCuda) {
      EXPECT_NE(what.find("no CUDA-capable device is detected"), std::string::npos) << what;
    }
  }
  EXPECT_THROW((void)resolve_backend("gpu", 1, ""), logic_error);
  EXPECT_EQ(to_string(backend::cuda), "cuda");
  EXPECT_EQ(to_string(backend::host), "host");
}

TEST(Backend, TrainerOnCudaWithoutADeviceFailsBeforeTraining) {
  if (query_devices().count > 0) GTEST_SKIP() << "a CUDA device is present";
  auto const ds = test::synthetic_dataset(100, 3, 4, 5, 1);
  auto const g = build_csc(ds.num_nodes, ds.src, ds.dst);
  train_config c;
  c.num_pes = 2;
  c.compute_backend = backend::cuda;
  try {
    trainer tr(ds, g, c);
    FAIL() << "expected a logic_error";
  } catch (const logic_error& e) {
    EXPECT_NE(std::string(e.what()).find("--backend cuda"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace coopgnn
