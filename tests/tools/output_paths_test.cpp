// Output directories of the dataset-writing commands (tools/coopgnn/output_paths.hpp): an output
// that is (or holds) the input is refused whatever the spelling (relative, "..", symbolic link),
// a non-empty output needs --overwrite, and the new output replaces the old one only when it is
// complete (a failure leaves the old one as it was, and no temporary behind).
#include "tools/coopgnn/output_paths.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "runtime/core/error.hpp"
#include "runtime/graph/dataset.hpp"
#include "tests/common/cli.hpp"
#include "tests/common/files.hpp"
#include "tools/coopgnn/commands.hpp"

namespace coopgnn {
namespace {

using test::error_of;
using test::read_text;
using test::run_data_cli;
using test::temp_dir;
using test::write_text;
using ::testing::AllOf;
using ::testing::HasSubstr;

namespace fs = std::filesystem;

/// Every regular file under `dir` by relative path, with its bytes.
std::map<std::string, std::string> snapshot(const fs::path& dir) {
  std::map<std::string, std::string> m;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (e.is_regular_file()) m[fs::relative(e.path(), dir).string()] = read_text(e.path());
  }
  return m;
}

/// The entries of `dir` whose names start with '.' (temporaries of write_dir_atomically).
std::vector<std::string> hidden_entries(const fs::path& dir) {
  std::vector<std::string> v;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().filename().string().front() == '.') v.push_back(e.path().filename().string());
  }
  return v;
}

/// A small node-classification dataset at `dir` (generate sbm: 60 vertices, 3 classes).
void make_dataset(const fs::path& dir, const char* seed = "1") {
  run_data_cli({"generate", "sbm", dir.string(), "--nodes", "60", "--classes", "3", "--avg-degree",
                "6", "--homophily", "0.8", "--feature-dim", "4", "--seed", seed});
}

TEST(OutputDirs, OutputEqualToTheInputIsRefusedWhateverTheSpelling) {
  temp_dir d;
  make_dataset(d / "in");
  auto const before = snapshot(d / "in");
  fs::create_directory_symlink(d / "in", d / "link");
  std::string const in = (d / "in").string();
  std::vector<std::string> const spellings = {in, in + "/", (d / "in" / ".." / "in").string(),
                                              (d / "link").string()};
  for (const std::string& out : spellings) {
    for (bool overwrite : {false, true}) {
      std::vector<std::vector<std::string>> commands = {
          {"split-edges", in, out},
          {"generate", "task", in, out, "--classes", "2", "--feature-dim", "3"},
          {"partition", "--scheme", "random", "--parts", "2", in, out}};
      for (auto args : commands) {
        if (overwrite) args.push_back("--overwrite");
        std::string const msg = error_of([&] { run_data_cli(args); });
        EXPECT_THAT(msg, AllOf(HasSubstr(out), HasSubstr(in), HasSubstr("is the input")))
            << args[0] << " -> " << out;
      }
    }
  }
  // The input is read the other way round too: IN spelt through the link, OUT the directory.
  EXPECT_THAT(error_of([&] {
                run_data_cli({"split-edges", (d / "link").string(), in});
              }),
              HasSubstr("is the input"));
  EXPECT_EQ(snapshot(d / "in"), before) << "the input was modified";
}

TEST(OutputDirs, ConvertIntoTheDirectoryHoldingItsInputIsRefused) {
  temp_dir d;
  write_text(d / "g" / "edges.txt", "0 1\n1 2\n2 0\n");
  std::string const msg = error_of([&] {
    run_data_cli({"convert", "--from", "snap", (d / "g" / "edges.txt").string(), (d / "g").string(),
                  "--overwrite"});
  });
  EXPECT_THAT(msg,
              AllOf(HasSubstr("holds the input"), HasSubstr((d / "g" / "edges.txt").string())));
  EXPECT_EQ(read_text(d / "g" / "edges.txt"), "0 1\n1 2\n2 0\n");
}

TEST(OutputDirs, ANonEmptyOutputNeedsOverwrite) {
  temp_dir d;
  write_text(d / "g.txt", "0 1\n1 2\n2 0\n");
  make_dataset(d / "old", "5");
  auto const old = snapshot(d / "old");
  // convert, generate and split-edges into an existing dataset: refused, the dataset kept.
  std::vector<std::vector<std::string>> commands = {
      {"convert", "--from", "snap", (d / "g.txt").string(), (d / "old").string()},
      {"generate", "rmat", (d / "old").string(), "--scale", "4"},
      {"generate", "sbm", (d / "old").string(), "--nodes", "20", "--classes", "2", "--avg-degree",
       "4", "--homophily", "0.5", "--feature-dim", "2"}};
  make_dataset(d / "in", "2");
  commands.push_back({"split-edges", (d / "in").string(), (d / "old").string()});
  commands.push_back({"generate", "task", (d / "in").string(), (d / "old").string(), "--classes",
                      "2", "--feature-dim", "3"});
  commands.push_back({"partition", "--scheme", "random", "--parts", "2", (d / "in").string(),
                      (d / "old").string()});
  for (const auto& args : commands) {
    EXPECT_THAT(
        error_of([&] { run_data_cli(args); }),
        AllOf(HasSubstr((d / "old").string()), HasSubstr("is not empty"), HasSubstr("--overwrite")))
        << args[0] << " " << args[1];
  }
  EXPECT_EQ(snapshot(d / "old"), old);
  // An output that is a file is refused even with --overwrite.
  write_text(d / "file", "x");
  EXPECT_THAT(
      error_of([&] {
        run_data_cli({"generate", "rmat", (d / "file").string(), "--scale", "4", "--overwrite"});
      }),
      HasSubstr("is not a directory"));
  EXPECT_EQ(read_text(d / "file"), "x");
  // An existing empty directory is no obstacle.
  fs::create_directories(d / "empty");
  run_data_cli({"split-edges", (d / "in").string(), (d / "empty").string(), "--negatives", "1"});
  EXPECT_TRUE(read_dataset(d / "empty").link.has_value());
  // --overwrite replaces the whole directory: nothing of the old dataset is left in it.
  write_text(d / "old" / "stray.txt", "old file");
  run_data_cli(
      {"convert", "--from", "snap", (d / "g.txt").string(), (d / "old").string(), "--overwrite"});
  EXPECT_EQ(read_dataset(d / "old").num_nodes, 3);
  EXPECT_FALSE(fs::exists(d / "old" / "stray.txt"));
  EXPECT_THAT(hidden_entries(d.path()), ::testing::IsEmpty());
  run_data_cli({"partition", "--scheme", "random", "--parts", "2", (d / "in").string(),
                (d / "parts").string()});
  run_data_cli({"partition", "--scheme", "random", "--parts", "3", (d / "in").string(),
                (d / "parts").string(), "--overwrite"});
  EXPECT_THAT(read_text(d / "parts" / "summary.json"), HasSubstr("\"parts\": 3"));
}

TEST(OutputDirs, OverwriteThroughASymbolicLinkKeepsTheLink) {
  temp_dir d;
  make_dataset(d / "in");
  make_dataset(d / "target", "9");
  fs::create_directory_symlink(d / "target", d / "out");
  run_data_cli(
      {"split-edges", (d / "in").string(), (d / "out").string(), "--overwrite", "--negatives", "1"});
  EXPECT_TRUE(fs::is_symlink(d / "out"));
  EXPECT_TRUE(read_dataset(d / "target").link.has_value());
}

TEST(OutputDirs, AFailedCommandLeavesTheOldOutputAndNoTemporary) {
  temp_dir d;
  make_dataset(d / "in");
  make_dataset(d / "old", "4");
  auto const old = snapshot(d / "old");
  // split-edges --scheme tma with 1000 negatives on 60 vertices fails after reading the input.
  EXPECT_THAT(error_of([&] {
                run_data_cli({"split-edges", (d / "in").string(), (d / "old").string(), "--scheme",
                              "tma", "--overwrite"});
              }),
              HasSubstr("negatives"));
  EXPECT_EQ(snapshot(d / "old"), old);
  EXPECT_THAT(hidden_entries(d.path()), ::testing::IsEmpty());
}

TEST(OutputDirs, WriteFailingHalfwayLeavesTheOldDirectory) {
  temp_dir d;
  write_text(d / "out" / "a.txt", "old");
  auto const fail_halfway = [](const fs::path& tmp) {
    write_text(tmp / "a.txt", "new");
    throw io_error("disk full");
  };
  EXPECT_THAT(error_of([&] { cli::write_dir_atomically(d / "out", fail_halfway); }),
              HasSubstr("disk full"));
  EXPECT_EQ(read_text(d / "out" / "a.txt"), "old");
  EXPECT_THAT(hidden_entries(d.path()), ::testing::IsEmpty());
  // Complete: the new contents replace the old ones whole.
  cli::write_dir_atomically(d / "out", [](const fs::path& tmp) { write_text(tmp / "b.txt", "b"); });
  EXPECT_FALSE(fs::exists(d / "out" / "a.txt"));
  EXPECT_EQ(read_text(d / "out" / "b.txt"), "b");
  // A missing parent is created.
  cli::write_dir_atomically(d / "x" / "y", [](const fs::path& tmp) { write_text(tmp / "c", ""); });
  EXPECT_TRUE(fs::exists(d / "x" / "y" / "c"));
  EXPECT_THAT(hidden_entries(d.path()), ::testing::IsEmpty());
}

/// Runs the built binary with `args` (shell words, already quoted): test::run_command.
int run_binary(const std::string& args, std::string& output) {
  return test::run_command(std::string(COOPGNN_BINARY) + " " + args, output);
}

TEST(OutputDirs, TheCommandLineExitsWithAnErrorAndKeepsTheInput) {
  temp_dir d;
  make_dataset(d / "in");
  auto const before = snapshot(d / "in");
  std::string out;
  std::string const in = (d / "in").string();
  EXPECT_EQ(run_binary("split-edges '" + in + "' '" + in + "'", out), 1) << out;
  EXPECT_THAT(out, AllOf(HasSubstr("coopgnn: error: "), HasSubstr("is the input")));
  EXPECT_EQ(
      run_binary("generate task '" + in + "' '" + in + "/.' --classes 2 --feature-dim 2", out), 1)
      << out;
  EXPECT_EQ(snapshot(d / "in"), before);
}

/// Runs `bench ARGS...` (every bench subcommand registered) and returns the coopgnn::error's
/// message, or "" when it succeeded.
std::string run_bench(std::vector<std::string> args) {
  CLI::App app{"test"};
  auto* bench = app.add_subcommand("bench");
  cli::add_bench_work_command(*bench);
  cli::add_bench_modes_command(*bench);
  cli::add_bench_export_command(*bench);
  cli::add_bench_cache_command(*bench);
  cli::add_bench_sample_command(*bench);
  args.insert(args.begin(), "bench");
  std::reverse(args.begin(), args.end());
  try {
    app.parse(args);
  } catch (const error& e) {
    return e.what();
  }
  return {};
}

std::string cora() { return std::string(COOPGNN_SOURCE_DIR) + "/data/cora"; }

/// A short `train` on the bundled Cora writing its metrics to `metrics`.
std::vector<std::string> train_args(const fs::path& metrics) {
  return test::tiny_run_args("train", "4", "3", {"--metrics-out", metrics.string()});
}

TEST(OutputProbes, TrainRefusesAnUnwritableOutputBeforeTheFirstEpoch) {
  temp_dir d;
  write_text(d / "file", "x");  // a path below a regular file cannot be created, even by root
  for (auto const& [option, path] :
       std::vector<std::pair<std::string, fs::path>>{{"--save-model", d / "file" / "model"},
                                                     {"--checkpoint", d / "file" / "ck"},
                                                     {"--metrics-out", d / "file" / "m.jsonl"}}) {
    auto args = train_args(d / "m.jsonl");
    if (option == "--metrics-out") {
      args.back() = path.string();
    } else {
      args.insert(args.end(), {option, path.string()});
    }
    std::string const why = test::run_train_cli(args);
    EXPECT_THAT(why, AllOf(HasSubstr(option + " " + path.string()), HasSubstr("Not a directory")))
        << option;
    EXPECT_EQ(read_text(d / "m.jsonl"), "") << option << ": an epoch ran before the error";
  }
  auto compare = train_args(d / "file" / "m.jsonl");
  compare[0] = "compare";
  EXPECT_THAT(test::run_train_cli(compare), HasSubstr("--metrics-out " + (d / "file").string()));
  // An existing directory where the metrics file should be.
  fs::create_directories(d / "dir.jsonl");
  EXPECT_THAT(test::run_train_cli(train_args(d / "dir.jsonl")),
              AllOf(HasSubstr("--metrics-out"), HasSubstr("is a directory")));
  // Probes leave nothing behind; a writable --save-model is created and holds the model.
  auto ok = train_args(d / "m.jsonl");
  ok.insert(ok.end(), {"--save-model", (d / "model").string()});
  ASSERT_EQ(test::run_train_cli(ok), "");
  EXPECT_TRUE(fs::exists(d / "model" / "manifest.json"));
  for (const auto& e : fs::recursive_directory_iterator(d.path())) {
    EXPECT_EQ(e.path().filename().string().rfind(".coopgnn-probe", 0), std::string::npos)
        << e.path();
  }
}

TEST(OutputProbes, ADirectoryWithoutWritePermissionIsNamed) {
  if (::geteuid() == 0) GTEST_SKIP() << "running as root: permissions do not block writes";
  temp_dir d;
  fs::create_directories(d / "ro");
  fs::permissions(d / "ro", fs::perms::owner_read | fs::perms::owner_exec);
  auto args = train_args(d / "m.jsonl");
  args.insert(args.end(), {"--save-model", (d / "ro" / "model").string()});
  std::string const why = test::run_train_cli(args);
  fs::permissions(d / "ro", fs::perms::owner_all);
  EXPECT_THAT(why, AllOf(HasSubstr("--save-model " + (d / "ro" / "model").string()),
                         HasSubstr("Permission denied")));
}

TEST(OutputProbes, BenchesAndInferenceRefuseAnUnwritableOutBeforeAnyWork) {
  temp_dir d;
  write_text(d / "file", "x");
  std::string const bad = (d / "file" / "out").string();
  for (const char* cmd : {"work", "modes", "export-blocks", "cache", "sample"}) {
    EXPECT_THAT(run_bench({cmd, "--dataset", cora(), "--out", bad}),
                AllOf(HasSubstr("--out " + bad), HasSubstr("cannot write there")))
        << cmd;
  }
  EXPECT_THAT(
      run_bench({"sample", "--dataset", cora(), "--out", (d / "ok").string(), "--seeds-out", bad}),
      HasSubstr("--seeds-out " + bad));
  EXPECT_THAT(test::run_train_cli({"embed", "--model", (d / "none").string(), "--out", bad}),
              HasSubstr("--out " + bad));
  EXPECT_THAT(
      test::run_train_cli({"predict", "--model", (d / "none").string(), "--out-logits", bad}),
      HasSubstr("--out-logits " + bad));
}

}  // namespace
}  // namespace coopgnn
