// The "Time-based model aggregation" section of `coopgnn report`: runs of `coopgnn tma` (Zhu et
// al. 2023, "Simplifying Distributed Neural Network Training on Massive Graphs: Randomized
// Partitions Improve Model Aggregation") read from their tma.jsonl (docs/results-schema.md,
// "tma") and rendered in the shapes of the paper's Tables 2, 3 and 6 and Figure 3.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace coopgnn::bench {

/// One run of `coopgnn tma`: the lines of its tma.jsonl, by event.
struct tma_run {
  std::filesystem::path jsonl;  ///< the tma.jsonl read
  std::string name;             ///< its directory relative to RESULTS_DIR ("." for RESULTS_DIR)
  nlohmann::json start = nlohmann::json::object();  ///< the "start" line ({} when missing)
  std::vector<nlohmann::json> aggregations;         ///< the "aggregation" lines, in file order
  std::optional<nlohmann::json> final;              ///< the "final" line, if written
  /// Why the run failed: the "terminated" line's reason, a "trainer_timeout" line, a missing
  /// final line or an unreadable line; "" for a finished run.
  std::string failure;
  std::string dataset;  ///< start "dataset" ("?" when missing)
  std::string scheme;   ///< start (else final) "scheme" ("?" when missing)
  std::string seed;     ///< N of "--seed N" (or "--seed=N") in the start "command", else "default"
  int dropped = 0;      ///< F = len(dropped_parts)
  [[nodiscard]] bool failed() const { return !failure.empty(); }
};

/// A plot for tools/plot_results.py: its spec (without "csv"), the CSV file name and content.
struct tma_plot {
  nlohmann::json spec;
  std::string csv_name;
  std::string csv;
};

/// Every file named tma.jsonl under `dir` (recursively, not following directory links), one run
/// per file, sorted by dataset, scheme (randomtma, supertma, psgd-pa, llcg, ggs, then others by
/// name), F, seed ("default" first, then numeric seeds ascending, then others) and directory.
/// Never throws for a run's content: an empty file, a line that is not JSON, a missing final line
/// or a terminated run gives a run with `failure` set. Deterministic.
/// @throws io_error when `dir` cannot be listed or a tma.jsonl cannot be opened.
std::vector<tma_run> read_tma_runs(const std::filesystem::path& dir);

/// Max - min over trainers of the aggregation's "train_loss" (null entries skipped), one value
/// per aggregation with at least two non-null losses, in file order (empty when none has).
std::vector<double> tma_loss_spreads(const tma_run& run);

/// The Markdown of the TMA section ("" when `runs` is empty): "## Time-based model aggregation"
/// with "### Runs" (one line per run, failed runs marked with their reason), "### Per dataset,
/// scheme and F" (over the finished runs of a (dataset, scheme, F): mean ± sample std of best
/// test and convergence seconds, means of r, steps and loss spread, counts of seeds, runs and
/// failed runs; cf. Tables 2 and 3), "### F = 1 against F = 0" (cf. Table 6; a sentence when no
/// (dataset, scheme) has both), "### Loss discrepancy across trainers" (cf. Figure 3), one
/// "### Plots, dataset D" per dataset with a rendered plot among `plots` (relative paths named
/// as in tma_plot_data), and "### Provenance". Numbers are read from the runs; only means,
/// stds, spreads and differences of means are computed. Pure function.
std::string render_tma(const std::vector<tma_run>& runs,
                       const std::vector<std::filesystem::path>& plots);

/// The plots of `runs`, per dataset D (its name with characters other than [A-Za-z0-9._-] as
/// '_'): tma_D_val.png (validation metric against seconds, one line per run with an evaluated
/// aggregation, coloured by scheme) and tma_D_loss.png (train loss per trainer against seconds,
/// one panel per scheme from its first finished run in the order of read_tma_runs, one line per
/// trainer). A plot with no data point is left out. Pure function.
std::vector<tma_plot> tma_plot_data(const std::vector<tma_run>& runs);

}  // namespace coopgnn::bench
