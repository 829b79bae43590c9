// coopgnn: cooperative and independent minibatch GNN training (README.md).
#include <fmt/format.h>
#include <malloc.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>

#include "runtime/core/assert.hpp"
#include "runtime/core/error.hpp"
#include "runtime/core/log.hpp"
#include "runtime/core/signals.hpp"
#include "tools/coopgnn/commands.hpp"

int main(int argc, char** argv) {
  // Keep freed host tensors in the heap for reuse. Every training step allocates and frees the
  // same large activations and gradients (megabytes each); by default glibc maps each such block
  // fresh (mmap above its threshold) and returns it on free, so every step pays page faults and
  // zeroing of new pages (~15% of a cnr-2000 step in perf). Blocks up to 256 MiB now come from
  // the heap, which is trimmed only when 1 GiB at its top is free: the resident set stays near
  // the peak working set of a step, which training reuses anyway.
  mallopt(M_MMAP_THRESHOLD, 256 << 20);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  CLI::App app{
      "coopgnn: GNN minibatch training with cooperative and independent minibatching.\n"
      "Datasets are directories in DGL GraphBolt's OnDiskDataset layout (metadata.yaml + .npy)."};
  app.require_subcommand(1);
  app.set_version_flag("--version", "coopgnn 0.1.0");
  coopgnn::cli::add_data_commands(app);
  coopgnn::cli::add_partition_command(app);
  coopgnn::cli::add_train_commands(app);
  coopgnn::cli::add_infer_commands(app);
  coopgnn::cli::add_tma_command(app);
  auto* bench = app.add_subcommand(
      "bench", "Experiment drivers: work vs batch size, cooperative vs independent per stage");
  bench->require_subcommand(1);
  coopgnn::cli::add_bench_work_command(*bench);
  coopgnn::cli::add_bench_modes_command(*bench);
  coopgnn::cli::add_bench_export_command(*bench);
  coopgnn::cli::add_bench_cache_command(*bench);
  coopgnn::cli::add_bench_sample_command(*bench);
  coopgnn::cli::add_report_command(app);
  coopgnn::cli::require_finite_floats(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version end the parse with exit code 0: CLI11 prints them. Every other parse
    // error is a user error: the logger's one form and status 1, as coopgnn's own errors
    // (docs/usage.md, "Exit status"), not CLI11's codes (105, 106, ...).
    if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) return app.exit(e);
    std::fflush(stdout);
    coopgnn::log::error("{} (run with --help for the options)", e.what());
    return 1;
  } catch (const coopgnn::cli::interrupted& e) {
    std::fflush(stdout);  // what the run printed comes before where it stopped
    fmt::print(stderr, "coopgnn: {}\n", e.what());
    return coopgnn::signals::exit_status(e.signal());
  } catch (const coopgnn::internal_error& e) {
    std::fflush(stdout);
    coopgnn::log::error("internal error (a bug in coopgnn): {}", e.what());
    return 2;
  } catch (const coopgnn::error& e) {
    // Bad input, data, peers or devices: "coopgnn: error: MESSAGE" ("coopgnn [rank R]: error:"
    // under tma), the logger's form.
    std::fflush(stdout);
    coopgnn::log::error("{}", e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fflush(stdout);
    coopgnn::log::error("unexpected error: {}", e.what());
    return 2;
  }
  return 0;
}
