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
#include "runtime/graph/npy.hpp"
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

/// tiny() with a typed link task: train user:buys:item (0 -> 3) and user:follows:user (1 -> 0);
/// test: a query on user:buys:item (2 -> 4 positive, 2 -> 3 negative) and one on
/// user:follows:user (2 -> 1 positive, 2 -> 0 negative).
dataset tiny_link() {
  dataset ds = tiny();
  link_task t;
  t.name = "typed_lp";
  t.train.src = {0, 1};
  t.train.dst = {3, 0};
  t.train.relation = {0, 2};
  t.test.src = {2, 2, 2, 2};
  t.test.dst = {4, 3, 1, 0};
  t.test.relation = {0, 0, 2, 2};
  t.test.labels = {1, 0, 1, 0};
  t.test.indexes = {0, 0, 1, 1};
  ds.link = std::move(t);
  return ds;
}

TEST(HeteroIo, TypedLinkSetsRoundTripWithLocalIdsAndRelations) {
  temp_dir d;
  write_dataset(tiny_link(), d / "t");
  std::string const yaml = read_text(d / "t" / "metadata.yaml");
  EXPECT_THAT(yaml, HasSubstr("name: typed_lp"));
  EXPECT_THAT(yaml, HasSubstr("path: set/link_test_user__buys__item_seeds.npy"));
  // Local ids on disk: item 4 is item 1 of its type.
  dataset_read_options o = typed();
  o.task = "typed_lp";
  dataset const back = read_dataset(d / "t", o);
  ASSERT_TRUE(back.link.has_value());
  const link_task& t = *back.link;
  EXPECT_EQ(t.name, "typed_lp");
  EXPECT_EQ(t.train.src, (std::vector<vid_t>{0, 1}));
  EXPECT_EQ(t.train.dst, (std::vector<vid_t>{3, 0}));
  EXPECT_EQ(t.train.relation, (std::vector<std::int32_t>{0, 2}));
  EXPECT_EQ(t.test.src, (std::vector<vid_t>{2, 2, 2, 2}));
  EXPECT_EQ(t.test.dst, (std::vector<vid_t>{4, 3, 1, 0}));
  EXPECT_EQ(t.test.relation, (std::vector<std::int32_t>{0, 0, 2, 2}));
  EXPECT_EQ(t.test.labels, (std::vector<std::int64_t>{1, 0, 1, 0}));
  EXPECT_EQ(t.test.indexes, (std::vector<std::int64_t>{0, 0, 1, 1}));
  // Both tasks by default: the node classification and the typed link task.
  dataset const both = read_dataset(d / "t", typed());
  EXPECT_TRUE(both.link.has_value());
  EXPECT_EQ(both.train, (std::vector<vid_t>{0}));
  auto const seeds = read_npy<std::int64_t>(d / "t" / "set/link_test_user__buys__item_seeds.npy");
  EXPECT_EQ(seeds.data, (std::vector<std::int64_t>{2, 1, 2, 0}));
  EXPECT_EQ(reverse_edge_type(*back.hetero, 0), 1);
  EXPECT_EQ(reverse_edge_type(*back.hetero, 1), 0);
  EXPECT_EQ(reverse_edge_type(*back.hetero, 2), 2);  // user:follows:user is its own reverse
}

TEST(HeteroIo, TypedLinkSetErrorsNameTheFileOrKey) {
  temp_dir d;
  auto fresh = [&] {
    fs::remove_all(d / "t");
    write_dataset(tiny_link(), d / "t");
  };
  dataset_read_options o = typed();
  o.task = "typed_lp";
  auto err = [&] { return error_of([&] { (void)read_dataset(d / "t", o); }); };
  fresh();
  // An item set whose type is no edge type.
  replace_in(d / "t" / "metadata.yaml", "      - type: user:follows:user\n",
             "      - type: user:likes:user\n");
  EXPECT_THAT(err(), HasSubstr(".type 'user:likes:user' is not an edge type of graph.edges"));
  fresh();
  replace_in(d / "t" / "metadata.yaml", "      - type: user:follows:user\n",
             "      - type: user\n");
  EXPECT_THAT(err(), HasSubstr("edge type 'user' must be 'src_type:relation:dst_type'"));
  fresh();
  // A destination id beyond its type (item has 2 vertices; local id 2), naming the file.
  {
    std::vector<std::int64_t> const bad = {2, 2, 2, 0};
    std::int64_t const shape[2] = {2, 2};
    write_npy(d / "t" / "set/link_test_user__buys__item_seeds.npy",
              std::span<const std::int64_t>(bad), shape);
  }
  EXPECT_THAT(err(), HasSubstr("link_test_user__buys__item_seeds.npy"));
  EXPECT_THAT(err(), HasSubstr("pair destination (column 1)"));
  fresh();
  // An untyped link item set on a typed graph.
  replace_in(d / "t" / "metadata.yaml",
             "      - type: user:follows:user\n        data:", "      - data:");
  EXPECT_THAT(err(), HasSubstr("has no type: link-prediction item sets of a heterogeneous graph"));
  // validate_dataset: a pair outside its relation, a missing relation.
  dataset ds = tiny_link();
  ds.link->test.relation[0] = 2;  // 2 -> 4 is user -> item, not user:follows:user
  EXPECT_THAT(error_of([&] { validate_dataset(ds, "tiny"); }),
              HasSubstr("link.test pair 0 (2 -> 4) does not fit its relation 'user:follows:user'"));
  ds = tiny_link();
  ds.link->train.relation.clear();
  EXPECT_THAT(error_of([&] { validate_dataset(ds, "tiny"); }),
              HasSubstr("link.train has 2 pairs but 0 relations"));
  dataset flat;
  flat.name = "flat";
  flat.num_nodes = 3;
  flat.src = {0};
  flat.dst = {1};
  link_task lt;
  lt.train.src = {0};
  lt.train.dst = {1};
  lt.train.relation = {0};
  flat.link = lt;
  EXPECT_THAT(error_of([&] { validate_dataset(flat, "flat"); }),
              HasSubstr("link pairs carry relations but the graph is untyped"));
}

}  // namespace
}  // namespace coopgnn