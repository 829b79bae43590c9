// `coopgnn bench cache` (bench/drivers/cache.hpp; docs/results-schema.md, section `cache`).
#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "bench/drivers/cache.hpp"
#include "bench/drivers/report.hpp"
#include "runtime/core/error.hpp"
#include "runtime/core/timer.hpp"
#include "tools/coopgnn/commands.hpp"
#include "tools/coopgnn/output_paths.hpp"

namespace coopgnn::cli {

namespace {

struct bench_cache_args {
  std::string dataset;
  std::string sampler = "labor";
  std::vector<std::string> modes = {"cooperative", "independent"};
  std::string out = "results";
  bool no_plots = false;
  bench::cache_options opt;
};

void run_bench_cache(bench_cache_args& a) {
  if (a.dataset.empty()) a.dataset = default_dataset_dir();
  a.opt.sampler = parse_sampler_kind(a.sampler);
  a.opt.modes.clear();
  for (auto const& m : a.modes) a.opt.modes.push_back(parse_mode(m));
  bench::validate(a.opt);  // before the (possibly slow) dataset read
  check_writable_dir(a.out, "--out");

  scoped_timer load_timer(nullptr);
  auto const data = load_dataset(a.dataset);
  dataset const& ds = data->ds;
  COOPGNN_EXPECTS(!ds.train.empty(),
                  "dataset '{}' has no training vertices (attach a task with `coopgnn generate "
                  "task`)",
                  a.dataset);
  auto const nb =
      (static_cast<std::int64_t>(ds.train.size()) + a.opt.batch_size - 1) / a.opt.batch_size;
  fmt::print(
      "bench cache: dataset {} ({}): |V| {} |E| {} F {}; {} training seeds, {} batches per epoch; "
      "loaded in {:.1f} s\nsampler {} fanouts {} B {} kappas {} fractions {} modes {} P {} "
      "policies {} epochs {}{}\n",
      ds.name, a.dataset, ds.num_nodes, ds.num_edges(), ds.feature_dim(), ds.train.size(), nb,
      load_timer.seconds(), a.sampler, fmt::join(a.opt.fanouts, ","), a.opt.batch_size,
      fmt::join(a.opt.kappas, ","), fmt::join(a.opt.fractions, ","), fmt::join(a.modes, ","),
      fmt::join(a.opt.pes, ","), fmt::join(a.opt.policies, ","),
      a.opt.epochs > 0 ? std::to_string(a.opt.epochs) : std::string("auto"),
      a.opt.batches > 0 ? fmt::format(" (at most {} batches)", a.opt.batches) : "");
  std::fflush(stdout);

  exec_context const ctx(backend::host, 0, a.opt.sample_threads);
  scoped_timer run_timer(nullptr);
  auto const res = bench::run_cache_bench(
      ctx, data->g, ds.train, ds.feature_dim(), a.opt,
      [&](std::int64_t kappa, std::int64_t done, std::int64_t total) {
        fmt::print(stderr, "[bench cache] {}/{} kappa {} done ({:.1f} s)\n", done, total,
                   bench::kappa_name(kappa), run_timer.seconds());
        std::fflush(stderr);
      });
  fmt::print("\n{}", bench::format_cache_table(a.opt, res));

  bench::result_header const h = bench::host_result_header(
      "cache", ds, data->g, a.dataset,
      bench::process_command_line("coopgnn bench cache --dataset " + a.dataset),
      a.opt.sample_threads);

  std::filesystem::path const dir(a.out);
  auto const stem = "cache_" + file_stem(ds.name);
  bench::write_file_atomic(dir / (stem + ".json"),
                           bench::cache_to_json(h, a.opt, res).dump(2) + "\n");
  bench::write_file_atomic(dir / (stem + ".csv"), bench::cache_to_csv(res));
  fmt::print("\nwrote {} and {} ({:.1f} s measuring)\n", (dir / (stem + ".json")).string(),
             (dir / (stem + ".csv")).string(), res.seconds);
  if (!a.no_plots) {
    auto const r = bench::write_report(dir, report_options_for_cli(true));
    fmt::print("rendered {} (every result file in {}); plots: {}\n", r.markdown.string(),
               dir.string(), r.plot_note);
  }
}

}  // namespace

void add_bench_cache_command(CLI::App& bench) {
  auto a = std::make_shared<bench_cache_args>();
  auto* cmd = bench.add_subcommand(
      "cache",
      "Per-PE feature cache miss rate against dependent minibatching (kappa), cache size, mode "
      "and P, replaying the exact feature loads of training epochs (no training); writes "
      "OUT/cache_<dataset>.json and .csv and renders OUT/report.md with a PNG plot "
      "(docs/results-schema.md).");
  add_sampling_bench_options(*cmd, a->dataset, a->sampler,
                             "labor (kappa applies) or ns (kappa 1 only)", a->opt.fanouts,
                             a->opt.batch_size);
  cmd->add_option("--kappas", a->opt.kappas,
                  "Batch dependencies to sweep: 1 = independent batches, K > 1 = variates "
                  "rotate over K batches, 0 = never refresh")
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_option("--fractions", a->opt.fractions, "Cache rows per PE as fractions of |V|")
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_option("--modes", a->modes, "cooperative and/or independent")
      ->delimiter(',')
      ->check(CLI::IsMember({"cooperative", "independent"}))
      ->capture_default_str();
  cmd->add_option("--pes", a->opt.pes, "PE counts")->delimiter(',')->capture_default_str();
  cmd->add_option("--policies", a->opt.policies,
                  "Cache policies: lru, clock, sieve, s3fifo, setassoc")
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_flag("--layer-dependency", a->opt.layer_dependency,
                "Use the same LABOR variates for every layer");
  cmd->add_option("--epochs", a->opt.epochs,
                  "Training epochs replayed per kappa; 0 = the fewest giving >= 100 batches")
      ->capture_default_str();
  cmd->add_option("--batches", a->opt.batches,
                  "Stop after this many global batches per kappa (0 = all epochs)")
      ->capture_default_str();
  cmd->add_option("--warmup", a->opt.warmup,
                  "Batches replayed before counting (the caches fill; steady-state miss rate)")
      ->capture_default_str();
  cmd->add_option("--seed", a->opt.seed, "Run seed (as in train: same batches, owners, samples)")
      ->capture_default_str();
  cmd->add_option("--sample-threads", a->opt.sample_threads,
                  "Host threads for sampling (results do not depend on it)")
      ->capture_default_str();
  cmd->add_option("--out", a->out, "Directory for cache_<dataset>.json, .csv and report.md")
      ->capture_default_str();
  cmd->add_flag("--no-plots", a->no_plots, "Do not render report.md and the PNG");
  cmd->callback([a] { run_bench_cache(*a); });
}

}  // namespace coopgnn::cli
