// `coopgnn convert --from lightgcn` (formats/formats.hpp): a hand-written user-item
// fixture with hand-computed vertices, edges and link task, every rejected input, and the link
// task as `coopgnn info` prints it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "formats/formats.hpp"
#include "runtime/core/error.hpp"
#include "runtime/graph/dataset.hpp"
#include "tests/common/files.hpp"
#include "tools/coopgnn/info.hpp"
namespace coopgnn {
namespace {

using test::error_of;
using test::temp_dir;
using test::write_text;

using ::testing::HasSubstr;

TEST(ConvertLightgcn, HandWrittenFixture) {
  temp_dir d;
  // 3 users; items 0..4 (4 only in test): I = 5, items are vertices 3..7.
  write_text(d / "train.txt", "0 0 2\n1 1 2 3\n2 0\n\n");
  write_text(d / "test.txt", "1 4 0\n0 3\n");
  convert_report rep;
  dataset const ds = convert_lightgcn(d.path(), {}, &rep);
  EXPECT_EQ(ds.num_nodes, 8);
  // Train pairs (user, 3 + item): (0,3) (0,5) (1,4) (1,5) (1,6) (2,3), both directions, sorted.
  EXPECT_EQ(ds.src, (std::vector<vid_t>{0, 0, 1, 1, 1, 2, 3, 3, 4, 5, 5, 6}));
  EXPECT_EQ(ds.dst, (std::vector<vid_t>{3, 5, 4, 5, 6, 3, 0, 2, 1, 0, 1, 1}));
  ASSERT_TRUE(ds.link.has_value());
  const link_task& lt = *ds.link;
  EXPECT_EQ(lt.train.src, (std::vector<vid_t>{0, 0, 1, 1, 1, 2}));
  EXPECT_EQ(lt.train.dst, (std::vector<vid_t>{3, 5, 4, 5, 6, 3}));
  EXPECT_EQ(lt.test.src, (std::vector<vid_t>{1, 1, 0}));  // file order
  EXPECT_EQ(lt.test.dst, (std::vector<vid_t>{7, 3, 6}));
  EXPECT_TRUE(lt.test.labels.empty());
  EXPECT_TRUE(lt.test.indexes.empty());
  EXPECT_TRUE(lt.valid.empty());
  EXPECT_EQ(lt.item_begin, 3);
  EXPECT_EQ(lt.item_end, 8);
  EXPECT_EQ(ds.feature_dim(), 0);
  EXPECT_TRUE(ds.labels.empty());
  EXPECT_EQ(rep.edges.edges_read, 6);
  EXPECT_EQ(rep.edges.edges_final, 12);
  EXPECT_EQ(rep.files_read.size(), 2u);
  // It survives the dataset directory, and info reports it.
  temp_dir out;
  write_dataset(ds, out.path());
  dataset const back = read_dataset(out.path());
  ASSERT_TRUE(back.link.has_value());
  EXPECT_EQ(back.link->test.dst, lt.test.dst);
  EXPECT_EQ(back.link->item_begin, 3);
  dataset_info const info = compute_info(back);
  EXPECT_TRUE(info.link.present);
  EXPECT_EQ(info.link.train, 6);
  EXPECT_EQ(info.link.test.positives, 3);
  std::string const table = format_info_table(info);
  EXPECT_THAT(table, HasSubstr("users [0, 3) (3), items [3, 8) (5)"));
  EXPECT_THAT(table, HasSubstr("link test        3 pairs, 3 positives"));
  EXPECT_THAT(info_to_json(info), HasSubstr("\"items\":[3,8]"));
}

TEST(ConvertLightgcn, InfoCountsNegativesPerQuery) {
  dataset ds;
  ds.name = "q";
  ds.num_nodes = 4;
  link_task lt;
  lt.valid.src = {0, 0, 0, 1, 1};
  lt.valid.dst = {1, 2, 3, 2, 0};
  lt.valid.labels = {1, 0, 0, 1, 0};
  lt.valid.indexes = {0, 0, 0, 1, 1};
  ds.link = lt;
  dataset_info const i = compute_info(ds);
  EXPECT_EQ(i.link.valid.queries, 2);
  EXPECT_EQ(i.link.valid.neg_min, 1);
  EXPECT_EQ(i.link.valid.neg_max, 2);
  EXPECT_THAT(format_info_table(i), HasSubstr("2 queries, 1..2 negatives each"));
}

TEST(ConvertLightgcn, RejectedInputs) {
  temp_dir d;
  auto err = [&] { return error_of([&] { (void)convert_lightgcn(d.path(), {}); }); };
  EXPECT_THAT(err(), HasSubstr("train.txt: missing file"));
  write_text(d / "train.txt", "0 1\n1 2\n");
  EXPECT_THAT(err(), HasSubstr("test.txt: missing file"));
  write_text(d / "test.txt", "");
  EXPECT_THAT(err(), HasSubstr("test.txt: empty file"));
  write_text(d / "test.txt", "\n\n");
  EXPECT_THAT(err(), HasSubstr("test.txt: empty file"));
  write_text(d / "test.txt", "0 1\n2 0\n");
  EXPECT_THAT(err(), HasSubstr("test.txt:2: user id 2 is out of range: train.txt has 2 users"));
  write_text(d / "test.txt", "0 x\n");
  EXPECT_THAT(err(), HasSubstr("test.txt:1: item id 'x' is not an integer"));
  write_text(d / "test.txt", "0 1\n");
  write_text(d / "train.txt", "0 1\n2 2\n");
  EXPECT_THAT(err(), HasSubstr("train.txt:2: user id 2, expected 1"));
  write_text(d / "train.txt", "0 1\n1 -2\n");
  EXPECT_THAT(err(), HasSubstr("train.txt:2: item id -2 is a negative vertex id"));
  write_text(d / "train.txt", "0 1.5\n");
  EXPECT_THAT(err(), HasSubstr("train.txt:1: item id '1.5' is not an integer"));
  write_text(d / "train.txt", "");
  EXPECT_THAT(err(), HasSubstr("train.txt: empty file"));
  write_text(d / "train.txt", "0\n1\n");
  EXPECT_THAT(err(), HasSubstr("train.txt: no interactions"));
  EXPECT_THAT(error_of([&] { (void)convert_lightgcn(d / "nope", {}); }),
              HasSubstr("nope: not a directory"));
}

}  // namespace
}  // namespace coopgnn
