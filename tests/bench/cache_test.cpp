// `coopgnn bench cache` (bench/drivers/cache.hpp): its replayed feature-load trace gives exactly
// the cache counters a training run reports, for both modes and several P; option errors; output
// formats; the report section.
#include "bench/drivers/cache.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>

#include "bench/drivers/report.hpp"
#include "runtime/core/error.hpp"
#include "pipeline/trainer.hpp"
#include "tests/common/files.hpp"
#include "tests/common/graphs.hpp"

namespace coopgnn::bench {
namespace {

struct fixture {
  dataset ds = test::synthetic_dataset(700, 3, 8, 8, 5);
  csc_graph g = build_csc(ds.num_nodes, ds.src, ds.dst);
};

const fixture& data() {
  static const fixture f;
  return f;
}

cache_options small_options() {
  cache_options o;
  o.fanouts = {4, 3};
  o.batch_size = 48;
  o.kappas = {1, 8};
  o.fractions = {0.1};
  o.pes = {1, 3};
  o.policies = {"lru", "setassoc"};
  o.epochs = 2;
  o.seed = 9;
  return o;
}

/// Hits and misses the trainer counts over `epochs` epochs (summed), with the same settings.
std::pair<std::int64_t, std::int64_t> trainer_counts(const cache_options& o, minibatch_mode mode,
                                                     int P, std::int64_t kappa,
                                                     const std::string& policy, std::int64_t rows) {
  train_config c;
  c.mode = mode;
  c.num_pes = P;
  c.hidden = 4;
  c.fanouts = o.fanouts;
  c.sampler = o.sampler;
  c.batch_dependency = kappa;
  c.batch_size = o.batch_size;
  c.cache_policy = parse_cache_policy_kind(policy);
  c.cache_rows = rows;
  c.seed = o.seed;
  trainer tr(data().ds, data().g, c);
  std::int64_t hits = 0, misses = 0;
  for (int e = 1; e <= o.epochs; ++e) {
    auto const r = tr.run_epoch(e, false);
    hits += r.work.cache_hits;
    misses += r.work.cache_misses;
  }
  return {hits, misses};
}

TEST(BenchCache, ReplayMatchesTheTrainersCounters) {
  auto const o = small_options();
  exec_context const ctx;
  auto const res = run_cache_bench(ctx, data().g, data().ds.train, data().ds.feature_dim(), o);
  ASSERT_EQ(res.rows.size(), 2u * 2u * 1u * 2u * 2u);  // policy x kappa x fraction x mode x P
  for (auto const& r : res.rows) {
    SCOPED_TRACE(r.policy + " " + r.mode + " P=" + std::to_string(r.pes) +
                 " K=" + std::to_string(r.kappa));
    auto const [hits, misses] =
        trainer_counts(o, parse_mode(r.mode), r.pes, r.kappa, r.policy, r.cache_rows);
    EXPECT_EQ(r.hits, hits);
    EXPECT_EQ(r.misses, misses);
    EXPECT_GT(r.hits, 0);
    EXPECT_EQ(r.requests, r.hits + r.misses);
    EXPECT_EQ(r.cache_rows, static_cast<std::int64_t>(0.1 * 700));
  }
}

TEST(BenchCache, OnePeLoadsTheSameRowsInBothModes) {
  // With P = 1 both modes load the same rows per batch (cooperative in id order, independent in
  // block order); with room for every vertex nothing is evicted, so order cannot matter.
  auto o = small_options();
  o.pes = {1};
  o.fractions = {1.0};
  o.policies = {"s3fifo"};
  exec_context const ctx;
  auto const res = run_cache_bench(ctx, data().g, data().ds.train, data().ds.feature_dim(), o);
  std::map<std::int64_t, std::map<std::string, const cache_row*>> by;
  for (auto const& r : res.rows) by[r.kappa][r.mode] = &r;
  for (auto const& [k, m] : by) {
    EXPECT_EQ(m.at("cooperative")->requests, m.at("independent")->requests) << k;
    EXPECT_EQ(m.at("cooperative")->misses, m.at("independent")->misses) << k;
    EXPECT_LE(m.at("cooperative")->misses, 700) << k;  // compulsory misses only
  }
}

TEST(BenchCache, BatchesAndEpochs) {
  auto o = small_options();
  o.kappas = {1};
  o.pes = {1};
  o.modes = {minibatch_mode::cooperative};
  o.policies = {"lru"};
  exec_context const ctx;
  auto const n = static_cast<std::int64_t>(data().ds.train.size());
  auto const nb = (n + o.batch_size - 1) / o.batch_size;
  auto res = run_cache_bench(ctx, data().g, data().ds.train, data().ds.feature_dim(), o);
  EXPECT_EQ(res.batches_per_kappa, 2 * nb);
  EXPECT_EQ(res.rows.at(0).seeds, 2 * n);
  o.batches = 3;
  res = run_cache_bench(ctx, data().g, data().ds.train, data().ds.feature_dim(), o);
  EXPECT_EQ(res.batches_per_kappa, 3);
  // Warm-up batches fill the caches but are not counted: counting only batch 3 of 3 equals the
  // difference of the cumulative counts after 3 and after 2 batches.
  auto const three = res.rows.at(0);
  o.batches = 2;
  auto const two = run_cache_bench(ctx, data().g, data().ds.train, data().ds.feature_dim(), o);
  o.batches = 3;
  o.warmup = 2;
  auto const last = run_cache_bench(ctx, data().g, data().ds.train, data().ds.feature_dim(), o);
  EXPECT_EQ(last.rows.at(0).misses, three.misses - two.rows.at(0).misses);
  EXPECT_EQ(last.rows.at(0).hits, three.hits - two.rows.at(0).hits);
  EXPECT_EQ(last.rows.at(0).batches, 1);
  EXPECT_EQ(last.rows.at(0).seeds, o.batch_size);
  o.warmup = 3;
  EXPECT_THROW(run_cache_bench(ctx, data().g, data().ds.train, data().ds.feature_dim(), o),
               logic_error);
  o.warmup = 0;
  o.batches = 0;
  o.epochs = 0;  // auto: at least 100 batches
  res = run_cache_bench(ctx, data().g, data().ds.train, data().ds.feature_dim(), o);
  EXPECT_EQ(res.epochs, static_cast<int>((100 + nb - 1) / nb));
  EXPECT_GE(res.batches_per_kappa, 100);
  EXPECT_NEAR(res.rows.at(0).miss_bytes_per_seed,
              static_cast<double>(res.rows.at(0).misses) * 8 * 4 /
                  static_cast<double>(res.rows.at(0).seeds),
              1e-9);
}

TEST(BenchCache, RejectsBadOptionsNamingThem) {
  struct usecase {
    void (*edit)(cache_options&);
    const char* option;
  };
  for (auto const& u : {usecase{[](cache_options& o) {
                                  o.kappas = {1, -2};
                                },
                                "--kappas"},
                        usecase{[](cache_options& o) {
                                  o.kappas = {4, 4};
                                },
                                "--kappas"},
                        usecase{[](cache_options& o) {
                                  o.sampler = sampler_kind::ns;
                                  o.kappas = {4};
                                },
                                "--kappas"},
                        usecase{[](cache_options& o) { o.fractions = {1.5}; }, "--fractions"},
                        usecase{[](cache_options& o) { o.pes = {0}; }, "--pes"},
                        usecase{[](cache_options& o) { o.policies = {"fifo"}; }, "--policies"},
                        usecase{[](cache_options& o) { o.modes = {}; }, "--modes"},
                        usecase{[](cache_options& o) { o.batch_size = 0; }, "--batch-size"},
                        usecase{[](cache_options& o) { o.epochs = -1; }, "--epochs"},
                        usecase{[](cache_options& o) { o.warmup = -1; }, "--warmup"},
                        usecase{[](cache_options& o) { o.fanouts = {0}; }, "--fanouts"}}) {
    auto o = small_options();
    u.edit(o);
    try {
      validate(o);
      ADD_FAILURE() << "no error for " << u.option;
    } catch (const logic_error& e) {
      EXPECT_NE(std::string(e.what()).find(u.option), std::string::npos) << e.what();
    }
  }
}

TEST(BenchCache, FilesAndReport) {
  auto o = small_options();
  o.policies = {"lru"};
  exec_context const ctx;
  auto const res = run_cache_bench(ctx, data().g, data().ds.train, data().ds.feature_dim(), o);
  auto const csv = cache_to_csv(res);
  EXPECT_EQ(csv.substr(0, csv.find('\n')),
            "policy,kappa,fraction,cache_rows,mode,pes,batches,seeds,requests,hits,misses,"
            "miss_rate,rows_per_seed,miss_bytes_per_seed");
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 1 + static_cast<long>(res.rows.size()));
  result_header h;
  h.bench = "cache";
  h.dataset = "synthetic";
  auto const j = cache_to_json(h, o, res);
  EXPECT_EQ(j["bench"], "cache");
  EXPECT_EQ(j["rows"].size(), res.rows.size());
  EXPECT_EQ(j["kappas"], (std::vector<std::int64_t>{1, 8}));
  auto const table = format_cache_table(o, res);
  EXPECT_NE(table.find("K=8"), std::string::npos);

  test::temp_dir const dir;
  test::write_text(dir / "cache_synthetic.json", j.dump(2));
  report_options ro;
  ro.plots = false;
  auto const rep = write_report(dir.path(), ro);
  auto const md = test::read_text(rep.markdown);
  EXPECT_NE(md.find("Feature cache vs dependent minibatching"), std::string::npos);
  EXPECT_NE(md.find("Cooperative vs independent, same cache per PE"), std::string::npos);
  EXPECT_NE(md.find("miss K=8"), std::string::npos);
}

}  // namespace
}  // namespace coopgnn::bench
