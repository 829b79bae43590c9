// Overlap across batches on the CUDA backend (--prefetch, docs/design.md section 6.7): each PE's
// prefetch thread prepares the next batches on a CUDA context of its own (its own streams and
// pool) with a peer-copy communicator of its own, and hands each batch to the compute stream with
// an event. The results must be the serial CUDA run's bit for bit: every epoch's loss, every work
// and cache counter, the final weights (and learnt embedding rows), for both protocols and both
// tasks, 2 and 3 PEs sharing device 0, depth 1 and 2, the GPU cache, learnt embeddings, and a stop
// that drops batches already prepared. The expected values are those of the serial CUDA run
// (--prefetch 0), which tests/pipeline/trainer_cuda_gpu_test.cpp checks against the host.
// Skips without a device.
#include <gtest/gtest.h>

#include <vector>

#include "tests/common/gpu.hpp"
#include "tests/common/prefetch.hpp"

namespace coopgnn {
namespace {

using test::prefetch_usecase;

class PrefetchCuda : public ::testing::TestWithParam<prefetch_usecase> {};

TEST_P(PrefetchCuda, GivesTheSerialStepsBits) {
  COOPGNN_REQUIRE_DEVICE();
  test::expect_prefetch_gives_serial_bits(GetParam());
}

std::vector<prefetch_usecase> usecases() {
  using enum minibatch_mode;
  auto const node = task_kind::node_classification;
  auto const link = task_kind::link_prediction;
  auto const cuda = backend::cuda;
  return {
      {"node_coop_P2_d1_gpucache_kappa8", node, cooperative, cuda, 2, 1, true, 8, 0},
      {"node_indep_P3_d2_gpucache", node, independent, cuda, 3, 2, true, 1, 0},
      {"node_coop_P2_d2_embeddings", node, cooperative, cuda, 2, 2, false, 1, 6},
      {"link_coop_P2_d2_gpucache", link, cooperative, cuda, 2, 2, true, 1, 0},
      {"link_indep_P2_d1_kappa2", link, independent, cuda, 2, 1, false, 2, 0},
  };
}

INSTANTIATE_TEST_SUITE_P(Cases, PrefetchCuda, ::testing::ValuesIn(usecases()),
                         [](const auto& info) { return info.param.name; });

TEST(PrefetchCuda, AStoppedEpochResumesWithNoBatchLostOrDoubled) {
  COOPGNN_REQUIRE_DEVICE();
  test::expect_stopped_prefetch_resumes(backend::cuda);
}

}  // namespace
}  // namespace coopgnn
