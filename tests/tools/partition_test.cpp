// `coopgnn partition` (tools/coopgnn/cmd_partition.cpp): the files it writes (parts.npy int32
// [|V|], summary.json), the printed JSON object, determinism per seed, and errors naming the
// option, on a small dataset written by the test.
#include "runtime/graph/partition.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "runtime/core/error.hpp"
#include "runtime/graph/dataset.hpp"
#include "runtime/graph/npy.hpp"
#include "tests/common/cli.hpp"
#include "tests/common/files.hpp"

namespace coopgnn {
namespace {

using test::read_text;
using test::run_data_cli;
using test::temp_dir;
using ::testing::HasSubstr;

/// 4 cliques of 10 vertices joined in a ring by single edges (both directions stored), labels =
/// clique % 2, so METIS keeps cliques whole.
dataset cliques() {
  dataset ds;
  ds.name = "cliques";
  ds.num_nodes = 40;
  auto add = [&](vid_t u, vid_t v) {
    ds.src.insert(ds.src.end(), {u, v});
    ds.dst.insert(ds.dst.end(), {v, u});
  };
  for (vid_t c = 0; c < 4; ++c) {
    for (vid_t u = 10 * c; u < 10 * c + 10; ++u) {
      for (vid_t v = u + 1; v < 10 * c + 10; ++v) add(u, v);
    }
    add(10 * c + 9, (10 * c + 10) % 40);
  }
  ds.labels.resize(40);
  for (vid_t v = 0; v < 40; ++v) ds.labels[v] = (v / 10) % 2;
  ds.num_classes = 2;
  return ds;
}

/// Runs `partition` with `args` and returns the JSON it printed (with --json).
nlohmann::json run_json(std::vector<std::string> args) {
  args.insert(args.begin(), "partition");
  args.push_back("--json");
  testing::internal::CaptureStdout();
  try {
    run_data_cli(args);
  } catch (...) {
    testing::internal::GetCapturedStdout();
    throw;
  }
  return nlohmann::json::parse(testing::internal::GetCapturedStdout());
}

TEST(PartitionCli, RandomWritesPartsAndSummary) {
  temp_dir d;
  dataset const ds = cliques();
  write_dataset(ds, d / "in");
  auto const out = d / "out";
  nlohmann::json const j = run_json(
      {"--scheme", "random", "--parts", "3", "--seed", "4", (d / "in").string(), out.string()});
  auto const parts = read_npy<std::int32_t>(out / "parts.npy");
  EXPECT_EQ(parts.stored, npy_dtype::int32);
  ASSERT_EQ(parts.shape, (std::vector<std::int64_t>{40}));
  EXPECT_EQ(parts.data, random_parts(40, 3, 4));
  // Kept edges counted here: both endpoints in one part.
  std::int64_t kept = 0;
  for (std::size_t e = 0; e < ds.src.size(); ++e) {
    kept += parts.data[ds.src[e]] == parts.data[ds.dst[e]];
  }
  EXPECT_EQ(j["scheme"], "random");
  EXPECT_EQ(j["parts"], 3);
  EXPECT_TRUE(j["clusters"].is_null());
  EXPECT_EQ(j["edge_set"], "graph");
  EXPECT_EQ(j["total_edges"], static_cast<std::int64_t>(ds.src.size()));
  EXPECT_EQ(j["kept_edges"], kept);
  EXPECT_EQ(j["distance"]["kind"], "class_tv");
  EXPECT_EQ(j["parts_file"]["dtype"], "int32");
  ASSERT_EQ(j["per_part"].size(), 3u);
  std::int64_t vertices = 0;
  for (const auto& p : j["per_part"]) vertices += p["vertices"].get<std::int64_t>();
  EXPECT_EQ(vertices, 40);
  EXPECT_EQ(nlohmann::json::parse(read_text(out / "summary.json")), j);
}

TEST(PartitionCli, MetisAndSuperKeepCliques) {
  if (!metis_available()) GTEST_SKIP() << "built without METIS (COOPGNN_METIS)";
  temp_dir d;
  write_dataset(cliques(), d / "in");
  // PSGD-PA with M = 2: the cut is two ring edges, each stored in both directions.
  nlohmann::json const m =
      run_json({"--scheme", "metis", "--parts", "2", (d / "in").string(), (d / "m").string()});
  EXPECT_EQ(m["clusters"], 2);
  EXPECT_EQ(m["total_edges"].get<std::int64_t>() - m["kept_edges"].get<std::int64_t>(), 4)
      << "cut = the two ring edges between the halves, both directions";
  // SuperTMA with N = 4: one clique per cluster, 4 clusters dealt 2 + 2 to M = 2 parts.
  nlohmann::json const s = run_json({"--scheme", "super", "--parts", "2", "--clusters", "4",
                                     (d / "in").string(), (d / "s").string()});
  EXPECT_EQ(s["clusters"], 4);
  EXPECT_EQ(s["clusters_reason"], "given by --clusters");
  for (const auto& p : s["per_part"]) EXPECT_EQ(p["vertices"], 20);
  auto const parts = read_npy<std::int32_t>(d / "s" / "parts.npy").data;
  for (vid_t v = 0; v < 40; ++v) EXPECT_EQ(parts[v], parts[v / 10 * 10]) << "clique split";
  // Same seed, same parts.
  run_json({"--scheme", "super", "--parts", "2", "--clusters", "4", (d / "in").string(),
            (d / "s2").string()});
  EXPECT_EQ(read_text(d / "s" / "parts.npy"), read_text(d / "s2" / "parts.npy"));
}

TEST(PartitionCli, ErrorsNameTheOption) {
  temp_dir d;
  write_dataset(cliques(), d / "in");
  auto const in = (d / "in").string();
  auto const out = (d / "out").string();
  auto msg = [](const std::vector<std::string>& args) {
    return test::error_of<error>([&] { run_data_cli(args); });
  };
  EXPECT_THAT(msg({"partition", "--scheme", "random", "--parts", "0", in, out}),
              HasSubstr("--parts 0"));
  EXPECT_THAT(msg({"partition", "--scheme", "random", "--parts", "2", "--clusters", "4", in, out}),
              HasSubstr("--clusters applies to --scheme super only"));
  EXPECT_THROW(run_data_cli({"partition", "--scheme", "cluster", "--parts", "2", in, out}),
               CLI::ParseError);
  EXPECT_THROW(run_data_cli({"partition", "--scheme", "random", in, out}), CLI::ParseError);
  if (metis_available()) {
    // |V| / 8 = 5 default clusters, below M = 6.
    EXPECT_THAT(msg({"partition", "--scheme", "super", "--parts", "6", in, out}),
                HasSubstr("give --clusters"));
    EXPECT_THAT(
        msg({"partition", "--scheme", "super", "--parts", "2", "--clusters", "41", in, out}),
        HasSubstr("--clusters 41 exceeds |V| = 40"));
  } else {
    EXPECT_THAT(msg({"partition", "--scheme", "metis", "--parts", "2", in, out}),
                HasSubstr("needs METIS"));
  }
  EXPECT_FALSE(std::filesystem::exists(d / "out" / "parts.npy"));
}

}  // namespace
}  // namespace coopgnn
