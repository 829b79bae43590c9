// Overlap across batches (--prefetch, docs/design.md section 6.7): a PE's next batches are
// prepared on its prefetch thread, with its own communicator, while it computes the current one.
// The results must be the serial step's bit for bit: every epoch's loss, every work and cache
// counter, the final weights (and learnt embedding rows), on the host and the emulated backend,
// for both protocols and both tasks. The expected values are those of the serial run
// (--prefetch 0), which the protocol tests check against a single PE.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "pipeline/trainer.hpp"
#include "tests/common/prefetch.hpp"

namespace coopgnn {
namespace {

using test::prefetch_usecase;

class Prefetch : public ::testing::TestWithParam<prefetch_usecase> {};

TEST_P(Prefetch, GivesTheSerialStepsBits) { test::expect_prefetch_gives_serial_bits(GetParam()); }

std::vector<prefetch_usecase> usecases() {
  using enum minibatch_mode;
  auto const node = task_kind::node_classification;
  auto const link = task_kind::link_prediction;
  auto const host = backend::host;
  auto const emu = backend::emulated;
  return {
      {"node_coop_host_P4_d1_cache_kappa8", node, cooperative, host, 4, 1, true, 8, 0},
      {"node_indep_host_P3_d2_cache_kappa8", node, independent, host, 3, 2, true, 8, 0},
      {"node_coop_emulated_P2_d2_cache", node, cooperative, emu, 2, 2, true, 1, 0},
      {"node_indep_emulated_P2_d1_kappa4", node, independent, emu, 2, 1, false, 4, 0},
      {"node_coop_host_P1_d1", node, cooperative, host, 1, 1, false, 1, 0},
      {"node_coop_host_P3_d1_embeddings", node, cooperative, host, 3, 1, false, 1, 6},
      {"link_coop_host_P4_d1_cache_kappa8", link, cooperative, host, 4, 1, true, 8, 0},
      {"link_indep_host_P2_d2_kappa2", link, independent, host, 2, 2, false, 2, 0},
      {"link_coop_emulated_P3_d1_cache", link, cooperative, emu, 3, 1, true, 1, 0},
      {"link_coop_host_P2_d2_embeddings", link, cooperative, host, 2, 2, false, 1, 5},
      {"link_indep_emulated_P2_d1_embeddings", link, independent, emu, 2, 1, false, 1, 4},
  };
}

INSTANTIATE_TEST_SUITE_P(Cases, Prefetch, ::testing::ValuesIn(usecases()),
                         [](const auto& info) { return info.param.name; });

TEST(Prefetch, AStoppedEpochResumesWithNoBatchLostOrDoubled) {
  test::expect_stopped_prefetch_resumes(backend::host);
}

TEST(Prefetch, TheOptionIsDeclaredAndBounded) {
  auto const& d = train_option("--prefetch");
  EXPECT_FALSE(d.changes_arithmetic) << "prefetch must not change the numbers";
  EXPECT_TRUE(option_range_error(d, -1).find("outside") != std::string::npos);
  EXPECT_TRUE(option_range_error(d, 2).empty());
  train_config c;
  c.prefetch = -1;
  EXPECT_THROW(validate_train_config(c), logic_error);
}

}  // namespace
}  // namespace coopgnn
