// Host communicator: P PE threads of one process exchange data through shared slots guarded by
// a barrier that can be aborted (docs/design.md section 1, comm).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/comm/communicator.hpp"

namespace coopgnn {

/// Shared state of a group of host PEs. Create one per group, then one host_communicator per PE.
///
/// Synchronisation: a PE arrives at a meeting with one atomic increment and sleeps on a Linux
/// futex (one 32-bit word holding the generation and the abort flag); the last PE to arrive
/// starts the next generation and wakes all sleepers with one FUTEX_WAKE. No mutex is taken on
/// the way in or out, so P sleepers waking on 2 cores do not queue on a lock. When the group has
/// no more PEs than the machine has hardware threads, a waiter spins briefly before it sleeps.
class host_comm_group {
 public:
  /// @param size     number of PEs (>= 1)
  /// @param timeout  how long a PE waits for its peers at one collective before it fails the
  ///                 group with comm_error (a hung or dead peer never hangs the others);
  ///                 0 = wait forever (a peer that fails by throwing still stops the others
  ///                 through abort()). Milliseconds, >= 0.
  /// @throws logic_error for size < 1 or a negative timeout.
  explicit host_comm_group(int size, std::chrono::milliseconds timeout = std::chrono::minutes(5));
  [[nodiscard]] int size() const { return size_; }

  /// Marks the group failed: every PE waiting now or later throws comm_error carrying `why`.
  /// Called by a PE that caught an exception, so that its peers stop instead of waiting forever.
  /// Thread-safe; the first reason is kept.
  void abort(const std::string& why);
  [[nodiscard]] bool aborted() const;
  /// The reason given by the first abort (empty while the group is healthy).
  [[nodiscard]] std::string reason() const;
  /// The per-collective wait limit given at construction (0 = none).
  [[nodiscard]] std::chrono::milliseconds timeout() const { return timeout_; }

  /// Generation barrier of PE `rank` with abort and timeout: returns when all size() PEs have
  /// arrived. `what` names the collective for the messages (a string literal or other storage
  /// that outlives the call). `last`, when not empty, is std::barrier's completion step: the
  /// last PE to arrive runs it once per generation, before any PE is released, so what it
  /// writes is visible to every PE when wait() returns (and no later `last` runs before every
  /// PE has arrived at its next wait()). It must not call the group; if it throws, the
  /// exception leaves that PE's wait() with the generation unfinished (the caller aborts the
  /// group, as trainer::run_pes does).
  /// @returns this PE's wait at the meeting, seconds (steady clock, >= 0): from its arrival
  ///         until the last PE arrived (0 for the last PE itself). The `last` step and the time
  ///         a released PE takes to be scheduled again are not part of it (the standard
  ///         "wait at collective" of MPI and NCCL profilers: synchronisation, not data movement).
  /// @throws comm_error "<what> on PE <rank>: aborted: <reason>" when the group is or becomes
  ///         aborted (the reason of a PE that failed names it), or, after timeout(),
  ///         "<what> on PE <rank>: timed out after <s> s waiting for PE(s) <missing> ..." (the
  ///         timed-out PE aborts the group with that message, so its peers fail at once too).
  double wait(int rank, const char* what = "barrier", const std::function<void()>& last = {});

  /// PEs that have arrived at the meeting now under way (0 .. size()-1; a diagnostic read,
  /// relaxed). A PE counted here has taken its arrival time, so a test can hold one PE back
  /// until its peers all wait and know that their wait covers the delay that follows.
  [[nodiscard]] int arrived() const { return arrived_.load(std::memory_order_relaxed); }

  /// Rendezvous slots for communicators built on this group (peer-copy, NCCL): PE `rank`
  /// publishes a pointer to state it owns, calls wait(), then reads its peers' pointers with
  /// published(q) until its next wait(). The owner keeps the pointed-to state alive and unchanged
  /// until that second wait(), which is what makes the protocol race-free. Every PE must follow
  /// the same sequence of calls (they share the slots with host_communicator's collectives).
  void publish(int rank, const void* state) { ptr_[static_cast<std::size_t>(rank)] = state; }
  [[nodiscard]] const void* published(int q) const { return ptr_[static_cast<std::size_t>(q)]; }

 private:
  friend class host_communicator;

  /// Bit 0 of state_: the group is aborted; bits 1..31: the generation (meetings completed).
  static constexpr std::uint32_t kAborted = 1;
  static constexpr std::uint32_t kGeneration = 2;

  /// Throws comm_error "<what> on PE <rank>: aborted: <reason>".
  [[noreturn]] void throw_aborted(int rank, const char* what) const;
  /// Sleeps until state_ differs from `seen` or `deadline` passes (spurious returns allowed).
  void sleep_while(std::uint32_t seen, std::chrono::steady_clock::time_point deadline) const;
  /// The timed-out PE's path: names the PEs missing from generation `gen`, aborts the group
  /// with that message and throws it.
  [[noreturn]] void fail_timed_out(int rank, const char* what, std::uint32_t gen);

  /// The shared result buffer of the collectives, at least `bytes` long, 64-byte aligned.
  /// Resized only inside a `last` step (no PE reads it then); read by PEs after the wait whose
  /// `last` wrote it, until their next wait.
  std::byte* shared(std::size_t bytes);

  int size_;
  std::chrono::milliseconds timeout_;
  int spins_;  // busy checks before a waiter sleeps (0 when the PEs oversubscribe the cores)
  std::atomic<std::uint32_t> state_{0};
  std::atomic<int> arrived_{0};
  // Steady-clock nanoseconds at which the last PE arrived at the latest meeting: written by
  // that PE before it releases the generation, read by the released PEs before their next
  // arrival (which the next writer waits for), so never read while being written.
  std::atomic<std::int64_t> last_arrival_ns_{0};
  // [size] 1 + the generation PE q arrived at last (0 = never): the timeout names the missing.
  std::unique_ptr<std::atomic<std::uint32_t>[]> here_;
  mutable std::mutex mu_;  // guards why_ (the abort path only)
  std::string why_;
  // Per-PE slots published before the first wait of a collective.
  std::vector<const void*> ptr_;
  /// Where an alltoallv send segment lies in its sender's buffer (bytes).
  struct segment {
    std::int64_t offset = 0, bytes = 0;
  };
  std::vector<const segment*> segments_;  // alltoallv: each PE's send segments [size]
  std::vector<std::int64_t> scalar_;
  // Written by a `last` step, read by every PE after that wait.
  std::string failure_;  // empty, or why the collective fails on every PE
  struct alignas(64) cache_line {
    std::byte bytes[64];
  };
  std::vector<cache_line> shared_;
};

/// One PE's endpoint in a host_comm_group. Not thread-safe: used by its PE thread only.
class host_communicator final : public communicator {
 public:
  /// Host and emulated-device memory (both are heap memory the copies read directly).
  [[nodiscard]] bool serves(const exec_context& ctx) const override { return ctx.runs_on_host(); }
  /// @throws logic_error if rank is outside [0, group.size()).
  host_communicator(std::shared_ptr<host_comm_group> group, int rank);
  [[nodiscard]] int rank() const override { return rank_; }
  [[nodiscard]] int size() const override { return group_->size(); }
  void abort(const std::string& why) override { group_->abort(why); }

 protected:
  /// One meeting: its last PE transposes the P x P counts into the shared buffer, from which
  /// every PE copies its row.
  void do_alltoall(std::span<const std::int64_t> send, std::span<std::int64_t> recv) override;
  /// Checks recv_counts against the senders' counts at the rendezvous (comm_error on a
  /// mismatch, before any copy past a segment), also for alltoallv_agreed: the check costs
  /// nothing here (the counts are published for the copies anyway), so it stays. Two
  /// meetings; each PE reads its segment's place from the sender's published segments, so a PE
  /// does O(P) work besides its copies.
  void do_alltoallv(const void* send, std::span<const std::int64_t> send_counts, void* recv,
                    std::span<const std::int64_t> recv_counts, datatype dtype,
                    cuda::stream_t stream, bool checked) override;
  /// The two meetings of alltoallv's (publish, meet, copy, meet): each receiver reads its counts
  /// from the senders' published counts, allocates, and copies.
  void do_alltoallv_with_counts(const void* send, std::span<const std::int64_t> send_counts,
                                std::span<std::int64_t> recv_counts, const recv_allocator& alloc,
                                datatype dtype, cuda::stream_t stream) override;
  /// Every element is summed in rank order, ((T{} + x_0) + x_1) + ... + x_{P-1}, into the
  /// group's shared buffer, which every PE then copies into `recv`. Small sums (P x count up to
  /// kSerialSumElements) are made by the last PE to arrive at the one meeting; larger ones are
  /// a reduce-scatter (PE c sums its cache-line-aligned chunk c of every PE's buffer, one PE's
  /// buffer after the other) and an all-gather from the shared buffer: two meetings, n/P x P
  /// additions and n copies per PE. Bitwise equal to the rank-order sum of whole buffers.
  void do_allreduce_sum(const void* send, void* recv, std::size_t count, datatype dtype,
                        cuda::stream_t stream) override;
  /// One meeting: its last PE checks the sizes and copies the root's bytes into the shared
  /// buffer, which every PE then copies into `recv`.
  void do_broadcast(const void* send, void* recv, std::size_t count, datatype dtype, int root,
                    cuda::stream_t stream) override;
  void do_barrier() override;

 private:
  /// Largest P x count summed by one thread in the all-reduce's meeting rather than split
  /// across the PEs behind a second meeting (a meeting costs a wake-up of every PE; this many
  /// additions cost about as much on one core).
  static constexpr std::size_t kSerialSumElements = 32768;

  template <typename T>
  void reduce_scatter_gather(const T* send, T* recv, std::size_t n);
  /// logic_error unless `stream` is null (this communicator moves heap memory on the host).
  void expect_host_stream(cuda::stream_t stream, const char* what) const;
  /// host_comm_group::wait of this PE, its wait added to stats_.wait_seconds.
  void meet(const char* what, const std::function<void()>& last = {});
  /// If a `last` step recorded a failure, aborts the group with it and throws comm_error.
  void throw_if_failed() const;

  std::shared_ptr<host_comm_group> group_;
  int rank_;
  std::vector<host_comm_group::segment> send_segments_;  // alltoallv: this PE's, [size]
};

}  // namespace coopgnn
