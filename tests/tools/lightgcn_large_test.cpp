// The real Gowalla (LightGCN layout, in the raw datasets folder) through `convert --from lightgcn`;
// label `large` (tests/CMakeLists.txt). Expected counts from data/README.md.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "formats/formats.hpp"
#include "runtime/graph/dataset.hpp"
namespace coopgnn {
namespace {

namespace fs = std::filesystem;

TEST(ConvertLightgcnLarge, Gowalla) {
  // The raw datasets folder (COOPGNN_RAW_DATA_DIR, tests/CMakeLists.txt), or
  // $COOPGNN_SHARED_DATA when set.
  const char* env = std::getenv("COOPGNN_SHARED_DATA");
  fs::path const dir =
      (env != nullptr ? fs::path(env) : fs::path(COOPGNN_RAW_DATA_DIR)) / "gowalla";
  if (!fs::is_regular_file(dir / "train.txt")) GTEST_SKIP() << "shared dataset missing: " << dir;
  dataset const ds = convert_lightgcn(dir, {});
  ASSERT_TRUE(ds.link.has_value());
  EXPECT_EQ(ds.link->item_begin, 29858);
  EXPECT_EQ(ds.link->item_end - ds.link->item_begin, 40981);
  EXPECT_EQ(ds.num_nodes, 29858 + 40981);
  EXPECT_EQ(ds.link->train.size(), 810128);
  EXPECT_EQ(ds.link->test.size(), 217242);
  EXPECT_EQ(ds.num_edges(), 2 * 810128);
  EXPECT_TRUE(ds.link->valid.empty());
  // Users on the left, items on the right of every pair.
  for (std::int64_t i = 0; i < ds.link->test.size(); ++i) {
    ASSERT_LT(ds.link->test.src[i], 29858);
    ASSERT_GE(ds.link->test.dst[i], 29858);
  }
}

}  // namespace
}  // namespace coopgnn
