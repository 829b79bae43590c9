// Which command takes which of the shared training options (train_options.hpp): the option
// table's per-command metadata (option_decl::commands) applied to a command's registration.
#include "runtime/core/assert.hpp"
#include "runtime/core/error.hpp"
#include "tools/coopgnn/train_options.hpp"

namespace coopgnn::cli {

std::vector<refused_option> hide_refused_options(CLI::App& cmd, unsigned command,
                                                 std::vector<refused_option> tool_level) {
  std::vector<refused_option> refused;
  for (const option_decl& d : train_option_table()) {
    if ((d.commands & command) == 0) refused.push_back({d.name, d.refused_because});
  }
  refused.insert(refused.end(), tool_level.begin(), tool_level.end());
  for (const refused_option& r : refused) {
    CLI::Option* const opt = cmd.get_option_no_throw(r.name);
    COOPGNN_ASSERT(opt != nullptr, "coopgnn {}: no option {} to refuse", cmd.get_name(), r.name);
    opt->group("");  // CLI11: an option of the empty group is left out of --help
  }
  return refused;
}

void check_refused_options(const CLI::App& cmd, const std::vector<refused_option>& refused) {
  for (const refused_option& r : refused) {
    const CLI::Option* const opt = cmd.get_option_no_throw(r.name);
    COOPGNN_EXPECTS(opt == nullptr || opt->count() == 0, "{} does not apply to coopgnn {}: {}",
                    r.name, cmd.get_name(), r.why);
  }
}

}  // namespace coopgnn::cli
