// Subcommands of the `coopgnn` command line, registered by tools/coopgnn/main.cpp.
#pragma once

#include <CLI/CLI.hpp>

namespace coopgnn::cli {

/// Registers `convert`, `generate` and `info` (datasets; tools/coopgnn/cmd_data.cpp).
void add_data_commands(CLI::App& app);

/// Registers `train` and `compare` (tools/coopgnn/cmd_train.cpp).
void add_train_commands(CLI::App& app);

/// Registers `bench work` under the `bench` subcommand (tools/coopgnn/cmd_bench_work.cpp).
void add_bench_work_command(CLI::App& bench);

/// Registers `bench modes` under the `bench` subcommand (tools/coopgnn/cmd_bench_modes.cpp).
void add_bench_modes_command(CLI::App& bench);

/// Registers `report RESULTS_DIR` (tools/coopgnn/cmd_report.cpp).
void add_report_command(CLI::App& app);

}  // namespace coopgnn::cli
