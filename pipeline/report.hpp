// Machine-readable and human-readable forms of epoch reports (`--metrics-out`, console tables).
#pragma once

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "pipeline/config.hpp"

namespace coopgnn {

/// One JSON object per epoch and mode: mode, pes, epoch, train_loss, val_metric, test_metric,
/// metric_name, task ("node_classification" / "link_prediction"), metrics {val: {name: value},
/// test: {...}} (link prediction: every metric evaluated; absent when none), seconds {sample,
/// feature_load, forward, backward, communication, optimizer, epoch, eval}, work {seeds,
/// sampled_edges, sampled_vertices, feature_rows, feature_bytes, alltoall_bytes, allreduce_bytes,
/// alltoall_calls, collectives, collective_calls, count_exchanges, kernel_calls} (summed over PEs
/// and batches; the last five are counts of calls and operations, work_counters documents each),
/// cache {hits, misses, miss_rate} (summed over PEs; without a cache
/// every row is a miss), batches. NaN metrics (not evaluated) are written as null.
nlohmann::json to_json(const epoch_report& r);

/// The `--metrics-out` selection record of a run (written once, after its last epoch record):
/// record "selection", select_best ("val" / "last"), selected_epoch (1-based), epochs (the run's
/// last epoch), metric_name, task, val_metric and test_metric of the selected epoch, metrics
/// {val: {name: value}, test: {...}} (every metric of that epoch; absent when none), and note
/// (why the rule could not apply as stated; absent when empty). It has no "epoch" key, so
/// readers of the per-epoch records skip it by that, or by "record". NaN metrics are null.
nlohmann::json selection_json(const model_selection& s, const std::string& task);

/// One console line for a run's selection: "selected epoch E of N (best val METRIC): val METRIC
/// V  test METRIC T" (rule val), "selected epoch N (the last): ..." (rule last), then the other
/// test metrics and the note.
std::string format_selection(const model_selection& s);

/// A run's identifier for its --metrics-out lines: the UTC start time and 64 random bits
/// (std::random_device), "YYYYMMDDTHHMMSSZ-xxxxxxxxxxxxxxxx" (16 lower-case hex digits), so that
/// lines of several runs in one file are told apart and sort by start. Does not throw beyond
/// std::bad_alloc (a random_device that fails falls back to the clock and process id).
std::string make_run_id(std::chrono::system_clock::time_point start);

/// `v` as a JSON number, or null when it is NaN or infinite (JSON has neither).
nlohmann::json number_or_null(double v);

/// One console line: epoch, loss, metrics, stage times and work.
std::string format_epoch_line(const epoch_report& r);

/// Where the runs of a comparison ran and what they were configured with: what the table's
/// rows and its legend (format_comparison_legend) need beyond the reports.
struct comparison_setting {
  bool cache = false;            ///< a feature cache was configured (--cache-policy != none)
  int hardware_threads = 1;      ///< std::thread::hardware_concurrency() (1 when it says 0)
  int threads_per_pe = 1;        ///< pe_thread_budget: host threads of each PE
  int gpus = 0;                  ///< CUDA backend: the GPUs the PEs ran on
  std::int64_t batch_size = 0;   ///< --batch-size B (seeds, or positive pairs, per global batch)
  std::int64_t train_items = 0;  ///< training seeds (node classification) or positive pairs
};

/// Side-by-side table of the final epochs of several runs (one column per run), with the
/// independent / cooperative ratios of the work counters when both modes are present (per node
/// type and per relation on typed graphs) and the cooperative / independent ratio of the mean
/// epoch time. The feature cache's hit-rate row appears when `setting` says a cache was
/// configured, or, without a setting, when some run had cache hits. The label column is as wide
/// as the longest label plus two (at least 28); every value column is 18 wide, right-aligned.
std::string format_comparison(const std::vector<epoch_report>& finals,
                              const std::vector<epoch_report>& totals,
                              const comparison_setting* setting = nullptr);

/// The legend under a comparison of the modes, one sentence per line:
/// - which mode was faster per epoch and by how much (cooperative / independent epoch time, the
///   table's ratio row), when both modes are in `totals`;
/// - where the timings come from: "host backend, 4 PEs x 1 thread on 2 hardware threads:
///   timings are of CPU threads sharing cores, not GPUs" (host and emulated), or "cuda backend,
///   4 PEs on 4 GPUs" (totals[0].backend and .pes, `s`);
/// - that every epoch was one batch, once, when B >= the training items;
/// - how to read the work ratios (independent / cooperative > 1: work cooperative saves).
/// Does not throw beyond std::bad_alloc.
std::string format_comparison_legend(const std::vector<epoch_report>& totals,
                                     const comparison_setting& s);

/// Appends whole lines to a file (--metrics-out): opened O_WRONLY | O_CREAT | O_APPEND, and each
/// line goes out with one write(2) of the line and its '\n', so whatever ends the process (a
/// signal, SIGKILL, a crash) the file holds complete lines only, and several writers never
/// interleave inside a line. No user-space buffer: a line is in the kernel when append returns
/// (not fsync'ed: a power loss may still lose it).
class line_appender {
 public:
  /// @throws io_error "FILE: cannot open for appending: REASON".
  explicit line_appender(std::filesystem::path file);
  ~line_appender();
  line_appender(const line_appender&) = delete;
  line_appender& operator=(const line_appender&) = delete;
  /// Writes `line` (which must not contain '\n') and a newline in one write(2), retried on
  /// EINTR. @throws logic_error for an embedded newline; io_error naming the file when the write
  /// fails or is short (a full disk; the file may then end in a partial line).
  void append(std::string_view line);
  [[nodiscard]] const std::filesystem::path& path() const { return file_; }

 private:
  std::filesystem::path file_;
  int fd_ = -1;
};

}  // namespace coopgnn
