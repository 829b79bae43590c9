// Counts declared by converter inputs (formats/formats.hpp; runtime/core/memory_limit.hpp):
// OGB's num-node-list, the largest id of a SNAP edge list, the largest LightGCN item id and MUSAE
// feature ids are checked against the memory limit (runtime/core/memory_limit.hpp) before any
// per-node array exists. Expected byte counts by hand: |V| * 16.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "formats/formats.hpp"
#include "runtime/core/error.hpp"
#include "tests/common/files.hpp"

namespace coopgnn {
namespace {

using test::error_of;
using test::in_limited_child;
using test::scoped_env;
using test::temp_dir;
using test::write_text;
using ::testing::HasSubstr;

constexpr std::uint64_t kSlack = 32u << 20;

TEST(ConvertSizes, OgbNodeCountOf2Pow50WithOneEdge) {
  temp_dir d;
  write_text(d / "raw/num-node-list.csv", "1125899906842624\n");
  write_text(d / "raw/edge.csv", "0,1\n");
  std::string const msg =
      in_limited_child(kSlack, [&] { return error_of([&] { (void)convert_ogb(d.path(), {}); }); });
  EXPECT_THAT(msg, HasSubstr((d / "raw/num-node-list.csv").string() +
                             ": node count = 1125899906842624 needs 18014398509481984 bytes "
                             "(16384.00 TiB; 16 bytes per node"));
}

TEST(ConvertSizes, OgbNodeCountAgainstAnInjectedLimit) {
  temp_dir d;
  write_text(d / "raw/num-node-list.csv", "4\n");
  write_text(d / "raw/edge.csv", "0,1\n1,2\n2,3\n");
  {
    scoped_env const env("COOPGNN_MEMORY_LIMIT", "63");
    EXPECT_THAT(error_of([&] { (void)convert_ogb(d.path(), {}); }),
                HasSubstr("node count = 4 needs 64 bytes (64 B; 16 bytes per node: an int64 label "
                          "and an int64 CSC offset each) but only 63 bytes (63 B) of memory are "
                          "available (COOPGNN_MEMORY_LIMIT;"));
  }
  scoped_env const env("COOPGNN_MEMORY_LIMIT", "64");
  EXPECT_EQ(convert_ogb(d.path(), {}).num_nodes, 4);
}

// Found by the ogb fuzz target: a label of 42 digits parsed as a double (2.2e41) was cast to
// int64 (undefined behaviour); inf likewise. A label near 2^63 overflowed max + 1.
TEST(ConvertSizes, OgbLabelsOutsideInt64AndHugeClassIds) {
  temp_dir d;
  write_text(d / "raw/num-node-list.csv", "2\n");
  write_text(d / "raw/edge.csv", "0,1\n");
  for (const char* bad : {"222222222222222222222222222222222222222222", "inf", "1e300"}) {
    SCOPED_TRACE(bad);
    write_text(d / "raw/node-label.csv", std::string(bad) + "\n0\n");
    EXPECT_THAT(
        error_of([&] { (void)convert_ogb(d.path(), {}); }),
        HasSubstr(fmt::format("node-label.csv:1: label '{}' is not an integer class id", bad)));
  }
  write_text(d / "raw/node-label.csv", "9223372036854775807\n0\n");
  EXPECT_THAT(error_of([&] { (void)convert_ogb(d.path(), {}); }),
              HasSubstr("node-label.csv: class id 9223372036854775807 is too large (at most "
                        "2147483646)"));
  write_text(d / "raw/node-label.csv", "2147483646\n0\n");
  EXPECT_EQ(convert_ogb(d.path(), {}).num_classes, 2147483647);
}

TEST(ConvertSizes, SnapIdsImplyingHugeVertexCounts) {
  temp_dir d;
  write_text(d / "e.txt", "0 1000000000000000\n");
  EXPECT_THAT(in_limited_child(
                  kSlack, [&] { return error_of([&] { (void)convert_snap(d / "e.txt", {}); }); }),
              HasSubstr((d / "e.txt").string() +
                        ": |V| (1 + the largest vertex id) = 1000000000000001 needs "
                        "16000000000000016 bytes"));
  // The largest int64 id: |V| would overflow; refused whatever the memory.
  write_text(d / "e.txt", "0 9223372036854775807\n");
  scoped_env const env("COOPGNN_MEMORY_LIMIT", "18446744073709551615");
  EXPECT_THAT(error_of([&] { (void)convert_snap(d / "e.txt", {}); }),
              HasSubstr("|V| (1 + the largest vertex id) = 9223372036854775807 needs >= 2^64 "
                        "bytes"));
}

TEST(ConvertSizes, LightgcnItemIdImplyingHugeVertexCount) {
  temp_dir d;
  write_text(d / "train.txt", "0 1000000000000000\n");
  write_text(d / "test.txt", "0 1\n");
  // users 1, items 10^15 + 1: |V| = 10^15 + 2.
  EXPECT_THAT(in_limited_child(
                  kSlack, [&] { return error_of([&] { (void)convert_lightgcn(d.path(), {}); }); }),
              HasSubstr("test.txt: |V| (users + 1 + the largest item id) = 1000000000000002 needs "
                        "16000000000000032 bytes"));
  write_text(d / "train.txt", "0 9223372036854775807\n");
  EXPECT_THAT(error_of([&] { (void)convert_lightgcn(d.path(), {}); }),
              HasSubstr("= 9223372036854775807 needs >= 2^64 bytes"));
}

TEST(ConvertSizes, MusaeFeatureIdAtTheInt64Limit) {
  temp_dir d;
  write_text(d / "g_edges.csv", "id_1,id_2\n0,1\n");
  write_text(d / "g_target.csv", "id,target\n0,1\n1,0\n");
  write_text(d / "g_features.json", R"({"0": [9223372036854775807]})");
  EXPECT_THAT(error_of([&] { (void)convert_musae(d.path(), {}); }),
              HasSubstr("g_features.json: key \"0\": expected an array of non-negative integer "
                        "feature ids"));
}

}  // namespace
}  // namespace coopgnn
