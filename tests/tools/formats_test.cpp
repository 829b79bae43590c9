// The input-format registry (formats/formats.hpp): names, options, detection, `convert` without
// --from and its help; MUSAE in the original release's file names; the stratified split.
#include <fmt/ranges.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "formats/formats.hpp"
#include "runtime/core/error.hpp"
#include "runtime/graph/dataset.hpp"
#include "tests/common/cli.hpp"
#include "tests/common/files.hpp"
#include "tools/coopgnn/commands.hpp"

namespace coopgnn {
namespace {

using test::error_of;
using test::run_data_cli;
using test::temp_dir;
using test::write_text;

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::vector<std::string_view> registry_names() {
  std::vector<std::string_view> names;
  for (const input_format* f : input_formats()) names.push_back(f->name);
  return names;
}

TEST(FormatRegistry, NamesOptionsAndLookUp) {
  EXPECT_THAT(registry_names(), ElementsAre("ogb", "snap", "npz", "lightgcn", "musae", "heco",
                                               "mag240m"));
  EXPECT_THAT(formats_reading("--features"), ElementsAre("ogb", "snap", "npz"));
  EXPECT_THAT(formats_reading("--directed"), ElementsAre("ogb", "musae", "mag240m"));
  EXPECT_THAT(formats_reading("--stratified"), ElementsAre("musae"));
  EXPECT_THAT(formats_reading("--labels-per-class"), ElementsAre("heco"));
  EXPECT_EQ(find_input_format("npz").name, "npz");
  EXPECT_FALSE(find_input_format("snap").directory);
  EXPECT_TRUE(find_input_format("lightgcn").directory);
  EXPECT_THAT(error_of([] { (void)find_input_format("mtx"); }),
              HasSubstr("unknown input format 'mtx' (expected ogb, snap, npz, lightgcn, musae, "
                        "heco or mag240m)"));
  // The --features refusal names the formats that read it (from the registry).
  temp_dir d;
  convert_options opt;
  opt.features_file = d / "x.npy";
  EXPECT_THAT(error_of([&] { (void)convert_dataset("lightgcn", d.path(), opt); }),
              HasSubstr("--features applies to ogb, snap and npz inputs, not lightgcn"));
}

/// Creates empty files (detection looks at names only).
void touch(const fs::path& dir, std::initializer_list<const char*> files) {
  for (const char* f : files) write_text(dir / f, "");
}

TEST(FormatRegistry, DetectsEachFormatFromItsFileNames) {
  temp_dir d;
  touch(d / "ogb" / "raw", {"num-node-list.csv.gz", "edge.csv.gz", "node-feat.csv.gz"});
  touch(d / "ogb_plain" / "raw", {"num-node-list.csv", "edge.csv"});
  touch(d.path(), {"graph.txt", "graph.txt.gz", "graph.npz"});
  touch(d / "gowalla", {"train.txt", "test.txt", "item_list.txt"});
  touch(d / "snap_musae", {"musae_git_edges.csv", "musae_git_target.csv", "musae_git_features.json"});
  touch(d / "karateclub", {"edges.csv", "target.csv", "new_target.csv", "features.json"});
  touch(d / "acm", {"labels.npy", "pa.txt", "ps.txt", "p_feat.npz", "train_20.npy"});
  touch(d / "papers100M" / "raw", {"data.npz", "node-label.npz"});
  touch(d / "mag" / "processed" / "paper", {"node_feat.npy", "node_label.npy"});
  touch(d / "mag" / "processed" / "paper___cites___paper", {"edge_index.npy"});
  std::map<std::string, std::string> const expected = {
      {"ogb", "ogb"},           {"ogb_plain", "ogb"},          {"graph.txt", "snap"},
      {"graph.txt.gz", "snap"}, {"graph.npz", "npz"},          {"gowalla", "lightgcn"},
      {"snap_musae", "musae"},  {"karateclub", "musae"},       {"acm", "heco"},
      {"papers100M", "ogb"},    {"mag", "mag240m"}};
  for (const auto& [input, format] : expected) {
    EXPECT_EQ(detect_input_format(d / input).name, format) << input;
  }
  touch(d / "nothing", {"readme.md"});
  EXPECT_THAT(error_of([&] { (void)detect_input_format(d / "nothing"); }),
              HasSubstr("nothing: not recognised as any input format; name one with --from (ogb: "));
  touch(d / "both", {"train.txt", "test.txt", "labels.npy", "pa.txt", "ps.txt", "p_feat.npz"});
  EXPECT_THAT(error_of([&] { (void)detect_input_format(d / "both"); }),
              HasSubstr("both: looks like lightgcn and heco at once; name one with --from"));
  EXPECT_THAT(error_of([&] { (void)detect_input_format(d / "absent"); }),
              HasSubstr("absent: no such file or directory"));
}

TEST(FormatRegistry, ConvertWithoutFromDetectsTheFormat) {
  temp_dir d;
  write_text(d / "g.txt", "# a triangle and a tail\n0 1\n1 2\n2 0\n2 3\n");
  run_data_cli({"convert", (d / "g.txt").string(), (d / "out").string()});
  dataset const ds = read_dataset(d / "out");
  EXPECT_EQ(ds.num_nodes, 4);
  EXPECT_EQ(ds.num_edges(), 4);  // kept as stored, as --from snap
  write_text(d / "notes" / "readme.md", "");
  EXPECT_THAT(error_of([&] {
                run_data_cli({"convert", (d / "notes").string(), (d / "out2").string()});
              }),
              HasSubstr("notes: not recognised as any input format"));
  EXPECT_THROW(run_data_cli({"convert", "--from", "mtx", "a", "b"}), CLI::ValidationError);
}

TEST(FormatRegistry, ConvertHelpListsEveryRegisteredFormat) {
  CLI::App app;
  cli::add_data_commands(app);
  std::string const help = app.get_subcommand("convert")->help();
  for (const input_format* f : input_formats()) {
    EXPECT_THAT(help, HasSubstr(fmt::format("  {}:", f->name))) << f->name;
  }
  EXPECT_THAT(help, HasSubstr("  ogb:  an OGB node-property directory"));
  EXPECT_THAT(help, HasSubstr("  musae: a MUSAE directory"));
  EXPECT_THAT(help, HasSubstr("ogb, musae, mag240m: keep the edges as stored"));
  EXPECT_THAT(help, HasSubstr("musae: stratified split"));
}

// ---- MUSAE as distributed ---------------------------------------------------------------------

// 10 nodes (the original release's karateclub layout: edges.csv, target.csv, features.json; and
// new_target.csv beside them, as in karateclub's facebook folder, which is not read): classes
// company (ids 0, 2, 4, 6, 8, 9) and tvshow (1, 3, 5, 7).
void write_original_musae(const fs::path& dir) {
  write_text(dir / "edges.csv", "id_1,id_2\n0,1\n1,2\n2,3\n3,4\n4,5\n5,6\n6,7\n7,8\n8,9\n");
  write_text(dir / "target.csv",
             "id,facebook_id,page_name,page_type\n"
             "0,100,A,company\n1,101,B,tvshow\n2,102,C,company\n3,103,D,tvshow\n"
             "4,104,E,company\n5,105,F,tvshow\n6,106,G,company\n7,107,\"H, Ltd\",tvshow\n"
             "8,108,I,company\n9,109,J,company\n");
  write_text(dir / "new_target.csv", "id,target\n0,1\n");
  write_text(dir / "features.json", "{\"0\": [1], \"9\": [0, 1]}");
}

TEST(ConvertMusaeOriginal, PlainNamesReadAsTheSnapNames) {
  temp_dir d;
  write_original_musae(d / "facebook");
  convert_report rep;
  dataset const ds = convert_musae(d / "facebook", {}, &rep);
  EXPECT_EQ(ds.name, "facebook");  // the directory's name: the files carry none
  EXPECT_EQ(ds.num_nodes, 10);
  EXPECT_EQ(ds.num_edges(), 18);  // 9 edges stored once, symmetrized
  EXPECT_EQ(ds.labels, (std::vector<std::int64_t>{0, 1, 0, 1, 0, 1, 0, 1, 0, 0}));
  ASSERT_EQ(ds.features.rows(), 10);
  ASSERT_EQ(ds.features.cols(), 2);
  EXPECT_EQ(ds.features(0, 1), 1.0f);
  EXPECT_EQ(ds.features(9, 0), 1.0f);
  EXPECT_EQ(ds.features(5, 0), 0.0f);
  EXPECT_THAT(rep.files_read, ElementsAre((d / "facebook" / "target.csv").string(),
                                          (d / "facebook" / "edges.csv").string(),
                                          (d / "facebook" / "features.json").string()));

  // The same files under SNAP's names give the same graph, labels and features.
  fs::create_directories(d / "snap");
  fs::copy_file(d / "facebook" / "edges.csv", d / "snap" / "musae_facebook_edges.csv");
  fs::copy_file(d / "facebook" / "target.csv", d / "snap" / "musae_facebook_target.csv");
  fs::copy_file(d / "facebook" / "features.json", d / "snap" / "musae_facebook_features.json");
  dataset const snap = convert_musae(d / "snap", {});
  EXPECT_EQ(snap.name, "musae_facebook");
  EXPECT_EQ(snap.src, ds.src);
  EXPECT_EQ(snap.dst, ds.dst);
  EXPECT_EQ(snap.labels, ds.labels);
  EXPECT_EQ(snap.features.values(), ds.features.values());
  EXPECT_EQ(snap.train, ds.train);

  // Through the command line, detected without --from.
  run_data_cli({"convert", (d / "facebook").string(), (d / "out").string()});
  EXPECT_EQ(read_dataset(d / "out").num_nodes, 10);
}

TEST(ConvertMusaeOriginal, MissingOrMixedFilesNameTheDirectory) {
  temp_dir d;
  write_original_musae(d / "fb");
  fs::remove(d / "fb" / "features.json");
  EXPECT_THAT(error_of([&] { (void)convert_musae(d / "fb", {}); }),
              HasSubstr("missing file features.json (a MUSAE directory in the original "
                        "release's layout holds edges.csv, target.csv and features.json; files "
                        "here: edges.csv, new_target.csv, target.csv)"));
  // Both layouts' edge files: which one is meant is unclear.
  write_text(d / "fb" / "features.json", "{}");
  write_text(d / "fb" / "x_edges.csv", "id_1,id_2\n0,1\n");
  EXPECT_THAT(error_of([&] { (void)convert_musae(d / "fb", {}); }),
              HasSubstr("several files NAME_edges.csv (edges.csv, x_edges.csv)"));
  // Neither: the message names both layouts.
  temp_dir e;
  write_text(e / "readme.txt", "");
  EXPECT_THAT(error_of([&] { (void)convert_musae(e.path(), {}); }),
              HasSubstr("; the original release's edges.csv, target.csv and features.json are "
                        "read too"));
}

// ---- stratified split -------------------------------------------------------------------------

TEST(StratifiedSplit, FractionsHoldWithinEachClass) {
  temp_dir d;
  write_original_musae(d / "fb");
  convert_options opt;
  opt.stratified = true;
  opt.train_fraction = 0.5;
  opt.valid_fraction = 0.25;
  convert_report rep;
  dataset const ds = convert_musae(d / "fb", opt, &rep);
  // company: 6 vertices -> round(3) = 3 train, round(1.5) = 2 valid, 1 test;
  // tvshow: 4 vertices -> 2 train, round(1) = 1 valid, 1 test.
  auto count = [&](const std::vector<vid_t>& part, std::int64_t c) {
    std::int64_t k = 0;
    for (vid_t v : part) k += ds.labels[static_cast<std::size_t>(v)] == c ? 1 : 0;
    return k;
  };
  EXPECT_EQ(count(ds.train, 0), 3);
  EXPECT_EQ(count(ds.valid, 0), 2);
  EXPECT_EQ(count(ds.test, 0), 1);
  EXPECT_EQ(count(ds.train, 1), 2);
  EXPECT_EQ(count(ds.valid, 1), 1);
  EXPECT_EQ(count(ds.test, 1), 1);
  std::set<vid_t> all(ds.train.begin(), ds.train.end());
  all.insert(ds.valid.begin(), ds.valid.end());
  all.insert(ds.test.begin(), ds.test.end());
  EXPECT_EQ(all.size(), 10u);
  EXPECT_TRUE(std::is_sorted(ds.train.begin(), ds.train.end()));
  EXPECT_EQ(rep.split, "stratified 5/3/2 (fractions 0.5/0.25 within each class, keyed, seed 1)");

  // The same seed gives the same split; another seed another one (same per-class counts).
  dataset const again = convert_musae(d / "fb", opt);
  EXPECT_EQ(again.train, ds.train);
  EXPECT_EQ(again.valid, ds.valid);
  std::set<std::vector<vid_t>> trains;
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    opt.seed = seed;
    dataset const s = convert_musae(d / "fb", opt);
    EXPECT_EQ(s.train.size(), 5u);
    trains.insert(s.train);
  }
  EXPECT_GT(trains.size(), 1u);

  // Unlabelled vertices (-1) go to no part; bad fractions are refused.
  dataset x = ds;
  x.labels[0] = -1;
  stratified_split(x, 0.5, 0.25, 1);
  EXPECT_EQ(x.train.size() + x.valid.size() + x.test.size(), 9u);
  EXPECT_THAT(error_of([&] { stratified_split(x, 0.8, 0.4, 1); }),
              HasSubstr("--train-fraction 0.8 and --valid-fraction 0.4 must be in [0, 1]"));
}

TEST(StratifiedSplit, CommandLineFlag) {
  temp_dir d;
  write_original_musae(d / "fb");
  run_data_cli({"convert", "--from", "musae", (d / "fb").string(), (d / "out").string(),
                "--stratified", "--train-fraction", "0.5", "--valid-fraction", "0.5"});
  dataset const ds = read_dataset(d / "out");
  // company 6 -> 3/3/0, tvshow 4 -> 2/2/0.
  EXPECT_EQ(ds.train.size(), 5u);
  EXPECT_EQ(ds.valid.size(), 5u);
  EXPECT_TRUE(ds.test.empty());
}

}  // namespace
}  // namespace coopgnn
