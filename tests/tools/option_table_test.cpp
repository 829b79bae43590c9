// The option table (pipeline/config.hpp) as the command line sees it: every table entry
// is an option of train, compare and tma with the table's default; --gemm-math is recorded in
// --metrics-out and in checkpoints, and the host says once that it keeps FP32; a dataset of the
// same name and sizes but other feature rows is refused by --resume and by predict / embed,
// naming the features.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "runtime/graph/npy.hpp"
#include "pipeline/config.hpp"
#include "tests/common/cli.hpp"
#include "tests/common/files.hpp"
#include "tools/coopgnn/commands.hpp"

namespace coopgnn {
namespace {

namespace fs = std::filesystem;
using test::read_text;
using test::run_train_cli;
using test::temp_dir;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

std::vector<std::string> with(std::vector<std::string> args, const std::vector<std::string>& more) {
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

std::vector<std::string> tiny(const std::string& dataset = "") {
  return dataset.empty() ? test::tiny_run_args("train", "8", "1")
                         : test::tiny_run_args("train", "8", "1", {}, dataset);
}

TEST(OptionTable, EveryEntryIsAnOptionOfTheTrainingCommands) {
  CLI::App app;
  cli::add_train_commands(app);
  cli::add_tma_command(app);
  for (const char* sub : {"train", "compare", "tma"}) {
    CLI::App* cmd = app.get_subcommand(sub);
    for (const option_decl& d : train_option_table()) {
      CLI::Option const* opt = cmd->get_option_no_throw(d.name);
      ASSERT_NE(opt, nullptr) << sub << " lacks " << d.name;
      EXPECT_EQ(opt->get_description(), d.help) << sub << " " << d.name;
    }
  }
  // Defaults as before the table: spelled out here, not read from train_config.
  CLI::App* train = app.get_subcommand("train");
  for (auto const& [name, def] : std::vector<std::pair<std::string, std::string>>{
           {"--hidden", "64"},
           {"--lr", "0.01"},
           {"--weight-decay", "0.0005"},
           {"--dropout", "0.5"},
           {"--model", "sage"},
           {"--sampler", "ns"},
           {"--fanouts", "[10,10]"},
           {"--batch-size", "1024"},
           {"--weight-decay-scope", "all"},
           {"--gemm-math", "fp32"},
           {"--epochs", "100"}}) {
    EXPECT_EQ(train->get_option(name)->get_default_str(), def) << name;
  }
  // Which options are recorded as changing the arithmetic (a fixed list, not the table's).
  std::vector<std::string> arithmetic;
  for (const option_decl& d : train_option_table()) {
    if (d.changes_arithmetic) arithmetic.push_back(d.name);
  }
  for (const char* name : {"--hidden", "--lr", "--weight-decay", "--dropout", "--seed",
                           "--fanouts", "--sampler", "--gemm-math", "--model"}) {
    EXPECT_THAT(arithmetic, ::testing::Contains(std::string(name)));
  }
  for (const char* name : {"--epochs", "--eval-every", "--peer-timeout", "--metric"}) {
    EXPECT_THAT(arithmetic, Not(::testing::Contains(std::string(name))));
  }
}

TEST(OptionTable, RangesComeFromTheTable) {
  // --batch-size below 1 is refused at parse time (a dry run used to print a nonsense estimate).
  try {
    (void)run_train_cli(with(tiny(), {"--batch-size", "-5", "--dry-run"}));
    ADD_FAILURE() << "no parse error";
  } catch (const CLI::ParseError& e) {
    EXPECT_THAT(std::string(e.what()), AllOf(HasSubstr("--batch-size"), HasSubstr("-5")));
  }
  try {
    (void)run_train_cli(with(tiny(), {"--gemm-math", "fp16"}));
    ADD_FAILURE() << "no parse error";
  } catch (const CLI::ParseError& e) {
    EXPECT_THAT(std::string(e.what()), HasSubstr("--gemm-math"));
  }
  // The rule between options, once (validate_train_config), from train and bench modes alike.
  EXPECT_THAT(run_train_cli(with(tiny(), {"--batch-dependency", "4"})),
              HasSubstr("add --sampler labor"));
}

TEST(OptionTable, GemmMathIsRecordedAndTheHostSaysItKeepsFp32) {
  temp_dir d;
  std::string out;
  int const status = test::run_command(
      std::string(COOPGNN_BINARY) + " train --backend host --pes 1 --fanouts 2,2 --batch-size 140 "
          "--hidden 8 --epochs 1 --no-progress --gemm-math tf32 --metrics-out " +
          (d / "m.jsonl").string() + " --checkpoint " + (d / "ck").string(),
      out);
  ASSERT_EQ(status, 0) << out;
  std::string const note = "--gemm-math tf32 applies to the CUDA backend";
  ASSERT_NE(out.find(note), std::string::npos) << out;
  EXPECT_EQ(out.find(note), out.rfind(note)) << "said more than once:\n" << out;
  std::string const text = read_text(d / "m.jsonl");
  auto const line = nlohmann::json::parse(text.substr(0, text.find('\n')));  // epoch 1's
  EXPECT_EQ(line["gemm_math"], "tf32");
  EXPECT_EQ(line["options"]["--gemm-math"], "tf32");
  EXPECT_EQ(line["options"]["--hidden"], 8);
  auto const manifest =
      nlohmann::json::parse(read_text(d / "ck" / "ckpt-000001-000001" / "manifest.json"));
  EXPECT_EQ(manifest["identity"]["--gemm-math"], "tf32");
  // Resuming with FP32 GEMMs is another run.
  auto const why = run_train_cli(
      with(test::tiny_run_args("train", "8", "2"), {"--resume", (d / "ck").string()}));
  EXPECT_THAT(why, AllOf(HasSubstr("cannot resume"), HasSubstr("--gemm-math")));
}

/// A copy of the bundled Cora under `dir` with every feature value doubled: the same name,
/// sizes and edges, other feature rows.
fs::path cora_with_other_features(const fs::path& dir) {
  fs::path const src = fs::path(COOPGNN_SOURCE_DIR) / "data" / "cora";
  fs::path const dst = dir / "cora";
  fs::copy(src, dst, fs::copy_options::recursive);
  auto const feat = dst / "data" / "feat.npy";
  auto a = read_npy<float>(feat);
  for (float& x : a.data) x = 2 * x + 1;
  fs::remove(feat);
  write_npy(feat, std::span<const float>(a.data), std::span<const std::int64_t>(a.shape));
  return dst;
}

TEST(OptionTable, OtherContentOfTheSameNameAndSizesIsRefused) {
  temp_dir d;
  auto const other = cora_with_other_features(d.path());
  auto const ck = d / "ck";
  auto const model = d / "model";
  ASSERT_EQ(run_train_cli(with(tiny(), {"--checkpoint", ck.string(), "--save-model",
                                        model.string()})),
            "");
  // Resume on the other content: refused, naming the features (not the edges).
  auto const resume = with(test::tiny_run_args("train", "8", "2", {}, other.string()),
                           {"--resume", ck.string()});
  auto const why = run_train_cli(resume);
  EXPECT_THAT(why, AllOf(HasSubstr("cannot resume"), HasSubstr("dataset.content"),
                         HasSubstr("other features")));
  EXPECT_THAT(why, Not(HasSubstr("edges and")));
  // The same content resumes.
  EXPECT_EQ(run_train_cli(with(test::tiny_run_args("train", "8", "2"), {"--resume", ck.string()})),
            "");
  // predict and embed on the other content: refused, naming the features.
  for (const char* cmd : {"predict", "embed"}) {
    auto const msg = run_train_cli({cmd, "--model", model.string(), "--dataset", other.string(),
                                    "--out", (d / (std::string(cmd) + ".npy")).string()});
    EXPECT_THAT(msg, AllOf(HasSubstr("other content"), HasSubstr("features differ"))) << cmd;
  }
  EXPECT_EQ(run_train_cli({"predict", "--model", model.string(), "--out",
                           (d / "p.npy").string()}),
            "");
}

TEST(OptionPreset, CoopPaperSetsThePapersValuesAndGivenOptionsKeepTheirs) {
  temp_dir d;
  std::string out;
  // --hidden and --fanouts given: they win over the preset's 1024 and 10,10,10.
  int const status = test::run_command(
      std::string(COOPGNN_BINARY) +
          " train --backend host --pes 2 --preset coop-paper --hidden 8 --fanouts 2,2 "
          "--epochs 1 --no-progress --metrics-out " +
          (d / "m.jsonl").string(),
      out);
  ASSERT_EQ(status, 0) << out;
  EXPECT_THAT(out, HasSubstr("preset coop-paper sets: --model sage --dropout 0.5 --lr 0.001 "
                             "--gemm-math tf32; given, kept: --fanouts --hidden"));
  EXPECT_THAT(out, HasSubstr("preset coop-paper sets: --batch-size 2048 (1024 seeds per PE x 2 "
                             "PEs)"));
  std::string const text = read_text(d / "m.jsonl");  // the epoch's line, then the selection's
  auto const line = nlohmann::json::parse(text.substr(0, text.find('\n')));
  EXPECT_EQ(line["options"]["--hidden"], 8);
  EXPECT_EQ(line["options"]["--fanouts"], nlohmann::json::array({2, 2}));
  EXPECT_EQ(line["options"]["--gemm-math"], "tf32");
  EXPECT_EQ(line["options"]["--batch-size"], 2048);
  EXPECT_NEAR(line["options"]["--lr"].get<double>(), 0.001, 1e-9);
  EXPECT_NEAR(line["options"]["--dropout"].get<double>(), 0.5, 1e-9);
  EXPECT_EQ(line["options"]["--model"], "sage");
}

TEST(OptionPreset, TheValuesAreThePapersAndTheTableChecksThem) {
  // The authors' configuration, spelled out here.
  option_preset const& p = option_preset_named("coop-paper");
  train_config c;
  for (auto const& [name, value] : p.values) set_option_text(train_option(name), c, value);
  EXPECT_EQ(c.fanouts, (std::vector<int>{10, 10, 10}));
  EXPECT_EQ(c.hidden, 1024);
  EXPECT_FLOAT_EQ(c.dropout, 0.5f);
  EXPECT_FLOAT_EQ(c.lr, 1e-3f);
  EXPECT_EQ(c.gemm, gemm_math::tf32);
  EXPECT_EQ(c.model, models::conv_kind::sage);
  EXPECT_EQ(p.seeds_per_pe, 1024);
  for (auto const& [name, value] : p.typed_values) set_option_text(train_option(name), c, value);
  EXPECT_EQ(c.model, models::conv_kind::rgcn);
  EXPECT_EQ(c.num_bases, 2);
  // Bad text and bad values name the option.
  auto message = [&](const char* name, const char* text) {
    try {
      set_option_text(train_option(name), c, text);
    } catch (const logic_error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_THAT(message("--hidden", "wide"), AllOf(HasSubstr("--hidden"), HasSubstr("'wide'")));
  EXPECT_THAT(message("--hidden", "0"), AllOf(HasSubstr("--hidden"), HasSubstr("outside")));
  EXPECT_THAT(message("--fanouts", "10,x"), HasSubstr("--fanouts"));
  EXPECT_THAT(message("--model", "transformer"), HasSubstr("sage"));
  EXPECT_THAT(message("--layer-dependency", "maybe"), HasSubstr("true or false"));
  try {
    (void)option_preset_named("dgl-default");
    ADD_FAILURE() << "no error";
  } catch (const logic_error& e) {
    EXPECT_THAT(std::string(e.what()), AllOf(HasSubstr("--preset"), HasSubstr("coop-paper")));
  }
}

TEST(OptionPreset, BenchModesTakesItsShare) {
  temp_dir d;
  std::string out;
  int const status = test::run_command(
      std::string(COOPGNN_BINARY) +
          " bench modes --preset coop-paper --hidden 8 --pes 2 --batches 1 --warmup 0 --out " +
          d.path().string(),
      out);
  ASSERT_EQ(status, 0) << out;
  EXPECT_THAT(out, HasSubstr("preset coop-paper sets: --model sage --fanouts 10,10,10 "
                             "--gemm-math tf32 --batch-per-pe 1024; given, kept: --hidden"));
  auto const j = nlohmann::json::parse(read_text(d / "modes_cora.json"));
  EXPECT_THAT(j.dump(), HasSubstr("\"batch_per_pe\":1024"));
}

}  // namespace
}  // namespace coopgnn
