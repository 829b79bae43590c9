// Sizes are checked before anything of that size is allocated, and the graph's size is the one
// trained: the built `coopgnn` binary, run as a child under `ulimit -v` (so that a run that does
// allocate fails at once with bad_alloc instead of paging) and COOPGNN_MEMORY_LIMIT (so that the
// refusal does not depend on this machine's memory):
//   - train --hidden 2000000 --dry-run prints its estimate (the parameter count from the
//     model's shapes) and then the error naming --hidden with the bytes;
//   - --hidden, --embedding-dim, --negatives, and a metadata.yaml num_classes end in an error
//     naming the option (or the file and field), never "unexpected error: std::bad_alloc";
//   - a saved model whose manifest asks for more parameters than its tensors hold is refused
//     before a model of the manifest's size exists;
//   - on a dataset that stores every edge three times, `train` and `info` print |E| and the
//     maximum in-degree of the graph trained (repeats removed) and say how many were removed.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "runtime/graph/dataset.hpp"
#include "tests/common/cli.hpp"
#include "tests/common/files.hpp"
#include "tests/tools/binary_run.hpp"

namespace coopgnn {
namespace {

namespace fs = std::filesystem;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

std::string cora() { return std::string(COOPGNN_SOURCE_DIR) + "/data/cora"; }

// AddressSanitizer reserves terabytes of shadow address space: under it (the debug preset) the
// binary cannot start below an address-space limit, and only COOPGNN_MEMORY_LIMIT bounds it.
#if defined(__SANITIZE_ADDRESS__)
constexpr const char* kAddressLimit = "";
#else
constexpr const char* kAddressLimit = "ulimit -v 8000000; ";
#endif

/// Runs the binary with `args` under an 8 GB address-space limit (not under AddressSanitizer)
/// and a 4 GB COOPGNN_MEMORY_LIMIT; returns everything it printed, and its exit status in
/// `status`.
std::string run_binary(const std::vector<std::string>& args, int& status) {
  return test::run_binary_with(std::string(kAddressLimit) + "COOPGNN_MEMORY_LIMIT=4000000000 ",
                               args, status);
}

/// A one-PE host run of Cora (2 layers) with `more` options.
std::vector<std::string> cora_run(const std::vector<std::string>& more,
                                  const std::string& dataset = cora()) {
  return test::one_pe_train_args(dataset, more);
}

TEST(RunSizes, DryRunPrintsTheEstimateFromShapesThenNamesHidden) {
  int status = 0;
  std::string const out = run_binary(cora_run({"--hidden", "2000000", "--dry-run"}), status);
  EXPECT_NE(status, 0) << out;
  // GraphSAGE, 2 layers, 1433 -> 2000000 -> 7: 2 x 1433 x 2e6 + 2e6 (layer 0's weights and
  // bias) + 2 x 2e6 x 7 + 7 (layer 1's).
  EXPECT_THAT(out, HasSubstr("(5762000007 parameters)"));
  // One PE: one replica at 16 bytes a parameter, 5762000007 x 16.
  EXPECT_THAT(out, AllOf(HasSubstr("--hidden 2000000: the run needs 92192000112 bytes"),
                         HasSubstr("of memory are available (COOPGNN_MEMORY_LIMIT")));
  EXPECT_THAT(out, Not(HasSubstr("bad_alloc")));
}

TEST(RunSizes, HiddenBeyondTheMemoryIsRefusedBeforeTheModelExists) {
  int status = 0;
  std::string const out = run_binary(cora_run({"--hidden", "2000000"}), status);
  EXPECT_NE(status, 0) << out;
  EXPECT_THAT(out, HasSubstr("--hidden 2000000: the run needs 92192000112 bytes"));
  EXPECT_THAT(out, Not(HasSubstr("bad_alloc")));
}

TEST(RunSizes, EmbeddingDimBeyondTheMemoryIsRefusedNamingIt) {
  int status = 0;
  std::string const out =
      run_binary(cora_run({"--hidden", "8", "--embedding-dim", "10000000"}), status);
  EXPECT_NE(status, 0) << out;
  // Learnt rows 2708 x 1e7 x 12 bytes = 324960000000, plus the model 2 x 1e7 x 8 + 8 + 2 x 8 x 7
  // + 7 = 160000127 parameters x 16 = 2560002032 bytes.
  EXPECT_THAT(out, AllOf(HasSubstr("--embedding-dim 10000000: the run needs 327520002032 bytes"),
                         HasSubstr("2708 rows x 10000000 columns")));
  EXPECT_THAT(out, Not(HasSubstr("bad_alloc")));
}

TEST(RunSizes, NegativesAreBoundedByTheCandidateTailsAndTheFileFieldNamesTheClasses) {
  test::temp_dir tmp;
  // Link prediction: Cora split (2708 vertices, every one a candidate tail).
  test::run_data_cli({"split-edges", cora(), (tmp / "lp").string(), "--seed", "1"});
  int status = 0;
  std::string out = run_binary(
      cora_run({"--task", "link_prediction", "--negatives", "1000000000"}, (tmp / "lp").string()),
      status);
  EXPECT_NE(status, 0) << out;
  EXPECT_THAT(out, HasSubstr("--negatives 1000000000 exceeds the 2708 candidate tails of "
                             "dataset 'cora' (its vertices)"));
  EXPECT_THAT(out, Not(HasSubstr("bad_alloc")));
  // num_classes: 1e11 in metadata.yaml is refused by `train` and `info` naming the file and
  // field; 2e9 fits int32 but its per-class counts (16 GB) exceed the 4 GB limit.
  fs::copy(cora(), tmp / "nc", fs::copy_options::recursive);
  std::string const meta = test::read_text(tmp / "nc" / "metadata.yaml");
  auto const at = meta.find("num_classes: 7");
  ASSERT_NE(at, std::string::npos);
  for (std::string const classes : {"100000000000", "2000000000"}) {
    std::string m = meta;
    m.replace(at, std::string("num_classes: 7").size(), "num_classes: " + classes);
    test::write_text(tmp / "nc" / "metadata.yaml", m);
    for (auto const& args : {cora_run({}, (tmp / "nc").string()),
                             std::vector<std::string>{"info", (tmp / "nc").string()}}) {
      out = run_binary(args, status);
      EXPECT_NE(status, 0) << args[0] << " " << classes << ": " << out;
      EXPECT_THAT(out, AllOf(HasSubstr("metadata.yaml"), HasSubstr("tasks[0].num_classes")))
          << args[0] << " " << classes;
      EXPECT_THAT(out, Not(HasSubstr("bad_alloc"))) << args[0] << " " << classes;
    }
  }
}

TEST(RunSizes, ASavedModelWhoseManifestWidthsExceedItsTensorsIsRefusedBeforeBuilding) {
  test::temp_dir tmp;
  EXPECT_EQ(test::run_train_cli(
                test::tiny_run_args("train", "8", "1", {"--save-model", (tmp / "m").string()})),
            "");
  std::string manifest = test::read_text(tmp / "m" / "manifest.json");
  auto j = nlohmann::json::parse(manifest);
  ASSERT_EQ(j["model"]["hidden"], 8);
  j["model"]["hidden"] = 2000000;
  test::write_text(tmp / "m" / "manifest.json", j.dump(2));
  int status = 0;
  std::string const out = run_binary({"predict", "--model", (tmp / "m").string(), "--dataset",
                                      cora(), "--out", (tmp / "p.npy").string()},
                                     status);
  EXPECT_NE(status, 0) << out;
  // The tensors hold the hidden-8 model's 2 x 1433 x 8 + 8 + 2 x 8 x 7 + 7 = 23055 values.
  EXPECT_THAT(out, HasSubstr("23055 parameters, the model configuration has 5762000007"));
  EXPECT_THAT(out, Not(HasSubstr("bad_alloc")));
}

TEST(RunSizes, TrainAndInfoCountEdgesAndDegreesWithoutRepeats) {
  test::temp_dir tmp;
  // Cora with every edge stored three times: 3 x 10556 = 31668 stored, 10556 distinct (Cora
  // has no repeated edge), largest in-degree 168.
  dataset ds = read_dataset(cora());
  std::size_t const e = ds.src.size();
  ASSERT_EQ(e, 10556u);
  for (int copy = 0; copy < 2; ++copy) {
    for (std::size_t i = 0; i < e; ++i) {
      ds.src.push_back(ds.src[i]);
      ds.dst.push_back(ds.dst[i]);
    }
  }
  write_dataset(ds, tmp / "x3");
  int status = 0;
  std::string out = run_binary({"info", (tmp / "x3").string(), "--json"}, status);
  ASSERT_EQ(status, 0) << out;
  auto const j = nlohmann::json::parse(out.substr(out.find('{')));
  EXPECT_EQ(j["num_edges"], 10556);
  EXPECT_EQ(j["num_edges_stored"], 31668);
  EXPECT_EQ(j["duplicate_edges_removed"], 21112);
  EXPECT_EQ(j["in_degree"]["max"], 168);
  out = run_binary({"info", (tmp / "x3").string()}, status);
  EXPECT_THAT(out, HasSubstr("10556 (directed; 21112 repeated edges of the 31668 stored removed"));
  out = run_binary({"train", "--dataset", (tmp / "x3").string(), "--backend", "host", "--pes", "1",
                    "--epochs", "0", "--no-progress"},
                   status);
  EXPECT_EQ(status, 0) << out;
  EXPECT_THAT(out, HasSubstr("|E| 10556 (max in-degree 168)"));
  EXPECT_THAT(out, HasSubstr("21112 of its 31668 stored edges repeat"));
}

}  // namespace
}  // namespace coopgnn
