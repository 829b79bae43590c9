#include "runtime/core/signals.hpp"

#include <unistd.h>

#include <atomic>
#include <csignal>

namespace coopgnn::signals {

namespace {

// Signal handlers can reach nothing but globals: the first signal and the second-signal policy.
std::atomic<int> g_first{0};
std::atomic<bool> g_exit_on_second{false};
static_assert(std::atomic<int>::is_always_lock_free && std::atomic<bool>::is_always_lock_free);

extern "C" void on_stop_signal(int sig) {
  int expected = 0;
  if (g_first.compare_exchange_strong(expected, sig)) return;
  if (!g_exit_on_second.load()) return;
  // Only async-signal-safe calls from here on.
  static constexpr char msg[] = "\ncoopgnn: second signal, exiting at once\n";
  ssize_t const ignored = ::write(STDERR_FILENO, msg, sizeof(msg) - 1);
  (void)ignored;
  ::_exit(exit_status(sig));
}

void set_handler(int sig, void (*handler)(int)) {
  struct sigaction sa = {};
  sa.sa_handler = handler;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  ::sigaction(sig, &sa, nullptr);
}

}  // namespace

void install_stop_handlers(on_second_signal second) {
  g_exit_on_second.store(second == on_second_signal::exit_now);
  set_handler(SIGINT, on_stop_signal);
  set_handler(SIGTERM, on_stop_signal);
}

void uninstall_stop_handlers() {
  set_handler(SIGINT, SIG_DFL);
  set_handler(SIGTERM, SIG_DFL);
  g_first.store(0);
  g_exit_on_second.store(false);
}

int stop_signal() noexcept { return g_first.load(std::memory_order_relaxed); }

}  // namespace coopgnn::signals
