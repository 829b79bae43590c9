#include "tests/common/cli.hpp"

#include <CLI/CLI.hpp>
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <stdexcept>

#include "runtime/core/error.hpp"
#include "tools/coopgnn/commands.hpp"

namespace coopgnn::test {

void run_data_cli(std::vector<std::string> args) {
  CLI::App app{"test"};
  app.require_subcommand(1);
  cli::add_data_commands(app);
  cli::add_partition_command(app);
  cli::require_finite_floats(app);
  std::reverse(args.begin(), args.end());  // CLI11 parses a reversed vector
  app.parse(args);
}

std::string run_train_cli(std::vector<std::string> args) {
  CLI::App app{"test"};
  cli::add_train_commands(app);
  cli::add_infer_commands(app);
  cli::require_finite_floats(app);
  std::reverse(args.begin(), args.end());
  try {
    app.parse(args);
  } catch (const error& e) {
    return e.what();
  }
  return {};
}

int run_command(const std::string& command, std::string& output) {
  std::string const cmd = command + " 2>&1";
  FILE* p = ::popen(cmd.c_str(), "r");
  if (p == nullptr) throw std::runtime_error("popen failed: " + command);
  char buf[4096];
  output.clear();
  while (std::size_t n = std::fread(buf, 1, sizeof buf, p)) output.append(buf, n);
  int const st = ::pclose(p);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

std::vector<std::string> tiny_run_args(const std::string& command, const std::string& hidden,
                                       const std::string& epochs,
                                       const std::vector<std::string>& more,
                                       const std::string& dataset) {
  std::vector<std::string> a = {command,
                                "--dataset",
                                dataset.empty() ? std::string(COOPGNN_SOURCE_DIR) + "/data/cora"
                                                : dataset,
                                "--backend",
                                "host",
                                "--pes",
                                "1",
                                "--fanouts",
                                "2,2",
                                "--batch-size",
                                "140",
                                "--hidden",
                                hidden,
                                "--epochs",
                                epochs,
                                "--quiet",
                                "--no-progress"};
  a.insert(a.end(), more.begin(), more.end());
  return a;
}

}  // namespace coopgnn::test
