// The TMA engine under mpirun (tests/tma/CMakeLists.txt runs it with 3 ranks on loopback): rank
// 0 the server, ranks 1..M trainers with synthetic workers whose parameters are integers, so
// every expected value is computed here from what the workers logged, not by the engine.
//
//   protocol_check SCENARIO
//     mean     averages equal the exact mean of the trainers' pre-average weights, identical on
//              every trainer and on the server; the initial broadcast reaches every trainer
//     slow     trainer 2 is 20x slower: no deadlock, the same generations everywhere, the fast
//              trainer finishes many more steps (time-based, not step-based), STOP ends all
//     complete every trainer exhausts its step budget: the server stops before its time limit
//     llcg     the server's correction is applied after the mean and reaches every trainer
//     ggs      gradients are all-reduced every step: every trainer holds identical weights, equal
//              to the weights a single process computes from the same gradients
//     timeout  trainer 2 hangs in a step: the server reports it and aborts (exit != 0)
//     peer_stall  GGS with --peer-timeout 1 and COOPGNN_FAULT_INJECT=rank:2,step:3,kind:stall
//              (set by CMake): trainer 1 waits in the step's gradient reduction, reports the
//              collective after 1 s and aborts the job (exit != 0; no PASS line: CMake checks the
//              message and mpirun's status)
//     peer_exit  the mean scenario with COOPGNN_FAULT_INJECT=rank:2,step:3,kind:exit: rank 2
//              ends without MPI_Finalize; the job must end non-zero within the time limit
//     ggs_runtime  GGS with the real runtime (link prediction on a split of the bundled Cora, one
//              epoch, one PE per trainer): the final weights equal those of ONE process training
//              the same global batches with M independent PEs (trainer::step), bit for bit
//              (M = 2: the sum of two shares rounds as the host communicator's sum does)
//     gpus     assign_gpus with every trainer using GPUs (1 PE each) and the server none: the
//              node-local numbering (all ranks on one node: trainer r is GPU rank r - 1 of 2),
//              and the outcome the visible devices imply (none: every trainer reports that;
//              one: the two trainers cannot both have it; two or more: GPUs 0 and 1, distinct
//              uuids); mpi_session::all_gather returns every rank's string in rank order
// Prints "PASS SCENARIO" on rank 0 and exits 0, or names the failed check and exits 1.
#include <mpi.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "runtime/graph/csc.hpp"
#include "runtime/graph/dataset.hpp"
#include "tma/engine.hpp"
#include "tma/workers.hpp"
#include "tools/coopgnn/split_edges.hpp"

namespace {

using namespace coopgnn;
using namespace coopgnn::tma;

constexpr int num_params = 5;

int failures = 0;
void expect(bool ok, const std::string& what) {
  if (!ok) {
    std::fprintf(stderr, "FAIL: %s\n", what.c_str());
    ++failures;
  }
}

/// A trainer whose step adds `rank` to every weight (integers stay exact in float32).
struct synthetic_trainer : trainer_worker {
  int rank;
  double step_seconds;
  std::int64_t budget;  // steps; < 0 = unlimited
  bool hang = false;
  std::vector<float> w = std::vector<float>(num_params, 0.0f);
  std::int64_t steps = 0;
  std::vector<std::vector<float>> before, after;  // per set_parameters call (first: initial)
  synthetic_trainer(int r, double s, std::int64_t b) : rank(r), step_seconds(s), budget(b) {}
  std::int64_t num_parameters() const override { return num_params; }
  bool done() const override { return budget >= 0 && steps >= budget; }
  std::int64_t epoch() const override { return 1; }
  double step() override {
    if (hang && steps == 3) std::this_thread::sleep_for(std::chrono::seconds(30));
    std::this_thread::sleep_for(std::chrono::duration<double>(step_seconds));
    for (float& x : w) x += static_cast<float>(rank);
    ++steps;
    return static_cast<double>(rank);
  }
  // GGS: the gradient of step s on trainer r is (r + s) for weight j times (j + 1).
  std::vector<float> g = std::vector<float>(num_params, 0.0f);
  double compute_gradients() override {
    std::this_thread::sleep_for(std::chrono::duration<double>(step_seconds));
    for (int j = 0; j < num_params; ++j) g[j] = static_cast<float>((rank + steps) * (j + 1));
    return 1.0;
  }
  void gradients(std::span<float> out) const override {
    std::copy(g.begin(), g.end(), out.begin());
  }
  void apply_gradients(std::span<const float> grads) override {
    for (int j = 0; j < num_params; ++j) w[j] -= grads[j];
    ++steps;
  }
  void parameters(std::span<float> out) const override {
    std::copy(w.begin(), w.end(), out.begin());
  }
  void set_parameters(std::span<const float> v) override {
    before.push_back(w);
    w.assign(v.begin(), v.end());
    after.push_back(w);
  }
};

struct synthetic_server : server_worker {
  float delta = 0;  // llcg: the correction adds S * delta
  int S = 2;
  std::int64_t num_parameters() const override { return num_params; }
  void initial_parameters(std::span<float> out) override {
    for (int j = 0; j < num_params; ++j) out[j] = static_cast<float>(10 * (j + 1));
  }
  void correct(std::span<float> params) override {
    for (int s = 0; s < S; ++s) {
      for (float& x : params) x += delta;
    }
  }
};

/// Gathers every trainer's log of `after`/`before` to rank 0 (count of aggregations first).
std::vector<std::vector<float>> gather_log(const std::vector<std::vector<float>>& mine, int size,
                                           int rank, std::vector<int>* counts) {
  int n = static_cast<int>(mine.size());
  std::vector<int> ns(static_cast<std::size_t>(size));
  MPI_Gather(&n, 1, MPI_INT, ns.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  std::vector<float> flat;
  for (auto const& v : mine) flat.insert(flat.end(), v.begin(), v.end());
  std::vector<int> sizes(static_cast<std::size_t>(size)), displs(static_cast<std::size_t>(size));
  int total = 0;
  for (int r = 0; r < size; ++r) {
    sizes[r] = ns[r] * num_params;
    displs[r] = total;
    total += sizes[r];
  }
  std::vector<float> all(static_cast<std::size_t>(total));
  MPI_Gatherv(flat.data(), static_cast<int>(flat.size()), MPI_FLOAT, all.data(), sizes.data(),
              displs.data(), MPI_FLOAT, 0, MPI_COMM_WORLD);
  std::vector<std::vector<float>> out;
  if (rank == 0) {
    *counts = ns;
    for (int r = 0; r < size; ++r) {
      for (int i = 0; i < ns[r]; ++i) {
        auto const* p = all.data() + displs[r] + i * num_params;
        out.emplace_back(p, p + num_params);
      }
    }
  }
  return out;
}

/// ggs_runtime: every rank builds the same link-prediction split of the bundled Cora.
struct ggs_data {
  dataset ds;
  csc_graph g;
  train_config cfg;
};
ggs_data make_ggs_data() {
  ggs_data d;
  dataset const cora = read_dataset(std::filesystem::path(COOPGNN_SOURCE_DIR) / "data" / "cora");
  split_options so;
  so.scheme = split_scheme::tma;
  so.negatives = 20;
  d.ds = split_edges(cora, so);
  d.g = build_csc(d.ds.num_nodes, d.ds.src, d.ds.dst);
  d.cfg.task = task_kind::link_prediction;
  d.cfg.mode = minibatch_mode::independent;
  d.cfg.num_pes = 1;
  d.cfg.hidden = 16;
  d.cfg.fanouts = {5, 5};
  d.cfg.batch_size = 300;  // per trainer
  d.cfg.negatives = 2;
  d.cfg.seed = 7;
  d.cfg.eval_every = 0;
  d.cfg.dropout = 0.3f;  // keyed by vertex, not by PE: GGS still equals one process
  return d;
}

int run_ggs_runtime(const mpi_session& s) {
  int const rank = s.rank(), M = s.size() - 1;
  ggs_data d = make_ggs_data();
  engine_options opt;
  opt.sch = scheme::ggs;
  opt.contributors = {1};
  opt.clock = {1000, 1000, 300};
  if (rank != 0) {
    runtime_trainer w(d.ds, d.g, d.cfg, rank - 1, M, 1);
    run_trainer(s, w, opt);
    return 0;
  }
  runtime_server server(d.ds, d.g, d.cfg, 0);
  std::vector<float> init(static_cast<std::size_t>(server.num_parameters()));
  server.initial_parameters(init);
  std::vector<aggregate> aggs;
  server_result res =
      run_server(s, server, opt, [&](aggregate a) { aggs.push_back(std::move(a)); });
  // One process, M independent PEs, global batches of M B: the same batches, cut the same way.
  train_config one = d.cfg;
  one.num_pes = M;
  one.batch_size = d.cfg.batch_size * M;
  runtime_trainer single(d.ds, d.g, one, 0, 1, 1);
  single.set_parameters(init);
  std::int64_t steps = 0;
  while (!single.done()) {
    single.step();
    ++steps;
  }
  std::vector<float> ref(init.size());
  single.parameters(ref);
  double diff = 0, scale = 0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    diff = std::max(diff, static_cast<double>(std::abs(ref[i] - aggs.back().params[i])));
    scale = std::max(scale, static_cast<double>(std::abs(ref[i] - init[i])));
  }
  std::printf(
      "ggs_runtime: %lld steps per trainer, single process %lld steps; max |diff| %.3g "
      "(max change from init %.3g)\n",
      static_cast<long long>(res.final_progress[0].steps), static_cast<long long>(steps), diff,
      scale);
  expect(res.final_progress[0].steps == steps, "GGS steps equal the single process's batches");
  expect(scale > 1e-4, "training moved the weights");
  expect(diff == 0, "GGS weights equal the single process's bit for bit");
  return 0;
}

}  // namespace

/// The gpus scenario (3 ranks on one host, loopback).
void run_gpus(const mpi_session& s) {
  int const rank = s.rank();
  auto const texts = s.all_gather(std::string(static_cast<std::size_t>(rank) * 3, 'a' + rank));
  expect(texts.size() == static_cast<std::size_t>(s.size()), "all_gather: one string per rank");
  for (std::size_t r = 0; r < texts.size(); ++r) {
    expect(texts[r] == std::string(r * 3, static_cast<char>('a' + r)),
           "all_gather: rank " + std::to_string(r) + "'s string");
  }
  bool const uses = rank != 0;
  gpu_assignment const a = assign_gpus(s, uses, 1, 1);
  std::fprintf(stderr, "rank %d: %s\n", rank, a.describe().c_str());
  if (!uses) {
    expect(a.error.empty() && a.devices.empty() && a.node_index == -1 && a.node_gpu_ranks == 0,
           "the server uses no GPU");
    return;
  }
  expect(a.node_index == rank - 1, "trainer r is the node's GPU rank r - 1");
  expect(a.node_gpu_ranks == s.size() - 1, "every trainer is on this node");
  int const visible = query_devices().count;
  if (visible == 0) {
    expect(a.error.find("no CUDA device") != std::string::npos, "no device: " + a.error);
    expect(a.devices.empty(), "no device: no choice");
  } else if (visible == 1 && std::getenv("CUDA_VISIBLE_DEVICES") == nullptr) {
    expect(a.error.find("at most 1 GPU rank per node") != std::string::npos,
           "one device for two ranks: " + a.error);
  } else if (visible == 1) {  // CUDA_VISIBLE_DEVICES: both take device 0, the same GPU
    expect(a.error.find("would share the GPU") != std::string::npos,
           "one device for two ranks: " + a.error);
  } else {
    expect(a.error.empty(), "two devices for two ranks: " + a.error);
    expect(a.devices == std::vector<int>{rank - 1}, "trainer r takes GPU r - 1");
    expect(a.identities.size() == 1, "one identity per device");
  }
}

int main(int argc, char** argv) {
  std::string const scenario = argc > 1 ? argv[1] : "";
  mpi_session s;
  int const rank = s.rank(), size = s.size();
  if (scenario == "gpus") {
    run_gpus(s);
    int local = failures, total = 0;
    MPI_Allreduce(&local, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) std::printf(total == 0 ? "PASS %s\n" : "FAILED %s\n", scenario.c_str());
    return total == 0 ? 0 : 1;
  }
  if (scenario == "ggs_runtime") {
    run_ggs_runtime(s);
    int local = failures, total = 0;
    MPI_Allreduce(&local, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) std::printf(total == 0 ? "PASS %s\n" : "FAILED %s\n", scenario.c_str());
    return total == 0 ? 0 : 1;
  }
  engine_options opt;
  opt.clock.interval = 0.25;
  opt.clock.time_limit = 1.5;
  opt.clock.heartbeat_timeout = 20;
  opt.heartbeat_period = 0.05;
  opt.log = [](const std::string& l) { std::fprintf(stderr, "%s\n", l.c_str()); };
  opt.on_fatal = [](const std::string& j) {
    std::printf("%s\n", j.c_str());
    std::fflush(stdout);
  };
  double step = 0.002;
  std::int64_t budget = -1;
  if (scenario == "slow") opt.clock.time_limit = 2.0;
  if (scenario == "complete") {
    opt.clock.time_limit = 60;
    budget = 50;
  }
  if (scenario == "llcg") opt.sch = scheme::llcg;
  if (scenario == "ggs") {
    opt.sch = scheme::ggs;
    opt.contributors = {1};
    budget = 40;
    opt.clock.time_limit = 60;
  }
  if (scenario == "timeout") opt.clock.heartbeat_timeout = 1.0;
  if (scenario == "peer_stall") {
    opt.sch = scheme::ggs;
    opt.contributors = {1};
    budget = 40;
    opt.clock.time_limit = 60;
    opt.peer_timeout = 1.0;  // the server's heartbeat watch (20 s) must not be what fires
  }
  if (scenario == "peer_exit") opt.peer_timeout = 2.0;
  if (scenario == "slow" && rank == 2) step = 0.04;

  if (rank == 0) {
    synthetic_server server;
    server.delta = scenario == "llcg" ? 1.0f : 0.0f;
    std::vector<aggregate> aggs;
    auto t0 = std::chrono::steady_clock::now();
    server_result res =
        run_server(s, server, opt, [&](aggregate a) { aggs.push_back(std::move(a)); });
    double const wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::vector<int> counts;
    std::vector<std::vector<float>> none;
    auto after = gather_log(none, size, rank, &counts);
    std::vector<int> counts_b;
    auto before = gather_log(none, size, rank, &counts_b);
    expect(res.aggregations == static_cast<std::int64_t>(aggs.size()), "aggregation count");
    expect(!aggs.empty() && aggs.back().cmd == command::stop, "the last aggregation is STOP");
    // Per trainer: set_parameters calls = 1 (initial) + aggregations.
    std::size_t off = 0;
    std::vector<std::size_t> first(static_cast<std::size_t>(size));
    for (int r = 0; r < size; ++r) {
      first[r] = off;
      off += static_cast<std::size_t>(counts[r]);
      if (r > 0) {
        expect(counts[r] == static_cast<int>(aggs.size()) + 1,
               "trainer " + std::to_string(r) + " joined " + std::to_string(counts[r] - 1) +
                   " aggregations, server ran " + std::to_string(aggs.size()));
      }
    }
    if (failures == 0) {
      std::vector<float> init(num_params);
      server.initial_parameters(init);
      for (int r = 1; r < size; ++r) expect(after[first[r]] == init, "initial broadcast");
      for (std::size_t g = 0; g < aggs.size(); ++g) {
        for (int j = 0; j < num_params; ++j) {
          double sum = 0;
          int contributors = 0;
          for (int r = 1; r < size; ++r) {
            if (opt.sch == scheme::ggs && r != 1) continue;
            sum += before[first[r] + g + 1][j];
            ++contributors;
          }
          float expected = static_cast<float>(sum / contributors);
          if (opt.sch == scheme::llcg) expected += static_cast<float>(server.S) * server.delta;
          for (int r = 1; r < size; ++r) {
            expect(after[first[r] + g + 1][j] == expected,
                   "generation " + std::to_string(g + 1) + " weight " + std::to_string(j) +
                       " on trainer " + std::to_string(r) + ": " +
                       std::to_string(after[first[r] + g + 1][j]) + " vs the mean " +
                       std::to_string(expected));
          }
          expect(aggs[g].params[j] == expected, "the server's aggregate equals the trainers'");
        }
      }
    }
    if (scenario == "slow") {
      auto const& p = res.final_progress;
      expect(p.size() == 2 && p[0].steps > 4 * p[1].steps,
             "fast trainer steps " + std::to_string(p[0].steps) + " vs slow " +
                 std::to_string(p[1].steps) + " (expected > 4x)");
      expect(aggs.size() >= 3, "at least 3 aggregations in 2 s at a 0.25 s interval");
      expect(wall < opt.clock.time_limit + 2.0, "STOP ended the run within one step");
    }
    if (scenario == "complete") {
      expect(wall < 30, "the server stopped when every trainer completed, not at its time limit");
      for (auto const& p : res.final_progress) expect(p.steps == budget, "the budget's steps");
    }
    if (scenario == "ggs") {
      // Replay the same gradients in one process: the weights every trainer must hold.
      std::vector<double> w(num_params, 0.0);
      std::vector<float> wf(num_params);
      server.initial_parameters(wf);
      for (std::int64_t st = 0; st < budget; ++st) {
        for (int j = 0; j < num_params; ++j) {
          float sum = 0;
          for (int r = 1; r < size; ++r) sum += static_cast<float>((r + st) * (j + 1));
          wf[j] -= sum;
        }
      }
      expect(aggs.back().params == wf, "GGS weights equal the single-process replay");
    }
    std::printf(failures == 0 ? "PASS %s\n" : "FAILED %s\n", scenario.c_str());
  } else {
    synthetic_trainer w(rank, step, budget);
    w.hang = scenario == "timeout" && rank == 2;
    trainer_result res = run_trainer(s, w, opt);
    std::vector<int> counts;
    gather_log(w.after, size, rank, &counts);
    gather_log(w.before, size, rank, &counts);
    if (static_cast<std::int64_t>(res.generations) + 1 !=
        static_cast<std::int64_t>(w.after.size())) {
      std::fprintf(stderr, "FAIL: rank %d generations\n", rank);
      ++failures;
    }
  }
  int local = failures, total = 0;
  MPI_Allreduce(&local, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  return total == 0 ? 0 : 1;
}
