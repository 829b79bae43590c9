// What the trainer's PEs start from and what a host step records of its collectives: every
// host replica holds, bit for bit, the weights the drawing constructor gives (PE 0 draws, the
// others copy it), and an epoch's communication splits into transfer and a measured wait.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstdint>

#include "models/model.hpp"
#include "pipeline/trainer.hpp"
#include "tests/common/graphs.hpp"

namespace coopgnn {
namespace {

TEST(PeSetup, EveryHostReplicaHasTheDrawnInitialWeights) {
  auto const ds = test::synthetic_dataset(120, 3, 6, 5, 1);
  auto const g = build_csc(ds.num_nodes, ds.src, ds.dst);
  train_config c;
  c.num_pes = 4;
  c.hidden = 8;
  c.seed = 21;
  trainer tr(ds, g, c);
  exec_context const host(backend::host);
  models::gnn_model const drawn(host, tr.model(0).config());  // the constructor that draws
  auto const want = drawn.params().values();
  ASSERT_GT(want.size, 0u);
  for (int p = 0; p < c.num_pes; ++p) {
    auto const got = tr.model(p).params().values();
    ASSERT_EQ(got.size, want.size) << "PE " << p;
    EXPECT_TRUE(std::equal(want.data, want.data + want.size, got.data,
                           [](float a, float b) {
                             return std::bit_cast<std::uint32_t>(a) ==
                                    std::bit_cast<std::uint32_t>(b);
                           }))
        << "PE " << p;
  }
}

TEST(PeSetup, AnEpochsCommunicationHasAMeasuredWaitWithinIt) {
  auto const ds = test::synthetic_dataset(120, 3, 6, 5, 1);
  auto const g = build_csc(ds.num_nodes, ds.src, ds.dst);
  train_config c;
  c.num_pes = 3;
  c.hidden = 8;
  c.batch_size = 24;
  trainer tr(ds, g, c);
  epoch_report const r = tr.run_epoch(1, false);
  EXPECT_TRUE(r.communication_wait_measured);  // host communicators know each arrival
  EXPECT_GT(r.seconds.communication, 0.0);
  EXPECT_GE(r.seconds.communication_wait, 0.0);
  EXPECT_LE(r.seconds.communication_wait, r.seconds.communication);
}

}  // namespace
}  // namespace coopgnn
