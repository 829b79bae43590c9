// bench modes (bench/drivers/modes.hpp) and its modelled DGX times (docs/results/cost-model.md).
#include "bench/drivers/modes.hpp"

#include <gtest/gtest.h>

#include <filesystem>

#include "runtime/core/error.hpp"
#include "tests/common/graphs.hpp"

namespace coopgnn::bench {
namespace {

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
  o.machines = load_machines(std::filesystem::path(COOPGNN_SOURCE_DIR) / "bench/machines.yaml");
  auto const r = run_modes(ds, g, o);
  ASSERT_EQ(r.rows.size(), 4u);
  for (auto const& row : r.rows) {
    EXPECT_EQ(row.work.at("seeds"), 96.0) << row.mode << " P=" << row.pes;
    EXPECT_GE(row.imbalance_edges, 1.0);
    EXPECT_GT(row.peak_bytes_max, 0.0);
    ASSERT_EQ(row.modelled.size(), 3u);
    EXPECT_TRUE(row.measured_links.empty()) << "host seconds never stand in for a GPU's";
    for (std::size_t m = 0; m < 3; ++m) EXPECT_GT(row.modelled_total[m], 0.0);
    if (row.mode == "independent" || row.pes == 1) {
      EXPECT_EQ(row.work.at("alltoall_bytes"), 0.0);
      EXPECT_EQ(row.work.at("alltoall_calls"), 0.0);
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
  // One PE: cooperative is independent, counted and modelled alike.
  EXPECT_EQ(r.rows[0].work, r.rows[1].work);
  EXPECT_DOUBLE_EQ(r.rows[0].modelled_total[0], r.rows[1].modelled_total[0]);
  EXPECT_GT(coop3.work.at("alltoall_calls"), 0.0);
  EXPECT_GT(coop3.modelled[0].communication, 0.0);
  auto const& ind3 = r.rows[3];
  EXPECT_TRUE(ind3.traffic.empty());
  EXPECT_GE(ind3.work.at("feature_rows"), coop3.work.at("feature_rows"));
  EXPECT_GE(ind3.work.at("sampled_edges"), coop3.work.at("sampled_edges"));

  result_header h;
  h.dataset = "synthetic";
  auto const j = modes_to_json(h, o, r);
  EXPECT_EQ(j["bench"], "modes");
  EXPECT_EQ(j["rows"].size(), 4u);
  EXPECT_EQ(j["rows"][0]["modelled"][0]["kind"], "modelled");
  EXPECT_EQ(j["rows"][0]["modelled"][0]["machine"], "DGX-A100");
  EXPECT_FALSE(j["rows"][0].contains("measured_compute_modelled_links"));
  EXPECT_EQ(j["cost_model"]["machines"].size(), 3u);
  EXPECT_FALSE(
      j["cost_model"]["machines"][0]["figures"]["pcie_gbps"]["source"].get<std::string>().empty());
  EXPECT_NE(modes_to_csv(r).find("cooperative,3,"), std::string::npos);
  EXPECT_NE(modes_model_csv(o, r).find("cooperative,3,96,DGX-H200,modelled,"), std::string::npos);
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
