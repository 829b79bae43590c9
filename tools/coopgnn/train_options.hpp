// The options `train`, `compare` and `tma` share (tools/coopgnn/cmd_train.cpp).
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <string>
#include <vector>

#include "runtime/pipeline/config.hpp"
#include "tools/coopgnn/commands.hpp"

namespace coopgnn::cli {

/// Everything the training commands read from the command line.
struct train_options {
  std::string dataset;
  std::string mode = "cooperative";
  std::string sampler = "ns";
  std::vector<int> fanouts = {10, 10};

/// Registers the model, sampling, cache, backend and optimizer options on `cmd` into `o`.
void add_common_options(CLI::App* cmd, train_options& o);
/// The option names into train_config's types (each parsed once).
/// @throws logic_error naming the option for an unknown name.
void parse_typed_options(train_options& o);
/// --task into o.cfg.task from what the dataset holds (auto: node classification when it has
/// labels, else link prediction). @throws logic_error when the dataset cannot serve the task.
void resolve_task(train_options& o, const dataset& ds);
/// Parses the typed options, reads --dataset (the bundled Cora when empty), applies
/// --cache-fraction and resolves the task; prints the dataset line unless --quiet.
/// @throws io_error naming the file, logic_error naming the option.
std::unique_ptr<loaded_dataset> load(train_options& o);
/// Resolves --backend and the PE count (--pes, --pes-per-gpu) into o.cfg.
void resolve_pes(train_options& o);

}  // namespace coopgnn::cli
