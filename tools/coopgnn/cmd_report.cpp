// `coopgnn report RESULTS_DIR` (bench/drivers/report.hpp; docs/results-schema.md).
#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

#include "bench/drivers/report.hpp"
#include "tools/coopgnn/commands.hpp"

#ifndef COOPGNN_DEFAULT_DATASET
#define COOPGNN_DEFAULT_DATASET "data/cora"
#endif

namespace coopgnn::cli {

namespace {

struct report_args {
  std::string dir;
  bool no_plots = false;
  bench::report_options opt;
};

}  // namespace

bench::report_options report_options_for_cli(bool plots) {
  bench::report_options o;
  o.plots = plots;
  // tools/plot_results.py of a checkout in the working directory, else of the source tree this
  // binary was built from (the default dataset is <source>/data/cora).
  std::filesystem::path const local = "tools/plot_results.py";
  o.plot_script =
      std::filesystem::exists(local)
          ? local
          : std::filesystem::path(COOPGNN_DEFAULT_DATASET).parent_path().parent_path() / local;
  if (char const* py = std::getenv("COOPGNN_PYTHON"); py != nullptr && *py != '\0') {
    o.python.insert(o.python.begin(), py);
  }
  return o;
}

void add_report_command(CLI::App& app) {
  auto a = std::make_shared<report_args>();
  auto* cmd = app.add_subcommand(
      "report",
      "Render RESULTS_DIR/report.md from every *.json result file there (bench work, modes and "
      "cache) and every run of `coopgnn tma` below it (each tma.jsonl; docs/results-schema.md), "
      "with PNG plots in RESULTS_DIR/plots/ drawn by "
      "tools/plot_results.py (python3 + matplotlib; skipped with a note when missing). Set "
      "COOPGNN_PYTHON to choose the interpreter.");
  cmd->add_option("RESULTS_DIR", a->dir, "Directory holding the result files")->required();
  cmd->add_option("--title", a->opt.title, "Title of the report")->capture_default_str();
  cmd->add_flag("--no-plots", a->no_plots, "Write only the tables, no plots");
  cmd->callback([a] {
    auto opt = report_options_for_cli(!a->no_plots);
    opt.title = a->opt.title;
    auto const r = bench::write_report(a->dir, opt);
    fmt::print("read {} result file(s) and {} TMA run(s); wrote {}; plots: {}\n", r.files.size(),
               r.runs.size(), r.markdown.string(), r.plot_note);
  });
}

}  // namespace coopgnn::cli
