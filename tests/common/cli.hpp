// Running `coopgnn` subcommands in-process through CLI11, for the command-line tests.
#pragma once

#include <string>
#include <vector>

namespace coopgnn::test {

/// Parses `args` (without the program name) with the data commands registered
/// (cli::add_data_commands: convert, generate, split-edges, info; and cli::add_partition_command;
/// cli::require_finite_floats, as the command line) and runs the chosen one.
/// @throws what the command throws (io_error, ...) or CLI::ParseError for bad arguments.
void run_data_cli(std::vector<std::string> args);

/// Parses and runs `args` with the training commands registered (cli::add_train_commands:
/// train, compare; cli::add_infer_commands: embed, predict; cli::require_finite_floats).
/// @returns the message of the
/// coopgnn::error it throws (io_error or logic_error), empty when the command succeeded.
/// CLI::ParseError propagates.
std::string run_train_cli(std::vector<std::string> args);

/// The arguments (without the program name) of a tiny run of `command` (train or compare) on
/// `dataset` (default: the bundled Cora), host backend, one PE, fanouts 2,2, batch size 140 (one
/// batch of Cora's 140 training vertices per epoch), `hidden` hidden units, `epochs` epochs,
/// --quiet --no-progress; then `more`. For the tests that run the command line.
std::vector<std::string> tiny_run_args(const std::string& command, const std::string& hidden,
                                       const std::string& epochs,
                                       const std::vector<std::string>& more = {},
                                       const std::string& dataset = {});

}  // namespace coopgnn::test
