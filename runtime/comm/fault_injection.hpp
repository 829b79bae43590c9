// TEST-ONLY fault injection for the peer-failure tests (README "Failed and hung peers"; tests/comm/
// peer_fault_test.cpp, tests/tma/protocol_check.cpp): the environment variable
//
//   COOPGNN_FAULT_INJECT=pe:P,step:S,kind:K[,at:start|end]  (a PE thread of `train`/`compare`)
//   COOPGNN_FAULT_INJECT=rank:R,step:S,kind:K              (an MPI trainer rank of `coopgnn tma`)
//
// makes PE P (or rank R) fail when it starts step S (0-based: the global batch index of
// `train`, counted over epochs; a trainer rank's own step count in `tma`) or, with `at:end` (PEs
// only), when it has finished step S: after the step's last collective, right before the PEs'
// per-step meeting in trainer::run_epoch. K is one of
//   throw  the PE throws coopgnn::error naming itself and the step (a crash that unwinds);
//   stall  the PE stops (a hang): it sleeps until its peers have given up on it (the group is
//          aborted by their --peer-timeout), at most 600 s, then carries on, so that its next
//          collective raises and its thread can be joined; an MPI rank sleeps until the job is
//          killed (at most 600 s);
//   hang   the PE sleeps 600 s whatever happens (a thread that never comes back: `train` must
//          end the process itself, trainer::exit_if_hung);
//   exit   the process ends at once with status 3 (std::_Exit: no unwinding, no MPI_Finalize),
//          like a killed peer.
// The value is checked strictly: keys in this order, each once (`at` optional, default start),
// integers >= 0; anything else is a logic_error naming the variable. Never set it outside tests.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>

namespace coopgnn::fault_injection {

/// What to inject, and where.
struct plan {
  enum class target { pe, rank };
  enum class kind { raise, stall, hang, exit };
  /// Where in the step: at its start, or at its end (after its last collective).
  enum class point { start, end };
  target who = target::pe;
  int index = 0;          ///< the PE (target::pe) or MPI rank (target::rank)
  std::int64_t step = 0;  ///< 0-based step at whose start (or end: `at`) the fault fires
  kind what = kind::raise;
  point at = point::start;  ///< point::end only with target::pe
};

/// Parses a COOPGNN_FAULT_INJECT value (format above).
/// @throws logic_error naming COOPGNN_FAULT_INJECT and the offending part.
[[nodiscard]] plan parse(std::string_view spec);

/// The plan in the environment, parsed once per process (thread-safe): nullopt when
/// COOPGNN_FAULT_INJECT is unset or empty. @throws logic_error as parse() (on every call).
[[nodiscard]] const std::optional<plan>& from_env();

/// Fires the environment's plan if it targets (`who`, `index`) at `step` and point `where`;
/// otherwise returns at once (one pointer test when unset). For kind::stall it polls `released`
/// every 5 ms and returns when it is true (the peers have aborted the group) or after 600 s; an
/// empty `released` sleeps the full 600 s, as kind::hang always does.
/// @throws error for kind::raise, "fault injected (COOPGNN_FAULT_INJECT): PE P at step S" (or
///         "... PE P at the end of step S" for point::end).
void at_step(plan::target who, int index, std::int64_t step,
             const std::function<bool()>& released = {}, plan::point where = plan::point::start);

}  // namespace coopgnn::fault_injection
