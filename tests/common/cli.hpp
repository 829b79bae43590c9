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

/// Runs the shell command line `command` (words already quoted) through popen with stderr
/// merged into stdout; returns its exit status (-1 when it did not exit normally, e.g. killed by
/// a signal) and sets `output` to everything it printed. For the tests that run the built
/// binary as a child process. @throws std::runtime_error when popen fails.
int run_command(const std::string& command, std::string& output);

/// The arguments (without the program name) of a tiny run of `command` (train or compare) on
/// `dataset` (default: the bundled Cora), host backend, one PE, fanouts 2,2, batch size 140 (one
/// batch of Cora's 140 training vertices per epoch), `hidden` hidden units, `epochs` epochs,
/// --quiet --no-progress; then `more`. For the tests that run the command line.
std::vector<std::string> tiny_run_args(const std::string& command, const std::string& hidden,
                                       const std::string& epochs,
                                       const std::vector<std::string>& more = {},
                                       const std::string& dataset = {});

}  // namespace coopgnn::test
