// `coopgnn bench work` (bench/drivers/work.hpp): counts against a direct count with
// sample_independent, the exact per-batch P W(B/P) >= W(B) check (cooperative paper, section 3),
// the result file's schema keys (docs/results-schema.md) and argument errors.
#include "bench/drivers/work.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "runtime/core/error.hpp"
#include "runtime/core/rng.hpp"
#include "runtime/graph/dataset.hpp"
#include "pipeline/minibatch.hpp"
#include "tests/common/files.hpp"
#include "tests/common/graphs.hpp"
#include "tools/coopgnn/commands.hpp"

namespace coopgnn {
namespace {

using ::testing::HasSubstr;

/// The seed set of the documented rule, built here: candidates ordered by the 64-bit key of
/// draw4(stream(seed, shuffle, 0), v, 0, repeat), ties by id, first b.
std::vector<vid_t> expected_seeds(const std::vector<vid_t>& cand, std::int64_t b,
                                  std::uint64_t seed, std::uint32_t repeat) {
  auto const st = rng::make_stream(seed, rng::purpose::shuffle, 0);
  std::vector<std::pair<std::uint64_t, vid_t>> k;
  for (vid_t v : cand) {
    auto const r = rng::draw4(st, static_cast<std::uint64_t>(v), 0, repeat);
    k.emplace_back((std::uint64_t{r[0]} << 32) | r[1], v);
  }
  std::sort(k.begin(), k.end());
  std::vector<vid_t> out;
  for (std::int64_t i = 0; i < b; ++i) out.push_back(k[i].second);
  return out;
}

struct fixture {
  csc_graph g = test::random_graph(300, 6, 11);
  std::vector<vid_t> cand;
  bench::work_options o;
  fixture() {
    for (vid_t v = 0; v < 300; v += 2) cand.push_back(v);  // 150 candidates, not a power of two
    o.fanouts = {3, 2};
    o.min_batch = 4;
    o.max_batch = 256;  // capped at 150 -> grid 4..128
    o.repeats = 2;
    o.pes = {2, 3, 8};  // 3 does not divide B
    o.seed = 5;
  }
};

TEST(BenchWork, RowsEqualDirectCountsAndSubadditivityHoldsPerBatch) {
  fixture f;
  exec_context const ctx;
  auto const r = bench::run_work_bench(ctx, f.g, f.cand, f.o);
  ASSERT_EQ(r.batch_sizes, (std::vector<std::int64_t>{4, 8, 16, 32, 64, 128}));
  EXPECT_EQ(r.num_candidates, 150);
  // 2 samplers x 6 sizes x (2 layers + total)
  ASSERT_EQ(r.rows.size(), 2u * 6u * 3u);

  std::map<std::tuple<std::string, std::int64_t, int>, bench::work_row> rows;
  for (auto const& w : r.rows) rows[{w.sampler, w.batch_size, w.layer}] = w;
  std::map<std::tuple<std::string, std::string, std::int64_t, int>, bench::work_check> sub;
  for (auto const& c : r.checks) {
    if (c.check == "P*W(B/P)>=W(B)") sub[{c.sampler, c.quantity, c.batch_size, c.pes}] = c;
  }

  int strictly_redundant = 0;
  for (sampler_kind kind : {sampler_kind::ns, sampler_kind::labor}) {
    std::string const name = to_string(kind);
    for (std::int64_t B : r.batch_sizes) {
      std::vector<double> v(2, 0), e(2, 0);
      std::map<int, std::pair<double, double>> lhs;  // P -> (vertices, edges) sums
      double rhs_v = 0, rhs_e = 0;
      for (std::uint32_t rep = 0; rep < 2; ++rep) {
        auto const seeds = expected_seeds(f.cand, B, f.o.seed, rep);
        ASSERT_EQ(std::set<vid_t>(seeds.begin(), seeds.end()).size(), seeds.size());
        batch_key key{kind, f.o.fanouts, f.o.seed, rep};
        auto const whole = sample_independent(ctx, f.g, seeds, key);
        std::int64_t tv = 0, te = 0;
        for (int l = 0; l < 2; ++l) {
          v[l] += static_cast<double>(whole.blocks[l].num_src());
          e[l] += static_cast<double>(whole.blocks[l].num_edges());
          tv += whole.blocks[l].num_src();
          te += whole.blocks[l].num_edges();
        }
        rhs_v += static_cast<double>(tv);
        rhs_e += static_cast<double>(te);
        for (int P : f.o.pes) {
          if (B < P) continue;
          std::int64_t cv = 0, ce = 0, begin = 0;
          for (int p = 0; p < P; ++p) {
            std::int64_t const len = B / P + (p < B % P ? 1 : 0);
            std::vector<vid_t> const part(seeds.begin() + begin, seeds.begin() + begin + len);
            begin += len;
            auto const s = sample_independent(ctx, f.g, part, key);
            for (auto const& b : s.blocks) {
              cv += b.num_src();
              ce += b.num_edges();
            }
          }
          ASSERT_EQ(begin, B);
          EXPECT_GE(cv, tv) << name << " B=" << B << " P=" << P << " repeat " << rep;
          EXPECT_GE(ce, te) << name << " B=" << B << " P=" << P << " repeat " << rep;
          strictly_redundant += cv > tv ? 1 : 0;
          lhs[P].first += static_cast<double>(cv);
          lhs[P].second += static_cast<double>(ce);
        }
      }
      for (int l = 0; l < 2; ++l) {
        auto const& w = rows.at({name, B, l});
        EXPECT_DOUBLE_EQ(w.vertices, v[l] / 2) << name << " B=" << B << " layer " << l;
        EXPECT_DOUBLE_EQ(w.edges, e[l] / 2) << name << " B=" << B << " layer " << l;
        EXPECT_DOUBLE_EQ(w.vertices_per_seed, v[l] / 2 / static_cast<double>(B));
      }
      auto const& t = rows.at({name, B, -1});
      EXPECT_DOUBLE_EQ(t.vertices, rhs_v / 2);
      EXPECT_DOUBLE_EQ(t.edges_per_seed, rhs_e / 2 / static_cast<double>(B));
      for (auto const& [P, sums] : lhs) {
        auto const& cv = sub.at({name, "vertices", B, P});
        auto const& ce = sub.at({name, "edges", B, P});
        EXPECT_TRUE(cv.pass && ce.pass) << name << " B=" << B << " P=" << P;
        EXPECT_DOUBLE_EQ(cv.lhs, sums.first / 2);
        EXPECT_DOUBLE_EQ(cv.rhs, rhs_v / 2);
        EXPECT_DOUBLE_EQ(ce.lhs, sums.second / 2);
        EXPECT_DOUBLE_EQ(ce.rhs, rhs_e / 2);
      }
      // B < P gives no check (8 > 4).
      EXPECT_EQ(sub.count({name, "edges", B, 8}), B >= 8 ? 1u : 0u);
    }
  }
  EXPECT_GT(strictly_redundant, 0) << "independent batches never overlapped: vacuous test";
}

TEST(BenchWork, MeanChecksFollowFromTheRows) {
  fixture f;
  f.o.samplers = {sampler_kind::labor};
  f.o.pes = {};
  exec_context const ctx(backend::host, 0, 2);
  auto const r = bench::run_work_bench(ctx, f.g, f.cand, f.o);
  std::map<std::int64_t, bench::work_row> total;
  for (auto const& w : r.rows) {
    if (w.layer == -1) total[w.batch_size] = w;
  }
  int nonincreasing = 0, concave = 0;
  for (auto const& c : r.checks) {
    auto const B = static_cast<double>(c.batch_size);
    if (c.check == "work_per_seed_nonincreasing") {
      ++nonincreasing;
      auto const& now = total.at(c.batch_size);
      auto const& before = total.at(c.batch_size / 2);
      double const lhs = c.quantity == "edges" ? now.edges / B : now.vertices / B;
      double const rhs = c.quantity == "edges" ? before.edges / (B / 2) : before.vertices / (B / 2);
      EXPECT_DOUBLE_EQ(c.lhs, lhs);
      EXPECT_DOUBLE_EQ(c.rhs, rhs);
      EXPECT_EQ(c.pass, lhs <= rhs * 1.01);
    } else if (c.check == "concave") {
      ++concave;
      EXPECT_EQ(c.quantity, "edges");
      double const w0 = total.at(c.batch_size / 2).edges, w1 = total.at(c.batch_size).edges,
                   w2 = total.at(c.batch_size * 2).edges;
      EXPECT_DOUBLE_EQ(c.rhs, (w1 - w0) / (B / 2));
      EXPECT_DOUBLE_EQ(c.lhs, (w2 - w1) / B);
      EXPECT_EQ(c.pass, c.lhs <= c.rhs * 1.01);
    } else {
      ADD_FAILURE() << "unexpected check " << c.check;
    }
  }
  EXPECT_EQ(nonincreasing, 2 * 5);  // vertices and edges at B = 8..128
  EXPECT_EQ(concave, 4);            // middle points 8..64
}

TEST(BenchWork, SeedSetsAndChunks) {
  std::vector<vid_t> cand;
  for (vid_t v = 10; v < 110; ++v) cand.push_back(v);
  auto const a = bench::draw_seed_set(cand, 64, 3, 0);
  auto const a32 = bench::draw_seed_set(cand, 32, 3, 0);
  auto const b = bench::draw_seed_set(cand, 64, 3, 1);
  EXPECT_EQ(a, expected_seeds(cand, 64, 3, 0));
  EXPECT_EQ(std::set<vid_t>(a.begin(), a.end()).size(), 64u);
  EXPECT_TRUE(std::equal(a32.begin(), a32.end(), a.begin()));  // nested prefixes
  EXPECT_NE(a, b);
  EXPECT_TRUE(bench::draw_seed_set(cand, 0, 3, 0).empty());
  EXPECT_THROW(bench::draw_seed_set(cand, 101, 3, 0), logic_error);

  EXPECT_EQ(bench::chunk_offsets(10, 3), (std::vector<std::int64_t>{0, 4, 7, 10}));
  EXPECT_EQ(bench::chunk_offsets(8, 8), (std::vector<std::int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8}));
  EXPECT_EQ(bench::chunk_offsets(5, 1), (std::vector<std::int64_t>{0, 5}));
  EXPECT_THROW(bench::chunk_offsets(5, 0), logic_error);
}

std::string logic_message(const bench::work_options& o, std::int64_t n) {
  try {
    bench::validate_work_options(o, n);
  } catch (const logic_error& e) {
    return e.what();
  }
  return "<no logic_error thrown>";
}

TEST(BenchWork, BadArgumentsNameTheOption) {
  bench::work_options const ok;
  EXPECT_EQ(logic_message(ok, 1000), "<no logic_error thrown>");
  auto with = [&](auto change) {
    bench::work_options o = ok;
    change(o);
    return logic_message(o, 1000);
  };
  EXPECT_THAT(with([](auto& o) { o.min_batch = 100; }),
              HasSubstr("--min-batch 100 is not a power of two"));
  EXPECT_THAT(with([](auto& o) { o.min_batch = 0; }), HasSubstr("--min-batch 0"));
  EXPECT_THAT(with([](auto& o) { o.max_batch = 3000; }),
              HasSubstr("--max-batch 3000 is not a power of two"));
  EXPECT_THAT(with([](auto& o) { o.min_batch = 256, o.max_batch = 128; }),
              HasSubstr("--min-batch 256 is larger than --max-batch 128"));
  EXPECT_THAT(with([](auto& o) { o.min_batch = 1024; }),
              HasSubstr("--min-batch 1024 is larger than the 1000 candidate seeds"));
  EXPECT_THAT(with([](auto& o) { o.repeats = 0; }), HasSubstr("--repeats 0"));
  EXPECT_THAT(with([](auto& o) { o.fanouts = {10, 0}; }), HasSubstr("--fanouts: fanout 0"));
  EXPECT_THAT(with([](auto& o) { o.fanouts = {}; }), HasSubstr("--fanouts"));
  EXPECT_THAT(with([](auto& o) { o.pes = {2, 0}; }), HasSubstr("--pes: P = 0"));
  EXPECT_THAT(with([](auto& o) { o.pes = {2, 4, 2}; }), HasSubstr("--pes: P = 2 is given twice"));
  EXPECT_THAT(with([](auto& o) { o.samplers = {}; }), HasSubstr("--samplers"));
  EXPECT_THAT(with([](auto& o) {
                o.samplers = {sampler_kind::labor, sampler_kind::labor};
              }),
              HasSubstr("--samplers: labor is given twice"));
  EXPECT_THAT(with([](auto& o) { o.sample_threads = 0; }), HasSubstr("--sample-threads 0"));

  fixture f;
  f.cand.push_back(300);  // |V| = 300
  EXPECT_THROW(bench::run_work_bench(exec_context{}, f.g, f.cand, f.o), logic_error);
}

/// Parses `args` (without the program name) with `bench work` registered.
void run_cli(std::vector<std::string> args) {
  CLI::App app{"test"};
  app.require_subcommand(1);
  auto* bench = app.add_subcommand("bench");
  cli::add_bench_work_command(*bench);
  std::reverse(args.begin(), args.end());
  app.parse(args);
}

TEST(BenchWork, CommandWritesSchemaFiles) {
  test::temp_dir d;
  dataset ds = test::synthetic_dataset(120, 3, 4, 5, 9);
  ds.name = "tiny";
  write_dataset(ds, d / "tiny");
  std::string const out = (d / "out").string();
  run_cli({"bench", "work", "--dataset", (d / "tiny").string(), "--fanouts", "2,2", "--min-batch",
           "4", "--max-batch", "16", "--repeats", "1", "--pes", "2", "--out", out});

  auto const j = nlohmann::json::parse(test::read_text(d / "out" / "work_tiny.json"));
  for (char const* k :
       {"bench", "dataset", "dataset_dir", "num_nodes", "num_edges", "command", "created", "host",
        "fanouts", "repeats", "seed", "batch_sizes", "samplers", "rows", "checks"}) {
    EXPECT_TRUE(j.contains(k)) << k;
  }
  EXPECT_EQ(j["bench"], "work");
  EXPECT_EQ(j["dataset"], "tiny");
  EXPECT_EQ(j["num_nodes"], 120);
  EXPECT_EQ(j["num_edges"], ds.num_edges());
  EXPECT_EQ(j["fanouts"], nlohmann::json({2, 2}));
  EXPECT_EQ(j["samplers"], nlohmann::json({"ns", "labor"}));
  EXPECT_EQ(j["batch_sizes"], nlohmann::json({4, 8, 16}));
  EXPECT_FALSE(j["command"].get<std::string>().empty());
  EXPECT_TRUE(std::regex_match(j["created"].get<std::string>(),
                               std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)")));
  for (char const* k : {"backend", "device", "threads"}) EXPECT_TRUE(j["host"].contains(k)) << k;
  ASSERT_EQ(j["rows"].size(), 2u * 3u * 3u);
  for (auto const& r : j["rows"]) {
    for (char const* k : {"sampler", "batch_size", "layer", "vertices", "edges",
                          "vertices_per_seed", "edges_per_seed"}) {
      EXPECT_TRUE(r.contains(k)) << k;
    }
  }
  ASSERT_FALSE(j["checks"].empty());
  for (auto const& c : j["checks"]) {
    for (char const* k : {"sampler", "check", "batch_size", "pes", "lhs", "rhs", "pass"}) {
      EXPECT_TRUE(c.contains(k)) << k;
    }
  }

  std::string const csv = test::read_text(d / "out" / "work_tiny.csv");
  EXPECT_EQ(csv.substr(0, csv.find('\n')),
            "sampler,batch_size,layer,vertices,edges,vertices_per_seed,edges_per_seed");
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 1 + 2 * 3 * 3);

  EXPECT_THROW(run_cli({"bench", "work", "--dataset", (d / "tiny").string(), "--min-batch", "100",
                        "--out", out}),
               logic_error);
  EXPECT_THROW(run_cli({"bench", "work", "--dataset", (d / "tiny").string(), "--samplers",
                        "ns,fast", "--out", out}),
               logic_error);
  EXPECT_THROW(run_cli({"bench", "work", "--dataset", (d / "missing").string(), "--out", out}),
               io_error);
}

}  // namespace
}  // namespace coopgnn
