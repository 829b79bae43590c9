// Configuration and per-epoch measurements of training (docs/design.md section 6).
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "cache/policy.hpp"
#include "cache/storage.hpp"
#include "kernels/sample/sample.hpp"
#include "models/layers.hpp"
#include "models/link_layers.hpp"
#include "runtime/comm/device_comm.hpp"
#include "runtime/core/types.hpp"

namespace coopgnn {

/// The two minibatch protocols of docs/design.md section 6.
enum class minibatch_mode { independent, cooperative };

/// What a run trains (docs/design.md sections 6 and 7).
enum class task_kind {
  node_classification,  ///< softmax cross-entropy on labelled seed vertices
  link_prediction,      ///< binary cross-entropy on positive edges and tail-corrupted negatives
};
std::string to_string(
    task_kind t);  ///< "node_classification" / "link_prediction" (GraphBolt's names)

/// Link prediction: which edges of the minibatch's own positives are removed from message
/// passing (DGL's `exclude` of as_edge_prediction_sampler: None, "self", "reverse_id").
enum class exclude_kind {
  none,     ///< keep them (DGL's default)
  self,     ///< drop u -> v for every positive (u, v) of the global batch
  reverse,  ///< drop u -> v and v -> u
};
std::string to_string(exclude_kind e);
/// Parses "none", "self" or "reverse". @throws logic_error naming --exclude otherwise.
exclude_kind parse_exclude_kind(const std::string& name);

/// Parses "independent" or "cooperative". @throws logic_error otherwise.
minibatch_mode parse_mode(const std::string& name);
std::string to_string(minibatch_mode m);

/// Parses `--backend`: "host", "cuda", "emulated" (the test-only emulated device of
/// runtime/core/types.hpp), or "auto" (cuda when this build has CUDA and `cuda_devices` > 0, else
/// host).
/// @throws logic_error naming --backend for another name, or for "cuda" in a build without CUDA
///         or with no device (the message gives `no_device_reason`).
backend resolve_backend(const std::string& name, int cuda_devices,
                        const std::string& no_device_reason);

/// The arithmetic of the model's dense GEMMs (--gemm-math): fp32 (IEEE single precision), or
/// tf32 (cuBLAS CUBLAS_TF32_TENSOR_OP_MATH on the CUDA backend: inputs rounded to TF32's 10-bit
/// mantissa on the Tensor Cores, FP32 accumulation; the host backend keeps FP32).
enum class gemm_math { fp32, tf32 };
std::string to_string(gemm_math m);  ///< "fp32" / "tf32"
/// Parses "fp32" or "tf32". @throws logic_error naming --gemm-math otherwise.
gemm_math parse_gemm_math(const std::string& name);

/// Which epoch a run reports and saves (--select-best): `val`, the evaluated epoch of highest
/// validation metric (the earlier epoch on ties; PyG's and OGB's examples, Velickovic et al. 2018
/// section 3.3), or `last`, the last epoch.
enum class select_best_kind { val, last };
std::string to_string(select_best_kind k);  ///< "val" / "last"
/// Parses "val" or "last". @throws logic_error naming --select-best otherwise.
select_best_kind parse_select_best(const std::string& name);

/// Everything that decides a training run. Defaults are what `coopgnn train` uses.
struct train_config {
  minibatch_mode mode = minibatch_mode::cooperative;
  int num_pes = 4;                          ///< P: PE threads
  backend compute_backend = backend::host;  ///< where sampling-after, loading, the model and the
                                            ///< exchanges run (see trainer.hpp)
  int pes_per_gpu = 1;  ///< CUDA backend: PE p runs on device devices[p / pes_per_gpu]
  /// CUDA backend: the device ordinals (this process's numbering, after CUDA_VISIBLE_DEVICES)
  /// the PEs run on, K = pes_per_gpu PEs each: PE p on devices[p / K]. Empty = 0, 1, 2, ...
  /// (PE p on device p / K; `coopgnn train`). Otherwise exactly ceil(num_pes / K) distinct
  /// visible devices (trainer checks; `coopgnn tma` sets it per rank, choose_rank_devices).
  std::vector<int> devices;
  device_comm_choice device_comm =
      device_comm_choice::automatic;  ///< CUDA backend (device_comm.hpp)
  bool sample_on_device = true;       ///< CUDA backend: sample on the GPU (else on the host)
  models::conv_kind model = models::conv_kind::sage;
  std::int64_t hidden = 64;  ///< hidden width (GAT: per head)
  /// GAT (model gat): heads of the hidden layers (concatenated), of the output layer (averaged),
  /// attention dropout, LeakyReLU slope and the residual projection (models::gat_options).
  std::int64_t heads = 1;
  std::int64_t out_heads = 1;
  float attn_dropout = 0.0f;
  float negative_slope = 0.2f;
  bool residual = false;
  /// R-GCN (model rgcn): B bases of the relation weights (0 = a full W_r per relation).
  std::int64_t num_bases = 0;
  /// R-GCN: B diagonal blocks of every relation weight (eq. 4; 0 = none; excludes num_bases).
  std::int64_t num_blocks = 0;
  bool linear_head = false;             ///< add a linear head after the last conv layer
  std::vector<int> fanouts = {10, 10};  ///< one per layer, l = 0 next to the seeds; -1 = all
  /// Typed graphs: [L * R] fanout of relation r at layer l (entry l * R + r; -1 all, 0 none);
  /// empty = fanouts[l] for every relation (--relation-fanout, resolve_relation_fanouts).
  std::vector<int> relation_fanouts;
  sampler_kind sampler = sampler_kind::ns;
  std::int64_t batch_dependency = 1;  ///< LABOR kappa: 1 = independent batches, 0 = never refresh
  bool layer_dependency = false;      ///< LABOR: every layer uses the same variates
  cache_policy_kind cache_policy = cache_policy_kind::none;  ///< per-PE feature cache
  std::optional<storage_tier> feature_storage;  ///< tier of the feature table; empty = by size
                                                ///< (choose_storage_tier, cache/storage.hpp)
  std::int64_t cache_rows = 0;                  ///< cache capacity per PE, rows
  std::int64_t batch_size = 1024;               ///< global batch size B (all PEs together)
  /// The epoch's tail when B does not divide |train| (epoch_batch_count and epoch_batch of
  /// trainer.hpp): by default ceil(|train| / B) batches, the last one short (DGL's and PyG's
  /// loaders); drop_last: floor(|train| / B) full batches, the remainder untrained that epoch
  /// (--drop-last); wrap_around: ceil(|train| / B) batches of min(B, |train|) items each, the
  /// last filled from the start of the epoch's order (internal: the benchmarks that need full
  /// batches, and any batch index past the epoch's). At most one of the two.
  bool drop_last = false;
  bool wrap_around = false;
  int epochs = 100;
  float lr = 0.01f;
  float weight_decay = 5e-4f;
  /// Weight decay on layer 0 only (conv 0 and its norm; Kipf & Welling, ICLR 2017, section 5.3;
  /// PyG's examples/gcn.py) instead of every model parameter.
  bool weight_decay_first_layer = false;
  /// L2 decay of the learnable input embedding rows (embedding_dim > 0; coupled, on the rows a
  /// step touches), separate from weight_decay: 0 by default, as DGL's and PyG's sparse
  /// embeddings are not decayed (--embedding-weight-decay).
  float embedding_weight_decay = 0.0f;
  float dropout = 0.5f;
  std::uint64_t seed = 0;
  int eval_every = 1;  ///< evaluate every N epochs (and after the last)
  /// The epoch the run's summary, its selection record and --save-model take (model_selector,
  /// pipeline/selection.hpp). Changes no per-epoch number.
  select_best_kind select_best = select_best_kind::val;
  /// Host threads per PE for BLAS and the parallel host kernels (the PE's exec_context
  /// threads()); 0 = auto, max(1, hardware threads / num_pes) (pe_thread_budget). Results do not
  /// depend on it.
  int threads_per_pe = 0;
  /// Host threads per PE used by the sampler; 0 = the PE's thread budget (sampler_threads).
  int sample_threads = 0;
  /// --prefetch: batches a PE prepares (seeds, sampling, feature loading) ahead of the one it
  /// computes, on a prefetch thread with its own communicator (docs/design.md section 6.7);
  /// 0 = serial. Results do not depend on it. On CUDA the prefetch thread works on a context of
  /// its own (streams, pool, a peer-copy communicator) and hands batches over with events.
  int prefetch = 0;
  /// --peer-timeout: seconds a PE waits for its peers in one collective before the run fails
  /// naming the collective and the missing PEs (every communicator; tma: every MPI wait);
  /// 0 = wait forever. A peer that throws stops the others at once, whatever this is.
  double comm_timeout_s = 300;

  task_kind task = task_kind::node_classification;
  /// Node classification: score validation and test by Macro-F1 (--metric macro_f1) instead of
  /// accuracy (ROC-AUC for two classes).
  bool macro_f1 = false;
  /// Hidden conv layers: LayerNorm before the activation, and the activation (both tasks).
  bool layer_norm = false;
  models::activation_kind activation = models::activation_kind::relu;
  /// Learnable input embeddings of this width instead of the dataset's features (0 = use the
  /// features; required > 0 when the dataset has none).
  std::int64_t embedding_dim = 0;
  // Link prediction (task_kind::link_prediction):
  models::decoder_kind decoder = models::decoder_kind::dot;
  std::int64_t decoder_hidden = 0;  ///< mlp decoder width; 0 = hidden
  std::int64_t out_dim = 0;         ///< the encoder's output (embedding) width; 0 = hidden
  int negatives = 1;                ///< k tail-corrupted negatives per positive
  exclude_kind exclude = exclude_kind::none;  ///< target edges removed from message passing
  int topk = 20;                              ///< K of Recall@K / NDCG@K on user-item data
  /// --profile-steps A:B: run_epoch calls profile_hook(true) before global step A and
  /// profile_hook(false) after global step B (nvtx::profile_window; -1 = no window). An empty
  /// hook is cudaProfilerStart/Stop on the CUDA backend and nothing on the others.
  std::int64_t profile_first = -1;
  std::int64_t profile_last = -1;
  std::function<void(bool)> profile_hook;
  /// The model's dense GEMMs: FP32, or TF32 Tensor Core math on the CUDA backend.
  gemm_math gemm = gemm_math::fp32;
};

/// One option of train_config as the command line, the checks, checkpoints, saved models and
/// the TMA ranks' fingerprint see it: the one declaration of that option (train_option_table).
/// A command registers it on its parser (tools/coopgnn/train_options.hpp, add_table_option), the
/// run checks it (validate_train_config) and, when it changes the arithmetic, records it
/// (arithmetic_options: run_identity, the ranks' fingerprint).
/// The commands that register the option table, as bits of option_decl::commands.
namespace option_commands {
inline constexpr unsigned train = 1U, compare = 2U, tma = 4U;
inline constexpr unsigned all = train | compare | tma;
}  // namespace option_commands

struct option_decl {
  /// A train_config member holding the value as the option gives it.
  using member = std::variant<int train_config::*, std::int64_t train_config::*,
                              std::uint64_t train_config::*, float train_config::*,
                              double train_config::*, bool train_config::*,
                              std::vector<int> train_config::*>;
  /// A value given by name (an enum of train_config): its names and how to read and set it.
  struct named {
    std::string (*get)(const train_config&);
    void (*set)(train_config&, const std::string&);  ///< throws logic_error for a bad name
    std::vector<std::string> choices;
  };
  std::string name;  ///< the command-line name, "--weight-decay"
  std::string help;
  std::variant<member, named> value;
  /// Whether it changes the numbers a run computes: then it is part of a checkpoint's and a
  /// saved model's identity and of the TMA ranks' fingerprint.
  bool changes_arithmetic = false;
  bool flag = false;  ///< a bool given as a flag (--residual), not as true/false (--layer-norm)
  /// Numbers (each element of a vector): the closed or open range of valid values.
  double lo = -std::numeric_limits<double>::infinity();
  double hi = std::numeric_limits<double>::infinity();
  bool lo_open = false, hi_open = false;
  /// When it is recorded (arithmetic options): nullptr = always; else only where this is true
  /// (GAT's options for GAT runs, --drop-last when set, ...), so that records of runs without
  /// it stay comparable.
  bool (*recorded)(const train_config&) = nullptr;
  /// The commands that take it (option_commands bits). The others leave it out of their --help
  /// and refuse it with an error ending in `refused_because`.
  unsigned commands = option_commands::all;
  /// Why the commands outside `commands` refuse it (one clause, no final full stop).
  std::string refused_because;
};

/// The option table: every option of train_config that `train`, `compare`, `tma` and (a subset)
/// `bench modes` take, in help order. Adding a hyperparameter adds its train_config member and
/// one entry here. Does not throw.
const std::vector<option_decl>& train_option_table();
/// The entry named `name` ("--hidden"). @throws logic_error for a name the table lacks.
const option_decl& train_option(std::string_view name);
/// "" when `v` lies in d's range, else "value V is outside [LO, HI)" (brackets by openness).
std::string option_range_error(const option_decl& d, double v);
/// d's value in `c` as JSON: a number, a bool, an integer array or (named values) the name.
nlohmann::json option_value(const option_decl& d, const train_config& c);
/// The arithmetic options of `c` that are recorded for it, keyed by name: what a checkpoint, a
/// saved model and the TMA fingerprint hold of the options. Does not throw beyond bad_alloc.
nlohmann::json arithmetic_options(const train_config& c);
/// Runs every table entry's range check on `c` and the rules between options: LABOR's
/// --batch-dependency/--layer-dependency need --sampler labor; --num-bases/--num-blocks are
/// R-GCN's and exclude each other; --metric macro_f1 scores node classification.
/// @throws logic_error naming the option (and value) of the first violation.
void validate_train_config(const train_config& c);
/// The rule that --batch-dependency K != 1 and --layer-dependency are LABOR's.
/// @throws logic_error naming both options and --sampler labor.
void check_labor_dependency(sampler_kind sampler, std::int64_t kappa, bool layer_dependency);

/// A named set of option values (--preset NAME) that `train`, `compare`, `tma` and `bench modes`
/// take: each value applies unless the option is given on the command line too (the given value
/// wins, wherever it stands), and the command prints what the preset set.
struct option_preset {
  std::string name;  ///< "coop-paper"
  std::string help;  ///< one line: whose configuration it is
  /// Table options and their values as the command line writes them ("--fanouts", "10,10,10").
  std::vector<std::pair<std::string, std::string>> values;
  /// Applied on heterogeneous datasets only, after `values` ("--model", "rgcn").
  std::vector<std::pair<std::string, std::string>> typed_values;
  /// Seeds per PE: the global --batch-size becomes this times the PE count (bench modes:
  /// --batch-per-pe); 0 = the preset leaves the batch alone.
  std::int64_t seeds_per_pe = 0;
};

/// Every preset, by name. coop-paper is the configuration of the cooperative minibatching
/// paper's scripts (Balin et al., "Cooperative Minibatching in Graph Neural Networks"): 3 layers
/// of fanout 10, hidden 1024, dropout 0.5, Adam lr 1e-3, TF32 GEMMs, 1024 seeds per GPU,
/// GraphSAGE-mean; R-GCN with 2 bases on heterogeneous datasets. Does not throw.
const std::vector<option_preset>& option_presets();
/// The preset named `name`. @throws logic_error naming --preset, the value and the presets.
const option_preset& option_preset_named(std::string_view name);
/// Sets table option `d` of `c` from `text` as the command line gives it (a number, true/false
/// for a non-flag bool, "1" / "true" for a flag, comma-separated integers for a list, a choice's
/// name), then checks d's range.
/// @throws logic_error "OPTION: 'TEXT' is not ..." for text that does not parse, or the range
///         error (option_range_error).
void set_option_text(const option_decl& d, train_config& c, std::string_view text);

/// Work of one PE (or summed over PEs) in a batch or an epoch (docs/design.md section 6.5,
/// "Work accounting"). Counts, not bytes, unless the name says bytes.
struct work_counters {
  std::int64_t seeds = 0;             ///< output vertices whose loss this PE computes
  std::int64_t sampled_edges = 0;     ///< edges of all sampled blocks
  std::int64_t sampled_vertices = 0;  ///< sum over layers of the vertices of layer l + 1
  std::int64_t feature_rows = 0;      ///< input feature rows loaded from storage
  std::int64_t feature_bytes = 0;     ///< their bytes as stored: rows x F x 4 for float32
                                      ///< tables and embeddings, x 2 for float16 / bfloat16
  std::int64_t alltoall_bytes = 0;    ///< bytes sent to other PEs by all-to-alls
  std::int64_t alltoall_calls = 0;    ///< all-to-all-v calls (0 with one PE: exchanges skipped)
  /// Collective operations of the step on groups of more than one PE (comm_stats::collectives):
  /// the counts exchange of each id exchange (a call of its own, or carried with the ids), every
  /// all-to-all-v, the all-reduces of the gradients and the loss, broadcasts and barriers; 0
  /// with one PE.
  std::int64_t collectives = 0;
  /// Collective calls of the step (comm_stats::calls): each pays a collective's fixed cost; a
  /// counts exchange that rides with its ids (alltoallv_with_counts) is in `collectives` but
  /// makes no call of its own. 0 with one PE.
  std::int64_t collective_calls = 0;
  /// Counts exchanges made as calls of their own (comm_stats::count_exchanges); 0 with one PE.
  std::int64_t count_exchanges = 0;
  /// Kernel entry calls on the PE's contexts (exec_context::kernel_calls): sampling, loading,
  /// the model, the exchanges' gathers and the optimizer.
  std::int64_t kernel_calls = 0;
  std::int64_t allreduce_bytes = 0;   ///< gradient bytes contributed to all-reduces
  std::int64_t cache_hits = 0;        ///< feature rows served by the PE's cache
  std::int64_t cache_misses = 0;      ///< feature rows read from storage
  /// Heterogeneous graphs (empty otherwise): input rows loaded per node type [T] (the
  /// feature_rows by type) and sampled edges per relation [R] (sampled_edges by relation).
  std::vector<std::int64_t> rows_per_type;
  std::vector<std::int64_t> edges_per_relation;

  work_counters& operator+=(const work_counters& o);
};

/// Seconds per pipeline stage: measured wall time, or modelled (bench/drivers/cost_model.hpp).
/// `communication` is all the time inside collectives; `communication_wait` is the part of it
/// spent waiting at meetings for the last PE to arrive (comm_stats::wait_seconds), so the
/// transfer is communication - communication_wait. The wait is not a stage of its own: total()
/// counts it once, inside `communication`. Modelled seconds leave it 0.
struct stage_seconds {
  double sample = 0, feature_load = 0, forward = 0, backward = 0, communication = 0, optimizer = 0;
  double communication_wait = 0;  ///< the waiting part of `communication`, seconds
  stage_seconds& max_with(const stage_seconds& o);  ///< per field, the wait's too
  stage_seconds& operator+=(const stage_seconds& o);
  stage_seconds& operator/=(double n);  ///< every field divided by n (n != 0)
  /// The sum of the stages (communication_wait is inside communication).
  [[nodiscard]] double total() const {
    return sample + feature_load + forward + backward + communication + optimizer;
  }
};

/// The epoch a run selected (--select-best) and its metrics: a run's result (the totals
/// run_training returns carry it), its summary line and its `--metrics-out` selection record
/// (report.hpp: selection_json).
struct model_selection {
  select_best_kind rule = select_best_kind::val;
  int epoch = 0;  ///< 1-based; 0: no epoch selected (nothing trained)
  int epochs = 0;  ///< the run's last epoch when selecting (the candidates were epochs <= it)
  std::string metric_name;  ///< the selection metric (epoch_report::metric_name)
  double val_metric = 0;    ///< the selected epoch's validation metric (NaN when not evaluated)
  double test_metric = 0;   ///< its test metric
  std::vector<std::pair<std::string, double>> val_metrics, test_metrics;  ///< every metric
  /// Why this epoch when the rule could not apply as stated ("" otherwise): no evaluated epoch
  /// had a validation metric, or the selection started after a resume (a checkpoint without the
  /// selection state).
  std::string note;
};

/// What one epoch produced, for printing and for --metrics-out.
struct epoch_report {
  std::string mode;
  std::string backend = "host";  ///< "host" or "cuda"
  int pes = 0;
  int epoch = 0;          ///< 1-based
  double train_loss = 0;  ///< mean over batches of the global-batch mean loss
  double val_metric = 0;  ///< NaN when not evaluated this epoch
  double test_metric = 0;
  std::string metric_name;  ///< the model-selection metric: "accuracy", "roc_auc", "mrr",
                            ///< "recall@20"
  std::string task = "node_classification";  ///< to_string(task_kind)
  /// Every metric evaluated this epoch (name, value): the link-prediction metrics (mrr, mrr_ogb,
  /// hits@1/10/50, roc_auc, average_precision, recall@K, ndcg@K) where they apply; empty when
  /// not evaluated.
  std::vector<std::pair<std::string, double>> val_metrics, test_metrics;
  stage_seconds seconds;     ///< per stage: the maximum over PEs of the epoch's total
  /// Per stage, the maximum over PEs of the PE thread's CPU time in the epoch
  /// (CLOCK_THREAD_CPUTIME_ID): each stage's own, without its collectives, whose CPU time is
  /// `communication` (copies, reductions, enqueueing, polling; waiting uses none). Under more PE
  /// threads than cores, wall seconds include time a thread waited for a core; these do not.
  /// communication_wait stays 0 here.
  stage_seconds cpu_seconds;
  /// Whether seconds.communication_wait is measured: false when a PE's communicator cannot
  /// tell waiting from transfer (NCCL, communicator::measures_wait); the wait is then reported
  /// as unmeasured (null in JSON, "n/a" in the epoch line), never as 0.
  bool communication_wait_measured = true;
  double epoch_seconds = 0;  ///< wall time of the training part of the epoch
  double eval_seconds = 0;   ///< wall time of evaluation
  work_counters work;        ///< summed over PEs and batches
  /// Heterogeneous graphs: the names behind work.rows_per_type and work.edges_per_relation.
  std::vector<std::string> node_types, relations;
  std::int64_t batches = 0;
  /// CUDA backend: each PE's peak device memory in the epoch, bytes (its pool's high
  /// watermark: replicas, optimizer state, graph copy, minibatches, all-to-all staging); empty
  /// on the host and emulated backends.
  std::vector<std::int64_t> peak_device_bytes;
  /// The process's peak resident memory (VmHWM) and current one (VmRSS) at the end of the epoch
  /// (after its evaluation), bytes; -1 where /proc/self/status is unavailable.
  std::int64_t peak_rss_bytes = -1;
  std::int64_t rss_bytes = -1;
  /// A run's totals (run_training): the epoch --select-best chose; epoch 0 (none) in the
  /// per-epoch reports.
  model_selection selected;
};

/// The host thread budget of one PE: c.threads_per_pe when > 0, else (auto) max(1, hardware
/// threads / c.num_pes), hardware threads from std::thread::hardware_concurrency() (1 when it
/// reports 0). @throws logic_error naming --threads-per-pe when it is negative, or --pes when
/// num_pes < 1.
int pe_thread_budget(const train_config& c);

/// The sampler's threads per PE: c.sample_threads when > 0, else pe_thread_budget(c).
/// @throws logic_error naming --sample-threads when it is negative.
int sampler_threads(const train_config& c);

}  // namespace coopgnn
