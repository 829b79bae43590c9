// The cost model of bench modes (docs/results/cost-model.md; bench/drivers/cost_model.hpp): the
// stage formulas on counts small enough to add up by hand, and machine files that are wrong in
// every way a user can get them wrong. Expected values are written out from the documented
// formulas, never taken from the code under test.
#include "bench/drivers/cost_model.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "runtime/core/error.hpp"

namespace coopgnn::bench {
namespace {

/// Round numbers: HBM 1 GB/s at 50 % = 5e8 B/s, 1 GFLOP/s, NVLink 10 GB/s at 50 % = 5e9 B/s,
/// PCIe 2 GB/s, 10 us per collective, 1 us per kernel.
machine_model round_machine() {
  machine_model m;
  m.name = "round";
  m.hbm_gbps = 1;
  m.hbm_efficiency = 0.5;
  m.fp32_tflops = 1e-3;
  m.tf32_tflops = 8e-3;
  m.flop_efficiency = 1;
  m.nvlink_gbps = 10;
  m.nccl_efficiency = 0.5;
  m.nccl_latency_us = 10;
  m.pcie_gbps = 2;
  m.kernel_launch_us = 1;
  return m;
}

/// One SAGE layer, aggregate-first (in 8 <= out 16), the input layer (no input gradient).
step_counts one_layer(int P, bool exchanges) {
  step_counts c;
  c.layers = {{0, 10, 30, 40, 8, 16, false, false}};
  c.feature_rows_host = 30;
  c.feature_row_bytes = 32;
  c.parameters = 100;
  c.pes = P;
  c.exchanges = exchanges;
  return c;
}

TEST(CostModel, KernelIsTheSlowerOfBytesAndFlops) {
  auto m = round_machine();
  EXPECT_DOUBLE_EQ(kernel_seconds(m, 1e9, 0), 2.0);          // 1 GB at 5e8 B/s
  EXPECT_DOUBLE_EQ(kernel_seconds(m, 1e3, 3e9), 3.0);        // 3 GFLOP at 1 GFLOP/s
  EXPECT_DOUBLE_EQ(kernel_seconds(m, 1e3, 3e9, true), 3.0);  // fp32 GEMMs unless tf32
  m.gemm_tf32 = true;
  EXPECT_DOUBLE_EQ(kernel_seconds(m, 1e3, 4e9, true), 0.5);  // 8 GFLOP/s
  EXPECT_DOUBLE_EQ(kernel_seconds(m, 1e3, 4e9, false), 4.0);
}

TEST(CostModel, OnlyWhatTheRuntimeOverlapsIsSubtracted) {
  // The prefetch thread overlaps on every backend (on CUDA on its own stream); 0 is serial.
  EXPECT_TRUE(overlaps_prepare(backend::host, 1));
  EXPECT_TRUE(overlaps_prepare(backend::emulated, 2));
  EXPECT_TRUE(overlaps_prepare(backend::cuda, 1));
  EXPECT_FALSE(overlaps_prepare(backend::host, 0));
  EXPECT_FALSE(overlaps_prepare(backend::cuda, 0));
  modelled_seconds s;
  s.sample = 1;
  s.feature_load = 2;  // prepare: 3
  s.forward = 4;
  s.backward = 5;
  s.optimizer = 1;  // compute: 10
  s.communication = 7;
  EXPECT_DOUBLE_EQ(step_total(s, false), 20);
  EXPECT_DOUBLE_EQ(step_total(s, true), 17);  // the 3 s of prepare hidden; links kept in series
  s.sample = 30;                              // prepare 32 hides the compute's 10 instead
  EXPECT_DOUBLE_EQ(step_total(s, true), 39);
}

TEST(CostModel, StagesOfOneLayerByHand) {
  auto const m = round_machine();
  cost_options o;  // SAGE, dropout, UVA
  auto const t = model_step(m, one_layer(1, false), o);
  // sample: 16*10 + 52*40 + 16*30 = 2720 B over 5e8 B/s, plus 8 kernels.
  EXPECT_NEAR(t.sample, 2720 / 5e8 + 8e-6, 1e-15);
  // feature_load: 30 rows * 32 B over PCIe 2e9 B/s plus one gather kernel.
  EXPECT_NEAR(t.feature_load, 960 / 2e9 + 1e-6, 1e-15);
  // forward: dropout 9*30*8 = 2160 B; bias+ReLU 8*10*16 = 1280 B; SpMM 12*40 + 4*40*8 + 4*10*8
  // = 2080 B; GEMM [10,8]x[8,16] 4*(80+128+160) = 1472 B; the accumulating one 1472 + 640 =
  // 2112 B (flops 2560 < bytes' time everywhere); five kernels.
  double const fwd = (2160 + 1280 + 2080 + 1472 + 2112) / 5e8 + 5e-6;
  EXPECT_NEAR(t.forward, fwd, 1e-15);
  // backward: ReLU' 12*160 = 1920 B, dW_neigh and dW_self 2112 B each; no input gradient.
  EXPECT_NEAR(t.backward, (1920 + 2112 + 2112) / 5e8 + 3e-6, 1e-15);
  EXPECT_DOUBLE_EQ(t.communication, 0.0);  // one PE: nothing crosses a link
  // optimizer: Adam 28 B per parameter.
  EXPECT_NEAR(t.optimizer, 2800 / 5e8 + 1e-6, 1e-15);
  EXPECT_NEAR(t.total(), t.sample + t.feature_load + t.forward + t.backward + t.optimizer, 1e-15);
}

TEST(CostModel, SixteenBitRowsAreReadAtTheirWidthAndWrittenWidened) {
  auto const m = round_machine();
  auto c = one_layer(1, false);
  c.feature_row_bytes = 16;      // 8 float16 elements as stored
  c.feature_out_row_bytes = 32;  // written as float32 by the gather
  cost_options o;
  // UVA: 30 rows * 16 B over PCIe 2e9 B/s plus one gather kernel.
  EXPECT_NEAR(model_step(m, c, o).feature_load, 480 / 2e9 + 1e-6, 1e-15);
  // UVA with 10 cache hits: + one kernel reading 10 * 16 B and writing 10 * 32 B from HBM.
  c.feature_rows_cached = 10;
  EXPECT_NEAR(model_step(m, c, o).feature_load, 480 / 2e9 + 1e-6 + (480 / 5e8 + 1e-6), 1e-15);
  // Device: 40 rows, each read at 16 B and written at 32 B.
  o.placement = feature_placement::device;
  EXPECT_NEAR(model_step(m, c, o).feature_load, 40 * 48 / 5e8 + 1e-6, 1e-15);
  // 0 = the stored width (float32 tables): 2 x row bytes per row, as before.
  c.feature_out_row_bytes = 0;
  EXPECT_NEAR(model_step(m, c, o).feature_load, 40 * 32 / 5e8 + 1e-6, 1e-15);
}

TEST(CostModel, GatOutputLayerByHand) {
  // The last conv (block 0) of a GAT: 2 averaged heads of 4 classes (8 columns computed),
  // E' = 40 edges + 10 self-loops = 50, input dropout on, no attention dropout.
  auto const m = round_machine();
  cost_options o;
  o.conv = models::conv_kind::gat;
  o.out_heads = 2;
  step_counts c;
  c.layers = {{0, 10, 30, 40, 8, 4, true, false}};
  c.parameters = 0;
  auto const t = model_step(m, c, o);
  // Forward bytes (every kernel is byte-bound here): dropout 9*30*8 = 2160; GEMM [30,8]x[8,8]
  // 4*(240+64+240) = 2176; projections 4*30*8 + 8*30*2 = 1440; scores 8*50 + 12*50*2 = 1600;
  // softmax 16*50*2 = 1600; aggregate 12*50 + 4*50*2 + 4*50*8 + 4*10*8 = 2920; bias+ELU
  // 8*10*4 = 320; seven kernels.
  EXPECT_NEAR(t.forward, (2160 + 2176 + 1440 + 1600 + 1600 + 2920 + 320) / 5e8 + 7e-6, 1e-15);
  // Backward: ELU' 12*40 = 480; two aggregate-shaped passes 2*2920; softmax' 1600; scores'
  // 1600; projections' 1440; dW accumulating 2176 + 4*30*8 = 3136; no input gradient; seven
  // kernels.
  EXPECT_NEAR(t.backward, (480 + 2 * 2920 + 1600 + 1600 + 1440 + 3136) / 5e8 + 7e-6, 1e-15);
}

TEST(CostModel, ExchangesAddLinkBytesLatencyAndGathers) {
  auto const m = round_machine();
  auto c = one_layer(4, true);
  c.alltoall_bytes = 1e6;
  c.alltoall_calls = 8;
  c.collectives = 11;       // 8 all-to-all-v, 1 counts all-to-all, 2 all-reduces
  c.collective_calls = 11;  // the counts all-to-all a call of its own
  c.allreduce_bytes = 4e5;
  auto const t = model_step(m, c, cost_options{});
  auto const base = model_step(m, one_layer(1, false), cost_options{});
  // all-to-all 1e6 B over 5e9 B/s + 11 collectives * 10 us; ring all-reduce 2 * 3/4 * 4e5 B
  // over the same link.
  EXPECT_NEAR(t.communication, 1e6 / 5e9 + 11e-5 + 6e5 / 5e9, 1e-15);
  // The fixed cost follows the counted collective calls, not the all-to-all-v calls nor the
  // operations: a counts exchange riding with its ids (10 calls, 11 operations) saves 10 us.
  auto c2 = c;
  c2.alltoall_calls = 0;
  EXPECT_NEAR(model_step(m, c2, cost_options{}).communication, t.communication, 1e-15);
  c2.collective_calls = 10;
  EXPECT_NEAR(t.communication - model_step(m, c2, cost_options{}).communication, 1e-5, 1e-15);
  c2.collectives = 2;
  EXPECT_NEAR(t.communication - model_step(m, c2, cost_options{}).communication, 1e-5, 1e-15);
  c2.collective_calls = 2;
  EXPECT_NEAR(t.communication - model_step(m, c2, cost_options{}).communication, 9e-5, 1e-15);
  // sampling: the owner exchange adds 32 B per source (960 B) and 4 kernels.
  EXPECT_NEAR(t.sample - base.sample, 960 / 5e8 + 4e-6, 1e-15);
  // the input layer's feature exchange: two gathers of 16 B per column per source (3840 B).
  EXPECT_NEAR(t.feature_load - base.feature_load, 3840 / 5e8 + 2e-6, 1e-15);
  EXPECT_NEAR(t.forward, base.forward, 1e-15);
}

TEST(CostModel, KernelLaunchesAreTheKernelsTheModelCharges) {
  // one_layer by hand (StagesOfOneLayerByHand): sample 8, feature gather 1, forward 5 (dropout,
  // bias+ReLU, SpMM, two GEMMs), backward 3 (ReLU', two dW), optimizer 1; no kernel for
  // collectives.
  auto const k = model_kernels(one_layer(1, false), cost_options{});
  EXPECT_EQ(k.sample, 8);
  EXPECT_EQ(k.feature_load, 1);
  EXPECT_EQ(k.forward, 5);
  EXPECT_EQ(k.backward, 3);
  EXPECT_EQ(k.communication, 0);
  EXPECT_EQ(k.optimizer, 1);
  // The owner exchange: 4 more sampling kernels per layer, 2 gathers of the feature exchange.
  auto c = one_layer(4, true);
  c.collectives = 11;
  auto const kx = model_kernels(c, cost_options{});
  EXPECT_EQ(kx.sample, 12);
  EXPECT_EQ(kx.feature_load, 3);
  EXPECT_EQ(kx.communication, 0);
  // The launch term of model_step is exactly kernel_launches x kernel_launch_us.
  auto m = round_machine();
  auto const with = model_step(m, c, cost_options{});
  m.kernel_launch_us = 0;
  auto const without = model_step(m, c, cost_options{});
  EXPECT_NEAR(with.total() - without.total(), kx.total() * 1e-6, 1e-15);
}

TEST(CostModel, FeatureBytesScaleTheInputRowsOnly) {
  auto const m = round_machine();
  auto c = one_layer(4, true);
  auto const f32 = model_step(m, c, cost_options{});
  c.feature_row_bytes = 16;  // 8 columns of 2 bytes
  c.feature_element_bytes = 2;
  auto const f16 = model_step(m, c, cost_options{});
  // UVA reads 30 rows of 16 instead of 32 bytes; the exchange's two gathers move 8 instead of 16
  // bytes per column per source (30 sources x 8 columns).
  EXPECT_NEAR(f32.feature_load - f16.feature_load, 480 / 2e9 + 1920 / 5e8, 1e-15);
  EXPECT_DOUBLE_EQ(f16.forward, f32.forward);
  EXPECT_DOUBLE_EQ(f16.sample, f32.sample);
}

TEST(CostModel, DevicePlacementReadsFeaturesFromHbm) {
  auto const m = round_machine();
  cost_options o;
  o.placement = feature_placement::device;
  auto const t = model_step(m, one_layer(1, false), o);
  EXPECT_NEAR(t.feature_load, 2 * 960 / 5e8 + 1e-6, 1e-15);  // read + write, one kernel
}

TEST(CostModel, MeasuredPlusLinksAddsComputeAndBytesOverBandwidth) {
  machine_model m = round_machine();
  m.nvlink_gbps = 100;
  m.nccl_efficiency = 0.5;
  m.pcie_gbps = 10;
  measured_step c;
  c.sample_s = 1.0;
  c.forward_s = 2.0;
  c.backward_s = 3.0;
  c.optimizer_s = 0.5;
  c.feature_bytes = 20e9;    // 20 GB over 10 GB/s = 2 s
  c.alltoall_bytes = 100e9;  // over 100 * 0.5 GB/s = 2 s
  c.allreduce_bytes = 50e9;  // ring with P = 4: 2 * 3/4 * 50 GB = 75 GB over 50 GB/s = 1.5 s
  c.pes = 4;
  auto const p = measured_plus_links(m, c);
  EXPECT_DOUBLE_EQ(p.feature_load, 2.0);
  EXPECT_DOUBLE_EQ(p.communication, 3.5);
  EXPECT_DOUBLE_EQ(p.total(), 1.0 + 2.0 + 3.0 + 2.0 + 3.5 + 0.5);
}

// ---- machine files ----------------------------------------------------------------------------

class MachineFile : public ::testing::Test {
 protected:
  std::filesystem::path write(const std::string& name, const std::string& text) {
    auto const dir = std::filesystem::path(::testing::TempDir()) / "coopgnn_machines";
    std::filesystem::create_directories(dir);
    auto const p = dir / name;
    std::ofstream(p) << text;
    return p;
  }
  /// A valid one-machine file with figure `key`'s line replaced by `line` ("" = removed).
  std::string machine(const std::string& key = "", const std::string& line = "") {
    std::string out =
        "machines:\n  - name: M1\n    gpu: G\n    gpus: 8\n    link: L\n    figures:\n";
    for (auto const& k : machine_figure_keys()) {
      if (k == key) {
        if (!line.empty()) out += "      " + line + "\n";
        continue;
      }
      out += "      " + k + ": {value: 0.5, source: \"s\"}\n";
    }
    return out;
  }
  /// Expects a logic_error whose message holds every one of `parts`.
  void expect_error(const std::filesystem::path& p, std::vector<std::string> parts) {
    try {
      (void)load_machines(p);
      ADD_FAILURE() << "no error for " << p;
    } catch (const logic_error& e) {
      std::string const msg = e.what();
      parts.push_back(p.string());
      for (auto const& s : parts) EXPECT_NE(msg.find(s), std::string::npos) << msg;
    }
  }
};

TEST_F(MachineFile, TheCommittedFileHasThreeDgxWithASourcePerFigure) {
  auto const ms = load_machines(std::filesystem::path(COOPGNN_SOURCE_DIR) / "bench/machines.yaml");
  ASSERT_EQ(ms.size(), 3u);
  EXPECT_EQ(ms[0].name, "DGX-A100");
  EXPECT_EQ(ms[2].name, "DGX-H200");
  EXPECT_DOUBLE_EQ(ms[2].hbm_gbps, 4800);
  EXPECT_DOUBLE_EQ(ms[0].nvlink_gbps, 300);
  EXPECT_DOUBLE_EQ(ms[1].nvlink_gbps, 450);
  for (auto const& m : ms) {
    EXPECT_FALSE(m.gemm_tf32) << m.name << ": the runtime's GEMMs are plain FP32";
    EXPECT_EQ(m.figures.size(), machine_figure_keys().size()) << m.name;
    for (auto const& [k, f] : m.figures) EXPECT_FALSE(f.source.empty()) << m.name << " " << k;
  }
  auto const picked = select_machines(ms, {"DGX-H200", "DGX-A100"});
  ASSERT_EQ(picked.size(), 2u);
  EXPECT_EQ(picked[0].name, "DGX-H200");
  EXPECT_THROW(select_machines(ms, {"DGX-B200"}), logic_error);
}

TEST_F(MachineFile, ParsesAValidFile) {
  auto const ms = load_machines(write("ok.yaml", machine()));
  ASSERT_EQ(ms.size(), 1u);
  EXPECT_EQ(ms[0].name, "M1");
  EXPECT_DOUBLE_EQ(ms[0].pcie_gbps, 0.5);
  EXPECT_EQ(ms[0].file, write("ok.yaml", machine()).string());
}

TEST_F(MachineFile, ErrorsNameTheFileTheMachineAndTheKey) {
  expect_error(write("missing.yaml", machine("pcie_gbps")), {"M1", "figures.pcie_gbps"});
  expect_error(write("nan.yaml", machine("hbm_gbps", "hbm_gbps: {value: fast, source: s}")),
               {"M1", "figures.hbm_gbps.value"});
  expect_error(write("neg.yaml", machine("hbm_gbps", "hbm_gbps: {value: -1, source: s}")),
               {"figures.hbm_gbps.value", "positive"});
  expect_error(
      write("lat.yaml", machine("nccl_latency_us", "nccl_latency_us: {value: -1, source: s}")),
      {"figures.nccl_latency_us.value", "non-negative"});
  expect_error(
      write("frac.yaml", machine("nccl_efficiency", "nccl_efficiency: {value: 1.5, source: s}")),
      {"figures.nccl_efficiency.value", "(0, 1]"});
  expect_error(write("nosrc.yaml", machine("pcie_gbps", "pcie_gbps: {value: 25}")),
               {"figures.pcie_gbps.source"});
  expect_error(write("unknown.yaml", machine() + "      pcie_gbs: {value: 1, source: s}\n"),
               {"figures.pcie_gbs", "unknown"});
  expect_error(write("nolist.yaml", "machine: []\n"), {"machines"});
  expect_error(write("noname.yaml", "machines:\n  - gpu: G\n"), {"machines[0]", "'name'"});
  std::string two = machine();
  two += two.substr(two.find("  - name"));
  expect_error(write("dup.yaml", two), {"machines[1]", "M1"});
}

TEST_F(MachineFile, LatenciesMayBeZero) {
  auto const ms = load_machines(
      write("zero.yaml", machine("kernel_launch_us", "kernel_launch_us: {value: 0, source: s}")));
  EXPECT_DOUBLE_EQ(ms.at(0).kernel_launch_us, 0.0);
}

TEST_F(MachineFile, AnUnreadableFileIsAnIoErrorNamingIt) {
  auto const p = std::filesystem::path(::testing::TempDir()) / "no_such_machines.yaml";
  try {
    (void)load_machines(p);
    ADD_FAILURE() << "no error";
  } catch (const io_error& e) {
    EXPECT_NE(std::string(e.what()).find(p.string()), std::string::npos) << e.what();
  }
  auto const bad = write("bad.yaml", "machines: [ {name: x\n");
  EXPECT_THROW(load_machines(bad), io_error);
}

}  // namespace
}  // namespace coopgnn::bench
