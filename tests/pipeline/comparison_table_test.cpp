// format_comparison's table (runtime/pipeline/report.hpp): the label column fits the longest
// label, so per-relation rows with long edge-type names keep the value columns aligned.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "runtime/pipeline/report.hpp"

namespace coopgnn {
namespace {

epoch_report typed_report(const std::string& mode, std::int64_t scale) {
  epoch_report r;
  r.mode = mode;
  r.pes = 4;
  r.epoch = 1;
  r.metric_name = "macro_f1";
  r.node_types = {"paper", "author", "subject"};
  r.relations = {"paper:paper-author:author", "author:author-paper:paper",
                 "paper:paper-subject:subject", "subject:subject-paper:paper"};
  r.work.sampled_edges = 100 * scale;
  r.work.sampled_vertices = 50 * scale;
  r.work.feature_rows = 60 * scale;
  r.work.rows_per_type = {30 * scale, 20 * scale, 10 * scale};
  r.work.edges_per_relation = {25 * scale, 25 * scale, 25 * scale, 25 * scale};
  return r;
}

std::vector<std::string> lines_of(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

TEST(ComparisonTable, LabelColumnFitsTheLongestRelationName) {
  std::vector<epoch_report> const finals = {typed_report("cooperative", 1),
                                            typed_report("independent", 2)};
  auto const table = format_comparison(finals, finals);
  // "  edges subject:subject-paper:paper" is 35 characters: the label column is 37 wide.
  std::size_t const width = std::string("  edges subject:subject-paper:paper").size() + 2;
  bool saw_relation = false;
  for (auto const& l : lines_of(table)) {
    ASSERT_GE(l.size(), width) << l;
    // Every line: label, padded to the width, then 18-wide right-aligned cells.
    EXPECT_EQ((l.size() - width) % 18, 0u) << l;
    EXPECT_NE(l[width - 1], 'r') << "label runs into the values: " << l;
    if (l.find("edges subject:subject-paper:paper") != std::string::npos) {
      saw_relation = true;
      EXPECT_EQ(l.size(), width + 18) << l;
      EXPECT_EQ(l.substr(l.size() - 5), "2.000") << l;  // 50 / 25
      EXPECT_EQ(l.substr(0, width), "  edges subject:subject-paper:paper  ");
    }
  }
  EXPECT_TRUE(saw_relation) << table;
}

TEST(ComparisonTable, ShortLabelsKeepTheTwentyEightColumnLayout) {
  epoch_report a;
  a.mode = "cooperative";
  a.pes = 2;
  a.epoch = 1;
  a.metric_name = "accuracy";
  auto const table = format_comparison({a}, {a});
  for (auto const& l : lines_of(table)) EXPECT_EQ(l.size(), 28u + 18u) << l;
}

}  // namespace
}  // namespace coopgnn
