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

modes_options small_options() {
  modes_options o;
  o.fanouts = {4, 4};
  o.batch_size = 96;
  o.pes = {2};
  o.batches = 2;
  o.warmup = 1;
  o.hidden = 8;
  o.machines = load_machines(std::filesystem::path(COOPGNN_SOURCE_DIR) / "bench/machines.yaml");
  return o;
}

TEST(Modes, CacheHitsAreReadFromHbmInTheModel) {
  auto const ds = test::synthetic_dataset(600, 3, 8, 8, 5);
  auto const g = build_csc(ds.num_nodes, ds.src, ds.dst);
  auto o = small_options();
  o.sampler = sampler_kind::labor;
  o.batch_dependency = 256;  // the same samples with and without the cache
  // Bandwidth terms only: the rows here are 32 bytes, so a kernel launch would hide them.
  for (auto& m : o.machines) m.kernel_launch_us = 0;
  auto const plain = run_modes(ds, g, o);
  o.cache_policy = cache_policy_kind::lru;
  o.cache_rows = 600;  // every vertex fits: after the warm-up batch most rows hit
  auto const cached = run_modes(ds, g, o);
  ASSERT_EQ(plain.rows.size(), cached.rows.size());
  for (std::size_t i = 0; i < plain.rows.size(); ++i) {
    auto const& a = plain.rows[i];
    auto const& b = cached.rows[i];
    EXPECT_EQ(a.work.at("cache_hits"), 0.0);
    EXPECT_GT(b.work.at("cache_hits"), 0.0) << b.mode;
    EXPECT_LE(b.work.at("cache_hits"), b.work.at("feature_rows"));
    EXPECT_EQ(b.work.at("feature_rows"), a.work.at("feature_rows")) << "same samples";
    // UVA: misses over PCIe, hits from HBM; fewer PCIe bytes, less modelled feature_load.
    for (std::size_t m = 0; m < o.machines.size(); ++m) {
      EXPECT_LT(b.modelled[m].feature_load, a.modelled[m].feature_load)
          << b.mode << " " << o.machines[m].name;
    }
  }
  result_header h;
  auto const j = modes_to_json(h, o, cached);
  EXPECT_EQ(j["batch_dependency"], 256);
  EXPECT_EQ(j["cache_policy"], "lru");
  EXPECT_EQ(j["cache_rows"], 600);
  EXPECT_EQ(j["cost_model"]["feature_bytes"], 4);
}

TEST(Modes, FeatureBytesAndTf32ScaleOnlyTheirTerms) {
  auto const ds = test::synthetic_dataset(600, 3, 8, 8, 5);
  auto const g = build_csc(ds.num_nodes, ds.src, ds.dst);
  auto o = small_options();
  auto const fp32 = run_modes(ds, g, o);
  o.feature_bytes = 2;
  o.feature_bytes_given = true;  // a modelled override: the exchange is scaled too
  apply_gemm_math(o.machines, "tf32");
  o.gemm_math = "tf32";
  auto const half = run_modes(ds, g, o);
  for (std::size_t i = 0; i < fp32.rows.size(); ++i) {
    auto const& a = fp32.rows[i];
    auto const& b = half.rows[i];
    EXPECT_EQ(a.work, b.work) << "the counted work does not change";
    for (std::size_t m = 0; m < o.machines.size(); ++m) {
      EXPECT_LT(b.modelled[m].feature_load, a.modelled[m].feature_load);
      EXPECT_LE(b.modelled[m].forward, a.modelled[m].forward);
      EXPECT_DOUBLE_EQ(b.modelled[m].sample, a.modelled[m].sample);
      EXPECT_DOUBLE_EQ(b.modelled[m].optimizer, a.modelled[m].optimizer);
    }
    if (a.mode == "cooperative") {
      // The feature exchange moves half the bytes: less link time.
      EXPECT_LT(b.modelled[0].communication, a.modelled[0].communication);
    } else {
      EXPECT_DOUBLE_EQ(b.modelled[0].communication, a.modelled[0].communication);
    }
  }
  result_header h;
  auto const j = modes_to_json(h, o, half);
  EXPECT_EQ(j["cost_model"]["feature_bytes"], 2);
  EXPECT_EQ(j["cost_model"]["gemm_math"], "tf32");
  EXPECT_EQ(j["cost_model"]["machines"][0]["gemm_math"], "tf32");
  EXPECT_NE(format_modes_table(o, half).find("at 2 bytes per element (--feature-bytes)"),
            std::string::npos);
  EXPECT_THROW(apply_gemm_math(o.machines, "fp16"), logic_error);
}

TEST(Modes, PaperSettingsAreTheFourOfThePaper) {
  auto const& s = paper_settings();
  ASSERT_EQ(s.size(), 4u);
  EXPECT_EQ(s[0].sampler, sampler_kind::ns);
  EXPECT_EQ(s[0].batch_dependency, 1);
  EXPECT_FALSE(s[0].cache);
  EXPECT_EQ(s[1].sampler, sampler_kind::labor);
  EXPECT_FALSE(s[1].cache);
  EXPECT_TRUE(s[2].cache);
  EXPECT_EQ(s[2].batch_dependency, 1);
  EXPECT_EQ(s[3].sampler, sampler_kind::labor);
  EXPECT_EQ(s[3].batch_dependency, 256);
  EXPECT_TRUE(s[3].cache);
  modes_options base;
  base.cache_policy = cache_policy_kind::setassoc;
  base.cache_rows = 100;
  auto const none = with_setting(base, s[1]);
  EXPECT_EQ(none.cache_policy, cache_policy_kind::none);
  EXPECT_EQ(none.cache_rows, 0);
  auto const k256 = with_setting(base, s[3]);
  EXPECT_EQ(k256.cache_policy, cache_policy_kind::setassoc);
  EXPECT_EQ(k256.cache_rows, 100);
  EXPECT_EQ(k256.batch_dependency, 256);
  EXPECT_EQ(k256.setting, "LABOR kappa 256, cache");
  EXPECT_NO_THROW(validate(k256));
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
  o = {};
  o.batch_dependency = 256;  // NS has no batch dependency
  EXPECT_THROW(validate(o), logic_error);
  o.sampler = sampler_kind::labor;
  EXPECT_NO_THROW(validate(o));
  o = {};
  o.cache_rows = 10;  // a capacity without a policy
  EXPECT_THROW(validate(o), logic_error);
  o = {};
  o.feature_bytes = 0;
  EXPECT_THROW(validate(o), logic_error);
}

}  // namespace
}  // namespace coopgnn::bench
