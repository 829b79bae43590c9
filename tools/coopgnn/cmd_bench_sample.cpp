// `coopgnn bench sample` (bench/drivers/sample_rate.hpp; docs/results-schema.md, section `sample`).
#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "bench/drivers/sample_rate.hpp"
#include "runtime/core/error.hpp"
#include "runtime/core/timer.hpp"
#include "tools/coopgnn/commands.hpp"
#include "tools/coopgnn/output_paths.hpp"

namespace coopgnn::cli {

namespace {

struct bench_sample_args {
  std::string dataset;
  std::string sampler = "ns";
  std::string out = "results";
  std::string seeds_out;
  bench::sample_rate_options opt;
};

void run_bench_sample(bench_sample_args& a) {
  if (a.dataset.empty()) a.dataset = default_dataset_dir();
  a.opt.sampler = parse_sampler_kind(a.sampler);
  bench::validate(a.opt);  // before the (possibly slow) dataset read
  check_writable_dir(a.out, "--out");
  if (!a.seeds_out.empty()) check_writable_file(a.seeds_out, "--seeds-out");

  scoped_timer load_timer(nullptr);
  auto const data = load_dataset(a.dataset, /*load_features=*/false);
  dataset const& ds = data->ds;
  std::vector<vid_t> seeds = ds.train;
  bool const all = seeds.empty();
  if (all) {
    seeds.resize(static_cast<std::size_t>(ds.num_nodes));
    std::iota(seeds.begin(), seeds.end(), vid_t{0});
  }
  auto const batches = bench::sample_rate_batches(seeds, a.opt);
  fmt::print(
      "bench sample: dataset {} ({}): |V| {} |E| {}; {} seeds ({}); loaded in {:.1f} s\n"
      "sampler {} fanouts {} B {} batches {} repeats {} seed {} sample threads {}\n",
      ds.name, a.dataset, ds.num_nodes, ds.num_edges(), seeds.size(),
      all ? "all vertices: no train split" : "training vertices", load_timer.seconds(), a.sampler,
      fmt::join(a.opt.fanouts, ","), a.opt.batch_size, a.opt.batches, a.opt.repeats, a.opt.seed,
      a.opt.sample_threads);
  std::fflush(stdout);
  if (!a.seeds_out.empty()) {
    bench::write_file_atomic(a.seeds_out, bench::seed_batches_to_text(batches));
    fmt::print("wrote the {} seed batches to {}\n", batches.size(), a.seeds_out);
  }

  exec_context const ctx(backend::host, 0, a.opt.sample_threads);
  auto const res = bench::run_sample_rate_bench(
      ctx, data->g, batches, a.opt, [&](int done, int total, double seconds) {
        fmt::print(stderr, "[bench sample] repeat {}/{}: {:.3f} s\n", done, total, seconds);
        std::fflush(stderr);
      });
  fmt::print("\n{}", bench::format_sample_rate_table(res));

  bench::result_header const h = bench::host_result_header(
      "sample", ds, data->g, a.dataset,
      bench::process_command_line("coopgnn bench sample --dataset " + a.dataset),
      a.opt.sample_threads);

  std::filesystem::path const dir(a.out);
  auto const stem = fmt::format("sample_{}_{}", file_stem(ds.name), a.sampler);
  bench::write_file_atomic(dir / (stem + ".json"),
                           bench::sample_rate_to_json(h, a.opt, res).dump(2) + "\n");
  bench::write_file_atomic(dir / (stem + ".csv"), bench::sample_rate_to_csv(res));
  fmt::print("\nwrote {} and {} ({:.1f} s measuring)\n", (dir / (stem + ".json")).string(),
             (dir / (stem + ".csv")).string(), res.wall_seconds);
}

}  // namespace

void add_bench_sample_command(CLI::App& bench) {
  auto a = std::make_shared<bench_sample_args>();
  auto* cmd = bench.add_subcommand(
      "sample",
      "Speed of multi-layer minibatch sampling alone (per layer sample_neighbors, then "
      "make_block for the next layer's seeds): sampled edges/s and seeds/s per layer and in "
      "total, medians over repeats, with the split between sampling and compaction; writes "
      "OUT/sample_<dataset>_<sampler>.json and .csv (docs/results-schema.md).");
  add_sampling_bench_options(*cmd, a->dataset, a->sampler, "ns or labor", a->opt.fanouts,
                             a->opt.batch_size);
  cmd->add_option("--batches", a->opt.batches,
                  "Batches per repeat, in the trainer's order (epoch_order of the run seed)")
      ->capture_default_str();
  cmd->add_option("--repeats", a->opt.repeats, "Timed passes over the batches (medians)")
      ->capture_default_str();
  cmd->add_option("--seed", a->opt.seed, "Run seed: batch order and sampling keys")
      ->capture_default_str();
  cmd->add_option("--sample-threads", a->opt.sample_threads,
                  "Host threads for sample_neighbors (results do not depend on it)")
      ->capture_default_str();
  cmd->add_option("--seeds-out", a->seeds_out,
                  "Also write the seed batches to this text file, one batch a line (for "
                  "bench/graphbolt_sampler_baseline.py)");
  cmd->add_option("--out", a->out, "Directory for sample_<dataset>_<sampler>.json and .csv")
      ->capture_default_str();
  cmd->callback([a] { run_bench_sample(*a); });
}

}  // namespace coopgnn::cli
