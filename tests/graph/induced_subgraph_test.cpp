// A TMA trainer's local graph (runtime/graph/partition.hpp, induced_subgraph): every part of a
// hand-made user-item graph against a brute-force construction (relabelling by a std::map built
// from the membership set, kept edges, features, labels, splits, kept train pairs, item range),
// one part spelled out by hand, features read from a left-in-file .npy, the empty part, and the
// errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <vector>

#include "runtime/core/error.hpp"
#include "runtime/graph/dataset.hpp"
#include "runtime/graph/npy.hpp"
#include "runtime/graph/partition.hpp"
#include "tests/common/files.hpp"

namespace coopgnn {
namespace {

using ::testing::HasSubstr;

constexpr std::int64_t kCols = 3;

/// Self-verifying feature value of (vertex, column).
float feature_of(vid_t v, std::int64_t c) { return static_cast<float>(10 * v + c); }

/// 8 vertices: users 0..3, items 4..7; duplicate and self-loop edges; labels with an unknown;
/// a link task with train, valid and test pairs.
dataset hand_made() {
  dataset ds;
  ds.name = "toy";
  ds.num_nodes = 8;
  std::vector<std::pair<vid_t, vid_t>> const edges = {{0, 4}, {4, 0}, {2, 6}, {6, 2},
                                                      {1, 5}, {3, 7}, {0, 7}, {7, 2},
                                                      {2, 2}, {5, 4}, {0, 4}, {6, 7}};
  for (auto [u, v] : edges) {
    ds.src.push_back(u);
    ds.dst.push_back(v);
  }
  ds.features = matrix<float>(8, kCols);
  for (vid_t v = 0; v < 8; ++v) {
    for (std::int64_t c = 0; c < kCols; ++c) ds.features(v, c) = feature_of(v, c);
  }
  ds.feature_cols = kCols;
  ds.labels = {0, 1, 2, 0, 1, 2, 0, -1};
  ds.num_classes = 3;
  ds.train = {2, 0, 1, 5, 3};  // vertex 7 (no label) in no split
  ds.valid = {4};
  ds.test = {6};
  link_task t;
  t.name = "rec";
  t.train.src = {0, 1, 2, 0, 3, 2};
  t.train.dst = {4, 5, 6, 7, 4, 7};
  t.valid.src = {0};
  t.valid.dst = {6};
  t.test.src = {2};
  t.test.dst = {4};
  t.item_begin = 4;
  t.item_end = 8;
  ds.link = t;
  return ds;
}

std::vector<std::int32_t> const kParts = {1, 0, 1, 2, 1, 0, 1, 1};

/// The expected subgraph, built independently of the code under test.
dataset brute_force(const dataset& ds, const std::vector<std::int32_t>& parts, std::int32_t k) {
  std::set<vid_t> members;
  for (vid_t v = 0; v < ds.num_nodes; ++v) {
    if (parts[static_cast<std::size_t>(v)] == k) members.insert(v);
  }
  std::map<vid_t, vid_t> local;
  for (vid_t v : members) local.emplace(v, static_cast<vid_t>(local.size()));  // ascending
  auto in = [&](vid_t v) { return members.count(v) != 0; };
  dataset out;
  out.num_nodes = static_cast<vid_t>(members.size());
  for (std::size_t e = 0; e < ds.src.size(); ++e) {
    if (in(ds.src[e]) && in(ds.dst[e])) {
      out.src.push_back(local.at(ds.src[e]));
      out.dst.push_back(local.at(ds.dst[e]));
    }
  }
  out.features = matrix<float>(out.num_nodes, kCols);
  for (auto [g, l] : local) {
    for (std::int64_t c = 0; c < kCols; ++c) out.features(l, c) = feature_of(g, c);
    out.labels.push_back(ds.labels[static_cast<std::size_t>(g)]);
  }
  auto split = [&](const std::vector<vid_t>& s) {
    std::vector<vid_t> r;
    for (vid_t v : s) {
      if (in(v)) r.push_back(local.at(v));
    }
    return r;
  };
  out.train = split(ds.train);
  out.valid = split(ds.valid);
  out.test = split(ds.test);
  link_task t;
  for (std::size_t i = 0; i < ds.link->train.src.size(); ++i) {
    vid_t const u = ds.link->train.src[i], v = ds.link->train.dst[i];
    if (in(u) && in(v)) {
      t.train.src.push_back(local.at(u));
      t.train.dst.push_back(local.at(v));
    }
  }
  vid_t users = 0, items = 0;
  for (vid_t v : members) (v < ds.link->item_begin ? users : items) += 1;
  if (items > 0) {
    t.item_begin = users;
    t.item_end = users + items;
  }
  out.link = t;
  return out;
}

void expect_same(const dataset& got, const dataset& want) {
  EXPECT_EQ(got.num_nodes, want.num_nodes);
  EXPECT_EQ(got.src, want.src);
  EXPECT_EQ(got.dst, want.dst);
  ASSERT_EQ(got.features.rows(), want.features.rows());
  ASSERT_EQ(got.feature_dim(), kCols);
  for (std::int64_t r = 0; r < want.features.rows(); ++r) {
    for (std::int64_t c = 0; c < kCols; ++c) {
      EXPECT_EQ(got.features(r, c), want.features(r, c)) << "row " << r << " col " << c;
    }
  }
  EXPECT_EQ(got.labels, want.labels);
  EXPECT_EQ(got.num_classes, 3);
  EXPECT_EQ(got.train, want.train);
  EXPECT_EQ(got.valid, want.valid);
  EXPECT_EQ(got.test, want.test);
  ASSERT_TRUE(got.link.has_value());
  EXPECT_EQ(got.link->name, "rec");
  EXPECT_EQ(got.link->train.src, want.link->train.src);
  EXPECT_EQ(got.link->train.dst, want.link->train.dst);
  EXPECT_TRUE(got.link->valid.empty()) << "trainers never evaluate";
  EXPECT_TRUE(got.link->test.empty()) << "trainers never evaluate";
  EXPECT_EQ(got.link->item_begin, want.link->item_begin);
  EXPECT_EQ(got.link->item_end, want.link->item_end);
}

TEST(InducedSubgraph, EveryPartMatchesTheBruteForceSubgraph) {
  dataset const ds = hand_made();
  ASSERT_NO_THROW(validate_dataset(ds, ds.name));
  std::int64_t vertices = 0;
  for (std::int32_t k = 0; k < 4; ++k) {  // part 3 has no vertex
    std::vector<vid_t> ids;
    dataset const sub = induced_subgraph(ds, kParts, k, &ids);
    SCOPED_TRACE(::testing::Message() << "part " << k);
    EXPECT_EQ(sub.name, "toy/part" + std::to_string(k));
    expect_same(sub, brute_force(ds, kParts, k));
    ASSERT_EQ(static_cast<vid_t>(ids.size()), sub.num_nodes);
    for (std::size_t i = 0; i < ids.size(); ++i) {
      EXPECT_EQ(kParts[static_cast<std::size_t>(ids[i])], k);
      if (i > 0) {
        EXPECT_LT(ids[i - 1], ids[i]) << "local ids not in ascending global order";
      }
    }
    vertices += sub.num_nodes;
    if (sub.num_nodes > 0) {
      EXPECT_NO_THROW(validate_dataset(sub, sub.name));
    }
  }
  EXPECT_EQ(vertices, ds.num_nodes);
}

TEST(InducedSubgraph, PartOneSpelledOut) {
  std::vector<vid_t> ids;
  dataset const sub = induced_subgraph(hand_made(), kParts, 1, &ids);
  EXPECT_EQ(ids, (std::vector<vid_t>{0, 2, 4, 6, 7}));
  // (0,4) (4,0) (2,6) (6,2) (0,7) (7,2) (2,2) (0,4) (6,7) in the graph's order.
  EXPECT_EQ(sub.src, (std::vector<vid_t>{0, 2, 1, 3, 0, 4, 1, 0, 3}));
  EXPECT_EQ(sub.dst, (std::vector<vid_t>{2, 0, 3, 1, 4, 1, 1, 2, 4}));
  EXPECT_EQ(sub.features(3, 2), 62.0f);  // global vertex 6, column 2
  EXPECT_EQ(sub.labels, (std::vector<std::int64_t>{0, 2, 1, 0, -1}));
  EXPECT_EQ(sub.train, (std::vector<vid_t>{1, 0}));
  EXPECT_EQ(sub.valid, (std::vector<vid_t>{2}));
  EXPECT_EQ(sub.test, (std::vector<vid_t>{3}));
  // Train pairs (0,4) (2,6) (0,7) (2,7); users {0, 2}, items {4, 6, 7}.
  EXPECT_EQ(sub.link->train.src, (std::vector<vid_t>{0, 1, 0, 1}));
  EXPECT_EQ(sub.link->train.dst, (std::vector<vid_t>{2, 3, 4, 4}));
  EXPECT_EQ(sub.link->item_begin, 2);
  EXPECT_EQ(sub.link->item_end, 5);
}

TEST(InducedSubgraph, ReadsOnlyThePartsRowsOfFeaturesLeftInTheirFile) {
  test::temp_dir d;
  dataset ds = hand_made();
  std::vector<float> flat(ds.features.data(), ds.features.data() + 8 * kCols);
  ds.feature_file = d / "feat.npy";
  std::vector<std::int64_t> const shape = {8, kCols};
  write_npy(ds.feature_file, std::span<const float>(flat), shape);
  ds.features = matrix<float>();
  ASSERT_FALSE(ds.features_in_memory());
  for (std::int32_t k = 0; k < 4; ++k) {
    SCOPED_TRACE(::testing::Message() << "part " << k);
    dataset const sub = induced_subgraph(ds, kParts, k);
    EXPECT_TRUE(sub.feature_file.empty());
    EXPECT_EQ(sub.num_nodes == 0, !sub.features_in_memory());
    expect_same(sub, brute_force(hand_made(), kParts, k));
  }
  // A file that does not hold [|V|, F] float32 is named.
  std::vector<std::int64_t> const short_shape = {4, 2 * kCols};
  write_npy(ds.feature_file, std::span<const float>(flat).first(24), short_shape);
  EXPECT_THAT(test::error_of([&] { (void)induced_subgraph(ds, kParts, 1); }),
              HasSubstr("feat.npy"));
}

TEST(InducedSubgraph, Float16RowsStayFloat16InMemoryAndFromTheFile) {
  test::temp_dir d;
  dataset ds = hand_made();
  // Row v = float16 bits 0x3C00 + 8 v + c (distinct, exact as stored).
  std::vector<std::uint16_t> bits;
  for (vid_t v = 0; v < 8; ++v) {
    for (std::int64_t c = 0; c < kCols; ++c)
      bits.push_back(static_cast<std::uint16_t>(0x3C00 + 8 * v + c));
  }
  ds.features = {};
  ds.features16 = matrix<std::uint16_t>(8, kCols, bits);
  ds.feature_type = feature_dtype::float16;
  std::vector<vid_t> ids;
  dataset const mem = induced_subgraph(ds, kParts, 1, &ids);
  ASSERT_FALSE(ids.empty());
  EXPECT_EQ(mem.feature_type, feature_dtype::float16);
  EXPECT_EQ(mem.features.size(), 0);
  ASSERT_EQ(mem.features16.rows(), static_cast<std::int64_t>(ids.size()));
  for (std::size_t i = 0; i < ids.size(); ++i) {
    for (std::int64_t c = 0; c < kCols; ++c) {
      EXPECT_EQ(mem.features16(static_cast<std::int64_t>(i), c), ds.features16(ids[i], c));
    }
  }
  // Left in a '<f2' file: only the part's rows are read, at 2 bytes each.
  ds.feature_file = d / "feat.npy";
  std::vector<std::int64_t> const shape = {8, kCols};
  write_npy_bits16(ds.feature_file, bits, shape);
  ds.features16 = {};
  dataset const file = induced_subgraph(ds, kParts, 1);
  EXPECT_EQ(file.features16.values(), mem.features16.values());
  EXPECT_EQ(file.feature_type, feature_dtype::float16);
  // The feature-mean distance widens each element (no labels: features decide).
  ds.features16 = matrix<std::uint16_t>(8, kCols, bits);
  ds.labels.clear();
  ds.num_classes = 0;
  auto const rep = partition_summary(ds, kParts, 4);
  EXPECT_EQ(rep.distance_kind, "feature_l2");
  ASSERT_EQ(rep.parts[1].feature_mean.size(), static_cast<std::size_t>(kCols));
  double want = 0;
  for (vid_t v : ids) want += half_to_float(ds.features16(v, 0));
  EXPECT_DOUBLE_EQ(rep.parts[1].feature_mean[0], want / static_cast<double>(ids.size()));
}

TEST(InducedSubgraph, AnEmptyPartGivesAnEmptyDataset) {
  std::vector<vid_t> ids = {99};
  dataset const sub = induced_subgraph(hand_made(), kParts, 7, &ids);
  EXPECT_EQ(sub.name, "toy/part7");
  EXPECT_EQ(sub.num_nodes, 0);
  EXPECT_TRUE(ids.empty());
  EXPECT_EQ(sub.num_edges(), 0);
  EXPECT_EQ(sub.feature_dim(), kCols);
  EXPECT_TRUE(sub.train.empty());
  ASSERT_TRUE(sub.link.has_value());
  EXPECT_TRUE(sub.link->train.empty());
  EXPECT_FALSE(sub.link->user_item());
}

TEST(InducedSubgraph, ErrorsNameTheProblem) {
  dataset const ds = hand_made();
  std::vector<std::int32_t> const short_parts(7, 0);
  EXPECT_THAT(test::error_of<logic_error>([&] { (void)induced_subgraph(ds, short_parts, 0); }),
              HasSubstr("parts has 7 entries for |V| = 8"));
  EXPECT_THAT(test::error_of<logic_error>([&] { (void)induced_subgraph(ds, kParts, -1); }),
              HasSubstr("part -1 is negative"));
  auto bad = kParts;
  bad[5] = -2;
  EXPECT_THAT(test::error_of<logic_error>([&] { (void)induced_subgraph(ds, bad, 0); }),
              HasSubstr("vertex 5 has the negative part id -2"));
}

}  // namespace
}  // namespace coopgnn
