// `coopgnn report` on runs of `coopgnn tma` (bench/drivers/report_tma.hpp): hand-written
// tma.jsonl files (docs/results-schema.md, "tma") in nested directories; the tables carry the
// means, sample stds, loss spreads and F counts worked out by hand below, failed runs are listed
// with their reason and left out of the means, and bench result files still render beside them.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "bench/drivers/report.hpp"
#include "tests/common/files.hpp"

namespace coopgnn {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using json = nlohmann::json;

/// One synthetic run: aggregation g (1-based) is at 2g seconds with validation metric g / 10 and
/// the train losses losses[g - 1] (nullopt = the trainer reported none).
struct tma_usecase {
  std::string dir;
  std::string scheme;
  std::string seed_arg;  ///< appended to the command ("" = no seed given)
  std::vector<int> dropped;
  int trainers = 2;
  std::optional<double> kept_ratio;  ///< nullopt: no partition (ggs)
  std::vector<std::vector<std::optional<double>>> losses;
  double best_test = 0, last_test = 0;
  std::optional<double> convergence;
  int steps_min = 0, steps_max = 0;
  std::string terminated;  ///< non-empty: a "terminated" line with this reason, no final line
};

std::string tma_jsonl(const tma_usecase& u) {
  json start = {{"event", "start"},
                {"scheme", u.scheme},
                {"dataset", "tiny"},
                {"trainers", u.trainers},
                {"parts", u.kept_ratio ? json(u.trainers + u.dropped.size()) : json(nullptr)},
                {"dropped_parts", u.dropped},
                {"interval", 2.0},
                {"time_limit", 6.0},
                {"pes_per_trainer", 1},
                {"mode", "independent"},
                {"batch_size_per_trainer", 256},
                {"parameters", 1000},
                {"command", "coopgnn tma --dataset /data/tiny --scheme " + u.scheme + u.seed_arg},
                {"created", "2026-01-02T03:04:05Z"}};
  if (u.kept_ratio) {
    start["partition"] = {
        {"scheme", "random"},
        {"kept_ratio", *u.kept_ratio},
        {"distance", {{"kind", "class_tv"}, {"max", 0.05}, {"mean", 0.04}, {"pairs", 1}}},
        {"per_part", json::array()},
        {"seconds", 0.01}};
  }
  std::string out = start.dump() + "\n";
  for (std::size_t g = 1; g <= u.losses.size(); ++g) {
    json loss = json::array();
    for (auto const& l : u.losses[g - 1]) loss.push_back(l ? json(*l) : json(nullptr));
    out += json{{"event", "aggregation"},
                {"generation", g},
                {"seconds", 2.0 * static_cast<double>(g)},
                {"command", g == u.losses.size() ? "stop" : "average"},
                {"steps", json::array({10 * g, 8 * g})},
                {"train_loss", loss},
                {"epoch", json::array({g, g})},
                {"evaluated", true},
                {"val_metric", static_cast<double>(g) / 10},
                {"metric", "mrr"},
                {"val", {{"mrr", static_cast<double>(g) / 10}}}}
               .dump() +
           "\n";
  }
  if (!u.terminated.empty()) {
    return out + json{{"event", "terminated"}, {"reason", u.terminated}}.dump() + "\n";
  }
  json fin = {{"event", "final"},
              {"scheme", u.scheme},
              {"metric", "mrr"},
              {"aggregations", u.losses.size()},
              {"bytes_aggregated", 3 * 1024 * 1024},
              {"seconds", 6.1},
              {"convergence_seconds", u.convergence ? json(*u.convergence) : json(nullptr)},
              {"steps", json::array({u.steps_max, u.steps_min})},
              {"steps_min", u.steps_min},
              {"steps_max", u.steps_max},
              {"steps_spread", static_cast<double>(u.steps_max) / u.steps_min},
              {"best", {{"generation", 3}, {"val", 0.3}, {"test", u.best_test}}},
              {"last", {{"generation", 3}, {"val", 0.3}, {"test", u.last_test}}},
              {"evaluated", u.losses.size()},
              {"dropped_parts", u.dropped}};
  if (u.kept_ratio) fin["kept_ratio"] = *u.kept_ratio;
  return out + fin.dump() + "\n";
}

using L = std::vector<std::vector<std::optional<double>>>;

// Loss spreads (max - min over trainers, aggregations with 2+ losses) worked out by hand:
// rt_s1 0.2, (skipped), 0.3 -> mean 0.25; rt_s2 0.4; drops 0.1 each; psgd_fail 0.3 (excluded
// from its group); psgd 0.7; ggs 0.
const std::vector<tma_usecase> kRuns = {
    {"tma/rt_s1",
     "randomtma",
     " --seed 1",
     {},
     2,
     0.5,
     L{{1.0, 0.8}, {0.5, std::nullopt}, {0.6, 0.3}},
     0.5,
     0.45,
     6.0,
     80,
     100},
    {"tma/rt_s2", "randomtma", " --seed 2", {}, 2, 0.7, L{{0.9, 0.5}}, 0.7, 0.7, 10.0, 90, 110},
    {"tma/drop/p0", "randomtma", " --seed 1", {0}, 2, 0.6, L{{0.7, 0.6}}, 0.52, 0.5, 5.0, 50, 60},
    {"tma/drop/p1",
     "randomtma",
     " --seed=1",
     {1},
     2,
     0.6,
     L{{0.7, 0.6}},
     0.48,
     0.4,
     std::nullopt,
     50,
     60},
    {"tma/psgd_fail",
     "psgd-pa",
     " --seed 3",
     {},
     2,
     0.9,
     L{{0.1, 0.4}},
     0,
     0,
     std::nullopt,
     0,
     0,
     "terminated by signal 15"},
    {"tma/psgd", "psgd-pa", " --seed 4 --pes 1", {}, 2, 0.9, L{{0.2, 0.9}}, 0.3, 0.3, 12.0, 40, 50},
    {"ggs", "ggs", "", {}, 2, std::nullopt, L{{0.5, 0.5}}, 0.4, 0.4, 7.0, 30, 30},
};

// A bench work file, to check that bench results still render next to the TMA runs.
constexpr const char* kWork = R"json({
  "bench": "work", "dataset": "tiny", "command": "coopgnn bench work", "fanouts": [5],
  "rows": [{"sampler": "ns", "batch_size": 64, "layer": -1, "vertices": 300, "edges": 320,
            "vertices_per_seed": 4.6875, "edges_per_seed": 5.0}],
  "checks": []
})json";

void write_runs(const test::temp_dir& d) {
  for (auto const& u : kRuns) test::write_text(d / (u.dir + "/tma.jsonl"), tma_jsonl(u));
  test::write_text(d / "work_tiny.json", kWork);
}

/// write_report on `d`: without plots, or (plot_data) writing the plot data and specs while the
/// plots themselves are skipped, the interpreter given not existing.
bench::report_outcome report_on(const test::temp_dir& d, bool plot_data) {
  bench::report_options o;
  o.plots = plot_data;
  o.python = {"/nonexistent/python3"};
  return bench::write_report(d.path(), o);
}

/// The text of report.md from the line starting `heading` to the next "### " heading.
std::string section(const std::string& md, const std::string& heading) {
  auto const from = md.find(heading);
  if (from == std::string::npos) return "<no section " + heading + ">";
  auto const to = md.find("\n### ", from + heading.size());
  return md.substr(from, to == std::string::npos ? std::string::npos : to - from);
}

TEST(ReportTma, TablesCarryHandComputedMeansSpreadsAndCounts) {
  test::temp_dir d;
  write_runs(d);
  auto const r = report_on(d, false);
  EXPECT_EQ(r.files.size(), 1u);
  ASSERT_EQ(r.runs.size(), kRuns.size());
  std::string const md = test::read_text(d / "report.md");
  EXPECT_THAT(md, HasSubstr("from 1 result file(s) and 7 TMA run(s)"));
  EXPECT_THAT(md, HasSubstr("## Time-based model aggregation"));
  EXPECT_THAT(md, HasSubstr("7 run(s) of `coopgnn tma` (1 failed)"));

  // Plain bench results still render.
  EXPECT_THAT(md, HasSubstr("## Dataset tiny"));
  EXPECT_THAT(md, HasSubstr("| 64 | 4.688 | 5 |"));

  // Runs, in order: dataset, scheme (paper order), F, seed, directory.
  std::string const runs = section(md, "### Runs");
  EXPECT_THAT(runs, HasSubstr("| run | dataset | scheme | seed | M | F | r | distance (kind, max) "
                              "| aggregations | best val | best test | last test | convergence s "
                              "| steps min | steps max | steps max/min | train loss spread | "
                              "bytes aggregated | status |"));
  EXPECT_THAT(runs, HasSubstr("| tma/rt_s1 | tiny | randomtma | 1 | 2 | 0 | 0.5 | class_tv 0.05 "
                              "| 3 | 0.3 | 0.5 | 0.45 | 6 | 80 | 100 | 1.25 | 0.25 | 3.00 MiB "
                              "| ok |"));
  EXPECT_THAT(runs, HasSubstr("| tma/drop/p1 | tiny | randomtma | 1 | 2 | 1 | 0.6 | class_tv "
                              "0.05 | 1 | 0.3 | 0.48 | 0.4 | - | 50 | 60 | 1.2 | 0.1 |"));
  EXPECT_THAT(runs, HasSubstr("| ggs | tiny | ggs | default | 2 | 0 | - | - | 1 | 0.3 | 0.4 | "
                              "0.4 | 7 | 30 | 30 | 1 | 0 | 3.00 MiB | ok |"));
  // The failed run: listed, with the aggregations it wrote and its reason.
  EXPECT_THAT(runs, HasSubstr("| tma/psgd_fail | tiny | psgd-pa | 3 | 2 | 0 | 0.9 | class_tv "
                              "0.05 | 1 | - | - | - | - | - | - | - | 0.3 | - | **failed**: "
                              "terminated: terminated by signal 15 |"));
  std::vector<std::string> order;
  for (auto const& n : {"tma/rt_s1 ", "tma/rt_s2 ", "tma/drop/p0 ", "tma/drop/p1 ",
                        "tma/psgd_fail ", "tma/psgd ", "ggs "}) {
    order.push_back(n);
  }
  std::size_t at = 0;
  for (auto const& n : order) {
    auto const pos = runs.find("| " + n + "|");
    ASSERT_NE(pos, std::string::npos) << n;
    EXPECT_GT(pos, at) << n << " out of order";
    at = pos;
  }

  // Per (dataset, scheme, F): randomtma F=0 over seeds 1, 2: best test (0.5, 0.7) -> 0.6 ±
  // sqrt(0.02) = 0.1414; convergence (6, 10) -> 8 ± sqrt(8) = 2.828; r (0.5, 0.7) -> 0.6; steps
  // min (80, 90) -> 85, max (100, 110) -> 105, max/min (1.25, 1.2222) -> 1.236; loss spread
  // (0.25, 0.4) -> 0.325. F=1: best test (0.52, 0.48) -> 0.5 ± 0.02828; convergence only 5 (the
  // other never converged); one seed, two runs. psgd-pa: the failed run is counted, not averaged.
  std::string const groups = section(md, "### Per dataset, scheme and F");
  EXPECT_THAT(groups, HasSubstr("| dataset | scheme | F | r | best test mrr | convergence s | "
                                "steps min | steps max | steps max/min | train loss spread | "
                                "seeds | runs | failed |"));
  EXPECT_THAT(groups, HasSubstr("| tiny | randomtma | 0 | 0.6 | 0.6 ± 0.1414 | 8 ± 2.828 | 85 | "
                                "105 | 1.236 | 0.325 | 2 | 2 | 0 |"));
  EXPECT_THAT(groups, HasSubstr("| tiny | randomtma | 1 | 0.6 | 0.5 ± 0.02828 | 5 | 50 | 60 | "
                                "1.2 | 0.1 | 1 | 2 | 0 |"));
  EXPECT_THAT(groups, HasSubstr("| tiny | psgd-pa | 0 | 0.9 | 0.3 | 12 | 40 | 50 | 1.25 | 0.7 | "
                                "1 | 1 | 1 |"));
  EXPECT_THAT(groups, HasSubstr("| tiny | ggs | 0 | - | 0.4 | 7 | 30 | 30 | 1 | 0 | 1 | 1 | 0 |"));

  // F = 1 against F = 0: only randomtma has both; 0.5 - 0.6 = -0.1.
  std::string const robust = section(md, "### F = 1 against F = 0");
  EXPECT_THAT(robust, HasSubstr("| tiny | randomtma | 0.5 ± 0.02828 | 0.6 ± 0.1414 | -0.1 | 5 | "
                                "8 ± 2.828 | 2 | 2 |"));
  EXPECT_THAT(robust, Not(HasSubstr("psgd-pa")));
  EXPECT_THAT(robust, Not(HasSubstr("| ggs")));

  // Loss discrepancy per run: aggregations, those with 2+ losses, mean, max and last spread.
  std::string const loss = section(md, "### Loss discrepancy across trainers");
  EXPECT_THAT(loss, HasSubstr("| tma/rt_s1 | tiny | randomtma | 1 | 0 | 3 | 2 | 0.25 | 0.3 | 0.3 "
                              "| ok |"));
  EXPECT_THAT(loss, HasSubstr("| tma/psgd_fail | tiny | psgd-pa | 3 | 0 | 1 | 1 | 0.3 | 0.3 | "
                              "0.3 | failed |"));

  // Provenance and no plots asked for.
  EXPECT_THAT(md, HasSubstr("coopgnn tma --dataset /data/tiny --scheme psgd-pa --seed 4 --pes 1"));
  EXPECT_THAT(md, Not(HasSubstr("### Plots, dataset")));
}

TEST(ReportTma, PlotDataPerDatasetAndSpecs) {
  test::temp_dir d;
  write_runs(d);
  auto const r = report_on(d, true);
  EXPECT_THAT(r.plot_note, HasSubstr("skipped"));
  EXPECT_THAT(test::read_text(d / "report.md"), HasSubstr("| tiny | ggs | 0 | - | 0.4 |"));

  auto const spec = json::parse(test::read_text(d / "plots" / "plots.json"));
  std::vector<std::string> outs;
  json loss_spec;
  for (auto const& p : spec["plots"]) {
    outs.push_back(p["out"]);
    if (p["out"] == "tma_tiny_loss.png") loss_spec = p;
  }
  EXPECT_EQ(outs, (std::vector<std::string>{"work_tiny_per_seed.png", "tma_tiny_val.png",
                                            "tma_tiny_loss.png"}));
  // One loss panel per scheme, from its first finished run.
  ASSERT_EQ(loss_spec["panels"].size(), 3u);
  EXPECT_EQ(loss_spec["panels"][0]["where"]["scheme"], "randomtma");
  EXPECT_EQ(loss_spec["panels"][0]["title"], "randomtma seed 1");
  EXPECT_EQ(loss_spec["panels"][1]["title"], "psgd-pa seed 4");
  EXPECT_EQ(loss_spec["panels"][2]["title"], "ggs seed default");

  std::string const loss = test::read_text(d / "plots" / "tma_tiny_loss.csv");
  EXPECT_THAT(loss, HasSubstr("scheme,trainer,seconds,loss\nrandomtma,0,2,1\nrandomtma,1,2,0.8\n"));
  EXPECT_THAT(loss, HasSubstr("randomtma,0,4,0.5\nrandomtma,0,6,0.6\n"));  // null skipped
  EXPECT_THAT(loss, Not(HasSubstr("randomtma,1,4,")));
  EXPECT_THAT(loss, HasSubstr("psgd-pa,1,2,0.9\n"));
  EXPECT_THAT(loss, Not(HasSubstr("psgd-pa,0,2,0.1")));    // the failed run
  EXPECT_THAT(loss, Not(HasSubstr("randomtma,0,2,0.9")));  // only the first seed

  std::string const val = test::read_text(d / "plots" / "tma_tiny_val.csv");
  EXPECT_THAT(val,
              HasSubstr("run,scheme,label,seconds,val\nr0,randomtma,randomtma seed 1,2,0.1\n"));
  EXPECT_THAT(val, HasSubstr(",randomtma,randomtma seed 1 drop 1,2,0.1\n"));
  EXPECT_THAT(val, HasSubstr(",psgd-pa,psgd-pa seed 3,2,0.1\n"));  // failed runs still drawn
}

TEST(ReportTma, FailedRunsOfEveryKindAreListedNotFatal) {
  test::temp_dir d;
  tma_usecase ok = kRuns[0];
  std::string const full = tma_jsonl(ok);
  std::string const start = full.substr(0, full.find('\n') + 1);
  test::write_text(d / "a_ok/tma.jsonl", full);
  test::write_text(d / "b_empty/tma.jsonl", "");
  test::write_text(d / "c_timeout/tma.jsonl",
                   start + R"({"event": "trainer_timeout", "rank": 2, "seconds": 40.0, )"
                           R"("last_heartbeat_seconds": 9.5, "heartbeat_timeout": 30})"
                           "\n");
  test::write_text(d / "d_truncated/tma.jsonl", start + R"({"event": "aggregation", "gen)");
  auto const r = report_on(d, false);  // no bench result files: TMA alone
  EXPECT_TRUE(r.files.empty());
  EXPECT_EQ(r.runs.size(), 4u);
  std::string const md = test::read_text(d / "report.md");
  EXPECT_THAT(md, Not(HasSubstr("No result files")));
  EXPECT_THAT(md, HasSubstr("4 run(s) of `coopgnn tma` (3 failed)"));
  EXPECT_THAT(md, HasSubstr("| b_empty | ? | ? | default |"));
  EXPECT_THAT(md,
              HasSubstr("**failed**: empty tma.jsonl (the run stopped before its start line) |"));
  EXPECT_THAT(md, HasSubstr("**failed**: trainer rank 2 sent no heartbeat after 9.5 s (timeout "
                            "30 s) |"));
  EXPECT_THAT(md, HasSubstr("**failed**: no final line after 0 aggregation(s); line 2 is not a "
                            "JSON object |"));
  // Only the finished run enters the means.
  EXPECT_THAT(md, HasSubstr("| tiny | randomtma | 0 | 0.5 | 0.5 | 6 | 80 | 100 | 1.25 | 0.25 | 1 "
                            "| 1 | 2 |"));
  EXPECT_THAT(md, HasSubstr("No (dataset, scheme) has finished runs with both F = 0 and F = 1."));
}

}  // namespace
}  // namespace coopgnn
