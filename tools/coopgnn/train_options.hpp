// The options `train`, `compare` and `tma` share (tools/coopgnn/cmd_train.cpp).
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "pipeline/config.hpp"
#include "pipeline/report.hpp"
#include "tools/coopgnn/commands.hpp"

namespace coopgnn::cli {

/// Everything the training commands read from the command line.
struct train_options {
  std::string dataset;
  std::string mode = "cooperative";
  /// --relation-fanout REL=K0,K1,... (typed graphs; resolve_relation_fanouts into cfg)
  std::vector<std::string> relation_fanout;
  std::string metrics_out;
  bool append_metrics = false;  ///< --append-metrics: add lines to a non-empty --metrics-out
  std::string run_id;           ///< this invocation's make_run_id, on every metrics line
  bool no_progress = false;
  double cache_fraction = -1;  ///< < 0: use --cache-rows
  bool quiet = false;
  std::string backend = "auto";
  std::string threads_per_pe = "auto";  ///< --threads-per-pe N|auto, into cfg.threads_per_pe
  std::string sample_on = "device";
  // Names as given on the command line; parsed once into cfg's types (parse_typed_options). The
  // options of train_config itself are the option table's (train_option_table), bound to cfg.
  std::string cache_policy = "none";
  std::string feature_storage = "auto";
  std::string device_comm = "auto";
  std::string task = "auto";  ///< a task name of metadata.yaml, a task kind, or auto
  std::string feature;        ///< input node feature name; "" = feat (dataset_read_options)
  std::string normalize_features = "none";  ///< none or row (normalize_feature_rows)
  bool allow_nonfinite = false;  ///< skip the NaN/Inf check of the feature table
  bool dry_run = false;          ///< train: print the resolved run and its memory estimate, stop
  // `train` only (README "Checkpoints and interrupts"):
  std::string checkpoint;              ///< --checkpoint DIR ("" = none; --resume DIR implies it)
  int checkpoint_every = 1;            ///< --checkpoint-every N epochs (and always after the last)
  std::string resume;                  ///< --resume DIR: continue the run checkpointed there
  bool overwrite_checkpoints = false;  ///< --overwrite-checkpoints: replace another run's
  std::string save_model;  ///< --save-model DIR: the trained model for `embed` / `predict`
  /// The dataset's content fingerprint (dataset_fingerprint), computed once by load() when the
  /// run records or compares it (--checkpoint, --resume, --save-model, record_content); "" else.
  std::string dataset_content;
  /// Whether load() computes dataset_content whatever the options (tma: the ranks compare it).
  bool record_content = false;
  /// --preset NAME ("" = none; option_presets), the preset's options given on the command line
  /// too (they keep the given value), and what the preset set ("--hidden 1024", ...), printed
  /// by load().
  std::string preset;
  std::vector<std::string> preset_given;
  std::vector<std::string> preset_set;
  int pes = -1;  ///< -1: not given (the backend's default); given values must be >= 1 (4 host PEs,
                 ///< or one per GPU x --pes-per-gpu)
  train_config cfg;
  /// Whether run_training prints each epoch's line (unless --quiet); compare without --verbose
  /// does not.
  bool epoch_lines = true;
  /// When set, run_training calls it after each batch with (epoch, batches done in the epoch,
  /// batches per epoch), besides its per-epoch progress (compare's bar over the whole run).
  std::function<void(int, std::int64_t, std::int64_t)> on_batch;
};

/// Registers the option table's entry `d` on `cmd`, bound to its member of `cfg` (named values
/// through d's setter): CLI11 option or flag with d's help, d's range as a validator (and
/// finite_number() for floats), choices as CLI::IsMember, and cfg's current value as the shown
/// default. `cfg` must outlive parsing. Returns the option, for a command's own additions.
CLI::Option* add_table_option(CLI::App& cmd, const option_decl& d, train_config& cfg);
/// The options among preset `p`'s (values, typed_values and, when p sets the batch,
/// `batch_option`) that were given on `cmd`'s command line.
std::vector<std::string> preset_options_given(const CLI::App& cmd, const option_preset& p,
                                              const std::string& batch_option);
/// Sets each (table option, value) of `values` in `cfg` (set_option_text) unless its name is in
/// `given`; returns "--name value" for each one set, in order.
/// @throws logic_error from set_option_text.
std::vector<std::string> apply_preset_values(
    const std::vector<std::pair<std::string, std::string>>& values,
    const std::vector<std::string>& given, train_config& cfg);
/// Heterogeneous datasets: p.typed_values as apply_preset_values, each replacing in `set` the
/// entry of the same option (--model sage becomes --model rgcn).
void apply_typed_preset_values(const option_preset& p, const std::vector<std::string>& given,
                               train_config& cfg, std::vector<std::string>& set);
/// The line a command prints for preset `name`: "preset NAME sets: ...[; given, kept: ...]".
std::string preset_line(const std::string& name, const std::vector<std::string>& set,
                        const std::vector<std::string>& given);
/// Registers the model, sampling, cache, backend and optimizer options on `cmd` into `o`: every
/// entry of the option table (into o.cfg) and the tool-level options.
void add_common_options(CLI::App* cmd, train_options& o);
/// Registers the per-PE feature cache's options into `policy` (--cache-policy: none, lru, clock,
/// sieve, s3fifo or setassoc), `fraction` (--cache-fraction F: capacity as a fraction of |V|;
/// < 0 = not given) and `rows` (--cache-rows N: capacity in rows per PE): shared by `train`,
/// `compare`, `tma` and `bench modes`.
void add_cache_options(CLI::App& cmd, std::string& policy, double& fraction, std::int64_t& rows);
/// The cache capacity per PE in rows: floor(fraction |V|) when fraction >= 0, else `rows`.
/// @throws logic_error naming --cache-fraction outside [0, 1], a negative --cache-rows, or a
///         capacity > 0 with policy "none".
std::int64_t resolve_cache_rows(const std::string& policy, double fraction, std::int64_t rows,
                                std::int64_t num_nodes);
/// The option names into train_config's types (each parsed once).
/// @throws logic_error naming the option for an unknown name.
void parse_typed_options(train_options& o);
/// What `train --task TASK` trains on `ds` (read with dataset_read_options::task = TASK):
/// with "auto", the node-classification task (labels of >= 2 classes) or the link-prediction
/// task, whichever comes first in metadata.yaml when both were read; otherwise the one task
/// read_dataset read. @throws logic_error when ds has no trainable task (naming --task).
task_kind chosen_task(const dataset& ds, const std::string& task);
/// The [L * R] per-relation fanouts of a typed dataset from `specs` ("REL=K0,K1,...,K{L-1}",
/// REL an edge type "src:relation:dst" or a relation name that only one edge type has): every
/// relation starts at fanouts[l], each spec overrides its relation's L values. Empty specs give
/// an empty vector (fanouts[l] for every relation).
/// @throws logic_error naming --relation-fanout for specs on an untyped dataset, an unknown or
///         ambiguous relation, a relation given twice, a count other than L, or a fanout < -1.
std::vector<int> resolve_relation_fanouts(const std::vector<std::string>& specs, const dataset& ds,
                                          const std::vector<int>& fanouts);
/// --task into o.cfg.task from what the dataset holds (auto: the first task of metadata.yaml
/// that the dataset can train; a named task: its kind). @throws logic_error when the dataset
/// cannot serve the task.
void resolve_task(train_options& o, const dataset& ds);
/// Throws io_error naming the file, row and column of the first NaN or Inf of ds's feature table
/// (in memory only; features left in their file are not scanned).
void check_finite_features(const dataset& ds, const std::string& dir);
/// Parses the typed options, reads --dataset (the bundled Cora when empty), applies
/// --cache-fraction and resolves the task; prints the dataset line unless --quiet. An untyped
/// graph's edges go from their file straight into the CSC (ds.src / dst stay empty) unless
/// `edge_list` (the caller needs the list itself, as `tma` does to partition it).
/// @throws io_error naming the file, logic_error naming the option.
std::unique_ptr<loaded_dataset> load(train_options& o, bool edge_list = false);
/// Resolves --backend and the PE count (--pes, --pes-per-gpu) into o.cfg.
void resolve_pes(train_options& o);

/// Trains one configuration for o.cfg.epochs epochs (from a checkpoint with --resume, saving
/// them with --checkpoint, stopping cleanly on SIGINT/SIGTERM when `stoppable`), printing the
/// run's header, progress and epoch lines as `o` says and appending each epoch to `jsonl` (none
/// when nullptr); returns (last epoch, totals over epochs); the totals' `selected` is the
/// epoch --select-best chose, whose selection record ends the run's --metrics-out lines and whose
/// parameters --save-model writes. tools/coopgnn/cmd_train.cpp.
/// @throws interrupted after a clean stop; io_error / logic_error naming the option or file.
std::pair<epoch_report, epoch_report> run_training(const loaded_dataset& data, train_options& o,
                                                   line_appender* jsonl, bool stoppable = false);
/// Probes every output path of a run before the dataset is read (check_writable_dir /
/// check_writable_file): --save-model DIR and --metrics-out FILE (--checkpoint DIR is probed by
/// its lock file). @throws io_error naming the option and the path.
void check_run_outputs(const train_options& o);
/// Opens --metrics-out for appending (nullptr without one) and draws the run's run_id into
/// o.run_id; prints both unless --quiet. @throws io_error naming --metrics-out.
std::unique_ptr<line_appender> open_metrics(train_options& o);
/// Registers `compare` (tools/coopgnn/cmd_compare.cpp); add_train_commands calls it.
void add_compare_command(CLI::App& app);

/// An option a command registers (add_common_options) but does not take, and why.
struct refused_option {
  std::string name;  ///< "--epochs"
  std::string why;   ///< one clause, the end of the error message
};
/// Scopes the options add_common_options put on `cmd` to the command `command` (an
/// option_commands bit; `cmd`'s name is the command's): every table entry whose
/// option_decl::commands lacks it, and every option of `tool_level`, leaves `cmd`'s --help (it
/// stays registered, so that giving it is refused with its reason rather than with CLI11's
/// "not expected"). Returns them all, for check_refused_options. Call after add_common_options.
std::vector<refused_option> hide_refused_options(CLI::App& cmd, unsigned command,
                                                 std::vector<refused_option> tool_level);
/// @throws logic_error "NAME does not apply to coopgnn CMD: WHY" for the first of `refused` that
///         `cmd`'s command line gave. Call from the command's callback, before any work.
void check_refused_options(const CLI::App& cmd, const std::vector<refused_option>& refused);

}  // namespace coopgnn::cli
