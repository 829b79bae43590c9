// `coopgnn report` (bench/drivers/report.hpp): renders hand-written work and modes result files
// (docs/results-schema.md) and the tables carry the numbers given; plotting degrades to a note.
#include "bench/drivers/report.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "runtime/core/error.hpp"
#include "tests/common/files.hpp"
#include "tools/coopgnn/commands.hpp"

namespace coopgnn {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// A work file: sampler ns, B in {64, 128}, one layer plus the total; one failing check.
constexpr const char* kWork = R"json({
  "bench": "work", "dataset": "tiny", "dataset_dir": "/data/tiny", "num_nodes": 1000,
  "num_edges": 8000, "command": "coopgnn bench work --dataset /data/tiny --fanouts 5",
  "created": "2025-01-02T03:04:05Z",
  "host": {"backend": "host", "device": "Test CPU", "threads": 2},
  "fanouts": [5], "repeats": 3, "seed": 7, "batch_sizes": [64, 128], "samplers": ["ns"],
  "tolerance": 0.01,
  "rows": [
    {"sampler": "ns", "batch_size": 64, "layer": 0, "vertices": 300, "edges": 320,
     "vertices_per_seed": 4.6875, "edges_per_seed": 5.0},
    {"sampler": "ns", "batch_size": 64, "layer": -1, "vertices": 300, "edges": 320,
     "vertices_per_seed": 4.6875, "edges_per_seed": 5.0},
    {"sampler": "ns", "batch_size": 128, "layer": 0, "vertices": 520, "edges": 640,
     "vertices_per_seed": 4.0626, "edges_per_seed": 5.0},
    {"sampler": "ns", "batch_size": 128, "layer": -1, "vertices": 520, "edges": 640,
     "vertices_per_seed": 4.0626, "edges_per_seed": 5.0}],
  "checks": [
    {"sampler": "ns", "check": "work_per_seed_nonincreasing", "quantity": "vertices",
     "batch_size": 128, "pes": 1, "lhs": 4.0625, "rhs": 4.6875, "pass": true},
    {"sampler": "ns", "check": "work_per_seed_nonincreasing", "quantity": "edges",
     "batch_size": 128, "pes": 1, "lhs": 5.25, "rhs": 5.0, "pass": false},
    {"sampler": "ns", "check": "P*W(B/P)>=W(B)", "quantity": "edges", "batch_size": 128,
     "pes": 2, "lhs": 700, "rhs": 640, "pass": true},
    {"sampler": "ns", "check": "P*W(B/P)>=W(B)", "quantity": "vertices", "batch_size": 128,
     "pes": 2, "lhs": 650, "rhs": 520, "pass": true}]
})json";

// A modes file per the schema: P = 2, cooperative and independent.
constexpr const char* kModes = R"json({
  "bench": "modes", "dataset": "tiny", "dataset_dir": "/data/tiny", "num_nodes": 1000,
  "num_edges": 8000, "command": "coopgnn bench modes --dataset /data/tiny --pes 2",
  "created": "2025-01-02T04:00:00Z",
  "host": {"backend": "host", "device": "Test CPU", "threads": 2},
  "fanouts": [5, 5], "sampler": "labor", "batch_size": 256, "batches": 4, "warmup": 1,
  "hidden": 32, "model": "sage",
  "rows": [
    {"mode": "independent", "pes": 2,
     "seconds_per_batch": {"sample": 0.0312, "feature_load": 0.02, "forward": 0.03,
                           "backward": 0.03, "communication": 0.004, "optimizer": 0.001,
                           "total": 0.1162},
     "work_per_batch": {"seeds": 256, "sampled_edges": 5120, "sampled_vertices": 3000,
                        "feature_rows": 1800, "feature_bytes": 2097152, "alltoall_bytes": 0,
                        "allreduce_bytes": 4096},
     "alltoall_bytes_per_batch": [],
     "imbalance": {"seeds": 1.0, "sampled_edges": 1.07, "feature_rows": 1.03},
     "peak_bytes_per_pe": {"max": 3145728, "mean": 2097152, "alltoall_buffers_max": 0},
     "modelled": [{"machine": "DGX-H100", "kind": "modelled",
                   "seconds_per_batch": {"sample": 0.0031, "feature_load": 0.002,
                                         "forward": 0.003, "backward": 0.003,
                                         "communication": 0.0001, "optimizer": 0.0001,
                                         "total": 0.0113}}]},
    {"mode": "cooperative", "pes": 2,
     "seconds_per_batch": {"sample": 0.0251, "feature_load": 0.015, "forward": 0.025,
                           "backward": 0.025, "communication": 0.009, "optimizer": 0.001,
                           "total": 0.1001},
     "work_per_batch": {"seeds": 256, "sampled_edges": 4096, "sampled_vertices": 2500,
                        "feature_rows": 1500, "feature_bytes": 1572864,
                        "alltoall_bytes": 65536, "allreduce_bytes": 4096},
     "alltoall_bytes_per_batch": [{"layer": 0, "direction": "ids", "bytes": 1024},
                                  {"layer": 0, "direction": "forward", "bytes": 3072},
                                  {"layer": 0, "direction": "backward", "bytes": 3072},
                                  {"layer": 1, "direction": "features", "bytes": 1536}],
     "imbalance": {"seeds": 1.02, "sampled_edges": 1.05, "feature_rows": 1.04},
     "peak_bytes_per_pe": {"max": 2621440, "mean": 1048576, "alltoall_buffers_max": 524288},
     "modelled": [{"machine": "DGX-H100", "kind": "modelled",
                   "seconds_per_batch": {"sample": 0.0025, "feature_load": 0.0015,
                                         "forward": 0.0025, "backward": 0.0025,
                                         "communication": 0.0004, "optimizer": 0.0001,
                                         "total": 0.0100}}]}],
  "cost_model": {"feature_placement": "uva", "machine_file": "bench/machines.yaml",
                 "machines": [{"name": "DGX-H100", "gpu": "H100", "gpus": 8, "link": "NVLink4",
                               "gemm_math": "fp32",
                               "figures": {"hbm_gbps": {"value": 3350, "source": "datasheet",
                                                        "assumption": false},
                                           "pcie_gbps": {"value": 55, "source": "guess",
                                                         "assumption": true}}}]}
})json";

void write_inputs(const test::temp_dir& d) {
  test::write_text(d / "work_tiny.json", kWork);
  test::write_text(d / "modes_tiny.json", kModes);
  test::write_text(d / "other.json", R"({"not": "a result"})");  // no "bench": skipped
  test::write_text(d / "broken.json", "{ truncated");            // does not parse: skipped
}

TEST(Report, TablesCarryTheNumbersOfTheFiles) {
  test::temp_dir d;
  write_inputs(d);
  bench::report_options o;
  o.title = "Tiny results";
  o.plots = false;
  auto const r = bench::write_report(d.path(), o);
  EXPECT_EQ(r.files.size(), 2u);
  EXPECT_TRUE(r.plots.empty());
  std::string const md = test::read_text(d / "report.md");
  EXPECT_THAT(md, HasSubstr("# Tiny results\n"));
  EXPECT_THAT(md, HasSubstr("## Dataset tiny"));
  EXPECT_THAT(md, HasSubstr("disabled (--no-plots)"));
  EXPECT_THAT(md, Not(HasSubstr("![")));

  // work: per-seed totals, redundancy ratios (700/640, 650/520), checks with the failure.
  EXPECT_THAT(md, HasSubstr("| B | ns vertices/seed | ns edges/seed |"));
  EXPECT_THAT(md, HasSubstr("| 64 | 4.688 | 5 |"));
  EXPECT_THAT(md, HasSubstr("| 128 | 4.063 | 5 |"));
  EXPECT_THAT(md, HasSubstr("| ns | 128 | 1.250 | 1.094 |"));
  EXPECT_THAT(md, HasSubstr("| ns | work_per_seed_nonincreasing | edges | - | 0/1 | 1.0500 | "
                            "**FAIL** |"));
  EXPECT_THAT(md, HasSubstr("| ns | work_per_seed_nonincreasing | vertices | - | 1/1 | 0.8667 | "
                            "pass |"));
  EXPECT_THAT(md, HasSubstr("| ns | P*W(B/P)>=W(B) | edges | 2 | 1/1 | 1.0938 | pass |"));
  EXPECT_THAT(md, HasSubstr("| ns | work_per_seed_nonincreasing | edges | 128 | 1 | 5.25 | 5 |"));
  EXPECT_THAT(md, HasSubstr("tolerance of 1%"));

  // modes: stage seconds, work, bytes, all-to-all per layer/direction, imbalance, peak, ratios.
  EXPECT_THAT(md, HasSubstr("| 2 | cooperative | 0.0251 | 0.015 | 0.025 | 0.025 | 0.009 | "
                            "0.001 | 0.1001 |"));
  EXPECT_THAT(md, HasSubstr("| 2 | independent | 0.0312 | 0.02 | 0.03 | 0.03 | 0.004 | 0.001 | "
                            "0.1162 |"));
  EXPECT_THAT(md, HasSubstr("| 2 | independent | 256 | 5120 | 3000 | 1800 | 2.00 MiB | 0 B | "
                            "4.00 KiB |"));
  EXPECT_THAT(md, HasSubstr("| 2 | cooperative | 0 | 1.00 KiB | - | 3.00 KiB | 3.00 KiB |"));
  EXPECT_THAT(md, HasSubstr("| 2 | cooperative | 1 | - | 1.50 KiB | - | - |"));
  EXPECT_THAT(md, HasSubstr("| 2 | cooperative | 1.02 | 1.05 | 1.04 | 2.50 MiB | 1.00 MiB | "
                            "512.00 KiB |"));
  EXPECT_THAT(md, HasSubstr("| 2 | 1.161 | 1.250 | 1.200 | 1.200 |"));  // indep / coop
  // modelled DGX times, labelled, their speedup (0.0113 / 0.0100) and the machine figures;
  // no GPU run, so the model is reported unvalidated.
  EXPECT_THAT(md, HasSubstr("MODELLED, not measured"));
  EXPECT_THAT(md, HasSubstr("| DGX-H100 | 2 | cooperative | 0.0025 | 0.0015 | 0.0025 | 0.0025 "
                            "| 0.0004 | 0.0001 | 0.01 |"));
  EXPECT_THAT(md, HasSubstr("| 2 | 1.13x |"));
  EXPECT_THAT(md, HasSubstr("| modes_tiny.json | labor | 256 | hidden 32, kappa 1, no cache, "
                            "GEMM fp32, features 4 B/elem (older model: counts all-to-alls not "
                            "charged) | DGX-H100 | 1.13x |"));
  EXPECT_THAT(md, HasSubstr("| hbm_gbps | 3350 |"));
  EXPECT_THAT(md, HasSubstr("| pcie_gbps | 55 (assumption) |"));
  EXPECT_THAT(md, HasSubstr("model is UNVALIDATED"));
  EXPECT_THAT(md, Not(HasSubstr("MEASURED COMPUTE + MODELLED LINKS")));

  // provenance
  EXPECT_THAT(md, HasSubstr("coopgnn bench work --dataset /data/tiny --fanouts 5"));
  EXPECT_THAT(md, HasSubstr("coopgnn bench modes --dataset /data/tiny --pes 2"));
  EXPECT_THAT(md, HasSubstr("created 2025-01-02T03:04:05Z"));
}

TEST(Report, PlotsSkippedWithoutInterpreterAndDataWritten) {
  test::temp_dir d;
  write_inputs(d);
  bench::report_options o;
  o.python = {"/nonexistent/python3"};
  auto const r = bench::write_report(d.path(), o);
  EXPECT_TRUE(r.plots.empty());
  EXPECT_THAT(r.plot_note, HasSubstr("skipped"));
  std::string const md = test::read_text(d / "report.md");
  EXPECT_THAT(md, HasSubstr("skipped: no Python interpreter with matplotlib"));
  EXPECT_THAT(md, HasSubstr("| 64 | 4.688 | 5 |"));  // tables still there

  auto const spec = nlohmann::json::parse(test::read_text(d / "plots" / "plots.json"));
  std::vector<std::string> outs;
  for (auto const& p : spec["plots"]) outs.push_back(p["out"]);
  EXPECT_EQ(outs, (std::vector<std::string>{"modes_tiny_modelled_speedup.png",
                                            "modes_tiny_stages.png", "modes_tiny_work.png",
                                            "work_tiny_per_seed.png", "work_tiny_redundancy.png"}));
  EXPECT_THAT(test::read_text(d / "plots" / "modes_tiny_modelled_speedup.csv"),
              HasSubstr("DGX-H100,2,1.13"));
  EXPECT_THAT(test::read_text(d / "plots" / "work_tiny_per_seed.csv"),
              HasSubstr("ns,-1,total,128,4.0626,5\n"));
  EXPECT_THAT(test::read_text(d / "plots" / "modes_tiny_work.csv"),
              HasSubstr("2,P=2,cooperative,1500,4096\n"));
}

TEST(Report, MalformedResultFilesNameFileAndKey) {
  test::temp_dir d;
  test::write_text(d / "work_x.json", R"({"bench": "work", "dataset": "x", "rows": []})");
  bench::report_options o;
  o.plots = false;
  EXPECT_THAT(test::error_of([&] { bench::write_report(d.path(), o); }),
              HasSubstr("work_x.json: missing key \"checks\""));
  test::write_text(d / "work_x.json",
                   R"({"bench": "work", "dataset": "x", "checks": [], "rows": [{"layer": 0}]})");
  EXPECT_THAT(test::error_of([&] { bench::write_report(d.path(), o); }),
              HasSubstr("work_x.json: missing key \"sampler\" in rows"));
  test::write_text(d / "work_x.json", R"({"bench": "speed", "dataset": "x", "rows": []})");
  EXPECT_THAT(test::error_of([&] { bench::write_report(d.path(), o); }),
              HasSubstr("unknown bench \"speed\""));

  test::temp_dir empty;
  EXPECT_THAT(test::error_of([&] { bench::write_report(empty.path(), o); }),
              HasSubstr("no result files"));
  EXPECT_THAT(test::error_of([&] { bench::write_report(empty / "missing", o); }),
              HasSubstr("not a readable directory"));
}

TEST(Report, CommandLine) {
  test::temp_dir d;
  write_inputs(d);
  CLI::App app{"test"};
  app.require_subcommand(1);
  cli::add_report_command(app);
  std::vector<std::string> args = {"report", d.path().string(), "--title", "From CLI",
                                   "--no-plots"};
  std::reverse(args.begin(), args.end());
  app.parse(args);
  EXPECT_THAT(test::read_text(d / "report.md"), HasSubstr("# From CLI\n"));
}

}  // namespace
}  // namespace coopgnn
