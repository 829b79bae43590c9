// `coopgnn report RESULTS_DIR`: renders the benchmark result files of docs/results-schema.md
// (`work`: Theorems 3.1/3.2 and P W(B/P) >= W(B) of the cooperative minibatching paper, section
// 3; `modes`: cooperative vs independent minibatching, docs/design.md section 6) and the runs of
// `coopgnn tma` (bench/drivers/report_tma.hpp) into one Markdown report with PNG plots. Every
// number in the report comes from the files.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench/drivers/report_tma.hpp"

namespace coopgnn::bench {

/// How the report is rendered.
struct report_options {
  std::string title = "coopgnn benchmark results";
  bool plots = true;  ///< render PNGs with plot_script (skipped, with a note, when impossible)
  /// Interpreters to try in order; the first that imports matplotlib renders the plots.
  std::vector<std::string> python = {"python3", "/usr/bin/python3"};
  std::filesystem::path plot_script = "tools/plot_results.py";
};

/// One result file as read.
struct result_file {
  std::filesystem::path path;
  nlohmann::json json;
};

/// What write_report did.
struct report_outcome {
  std::filesystem::path markdown;            ///< RESULTS_DIR/report.md
  std::vector<std::filesystem::path> files;  ///< result files rendered, sorted by name
  std::vector<std::filesystem::path> runs;   ///< tma.jsonl files rendered, in report order
  std::vector<std::filesystem::path> plots;  ///< PNGs embedded (relative to RESULTS_DIR)
  std::string plot_note;  ///< how plotting went ("rendered N plots", "skipped: ...")
};

/// Reads every `*.json` directly in `dir` that parses and has a top-level "bench" key, sorted by
/// file name. Files that do not parse, or have no "bench" key, are skipped (not results).
/// @throws io_error when `dir` is not a readable directory, or when a result file lacks a key
///   the report needs (the message names the file and the key) or names an unknown bench.
std::vector<result_file> read_result_files(const std::filesystem::path& dir);

/// The Markdown of the report for `files`: the title; per dataset (in order of first
/// appearance) a section with, for `work`, total sampled vertices and edges per seed against B
/// per sampler, the mean P W(B/P) / W(B) per P, and the checks (passed/total per kind, every
/// failure with lhs and rhs); for `modes`, per P and mode the seconds per stage, the work per
/// batch, all-to-all bytes per layer and direction, imbalance and peak bytes per PE, and a table
/// of projected seconds per machine labelled PROJECTED; then the command lines that produced
/// the files; then, when `runs` is not empty, the section of render_tma. `plots` (paths relative
/// to the report) are embedded where they belong: a plot named plots/<stem>_<kind>.png is shown
/// in the section of the file <stem>.json, plots/tma_<dataset>_*.png in the TMA section.
/// Pure function; numbers are formatted, never recomputed, except ratios of two given numbers
/// (and the means, stds and spreads of the TMA section).
/// @throws io_error naming the file when a needed key is missing or has the wrong type.
std::string render_report(const std::string& title, const std::vector<result_file>& files,
                          const std::vector<std::filesystem::path>& plots,
                          const std::string& plot_note, const std::vector<tma_run>& runs = {});

/// Writes the plot data of `files` as CSV into `dir`/plots and a spec for plot_script
/// (`dir`/plots/plots.json: {"plots": [{"type", "csv", "out", ...}]}, paths relative to the spec)
/// and returns the PNG paths the spec asks for, relative to `dir`. Plots per work file:
/// <stem>_per_seed.png (vertices and edges per seed vs B, log2 x, per sampler and layer; cf.
/// Figure 2 of the cooperative paper) and <stem>_redundancy.png (P W(B/P) / W(B) vs B per P);
/// per modes file: <stem>_stages.png (stacked per-stage seconds, cooperative vs independent per
/// P) and <stem>_work.png (feature rows and sampled edges per batch, per mode and P); then the
/// plots of tma_plot_data(runs).
/// @throws io_error when a file cannot be written.
std::vector<std::filesystem::path> write_plot_data(const std::filesystem::path& dir,
                                                   const std::vector<result_file>& files,
                                                   const std::vector<tma_run>& runs = {});

/// Renders RESULTS_DIR/report.md from read_result_files(dir) and read_tma_runs(dir) (and, when
/// o.plots, RESULTS_DIR/plots/*.png by running `PYTHON o.plot_script plots/plots.json` with the
/// first interpreter of o.python that imports matplotlib). Plotting never fails the report: without
/// a usable interpreter, script or on a script error the report says the plots were skipped and
/// why. Blocks until the script exits.
/// @throws io_error for an unreadable directory, a malformed result file, a directory with
///   neither result files nor TMA runs, or an unwritable report.
report_outcome write_report(const std::filesystem::path& dir, const report_options& o);

}  // namespace coopgnn::bench
