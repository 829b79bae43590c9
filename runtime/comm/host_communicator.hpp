// Host communicator: P PE threads of one process exchange data through shared slots guarded by
// a barrier that can be aborted (docs/design.md section 1, comm).
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/comm/communicator.hpp"

namespace coopgnn {

/// Shared state of a group of host PEs. Create one per group, then one host_communicator per PE.
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
  void abort(const std::string& why);
  [[nodiscard]] bool aborted() const;
  /// The reason given by the first abort (empty while the group is healthy).
  [[nodiscard]] std::string reason() const;
  /// The per-collective wait limit given at construction (0 = none).
  [[nodiscard]] std::chrono::milliseconds timeout() const { return timeout_; }

  /// Generation barrier of PE `rank` with abort and timeout: returns when all size() PEs have
  /// arrived. `what` names the collective for the messages (a string literal or other storage
  /// that outlives the call). `last`, when not empty, is std::barrier's completion step: the
  /// last PE to arrive runs it once per generation, under the group's lock, before any PE is
  /// released, so what it writes is visible to every PE when wait() returns (and no later
  /// `last` runs before every PE has arrived at its next wait()). It must not call the group;
  /// if it throws, the exception leaves that PE's wait() with the generation unfinished (the
  /// caller aborts the group, as trainer::run_pes does).
  /// @throws comm_error "<what> on PE <rank>: aborted: <reason>" when the group is or becomes
  ///         aborted (the reason of a PE that failed names it), or, after timeout(),
  ///         "<what> on PE <rank>: timed out after <s> s waiting for PE(s) <missing> ..." (the
  ///         timed-out PE aborts the group with that message, so its peers fail at once too).
  void wait(int rank, const char* what = "barrier", const std::function<void()>& last = {});

  /// Rendezvous slots for communicators built on this group (peer-copy, NCCL): PE `rank`
  /// publishes a pointer to state it owns, calls wait(), then reads its peers' pointers with
  /// published(q) until its next wait(). The owner keeps the pointed-to state alive and unchanged
  /// until that second wait(), which is what makes the protocol race-free. Every PE must follow
  /// the same sequence of calls (they share the slots with host_communicator's collectives).
  void publish(int rank, const void* state) { ptr_[static_cast<std::size_t>(rank)] = state; }
  [[nodiscard]] const void* published(int q) const { return ptr_[static_cast<std::size_t>(q)]; }

 private:
  friend class host_communicator;

  int size_;
  std::chrono::milliseconds timeout_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  int arrived_ = 0;
  std::vector<char> here_;  // [size] PE q has arrived at the current generation
  std::uint64_t generation_ = 0;
  bool aborted_ = false;
  std::string why_;
  // Per-PE slots published between the two barriers of a collective.
  std::vector<const void*> ptr_;
  std::vector<const void*> recv_;  // all-reduce: each PE's output, read in the all-gather
  std::vector<const std::int64_t*> counts_;
  std::vector<std::int64_t> scalar_;
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
  void do_alltoall(std::span<const std::int64_t> send, std::span<std::int64_t> recv) override;
  /// Checks recv_counts against the senders' counts at the rendezvous (comm_error on a
  /// mismatch, before any copy past a segment), also for alltoallv_agreed: the check costs
  /// nothing here (the counts are published for the copies anyway), so it stays.
  void do_alltoallv(const void* send, std::span<const std::int64_t> send_counts, void* recv,
                    std::span<const std::int64_t> recv_counts, datatype dtype,
                    cuda::stream_t stream, bool checked) override;
  /// One rendezvous of alltoallv's (publish, wait, copy, wait): each receiver reads its counts
  /// from the senders' published counts, allocates, and copies.
  void do_alltoallv_with_counts(const void* send, std::span<const std::int64_t> send_counts,
                                std::span<std::int64_t> recv_counts, const recv_allocator& alloc,
                                datatype dtype, cuda::stream_t stream) override;
  /// Reduce-scatter + all-gather: PE c sums chunk c (of P near-equal chunks) over PEs
  /// 0..P-1 in rank order, then every PE copies every chunk; n additions and n copies per PE,
  /// three rendezvous. Bitwise equal to the rank-order sum of whole buffers.
  void do_allreduce_sum(const void* send, void* recv, std::size_t count, datatype dtype,
                        cuda::stream_t stream) override;
  void do_broadcast(const void* send, void* recv, std::size_t count, datatype dtype, int root,
                    cuda::stream_t stream) override;
  void do_barrier() override;

 private:
  template <typename T>
  void reduce_scatter_gather(const T* send, T* recv, std::size_t n);
  /// logic_error unless `stream` is null (this communicator moves heap memory on the host).
  void expect_host_stream(cuda::stream_t stream, const char* what) const;

  std::shared_ptr<host_comm_group> group_;
  int rank_;
};

}  // namespace coopgnn
