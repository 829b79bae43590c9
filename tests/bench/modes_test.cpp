// bench modes and the projection model (issue 5, items 2 and 3).
#include "bench/drivers/modes.hpp"

#include <gtest/gtest.h>

#include "runtime/core/error.hpp"
#include "tests/common/graphs.hpp"

namespace coopgnn::bench {
namespace {

TEST(Projection, AddsComputeAndBytesOverBandwidth) {
  machine_model const m{"M", "link", 100.0, 0.5, 10.0, 1000.0};
  pe_batch_cost c;
  c.sample_s = 1.0;
  c.forward_s = 2.0;
  c.backward_s = 3.0;
  c.optimizer_s = 0.5;
  c.feature_bytes = 20e9;    // 20 GB over 10 GB/s = 2 s
  c.alltoall_bytes = 100e9;  // over 100 * 0.5 GB/s = 2 s
  c.allreduce_bytes = 50e9;  // ring with P = 4: 2 * 3/4 * 50 GB = 75 GB over 50 GB/s = 1.5 s
  c.pes = 4;
  auto const p = project(m, c);
  EXPECT_DOUBLE_EQ(p.feature_load, 2.0);
  EXPECT_DOUBLE_EQ(p.communication, 3.5);
  EXPECT_DOUBLE_EQ(p.total, 1.0 + 2.0 + 3.0 + 2.0 + 3.5 + 0.5);
}

TEST(Projection, ParsesMachines) {
  EXPECT_EQ(parse_machine("DGX-H200").hbm_gbps, 4800.0);
  auto const m = parse_machine("lab:100:20:900");
  EXPECT_EQ(m.name, "lab");
  EXPECT_EQ(m.nvlink_gbps, 100.0);
  EXPECT_EQ(m.pcie_gbps, 20.0);
  EXPECT_THROW(parse_machine("lab:100:20"), logic_error);
  EXPECT_THROW(parse_machine("lab:x:20:1"), logic_error);
  EXPECT_THROW(parse_machine("lab:0:20:1"), logic_error);
}

TEST(Modes, CooperativeRoutesAndIndependentDoesNot) {
  auto const ds = test::synthetic_dataset(600, 3, 8, 8, 5);
  auto const g = build_csc(ds.num_nodes, ds.src, ds.dst);
  modes_options o;
  o.fanouts = {4, 4};
  o.batch_size = 96;
  o.pes = {1, 3};
  o.batches = 2;
  o.warmup = 0;
  o.hidden = 8;
  auto const r = run_modes(ds, g, o);
  ASSERT_EQ(r.rows.size(), 4u);
  for (auto const& row : r.rows) {
    EXPECT_EQ(row.work.at("seeds"), 96.0) << row.mode << " P=" << row.pes;
    EXPECT_GE(row.imbalance_edges, 1.0);
    EXPECT_GT(row.peak_bytes_max, 0.0);
    ASSERT_EQ(row.projection.size(), 3u);
    if (row.mode == "independent" || row.pes == 1) {
      EXPECT_EQ(row.work.at("alltoall_bytes"), 0.0);
    }
  }
  auto const& coop3 = r.rows[2];
  ASSERT_EQ(coop3.mode, "cooperative");
  ASSERT_EQ(coop3.pes, 3);
  // Every direction of every layer is present and non-empty with 3 PEs.
  for (int l = 0; l < 2; ++l) {
    EXPECT_GT(coop3.traffic.at({l, "ids"}), 0.0) << "layer " << l;
  }
  EXPECT_GT(coop3.traffic.at({1, "features"}), 0.0);
  EXPECT_GT(coop3.traffic.at({0, "forward"}), 0.0);
  EXPECT_GT(coop3.traffic.at({0, "backward"}), 0.0);
  double sum = 0;
  for (auto const& [k, v] : coop3.traffic) sum += v;
  EXPECT_DOUBLE_EQ(sum, coop3.work.at("alltoall_bytes"));
  auto const& ind3 = r.rows[3];
  EXPECT_TRUE(ind3.traffic.empty());
  EXPECT_GE(ind3.work.at("feature_rows"), coop3.work.at("feature_rows"));
  EXPECT_GE(ind3.work.at("sampled_edges"), coop3.work.at("sampled_edges"));

  result_header h;
  h.dataset = "synthetic";
  auto const j = modes_to_json(h, o, r);
  EXPECT_EQ(j["bench"], "modes");
  EXPECT_EQ(j["rows"].size(), 4u);
  EXPECT_TRUE(j["rows"][0]["projection"][0]["projected"].get<bool>());
  EXPECT_NE(modes_to_csv(r).find("cooperative,3,"), std::string::npos);
}

TEST(Modes, RejectsBadOptions) {
  modes_options o;
  o.pes = {0};
  EXPECT_THROW(validate(o), logic_error);
  o = {};
  o.batches = 0;
  EXPECT_THROW(validate(o), logic_error);
  o = {};
  o.fanouts = {};
  EXPECT_THROW(validate(o), logic_error);
}

}  // namespace
}  // namespace coopgnn::bench
