// Heterogeneous datasets in GraphBolt's typed OnDiskDataset layout (hetero_schema): the round
// trip through write_dataset / read_dataset, the global id layout, and the errors of a typed
// metadata.yaml. Expected values are written out by hand.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "runtime/core/error.hpp"
#include "runtime/graph/dataset.hpp"
#include "tests/common/files.hpp"

namespace coopgnn {
namespace {

namespace fs = std::filesystem;
using test::error_of;
using test::read_text;
using test::temp_dir;
using test::write_text;
using ::testing::HasSubstr;

/// user (3 vertices, global 0..2, 2 feature columns), item (2 vertices, global 3..4, none);
/// relations user:buys:item (0 -> 3, 2 -> 4), item:bought-by:user (the reverses) and
/// user:follows:user (1 -> 0); users labelled, train {0}, valid {1}, test {2}.
dataset tiny() {
  dataset ds;
  ds.name = "tiny";
  ds.num_nodes = 5;
  hetero_schema h;
  h.node_types = {"user", "item"};
  h.node_offsets = {0, 3, 5};
  h.edge_types = {"user:buys:item", "item:bought-by:user", "user:follows:user"};
  ds.src = {0, 2, 3, 4, 1};
  ds.dst = {3, 4, 0, 2, 0};
  h.edge_type = {0, 0, 1, 1, 2};
  h.features = {matrix<float>(3, 2, {1, 2, 3, 4, 5, 6}), matrix<float>()};
  h.feature_names = {"feat", ""};
  h.target_type = "user";
  ds.hetero = std::move(h);
  ds.labels = {1, 0, 1, -1, -1};
  ds.num_classes = 2;
  ds.train = {0};
  ds.valid = {1};
  ds.test = {2};
  return ds;
}

dataset_read_options typed() {
  dataset_read_options o;
  o.heterogeneous = true;
  return o;
}

void replace_in(const fs::path& p, const std::string& from, const std::string& to) {
  std::string s = read_text(p);
  auto const at = s.find(from);
  ASSERT_NE(at, std::string::npos) << from;
  s.replace(at, from.size(), to);
  write_text(p, s);
}

TEST(HeteroIo, RoundTripKeepsTypesIdsFeaturesAndSplit) {
  temp_dir d;
  dataset const ds = tiny();
  write_dataset(ds, d / "t");
  std::string const yaml = read_text(d / "t" / "metadata.yaml");
  EXPECT_THAT(yaml, HasSubstr("type: user:buys:item"));
  EXPECT_THAT(yaml, HasSubstr("path: edges/user__buys__item.npy"));
  dataset const back = read_dataset(d / "t", typed());
  ASSERT_TRUE(back.hetero.has_value());
  const hetero_schema& h = *back.hetero;
  EXPECT_EQ(h.node_types, (std::vector<std::string>{"user", "item"}));
  EXPECT_EQ(h.node_offsets, (std::vector<vid_t>{0, 3, 5}));
  EXPECT_EQ(h.edge_types, ds.hetero->edge_types);
  EXPECT_EQ(back.src, ds.src);
  EXPECT_EQ(back.dst, ds.dst);
  EXPECT_EQ(h.edge_type, ds.hetero->edge_type);
  EXPECT_EQ(h.features[0].values(), (std::vector<float>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(h.features[1].rows(), 0);
  EXPECT_EQ(h.target_type, "user");
  EXPECT_EQ(back.labels, ds.labels);
  EXPECT_EQ(back.train, ds.train);
  EXPECT_EQ(back.valid, ds.valid);
  EXPECT_EQ(back.test, ds.test);
  EXPECT_EQ(back.features.rows(), 0);
  // The item type has no input feature: said, not silent.
  ASSERT_EQ(back.notes.size(), 1u);
  EXPECT_THAT(back.notes[0], HasSubstr("node type 'item' has no feature named 'feat'"));
  EXPECT_EQ(h.type_of(0), 0);
  EXPECT_EQ(h.type_of(2), 0);
  EXPECT_EQ(h.type_of(3), 1);
  EXPECT_EQ(h.type_of(4), 1);
  // Default reads refuse typed graphs.
  EXPECT_THAT(error_of([&] { (void)read_dataset(d / "t"); }),
              HasSubstr("2 node types and 3 edge types: a heterogeneous graph"));
}

TEST(HeteroIo, TypedMetadataErrorsNameKeyAndType) {
  temp_dir d;
  auto fresh = [&] {
    fs::remove_all(d / "t");
    write_dataset(tiny(), d / "t");
  };
  auto err = [&] { return error_of([&] { (void)read_dataset(d / "t", typed()); }); };
  fresh();
  replace_in(d / "t" / "metadata.yaml", "type: user:buys:item", "type: user:buys:shop");
  EXPECT_THAT(err(), HasSubstr("graph.edges[0].type 'user:buys:shop': node type 'shop' is not in "
                               "graph.nodes"));
  fresh();
  replace_in(d / "t" / "metadata.yaml", "type: user:buys:item", "type: user-buys-item");
  EXPECT_THAT(err(), HasSubstr("edge type 'user-buys-item' must be 'src_type:relation:dst_type'"));
  fresh();
  // A local id beyond its type's count (item has 2 vertices): edge 0 -> item 2.
  replace_in(d / "t" / "metadata.yaml", "num: 2", "num: 1");
  EXPECT_THAT(err(), HasSubstr("is out of range: ids must be < |V| = 1"));
  fresh();
  replace_in(d / "t" / "metadata.yaml", "num: 3", "num: 4");
  EXPECT_THAT(err(), HasSubstr("feature 'feat' of type 'user' has 3 rows (shape (3, 2)) but the "
                               "type has 4"));
  fresh();
  replace_in(d / "t" / "metadata.yaml", "    train_set:\n      - type: user\n",
             "    train_set:\n      - type: item\n");
  EXPECT_THAT(err(), HasSubstr("holds seeds of type 'user' but earlier sets hold 'item'"));
  fresh();
  replace_in(d / "t" / "metadata.yaml", "  - name: node_classification\n",
             "  - name: node_classification\n    num_classes: 1\n");
  EXPECT_THAT(err(), HasSubstr("out of range"));
}

TEST(HeteroIo, ValidateRejectsAnEdgeOutsideItsRelation) {
  dataset ds = tiny();
  ds.hetero->edge_type[4] = 0;  // 1 -> 0 is user -> user, not user:buys:item
  EXPECT_THAT(error_of([&] { validate_dataset(ds, "tiny"); }),
              HasSubstr("tiny: edge 4 (1 -> 0) does not fit its edge type 0"));
  ds = tiny();
  ds.train = {3};  // an item
  ds.labels[3] = 0;
  EXPECT_THAT(error_of([&] { validate_dataset(ds, "tiny"); }),
              HasSubstr("seed 3 is not of the target type 'user'"));
  EXPECT_THAT(error_of([&] { (void)split_edge_type("a::b", "x"); }),
              HasSubstr("x: edge type 'a::b' must be"));
  auto const parts = split_edge_type("paper:cites:paper", "x");
  EXPECT_EQ(parts[1], "cites");
}

}  // namespace
}  // namespace coopgnn
