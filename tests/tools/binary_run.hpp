// Running the built `coopgnn` binary as a child process, for the command-line tests that judge
// its exit status and everything it prints (test_tools_small defines COOPGNN_BINARY).
#pragma once

#include <string>
#include <vector>

#include "tests/common/cli.hpp"

namespace coopgnn::test {

/// Runs the binary with `args` (each single-quoted) after the shell words `prefix` ("ulimit -v
/// N; ", "ENV=VALUE "); returns everything it printed (stderr merged) and sets `status` to its
/// exit status (run_command).
inline std::string run_binary_with(const std::string& prefix, const std::vector<std::string>& args,
                                   int& status) {
  std::string cmd = prefix + "'" + std::string(COOPGNN_BINARY) + "'";
  for (const std::string& a : args) cmd += " '" + a + "'";
  std::string out;
  status = run_command(cmd, out);
  return out;
}

/// `train` of `dataset` on the host backend, one PE, fanouts 2,2, one epoch, --quiet
/// --no-progress, then `more`.
inline std::vector<std::string> one_pe_train_args(const std::string& dataset,
                                                  const std::vector<std::string>& more) {
  std::vector<std::string> a = {"train", "--dataset", dataset,        "--backend", "host",
                                "--pes", "1",         "--fanouts",    "2,2",       "--epochs",
                                "1",     "--quiet",   "--no-progress"};
  a.insert(a.end(), more.begin(), more.end());
  return a;
}

}  // namespace coopgnn::test
