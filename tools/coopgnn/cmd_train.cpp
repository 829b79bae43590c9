// `coopgnn train` and `coopgnn compare` (README.md; docs/design.md section 6).
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <thread>
#include <tuple>

#include "runtime/core/device.hpp"
#include "runtime/core/error.hpp"
#include "runtime/core/memory_limit.hpp"
#include "runtime/core/profile_window.hpp"
#include "runtime/core/signals.hpp"
#include "runtime/core/timer.hpp"
#include "runtime/graph/csc.hpp"
#include "runtime/graph/dataset.hpp"
#include "runtime/graph/transforms.hpp"
#include "pipeline/checkpoint.hpp"
#include "pipeline/report.hpp"
#include "pipeline/selection.hpp"
#include "pipeline/run_sizes.hpp"
#include "pipeline/trainer.hpp"
#include "tools/coopgnn/commands.hpp"
#include "tools/coopgnn/output_paths.hpp"
#include "tools/coopgnn/progress.hpp"
#include "tools/coopgnn/train_options.hpp"

namespace coopgnn::cli {

void add_cache_options(CLI::App& cmd, std::string& policy, double& fraction,
                       std::int64_t& rows) {
  cmd.add_option("--cache-policy", policy,
                 "Per-PE feature cache: none, lru, clock, sieve, s3fifo or setassoc (the GPU "
                 "cache's set-associative policy; cooperative: a PE "
                 "caches only vertices it owns; independent: whatever it loads)")
      ->check(CLI::IsMember({"none", "lru", "clock", "sieve", "s3fifo", "setassoc"}))
      ->capture_default_str();
  cmd.add_option("--cache-fraction", fraction,
                 "Cache capacity per PE as a fraction of |V| (with --cache-policy)");
  cmd.add_option("--cache-rows", rows, "Cache capacity per PE in rows");
}

std::int64_t resolve_cache_rows(const std::string& policy, double fraction, std::int64_t rows,
                                std::int64_t num_nodes) {
  if (fraction >= 0) {
    COOPGNN_EXPECTS(fraction <= 1, "--cache-fraction {} is outside [0, 1]", fraction);
    rows = static_cast<std::int64_t>(fraction * static_cast<double>(num_nodes));
  }
  COOPGNN_EXPECTS(rows >= 0, "--cache-rows {} is negative", rows);
  COOPGNN_EXPECTS(rows == 0 || policy != "none",
                  "--cache-fraction/--cache-rows without --cache-policy: nothing would be "
                  "cached; add --cache-policy (e.g. lru) or drop the cache size");
  return rows;
}

namespace {

/// Set-up (the trainer's construction) at least this long, in seconds, is reported.
constexpr double kSlowSetupSeconds = 1.0;

/// A CLI11 validator for the range of table entry `d` (option_range_error); text that is not a
/// number passes to the option's own conversion, which names it.
CLI::Validator range_validator(const option_decl& d) {
  return CLI::Validator(
      [&d](std::string& text) -> std::string {
        char* end = nullptr;
        double const v = std::strtod(text.c_str(), &end);
        if (end == text.c_str()) return {};
        return option_range_error(d, v);
      },
      "");
}

}  // namespace

CLI::Option* add_table_option(CLI::App& cmd, const option_decl& d, train_config& cfg) {
  if (const auto* n = std::get_if<option_decl::named>(&d.value)) {
    auto* const set = n->set;
    return cmd
        .add_option_function<std::string>(
            d.name, [set, &cfg](const std::string& v) { set(cfg, v); }, d.help)
        ->check(CLI::IsMember(n->choices))
        ->default_str(n->get(cfg));
  }
  return std::visit(
      [&](auto m) -> CLI::Option* {
        using T = std::decay_t<decltype(cfg.*m)>;
        if constexpr (std::is_same_v<T, bool>) {
          if (d.flag) return cmd.add_flag(d.name, cfg.*m, d.help);
        }
        CLI::Option* o = cmd.add_option(d.name, cfg.*m, d.help);
        if constexpr (std::is_same_v<T, std::vector<int>>)
          o->delimiter(',')->check(non_empty_entry());
        if constexpr (std::is_floating_point_v<T>) o->check(finite_number());
        if (std::isfinite(d.lo) || std::isfinite(d.hi)) o->check(range_validator(d));
        return o->capture_default_str();
      },
      std::get<option_decl::member>(d.value));
}

std::vector<std::string> preset_options_given(const CLI::App& cmd, const option_preset& p,
                                              const std::string& batch_option) {
  std::vector<std::string> names;
  for (const auto* list : {&p.values, &p.typed_values}) {
    for (auto const& [name, value] : *list) names.push_back(name);
  }
  if (p.seeds_per_pe > 0) names.push_back(batch_option);
  std::vector<std::string> given;
  for (const std::string& n : names) {
    const CLI::Option* o = cmd.get_option_no_throw(n);
    if (o != nullptr && o->count() > 0 && std::find(given.begin(), given.end(), n) == given.end()) {
      given.push_back(n);
    }
  }
  return given;
}

std::vector<std::string> apply_preset_values(
    const std::vector<std::pair<std::string, std::string>>& values,
    const std::vector<std::string>& given, train_config& cfg) {
  std::vector<std::string> set;
  for (auto const& [name, value] : values) {
    if (std::find(given.begin(), given.end(), name) != given.end()) continue;
    set_option_text(train_option(name), cfg, value);
    set.push_back(name + " " + value);
  }
  return set;
}

void apply_typed_preset_values(const option_preset& p, const std::vector<std::string>& given,
                               train_config& cfg, std::vector<std::string>& set) {
  auto name_of = [](const std::string& s) { return s.substr(0, s.find(' ')); };
  for (std::string& s : apply_preset_values(p.typed_values, given, cfg)) {
    std::erase_if(set, [&](const std::string& t) { return name_of(t) == name_of(s); });
    set.push_back(std::move(s));
  }
}

std::string preset_line(const std::string& name, const std::vector<std::string>& set,
                        const std::vector<std::string>& given) {
  std::string line = fmt::format("preset {} sets: {}", name, fmt::join(set, " "));
  if (!given.empty()) line += fmt::format("; given, kept: {}", fmt::join(given, " "));
  return line;
}

void add_common_options(CLI::App* cmd, train_options& o) {
  for (const option_decl& d : train_option_table()) add_table_option(*cmd, d, o.cfg);
  std::vector<std::string> presets, described;
  for (const option_preset& p : option_presets()) {
    presets.push_back(p.name);
    described.push_back(p.name + ": " + p.help);
  }
  cmd->add_option("--preset", o.preset,
                  fmt::format("Set a published configuration's options; options given with it "
                              "keep their values, and the run prints what it set. {}",
                              fmt::join(described, "; ")))
      ->check(CLI::IsMember(presets));
  cmd->parse_complete_callback([cmd, &o] {
    if (o.preset.empty()) return;
    option_preset const& p = option_preset_named(o.preset);
    o.preset_given = preset_options_given(*cmd, p, "--batch-size");
    o.preset_set = apply_preset_values(p.values, o.preset_given, o.cfg);
  });
  cmd->add_option("--dataset", o.dataset,
                  "Dataset directory (metadata.yaml + .npy, GraphBolt OnDiskDataset layout); "
                  "default: the bundled Cora");
  cmd->add_option("--task", o.task,
                  "The task to train: a task name from the dataset's metadata.yaml (`coopgnn "
                  "info` lists them), node_classification or link_prediction (the first task of "
                  "that kind), or auto (the first task in metadata.yaml that can be read and "
                  "trained); the choice is printed")
      ->capture_default_str();
  cmd->add_option("--feature", o.feature,
                  "The node feature to use as input, by its name in metadata.yaml; default: "
                  "the one named feat (a dataset with other node features but no feat needs "
                  "this option; the error lists them)");
  cmd->add_option("--normalize-features", o.normalize_features,
                  "Input feature transform before training: none, or row (PyG's "
                  "NormalizeFeatures: subtract the table's minimum, divide each row by its sum, "
                  "clamped to >= 1; what Kipf & Welling do for the citation graphs)")
      ->check(CLI::IsMember({"none", "row"}))
      ->capture_default_str();
  cmd->add_option("--relation-fanout", o.relation_fanout,
                  "Typed graphs: REL=K0,K1,... sets relation REL's fanout per layer (REL an edge "
                  "type src:relation:dst, or a relation name only one edge type has; -1 all, 0 "
                  "none); the others keep --fanouts. Repeat per relation")
      ->take_all();
  add_cache_options(*cmd, o.cache_policy, o.cache_fraction, o.cfg.cache_rows);
  cmd->add_option("--feature-storage", o.feature_storage,
                  "Where the feature table lives: auto (by size), host, mmap (the dataset's .npy "
                  "mapped read-only), device or pinned (CUDA backend)")
      ->check(CLI::IsMember({"auto", "device", "pinned", "host", "mmap"}))
      ->capture_default_str();
  cmd->add_option("--backend", o.backend,
                  "Where the model, feature loading and the row exchanges run: host, cuda, "
                  "auto (cuda when a GPU is visible and the build has CUDA, else host), or "
                  "emulated (for testing without a GPU: the host kernels on memory handled as "
                  "device memory, so the CUDA path's uploads, downloads and memory-space checks "
                  "run on the CPU; same numbers as host)")
      ->check(CLI::IsMember({"auto", "host", "cuda", "emulated"}))
      ->capture_default_str();
  cmd->add_option("--pes", o.pes,
                  "Number of PEs (one thread each), 1 .. --batch-size; default: 4 on the host "
                  "backend, one per visible GPU times --pes-per-gpu on the CUDA backend");
  cmd->add_flag("--dry-run", o.dry_run,
                "train: read the dataset, resolve every option, print the run and an upper-bound "
                "memory estimate per PE and in total, then stop (an estimate beyond the memory "
                "available is an error)");
  cmd->add_flag("--allow-nonfinite", o.allow_nonfinite,
                "Train even when the feature table holds NaN or Inf (checked at load otherwise)");
  cmd->add_option("--sample-on", o.sample_on,
                  "CUDA backend: where minibatches are sampled: device (the GPU sampling, "
                  "unique-and-compact and owner-split kernels; ids routed by the device "
                  "communicator) or host (the host sampler; blocks copied to the GPU). Both give "
                  "identical blocks")
      ->check(CLI::IsMember({"device", "host"}))
      ->capture_default_str();
  cmd->add_option("--device-comm", o.device_comm,
                  "CUDA backend communicator: auto (NCCL when every PE has its own GPU, else "
                  "peer-copy), nccl or peer")
      ->check(CLI::IsMember({"auto", "nccl", "peer"}))
      ->capture_default_str();
  cmd->add_option("--threads-per-pe", o.threads_per_pe,
                  "Host threads per PE for BLAS and the parallel host kernels (1 <= N <= 4 x the "
                  "hardware threads, or auto = max(1, hardware threads / P)); printed in the run "
                  "header; results do not depend on it")
      ->capture_default_str();
  cmd->add_option("--sample-threads", o.cfg.sample_threads,
                  "Host threads per PE for sampling, at most 4 x the hardware threads; 0 = the "
                  "PE's --threads-per-pe budget (results do not depend on it)")
      ->capture_default_str();
  cmd->add_option("--metrics-out", o.metrics_out,
                  "Append one JSON object per epoch and mode to this .jsonl file, each with "
                  "this run's run_id (start time and 64 random bits); a file that exists and is "
                  "not empty needs --append-metrics");
  cmd->add_flag("--append-metrics", o.append_metrics,
                "Let --metrics-out add this run's lines to a file that already holds lines "
                "(another run's, or this run's before --resume); the run_id tells them apart");
  cmd->add_flag("--no-progress", o.no_progress,
                "Do not report progress within an epoch (on a terminal a bar with the rate and "
                "ETA; with stderr redirected a line every 10 s of a long epoch)");
  cmd->add_flag("--quiet", o.quiet, "Print only the final summary");
}

namespace {
/// The most threads --threads-per-pe or --sample-threads may ask for: 4 x the hardware threads.
int max_threads_per_option() {
  return 4 * std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}
}  // namespace

/// The option names into train_config's types (each parsed once, here).
/// --threads-per-pe: "auto" is 0 (train_config::threads_per_pe), else an integer >= 1.
/// @throws logic_error naming the option and the value otherwise.
int parse_threads_per_pe(const std::string& v) {
  if (v == "auto") return 0;
  std::size_t used = 0;
  int n = 0;
  try {
    n = std::stoi(v, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  COOPGNN_EXPECTS(used == v.size() && n >= 1,
                  "--threads-per-pe '{}': expected a count >= 1 or auto", v);
  int const most = max_threads_per_option();
  COOPGNN_EXPECTS(n <= most,
                  "--threads-per-pe {} exceeds {} (4 x the {} hardware threads): that many "
                  "threads per PE cannot help, and may not even start; use auto or a smaller count",
                  n, most, most / 4);
  return n;
}

/// The thread-budget part of the run header: "threads/PE=N (auto: H hardware threads / P)" and a
/// notice when P x N exceeds the hardware threads.
std::string thread_budget_line(const train_config& c) {
  int const hw = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  int const budget = pe_thread_budget(c);
  std::string line = fmt::format(
      "threads/PE={}{} sample-threads/PE={}", budget,
      c.threads_per_pe == 0 ? fmt::format(" (auto: {} hardware threads / P={})", hw, c.num_pes)
                            : std::string(),
      sampler_threads(c));
  if (static_cast<std::int64_t>(budget) * c.num_pes > hw) {
    line += fmt::format(
        "\nnote: P={} x {} threads/PE = {} threads on {} hardware threads: the "
        "PEs oversubscribe the cores (--threads-per-pe)",
        c.num_pes, budget, budget * c.num_pes, hw);
  }
  return line;
}

void parse_typed_options(train_options& o) {
  o.cfg.cache_policy = parse_cache_policy_kind(o.cache_policy);
  o.cfg.feature_storage = parse_storage_tier(o.feature_storage);
  o.cfg.device_comm = parse_device_comm_choice(o.device_comm);
  o.cfg.threads_per_pe = parse_threads_per_pe(o.threads_per_pe);
  int const most = max_threads_per_option();
  COOPGNN_EXPECTS(o.cfg.sample_threads >= 0 && o.cfg.sample_threads <= most,
                  "--sample-threads {} is outside 0 .. {} (0 = the PE's budget; at most 4 x the "
                  "{} hardware threads)",
                  o.cfg.sample_threads, most, most / 4);
}

/// --task into o.cfg.task from what the dataset holds (auto: node classification when it has
/// labels, else link prediction).
task_kind chosen_task(const dataset& ds, const std::string& task) {
  bool const nc = !ds.labels.empty() && ds.num_classes >= 2;
  if (task == "auto") {
    COOPGNN_EXPECTS(nc || ds.link.has_value(),
                    "dataset '{}' has neither a node-classification nor a link-prediction task",
                    ds.name);
    bool const link = ds.link && (!nc || ds.link_first);
    return link ? task_kind::link_prediction : task_kind::node_classification;
  }
  // read_dataset read only the task --task names.
  COOPGNN_EXPECTS(ds.link || nc,
                  "--task {}: the node-classification task '{}' of dataset '{}' has {} (it "
                  "needs labels of at least 2 classes)",
                  task, ds.task_name, ds.name,
                  ds.labels.empty() ? "no labels" : fmt::format("{} class(es)", ds.num_classes));
  return ds.link ? task_kind::link_prediction : task_kind::node_classification;
}

std::vector<int> resolve_relation_fanouts(const std::vector<std::string>& specs, const dataset& ds,
                                          const std::vector<int>& fanouts) {
  if (specs.empty()) return {};
  COOPGNN_EXPECTS(ds.hetero.has_value(),
                  "--relation-fanout: dataset '{}' is untyped (one relation); use --fanouts",
                  ds.name);
  auto const& types = ds.hetero->edge_types;
  std::size_t const L = fanouts.size(), R = types.size();
  std::vector<int> out(L * R);
  for (std::size_t l = 0; l < L; ++l)
    for (std::size_t r = 0; r < R; ++r) out[l * R + r] = fanouts[l];
  std::vector<bool> given(R, false);
  for (const std::string& spec : specs) {
    auto const eq = spec.find('=');
    COOPGNN_EXPECTS(eq != std::string::npos && eq > 0,
                    "--relation-fanout '{}' must be REL=K0,K1,... (one fanout per layer)", spec);
    std::string const rel = spec.substr(0, eq);
    std::int64_t match = ds.hetero->edge_type_index(rel);
    if (match < 0) {
      for (std::size_t r = 0; r < R; ++r) {
        if (split_edge_type(types[r], "--relation-fanout")[1] != rel) continue;
        COOPGNN_EXPECTS(match < 0,
                        "--relation-fanout '{}': relation '{}' names edge types '{}' and '{}'; "
                        "give the full src:relation:dst",
                        spec, rel, types[static_cast<std::size_t>(match)], types[r]);
        match = static_cast<std::int64_t>(r);
      }
    }
    COOPGNN_EXPECTS(match >= 0, "--relation-fanout '{}': dataset '{}' has no relation '{}' ({})",
                    spec, ds.name, rel, fmt::join(types, ", "));
    auto const r = static_cast<std::size_t>(match);
    COOPGNN_EXPECTS(!given[r], "--relation-fanout: relation '{}' is given twice", types[r]);
    given[r] = true;
    std::vector<int> ks;
    std::string const list = spec.substr(eq + 1);
    std::size_t pos = 0;
    while (pos <= list.size()) {
      auto const comma = std::min(list.find(',', pos), list.size());
      std::string const item = list.substr(pos, comma - pos);
      int k = 0;
      auto const [p, ec] = std::from_chars(item.data(), item.data() + item.size(), k);
      COOPGNN_EXPECTS(
          ec == std::errc{} && p == item.data() + item.size() && !item.empty() && k >= -1,
          "--relation-fanout '{}': '{}' is not a fanout (-1, 0 or a count)", spec, item);
      ks.push_back(k);
      pos = comma + 1;
    }
    COOPGNN_EXPECTS(ks.size() == L,
                    "--relation-fanout '{}': {} fanouts for {} layers (--fanouts has {})", spec,
                    ks.size(), L, L);
    for (std::size_t l = 0; l < L; ++l) out[l * R + r] = ks[l];
  }
  return out;
}

void resolve_task(train_options& o, const dataset& ds) {
  o.cfg.task = chosen_task(ds, o.task);
  // Typed datasets keep their features per node type (the trainer checks them).
  if (o.cfg.task == task_kind::link_prediction && o.cfg.embedding_dim == 0 && !ds.hetero &&
      ds.feature_dim() == 0) {
    COOPGNN_FAIL("dataset '{}' has no node features: give --embedding-dim D to learn them",
                 ds.name);
  }
}

void check_finite_features(const dataset& ds, const std::string& dir) {
  if (!ds.features_in_memory()) return;  // left in the file (mmap): not scanned
  auto const F = ds.feature_dim();
  auto check = [&](std::int64_t i, float x) {
    if (!std::isfinite(x)) {
      COOPGNN_IO_FAIL(
          "{}: feature row {} column {} is {} (the table must be finite; --allow-nonfinite "
          "trains anyway)",
          ds.feature_file.empty() ? dir : ds.feature_file.string(), i / F, i % F, x);
    }
  };
  if (ds.features_are_16bit()) {  // each element widened on its own: no float32 table
    const std::uint16_t* b = ds.features16.data();
    for (std::int64_t i = 0; i < ds.features16.size(); ++i) {
      check(i, widen_to_float(ds.feature_type, b[i]));
    }
    return;
  }
  const float* x = ds.features.data();
  for (std::int64_t i = 0; i < ds.features.size(); ++i) check(i, x[i]);
}

std::unique_ptr<loaded_dataset> load(train_options& o, bool edge_list) {
  parse_typed_options(o);
  if (o.dataset.empty()) o.dataset = default_dataset_dir();
  scoped_timer t(nullptr);
  // --feature-storage mmap: leave the rows in the .npy file; the trainer maps it.
  dataset_read_options ropt;
  ropt.load_features = o.cfg.feature_storage != storage_tier::mmap;
  ropt.task = o.task;
  ropt.feature = o.feature;
  ropt.heterogeneous = true;  // typed graphs train with --model rgcn (the trainer checks)
  ropt.load_edges = edge_list;  // false: the CSC is built from the file, one copy of the edges
  auto data = load_dataset(o.dataset, ropt);
  // As read, before any transform. It reads every edge and feature byte (the edge file again when
  // the CSC was built from it), so only runs that record or compare it compute it: checkpoints,
  // --resume, --save-model, and tma's ranks (record_content).
  if (o.record_content || !o.checkpoint.empty() || !o.resume.empty() || !o.save_model.empty()) {
    o.dataset_content = dataset_fingerprint(data->ds);
  }
  for (const std::string& note : data->ds.notes) fmt::print(stderr, "note: {}\n", note);
  if (!o.preset.empty()) {
    option_preset const& p = option_preset_named(o.preset);
    if (data->ds.hetero) apply_typed_preset_values(p, o.preset_given, o.cfg, o.preset_set);
    if (!o.quiet) fmt::print("{}\n", preset_line(o.preset, o.preset_set, o.preset_given));
  }
  if (std::string const d = duplicate_edges_note(*data); !d.empty()) {
    fmt::print(stderr, "note: {}\n", d);
  }
  o.cfg.cache_rows =
      resolve_cache_rows(o.cache_policy, o.cache_fraction, o.cfg.cache_rows, data->ds.num_nodes);
  if (!o.allow_nonfinite) check_finite_features(data->ds, o.dataset);
  if (data->ds.features_are_16bit() && o.cfg.embedding_dim == 0) {
    fmt::print(stderr,
               "note: the input features are {}: stored, loaded and counted at 2 bytes per "
               "element and widened to float32 as rows are gathered; evaluation's layer-wise "
               "inference widens every row ({} bytes) while it runs\n",
               to_string(data->ds.feature_type), data->ds.num_nodes * data->ds.feature_dim() * 4);
  }
  if (parse_feature_normalization(o.normalize_features) == feature_normalization::row) {
    COOPGNN_EXPECTS(data->ds.features_in_memory(),
                    "--normalize-features row needs the features in memory: the dataset has {} "
                    "(drop --feature-storage mmap, or normalise the file)",
                    data->ds.feature_dim() == 0 ? "no node features" : "them memory-mapped");
    COOPGNN_EXPECTS(!data->ds.features_are_16bit(),
                    "--normalize-features row rewrites the table in float32: the dataset's "
                    "features are {}, kept at 2 bytes per element (normalise the file instead)",
                    to_string(data->ds.feature_type));
    normalize_feature_rows(data->ds.features);
  }
  resolve_task(o, data->ds);
  validate_train_config(o.cfg);
  o.cfg.relation_fanouts = resolve_relation_fanouts(o.relation_fanout, data->ds, o.cfg.fanouts);
  if (o.cfg.gemm == gemm_math::tf32 && !o.quiet) {
    auto const devices = query_devices();
    if (resolve_backend(o.backend, devices.count, devices.reason) != backend::cuda) {
      fmt::print(stderr,
                 "note: --gemm-math tf32 applies to the CUDA backend's cuBLAS GEMMs; the {} "
                 "backend computes them in FP32\n",
                 o.backend == "auto" ? "host" : o.backend);
    }
  }
  if (data->ds.hetero && !o.quiet) {
    auto const& h = *data->ds.hetero;
    std::vector<std::string> fixed, learnt;
    for (std::size_t t = 0; t < h.node_types.size(); ++t) {
      auto const ti = static_cast<std::int64_t>(t);
      if (h.feature_dim(ti) > 0) {
        fixed.push_back(h.feature_type(ti) == feature_dtype::float32
                            ? h.node_types[t]
                            : fmt::format("{} ({}, 2 bytes per element)", h.node_types[t],
                                          to_string(h.feature_type(ti))));
      } else {
        learnt.push_back(h.node_types[t]);
      }
    }
    fmt::print(stderr,
               "note: heterogeneous input ({} node types, {} relations): rows of [{}] are their "
               "features (fixed), rows of [{}] learnable embeddings of the same width\n",
               h.node_types.size(), h.edge_types.size(), fmt::join(fixed, ", "),
               fmt::join(learnt, ", "));
    if (o.cfg.task == task_kind::link_prediction) {
      if (o.cfg.decoder != models::decoder_kind::distmult) {
        fmt::print(stderr,
                   "note: --decoder {} scores the pairs of every relation with one function; "
                   "--decoder distmult learns a diagonal per relation\n",
                   models::to_string(o.cfg.decoder));
      }
      std::vector<std::string> alone;
      for (std::size_t r = 0; o.cfg.exclude == exclude_kind::reverse && r < h.edge_types.size();
           ++r) {
        if (reverse_edge_type(h, static_cast<std::int64_t>(r)) < 0) {
          alone.push_back(h.edge_types[r]);
        }
      }
      if (!alone.empty()) {
        fmt::print(stderr,
                   "note: --exclude reverse: [{}] have no edge type running the other way; only "
                   "the pair's own edge is excluded for them\n",
                   fmt::join(alone, ", "));
      }
    }
  }
  if (!o.quiet) {
    auto const& ds = data->ds;
    bool const both = ds.link && !ds.task_name.empty();
    std::string const why =
        o.task != "auto" ? std::string()
        : both           ? "; chosen: the first task of metadata.yaml, --task NAME picks another"
                         : std::string();
    std::string const feat =
        ds.feature_dim() > 0
            ? fmt::format("{} ('{}'{}{})", ds.feature_dim(), ds.feature_name,
                          ds.features_are_16bit() ? fmt::format(", {}", to_string(ds.feature_type))
                                                  : std::string(),
                          o.normalize_features == "row" ? ", row-normalised" : "")
            : std::string("none");
    // |E| and the in-degrees of the graph trained: build_csc's, without repeated edges.
    std::string const edges =
        fmt::format("|E| {} (max in-degree {})", data->g.num_edges(), max_in_degree(data->g));
    if (o.cfg.task == task_kind::link_prediction) {
      fmt::print(
          "dataset {} ({}): |V| {} {} features {} task link_prediction ('{}'{}) train/val/"
          "test pairs {}/{}/{} (loaded in {:.2f}s)\n",
          ds.name, o.dataset, ds.num_nodes, edges, feat, ds.link->name, why, ds.link->train.size(),
          ds.link->valid.size(), ds.link->test.size(), t.seconds());
    } else {
      fmt::print(
          "dataset {} ({}): |V| {} {} features {} task node_classification ('{}'{}) classes "
          "{} train/val/test {}/{}/{} (loaded in {:.2f}s)\n",
          ds.name, o.dataset, ds.num_nodes, edges, feat,
          ds.task_name.empty() ? "label feature" : ds.task_name, why, ds.num_classes,
          ds.train.size(), ds.valid.size(), ds.test.size(), t.seconds());
    }
  }
  return data;
}

/// Resolves --backend and the PE count (--pes, --pes-per-gpu) into o.cfg.
void resolve_pes(train_options& o) {
  COOPGNN_EXPECTS(o.pes == -1 || o.pes >= 1, "--pes must be at least 1, got {}", o.pes);
  auto const devices = query_devices();
  o.cfg.compute_backend = resolve_backend(o.backend, devices.count, devices.reason);
  if (o.cfg.compute_backend != backend::cuda) {
    COOPGNN_EXPECTS(o.cfg.pes_per_gpu == 1, "--pes-per-gpu {} needs the CUDA backend",
                    o.cfg.pes_per_gpu);
  }
  if (o.cfg.compute_backend != backend::cuda) {
    COOPGNN_EXPECTS(o.sample_on == "device",
                    "--sample-on {} needs the CUDA backend (the host backend samples on the host)",
                    o.sample_on);
    COOPGNN_EXPECTS(o.device_comm == "auto",
                    "--device-comm {} needs the CUDA backend (host PEs use the host communicator)",
                    o.device_comm);
  }
  o.cfg.sample_on_device = o.sample_on == "device";
  if (o.pes > 0) {
    o.cfg.num_pes = o.pes;
  } else if (o.cfg.compute_backend == backend::cuda) {
    o.cfg.num_pes = devices.count * o.cfg.pes_per_gpu;
  } else {
    o.cfg.num_pes = train_config{}.num_pes;
  }
  if (!o.preset.empty()) {
    // The preset's seeds per PE: the global batch follows the PE count.
    option_preset const& p = option_preset_named(o.preset);
    auto const& given = o.preset_given;
    if (p.seeds_per_pe > 0 &&
        std::find(given.begin(), given.end(), "--batch-size") == given.end()) {
      o.cfg.batch_size = p.seeds_per_pe * o.cfg.num_pes;
      if (!o.quiet) {
        fmt::print("preset {} sets: --batch-size {} ({} seeds per PE x {} PEs)\n", o.preset,
                   o.cfg.batch_size, p.seeds_per_pe, o.cfg.num_pes);
      }
    }
  }
  if (o.pes > 0) {
    // More PEs than seeds (or positives) in a global batch leaves PEs without work; say so
    // before any thread or buffer exists.
    COOPGNN_EXPECTS(o.pes <= o.cfg.batch_size,
                    "--pes {} exceeds --batch-size {}: every PE needs at least one seed of the "
                    "global batch",
                    o.pes, o.cfg.batch_size);
  }
}

namespace {

/// The identity a checkpoint or saved model records for this run (run_identity plus the
/// tool-level options that change the numbers).
nlohmann::json identity_of(const dataset& ds, const train_options& o) {
  nlohmann::json extra = {
      {"--feature", ds.feature_name},
      {"--normalize-features", o.normalize_features},
      {"dataset.content", o.dataset_content},
      {"dataset.task",
       ds.link && o.cfg.task == task_kind::link_prediction ? ds.link->name : ds.task_name}};
  return run_identity(ds, o.cfg, extra);
}

/// The totals a checkpoint carries, so that a resumed run's summary covers every epoch.
nlohmann::json totals_json(const epoch_report& t) {
  return {{"epochs", t.epoch},
          {"batches", t.batches},
          {"train_seconds", t.epoch_seconds},
          {"eval_seconds", t.eval_seconds},
          {"work", work_counters_json(t.work)}};
}

void restore_totals(const checkpoint& c, epoch_report& t) {
  if (!c.extra.contains("totals")) return;
  auto const& j = c.extra["totals"];
  auto const manifest = c.path / "manifest.json";
  t.epoch = j.value("epochs", 0);
  t.batches = j.value("batches", std::int64_t{0});
  t.epoch_seconds = j.value("train_seconds", 0.0);
  t.eval_seconds = j.value("eval_seconds", 0.0);
  t.work = work_counters_of(j.value("work", nlohmann::json::object()), manifest);
}

/// Upper-bound estimate of a run's memory (--dry-run): what one PE holds and
/// what all PEs share, in bytes, from the dataset's sizes and the options alone.
struct memory_estimate {
  std::int64_t parameters = 0;   ///< the model's, from its layout (models::layout_of)
  std::uint64_t model = 0;       ///< per PE: parameters x 4 floats (value, gradient, Adam m, v)
  std::uint64_t embeddings = 0;  ///< per PE: learnable rows x 3 floats (cooperative: its share)
  std::uint64_t cache = 0;       ///< per PE: cache rows x F floats
  std::uint64_t batch = 0;       ///< per PE: blocks, input rows and activations of one step
  std::int64_t prepared = 1;     ///< batches a PE holds at once (1 + --prefetch on the host)
  std::uint64_t minibatch = 0;   ///< per PE: prepared x batch
  std::uint64_t shared = 0;      ///< once on the host: CSC and the in-memory feature table
  std::uint64_t graph = 0;       ///< the CSC alone (CUDA: one copy per device, with owners)
  std::int64_t input_rows = 0;   ///< per PE: bound on the input layer's rows
};

memory_estimate estimate_memory(const loaded_dataset& data, const train_options& o) {
  const dataset& ds = data.ds;
  const train_config& c = o.cfg;
  memory_estimate m;
  // The model and the embeddings from their shapes (nothing of their size is allocated).
  run_footprint const fp = run_footprint_of(ds, c, &data.g);
  m.parameters = fp.parameters;
  m.model = fp.model_bytes;
  m.embeddings = fp.embedding_bytes;
  std::uint64_t typed_features = 0;  // typed graphs: the featured types' in-memory tables
  if (ds.hetero) {
    const hetero_schema& h = *ds.hetero;
    for (std::int64_t t = 0; t < h.num_node_types(); ++t) {
      if (h.feature_dim(t) > 0 && !h.features_in_file(t)) {
        typed_features += static_cast<std::uint64_t>(h.count(t) * h.feature_row_bytes(t));
      }
    }
  }
  std::uint64_t const F =
      static_cast<std::uint64_t>(c.embedding_dim > 0 ? c.embedding_dim
                                 : ds.hetero ? std::max<std::int64_t>(hetero_input_dim(ds), 1)
                                             : std::max<std::int64_t>(ds.feature_dim(), 1));
  m.cache = saturating_bytes(c.cache_rows, F * sizeof(float));
  m.batch = fp.batch_bytes;
  m.prepared = fp.prepared_batches;
  m.minibatch = fp.minibatch_bytes;
  m.input_rows = fp.input_rows;
  m.graph = (static_cast<std::uint64_t>(ds.num_nodes) + 1) * sizeof(eid_t) +
            static_cast<std::uint64_t>(data.g.num_edges()) * sizeof(vid_t);
  m.shared = m.graph + typed_features +
             (ds.features_in_memory()  // at the stored width (2 bytes: 16-bit)
                  ? static_cast<std::uint64_t>(ds.num_nodes * ds.feature_row_bytes())
                  : 0);
  return m;
}

nlohmann::json resolve_run(const loaded_dataset& data, train_options& o);

/// --dry-run: prints the resolved run and its memory estimate (the model's from its layout:
/// nothing of the options' sizes is allocated), then runs the run's own checks (resolve_run) and
/// refuses a host run whose estimate exceeds the memory there is.
/// @throws logic_error naming the option (the run's checks) or --pes (the estimate).
void dry_run(const loaded_dataset& data, train_options& o) {
  resolve_pes(o);  // P for the estimate; resolve_run below repeats it with the run's checks
  memory_estimate const m = estimate_memory(data, o);
  auto const sum = [](std::uint64_t a, std::uint64_t b) {
    std::uint64_t r = 0;
    return __builtin_add_overflow(a, b, &r) ? UINT64_MAX : r;
  };
  std::uint64_t const per_pe = sum(sum(m.model, m.embeddings), sum(m.cache, m.minibatch));
  std::uint64_t const total = sum(m.shared, saturating_bytes(o.cfg.num_pes, per_pe));
  bool const on_host = o.cfg.compute_backend != backend::cuda;
  fmt::print(
      "dry run: {} minibatching, backend {}, P = {}, model {}, fanouts {}, batch {}; nothing is "
      "trained\nmemory estimate (upper bound, from sizes and options):\n"
      "  per PE{}: model + Adam {} ({} parameters), embeddings {}, cache {}, one minibatch {} (<= "
      "{} input rows){} = {}\n  shared on the host: graph + feature table {}\n  total {}: {}\n",
      to_string(o.cfg.mode), to_string(o.cfg.compute_backend), o.cfg.num_pes,
      models::to_string(o.cfg.model), fmt::join(o.cfg.fanouts, ","), o.cfg.batch_size,
      on_host ? "" : " (on its GPU)", format_bytes(m.model), m.parameters,
      format_bytes(m.embeddings), format_bytes(m.cache), format_bytes(m.batch), m.input_rows,
      m.prepared == 1 ? std::string()
                      : fmt::format(" x {} prepared (--prefetch {}) = {}; per PE", m.prepared,
                                    o.cfg.prefetch, format_bytes(m.minibatch)),
      format_bytes(per_pe), format_bytes(m.shared),
      on_host ? "on the host" : "on the host (shared only)",
      format_bytes(on_host ? total : m.shared));
  std::fflush(stdout);
  resolve_run(data, o);
  memory_limit const lim = host_memory_limit();
  std::uint64_t const need = on_host ? total : m.shared;
  COOPGNN_EXPECTS(need <= lim.bytes,
                  "--pes {}: the run's estimated {} exceed the {} of memory available ({}); "
                  "use fewer PEs, a smaller --batch-size or smaller --fanouts",
                  o.cfg.num_pes, format_bytes(need), format_bytes(lim.bytes), lim.source);
  if (!on_host) {
    // Every device holds its PEs' shares and, when sampling runs there, one copy of the graph
    // (with edge types when typed) and, cooperative, the owner map (the trainer's placed graph);
    // the feature table goes on a device only where half of its free memory holds it
    // (setup_cuda_features), so it is not counted here.
    std::uint64_t per_device = 0;
    if (o.cfg.sample_on_device) {  // the placed graph (trainer::place_graphs)
      per_device = m.graph;
      if (data.g.typed()) per_device += static_cast<std::uint64_t>(data.g.num_edges()) * 4;
      if (o.cfg.mode == minibatch_mode::cooperative) {
        per_device += static_cast<std::uint64_t>(data.ds.num_nodes) * sizeof(std::uint16_t);
      }
    }
    auto const needs = bytes_per_device(per_pe, per_device, o.cfg.num_pes, o.cfg.pes_per_gpu);
    for (std::size_t d = 0; d < needs.size(); ++d) {
      device_memory const mem = query_device_memory(static_cast<int>(d));
      fmt::print("  device {}: its PEs + placed graph {} of {} free ({} total)\n", d,
                 format_bytes(needs[d]), format_bytes(mem.free_bytes),
                 format_bytes(mem.total_bytes));
      COOPGNN_EXPECTS(needs[d] <= mem.free_bytes,
                      "--pes {} --pes-per-gpu {}: device {} would need an estimated {} but has "
                      "{} free; use more devices (fewer --pes-per-gpu), a smaller --batch-size "
                      "or smaller --fanouts",
                      o.cfg.num_pes, o.cfg.pes_per_gpu, d, format_bytes(needs[d]),
                      format_bytes(mem.free_bytes));
    }
  }
  std::fflush(stdout);
}

/// Refuses a --checkpoint DIR that holds checkpoints this run would replace (write_checkpoint
/// keeps only the newest two), unless this run resumes from DIR (--resume DIR, or one of its
/// ckpt-* directories; check_resumable then compares the identities) or
/// --overwrite-checkpoints is given.
/// @throws io_error naming --checkpoint, DIR and, for another configuration, the first option
///         that differs.
void check_checkpoint_dir(const train_options& o, const nlohmann::json& identity) {
  namespace fs = std::filesystem;
  fs::path const dir = resolved_path(o.checkpoint);
  if (!o.resume.empty()) {
    fs::path const from = resolved_path(o.resume);
    if (from == dir || from.parent_path() == dir) return;
  }
  std::optional<checkpoint_summary> held;
  try {
    held = peek_checkpoint(o.checkpoint);
  } catch (const io_error& e) {
    if (!o.overwrite_checkpoints) {
      throw io_error(fmt::format(
          "--checkpoint {}: holds a checkpoint that cannot be read ({}); refusing to replace it: "
          "choose another directory, or pass --overwrite-checkpoints",
          o.checkpoint, e.what()));
    }
  }
  std::size_t others = 0;  // ckpt-* directories without DIR/latest (a run that never finished one)
  std::error_code ec;
  for (fs::directory_iterator it(o.checkpoint, ec), end; !ec && it != end; it.increment(ec)) {
    std::string const name = it->path().filename().string();
    if (name.rfind("ckpt-", 0) == 0 && name.find(".tmp.") == std::string::npos) ++others;
  }
  bool const latest = fs::exists(fs::path(o.checkpoint) / "latest", ec);
  if (!held && others == 0 && !latest) return;
  std::string const what =
      held ? fmt::format("{} (epoch {}, {} of {} batches)", held->path.filename().string(),
                         held->position.epoch, held->position.next_batch, held->batches_per_epoch)
           : fmt::format("{} ckpt-* directories", others);
  if (o.overwrite_checkpoints) {
    // Removed now, not one by one as this run's replace them: a checkpoint of the other run at
    // a position this run reaches would otherwise be taken for this run's (write_checkpoint).
    fmt::print(stderr,
               "note: --overwrite-checkpoints: removing the checkpoints in {} (newest {})\n",
               o.checkpoint, what);
    std::vector<fs::path> old;
    for (fs::directory_iterator it(o.checkpoint, ec), end; !ec && it != end; it.increment(ec)) {
      std::string const name = it->path().filename().string();
      if (name.rfind("ckpt-", 0) == 0 || name == "latest") old.push_back(it->path());
    }
    for (const fs::path& p : old) {
      std::error_code rm;
      fs::remove_all(p, rm);
      if (rm) {
        COOPGNN_IO_FAIL("--checkpoint {}: cannot remove {}: {}", o.checkpoint, p.string(),
                        rm.message());
      }
    }
    return;
  }
  std::string const diff = held ? identity_difference(held->identity, identity) : std::string();
  if (held && diff.empty()) {
    COOPGNN_IO_FAIL(
        "--checkpoint {}: holds checkpoints of a run with these options, newest {}; --resume {} "
        "continues it, --overwrite-checkpoints starts over and replaces them",
        o.checkpoint, what, o.checkpoint);
  }
  COOPGNN_IO_FAIL(
      "--checkpoint {}: holds the checkpoints of another run (newest {}{}); refusing to replace "
      "them: choose another directory, or pass --overwrite-checkpoints",
      o.checkpoint, what, diff.empty() ? std::string() : "; " + diff);
}

/// The run's own checks, which --dry-run runs too (one function, so that a dry run refuses
/// exactly what the run refuses): --backend and the PE count into o.cfg; every check the
/// trainer makes before it allocates (check_training_run); the sizes the options ask for
/// against the memory there is (check_run_footprint); --checkpoint-every; and a --checkpoint
/// DIR holding checkpoints this run would replace (check_checkpoint_dir, which only reads).
/// What the run checks outside this function: the output paths (check_run_outputs, which
/// creates missing directories) and the checkpoint lock, neither taken by a dry run.
/// @returns the run's identity (identity_of), for its checkpoints.
/// @throws logic_error or io_error naming the option, dataset or directory.
nlohmann::json resolve_run(const loaded_dataset& data, train_options& o) {
  resolve_pes(o);
  check_training_run(data.ds, data.g, o.cfg);
  check_run_footprint(data.ds, o.cfg);
  COOPGNN_EXPECTS(o.checkpoint_every >= 1, "--checkpoint-every {} must be at least 1",
                  o.checkpoint_every);
  if (o.checkpoint.empty()) o.checkpoint = o.resume;  // --resume DIR keeps saving there
  COOPGNN_EXPECTS(o.checkpoint_every == 1 || !o.checkpoint.empty(),
                  "--checkpoint-every {} without --checkpoint DIR: nothing would be saved",
                  o.checkpoint_every);
  auto identity = identity_of(data.ds, o);
  if (!o.checkpoint.empty()) check_checkpoint_dir(o, identity);
  return identity;
}

}  // namespace

std::pair<epoch_report, epoch_report> run_training(const loaded_dataset& data, train_options& o,
                                                   line_appender* jsonl, bool stoppable) {
  auto const identity = resolve_run(data, o);
  if (o.cfg.profile_first >= 0 && o.cfg.compute_backend != backend::cuda) {
    fmt::print("note: --profile-steps: the {} backend has nothing for a CUDA profiler to capture\n",
               to_string(o.cfg.compute_backend));
  }
  // Set-up builds one model replica, optimizer state and graph view per PE: seconds at P in the
  // hundreds. What is printed so far reaches a log before it, and a slow one is reported.
  std::fflush(stdout);
  scoped_timer const setup_clock(nullptr);
  trainer tr(data.ds, data.g, o.cfg);
  double const setup_s = setup_clock.seconds();
  auto const nb = tr.batches_per_epoch();
  // --select-best val keeps a host copy of the selected epoch's parameters when they will be
  // saved: by --save-model, or in checkpoints (a resumed run selects what the whole run would).
  model_selector selector(o.cfg.select_best);
  bool const val_rule = o.cfg.select_best == select_best_kind::val;
  bool const keep_params = val_rule && (!o.save_model.empty() || !o.checkpoint.empty());
  epoch_report last, total;
  total.mode = to_string(o.cfg.mode);
  total.pes = o.cfg.num_pes;
  total.backend = to_string(o.cfg.compute_backend);
  epoch_position pos;  // epoch 1, batch 0
  if (!o.resume.empty()) {
    checkpoint c = read_checkpoint(o.resume);
    auto const manifest = c.path / "manifest.json";
    check_resumable(c.identity, identity, manifest);
    std::string const note = older_content_note(c.identity, "the checkpoint " + c.path.string());
    if (!note.empty()) fmt::print(stderr, "note: {}\n", note);
    if (c.batches_per_epoch != nb) {
      throw io_error(
          fmt::format("{}: cannot resume: {} batches per epoch in the checkpoint, {} "
                      "in this run",
                      manifest.string(), c.batches_per_epoch, nb));
    }
    try {
      tr.restore(c.state);
    } catch (const logic_error& e) {
      throw io_error(fmt::format("{}: cannot resume: {}", manifest.string(), e.what()));
    }
    pos = c.position;
    if (pos.next_batch == nb) pos = epoch_position{.epoch = pos.epoch + 1};
    restore_totals(c, total);
    if (!o.quiet) {
      fmt::print("resumed from {}: epoch {} batch {}/{}\n", c.path.string(), pos.epoch,
                 pos.next_batch, nb);
    }
    if (val_rule && c.extra.contains("selection")) {
      selector.restore(c.extra["selection"], std::move(c.selected_params),
                       std::move(c.selected_emb), manifest);
    } else if (val_rule) {
      std::string const note = fmt::format(
          "selected among epochs {} to {} only: the checkpoint holds no selection state "
          "(written by an older coopgnn, or with --select-best last)",
          pos.epoch, o.cfg.epochs);
      selector.set_note(note);
      if (!o.quiet) fmt::print("note: --select-best val: {}\n", note);
    }
  }
  if (!o.quiet) {
    fmt::print(
        "{} minibatching: backend={} P={} model={} hidden={} fanouts={} sampler={} batch={} "
        "params={} batches/epoch={} {}\n",
        to_string(o.cfg.mode), to_string(o.cfg.compute_backend), o.cfg.num_pes,
        models::to_string(o.cfg.model), o.cfg.hidden, fmt::join(o.cfg.fanouts, ","), to_string(o.cfg.sampler),
        o.cfg.batch_size, tr.model(0).num_parameters(), nb, thread_budget_line(o.cfg));
    if (setup_s >= kSlowSetupSeconds) {
      fmt::print("note: setting up the {} PEs took {:.1f} s\n", o.cfg.num_pes, setup_s);
    }
    if (o.cfg.cache_policy != cache_policy_kind::none && !tr.device_cache_holds_rows()) {
      fmt::print(
          "note: --cache-policy {} is a host cache model: it decides hits and misses exactly as "
          "the policy would and counts them (the \"cache\" numbers), but every row is still read "
          "from the feature table ({}); it holds no rows of its own\n",
          to_string(o.cfg.cache_policy), to_string(tr.features().tier()));
    }
  }
  std::string saved;  // the newest checkpoint written by this run
  auto save = [&](const epoch_position& at) {
    if (o.checkpoint.empty()) return;
    checkpoint c;
    c.identity = identity;
    c.position = at;
    c.batches_per_epoch = nb;
    c.state = tr.state();
    c.extra = {{"totals", totals_json(total)}};
    if (val_rule) {
      c.extra["selection"] = selector.to_json();
      if (const auto* p = selector.params()) {
        c.selected_params = *p;
        c.selected_emb = selector.embeddings();
      }
    }
    saved = write_checkpoint(o.checkpoint, c).string();
  };
  auto stop_requested = [stoppable] { return stoppable && signals::stop_signal() != 0; };
  auto stop_here = [&](const epoch_position& at) {
    save(at);
    int const sig = signals::stop_signal();
    std::string const where =
        at.next_batch == nb
            ? fmt::format("after epoch {} (all {} batches)", at.epoch, nb)
            : fmt::format("in epoch {} after batch {} of {}", at.epoch, at.next_batch, nb);
    throw interrupted(
        sig, fmt::format("stopped by {} {}; {}; {}", sig == SIGINT ? "SIGINT" : "SIGTERM", where,
                         saved.empty() ? std::string("no checkpoint (--checkpoint DIR saves one)")
                                       : fmt::format("checkpoint {} (resume with --resume {})",
                                                     saved, o.checkpoint),
                         jsonl != nullptr ? fmt::format("metrics in {}", jsonl->path().string())
                                          : std::string("no --metrics-out")));
  };
  for (int e = pos.epoch; e <= o.cfg.epochs; ++e) {
    bool const report = !o.no_progress && !o.quiet;
    progress_reporter bar(fmt::format("epoch {}/{}", e, o.cfg.epochs), report,
                          isatty(fileno(stderr)) != 0, kProgressLineSeconds, stderr);
    epoch_position at;
    pos.epoch = e;
    last = tr.run_epoch(
        pos, e == o.cfg.epochs,
        [&](std::int64_t d, std::int64_t n) {
          bar.update(d, n);
          if (o.on_batch) o.on_batch(e, d, n);
        },
        stop_requested, &at);
    pos = epoch_position{.epoch = e + 1};
    if (at.next_batch < nb) stop_here(at);  // stopped inside the epoch: no report line
    if (!o.quiet && o.epoch_lines) {
      fmt::print("{}\n", format_epoch_line(last));
      std::fflush(stdout);  // a log shows each epoch as it ends, not at exit
    }
    if (jsonl != nullptr) {
      nlohmann::json line = to_json(last);
      line["run_id"] = o.run_id;
      line["gemm_math"] = to_string(o.cfg.gemm);
      line["options"] = arithmetic_options(o.cfg);
      jsonl->append(line.dump());
    }
    if (selector.offer(last) && keep_params) {
      selector.keep(tr.parameters(),
                    o.cfg.embedding_dim > 0 ? tr.embedding_values() : matrix<float>());
    }
    total.epoch = e;
    total.seconds += last.seconds;
    total.cpu_seconds += last.cpu_seconds;
    total.communication_wait_measured = last.communication_wait_measured;
    total.epoch_seconds += last.epoch_seconds;
    total.eval_seconds += last.eval_seconds;
    total.work += last.work;
    total.batches += last.batches;
    // Typed graphs: the names behind the per-type and per-relation counts (compare's rows).
    total.node_types = last.node_types;
    total.relations = last.relations;
    if (stop_requested()) stop_here(at);
    if (e % o.checkpoint_every == 0 || e == o.cfg.epochs) save(at);
  }
  if (!o.quiet && !saved.empty()) fmt::print("checkpoint: {}\n", saved);
  total.selected = selector.selected();
  if (jsonl != nullptr && total.selected.epoch > 0) {
    nlohmann::json line = selection_json(total.selected, to_string(o.cfg.task));
    line["run_id"] = o.run_id;
    line["mode"] = to_string(o.cfg.mode);
    jsonl->append(line.dump());
  }
  if (!o.save_model.empty()) {
    saved_model m;
    m.config = model_config_for(data.ds, o.cfg);
    // The selected epoch's parameters when kept (--select-best val), else the last epoch's.
    const auto* best = selector.params();
    m.params = best != nullptr ? *best : tr.parameters();
    if (o.cfg.embedding_dim > 0) {
      m.embeddings = best != nullptr ? selector.embeddings() : tr.embedding_values();
    }
    m.identity = identity;
    write_saved_model(o.save_model, m);
    if (!o.quiet) {
      fmt::print("model saved to {} (epoch {}, --select-best {})\n", o.save_model,
                 best != nullptr ? total.selected.epoch : total.epoch,
                 to_string(o.cfg.select_best));
    }
  }
  total.metric_name = last.metric_name;
  total.val_metric = last.val_metric;
  total.test_metric = last.test_metric;
  total.train_loss = last.train_loss;
  return {last, total};
}

void check_run_outputs(const train_options& o) {
  if (!o.save_model.empty()) check_writable_dir(o.save_model, "--save-model");
  if (!o.metrics_out.empty()) {
    check_writable_file(o.metrics_out, "--metrics-out");
    std::error_code ec;
    auto const size = std::filesystem::file_size(o.metrics_out, ec);
    if (!ec && size > 0 && !o.append_metrics) {
      COOPGNN_IO_FAIL(
          "--metrics-out {}: exists and holds {} bytes of lines; pass --append-metrics to add "
          "this run's lines after them (every line carries its run's run_id), or choose another "
          "file",
          o.metrics_out, size);
    }
  }
}

std::unique_ptr<line_appender> open_metrics(train_options& o) {
  o.run_id = make_run_id(std::chrono::system_clock::now());
  std::string const& path = o.metrics_out;
  if (path.empty()) return nullptr;
  if (!o.quiet) fmt::print("metrics: {} (run_id {})\n", path, o.run_id);
  try {
    return std::make_unique<line_appender>(path);
  } catch (const io_error& e) {
    throw io_error(fmt::format("--metrics-out {}", e.what()));
  }
}

namespace {

/// SIGINT/SIGTERM handlers for the duration of one `train` (restored on return, so that
/// in-process runs of the command line leave none behind).
struct stop_handlers {
  stop_handlers() { signals::install_stop_handlers(signals::on_second_signal::exit_now); }
  ~stop_handlers() { signals::uninstall_stop_handlers(); }
  stop_handlers(const stop_handlers&) = delete;
  stop_handlers& operator=(const stop_handlers&) = delete;
};

}  // namespace

void add_train_commands(CLI::App& app) {
  auto topt = std::make_shared<train_options>();
  auto* train = app.add_subcommand(
      "train",
      "Train a GNN with P PEs in cooperative or independent minibatching and report loss, "
      "validation/test metric, per-stage time and work per epoch.");
  add_common_options(train, *topt);
  train
      ->add_option("--mode", topt->mode,
                   "cooperative: PEs share one global batch and exchange vertices with "
                   "all-to-all; independent: each PE trains its own B/P seeds")
      ->check(CLI::IsMember({"cooperative", "independent"}))
      ->capture_default_str();
  train
      ->add_option("--checkpoint", topt->checkpoint,
                   "Save checkpoints in this directory (model, optimizer state, embeddings, "
                   "position and configuration; DIR/latest names the newest, the one before it "
                   "is kept): every --checkpoint-every epochs, after the last, and on "
                   "SIGINT/SIGTERM. One run at a time per DIR (a lock on DIR/.lock: a second "
                   "run is refused at once); a DIR holding checkpoints this run would replace "
                   "(another run's, or this configuration's without --resume DIR) is refused "
                   "unless --overwrite-checkpoints")
      ->capture_default_str();
  train
      ->add_option("--checkpoint-every", topt->checkpoint_every,
                   "Epochs between checkpoints (the last epoch is always saved)")
      ->capture_default_str();
  train
      ->add_option("--resume", topt->resume,
                   "Continue the run checkpointed in this directory (DIR/latest, or one ckpt-* "
                   "directory): bit-identical losses and metrics to an uninterrupted run. "
                   "--epochs is the run's total. The options that decide the numbers must be "
                   "the checkpoint's (the error names the one that differs); --epochs, "
                   "--eval-every, --metrics-out, progress, cache and storage options may "
                   "change. Keeps checkpointing into DIR unless --checkpoint says otherwise")
      ->capture_default_str();
  train->add_flag("--overwrite-checkpoints", topt->overwrite_checkpoints,
                  "Let --checkpoint DIR replace the checkpoints DIR already holds (another "
                  "run's, or this configuration's when not resuming); without it such a DIR is "
                  "an error");
  train
      ->add_option("--save-model", topt->save_model,
                   "After training, write the model (configuration + parameters, and the "
                   "learned embeddings) to this directory for `coopgnn embed` / `predict`")
      ->capture_default_str();
  train->add_option_function<std::string>(
      "--profile-steps",
      [topt](const std::string& s) {
        std::tie(topt->cfg.profile_first, topt->cfg.profile_last) =
            nvtx::parse_profile_steps(s, "--profile-steps");
      },
      "A:B: cudaProfilerStart before global step A, cudaProfilerStop after step B (CUDA "
      "backend; with `nsys --capture-range=cudaProfilerApi`; docs/profiling.md)");
  train->footer(
      "Interrupts: SIGINT/SIGTERM finish the current step, write a checkpoint (with "
      "--checkpoint), leave --metrics-out with complete lines and exit with status 130 "
      "(SIGINT) or 143 (SIGTERM); a second signal exits at once with the same status.");
  train->callback([topt] {
    // One run per checkpoint directory: refused at once, before the dataset is read.
    if (topt->checkpoint.empty()) topt->checkpoint = topt->resume;  // --resume DIR saves there
    std::unique_ptr<checkpoint_lock> lock;
    if (!topt->dry_run && !topt->checkpoint.empty()) {
      try {
        lock = std::make_unique<checkpoint_lock>(topt->checkpoint);
      } catch (const io_error& e) {
        throw io_error(fmt::format("--checkpoint {}", e.what()));
      }
    }
    if (!topt->dry_run) check_run_outputs(*topt);
    auto data = load(*topt);
    topt->cfg.mode = parse_mode(topt->mode);
    if (topt->dry_run) {
      dry_run(*data, *topt);
      return;
    }
    auto jsonl = open_metrics(*topt);
    stop_handlers const handlers;
    auto [last, total] = run_training(*data, *topt, jsonl.get(), true);
    if (last.epoch == 0) {
      fmt::print("\nnothing left to train: the run already has its {} epoch(s)\n",
                 topt->cfg.epochs);
      return;
    }
    fmt::print("\n{}", format_comparison({last}, {total}));
    fmt::print("{}\n", format_selection(total.selected));
  });

  add_compare_command(app);
}

}  // namespace coopgnn::cli
