// `coopgnn bench modes` (bench/drivers/modes.hpp; docs/results-schema.md, section `modes`).
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>

#include "bench/drivers/export.hpp"
#include "bench/drivers/modes.hpp"
#include "runtime/core/device.hpp"
#include "runtime/core/error.hpp"
#include "runtime/core/memory_limit.hpp"
#include "runtime/core/timer.hpp"
#include "runtime/graph/csc.hpp"
#include "runtime/graph/dataset.hpp"
#include "tools/coopgnn/commands.hpp"
#include "tools/coopgnn/output_paths.hpp"
#include "tools/coopgnn/train_options.hpp"

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
  std::string cache_policy = "none";  // --cache-policy (shared with train: add_cache_options)
  double cache_fraction = -1;         // --cache-fraction; < 0: --cache-rows
  bool paper_settings = false;
  int feature_bytes = 0;              // --feature-bytes; 0: the dataset's stored width
  bool sampler_given = false, kappa_given = false;  // with --paper-settings: errors
  bool gemm_math_given = false;  // --gemm-math: else each machine's gemm_math
  std::string preset;            // --preset NAME (option_presets)
  std::vector<std::string> preset_given, preset_set;
  /// The option table's options this command shares with `train` (add_table_option), copied
  /// into opt by take_table_options.
  train_config cfg;
  bench::modes_options opt;
};

/// Writes the JSON, CSV and model CSV of one run to a.out (stem modes_<dataset>[-sampler][-tag]).
void write_outputs(const bench_modes_args& a, const bench::modes_options& opt, const dataset& ds,
                   const csc_graph& g, const bench::modes_result& res, const std::string& tag,
                   const device_info& devices) {
  std::string const sampler = to_string(opt.sampler);
  bench::result_header h = bench::host_result_header(
      "modes", ds, g, a.dataset,
      bench::process_command_line(fmt::format(
          "coopgnn bench modes --dataset {} --sampler {} --fanouts {} --batch-size {} "
          "--batch-per-pe {} --pes {} --batches {} --warmup {} --model {} --hidden {}{} --seed {} "
          "--backend {} --machine {} --feature-placement {} --batch-dependency {} "
          "--cache-policy {} --cache-rows {} --feature-bytes {}{}{}{} --out {}",
          a.dataset, sampler, fmt::join(opt.fanouts, ","), opt.batch_size, opt.batch_per_pe,
          fmt::join(opt.pes, ","), opt.batches, opt.warmup, opt.model, opt.hidden,
          opt.model == "gat" ? fmt::format(" --heads {} --out-heads {} --attn-dropout {}",
                                           opt.heads, opt.out_heads, opt.attn_dropout)
          : opt.model == "rgcn"
              ? fmt::format(" --num-bases {} --num-blocks {}", opt.num_bases, opt.num_blocks)
              : std::string(),
          opt.seed, to_string(opt.compute_backend), a.machine_file, a.placement,
          opt.batch_dependency, to_string(opt.cache_policy), opt.cache_rows, opt.feature_bytes,
          opt.gemm_math.empty() ? std::string() : " --gemm-math " + opt.gemm_math,
          a.paper_settings ? " --paper-settings" : "",
          a.tag.empty() ? std::string() : " --tag " + a.tag, a.out)),
      1);
  h.backend = to_string(opt.compute_backend);
  if (opt.compute_backend == backend::cuda) {
    h.device = fmt::format("{} x {}", opt.devices, devices.first_name);
  }
  std::filesystem::path const dir(a.out);
  // One file per (dataset, sampler, tag): NS keeps the plain name.
  auto const stem = "modes_" + file_stem(ds.name) + (sampler == "ns" ? "" : "-" + sampler) +
                    (tag.empty() ? "" : "-" + file_stem(tag));
  bench::write_file_atomic(dir / (stem + ".json"),
                           bench::modes_to_json(h, opt, res).dump(2) + "\n");
  bench::write_file_atomic(dir / (stem + ".csv"), bench::modes_to_csv(res));
  bench::write_file_atomic(dir / (stem + "_model.csv"), bench::modes_model_csv(opt, res));
  fmt::print("\nwrote {}, {} and {} ({:.1f} s measuring)\n", (dir / (stem + ".json")).string(),
             (dir / (stem + ".csv")).string(), (dir / (stem + "_model.csv")).string(), res.seconds);
}

/// The option table's values of a.cfg into a.opt (the model's options, the seed, LABOR's kappa
/// and --gemm-math), checked by validate_train_config with --sampler.
/// @throws logic_error naming the option.
void take_table_options(bench_modes_args& a) {
  a.cfg.sampler = parse_sampler_kind(a.sampler);
  validate_train_config(a.cfg);
  COOPGNN_EXPECTS(a.cfg.model != models::conv_kind::mlp,
                  "--model mlp: bench modes measures message passing; use sage, gcn, gat or rgcn");
  a.opt.model = models::to_string(a.cfg.model);
  a.opt.hidden = a.cfg.hidden;
  a.opt.heads = a.cfg.heads;
  a.opt.out_heads = a.cfg.out_heads;
  a.opt.attn_dropout = a.cfg.attn_dropout;
  a.opt.num_bases = a.cfg.num_bases;
  a.opt.num_blocks = a.cfg.num_blocks;
  a.opt.seed = a.cfg.seed;
  a.opt.batch_dependency = a.cfg.batch_dependency;
  a.opt.prefetch = a.cfg.prefetch;
  a.opt.gemm_math = a.gemm_math_given ? to_string(a.cfg.gemm) : std::string();
}

/// --preset: the preset's values of the options this command takes (its table options, and
/// --fanouts, --batch-per-pe of its own) unless given; the typed values follow in
/// run_bench_modes once the dataset is read.
void take_preset(const CLI::App& cmd, bench_modes_args& a) {
  option_preset const& p = option_preset_named(a.preset);
  a.preset_given = preset_options_given(cmd, p, "--batch-per-pe");
  std::vector<std::pair<std::string, std::string>> here;
  for (auto const& v : p.values) {
    if (cmd.get_option_no_throw(v.first) != nullptr) here.push_back(v);
  }
  a.cfg.fanouts = a.opt.fanouts;
  a.preset_set = apply_preset_values(here, a.preset_given, a.cfg);
  a.opt.fanouts = a.cfg.fanouts;
  auto const set = [&](const std::string& name) {
    return std::any_of(a.preset_set.begin(), a.preset_set.end(),
                       [&](const std::string& s) { return s.starts_with(name + " "); });
  };
  if (set("--gemm-math")) a.gemm_math_given = true;
  bool const batch_given = std::find(a.preset_given.begin(), a.preset_given.end(),
                                     "--batch-per-pe") != a.preset_given.end();
  if (p.seeds_per_pe > 0 && !batch_given) {
    a.opt.batch_per_pe = p.seeds_per_pe;
    a.preset_set.push_back(fmt::format("--batch-per-pe {}", p.seeds_per_pe));
  }
}

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
  a.opt.cache_policy = parse_cache_policy_kind(a.cache_policy);
  if (a.paper_settings) {
    COOPGNN_EXPECTS(!a.sampler_given && !a.kappa_given,
                    "--paper-settings sets the sampler and --batch-dependency of each setting "
                    "(NS kappa 1; LABOR kappa 1; LABOR kappa 1 + cache; LABOR kappa 256 + "
                    "cache): drop --sampler and --batch-dependency");
    COOPGNN_EXPECTS(a.opt.cache_policy != cache_policy_kind::none &&
                        (a.opt.cache_rows > 0 || a.cache_fraction > 0),
                    "--paper-settings runs two settings with a feature cache: give "
                    "--cache-policy (e.g. setassoc) and --cache-rows N or --cache-fraction F");
  }
  take_table_options(a);  // LABOR's rule included
  bench::apply_gemm_math(a.opt.machines, a.opt.gemm_math);
  check_writable_dir(a.out, "--out");

  scoped_timer load(nullptr);
  dataset_read_options ropt;
  ropt.heterogeneous = true;  // typed datasets: R-GCN, or the relations-merged view (below)
  ropt.load_edges = false;    // untyped: the CSC is built from the file (typed: read as usual)
  auto const data = load_dataset(a.dataset, ropt);
  dataset const& ds = data->ds;
  if (!a.preset.empty()) {
    if (ds.hetero) {
      apply_typed_preset_values(option_preset_named(a.preset), a.preset_given, a.cfg, a.preset_set);
      take_table_options(a);
    }
    fmt::print("{}\n", preset_line(a.preset, a.preset_set, a.preset_given));
  }
  a.opt.cache_rows =
      resolve_cache_rows(a.cache_policy, a.cache_fraction, a.opt.cache_rows, ds.num_nodes);
  a.opt.feature_bytes_given = a.feature_bytes > 0;
  // Typed graphs: the featured node types' stored width (the trainer counts each row at its).
  feature_dtype stored = ds.feature_type;
  if (ds.hetero) {
    for (std::int64_t t = 0; t < ds.hetero->num_node_types(); ++t) {
      if (ds.hetero->feature_dim(t) > 0) {
        stored = ds.hetero->feature_type(t);
        break;
      }
    }
  }
  a.opt.feature_bytes =
      a.opt.feature_bytes_given ? a.feature_bytes : static_cast<int>(feature_dtype_size(stored));
  bench::validate(a.opt);
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
  csc_graph const& g = merged ? *merged : data->g;
  if (std::string const d = duplicate_edges_note(*data); !d.empty()) {
    fmt::print(stderr, "note: {}\n", d);
  }
  fmt::print(
      "bench modes: dataset {} ({}): |V| {} |E| {} loaded in {:.1f} s (peak RSS {})\n"
      "fanouts {} global batch {} P {} model {} hidden {} batches {} (+{} warm-up)\n"
      "model: features {} at {} bytes per element{}, GEMMs {}, cache {} ({} rows per PE)\n",
      ds.name, a.dataset, ds.num_nodes, g.num_edges(), load.seconds(),
      format_bytes(static_cast<std::uint64_t>(
          std::max<std::int64_t>(read_process_memory().peak_rss_bytes, 0))),
      fmt::join(a.opt.fanouts, ","),
      a.opt.batch_per_pe > 0 ? fmt::format("{} per PE", a.opt.batch_per_pe)
                             : std::to_string(a.opt.batch_size),
      fmt::join(a.opt.pes, ","), a.opt.model, a.opt.hidden, a.opt.batches, a.opt.warmup,
      a.placement, a.opt.feature_bytes, a.opt.feature_bytes_given ? " (--feature-bytes)" : "",
      a.opt.gemm_math.empty() ? "as each machine's gemm_math" : a.opt.gemm_math, a.cache_policy,
      a.opt.cache_rows);
  std::fflush(stdout);

  // One run per setting: the given options, or the paper's four settings.
  std::vector<bench::paper_setting> settings;
  if (a.paper_settings) {
    settings = bench::paper_settings();
  } else {
    settings.push_back({"", "", a.opt.sampler, a.opt.batch_dependency, true});
  }
  std::vector<bench::setting_result> runs;
  for (std::size_t i = 0; i < settings.size(); ++i) {
    auto const& st = settings[i];
    bench::modes_options const opt = a.paper_settings ? bench::with_setting(a.opt, st) : a.opt;
    fmt::print("\n{}sampler {} batch dependency {} cache {} ({} rows per PE)\n",
               a.paper_settings
                   ? fmt::format("paper setting {}/{}: {}: ", i + 1, settings.size(), st.label)
                   : std::string(),
               to_string(opt.sampler), opt.batch_dependency, to_string(opt.cache_policy),
               opt.cache_rows);
    std::fflush(stdout);
    scoped_timer run(nullptr);
    auto res = bench::run_modes(ds, g, opt, [&](const std::string& what) {
      fmt::print(stderr, "[bench modes] {}{} ({:.1f} s)\n",
                 a.paper_settings ? st.label + ": " : std::string(), what, run.seconds());
      std::fflush(stderr);
    });
    fmt::print("\n{}", bench::format_modes_table(opt, res));
    std::string const tag =
        a.paper_settings ? (a.tag.empty() ? st.tag : a.tag + "-" + st.tag) : a.tag;
    write_outputs(a, opt, ds, g, res, tag, devices);
    runs.push_back({st, opt, std::move(res)});
  }
  if (a.paper_settings && !a.opt.machines.empty()) {
    fmt::print("\n{}", bench::format_settings_table(runs));
    auto const path = std::filesystem::path(a.out) /
                      ("modes_" + file_stem(ds.name) + (a.tag.empty() ? "" : "-" + file_stem(a.tag)) +
                       "-paper-settings.csv");
    bench::write_file_atomic(path, bench::settings_csv(runs));
    fmt::print("\nwrote {}\n", path.string());
  }
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
  for (const char* name : {"--model", "--num-bases", "--num-blocks", "--hidden", "--heads",
                           "--out-heads", "--attn-dropout", "--seed", "--batch-dependency",
                           "--prefetch"}) {
    add_table_option(*cmd, train_option(name), a->cfg);
  }
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
  add_cache_options(*cmd, a->cache_policy, a->cache_fraction, a->opt.cache_rows);
  std::vector<std::string> presets;
  for (const option_preset& p : option_presets()) presets.push_back(p.name);
  cmd->add_option("--preset", a->preset,
                  "Set a published configuration's options that this command takes (coop-paper: "
                  "--model sage, --fanouts 10,10,10, --hidden 1024, --gemm-math tf32, "
                  "--batch-per-pe 1024; --model rgcn --num-bases 2 on typed datasets); options "
                  "given with it keep their values, and the run prints what it set")
      ->check(CLI::IsMember(presets));
  cmd->add_option("--feature-bytes", a->feature_bytes,
                  "Modelled bytes per input-feature element as stored (default: the dataset's "
                  "dtype, 4 for float32, 2 for float16/bfloat16): scales the modelled feature "
                  "reads over PCIe/HBM; given, it also scales the cooperative feature exchange, "
                  "which the runtime does in float32. Recorded in the JSON "
                  "(cost_model.feature_bytes and its source)")
      ->check(CLI::Range(1, 8));
  add_table_option(*cmd, train_option("--gemm-math"), a->cfg)
      ->description(std::string(train_option("--gemm-math").help) +
                    ". Here: the GEMM rate of every modelled machine, fp32 (fp32_tflops) or tf32 "
                    "(the Tensor Cores' tf32_tflops, the paper's); default: each machine's "
                    "gemm_math in the machine file");
  cmd->add_flag("--paper-settings", a->paper_settings,
                "Run the four settings of the cooperative paper for both protocols, one after "
                "the other: NS kappa 1 without cache; LABOR kappa 1 without cache; LABOR kappa 1 "
                "with the cache; LABOR kappa 256 with the cache (the cache of --cache-policy and "
                "--cache-rows/--cache-fraction, required). Each writes its own files (tag k1, "
                "k1-cache, k256-cache after the sampler); a labelled table of the modelled "
                "seconds of all four and modes_<dataset>[-tag]-paper-settings.csv follow");
  cmd->add_option("--tag", a->tag,
                  "Suffix of the output files' names (modes_<dataset>[-sampler][-tag])");
  cmd->add_option("--out", a->out, "Directory for modes_<dataset>.json and .csv")
      ->capture_default_str();
  cmd->callback([a, cmd] {
    a->sampler_given = cmd->count("--sampler") > 0;
    a->kappa_given = cmd->count("--batch-dependency") > 0;
    a->gemm_math_given = cmd->count("--gemm-math") > 0;
    if (!a->preset.empty()) take_preset(*cmd, *a);
    run_bench_modes(*a);
  });
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
      ->check(non_empty_entry())
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
