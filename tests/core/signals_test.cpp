// The stop-signal module (runtime/core/signals.hpp): the first SIGINT/SIGTERM
// is recorded, a second one exits at once with 128 + signal under exit_now and is ignored under
// record. Each case runs in a forked child so the test process keeps its own dispositions.
#include "runtime/core/signals.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

namespace coopgnn {
namespace {

/// Runs `body` in a child process and returns its wait status.
template <typename F>
int in_child(F&& body) {
  pid_t const pid = fork();
  if (pid == 0) ::_exit(body());
  int status = 0;
  ::waitpid(pid, &status, 0);
  return status;
}

TEST(StopSignals, FirstIsRecordedSecondExitsAtOnce) {
  int const st = in_child([] {
    signals::install_stop_handlers(signals::on_second_signal::exit_now);
    if (signals::stop_signal() != 0) return 10;
    ::raise(SIGTERM);
    if (signals::stop_signal() != SIGTERM) return 11;  // still running, the signal recorded
    ::raise(SIGINT);                                   // exits here with 130
    return 12;
  });
  ASSERT_TRUE(WIFEXITED(st)) << st;
  EXPECT_EQ(WEXITSTATUS(st), 130);
}

TEST(StopSignals, RecordPolicyKeepsRunningAndUninstallRestoresTheDefault) {
  int const st = in_child([] {
    signals::install_stop_handlers(signals::on_second_signal::record);
    ::raise(SIGINT);
    ::raise(SIGINT);
    ::raise(SIGTERM);
    if (signals::stop_signal() != SIGINT) return 20;  // the first one
    signals::uninstall_stop_handlers();
    if (signals::stop_signal() != 0) return 21;
    ::raise(SIGTERM);  // the default disposition: the child dies of it
    return 22;
  });
  ASSERT_TRUE(WIFSIGNALED(st)) << "exit status " << (WIFEXITED(st) ? WEXITSTATUS(st) : -1);
  EXPECT_EQ(WTERMSIG(st), SIGTERM);
}

TEST(StopSignals, ExitStatusIsTheShells) {
  EXPECT_EQ(signals::exit_status(SIGINT), 130);
  EXPECT_EQ(signals::exit_status(SIGTERM), 143);
}

}  // namespace
}  // namespace coopgnn
