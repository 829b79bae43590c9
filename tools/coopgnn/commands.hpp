// Subcommands of the `coopgnn` command line, registered by tools/coopgnn/main.cpp.
#pragma once

#include <CLI/CLI.hpp>

namespace coopgnn::cli {

/// Registers `convert`, `generate` and `info` (datasets; tools/coopgnn/cmd_data.cpp).
void add_data_commands(CLI::App& app);

/// Registers `train` and `compare` (tools/coopgnn/cmd_train.cpp).
void add_train_commands(CLI::App& app);

}  // namespace coopgnn::cli
