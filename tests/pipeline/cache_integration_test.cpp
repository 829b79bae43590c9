// Per-PE feature caches inside the protocols (docs/design.md section 9; cooperative paper 3.2).
#include <gtest/gtest.h>

#include "runtime/core/error.hpp"
#include "runtime/graph/dataset.hpp"
#include "pipeline/trainer.hpp"
#include "tests/common/files.hpp"
#include "tests/common/graphs.hpp"

namespace coopgnn {
namespace {

epoch_report run(minibatch_mode mode, const std::string& policy, std::int64_t rows, int epochs) {
  static const dataset ds = test::synthetic_dataset(900, 3, 6, 8, 11);
  static const csc_graph g = build_csc(ds.num_nodes, ds.src, ds.dst);
  train_config c;
  c.mode = mode;
  c.num_pes = 4;
  c.hidden = 8;
  c.fanouts = {4, 4};
  c.sampler = sampler_kind::labor;
  c.batch_dependency = 16;
  c.batch_size = 64;
  c.cache_policy = parse_cache_policy_kind(policy);
  c.cache_rows = rows;
  trainer tr(ds, g, c);
  epoch_report last;
  for (int e = 1; e <= epochs; ++e) last = tr.run_epoch(e, false);
  return last;
}

TEST(CacheIntegration, EveryLoadedRowIsAHitOrAMiss) {
  for (auto mode : {minibatch_mode::cooperative, minibatch_mode::independent}) {
    auto const r = run(mode, "lru", 150, 2);
    EXPECT_EQ(r.work.cache_hits + r.work.cache_misses, r.work.feature_rows);
    EXPECT_GT(r.work.cache_hits, 0);
    auto const none = run(mode, "none", 0, 1);
    EXPECT_EQ(none.work.cache_hits, 0);
    EXPECT_EQ(none.work.cache_misses, none.work.feature_rows);
  }
}

TEST(CacheIntegration, CooperativeCachesAreDisjointSoTheyHitMore) {
  // Same per-PE capacity: cooperative PEs cache only what they own, so together they hold up to
  // 4x more distinct rows than independent PEs, which all cache the same hot rows. Capacity 150
  // rows: two thirds of the 225 vertices a cooperative PE owns (a capacity below the per-batch
  // working set makes LRU thrash on the sorted load order and no policy would hit).
  for (auto const* policy : {"lru", "sieve"}) {
    auto const coop = run(minibatch_mode::cooperative, policy, 150, 3);
    auto const ind = run(minibatch_mode::independent, policy, 150, 3);
    double const coop_miss =
        static_cast<double>(coop.work.cache_misses) / static_cast<double>(coop.work.feature_rows);
    double const ind_miss =
        static_cast<double>(ind.work.cache_misses) / static_cast<double>(ind.work.feature_rows);
    EXPECT_LT(coop_miss, ind_miss) << policy;
    EXPECT_LT(coop.work.cache_misses, ind.work.cache_misses) << policy;
  }
}

TEST(CacheIntegration, MemoryMappedFeaturesTrainExactlyLikeInMemoryOnes) {
  test::temp_dir dir;
  write_dataset(test::synthetic_dataset(300, 3, 6, 6, 4), dir.path());
  dataset const ds = read_dataset(dir.path());
  ASSERT_FALSE(ds.feature_file.empty());
  csc_graph const g = build_csc(ds.num_nodes, ds.src, ds.dst);
  std::vector<epoch_report> reps;
  // The same with the rows left in the file (read_dataset header only).
  dataset const lazy = read_dataset(dir.path(), dataset_read_options{false});
  EXPECT_FALSE(lazy.features_in_memory());
  EXPECT_EQ(lazy.feature_dim(), ds.feature_dim());
  for (auto const* tier : {"host", "mmap", "auto", "lazy-mmap", "lazy-host"}) {
    train_config c;
    c.num_pes = 2;
    c.hidden = 8;
    c.fanouts = {4, 4};
    c.batch_size = 32;
    c.cache_policy = cache_policy_kind::setassoc;
    c.cache_rows = 64;
    std::string const t = tier;
    bool const is_lazy = t.rfind("lazy-", 0) == 0;
    std::string const name = is_lazy ? t.substr(5) : t;
    c.feature_storage = parse_storage_tier(name);
    trainer tr(is_lazy ? lazy : ds, g, c);
    EXPECT_EQ(to_string(tr.features().tier()), t == "auto" ? "host" : name);
    reps.push_back(tr.run_epoch(1, true));
  }
  for (auto const& r : reps) {
    EXPECT_EQ(r.train_loss, reps[0].train_loss);
    EXPECT_EQ(r.test_metric, reps[0].test_metric);
    EXPECT_EQ(r.work.cache_hits, reps[0].work.cache_hits);
  }
  EXPECT_GT(reps[0].work.cache_hits, 0);
  train_config c;
  c.feature_storage = storage_tier::device;
  EXPECT_THROW(trainer(ds, g, c), logic_error);
}

TEST(CacheIntegration, RejectsUnknownPolicy) {
  EXPECT_THROW(run(minibatch_mode::cooperative, "fifo", 10, 1), logic_error);
}

}  // namespace
}  // namespace coopgnn
