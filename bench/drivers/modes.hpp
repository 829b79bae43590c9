// `coopgnn bench modes`: cooperative against independent minibatching at the same global batch
// for several PE counts (docs/design.md section 6): time and work per stage,
// all-to-all bytes per layer and direction, load imbalance, per-PE working set, and DGX time
// modelled from the counted work (bench/drivers/cost_model.hpp, docs/results/cost-model.md) and, on
// the CUDA backend, measured compute plus modelled links. Output format: docs/results-schema.md,
// section `modes`.
#pragma once

#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "bench/drivers/cost_model.hpp"
#include "bench/drivers/work.hpp"
#include "runtime/graph/csc.hpp"
#include "runtime/graph/dataset.hpp"
#include "pipeline/config.hpp"

namespace coopgnn::bench {

/// What `coopgnn bench modes` runs. Defaults are the command's defaults.
struct modes_options {
  sampler_kind sampler = sampler_kind::ns;
  std::vector<int> fanouts = {10, 10, 10};
  std::int64_t batch_size = 1024;  ///< global batch B, the same for every P and mode
  /// > 0: the global batch is this many seeds per PE (B = batch_per_pe * P, the paper's setup)
  /// instead of batch_size.
  std::int64_t batch_per_pe = 0;
  std::vector<int> pes = {1, 2, 4, 8};
  int batches = 8;  ///< measured batches per (mode, P)
  int warmup = 1;   ///< batches run before measuring
  std::string model = "sage";
  std::int64_t hidden = 64;  ///< GAT: per head
  std::int64_t heads = 1;    ///< GAT: hidden-layer heads (train_config::heads)
  std::int64_t out_heads = 1;
  float attn_dropout = 0.0f;
  std::int64_t num_bases = 0;   ///< R-GCN: basis decomposition (train_config::num_bases)
  std::int64_t num_blocks = 0;  ///< R-GCN: block-diagonal decomposition
  std::uint64_t seed = 0;
  /// LABOR's batch dependency kappa (train_config::batch_dependency; 1 = independent batches,
  /// the only value NS takes).
  std::int64_t batch_dependency = 1;
  /// --prefetch of the modelled run (train_config::prefetch): the model subtracts the overlap the
  /// runtime has on the modelled machine's backend (cost_model.hpp step_total; CUDA: none yet).
  /// The measured steps here are single steps (trainer::step), always serial.
  int prefetch = 0;
  /// Per-PE feature cache (train_config::cache_policy, cache_rows: capacity in rows per PE).
  /// Its counted hits are read from the PE's device cache (HBM) in the model, its misses over
  /// PCIe (UVA) or HBM (device placement).
  cache_policy_kind cache_policy = cache_policy_kind::none;
  std::int64_t cache_rows = 0;
  /// Modelled bytes per input-feature element as stored (4 = float32; `bench modes` sets the
  /// dataset's dtype width, 2 for float16/bfloat16, unless --feature-bytes gives one). When
  /// feature_bytes_given (an override), it also scales the cooperative feature exchange
  /// (counts_of; the runtime exchanges float32 rows). The counted work
  /// (work_counters::feature_bytes) is what the runtime read.
  int feature_bytes = 4;
  bool feature_bytes_given = false;  ///< --feature-bytes was given (a modelled override)
  /// --gemm-math as given: "fp32", "tf32" or "" (each machine's gemm_math from its file); the
  /// machines are already set accordingly (apply_gemm_math), this records it.
  std::string gemm_math;
  /// The paper setting this run is one of (`--paper-settings`), e.g. "LABOR kappa 256, cache";
  /// empty for a plain run.
  std::string setting;
  std::vector<machine_model> machines;      ///< to model (load_machines); none = no model
  cost_options cost;                        ///< placement; conv and dropout are set from the run
  backend compute_backend = backend::host;  ///< cuda: every P runs on the GPUs
  int devices = 1;  ///< CUDA backend: GPUs to spread P PEs over (ceil(P / devices) per GPU)
};

/// @throws logic_error naming the option when a value is out of range (also: --batch-dependency
///         other than 1 with NS, a cache capacity without a policy, --feature-bytes < 1).
void validate(const modes_options& o);

/// One of the paper's four settings (Balin, LaSalle & Catalyurek, TMLR 2025: NS; LABOR; LABOR
/// with a feature cache; LABOR with kappa 256 and the cache), each run for both protocols.
struct paper_setting {
  std::string label;  ///< e.g. "LABOR kappa 256, cache"
  std::string tag;    ///< output file suffix, e.g. "k256-cache"
  sampler_kind sampler = sampler_kind::ns;
  std::int64_t batch_dependency = 1;
  bool cache = false;  ///< with the run's --cache-policy and capacity, else no cache
};
/// The four settings in the paper's order: NS kappa 1 no cache; LABOR kappa 1 no cache; LABOR
/// kappa 1 with cache; LABOR kappa 256 with cache.
const std::vector<paper_setting>& paper_settings();
/// `base` with setting `s` applied: sampler, batch_dependency, and (s.cache false) no cache.
modes_options with_setting(const modes_options& base, const paper_setting& s);

/// Measurements of one (mode, P). Per-batch means; see docs/results-schema.md.
struct modes_row {
  std::string mode;
  int pes = 0;
  stage_seconds seconds;               ///< max over PEs of the per-PE mean per batch
  double total_seconds = 0;            ///< the slowest PE's whole batch (wall)
  stage_seconds cpu_seconds;           ///< max over PEs of the thread CPU time per batch
  /// Summed over PEs, mean per batch: the work counters (collectives among them: every PE's
  /// collective calls) and kernel_launches (the kernels the cost model charges, model_kernels).
  std::map<std::string, double> work;
  /// Per stage, the kernels the cost model charges a launch for (model_kernels), per PE and
  /// batch: the mean over PEs. Not a runtime count.
  stage_seconds kernel_launches;
  std::map<std::pair<int, std::string>, double> traffic;  ///< (layer, direction) -> bytes/batch
  double imbalance_seeds = 1, imbalance_edges = 1, imbalance_rows = 1;  ///< max/mean over PEs
  double peak_bytes_max = 0, peak_bytes_mean = 0, staging_bytes_max = 0;
  std::int64_t batch_size = 0;  ///< the global batch this row ran
  /// Per machine (o.machines order): "modelled" seconds per batch from the counts (per stage
  /// the maximum over PEs of the per-PE mean; total = the slowest PE's sum).
  std::vector<modelled_seconds> modelled;
  std::vector<double> modelled_total;
  /// Per machine, CUDA backend only (else empty): "measured compute + modelled links".
  std::vector<modelled_seconds> measured_links;
};

struct modes_result {
  std::vector<modes_row> rows;
  double seconds = 0;  ///< wall time of the whole bench
  /// A heterogeneous dataset run with an untyped model: on the relations-merged graph.
  bool relations_merged = false;
};

using modes_progress = std::function<void(const std::string&)>;

/// Runs every (mode, P): a fresh trainer (same seed, so the same initial weights and the same
/// global batches for both modes), `warmup` then `batches` training steps on consecutive global
/// batches of the keyed epoch-1 order, collecting each PE's step trace. A heterogeneous ds runs
/// R-GCN on the typed CSC `g`; the other models need `g` to be the relations-merged untyped CSC
/// of the same edges (trainer's rule), with the same input rows (features and embeddings).
/// @throws logic_error for invalid options, a dataset the trainer rejects, or sizes beyond the
///         memory (check_run_footprint, naming the option and the bytes) before any run starts.
modes_result run_modes(const dataset& ds, const csc_graph& g, const modes_options& o,
                       const modes_progress& progress = {});

/// The training configuration of one measured run of `o`: protocol `mode` on P PEs (batch
/// o.batch_per_pe x P when given, else o.batch_size; wrap-around, one thread per PE). run_modes
/// checks every run's footprint (check_run_footprint) before the first run allocates.
train_config modes_run_config(const modes_options& o, minibatch_mode mode, int P);

/// The JSON object of docs/results-schema.md, section `modes`.
nlohmann::ordered_json modes_to_json(const result_header& h, const modes_options& o,
                                     const modes_result& r);

/// The CSV of docs/results-schema.md, section `modes`.
std::string modes_to_csv(const modes_result& r);

/// The CSV of the modelled times: one line per (mode, P, machine, kind), kind "modelled" or
/// "measured compute + modelled links" (docs/results-schema.md, section `modes`).
std::string modes_model_csv(const modes_options& o, const modes_result& r);

/// A readable console table: measured, then "modelled" and (CUDA) "measured compute + modelled
/// links" seconds per machine, each labelled.
std::string format_modes_table(const modes_options& o, const modes_result& r);

/// One finished setting of `--paper-settings`: its options and result.
struct setting_result {
  paper_setting setting;
  modes_options options;
  modes_result result;
};
/// The settings' MODELLED seconds per global batch side by side: one line per (setting, P,
/// mode) with each machine's total, the cache hit rate and the speedup of cooperative over
/// independent (independent / cooperative seconds) per machine.
std::string format_settings_table(const std::vector<setting_result>& runs);
/// The same as CSV: setting,sampler,kappa,cache_policy,cache_rows,feature_bytes,gemm_math,mode,
/// pes,batch_size,cache_hit_rate,machine,modelled_total_s,speedup (speedup on the cooperative
/// lines; empty on the independent ones).
std::string settings_csv(const std::vector<setting_result>& runs);

}  // namespace coopgnn::bench
