// The MAG240M-shaped heterogeneous generator (runtime/graph/generate_hetero.hpp), checked by
// properties any correct implementation has, and its round trip through the dataset layout at
// 2 bytes per feature element.
#include "runtime/graph/generate_hetero.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "runtime/core/error.hpp"
#include "runtime/core/half.hpp"
#include "runtime/graph/npy.hpp"
#include "tests/common/files.hpp"

namespace coopgnn {
namespace {

using ::testing::ElementsAre;

hetero_options small() {
  hetero_options o;
  o.scale = 7;  // 128 papers, 8 authors, 1 institution by default
  o.feature_dim = 10;
  o.classes = 5;
  o.seed = 4;
  return o;
}

TEST(GenerateHetero, TypesRelationsAndEdgesFitTheSchema) {
  hetero_options o = small();
  o.authors = 20;
  o.institutions = 3;
  dataset const ds = generate_hetero(o);
  ASSERT_TRUE(ds.hetero.has_value());
  const hetero_schema& h = *ds.hetero;
  EXPECT_THAT(h.node_types, ElementsAre("paper", "author", "institution"));
  EXPECT_THAT(h.node_offsets, ElementsAre(0, 128, 148, 151));
  EXPECT_EQ(ds.num_nodes, 151);
  ASSERT_EQ(h.edge_types.size(), 5U);
  validate_dataset(ds, "generated");  // every edge fits its edge type's ends
  // Per relation: the reverse relations mirror their forward ones edge for edge.
  std::map<std::int32_t, std::set<std::pair<vid_t, vid_t>>> rel;
  for (std::size_t e = 0; e < ds.src.size(); ++e) rel[h.edge_type[e]].emplace(ds.src[e], ds.dst[e]);
  for (std::int32_t r : {1, 3}) {
    ASSERT_FALSE(rel[r].empty()) << r;
    std::set<std::pair<vid_t, vid_t>> back;
    for (auto [s, d] : rel[r + 1]) back.emplace(d, s);
    EXPECT_EQ(back, rel[r]) << h.edge_types[static_cast<std::size_t>(r)];
  }
  // Citations symmetric; every paper has 1..3 distinct authors; every author one institution.
  for (auto [s, d] : rel[0]) EXPECT_TRUE(rel[0].count({d, s})) << s << " -> " << d;
  std::vector<int> authors(128, 0), institutions(20, 0);
  for (auto [a, p] : rel[1]) ++authors[static_cast<std::size_t>(p)];
  for (auto [a, i] : rel[3]) ++institutions[static_cast<std::size_t>(a - 128)];
  for (int n : authors) EXPECT_TRUE(n >= 1 && n <= 3) << n;
  for (int n : institutions) EXPECT_EQ(n, 1);
  // Labels: papers in [0, 5), the others -1; the split covers the papers only, disjointly.
  for (vid_t v = 0; v < ds.num_nodes; ++v) {
    auto const l = ds.labels[static_cast<std::size_t>(v)];
    if (v < 128) {
      EXPECT_TRUE(l >= 0 && l < 5) << v;
    } else {
      EXPECT_EQ(l, -1) << v;
    }
  }
  EXPECT_EQ(ds.train.size() + ds.valid.size() + ds.test.size(), 128U);
  EXPECT_EQ(ds.train.size(), 13U);  // round(0.1 * 128)
  // Features: papers only, float16, 10 wide, finite and not all zero.
  EXPECT_EQ(h.feature_type(0), feature_dtype::float16);
  EXPECT_EQ(h.feature_dim(0), 10);
  EXPECT_EQ(h.feature_dim(1), 0);
  EXPECT_EQ(h.feature_dim(2), 0);
  EXPECT_EQ(h.features[0].rows(), 0);
  ASSERT_EQ(h.features16[0].rows(), 128);
  int nonzero = 0;
  for (std::uint16_t b : h.features16[0].values()) {
    float const x = half_to_float(b);
    EXPECT_TRUE(std::isfinite(x));
    nonzero += x != 0.f;
  }
  EXPECT_GT(nonzero, 1000);
}

TEST(GenerateHetero, KeyedByTheOptionsAndWrittenAtTwoBytes) {
  dataset const a = generate_hetero(small());
  dataset const b = generate_hetero(small());
  EXPECT_EQ(a.src, b.src);
  EXPECT_EQ(a.dst, b.dst);
  EXPECT_EQ(a.hetero->features16[0].values(), b.hetero->features16[0].values());
  hetero_options other = small();
  other.seed = 5;
  EXPECT_NE(generate_hetero(other).hetero->features16[0].values(),
            a.hetero->features16[0].values());
  test::temp_dir d;
  write_dataset(a, d / "g");
  npy_header const hd = read_npy_header(d / "g" / "data" / "paper_feat.npy");
  EXPECT_EQ(hd.dtype, npy_dtype::float16);
  EXPECT_THAT(hd.shape, ElementsAre(128, 10));
  dataset_read_options ro;
  ro.heterogeneous = true;
  dataset const back = read_dataset(d / "g", ro);
  EXPECT_EQ(back.hetero->features16[0].values(), a.hetero->features16[0].values());
  EXPECT_EQ(back.hetero->feature_type(0), feature_dtype::float16);
  ro.load_features = false;  // headers only: the trainer maps the file
  dataset const mapped = read_dataset(d / "g", ro);
  EXPECT_TRUE(mapped.hetero->features_in_file(0));
  EXPECT_EQ(mapped.hetero->feature_dim(0), 10);
  EXPECT_EQ(mapped.hetero->features16[0].rows(), 0);
}

TEST(GenerateHetero, BadOptionsNameThemselves) {
  hetero_options o = small();
  o.scale = 0;
  EXPECT_THROW((void)generate_hetero(o), logic_error);
  o = small();
  o.authors = 0;
  EXPECT_THROW((void)generate_hetero(o), logic_error);
  o = small();
  o.train_fraction = 0.8;
  o.valid_fraction = 0.5;
  EXPECT_THROW((void)generate_hetero(o), logic_error);
}

}  // namespace
}  // namespace coopgnn
