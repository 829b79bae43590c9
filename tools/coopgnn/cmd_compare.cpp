// `coopgnn compare`: the same configuration trained in cooperative and then in independent
// minibatching, reported as one table with a legend (docs/usage.md "coopgnn compare").
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <thread>
#include <vector>

#include "runtime/core/assert.hpp"
#include "pipeline/report.hpp"
#include "tools/coopgnn/commands.hpp"
#include "tools/coopgnn/progress.hpp"
#include "tools/coopgnn/train_options.hpp"

namespace coopgnn::cli {
namespace {

/// What the legend says about the runs: cache, threads, GPUs, batch against training items.
comparison_setting setting_of(const train_options& o, const dataset& ds) {
  comparison_setting s;
  s.cache = o.cfg.cache_policy != cache_policy_kind::none;
  s.hardware_threads = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  s.threads_per_pe = pe_thread_budget(o.cfg);
  s.gpus = o.cfg.compute_backend == backend::cuda
               ? (o.cfg.num_pes + o.cfg.pes_per_gpu - 1) / o.cfg.pes_per_gpu
               : 0;
  s.batch_size = o.cfg.batch_size;
  s.train_items = o.cfg.task == task_kind::link_prediction && ds.link
                      ? static_cast<std::int64_t>(ds.link->train.size())
                      : static_cast<std::int64_t>(ds.train.size());
  return s;
}

}  // namespace

void add_compare_command(CLI::App& app) {
  auto copt = std::make_shared<train_options>();
  auto verbose = std::make_shared<bool>(false);
  auto* compare = app.add_subcommand(
      "compare",
      "Train the same configuration in cooperative and then independent mode with identical "
      "seeds; show the progress, then one table (final metrics, seconds per epoch and their "
      "ratio, work per epoch and the independent/cooperative work ratios) and a legend saying "
      "where the timings come from.");
  add_common_options(compare, *copt);
  auto const refused = std::make_shared<std::vector<refused_option>>(hide_refused_options(
      *compare, option_commands::compare,
      {{"--dry-run", "it is train's (coopgnn train --dry-run --mode M estimates one mode)"}}));
  compare->add_flag("--verbose,-v", *verbose,
                    "Print each epoch's line (loss, metrics, stage times and work), as train "
                    "does; without it, a progress bar over each mode's run and the final table");
  compare->callback([copt, verbose, refused, compare] {
    check_refused_options(*compare, *refused);
    check_run_outputs(*copt);
    auto data = load(*copt);
    auto jsonl = open_metrics(*copt);
    bool const report = !copt->no_progress && !copt->quiet;
    std::vector<epoch_report> finals, totals;
    comparison_setting setting;
    for (auto m : {minibatch_mode::cooperative, minibatch_mode::independent}) {
      train_options o = *copt;
      o.cfg.mode = m;
      o.epoch_lines = *verbose;
      // One bar over the mode's whole run; with --verbose, train's bar per epoch between the
      // epoch lines instead.
      std::unique_ptr<progress_reporter> bar;
      if (!*verbose) {
        o.no_progress = true;
        bar = std::make_unique<progress_reporter>(
            fmt::format("{} ({} epochs, batches)", to_string(m), o.cfg.epochs), report,
            isatty(fileno(stderr)) != 0, kProgressLineSeconds, stderr);
        int const epochs = o.cfg.epochs;
        o.on_batch = [&bar, epochs](int e, std::int64_t done, std::int64_t per_epoch) {
          bar->update((e - 1) * per_epoch + done, epochs * per_epoch);
        };
      }
      auto [last, total] = run_training(*data, o, jsonl.get());
      finals.push_back(last);
      totals.push_back(total);
      setting = setting_of(o, data->ds);  // the resolved run (backend, PEs, threads)
    }
    COOPGNN_ASSERT(totals.size() == 2, "compare ran {} modes, not 2", totals.size());
    fmt::print("\n{}\n{}", format_comparison(finals, totals, &setting),
               format_comparison_legend(totals, setting));
    // The table's metrics are the last epoch's; --select-best's choice per mode (the metrics a
    // paper would report, also the selection records of --metrics-out).
    for (auto const& t : totals) fmt::print("{}: {}\n", t.mode, format_selection(t.selected));
  });
}

}  // namespace coopgnn::cli
