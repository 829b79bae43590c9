// What the command line does with careless input, through the built `coopgnn` binary run as a
// child process (its exit status and its messages are what a script sees):
//   - --dry-run refuses exactly what the run refuses (one check for both);
//   - the dry run's estimate counts every PE's whole learnt-embedding table and --prefetch's
//     prepared batches (numbers worked by hand below);
//   - the memory check sees the address-space limit (ulimit -v) as well as MemAvailable;
//   - every user error, option-parser errors included, exits 1 with "coopgnn: error: ...";
//   - no dataset-writing command writes inside one of its input directories;
//   - partition and split-edges remove repeated edges as train and info do;
//   - an empty --fanouts, --num-bases beyond the relations and bench modes beyond the memory
//     are refused naming the option; bench reports give |E| after deduplication.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "runtime/graph/dataset.hpp"
#include "runtime/graph/npy.hpp"
#include "tests/common/cli.hpp"
#include "tests/common/files.hpp"
#include "tests/tools/binary_run.hpp"

namespace coopgnn {
namespace {

namespace fs = std::filesystem;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

std::string cora() { return std::string(COOPGNN_SOURCE_DIR) + "/data/cora"; }

/// Runs the binary with `args` after the shell words `prefix`; returns everything it printed
/// (stderr merged), and its exit status in `status`.
std::string run_binary(const std::vector<std::string>& args, int& status,
                       const std::string& prefix = "") {
  return test::run_binary_with(prefix, args, status);
}

/// A one-PE host run of Cora (fanouts 2,2, one epoch) with `more` options.
std::vector<std::string> cora_run(const std::vector<std::string>& more) {
  return test::one_pe_train_args(cora(), more);
}

/// The last line of `out` that starts with "coopgnn: error: ".
std::string error_line(const std::string& out) {
  auto const at = out.rfind("coopgnn: error: ");
  if (at == std::string::npos) return {};
  return out.substr(at, out.find('\n', at) - at);
}

/// Cora with every edge stored three times (31668 stored, 10556 distinct) in `dir`.
void write_cora_x3(const fs::path& dir) {
  dataset ds = read_dataset(cora());
  std::size_t const e = ds.src.size();
  for (int copy = 0; copy < 2; ++copy) {
    for (std::size_t i = 0; i < e; ++i) {
      ds.src.push_back(ds.src[i]);
      ds.dst.push_back(ds.dst[i]);
    }
  }
  write_dataset(ds, dir);
}

TEST(CliHoles, DryRunRefusesWhatTheRunRefusesWithTheSameMessage) {
  // Each case: options the run refuses, and what its message says. On the code before the
  // shared check, --dry-run printed its estimate and exited 0 for the first three.
  struct usecase {
    std::vector<std::string> options;
    std::string says;
  };
  std::vector<usecase> const cases = {
      // Cora has 140 training vertices.
      {{"--drop-last", "--batch-size", "100000"},
       "--drop-last with --batch-size 100000 above the 140 training vertices"},
      {{"--checkpoint-every", "0"}, "--checkpoint-every 0 must be at least 1"},
      {{"--embedding-dim", "8", "--cache-policy", "lru", "--cache-rows", "10"},
       "--cache-policy lru: there is no feature table to cache with --embedding-dim"},
      {{"--model", "rgcn", "--num-bases", "2"}, "--num-bases 2"},
  };
  for (const usecase& u : cases) {
    int run_status = 0, dry_status = 0;
    std::string const run = run_binary(cora_run(u.options), run_status);
    std::vector<std::string> dry_options = u.options;
    dry_options.push_back("--dry-run");
    std::string const dry = run_binary(cora_run(dry_options), dry_status);
    EXPECT_EQ(run_status, 1) << run;
    EXPECT_EQ(dry_status, 1) << dry;
    EXPECT_THAT(error_line(run), HasSubstr(u.says)) << run;
    EXPECT_EQ(error_line(dry), error_line(run)) << dry;
  }
}

TEST(CliHoles, DryRunEstimateHoldsEveryEmbeddingRowOnEveryPeAndThePrefetchedBatches) {
  int status = 0;
  // Cooperative, P = 4, --embedding-dim 16: every PE holds all 2708 rows x 16 columns x 12 bytes
  // (value and Adam's two moments) = 519936 bytes = 507.75 KiB (not its quarter, 126.94 KiB).
  std::string out =
      run_binary({"train", "--dataset", cora(), "--backend", "host", "--pes", "4", "--mode",
                  "cooperative", "--fanouts", "2,2", "--embedding-dim", "16", "--dry-run"},
                 status);
  EXPECT_EQ(status, 0) << out;
  EXPECT_THAT(out, HasSubstr("embeddings 507.75 KiB"));
  // One PE, one layer of fanout 0, --hidden 16, batch 140 (Cora's 140 training vertices):
  // the layer's block 140 sources x 16 bytes = 2240, its output, cache and gradient
  // 140 x 16 x 4 x 3 = 26880, the input rows and their dropout copy 140 x 1433 x 4 x 2 = 1604960:
  // 1634080 bytes = 1.56 MiB per prepared batch; --prefetch 2 holds 3 of them, 4902240 bytes =
  // 4.68 MiB.
  for (std::string const depth : {"0", "2"}) {
    out =
        run_binary({"train", "--dataset", cora(), "--backend", "host", "--pes", "1", "--fanouts",
                    "0", "--hidden", "16", "--batch-size", "140", "--prefetch", depth, "--dry-run"},
                   status);
    EXPECT_EQ(status, 0) << out;
    if (depth == "0") {
      EXPECT_THAT(out, HasSubstr("one minibatch 1.56 MiB (<= 140 input rows) = ")) << out;
    } else {
      EXPECT_THAT(out, HasSubstr("one minibatch 1.56 MiB (<= 140 input rows) x 3 prepared "
                                 "(--prefetch 2) = 4.68 MiB"))
          << out;
    }
  }
}

// AddressSanitizer reserves terabytes of shadow address space: under it (the debug preset) the
// binary cannot start below an address-space limit.
TEST(CliHoles, InfoRefusesAClassCountBeyondTheAddressSpaceLimit) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "an address-space limit cannot be combined with AddressSanitizer";
#else
  test::temp_dir tmp;
  fs::copy(cora(), tmp / "nc", fs::copy_options::recursive);
  std::string meta = test::read_text(tmp / "nc" / "metadata.yaml");
  auto const at = meta.find("num_classes: 7");
  ASSERT_NE(at, std::string::npos);
  meta.replace(at, std::string("num_classes: 7").size(), "num_classes: 500000000");
  test::write_text(tmp / "nc" / "metadata.yaml", meta);
  int status = 0;
  // 4 GB of address space (about 1.2 GB of it mapped at start) and no COOPGNN_MEMORY_LIMIT: the
  // class counts of 5e8 classes (4 GB) fit MemAvailable but not what the limit leaves. Before,
  // this ended in std::bad_alloc.
  std::string const out = run_binary({"info", (tmp / "nc").string()}, status,
                                     "ulimit -v 4000000; env -u COOPGNN_MEMORY_LIMIT ");
  EXPECT_EQ(status, 1) << out;
  EXPECT_THAT(out, AllOf(HasSubstr("tasks[0].num_classes"), HasSubstr("RLIMIT_AS")));
  EXPECT_THAT(out, Not(HasSubstr("bad_alloc")));
#endif
}

TEST(CliHoles, EveryUserErrorExitsOneWithTheLoggersForm) {
  int status = 0;
  // CLI11's own errors (an unknown option, a value that does not convert): before, they exited
  // 105 and 106 (CLI11's codes) without the prefix.
  for (auto const& args :
       {std::vector<std::string>{"train", "--no-such-option"},
        std::vector<std::string>{"train", "--pes", "abc"}, std::vector<std::string>{"info"}}) {
    std::string const out = run_binary(args, status);
    EXPECT_EQ(status, 1) << args[1] << ": " << out;
    EXPECT_THAT(out, StartsWith("coopgnn: error: ")) << out;
  }
  std::string out = run_binary({"train", "--help"}, status);
  EXPECT_EQ(status, 0) << out;
  EXPECT_THAT(out, HasSubstr("--fanouts"));
  out = run_binary({"--version"}, status);
  EXPECT_EQ(status, 0) << out;
  // An error of coopgnn's own checks: 1 as before.
  out = run_binary(cora_run({"--pes", "0"}), status);
  EXPECT_EQ(status, 1) << out;
  EXPECT_THAT(out, HasSubstr("coopgnn: error: "));
}

TEST(CliHoles, NoDatasetCommandWritesInsideAnInputDirectory) {
  test::temp_dir tmp;
  fs::copy(cora(), tmp / "in", fs::copy_options::recursive);
  // convert reads a raw dataset: Cora in OGB's CSV layout.
  fs::copy(std::string(COOPGNN_SOURCE_DIR) + "/tests/data/raw/cora", tmp / "raw",
           fs::copy_options::recursive);
  std::string const in = (tmp / "in").string();
  std::string const sub = (tmp / "in" / "sub").string();
  // Each ran to the end before (rc 0) and wrote into its input's directory.
  for (auto const& args :
       {std::vector<std::string>{"generate", "task", in, sub, "--seed", "1", "--classes", "3",
                                 "--feature-dim", "4"},
        std::vector<std::string>{"split-edges", in, sub, "--seed", "1"},
        std::vector<std::string>{"partition", in, sub, "--parts", "2", "--scheme", "random"},
        std::vector<std::string>{"convert", (tmp / "raw").string(),
                                 (tmp / "raw" / "sub").string()}}) {
    int status = 0;
    std::string const out = run_binary(args, status);
    EXPECT_EQ(status, 1) << args[0] << ": " << out;
    EXPECT_THAT(out, HasSubstr("lies inside the input directory")) << args[0] << ": " << out;
    EXPECT_FALSE(fs::exists(tmp / "in" / "sub")) << args[0];
    EXPECT_FALSE(fs::exists(tmp / "raw" / "sub")) << args[0];
  }
}

TEST(CliHoles, PartitionAndSplitEdgesRemoveRepeatedEdgesAsTrainDoes) {
  test::temp_dir tmp;
  write_cora_x3(tmp / "x3");
  int status = 0;
  // partition: its training edges are Cora's 10556 distinct edges (before: 31668, as stored).
  std::string out = run_binary({"partition", (tmp / "x3").string(), (tmp / "p").string(), "--parts",
                                "2", "--scheme", "random"},
                               status);
  ASSERT_EQ(status, 0) << out;
  EXPECT_THAT(out, HasSubstr("21112 of its 31668 stored edges repeat"));
  EXPECT_THAT(out, HasSubstr("training edges: 10556"));
  auto const summary = nlohmann::json::parse(test::read_text(tmp / "p" / "summary.json"));
  EXPECT_EQ(summary["total_edges"], 10556);
  // split-edges: the training graph holds each remaining edge once. Cora is symmetric: 5278
  // pairs; --fractions 0.8,0.1,0.1 holds out round(0.1 x 5278) = 528 pairs twice (validation,
  // test), each pair's two arcs: 10556 - 4 x 528 = 8444 arcs stay (before: 3 x 8444 = 25332).
  out = run_binary({"split-edges", (tmp / "x3").string(), (tmp / "s").string(), "--seed", "1",
                    "--fractions", "0.8,0.1,0.1"},
                   status);
  ASSERT_EQ(status, 0) << out;
  EXPECT_THAT(out, HasSubstr("21112 of its 31668 stored edges repeat"));
  dataset const s = read_dataset((tmp / "s").string());
  EXPECT_EQ(s.num_edges(), 8444);
}

TEST(CliHoles, EmptyFanoutsAndBasesBeyondTheRelationsAreRefusedNamingTheOption) {
  int status = 0;
  // Before: --fanouts "" trained one layer of fanout 0 (rc 0).
  std::string out = run_binary(cora_run({"--fanouts", ""}), status);
  EXPECT_EQ(status, 1) << out;
  EXPECT_THAT(error_line(out), HasSubstr("--fanouts"));
  // Untyped Cora has one relation: 5 bases are 5 x the weights of the full decomposition
  // (before: accepted and trained).
  out = run_binary(cora_run({"--model", "rgcn", "--num-bases", "5"}), status);
  EXPECT_EQ(status, 1) << out;
  EXPECT_THAT(error_line(out), HasSubstr("--num-bases 5 exceeds the 1 relation"));
  // --num-blocks must divide every width: 2147483647 divides none of 1433, 16 and 7.
  out = run_binary(cora_run({"--model", "rgcn", "--num-blocks", "2147483647"}), status);
  EXPECT_EQ(status, 1) << out;
  EXPECT_THAT(error_line(out), HasSubstr("--num-blocks 2147483647"));
}

TEST(CliHoles, BenchModesChecksTheRunSizesAndItsReportCountsDistinctEdges) {
  test::temp_dir tmp;
  int status = 0;
  // --hidden 2000000: 1 PE x 5762000007 parameters x 16 bytes = 92192000112 bytes (the model
  // of RunSizes.DryRunPrintsTheEstimateFromShapesThenNamesHidden) against a 4 GB limit. Before:
  // the trainer allocated it (bad_alloc under the address-space limit).
  std::string out = run_binary({"bench", "modes", "--dataset", cora(), "--pes", "1", "--fanouts",
                                "2,2", "--batch-size", "64", "--batches", "1", "--warmup", "0",
                                "--hidden", "2000000", "--out", (tmp / "big").string()},
                               status, "COOPGNN_MEMORY_LIMIT=4000000000 ");
  EXPECT_EQ(status, 1) << out;
  EXPECT_THAT(out, HasSubstr("--hidden 2000000: the run needs 92192000112 bytes"));
  EXPECT_THAT(out, Not(HasSubstr("bad_alloc")));
  // The report of a run on Cora stored three times gives the 10556 distinct edges.
  write_cora_x3(tmp / "x3");
  out = run_binary({"bench", "modes", "--dataset", (tmp / "x3").string(), "--pes", "1", "--fanouts",
                    "2,2", "--batch-size", "64", "--batches", "1", "--warmup", "0", "--hidden", "8",
                    "--out", (tmp / "res").string()},
                   status);
  ASSERT_EQ(status, 0) << out;
  out = run_binary({"report", (tmp / "res").string(), "--no-plots"}, status);
  ASSERT_EQ(status, 0) << out;
  std::string const md = test::read_text(tmp / "res" / "report.md");
  EXPECT_THAT(md, HasSubstr("|E| = 10556 (directed, repeats removed; 31668 stored)")) << md;
}

}  // namespace
}  // namespace coopgnn
