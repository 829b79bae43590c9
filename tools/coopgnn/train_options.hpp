// The options `train`, `compare` and `tma` share (tools/coopgnn/cmd_train.cpp).
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <string>
#include <vector>

#include "runtime/pipeline/config.hpp"
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
  /// The dataset's content fingerprint (dataset_fingerprint), computed once by load().
  std::string dataset_content;
  int pes = -1;  ///< -1: not given (the backend's default); given values must be >= 1 (4 host PEs,
                 ///< or one per GPU x --pes-per-gpu)
  train_config cfg;
};

/// Registers the option table's entry `d` on `cmd`, bound to its member of `cfg` (named values
/// through d's setter): CLI11 option or flag with d's help, d's range as a validator (and
/// finite_number() for floats), choices as CLI::IsMember, and cfg's current value as the shown
/// default. `cfg` must outlive parsing. Returns the option, for a command's own additions.
CLI::Option* add_table_option(CLI::App& cmd, const option_decl& d, train_config& cfg);
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

}  // namespace coopgnn::cli
