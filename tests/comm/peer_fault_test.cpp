// A dead or hung peer becomes an error on every other PE (README "Failed and hung peers"), for
// every collective of the host communicator: a PE that throws stops its peers at once (well under
// the timeout), a PE that stalls is detected by the timeout, and the messages name the collective,
// the waiting PE and the missing ones. End to end: `coopgnn train` with a fault injected in one PE
// (COOPGNN_FAULT_INJECT, runtime/comm/fault_injection.hpp) exits non-zero within seconds with a
// message naming the PE. Every expected message is written here from the contract in
// host_communicator.hpp, not taken from the code's output.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <ostream>
#include <string>
#include <thread>
#include <vector>

#include "runtime/comm/fault_injection.hpp"
#include "runtime/comm/host_communicator.hpp"
#include "runtime/core/error.hpp"
#include "tests/common/files.hpp"

namespace coopgnn {
namespace {

using clock_type = std::chrono::steady_clock;
using namespace std::chrono_literals;

double seconds_since(clock_type::time_point t0) {
  return std::chrono::duration<double>(clock_type::now() - t0).count();
}

/// One collective of the interface, called the same way on every PE (P = c.size()).
struct collective {
  const char* name;  // the name the messages use
  std::function<void(communicator&)> call;
};

std::vector<collective> every_collective() {
  return {
      {"alltoall",
       [](communicator& c) {
         std::vector<std::int64_t> send(static_cast<std::size_t>(c.size()), c.rank()),
             recv(send.size());
         c.alltoall(send, recv);
       }},
      {"alltoallv",
       [](communicator& c) {
         auto const p = static_cast<std::size_t>(c.size());
         std::vector<std::int64_t> bytes(p, 8);
         std::vector<std::byte> send(8 * p), recv(8 * p);
         c.alltoallv(send.data(), bytes, recv.data(), bytes);
       }},
      {"allreduce",
       [](communicator& c) {
         std::vector<float> v(5, 1.0f);
         c.allreduce_sum(std::span<float>(v));
       }},
      {"allreduce",
       [](communicator& c) {
         std::vector<double> v(5, 1.0);
         c.allreduce_sum(std::span<double>(v));
       }},
      {"allreduce",
       [](communicator& c) {
         std::vector<std::int64_t> v(5, 1);
         c.allreduce_sum(std::span<std::int64_t>(v));
       }},
      {"broadcast",
       [](communicator& c) {
         std::vector<std::byte> v(16);
         c.broadcast(v, 0);
       }},
      {"barrier", [](communicator& c) { c.barrier(); }},
  };
}

/// What one PE saw: its error message (empty: none) and when the error came.
struct outcome {
  std::string error;
  double at = -1;  // seconds from the start of the failing round
};

/// Runs `P` PE threads: each calls `op` once (a healthy round), then `faulty(pe)` for PE
/// `culprit` and `op` again for the others. Returns every PE's outcome of the second round.
std::vector<outcome> run_round(int P, std::chrono::milliseconds timeout, const collective& op,
                               int culprit, const std::function<void(communicator&)>& faulty) {
  auto group = std::make_shared<host_comm_group>(P, timeout);
  std::vector<outcome> out(static_cast<std::size_t>(P));
  std::vector<std::string> first_round(static_cast<std::size_t>(P));
  clock_type::time_point t0;
  {
    std::vector<std::jthread> ts;
    for (int p = 0; p < P; ++p) {
      ts.emplace_back([&, p] {
        host_communicator c(group, p);
        try {
          op.call(c);
        } catch (const std::exception& e) {
          first_round[p] = e.what();
          return;
        }
        c.barrier();
        if (p == 0) t0 = clock_type::now();
        c.barrier();  // t0 is set before anyone starts the round (the barrier orders it)
        try {
          if (p == culprit) {
            faulty(c);
          } else {
            op.call(c);
          }
        } catch (const std::exception& e) {
          out[p].error = e.what();
          out[p].at = seconds_since(t0);
        }
      });
    }
  }
  for (int p = 0; p < P; ++p) EXPECT_EQ(first_round[p], "") << "PE " << p << " healthy round";
  return out;
}

/// Every PE but `culprit` raised, between `earliest` and `latest` seconds into the round, with
/// a message "<collective> on PE <p>: ..." that contains `needle`.
void expect_peers_raised(const std::vector<outcome>& out, int culprit, const char* collective,
                         const std::string& needle, double earliest, double latest) {
  for (int p = 0; p < static_cast<int>(out.size()); ++p) {
    if (p == culprit) continue;
    auto const& e = out[static_cast<std::size_t>(p)];
    ASSERT_FALSE(e.error.empty()) << "PE " << p << " did not raise";
    EXPECT_NE(e.error.find(std::string(collective) + " on PE " + std::to_string(p)),
              std::string::npos)
        << e.error;
    EXPECT_NE(e.error.find(needle), std::string::npos) << e.error;
    EXPECT_GE(e.at, earliest) << "PE " << p << " raised too early";
    EXPECT_LT(e.at, latest) << "PE " << p << " raised too late";
  }
}

TEST(PeerFault, ThrowingPeerStopsEveryOtherPePromptlyInEveryCollective) {
  int const P = 4, culprit = 1;
  for (auto const& op : every_collective()) {
    SCOPED_TRACE(op.name);
    // What trainer::run_pes does for a PE whose step throws: abort with the PE and the reason.
    auto const out = run_round(P, 30s, op, culprit, [](communicator& c) {
      std::this_thread::sleep_for(50ms);  // the peers are inside the collective by now
      c.abort("PE 1 failed: injected error");
      throw error("injected error");
    });
    // "<collective> on PE <p>: aborted: PE 1 failed: ..." (host_comm_group::wait), well before
    // the 30 s timeout.
    expect_peers_raised(out, culprit, op.name, "PE 1 failed: injected error", 0.0, 2.0);
  }
}

TEST(PeerFault, StalledPeerIsDetectedByTheTimeoutInEveryCollective) {
  int const P = 3, culprit = 1;
  auto const timeout = 200ms;
  for (auto const& op : every_collective()) {
    SCOPED_TRACE(op.name);
    double stalled_raise = -1;
    std::string stalled_error;
    auto const out = run_round(P, timeout, op, culprit, [&](communicator& c) {
      std::this_thread::sleep_for(700ms);  // hung, well past the timeout
      auto const t = clock_type::now();
      try {
        op.call(c);
      } catch (const comm_error& e) {
        stalled_error = e.what();
        stalled_raise = seconds_since(t);
      }
    });
    // Not before the timeout, and within it + 1 s.
    expect_peers_raised(out, culprit, op.name, "timed out after 0.2 s waiting for PE 1 ", 0.19,
                        0.2 + 1.0);
    // The stalled PE, back from its hang, fails at once instead of waiting for peers that left.
    EXPECT_GE(stalled_raise, 0.0) << "the stalled PE's late collective did not raise";
    EXPECT_LT(stalled_raise, 0.1);
    EXPECT_NE(stalled_error.find("timed out after 0.2 s"), std::string::npos) << stalled_error;
  }
}

TEST(PeerFault, TimeoutNamesEveryMissingPe) {
  auto group = std::make_shared<host_comm_group>(4, 150ms);
  std::string e0, e2;
  {
    std::jthread a([&] {
      host_communicator c(group, 0);
      try {
        c.barrier();
      } catch (const comm_error& e) {
        e0 = e.what();
      }
    });
    std::jthread b([&] {
      host_communicator c(group, 2);
      try {
        c.barrier();
      } catch (const comm_error& e) {
        e2 = e.what();
      }
    });
  }
  // Whichever PE timed out first names PEs 1 and 3; the other reports it as the abort reason.
  for (auto const* e : {&e0, &e2}) {
    EXPECT_NE(e->find("waiting for PEs 1, 3 "), std::string::npos) << *e;
    EXPECT_NE(e->find("barrier on PE "), std::string::npos) << *e;
  }
}

TEST(PeerFault, WaitRunsItsCompletionStepOncePerGenerationBeforeTheRelease) {
  // std::barrier's completion contract (host_comm_group::wait's `last`): run once per round by
  // one PE, before any PE leaves; so after round r every PE reads r + 1 and the same flag.
  int const P = 3, rounds = 200;
  auto group = std::make_shared<host_comm_group>(P, 30s);
  int completed = 0;
  bool odd = false;
  std::function<void()> const last = [&] {
    ++completed;
    odd = completed % 2 == 1;
  };
  std::vector<std::string> errors(P);
  {
    std::vector<std::jthread> ts;
    for (int p = 0; p < P; ++p) {
      ts.emplace_back([&, p] {
        for (int r = 0; r < rounds; ++r) {
          if ((r + p) % 7 == 0) std::this_thread::sleep_for(100us);  // vary who arrives last
          group->wait(p, "step barrier", last);
          if (completed != r + 1 || odd != (r % 2 == 0)) {
            errors[p] = "round " + std::to_string(r) + ": completed " + std::to_string(completed);
            return;
          }
        }
      });
    }
  }
  for (int p = 0; p < P; ++p) EXPECT_EQ(errors[p], "") << "PE " << p;
  EXPECT_EQ(completed, rounds);
}

TEST(PeerFault, PeMissingAtAWaitWithACompletionStepIsTimedOutAndTheStepNeverRuns) {
  auto group = std::make_shared<host_comm_group>(3, 200ms);
  int completed = 0;
  std::function<void()> const last = [&] { ++completed; };
  std::vector<outcome> out(3);
  auto const t0 = clock_type::now();
  {
    std::vector<std::jthread> ts;
    for (int p : {0, 2}) {  // PE 1 never comes
      ts.emplace_back([&, p] {
        try {
          group->wait(p, "step barrier", last);
        } catch (const comm_error& e) {
          out[p] = {e.what(), seconds_since(t0)};
        }
      });
    }
  }
  expect_peers_raised(out, 1, "step barrier", "waiting for PE 1 ", 0.19, 1.2);
  EXPECT_EQ(completed, 0);
  EXPECT_TRUE(group->aborted());
}

TEST(PeerFault, ZeroTimeoutWaitsForever) {
  auto group = std::make_shared<host_comm_group>(2, 0ms);
  std::vector<std::string> errors(2);
  {
    std::vector<std::jthread> ts;
    for (int p = 0; p < 2; ++p) {
      ts.emplace_back([&, p] {
        host_communicator c(group, p);
        if (p == 1) std::this_thread::sleep_for(400ms);
        try {
          std::vector<double> v(3, 1.0);
          c.allreduce_sum(std::span<double>(v));
          if (v[0] != 2.0) errors[p] = "wrong sum";
        } catch (const std::exception& e) {
          errors[p] = e.what();
        }
      });
    }
  }
  EXPECT_EQ(errors[0], "");
  EXPECT_EQ(errors[1], "");
  EXPECT_THROW(host_comm_group(2, std::chrono::milliseconds(-1)), logic_error);
}

TEST(FaultInjection, ParsesStrictly) {
  auto const p = fault_injection::parse("pe:1,step:3,kind:stall");
  EXPECT_EQ(p.who, fault_injection::plan::target::pe);
  EXPECT_EQ(p.index, 1);
  EXPECT_EQ(p.step, 3);
  EXPECT_EQ(p.what, fault_injection::plan::kind::stall);
  EXPECT_EQ(fault_injection::parse("pe:3,step:1,kind:hang").what,
            fault_injection::plan::kind::hang);
  auto const r = fault_injection::parse("rank:2,step:0,kind:exit");
  EXPECT_EQ(r.who, fault_injection::plan::target::rank);
  EXPECT_EQ(r.what, fault_injection::plan::kind::exit);
  EXPECT_EQ(fault_injection::parse("pe:0,step:7,kind:throw").what,
            fault_injection::plan::kind::raise);
  using point = fault_injection::plan::point;
  EXPECT_EQ(p.at, point::start);
  auto const e = fault_injection::parse("pe:2,step:5,kind:hang,at:end");
  EXPECT_EQ(e.index, 2);
  EXPECT_EQ(e.step, 5);
  EXPECT_EQ(e.what, fault_injection::plan::kind::hang);
  EXPECT_EQ(e.at, point::end);
  EXPECT_EQ(fault_injection::parse("pe:2,step:5,kind:throw,at:start").at, point::start);
  EXPECT_EQ(fault_injection::parse("rank:2,step:5,kind:stall,at:start").at, point::start);
  for (const char* bad :
       {"", "pe:1", "pe:1,step:3", "pe:1,step:3,kind:crash", "step:3,pe:1,kind:throw",
        "pe:-1,step:3,kind:throw", "pe:1,step:3x,kind:throw", "pe:1,step:3,kind:throw,extra:1",
        "pe:,step:3,kind:throw", "node:1,step:3,kind:throw", "pe:1,step:3,kind:stall ",
        "pe:1,step:3,kind:hang,at:middle", "pe:1,step:3,kind:hang,at:", "pe:1,step:3,at:end",
        "pe:1,step:3,kind:hang,at:end,at:end", "pe:1,step:3,kind:hang,where:end",
        "rank:1,step:3,kind:hang,at:end"}) {
    SCOPED_TRACE(bad);
    try {
      (void)fault_injection::parse(bad);
      ADD_FAILURE() << "accepted";
    } catch (const logic_error& e) {
      EXPECT_NE(std::string(e.what()).find("COOPGNN_FAULT_INJECT"), std::string::npos) << e.what();
    }
  }
}

// ------------------------------------------------------------------------------------------------
// End to end: the built binary with a fault injected in PE 1.
// ------------------------------------------------------------------------------------------------

namespace fs = std::filesystem;

struct child_result {
  int status = -1;
  double seconds = 0;
  std::string log;
};

/// Runs `coopgnn train` on the bundled Cora (3 host PEs, 18 batches per epoch) with
/// COOPGNN_FAULT_INJECT=`fault` and `extra` options; kills it after 60 s.
child_result train_with_fault(const std::string& fault, const std::vector<std::string>& extra,
                              const std::string& tag) {
  auto const log = fs::temp_directory_path() /
                   ("coopgnn_peer_fault_" + tag + "_" + std::to_string(::getpid()) + ".log");
  std::vector<std::string> args{COOPGNN_BINARY, "train", "--backend",    "host", "--pes",    "3",
                                "--batch-size", "8",     "--fanouts",    "4,4",  "--hidden", "8",
                                "--epochs",     "2",     "--no-progress"};
  args.insert(args.end(), extra.begin(), extra.end());
  auto const t0 = clock_type::now();
  pid_t const pid = fork();
  if (pid == 0) {
    int const fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(fd, STDOUT_FILENO);
    ::dup2(fd, STDERR_FILENO);
    ::setenv("COOPGNN_FAULT_INJECT", fault.c_str(), 1);
    ::alarm(60);  // SIGALRM ends a hung child (execv keeps the pending alarm)
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  child_result r;
  ::waitpid(pid, &r.status, 0);
  r.seconds = seconds_since(t0);
  r.log = test::read_text(log);
  fs::remove(log);
  return r;
}

/// One faulty run of the binary: the fault, extra options, and what its output must contain.
struct fault_usecase {
  const char* name;
  std::string fault;  // COOPGNN_FAULT_INJECT
  std::vector<std::string> extra;
  std::vector<std::string> expect;  // substrings of the output, each one required
  bool no_epoch = false;            // the fault comes before the first epoch ends
};

void PrintTo(const fault_usecase& u, std::ostream* os) { *os << u.name; }

class PeerFaultEndToEnd : public ::testing::TestWithParam<fault_usecase> {};

// Every case exits with status 1 (coopgnn::error or the hung-PE exit) well within 20 s: neither
// the default 300 s timeout nor the test's 60 s alarm is waited for.
TEST_P(PeerFaultEndToEnd, OtherPesRaiseAndTheRunExitsNonZero) {
  auto const& u = GetParam();
  auto const r = train_with_fault(u.fault, u.extra, u.name);
  ASSERT_TRUE(WIFEXITED(r.status)) << "killed (hung?): status " << r.status << "\n" << r.log;
  EXPECT_EQ(WEXITSTATUS(r.status), 1) << r.log;
  for (auto const& e : u.expect) EXPECT_NE(r.log.find(e), std::string::npos) << e << "\n" << r.log;
  if (u.no_epoch) {
    EXPECT_EQ(r.log.find("train_loss"), std::string::npos) << "no epoch may complete\n" << r.log;
  }
  EXPECT_LT(r.seconds, 20.0) << r.log;
}

std::string const no_pe1 = "timed out after 0.5 s waiting for PE 1 ";
std::string const pe1_hung =
    "coopgnn: error: PE 1 still running 0.5 s (--peer-timeout) after the run failed (";
std::vector<std::string> const short_timeout{"--peer-timeout", "0.5"};

INSTANTIATE_TEST_SUITE_P(
    Faults, PeerFaultEndToEnd,
    ::testing::Values(
        // At the start of step 3 (before its first collective).
        fault_usecase{"throw",
                      "pe:1,step:3,kind:throw",
                      {},
                      {"error: fault injected (COOPGNN_FAULT_INJECT): PE 1 at step 3"},
                      true},
        // A peer of PE 1 (0 or 2) times out in the first collective of step 3, naming PE 1.
        fault_usecase{"stall",
                      "pe:1,step:3,kind:stall",
                      short_timeout,
                      {no_pe1, "fault injected (COOPGNN_FAULT_INJECT): PE 1 stalls at step 3"}},
        // PE 1 sleeps 600 s ignoring the abort: its thread cannot be joined, so the trainer
        // reports it one peer timeout after the others failed and ends the process.
        fault_usecase{
            "hang", "pe:1,step:3,kind:hang", short_timeout, {pe1_hung, "waiting for PE 1 "}},
        // At the end of step 3 (after its last collective, ...,at:end), where the peers already
        // wait at the PEs' per-step meeting in trainer::run_epoch: the abort reaches them there.
        fault_usecase{"throw_end",
                      "pe:1,step:3,kind:throw,at:end",
                      {},
                      {"error: fault injected (COOPGNN_FAULT_INJECT): PE 1 at the end of step 3"},
                      true},
        // PE 0 or 2 times out at the meeting itself (not in a later collective), naming PE 1.
        fault_usecase{"stall_end",
                      "pe:1,step:3,kind:stall,at:end",
                      short_timeout,
                      {"fault injected (COOPGNN_FAULT_INJECT): PE 1 stalls at the end of step 3",
                       "step barrier on PE ", no_pe1}},
        // A hang at the end of a step: the peers used to wait at a std::barrier forever.
        fault_usecase{"hang_end",
                      "pe:1,step:3,kind:hang,at:end",
                      short_timeout,
                      {"step barrier on PE ", no_pe1, pe1_hung}}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(PeerFaultEndToEndSpec, MalformedFaultSpecIsAnErrorBeforeTraining) {
  auto const r = train_with_fault("pe:1,step:3,kind:explode", {}, "bad");
  ASSERT_TRUE(WIFEXITED(r.status)) << r.log;
  EXPECT_NE(WEXITSTATUS(r.status), 0) << r.log;
  EXPECT_NE(r.log.find("kind must be throw, stall, hang or exit, got 'explode'"), std::string::npos)
      << r.log;
  EXPECT_EQ(r.log.find("minibatching:"), std::string::npos) << "training started\n" << r.log;
}

}  // namespace
}  // namespace coopgnn
