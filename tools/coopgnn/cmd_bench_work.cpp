// `coopgnn bench work` (bench/drivers/work.hpp; docs/results-schema.md, section `work`).
#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "bench/drivers/work.hpp"
#include "runtime/core/error.hpp"
#include "runtime/core/timer.hpp"
#include "runtime/graph/csc.hpp"
#include "runtime/graph/dataset.hpp"
#include "tools/coopgnn/commands.hpp"
#include "tools/coopgnn/output_paths.hpp"

namespace coopgnn::cli {

namespace {

struct bench_work_args {
  std::string dataset;
  std::vector<std::string> samplers = {"ns", "labor"};
  std::string out = "results";
  bench::work_options opt;
};

/// The process's argv joined; where /proc is unreadable, the equivalent command with every option.
std::string process_command_line_or_canonical(const bench_work_args& a) {
  std::string const canonical = fmt::format(
      "coopgnn bench work --dataset {} --samplers {} --fanouts {} --min-batch {} --max-batch {} "
      "--repeats {} --pes {} --seed {} --out {} --sample-threads {}",
      a.dataset, fmt::join(a.samplers, ","), fmt::join(a.opt.fanouts, ","), a.opt.min_batch,
      a.opt.max_batch, a.opt.repeats, fmt::join(a.opt.pes, ","), a.opt.seed, a.out,
      a.opt.sample_threads);
  return bench::process_command_line(canonical);
}

void run_bench_work(bench_work_args& a) {
  if (a.dataset.empty()) a.dataset = default_dataset_dir();
  a.opt.samplers.clear();
  for (auto const& s : a.samplers) {
    COOPGNN_EXPECTS(s == "ns" || s == "labor", "--samplers: unknown sampler '{}' (use ns, labor)",
                    s);
    a.opt.samplers.push_back(parse_sampler_kind(s));
  }
  // Cheap argument checks before the dataset is read (the candidate count is checked later).
  bench::validate_work_options(a.opt, a.opt.min_batch);
  check_writable_dir(a.out, "--out");

  scoped_timer load_timer(nullptr);
  auto const data = load_dataset(a.dataset);
  dataset const& ds = data->ds;
  csc_graph const& g = data->g;
  std::vector<vid_t> candidates = ds.train;
  bool const all = candidates.empty();
  if (all) {
    candidates.resize(static_cast<std::size_t>(ds.num_nodes));
    std::iota(candidates.begin(), candidates.end(), vid_t{0});
  }
  auto const grid = bench::work_batch_grid(a.opt, static_cast<std::int64_t>(candidates.size()));
  fmt::print(
      "bench work: dataset {} ({}): |V| {} |E| {}; {} candidate seeds ({}); loaded in {:.1f} s\n"
      "samplers {} fanouts {} B = {}..{} ({} sizes) repeats {} P {} seed {}\n",
      ds.name, a.dataset, ds.num_nodes, ds.num_edges(), candidates.size(),
      all ? "all vertices: no train split" : "training vertices", load_timer.seconds(),
      fmt::join(a.samplers, ","), fmt::join(a.opt.fanouts, ","), grid.front(), grid.back(),
      grid.size(), a.opt.repeats, fmt::join(a.opt.pes, ","), a.opt.seed);
  std::fflush(stdout);

  exec_context const ctx(backend::host, 0, a.opt.sample_threads);
  scoped_timer run_timer(nullptr);
  auto const res = bench::run_work_bench(
      ctx, g, candidates, a.opt,
      [&](const std::string& s, std::int64_t B, std::int64_t done, std::int64_t total) {
        fmt::print(stderr, "[bench work] {}/{} sampler {} B {} done ({:.1f} s)\n", done, total, s,
                   B, run_timer.seconds());
        std::fflush(stderr);
      });
  fmt::print("\n{}", bench::format_work_table(a.opt, res));

  bench::result_header const h = bench::host_result_header(
      "work", ds, g, a.dataset, process_command_line_or_canonical(a), a.opt.sample_threads);

  std::filesystem::path const dir(a.out);
  auto const stem = "work_" + file_stem(ds.name);
  bench::write_file_atomic(dir / (stem + ".json"),
                           bench::work_to_json(h, a.opt, res).dump(2) + "\n");
  bench::write_file_atomic(dir / (stem + ".csv"), bench::work_to_csv(res));
  fmt::print("\nwrote {} and {} ({:.1f} s measuring)\n", (dir / (stem + ".json")).string(),
             (dir / (stem + ".csv")).string(), res.seconds);
}

}  // namespace

void add_bench_work_command(CLI::App& bench) {
  auto a = std::make_shared<bench_work_args>();
  auto* cmd = bench.add_subcommand(
      "work",
      "Sampled vertices and edges per seed against the batch size B (Theorems 3.1/3.2 of the "
      "cooperative minibatching paper, Figure 2) and the per-batch check P*W(B/P) >= W(B); "
      "writes OUT/work_<dataset>.json and .csv (docs/results-schema.md).");
  cmd->add_option("--dataset", a->dataset,
                  "Dataset directory (metadata.yaml + .npy); seeds are drawn from its training "
                  "vertices, or from all vertices when it has no train split; default: the "
                  "bundled Cora");
  cmd->add_option("--samplers", a->samplers, "Samplers to measure: ns, labor")
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_option("--fanouts", a->opt.fanouts,
                  "Neighbours sampled per layer, seeds' layer first; -1 = all neighbours")
      ->delimiter(',')
      ->check(non_empty_entry())
      ->capture_default_str();
  cmd->add_option("--min-batch", a->opt.min_batch, "Smallest batch size B (a power of two)")
      ->capture_default_str();
  cmd->add_option("--max-batch", a->opt.max_batch,
                  "Largest batch size B (a power of two; capped at the number of candidate "
                  "seeds)")
      ->capture_default_str();
  cmd->add_option("--repeats", a->opt.repeats, "Random seed sets (batches) per sampler and B")
      ->capture_default_str();
  cmd->add_option("--pes", a->opt.pes, "P values of the P*W(B/P) >= W(B) check")
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_option("--seed", a->opt.seed, "Run seed: keys the seed sets and the sampling")
      ->capture_default_str();
  cmd->add_option("--out", a->out, "Directory for work_<dataset>.json and .csv")
      ->capture_default_str();
  cmd->add_option("--sample-threads", a->opt.sample_threads,
                  "Host threads for sampling (results do not depend on it)")
      ->capture_default_str();
  cmd->callback([a] { run_bench_work(*a); });
}

}  // namespace coopgnn::cli
