// Subcommands of the `coopgnn` command line, registered by tools/coopgnn/main.cpp.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/drivers/report.hpp"
#include "runtime/graph/csc.hpp"
#include "runtime/graph/dataset.hpp"
#include "runtime/graph/partition.hpp"

namespace coopgnn::cli {

/// The bundled Cora: ./data/cora when run from a checkout, else the source tree's copy
/// (tools/coopgnn/cli_util.cpp).
std::string default_dataset_dir();

/// A dataset with its CSC of in-edges, as every training and bench command needs it.
struct loaded_dataset {
  dataset ds;
  csc_graph g;
};

/// Reads the dataset directory `dir` (read_dataset; with load_features false the feature rows
/// stay in their .npy file) and builds its CSC (build_csc).
/// @throws io_error naming the file and problem, as read_dataset does.
std::unique_ptr<loaded_dataset> load_dataset(const std::string& dir, bool load_features = true);
/// Same with every read_dataset option (task, input feature, features in memory or not).
std::unique_ptr<loaded_dataset> load_dataset(const std::string& dir,
                                             const dataset_read_options& opt);

/// The CSC training uses for `ds` (build_csc: typed by relation when ds.hetero), in which a
/// repeated edge is kept once. @throws logic_error as build_csc does.
csc_graph graph_of(const dataset& ds);

/// "dataset 'X': K of its M stored edges repeat an earlier (source, destination) pair and were
/// removed; the graph trained has E edges" when data.g has fewer edges than data.ds stores,
/// else "" (said once, where the dataset is loaded).
std::string duplicate_edges_note(const loaded_dataset& data);

/// The same sentence for any command (partition, split-edges): "dataset 'X': K of its M stored
/// edges repeat an earlier (source, destination[, relation]) pair and were removed; the graph
/// WHAT has M - K edges" (`what`: "trained", "partitioned", "split"); "" when `removed` is 0.
std::string repeated_edges_note(const dataset& ds, std::int64_t removed, std::int64_t stored,
                                const std::string& what);

/// A dataset name made safe for a file name ('/', '\\', ' ', ':' become '_'; "" -> "dataset").
std::string file_stem(std::string name);

/// Adds the options every sampling bench shares: --dataset, --sampler (ns or labor; the help says
/// `sampler_help`), --fanouts (comma-separated) and --batch-size (the global batch B).
void add_sampling_bench_options(CLI::App& cmd, std::string& dataset, std::string& sampler,
                                const std::string& sampler_help, std::vector<int>& fanouts,
                                std::int64_t& batch_size);

/// A CLI11 validator (named "FINITE") refusing a number that is not finite ("inf", "nan",
/// "1e999"): CLI::ValidationError "--OPTION: value V is not a finite number" at parse time. Text
/// that is not a number passes (the option's conversion reports it).
CLI::Validator finite_number();

/// A CLI11 validator for the entries of a comma-separated list option (--fanouts): refuses an
/// empty list (--fanouts ""), which CLI11 would otherwise read as 0, with CLI::ValidationError
/// "--OPTION: an empty entry in the list: give comma-separated integers, e.g. 10,10".
CLI::Validator non_empty_entry();

/// Makes every floating-point option of `app` and of its subcommands (at any depth; CLI11 type
/// name FLOAT, vectors included) refuse a value that is not finite (finite_number), unless the
/// option checks it already (finite_number() given before its range check, so that the message
/// says "not a finite number"). Call it after every option is registered.
void require_finite_floats(CLI::App& app);

/// Registers `convert`, `generate`, `split-edges` and `info` (datasets;
/// tools/coopgnn/cmd_data.cpp).
void add_data_commands(CLI::App& app);

/// A partition's summary as JSON: edge_set, total_edges, kept_edges, kept_ratio (r),
/// distance {kind, max, mean, pairs} and per_part [{part, vertices, kept_edges, class_counts}]
/// (the keys of `coopgnn partition`'s summary.json).
nlohmann::json partition_report_json(const partition_report& rep);
/// One line naming the distance between parts (class histograms' total variation or feature
/// means' L2), or saying there is none.
std::string partition_distance_text(const partition_report& rep);

/// Registers `tma` (time-based model aggregation over MPI; tools/coopgnn/cmd_tma.cpp).
void add_tma_command(CLI::App& app);

/// Registers `partition` (RandomTMA / SuperTMA / PSGD-PA parts; tools/coopgnn/cmd_partition.cpp).
void add_partition_command(CLI::App& app);

/// Registers `train` (tools/coopgnn/cmd_train.cpp) and `compare` (tools/coopgnn/cmd_compare.cpp).
void add_train_commands(CLI::App& app);

/// Registers `embed` and `predict` (inference with a saved model; tools/coopgnn/cmd_infer.cpp).
void add_infer_commands(CLI::App& app);

/// What `train` throws after a clean stop on SIGINT/SIGTERM (the step finished, the checkpoint
/// and --metrics-out written): main prints what() and exits with signals::exit_status(signal),
/// 130 for SIGINT and 143 for SIGTERM.
class interrupted : public std::runtime_error {
 public:
  interrupted(int sig, const std::string& what) : std::runtime_error(what), signal_(sig) {}
  [[nodiscard]] int signal() const { return signal_; }

 private:
  int signal_;
};

/// Registers `bench work` under the `bench` subcommand (tools/coopgnn/cmd_bench_work.cpp).
void add_bench_work_command(CLI::App& bench);

/// Registers `bench modes` under the `bench` subcommand (tools/coopgnn/cmd_bench_modes.cpp).
void add_bench_modes_command(CLI::App& bench);

/// Registers `bench export-blocks` (tools/coopgnn/cmd_bench_modes.cpp).
void add_bench_export_command(CLI::App& bench);

/// Registers `bench cache` (tools/coopgnn/cmd_bench_cache.cpp).
void add_bench_cache_command(CLI::App& bench);

/// Registers `bench sample` (tools/coopgnn/cmd_bench_sample.cpp).
void add_bench_sample_command(CLI::App& bench);

/// Report options as the command line uses them: plots on or off, tools/plot_results.py of the
/// checkout in the working directory (else of the source tree), COOPGNN_PYTHON tried first.
bench::report_options report_options_for_cli(bool plots);

/// Registers `report RESULTS_DIR` (tools/coopgnn/cmd_report.cpp).
void add_report_command(CLI::App& app);

}  // namespace coopgnn::cli
