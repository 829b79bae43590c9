// Link prediction on the CUDA backend (docs/design.md section 7.1): one step of either protocol on
// the GPU scores the host backend's pairs with the host's scores, gradients and loss within float
// tolerance (reductions differ in order on the device), with features or learnable embeddings, the
// dot or the MLP decoder, LayerNorm and PReLU; several PEs share the one device (peer
// communicator).
#include <gtest/gtest.h>

#include "tests/common/gpu.hpp"
#include "tests/common/link_steps.hpp"

namespace coopgnn {
namespace {

struct link_cuda_usecase {
  minibatch_mode mode;
  int pes;
  bool embeddings;
  bool mlp;
};

class LinkCuda : public ::testing::TestWithParam<link_cuda_usecase> {};

TEST_P(LinkCuda, StepMatchesTheHostBackend) {
  COOPGNN_REQUIRE_DEVICE();
  auto const u = GetParam();
  auto cfg = test::link_cfg(u.mode, u.pes);
  cfg.embedding_dim = u.embeddings ? 7 : 0;
  if (u.mlp) {
    cfg.decoder = models::decoder_kind::mlp;
    cfg.decoder_hidden = 5;
    cfg.layer_norm = true;
    cfg.activation = models::activation_kind::prelu;
  }
  auto const host = test::run_link_step(cfg);
  cfg.compute_backend = backend::cuda;
  cfg.pes_per_gpu = u.pes;  // every PE on device 0
  for (bool on_device : {true, false}) {
    SCOPED_TRACE(on_device ? "sample on device" : "sample on host");
    cfg.sample_on_device = on_device;
    test::expect_same(test::run_link_step(cfg), host, 1e-4f);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Cases, LinkCuda,
    ::testing::Values(link_cuda_usecase{minibatch_mode::independent, 1, false, false},
                      link_cuda_usecase{minibatch_mode::cooperative, 2, false, true},
                      link_cuda_usecase{minibatch_mode::cooperative, 3, true, false},
                      link_cuda_usecase{minibatch_mode::independent, 2, true, true}));

}  // namespace
}  // namespace coopgnn
