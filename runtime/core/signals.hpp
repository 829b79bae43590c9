// SIGINT/SIGTERM as a request to stop (README "Checkpoints and interrupts"): the one signal
// mechanism of the process, shared by `coopgnn train` (finish the step, checkpoint, exit 130/143)
// and the TMA engine (tma/engine.cpp: the server reports and aborts the MPI job).
#pragma once

namespace coopgnn::signals {

/// What a second SIGINT/SIGTERM does once a first one has been recorded.
enum class on_second_signal {
  record,    ///< nothing more (the TMA trainers must stay up until the launcher ends them)
  exit_now,  ///< _exit(exit_status(sig)) from the handler at once (a user who presses Ctrl-C
             ///< twice wants out, whatever the run is doing)
};

/// Installs handlers for SIGINT and SIGTERM (sigaction, SA_RESTART) that record the first signal
/// for stop_signal(); what a later one does is `second`. Calling it again replaces the policy and
/// keeps a signal already recorded. Process-wide (signal dispositions are): the one piece of
/// global state of the project, a lock-free atomic that the handler only stores to.
/// Not thread-safe against concurrent install calls; call it from the main thread. Does not
/// throw; a failing sigaction (impossible for these two signals) is ignored.
void install_stop_handlers(on_second_signal second);

/// Restores the default dispositions of SIGINT and SIGTERM and forgets a recorded signal (tests
/// and in-process command runs that must not leave a handler behind). Main thread; does not
/// throw.
void uninstall_stop_handlers();

/// The first SIGINT/SIGTERM received since install_stop_handlers, as its signal number (SIGINT,
/// SIGTERM), or 0. Async-signal-safe and
/// callable from any thread (a relaxed atomic load).
[[nodiscard]] int stop_signal() noexcept;

/// The exit status the shells report for a process ended by signal number `sig` (> 0): 128 + sig
/// (130 for SIGINT, 143 for SIGTERM). `coopgnn train` exits with it after a clean stop, so scripts
/// see the same status as for an unhandled signal and `$? -gt 128` still means "interrupted".
[[nodiscard]] constexpr int exit_status(int sig) noexcept { return 128 + sig; }

}  // namespace coopgnn::signals
