// `coopgnn bench sample` (bench/drivers/sample_rate.hpp): the seed batches follow the trainer's
// order, the counts equal independent counts (NS layer 0: sum of min(k, d); fanout -1: every
// layer by breadth-first expansion done here), the result file's keys, and argument errors.
#include "bench/drivers/sample_rate.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "runtime/core/error.hpp"
#include "pipeline/trainer.hpp"
#include "tests/common/graphs.hpp"

namespace coopgnn {
namespace {

struct fixture {
  csc_graph g = test::random_graph(400, 7, 3);
  std::vector<vid_t> train;
  bench::sample_rate_options o;
  fixture() {
    for (vid_t v = 0; v < 400; v += 3) train.push_back(v);  // 134 seeds
    o.fanouts = {4, 3};
    o.batch_size = 50;  // 3 batches per epoch, the last one short (34)
    o.batches = 5;      // into the second epoch
    o.repeats = 2;
    o.seed = 9;
  }
};

TEST(BenchSample, BatchesAreTheTrainersEpochOrder) {
  fixture f;
  auto const batches = bench::sample_rate_batches(f.train, f.o);
  ASSERT_EQ(batches.size(), 5u);
  auto const e1 = epoch_order(f.train, f.o.seed, 1);
  auto const e2 = epoch_order(f.train, f.o.seed, 2);
  EXPECT_EQ(batches[0], std::vector<vid_t>(e1.begin(), e1.begin() + 50));
  EXPECT_EQ(batches[2], std::vector<vid_t>(e1.begin() + 100, e1.end()));  // the short tail
  EXPECT_EQ(batches[3], std::vector<vid_t>(e2.begin(), e2.begin() + 50));
  EXPECT_EQ(batches[4], std::vector<vid_t>(e2.begin() + 50, e2.begin() + 100));
  auto const text = bench::seed_batches_to_text(batches);
  std::istringstream in(text);
  std::string line;
  std::getline(in, line);
  std::istringstream first(line);
  vid_t v = -1;
  std::vector<vid_t> parsed;
  while (first >> v) parsed.push_back(v);
  EXPECT_EQ(parsed, batches[0]);
}

TEST(BenchSample, NsLayerZeroCountsAreSumsOfMinKD) {
  fixture f;
  f.o.sample_threads = 3;
  auto const batches = bench::sample_rate_batches(f.train, f.o);
  auto const r = bench::run_sample_rate_bench(exec_context(backend::host, 0, 3), f.g, batches, f.o);
  std::int64_t seeds = 0, edges = 0;
  for (auto const& b : batches) {
    for (vid_t s : b) {
      edges += std::min<std::int64_t>(f.g.in_degree(s), 4);
      ++seeds;
    }
  }
  ASSERT_EQ(r.layers.size(), 2u);
  EXPECT_EQ(r.layers[0].seeds, seeds);
  EXPECT_EQ(r.layers[0].edges, edges);
  EXPECT_EQ(r.seeds, seeds);
  // Layer 1's seeds are layer 0's sources; its edges at most 3 per seed.
  EXPECT_EQ(r.layers[1].seeds, r.layers[0].sources);
  EXPECT_LE(r.layers[1].edges, 3 * r.layers[1].seeds);
  EXPECT_EQ(r.edges, r.layers[0].edges + r.layers[1].edges);
  EXPECT_EQ(r.repeat_seconds.size(), 2u);
  EXPECT_GT(r.seconds, 0.0);
  EXPECT_GT(r.edges_per_second, 0.0);
  EXPECT_NEAR(r.layers[0].edges_per_second * r.layers[0].seconds,
              static_cast<double>(r.layers[0].edges), 1e-6 * static_cast<double>(edges));
}

TEST(BenchSample, FullNeighbourhoodCountsMatchABreadthFirstExpansion) {
  fixture f;
  f.o.fanouts = {-1, -1};
  f.o.sampler = sampler_kind::labor;  // fanout -1 keeps everything for either sampler
  auto const batches = bench::sample_rate_batches(f.train, f.o);
  auto const r = bench::run_sample_rate_bench(exec_context{}, f.g, batches, f.o);
  std::int64_t seeds1 = 0, edges0 = 0, edges1 = 0, sources1 = 0;
  for (auto const& b : batches) {
    std::set<vid_t> frontier(b.begin(), b.end());
    for (vid_t s : b) {
      edges0 += f.g.in_degree(s);
      for (vid_t t : f.g.in_neighbors(s)) frontier.insert(t);
    }
    seeds1 += static_cast<std::int64_t>(frontier.size());
    std::set<vid_t> next = frontier;
    for (vid_t s : frontier) {
      edges1 += f.g.in_degree(s);
      for (vid_t t : f.g.in_neighbors(s)) next.insert(t);
    }
    sources1 += static_cast<std::int64_t>(next.size());
  }
  EXPECT_EQ(r.layers[0].edges, edges0);
  EXPECT_EQ(r.layers[1].seeds, seeds1);
  EXPECT_EQ(r.layers[1].edges, edges1);
  EXPECT_EQ(r.layers[1].sources, sources1);
}

TEST(BenchSample, JsonAndCsvCarryTheSchemaKeys) {
  fixture f;
  f.o.repeats = 1;
  auto const r = bench::run_sample_rate_bench(exec_context{}, f.g,
                                              bench::sample_rate_batches(f.train, f.o), f.o);
  bench::result_header h;
  h.bench = "sample";
  h.dataset = "toy";
  auto const j = bench::sample_rate_to_json(h, f.o, r);
  EXPECT_EQ(j["bench"], "sample");
  EXPECT_EQ(j["sampler"], "ns");
  EXPECT_EQ(j["layers"].size(), 2u);
  EXPECT_EQ(j["total"]["edges"], r.edges);
  EXPECT_EQ(j["layers"][0]["edges"], r.layers[0].edges);
  for (auto const* key : {"sample_seconds", "block_seconds", "edges_per_second", "seeds_per_second",
                          "sample_edges_per_second"}) {
    EXPECT_TRUE(j["layers"][1].contains(key)) << key;
  }
  auto const csv = bench::sample_rate_to_csv(r);
  EXPECT_EQ(csv.rfind("layer,fanout,seeds,edges,sources,sample_seconds,block_seconds,seconds,", 0),
            0u);
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 4);  // header, 2 layers, total
  EXPECT_NE(csv.find("\ntotal,"), std::string::npos);
  EXPECT_NE(bench::format_sample_rate_table(r).find("total"), std::string::npos);
}

TEST(BenchSample, RejectsBadOptions) {
  fixture f;
  auto bad = [&](auto&& change) {
    auto o = f.o;
    change(o);
    EXPECT_THROW(bench::validate(o), logic_error);
  };
  bad([](auto& o) { o.fanouts.clear(); });
  bad([](auto& o) { o.fanouts = {3, 0}; });
  bad([](auto& o) { o.fanouts = {-2}; });
  bad([](auto& o) { o.batch_size = 0; });
  bad([](auto& o) { o.batches = 0; });
  bad([](auto& o) { o.repeats = 0; });
  bad([](auto& o) { o.sample_threads = 0; });
  EXPECT_THROW(bench::sample_rate_batches(std::vector<vid_t>{}, f.o), logic_error);
  EXPECT_THROW(bench::run_sample_rate_bench(exec_context(backend::emulated, 0, 1), f.g,
                                            bench::sample_rate_batches(f.train, f.o), f.o),
               logic_error);
}

}  // namespace
}  // namespace coopgnn
