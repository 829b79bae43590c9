// `coopgnn bench modes` (bench/drivers/modes.hpp; docs/results-schema.md, section `modes`).
#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>

#include "bench/drivers/export.hpp"
#include "bench/drivers/modes.hpp"
#include "runtime/core/device.hpp"
#include "runtime/core/error.hpp"
#include "runtime/core/timer.hpp"
#include "runtime/graph/csc.hpp"
#include "runtime/graph/dataset.hpp"
#include "tools/coopgnn/commands.hpp"
#include "tools/coopgnn/output_paths.hpp"

namespace coopgnn::cli {

namespace {

struct bench_modes_args {
  std::string dataset;
  std::string sampler = "ns";
  std::string machine_file = COOPGNN_MACHINES_FILE;
  std::vector<std::string> machines;  // names in machine_file; empty = all
  std::string placement = "uva";
  std::string tag;
  std::string out = "results";
  std::string backend = "host";
  bench::modes_options opt;
};

void run_bench_modes(bench_modes_args& a) {
  auto const devices = query_devices();
  a.opt.compute_backend = resolve_backend(a.backend, devices.count, devices.reason);
  a.opt.devices = std::max(1, devices.count);
  if (a.dataset.empty()) a.dataset = default_dataset_dir();
  a.opt.sampler = parse_sampler_kind(a.sampler);
  // Recorded as given, or relative to the working directory when it lies below it.
  if (auto const rel = std::filesystem::proximate(a.machine_file);
      !rel.empty() && *rel.begin() != "..") {
    a.machine_file = rel.string();
  }
  a.opt.machines = bench::select_machines(bench::load_machines(a.machine_file), a.machines);
  a.opt.cost.placement = bench::parse_feature_placement(a.placement);
  bench::validate(a.opt);
  check_writable_dir(a.out, "--out");

  scoped_timer load(nullptr);
  dataset_read_options ropt;
  ropt.heterogeneous = true;  // typed datasets: R-GCN, or the relations-merged view (below)
  auto const data = load_dataset(a.dataset, ropt);
  dataset const& ds = data->ds;
  // A typed dataset with an untyped model: the relations-merged view, the same edges in one
  // untyped CSC (R-GCN's GCN baseline; docs/results/cost-model.md). R-GCN keeps the typed CSC.
  std::optional<csc_graph> merged;
  if (ds.hetero && a.opt.model != "rgcn") {
    merged = build_csc(ds.num_nodes, ds.src, ds.dst);
    fmt::print(
        "bench modes: dataset {} is typed: --model {} runs on its relations merged ({} "
        "edge types as one)\n",
        ds.name, a.opt.model, ds.hetero->edge_types.size());
  }
  COOPGNN_EXPECTS(ds.hetero || a.opt.model != "rgcn",
                  "--model rgcn needs a typed dataset ('{}' is untyped)", ds.name);
  COOPGNN_EXPECTS(a.opt.model == "rgcn" || (a.opt.num_bases == 0 && a.opt.num_blocks == 0),
                  "--num-bases and --num-blocks are R-GCN's (add --model rgcn)");
  csc_graph const& g = merged ? *merged : data->g;
  fmt::print(
      "bench modes: dataset {} ({}): |V| {} |E| {} loaded in {:.1f} s\n"
      "sampler {} fanouts {} global batch {} P {} model {} hidden {} batches {} (+{} "
      "warm-up)\n",
      ds.name, a.dataset, ds.num_nodes, ds.num_edges(), load.seconds(), a.sampler,
      fmt::join(a.opt.fanouts, ","),
      a.opt.batch_per_pe > 0 ? fmt::format("{} per PE", a.opt.batch_per_pe)
                             : std::to_string(a.opt.batch_size),
      fmt::join(a.opt.pes, ","), a.opt.model, a.opt.hidden, a.opt.batches, a.opt.warmup);
  std::fflush(stdout);
  scoped_timer run(nullptr);
  auto const res = bench::run_modes(ds, g, a.opt, [&](const std::string& what) {
    fmt::print(stderr, "[bench modes] {} ({:.1f} s)\n", what, run.seconds());
    std::fflush(stderr);
  });
  fmt::print("\n{}", bench::format_modes_table(a.opt, res));

  bench::result_header h = bench::host_result_header(
      "modes", ds, a.dataset,
      bench::process_command_line(fmt::format(
          "coopgnn bench modes --dataset {} --sampler {} --fanouts {} --batch-size {} "
          "--batch-per-pe {} --pes {} --batches {} --warmup {} --model {} --hidden {}{} --seed {} "
          "--backend {} --machine {} --feature-placement {}{} --out {}",
          a.dataset, a.sampler, fmt::join(a.opt.fanouts, ","), a.opt.batch_size, a.opt.batch_per_pe,
          fmt::join(a.opt.pes, ","), a.opt.batches, a.opt.warmup, a.opt.model, a.opt.hidden,
          a.opt.model == "gat" ? fmt::format(" --heads {} --out-heads {} --attn-dropout {}",
                                             a.opt.heads, a.opt.out_heads, a.opt.attn_dropout)
          : a.opt.model == "rgcn"
              ? fmt::format(" --num-bases {} --num-blocks {}", a.opt.num_bases, a.opt.num_blocks)
              : std::string(),
          a.opt.seed, to_string(a.opt.compute_backend), a.machine_file, a.placement,
          a.tag.empty() ? std::string() : " --tag " + a.tag, a.out)),
      1);
  h.backend = to_string(a.opt.compute_backend);
  if (a.opt.compute_backend == backend::cuda) {
    h.device = fmt::format("{} x {}", a.opt.devices, devices.first_name);
  }
  std::filesystem::path const dir(a.out);
  // One file per (dataset, sampler, tag): NS keeps the plain name.
  auto const stem = "modes_" + file_stem(ds.name) + (a.sampler == "ns" ? "" : "-" + a.sampler) +
                    (a.tag.empty() ? "" : "-" + file_stem(a.tag));
  bench::write_file_atomic(dir / (stem + ".json"),
                           bench::modes_to_json(h, a.opt, res).dump(2) + "\n");
  bench::write_file_atomic(dir / (stem + ".csv"), bench::modes_to_csv(res));
  bench::write_file_atomic(dir / (stem + "_model.csv"), bench::modes_model_csv(a.opt, res));
  fmt::print("\nwrote {}, {} and {} ({:.1f} s measuring)\n", (dir / (stem + ".json")).string(),
             (dir / (stem + ".csv")).string(), (dir / (stem + "_model.csv")).string(), res.seconds);
}

}  // namespace

void add_bench_modes_command(CLI::App& bench) {
  auto a = std::make_shared<bench_modes_args>();
  auto* cmd = bench.add_subcommand(
      "modes",
      "Cooperative vs independent minibatching at the same global batch for several PE counts: "
      "time and work per stage, all-to-all bytes per layer and direction, load imbalance, "
      "per-PE working set, and DGX time modelled from the counted work over a machine file's "
      "ceilings (plus, on the CUDA backend, measured compute + modelled links; "
      "docs/results-schema.md).");
  add_sampling_bench_options(*cmd, a->dataset, a->sampler, "ns or labor", a->opt.fanouts,
                             a->opt.batch_size);
  cmd->add_option("--pes", a->opt.pes, "PE counts to run")->delimiter(',')->capture_default_str();
  cmd->add_option("--batches", a->opt.batches, "Measured batches per (mode, P)")
      ->capture_default_str();
  cmd->add_option("--warmup", a->opt.warmup, "Batches run before measuring")->capture_default_str();
  cmd->add_option("--model", a->opt.model,
                  "sage, gcn, gat or rgcn (typed datasets; the others run on a typed dataset's "
                  "relations merged into one untyped graph)")
      ->check(CLI::IsMember({"sage", "gcn", "gat", "rgcn"}))
      ->capture_default_str();
  cmd->add_option("--num-bases", a->opt.num_bases, "rgcn: basis decomposition (0 = none)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_option("--num-blocks", a->opt.num_blocks,
                  "rgcn: block-diagonal decomposition (0 = none)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_option("--hidden", a->opt.hidden, "Hidden width (GAT: per head)")->capture_default_str();
  cmd->add_option("--heads", a->opt.heads, "GAT: heads of the hidden layers (concatenated)")
      ->capture_default_str();
  cmd->add_option("--out-heads", a->opt.out_heads, "GAT: heads of the output layer (averaged)")
      ->capture_default_str();
  cmd->add_option("--attn-dropout", a->opt.attn_dropout, "GAT: dropout on attention weights")
      ->capture_default_str();
  cmd->add_option("--seed", a->opt.seed, "Run seed")->capture_default_str();
  cmd->add_option("--backend", a->backend,
                  "host, cuda (every P on the visible GPUs, ceil(P / GPUs) PEs per GPU) or auto")
      ->check(CLI::IsMember({"auto", "host", "cuda"}))
      ->capture_default_str();
  cmd->add_option("--batch-per-pe", a->opt.batch_per_pe,
                  "Seeds per PE: the global batch is this times P (0: --batch-size for every P)")
      ->capture_default_str();
  cmd->add_option("--machine", a->machine_file,
                  "Machine file of the cost model (format: bench/machines.yaml)")
      ->capture_default_str();
  cmd->add_option("--machines", a->machines,
                  "Machines of the machine file to model, by name (default: all)")
      ->delimiter(',');
  cmd->add_option("--feature-placement", a->placement,
                  "Where the model puts the features on the target: uva (pinned host memory over "
                  "PCIe, the paper's) or device (HBM)")
      ->check(CLI::IsMember({"uva", "device"}))
      ->capture_default_str();
  cmd->add_option("--tag", a->tag,
                  "Suffix of the output files' names (modes_<dataset>[-sampler][-tag])");
  cmd->add_option("--out", a->out, "Directory for modes_<dataset>.json and .csv")
      ->capture_default_str();
  cmd->callback([a] { run_bench_modes(*a); });
}

void add_bench_export_command(CLI::App& bench) {
  struct args {
    std::string dataset, sampler = "ns", out = "blocks";
    bench::export_options opt;
  };
  auto a = std::make_shared<args>();
  auto* cmd = bench.add_subcommand(
      "export-blocks",
      "Write sampled blocks, input features, labels, weights, coopgnn's logits and weight "
      "gradients as .npy and time coopgnn's forward + backward on them (input of "
      "bench/pyg_baseline.py).");
  cmd->add_option("--dataset", a->dataset, "Dataset directory (default: the bundled Cora)");
  cmd->add_option("--sampler", a->sampler, "ns or labor")
      ->check(CLI::IsMember({"ns", "labor"}))
      ->capture_default_str();
  cmd->add_option("--fanouts", a->opt.fanouts, "Fanout per layer, seeds' layer first")
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_option("--batch-size", a->opt.batch_size, "Seeds per batch")->capture_default_str();
  cmd->add_option("--batches", a->opt.batches, "Batches to export")->capture_default_str();
  cmd->add_option("--repeats", a->opt.repeats, "Timed forward+backward repetitions per batch")
      ->capture_default_str();
  cmd->add_option("--warmup", a->opt.warmup, "Untimed repetitions per batch before the timed ones")
      ->capture_default_str();
  cmd->add_flag("--input-grad", a->opt.input_grad,
                "Also compute the input features' gradient dL/dx in the first layer's backward "
                "(and write it as x_grad.npy); default: skipped, as the trainer does");
  cmd->add_option("--model", a->opt.model, "sage or gcn")
      ->check(CLI::IsMember({"sage", "gcn"}))
      ->capture_default_str();
  cmd->add_option("--threads", a->opt.threads,
                  "Host threads of the PE (BLAS and the parallel host ops), recorded in meta.json; "
                  "bench/pyg_baseline.py pins torch to the same count")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--hidden", a->opt.hidden, "Hidden width")->capture_default_str();
  cmd->add_option("--seed", a->opt.seed, "Run seed")->capture_default_str();
  cmd->add_option("--out", a->out, "Output directory")->capture_default_str();
  cmd->callback([a] {
    if (a->dataset.empty()) a->dataset = default_dataset_dir();
    a->opt.sampler = parse_sampler_kind(a->sampler);
    check_writable_dir(a->out, "--out");
    auto const data = load_dataset(a->dataset);
    auto const meta = bench::export_blocks(data->ds, data->g, a->opt, a->out);
    for (std::size_t b = 0; b < meta["batches"].size(); ++b) {
      fmt::print("batch {}: coopgnn forward+backward {:.6f} s (median of {})\n", b,
                 meta["batches"][b]["coopgnn_seconds"].get<double>(), a->opt.repeats);
    }
    fmt::print("wrote {}\n", a->out);
  });
}

}  // namespace coopgnn::cli
