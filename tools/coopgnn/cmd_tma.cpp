// `coopgnn tma`: time-based model aggregation over MPI (README.md "Multi-machine training";
// docs/design.md section 7.2; Zhu et al. 2023). Launched as
// `mpirun -np 1+M coopgnn tma --scheme S ...`: rank 0 is the server and evaluator, ranks 1..M the
// trainers, each running the single-node runtime on its part of the graph.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <numeric>
#include <set>
#include <thread>

#include "bench/drivers/results.hpp"
#include "runtime/core/assert.hpp"
#include "runtime/core/error.hpp"
#include "runtime/core/log.hpp"
#include "runtime/core/timer.hpp"
#include "runtime/graph/csc.hpp"
#include "runtime/graph/npy.hpp"
#include "runtime/graph/partition.hpp"
#include "pipeline/checkpoint.hpp"
#include "pipeline/report.hpp"
#include "pipeline/run_sizes.hpp"
#include "pipeline/trainer.hpp"
#include "tma/engine.hpp"
#include "tma/evaluator.hpp"
#include "tma/fingerprint.hpp"
#include "tma/workers.hpp"
#include "tools/coopgnn/commands.hpp"
#include "tools/coopgnn/progress.hpp"
#include "tools/coopgnn/train_options.hpp"

namespace coopgnn::cli {

namespace {

struct tma_options {
  train_options train;
  std::string mode = "cooperative";  // as `train`'s (docs/usage.md, "coopgnn tma")
  std::string scheme = "randomtma";
  std::int32_t parts = 0;  // 0: trainers + dropped
  std::int64_t clusters = 0;
  std::string partition_dir;
  std::vector<std::int32_t> drop_parts;
  std::uint64_t partition_seed = 1;
  double interval = 120;
  double time_limit = 3600;
  double heartbeat_timeout = 300;
  std::int64_t max_epochs = 0;
  int correction_steps = 2;
  std::string out = "tma_out";
  std::string command_line;
};

/// The JSON-lines log of the server (OUT/tma.jsonl, started empty): each line goes out with one
/// write(2) of an O_APPEND descriptor (line_appender), so a killed job keeps every line written
/// before and never a torn one. A failed write is logged as an error, not fatal.
class jsonl_log {
 public:
  explicit jsonl_log(const std::filesystem::path& p) : out_(truncated(p)) {}
  void write(const std::string& line) {
    std::lock_guard<std::mutex> lk(mu_);
    try {
      out_.append(line);
    } catch (const io_error& e) {
      log::error("{}", e.what());
    }
  }

 private:
  static std::filesystem::path truncated(const std::filesystem::path& p) {
    std::ofstream f(p, std::ios::trunc);
    if (!f) throw io_error(fmt::format("{}: cannot open for writing", p.string()));
    return p;
  }
  std::mutex mu_;
  line_appender out_;
};

/// Part ids: from --partition DIR (parts.npy of `coopgnn partition`) or computed here.
partition_result make_parts(const tma_options& o, const dataset& ds, tma::scheme sch,
                            std::int32_t num_parts) {
  if (!o.partition_dir.empty()) {
    auto const file = std::filesystem::path(o.partition_dir) / "parts.npy";
    scoped_timer t(nullptr);
    partition_files pf = read_partition_files(o.partition_dir, ds.num_nodes, num_parts);
    // The scheme that wrote it (coopgnn partition's summary.json) must be this run's.
    COOPGNN_EXPECTS(!pf.scheme || *pf.scheme == to_string(*tma::partition_of(sch)),
                    "--partition {}: written by --scheme {}, but --scheme {} trains on {} parts",
                    o.partition_dir, pf.scheme.value_or(""), o.scheme,
                    to_string(*tma::partition_of(sch)));
    partition_result r;
    r.parts = std::move(pf.parts);
    r.clusters_reason = "read from " + file.string();
    r.seconds = t.seconds();
    return r;
  }
  partition_request req;
  req.scheme = *tma::partition_of(sch);
  req.num_parts = num_parts;
  if (o.clusters > 0) req.num_clusters = o.clusters;
  req.seed = o.partition_seed;
  return run_partition(ds, req);
}

void print_rank0(int rank, const std::string& s) {
  if (rank == 0) {
    fmt::print("{}\n", s);
    std::fflush(stdout);
  }
}

int run_tma(tma_options& o) {
  tma::scheme const sch = tma::parse_scheme(o.scheme);
  bool const ggs = sch == tma::scheme::ggs;
  tma::mpi_session s(0, o.train.cfg.comm_timeout_s);
  int const rank = s.rank(), world = s.size();
  log::set_prefix(fmt::format("rank {}", rank));  // every diagnostic line says whose it is
  auto hosts = s.hosts();
  COOPGNN_EXPECTS(world >= 2,
                  "coopgnn tma runs as 1 server + M trainers, but MPI reports a world of {}: "
                  "start it with `mpirun -np 1+M coopgnn tma ...` (a world of 1 also means a "
                  "launcher without PMI support started every process as a singleton)",
                  world);
  int const M = world - 1;
  std::set<std::int32_t> const dropped(o.drop_parts.begin(), o.drop_parts.end());
  COOPGNN_EXPECTS(dropped.size() == o.drop_parts.size(), "--drop-parts lists a part twice");
  COOPGNN_EXPECTS(!ggs || dropped.empty(), "--drop-parts needs a partitioned scheme, not ggs");
  std::int32_t const parts = M + static_cast<std::int32_t>(dropped.size());
  COOPGNN_EXPECTS(o.parts == 0 || o.parts == parts,
                  "--parts {} but the world has {} trainers and {} dropped parts ({} parts): start "
                  "{} ranks (mpirun -np {})",
                  o.parts, M, dropped.size(), parts, 1 + o.parts - dropped.size(),
                  1 + o.parts - dropped.size());
  for (std::int32_t d : dropped) {
    COOPGNN_EXPECTS(d >= 0 && d < parts, "--drop-parts {}: parts are 0..{}", d, parts - 1);
  }
  if (!ggs && !o.partition_dir.empty() && o.clusters > 0) {
    COOPGNN_FAIL("--clusters and --partition: the partition file already fixes the clusters");
  }
  print_rank0(
      rank, fmt::format("coopgnn tma: scheme {} world {} (server {} + {} trainers on {})", o.scheme,
                        world, hosts[0], M,
                        fmt::join(std::vector<std::string>(hosts.begin() + 1, hosts.end()), ",")));

  // Every rank reads the dataset (a trainer keeps only its part; the server evaluates on it).
  o.train.quiet = o.train.quiet || rank != 0;
  o.train.cfg.mode = parse_mode(o.mode);
  std::unique_ptr<loaded_dataset> data;
  // A rank's set-up error (bad options or data, or ranks that disagree) ends every rank with
  // status 1, a user error; 2 only for a bug in coopgnn (docs/usage.md, "Exit status").
  std::string setup_error;
  int setup_status = 1;
  auto setup_failed = [&](const std::exception& e) {
    setup_error = e.what();
    if (dynamic_cast<const internal_error*>(&e) != nullptr) {
      setup_error = "internal error (a bug in coopgnn): " + setup_error;
      setup_status = 2;
    }
  };
  if (o.train.task == "auto") o.train.task = "link_prediction";
  try {
    o.train.record_content = true;  // the ranks' fingerprints compare it
    data = load(o.train, /*edge_list=*/true);  // partitioned below
    COOPGNN_EXPECTS(o.train.cfg.task == task_kind::link_prediction,
                    "coopgnn tma trains link prediction (the paper's task): dataset '{}' has no "
                    "link-prediction task or --task says otherwise",
                    data->ds.name);
    resolve_pes(o.train);
    check_run_footprint(data->ds, o.train.cfg);
    o.train.cfg.eval_every = 0;
  } catch (const std::exception& e) {
    setup_failed(e);
  }
  if (!s.all(setup_error.empty())) {
    if (!setup_error.empty()) log::error("{}", setup_error);
    return setup_status;
  }
  const dataset& ds = data->ds;

  // The ranks agree on what they train before any of them builds a trainer: options that change
  // the arithmetic, the model's size, the task and the dataset's content (a rank started with
  // another --hidden would otherwise corrupt the averages).
  std::string mine;
  try {
    std::int64_t const parameters = models::layout_of(model_config_for(ds, o.train.cfg)).num_values;
    mine = tma::rank_fingerprint(ds, o.train.cfg, o.scheme, parameters, o.train.dataset_content)
               .dump();
  } catch (const std::exception& e) {
    setup_failed(e);
  }
  if (!s.all(setup_error.empty())) {
    if (!setup_error.empty()) log::error("{}", setup_error);
    return setup_status;
  }
  if (std::string const why = tma::fingerprint_mismatch(s.all_gather(mine)); !why.empty()) {
    if (rank == 0) log::error("{}", why);
    return setup_status;
  }

  // CUDA backend: every rank that trains takes its own GPUs of its node (the trainers; the
  // server evaluates on the host and trains only for LLCG's correction steps); two ranks on one
  // GPU stop the job (tma::assign_gpus).
  std::vector<std::string> gpu_choices;  // [world] each rank's gpu_assignment::json()
  if (o.train.cfg.compute_backend == backend::cuda) {
    bool const uses_gpus = rank != 0 || sch == tma::scheme::llcg;
    tma::gpu_assignment const gpus =
        tma::assign_gpus(s, uses_gpus, o.train.cfg.num_pes, o.train.cfg.pes_per_gpu);
    gpu_choices = s.all_gather(gpus.json());
    if (!s.all(gpus.error.empty())) {
      if (!gpus.error.empty()) log::error("({}): {}", s.host(), gpus.error);
      return setup_status;
    }
    o.train.cfg.devices = gpus.devices;
    if (uses_gpus) log::info("({}): {}", s.host(), gpus.describe());
  }

  // The partition, computed on rank 0 and broadcast (METIS results may differ across builds).
  std::vector<std::int32_t> part_of;
  partition_result pres;
  double part_seconds = 0;
  if (!ggs) {
    if (rank == 0) {
      try {
        pres = make_parts(o, ds, sch, parts);
        part_of = pres.parts;
        part_seconds = pres.seconds;
      } catch (const std::exception& e) {
        setup_failed(e);
      }
    }
    if (!s.all(setup_error.empty())) {
      if (!setup_error.empty()) log::error("{}", setup_error);
      return setup_status;
    }
    s.broadcast(part_of);
    s.broadcast(part_seconds);
  }
  std::vector<std::int32_t> trained;  // trainer rank r trains part trained[r - 1]
  for (std::int32_t k = 0; k < parts; ++k) {
    if (!dropped.contains(k)) trained.push_back(k);
  }

  tma::engine_options eo;
  eo.sch = sch;
  eo.clock = {o.interval, o.time_limit, o.heartbeat_timeout};
  eo.peer_timeout = o.train.cfg.comm_timeout_s;
  if (ggs) eo.contributors = {1};

  if (rank != 0) {
    dataset local;
    std::unique_ptr<csc_graph> local_g;
    std::unique_ptr<tma::runtime_trainer> worker;
    train_config cfg = o.train.cfg;
    try {
      if (ggs) {
        worker =
            std::make_unique<tma::runtime_trainer>(ds, data->g, cfg, rank - 1, M, o.max_epochs);
      } else {
        std::int32_t const k = trained[static_cast<std::size_t>(rank - 1)];
        local = induced_subgraph(ds, part_of, k);
        COOPGNN_EXPECTS(local.link && !local.link->train.empty(),
                        "part {} keeps no training edge (of {}): fewer parts or --scheme "
                        "randomtma",
                        k, ds.link->train.size());
        local_g = std::make_unique<csc_graph>(build_csc(local.num_nodes, local.src, local.dst));
        // induced_subgraph read the part's rows from the file: they are in memory now.
        if (cfg.feature_storage == storage_tier::mmap) cfg.feature_storage = storage_tier::host;
        // Each trainer shuffles and draws negatives with its own seed (its data differ anyway).
        cfg.seed = o.train.cfg.seed + static_cast<std::uint64_t>(rank);
        worker = std::make_unique<tma::runtime_trainer>(local, *local_g, cfg, 0, 1, o.max_epochs);
        log::info("trainer ({}): part {} |V| {} |E| {} train pairs {} P={} {} params {}", s.host(),
                  k, local.num_nodes, local.num_edges(), local.link->train.size(), cfg.num_pes,
                  to_string(cfg.mode), worker->num_parameters());
      }
    } catch (const std::exception& e) {
      setup_failed(e);
    }
    if (!s.all(setup_error.empty())) {
      if (!setup_error.empty()) log::error("{}", setup_error);
      return setup_status;
    }
    try {
      tma::run_trainer(s, *worker, eo);
    } catch (const std::exception& e) {
      log::error("trainer: {}", e.what());
      tma::mpi_session::abort(1);
    }
    return 0;
  }

  // Rank 0: server, evaluator, reports.
  std::filesystem::path const out(o.out);
  std::unique_ptr<tma::runtime_server> server;
  std::unique_ptr<jsonl_log> log;
  partition_report prep;
  try {
    std::filesystem::create_directories(out);
    log = std::make_unique<jsonl_log>(out / "tma.jsonl");
    server = std::make_unique<tma::runtime_server>(
        ds, data->g, o.train.cfg, sch == tma::scheme::llcg ? o.correction_steps : 0);
    if (!ggs) prep = partition_summary(ds, part_of, parts);
  } catch (const std::exception& e) {
    setup_failed(e);
  }
  if (!s.all(setup_error.empty())) {
    if (!setup_error.empty()) log::error("{}", setup_error);
    return setup_status;
  }
  nlohmann::json start;
  start["event"] = "start";
  start["scheme"] = o.scheme;
  start["command"] = o.command_line;
  start["dataset"] = ds.name;
  start["dataset_dir"] = o.train.dataset;
  start["trainers"] = M;
  start["parts"] = ggs ? nlohmann::json(nullptr) : nlohmann::json(parts);
  start["dropped_parts"] = o.drop_parts;
  start["hosts"] = hosts;
  start["interval"] = o.interval;
  start["time_limit"] = o.time_limit;
  start["pes_per_trainer"] = o.train.cfg.num_pes;
  start["mode"] = o.mode;
  start["backend"] = to_string(o.train.cfg.compute_backend);
  if (!gpu_choices.empty()) {
    nlohmann::json g = nlohmann::json::array();
    for (int r = 0; r < world; ++r) {
      auto j = nlohmann::json::parse(gpu_choices[static_cast<std::size_t>(r)]);
      j["rank"] = r;
      j["host"] = hosts[static_cast<std::size_t>(r)];
      g.push_back(std::move(j));
    }
    start["gpus"] = std::move(g);
  }
  start["batch_size_per_trainer"] = o.train.cfg.batch_size;
  start["gemm_math"] = to_string(o.train.cfg.gemm);
  start["options"] = arithmetic_options(o.train.cfg);
  start["parameters"] = server->num_parameters();
  start["created"] = bench::utc_now_iso8601();
  if (!ggs) {
    nlohmann::json pj = partition_report_json(prep);
    pj["scheme"] = to_string(*tma::partition_of(sch));
    pj["seconds"] = part_seconds;
    pj["source"] = o.partition_dir.empty() ? "computed" : o.partition_dir;
    if (pres.num_clusters > 0) pj["clusters"] = pres.num_clusters;
    start["partition"] = pj;
    fmt::print(
        "partition {}: {} parts ({} trained, dropped [{}]) in {:.2f}s; r = kept training "
        "edges {} / {} = {:.4f}; {}\n",
        to_string(*tma::partition_of(sch)), parts, trained.size(), fmt::join(o.drop_parts, ","),
        part_seconds, prep.kept_edges, prep.total_edges, prep.kept_ratio,
        partition_distance_text(prep));
  }
  log->write(start.dump());
  fmt::print(
      "server: interval {:.1f}s, time limit {:.1f}s, heartbeat timeout {:.0f}s; {} "
      "parameters; writing {}\n",
      o.interval, o.time_limit, o.heartbeat_timeout, server->num_parameters(),
      (out / "tma.jsonl").string());
  std::fflush(stdout);

  int const eval_threads = std::max(1u, std::thread::hardware_concurrency());
  tma::link_scorer val_scorer(ds, data->g, o.train.cfg, eval_threads);
  std::mutex print_mu;
  double best_seen = -1e300;
  tma::evaluator ev([&](std::span<const float> p) { return val_scorer(p, false); },
                    [&](const std::string& line) {
                      log->write(line);
                      auto const j = nlohmann::json::parse(line);
                      std::lock_guard<std::mutex> lk(print_mu);
                      std::string val = "not evaluated (the evaluator was busy)";
                      if (!j["val_metric"].is_null()) {
                        double const v = j["val_metric"].get<double>();
                        best_seen = std::max(best_seen, v);
                        val = fmt::format("val {} {:.4f} (best {:.4f})",
                                          j.value("metric", "metric"), v, best_seen);
                      }
                      std::vector<std::string> loss;
                      for (auto const& x : j["train_loss"]) {
                        loss.push_back(x.is_null() ? "-" : fmt::format("{:.4f}", x.get<double>()));
                      }
                      fmt::print("gen {:>3} {:>7.1f}s {:<7} steps [{}] loss [{}] {}\n",
                                 j["generation"].get<int>(), j["seconds"].get<double>(),
                                 j["command"].get<std::string>(),
                                 fmt::join(j["steps"].get<std::vector<std::int64_t>>(), ","),
                                 fmt::join(loss, ","), val);
                      std::fflush(stdout);
                    },
                    out / "best.npy");
  eo.log = [](const std::string& l) { log::error("{}", l); };
  eo.on_fatal = [&](const std::string& j) { log->write(j); };
  tma::server_result res;
  try {
    // Rank 0's progress through the time budget, at each aggregation: a bar on a terminal, a
    // line every kProgressLineSeconds in a log; --no-progress and --quiet turn it off.
    auto const limit_s = static_cast<std::int64_t>(std::ceil(o.time_limit));
    progress_reporter bar("tma seconds", !o.train.no_progress && !o.train.quiet,
                          isatty(fileno(stderr)) != 0, kProgressLineSeconds, stderr);
    scoped_timer const since_start(nullptr);
    res = tma::run_server(s, *server, eo, [&](tma::aggregate a) {
      ev.submit(std::move(a));
      bar.update(std::min(static_cast<std::int64_t>(since_start.seconds()), limit_s), limit_s);
    });
  } catch (const std::exception& e) {
    nlohmann::json j;
    j["event"] = "terminated";
    j["reason"] = e.what();
    log->write(j.dump());
    log::error("server: {}; {} holds every line written so far", e.what(),
               (out / "tma.jsonl").string());
    tma::mpi_session::abort(143);
  }
  tma::evaluation_history hist = ev.finish();
  std::int64_t const n = static_cast<std::int64_t>(hist.last_params.size());
  write_npy(out / "last.npy", std::span<const float>(hist.last_params),
            std::span<const std::int64_t>(&n, 1));
  if (hist.best_generation) {  // OUT is the best aggregate's saved model: embed --model OUT
    write_saved_model(out, {model_config_for(ds, o.train.cfg), hist.best_params, std::nullopt,
                            run_identity(ds, o.train.cfg, {{"--scheme", o.scheme}}), {}});
  }

  // The end: test the best aggregate and the last (Zhu et al. 2023 section 4.1).
  fmt::print("testing the best (generation {}) and the last (generation {}) aggregate...\n",
             hist.best_generation ? static_cast<std::int64_t>(*hist.best_generation) : -1,
             hist.last_generation);
  std::fflush(stdout);
  tma::score const last_test = val_scorer(hist.last_params, true);
  std::optional<tma::score> best_test;
  if (hist.best_generation) {
    best_test = *hist.best_generation == hist.last_generation ? last_test
                                                              : val_scorer(hist.best_params, true);
  }
  double last_val = std::numeric_limits<double>::quiet_NaN();
  for (auto const& p : hist.points) {
    if (p.generation == hist.last_generation && p.val) last_val = *p.val;
  }
  std::vector<std::int64_t> steps;
  for (auto const& p : res.final_progress) steps.push_back(p.steps);
  auto const [mn, mx] = std::minmax_element(steps.begin(), steps.end());
  nlohmann::json fin;
  fin["event"] = "final";
  fin["scheme"] = o.scheme;
  fin["metric"] = last_test.metric;
  fin["aggregations"] = res.aggregations;
  fin["bytes_aggregated"] = res.bytes_aggregated;
  fin["seconds"] = res.seconds;
  fin["convergence_seconds"] = number_or_null(tma::convergence_seconds(hist.points));
  fin["steps"] = steps;
  fin["steps_min"] = *mn;
  fin["steps_max"] = *mx;
  fin["steps_spread"] = *mn > 0
                            ? nlohmann::json(static_cast<double>(*mx) / static_cast<double>(*mn))
                            : nlohmann::json(nullptr);
  fin["best"] = {
      {"generation",
       hist.best_generation ? nlohmann::json(*hist.best_generation) : nlohmann::json(nullptr)},
      {"val", hist.best_generation ? nlohmann::json(hist.best_val) : nlohmann::json(nullptr)},
      {"test", best_test ? number_or_null(best_test->value) : nlohmann::json(nullptr)},
      {"test_metrics", best_test ? tma::metrics_json(*best_test) : nlohmann::json(nullptr)},
      {"checkpoint", hist.best_generation ? nlohmann::json((out / "best.npy").string())
                                          : nlohmann::json(nullptr)}};
  fin["last"] = {{"generation", hist.last_generation},
                 {"val", number_or_null(last_val)},
                 {"test", number_or_null(last_test.value)},
                 {"test_metrics", tma::metrics_json(last_test)},
                 {"checkpoint", (out / "last.npy").string()}};
  fin["evaluated"] = std::count_if(hist.points.begin(), hist.points.end(),
                                   [](auto const& p) { return p.val.has_value(); });
  if (!ggs) fin["kept_ratio"] = prep.kept_ratio;
  fin["dropped_parts"] = o.drop_parts;
  log->write(fin.dump());
  bench::write_file_atomic(out / "summary.json", fin.dump(2) + "\n");
  fmt::print(
      "\n{} ({} trainers{}): {} aggregations in {:.1f}s, steps {}..{}; test {} best {} "
      "(generation {}), last {:.4f}; convergence {:.1f}s; {}/summary.json\n",
      o.scheme, M,
      dropped.empty() ? "" : fmt::format(", dropped [{}]", fmt::join(o.drop_parts, ",")),
      res.aggregations, res.seconds, *mn, *mx, last_test.metric,
      best_test ? fmt::format("{:.4f}", best_test->value) : std::string("-"),
      hist.best_generation ? static_cast<std::int64_t>(*hist.best_generation) : -1, last_test.value,
      tma::convergence_seconds(hist.points), out.string());
  return 0;
}

}  // namespace

void add_tma_command(CLI::App& app) {
  auto o = std::make_shared<tma_options>();
  auto* c = app.add_subcommand(
      "tma",
      "Time-based model aggregation across machines over MPI (Zhu et al. 2023): run as\n"
      "  mpirun -np 1+M coopgnn tma --scheme S --dataset DIR [options]\n"
      "Rank 0 is the server (clock, averaging, LLCG correction, evaluator); ranks 1..M are\n"
      "trainers, each training link prediction with the single-node runtime (--pes PEs,\n"
      "--mode, --backend) on its node-induced part of the graph. Every --interval seconds the\n"
      "server has the trainers finish their step and replaces their weights by the unweighted\n"
      "mean (optimizer state stays local); the evaluator scores each aggregate on the\n"
      "validation pairs (MRR against the fixed negatives); at --time-limit the best and the\n"
      "last aggregate are tested. Schemes: randomtma (random vertex parts), supertma (METIS\n"
      "mini-clusters dealt randomly), psgd-pa (METIS, one part per trainer), llcg (psgd-pa +\n"
      "--correction-steps server steps on the full graph after each average), ggs (no parts:\n"
      "synchronous data parallelism, gradients all-reduced every step). Writes OUT/tma.jsonl\n"
      "(one JSON line per event, flushed as written), OUT/summary.json, OUT/best.npy and\n"
      "OUT/last.npy (float32 parameter vectors), and the best aggregate as a saved model\n"
      "(OUT/model.npz and OUT/manifest.json: embed, predict and score-pairs read OUT).\n"
      "GPUs (--backend cuda): each trainer needs n = ceil(--pes / --pes-per-gpu) GPUs (--pes:\n"
      "default the GPUs the rank sees x --pes-per-gpu). The L trainer ranks of a node (by rank;\n"
      "the server evaluates on the host and counts only for llcg) take disjoint blocks: the i-th\n"
      "takes GPUs i*n .. i*n+n-1 when L*n GPUs are visible; when fewer are and\n"
      "CUDA_VISIBLE_DEVICES is set (srun --gpus-per-task, a per-rank wrapper), each takes its\n"
      "first n; otherwise the run stops naming the numbers. Ranks that would share one GPU\n"
      "(compared by UUID, e.g. the same CUDA_VISIBLE_DEVICES for every rank) stop the run.\n"
      "One GPU per rank on an 8-GPU node: mpirun -np 9 coopgnn tma --backend cuda --pes 1 ...;\n"
      "a whole node per rank: mpirun --map-by ppr:1:node ... --backend cuda --pes 8.");
  add_common_options(c, o->train);
  // The training options tma does not take leave its --help; given, they are refused with why.
  auto const refused = std::make_shared<std::vector<refused_option>>(hide_refused_options(
      *c, option_commands::tma,
      {{"--dry-run", "tma has no dry run (start it with a short --time-limit)"},
       {"--metrics-out", "the server writes one JSON line per event to OUT/tma.jsonl"},
       {"--append-metrics", "the server writes one JSON line per event to OUT/tma.jsonl"}}));
  c->add_option("--mode", o->mode,
                "each trainer's minibatching over its own --pes PEs: cooperative (the default, "
                "as for train) or independent; with --pes 1 the two are the same")
      ->check(CLI::IsMember({"cooperative", "independent"}))
      ->capture_default_str();
  c->add_option("--scheme", o->scheme, "randomtma, supertma, psgd-pa, llcg or ggs")
      ->check(CLI::IsMember({"randomtma", "supertma", "psgd-pa", "llcg", "ggs"}))
      ->capture_default_str();
  c->add_option("--parts", o->parts,
                "number of parts M (default: trainers + dropped parts; checked against the "
                "world size)");
  c->add_option("--clusters", o->clusters,
                "supertma: METIS mini-clusters N (default min(15000, |V| / 8))");
  c->add_option("--partition", o->partition_dir,
                "use OUT/parts.npy of `coopgnn partition` instead of partitioning here");
  c->add_option("--partition-seed", o->partition_seed, "seed of the partitioner")
      ->capture_default_str();
  c->add_option("--drop-parts", o->drop_parts,
                "parts that are generated but never trained (trainer failure, the paper's F): "
                "start 1 + M - F ranks")
      ->delimiter(',');
  c->add_option("--interval", o->interval, "seconds between aggregations")->capture_default_str();
  c->add_option("--time-limit", o->time_limit, "seconds of training")->capture_default_str();
  c->add_option("--heartbeat-timeout", o->heartbeat_timeout,
                "seconds a trainer may stay silent (longer than one step) before the server "
                "reports it and aborts the job")
      ->capture_default_str();
  c->add_option("--max-epochs", o->max_epochs, "epoch budget per trainer; 0 = until the time limit")
      ->capture_default_str();
  c->add_option("--correction-steps", o->correction_steps, "llcg: server steps after each average")
      ->capture_default_str();
  c->add_option("--out", o->out, "output directory")->capture_default_str();
  c->callback([o, refused, &app] {
    auto* cmd = app.get_subcommand("tma");
    check_refused_options(*cmd, *refused);
    // Options a scheme does not use are refused, not ignored.
    auto given = [&](const char* name) { return cmd->get_option(name)->count() > 0; };
    if (o->scheme == "ggs") {
      for (const char* name : {"--parts", "--clusters", "--partition", "--partition-seed"}) {
        COOPGNN_EXPECTS(!given(name), "{}: --scheme ggs trains every trainer on the whole graph",
                        name);
      }
    }
    COOPGNN_EXPECTS(!given("--clusters") || o->scheme == "supertma",
                    "--clusters is SuperTMA's mini-cluster count; --scheme {} does not use it",
                    o->scheme);
    COOPGNN_EXPECTS(!given("--correction-steps") || o->scheme == "llcg",
                    "--correction-steps is LLCG's; --scheme {} does not correct", o->scheme);
    o->command_line = bench::process_command_line("coopgnn tma --scheme " + o->scheme);
    int const rc = run_tma(*o);
    if (rc != 0) std::exit(rc);
  });
}

}  // namespace coopgnn::cli
