// format_comparison's table (pipeline/report.hpp): the label column fits the longest
// label, so per-relation rows with long edge-type names keep the value columns aligned; the time
// ratio row, the cache row only with a cache, and the legend of `compare`.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "pipeline/report.hpp"

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

/// Cooperative at 3 s and independent at 1 s per epoch over 2 epochs; work 100 / 150 edges.
std::vector<epoch_report> timed_modes() {
  epoch_report c, i;
  c.mode = "cooperative";
  i.mode = "independent";
  for (epoch_report* r : {&c, &i}) {
    r->pes = 4;
    r->epoch = 2;
    r->batches = 2;
    r->metric_name = "accuracy";
    r->backend = "host";
    r->work.cache_misses = 10;  // without a cache every row is a miss
  }
  c.epoch_seconds = 6.0;
  i.epoch_seconds = 2.0;
  c.work.sampled_edges = 100;
  i.work.sampled_edges = 150;
  return {c, i};
}

/// The table's line whose label is `label` (trimmed of the padding), or "" when none.
std::string line_of(const std::string& table, const std::string& label) {
  for (auto const& l : lines_of(table)) {
    if (l.rfind(label + "  ", 0) == 0) return l;
  }
  return {};
}

TEST(ComparisonTable, TimeRatioIsCooperativeOverIndependent) {
  auto const runs = timed_modes();
  comparison_setting s;
  auto const table = format_comparison(runs, runs, &s);
  std::string const row = line_of(table, "  epoch time");
  ASSERT_FALSE(row.empty()) << table;
  EXPECT_EQ(row.substr(row.size() - 5), "3.000") << row;  // 3 s / 1 s
  EXPECT_NE(table.find("cooperative/independent:"), std::string::npos) << table;
  // The work ratios keep their direction: independent / cooperative = 150 / 100.
  std::string const edges = line_of(table, "  sampled edges");
  EXPECT_EQ(edges.substr(edges.size() - 5), "1.500") << table;
}

TEST(ComparisonTable, CacheRowOnlyWithACache) {
  auto runs = timed_modes();
  comparison_setting s;
  EXPECT_EQ(format_comparison(runs, runs, &s).find("cache"), std::string::npos);
  s.cache = true;
  EXPECT_NE(line_of(format_comparison(runs, runs, &s), "feature cache hit rate"), "");
  // Without a setting (train's table): the row shows when some run had hits.
  EXPECT_EQ(format_comparison(runs, runs).find("cache"), std::string::npos);
  runs[0].work.cache_hits = 30;
  std::string const row = line_of(format_comparison(runs, runs), "feature cache hit rate");
  ASSERT_NE(row, "");
  EXPECT_NE(row.find("0.7500"), std::string::npos) << row;  // 30 / (30 + 10)
}

TEST(ComparisonTable, LegendSaysWhichIsFasterWhereItRanAndThatAnEpochIsOneBatch) {
  auto const runs = timed_modes();
  comparison_setting s;
  s.hardware_threads = 2;
  s.threads_per_pe = 1;
  s.batch_size = 1024;
  s.train_items = 140;
  auto const legend = format_comparison_legend(runs, s);
  EXPECT_NE(legend.find("cooperative / independent = 3.000, independent is 3.00x faster"),
            std::string::npos)
      << legend;
  EXPECT_NE(legend.find("host backend, 4 PEs x 1 thread on 2 hardware threads: timings are of "
                        "CPU threads sharing cores, not GPUs"),
            std::string::npos)
      << legend;
  EXPECT_NE(legend.find("every epoch is one batch (--batch-size 1024 >= 140 training seeds)"),
            std::string::npos)
      << legend;
  // Enough cores, batches smaller than the training set, the CUDA backend.
  s.hardware_threads = 8;
  s.batch_size = 64;
  auto const roomy = format_comparison_legend(runs, s);
  EXPECT_NE(roomy.find("on 8 hardware threads: timings are of CPU threads, not GPUs"),
            std::string::npos)
      << roomy;
  EXPECT_EQ(roomy.find("one batch"), std::string::npos) << roomy;
  auto gpu = runs;
  for (auto& r : gpu) r.backend = "cuda";
  s.gpus = 4;
  EXPECT_NE(format_comparison_legend(gpu, s).find("cuda backend, 4 PEs on 4 GPUs"),
            std::string::npos);
  // One mode: no ratio to state.
  EXPECT_EQ(format_comparison_legend({runs[0]}, s).find("faster"), std::string::npos);
}

TEST(EpochReport, CommunicationWaitIsReportedBesideCommunicationOrMarkedUnmeasured) {
  epoch_report r = typed_report("cooperative", 1);
  r.epoch = 2;
  r.seconds.communication = 0.5;
  r.seconds.communication_wait = 0.375;
  auto const j = to_json(r);
  EXPECT_DOUBLE_EQ(j["seconds"]["communication"].get<double>(), 0.5);  // transfer + wait
  EXPECT_DOUBLE_EQ(j["seconds"]["communication_wait"].get<double>(), 0.375);
  EXPECT_NE(format_epoch_line(r).find("comm 0.500 (wait 0.375, cpu 0.000)"), std::string::npos)
      << format_epoch_line(r);
  auto const table = format_comparison({r}, {r});
  // Per epoch of the totals: 0.5 / 2 and 0.375 / 2.
  EXPECT_NE(table.find("0.2500"), std::string::npos) << table;
  EXPECT_NE(table.find("0.1875"), std::string::npos) << table;
  // The wait is not a stage of its own: the total counts it once, inside communication.
  EXPECT_DOUBLE_EQ(r.seconds.total(), 0.5);

  r.communication_wait_measured = false;  // NCCL: no arrival time on the host
  EXPECT_TRUE(to_json(r)["seconds"]["communication_wait"].is_null());
  EXPECT_NE(format_epoch_line(r).find("comm 0.500 (wait n/a, cpu 0.000)"), std::string::npos)
      << format_epoch_line(r);
  EXPECT_NE(format_comparison({r}, {r}).find("n/a"), std::string::npos);
}

TEST(EpochReport, CpuSecondsSplitCommunicationFromComputeInTheJsonTheLineAndTheTable) {
  epoch_report r = typed_report("cooperative", 1);
  r.epoch = 4;
  r.seconds.communication = 2.0;
  r.cpu_seconds.communication = 0.25;  // of 2 s in collectives, 0.25 s of CPU
  r.cpu_seconds.sample = 0.5;
  r.cpu_seconds.forward = 1.0;
  r.cpu_seconds.backward = 1.5;
  r.cpu_seconds.optimizer = 0.75;
  auto const j = to_json(r);
  EXPECT_DOUBLE_EQ(j["cpu_seconds"]["communication"].get<double>(), 0.25);
  EXPECT_DOUBLE_EQ(j["cpu_seconds"]["backward"].get<double>(), 1.5);
  EXPECT_NE(format_epoch_line(r).find("comm 2.000 (wait 0.000, cpu 0.250)"), std::string::npos)
      << format_epoch_line(r);
  auto const table = format_comparison({r}, {r});
  // Per epoch: communication CPU 0.25 / 4; compute CPU (0.5 + 1 + 1.5 + 0.75) / 4 = 0.9375.
  EXPECT_NE(table.find("of which cpu s / epoch"), std::string::npos) << table;
  EXPECT_NE(table.find("0.0625"), std::string::npos) << table;
  EXPECT_NE(table.find("0.9375"), std::string::npos) << table;
}

}  // namespace
}  // namespace coopgnn
