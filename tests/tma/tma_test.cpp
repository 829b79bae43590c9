// The TMA pieces that need no MPI (tma/tma.hpp, evaluator.hpp, workers.hpp): the
// server's clock decision, the evaluator's ordering, superseding and best checkpoint, the
// convergence time, LLCG's correction against a twin trainer, and the slicing of global batches
// for GGS. Expected values are written out by hand or come from twin trainers.
#include "tma/tma.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "runtime/core/error.hpp"
#include "runtime/graph/npy.hpp"
#include "tma/engine.hpp"
#include "tma/evaluator.hpp"
#include "tma/workers.hpp"
#include "tests/common/files.hpp"
#include "tests/common/link_steps.hpp"

namespace coopgnn::tma {
namespace {

TEST(TmaSchedule, DecideFollowsTheClock) {
  schedule s{2.0, 10.0, 300};
  EXPECT_EQ(decide(0.5, 0, s, false), command::none);
  EXPECT_EQ(decide(2.0, 0, s, false), command::average);  // the interval has elapsed
  EXPECT_EQ(decide(3.9, 2.1, s, false), command::none);   // measured from the last aggregation
  EXPECT_EQ(decide(4.2, 2.1, s, false), command::average);
  EXPECT_EQ(decide(10.0, 9.5, s, false), command::stop);  // time limit wins
  EXPECT_EQ(decide(1.0, 0, s, true), command::stop);      // every trainer completed
  EXPECT_THROW(decide(1, 0, schedule{0, 10, 1}, false), logic_error);
  EXPECT_THROW(decide(1, 0, schedule{1, -1, 1}, false), logic_error);
}

TEST(TmaSchedule, SchemesParseAndMapToPartitions) {
  for (auto s : {scheme::randomtma, scheme::supertma, scheme::psgd_pa, scheme::llcg, scheme::ggs}) {
    EXPECT_EQ(parse_scheme(to_string(s)), s);
  }
  EXPECT_EQ(partition_of(scheme::randomtma), partition_scheme::random);
  EXPECT_EQ(partition_of(scheme::supertma), partition_scheme::super);
  EXPECT_EQ(partition_of(scheme::psgd_pa), partition_scheme::metis);
  EXPECT_EQ(partition_of(scheme::llcg), partition_scheme::metis);
  EXPECT_FALSE(partition_of(scheme::ggs).has_value());
  EXPECT_THROW(parse_scheme("psgd_pa"), logic_error);
}

TEST(TmaEvaluator, ConvergenceIsTheFirstTimeWithinOnePercentOfTheMaximum) {
  std::vector<evaluation_history::point> pts = {
      {1, 10, 0.20}, {2, 20, std::nullopt}, {3, 30, 0.396}, {4, 40, 0.40}, {5, 50, 0.38}};
  // max 0.40; bar 0.396: generation 3 at 30 s.
  EXPECT_DOUBLE_EQ(convergence_seconds(pts), 30.0);
  EXPECT_DOUBLE_EQ(convergence_seconds(pts, 0.0), 40.0);
  EXPECT_TRUE(std::isnan(convergence_seconds({{1, 10, std::nullopt}})));
}

aggregate make_aggregate(std::uint32_t g, float value) {
  aggregate a;
  a.generation = g;
  a.seconds = g * 1.5;
  a.params = {value, value + 1};
  progress p;
  p.steps = 10 * g;
  p.loss_sum = 3;
  p.loss_steps = 2;
  a.trainers = {p, progress{}};
  return a;
}

TEST(TmaEvaluator, ScoresInOrderKeepsTheBestAndCheckpointsIt) {
  test::temp_dir dir;
  std::mutex mu;
  std::vector<nlohmann::json> lines;
  // Validation value = the first parameter; generation 2 is the best.
  evaluator ev(
      [](std::span<const float> p) {
        return score{"mrr", p[0], {{"mrr", p[0]}}};
      },
      [&](const std::string& l) {
        std::lock_guard<std::mutex> lk(mu);
        lines.push_back(nlohmann::json::parse(l));
      },
      dir.path() / "best.npy");
  auto wait_lines = [&](std::size_t k) {
    for (;;) {
      {
        std::lock_guard<std::mutex> lk(mu);
        if (lines.size() >= k) return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  };
  // One at a time, so none is superseded.
  ev.submit(make_aggregate(1, 0.2f));
  wait_lines(1);
  ev.submit(make_aggregate(2, 0.5f));
  wait_lines(2);
  ev.submit(make_aggregate(3, 0.3f));
  auto const h = ev.finish();
  ASSERT_TRUE(h.best_generation.has_value());
  EXPECT_EQ(*h.best_generation, 2u);
  EXPECT_FLOAT_EQ(static_cast<float>(h.best_val), 0.5f);
  EXPECT_EQ(h.best_params, (std::vector<float>{0.5f, 1.5f}));
  EXPECT_EQ(h.last_generation, 3u);
  EXPECT_EQ(h.last_params, (std::vector<float>{0.3f, 1.3f}));
  auto const ck = read_npy<float>(dir.path() / "best.npy");
  EXPECT_EQ(ck.data, (std::vector<float>{0.5f, 1.5f}));
  ASSERT_GE(lines.size(), 2u);
  // Lines come in generation order, each scored.
  std::uint32_t prev = 0;
  for (auto const& j : lines) {
    EXPECT_GT(j["generation"].get<std::uint32_t>(), prev);
    prev = j["generation"].get<std::uint32_t>();
    EXPECT_EQ(j["event"], "aggregation");
    EXPECT_EQ(j["steps"][0], 10 * prev);
    EXPECT_DOUBLE_EQ(j["train_loss"][0].get<double>(), 1.5);  // 3 / 2
    EXPECT_TRUE(j["train_loss"][1].is_null());                // no steps
    EXPECT_TRUE(j["evaluated"].get<bool>());
  }
  EXPECT_EQ(lines.size(), 3u);
}

TEST(TmaEvaluator, ABusyEvaluatorSupersedesWaitingAggregatesInOrder) {
  std::atomic<bool> release{false};
  std::mutex mu;
  std::vector<nlohmann::json> lines;
  evaluator ev(
      [&](std::span<const float> p) {
        while (!release.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
        return score{"mrr", p[0], {}};
      },
      [&](const std::string& l) {
        std::lock_guard<std::mutex> lk(mu);
        lines.push_back(nlohmann::json::parse(l));
      },
      {});
  ev.submit(make_aggregate(1, 0.1f));
  // Wait until the evaluator holds generation 1, then queue 2, 3, 4: 2 and 3 are superseded.
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ev.submit(make_aggregate(2, 0.2f));
  ev.submit(make_aggregate(3, 0.3f));
  ev.submit(make_aggregate(4, 0.4f));
  release = true;
  auto const h = ev.finish();
  ASSERT_EQ(lines.size(), 4u);
  for (std::size_t i = 0; i < 4; ++i) EXPECT_EQ(lines[i]["generation"], i + 1);
  EXPECT_TRUE(lines[0]["evaluated"].get<bool>());
  EXPECT_FALSE(lines[1]["evaluated"].get<bool>());
  EXPECT_TRUE(lines[1]["val_metric"].is_null());
  EXPECT_FALSE(lines[2]["evaluated"].get<bool>());
  EXPECT_TRUE(lines[3]["evaluated"].get<bool>());
  EXPECT_EQ(*h.best_generation, 4u);
  ASSERT_EQ(h.points.size(), 4u);
  EXPECT_FALSE(h.points[1].val.has_value());
}

TEST(TmaEvaluator, AScoringFailureIsReportedByFinish) {
  evaluator ev([](std::span<const float>) -> score { throw logic_error("broken model"); },
               [](const std::string&) {}, {});
  ev.submit(make_aggregate(1, 0.1f));
  EXPECT_THROW(
      {
        try {
          ev.finish();
        } catch (const error& e) {
          EXPECT_NE(std::string(e.what()).find("aggregate 1"), std::string::npos);
          throw;
        }
      },
      error);
}

train_config small_cfg() {
  train_config c = test::link_cfg(minibatch_mode::independent, 1);
  c.eval_every = 0;
  return c;
}

TEST(TmaWorkers, LlcgCorrectionIsExactlySStepsOfTheServersOptimizer) {
  auto const& f = test::link_data();
  train_config const cfg = small_cfg();
  runtime_server server(f.ds, f.g, cfg, 2);
  runtime_trainer twin(f.ds, f.g, cfg, 0, 1, 0);
  std::vector<float> p(static_cast<std::size_t>(server.num_parameters()));
  server.initial_parameters(p);
  // The server's initial weights are those a trainer of the same configuration starts from.
  EXPECT_EQ(p, trainer(f.ds, f.g, cfg).parameters());
  for (float& x : p) x *= 0.5f;  // a "mean" the server did not produce itself
  for (int round = 0; round < 2; ++round) {
    std::vector<float> expected(p.size());
    twin.set_parameters(p);
    twin.step();
    twin.step();
    twin.parameters(expected);
    std::vector<float> got = p;
    server.correct(got);
    EXPECT_EQ(got, expected) << "round " << round;
    EXPECT_NE(got, p);
    p = got;
    for (float& x : p) x += 0.01f;
  }
  EXPECT_EQ(server.correction_steps_done(), 4);
}

TEST(TmaWorkers, SlicedTrainersStepThroughTheSameGlobalBatches) {
  auto const& f = test::link_data();
  for (bool drop : {false, true}) {
    SCOPED_TRACE(drop ? "drop_last" : "short tail");
    train_config cfg = small_cfg();
    cfg.batch_size = 10;
    cfg.drop_last = drop;
    int const M = 3;
    // The order the slices come from: one trainer's epoch order (keyed by the seed only).
    trainer ref(f.ds, f.g, cfg);
    auto const order = ref.epoch_order(1);
    auto const n = static_cast<std::int64_t>(order.size());
    std::int64_t const G = M * cfg.batch_size;
    ASSERT_NE(n % G, 0) << "the case needs a short last global batch";
    std::int64_t const nb = drop ? n / G : (n + G - 1) / G;
    std::vector<std::unique_ptr<runtime_trainer>> ts;
    for (int m = 0; m < M; ++m)
      ts.push_back(std::make_unique<runtime_trainer>(f.ds, f.g, cfg, m, M, 1));
    std::int64_t steps = 0;
    while (!ts[0]->done()) {
      for (auto& t : ts) {
        EXPECT_FALSE(t->done());
        t->compute_gradients();
      }
      ++steps;
    }
    for (auto& t : ts) EXPECT_TRUE(t->done());
    EXPECT_EQ(steps, nb);  // every trainer steps through the same global batches
    EXPECT_THROW(runtime_trainer(f.ds, f.g, cfg, 3, 3, 0), logic_error);
  }
}

// The check every node's GPU ranks run on their exchanged choices (assign_gpus).
TEST(TmaGpus, RanksOnOneGpuAreNamedWithTheirVisibility) {
  auto choice = [](int rank, std::vector<int> d, std::vector<std::string> u,
                   std::optional<std::string> cvd) {
    rank_gpu_choice c;
    c.rank = rank;
    c.devices = std::move(d);
    c.uuids = std::move(u);
    for (auto const& x : c.uuids) c.pci_bus_ids.push_back("bus-of-" + x);
    c.cuda_visible_devices = std::move(cvd);
    return c;
  };
  // Disjoint blocks (CUDA_VISIBLE_DEVICES unset): nothing shared.
  EXPECT_EQ(shared_gpu_error({choice(1, {0, 1}, {"GPU-a", "GPU-b"}, std::nullopt),
                              choice(2, {2, 3}, {"GPU-c", "GPU-d"}, std::nullopt)},
                             "n1"),
            "");
  // Per-rank CUDA_VISIBLE_DEVICES: every rank's device 0, distinct GPUs.
  EXPECT_EQ(
      shared_gpu_error({choice(1, {0}, {"GPU-a"}, "0"), choice(2, {0}, {"GPU-b"}, "1")}, "n1"), "");
  // No GPU rank, or one: nothing to compare.
  EXPECT_EQ(shared_gpu_error({}, "n1"), "");
  EXPECT_EQ(shared_gpu_error({choice(3, {0}, {"GPU-a"}, std::nullopt)}, "n1"), "");
  // The same CUDA_VISIBLE_DEVICES=0 for ranks 1, 2 and 4; rank 3 elsewhere.
  std::string const e =
      shared_gpu_error({choice(1, {0}, {"GPU-z"}, "0"), choice(2, {0}, {"GPU-z"}, "0"),
                        choice(3, {0}, {"GPU-y"}, "1"), choice(4, {0}, {"GPU-z"}, "0")},
                       "node7");
  for (const char* part :
       {"ranks on host node7 would share the GPU GPU-z (PCI bus-of-GPU-z)",
        "rank 1 (its device 0, CUDA_VISIBLE_DEVICES 0), rank 2 (its device 0, "
        "CUDA_VISIBLE_DEVICES 0), rank 4 (its device 0, CUDA_VISIBLE_DEVICES 0)",
        "leave CUDA_VISIBLE_DEVICES unset", "--gpus-per-task", "fewer ranks per node"}) {
    EXPECT_NE(e.find(part), std::string::npos) << "missing '" << part << "': " << e;
  }
  EXPECT_EQ(e.find("rank 3"), std::string::npos) << e;
  // Overlapping blocks: rank 2's second device is rank 1's first; the first shared uuid (in
  // uuid order) is reported, with each rank's own ordinal.
  std::string const o = shared_gpu_error(
      {choice(1, {0, 1}, {"GPU-b", "GPU-c"}, "0,1"), choice(2, {0, 1}, {"GPU-a", "GPU-b"}, "5,0")},
      "n1");
  EXPECT_NE(o.find("would share the GPU GPU-b"), std::string::npos) << o;
  EXPECT_NE(o.find("rank 1 (its device 0, CUDA_VISIBLE_DEVICES 0,1), rank 2 (its device 1, "
                   "CUDA_VISIBLE_DEVICES 5,0)"),
            std::string::npos)
      << o;
  auto broken = choice(1, {0, 1}, {"GPU-a"}, std::nullopt);
  EXPECT_THROW((void)shared_gpu_error({broken}, "n1"), logic_error);
}

TEST(TmaGpus, AssignmentDescribesItselfForTheLogAndTheStartRecord) {
  gpu_assignment a;
  EXPECT_EQ(a.describe(), "no CUDA device (this rank trains on none)");
  a.devices = {2, 3};
  a.identities = {{"GPU-a", "0000:61:00.0", "H100"}, {"GPU-b", "0000:62:00.0", "H100"}};
  a.node_index = 1;
  a.node_gpu_ranks = 4;
  a.reason = "node-local GPU rank 1 of 4, 2 devices each of the 8 visible";
  EXPECT_EQ(a.describe(),
            "CUDA devices [2,3] (GPU-a 0000:61:00.0, GPU-b 0000:62:00.0): node-local GPU rank 1 "
            "of 4, 2 devices each of the 8 visible");
  auto const j = nlohmann::json::parse(a.json());
  EXPECT_EQ(j["devices"], nlohmann::json({2, 3}));
  EXPECT_EQ(j["uuids"], nlohmann::json({"GPU-a", "GPU-b"}));
  EXPECT_EQ(j["pci_bus_ids"], nlohmann::json({"0000:61:00.0", "0000:62:00.0"}));
  EXPECT_EQ(j["node_index"], 1);
  EXPECT_EQ(j["node_gpu_ranks"], 4);
  EXPECT_FALSE(j.contains("error"));
  a.error = "no luck";
  EXPECT_EQ(a.describe(), "no luck");
  EXPECT_EQ(nlohmann::json::parse(a.json())["error"], "no luck");
}

}  // namespace
}  // namespace coopgnn::tma
