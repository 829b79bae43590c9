// Communicator interface of the PEs (docs/design.md sections 1 and 6): all-to-all-v, all-reduce,
// broadcast and barrier. The host implementation (host_communicator.hpp) connects PE threads of
// one process; the CUDA backend adds peer-copy and NCCL implementations behind the same calls.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "runtime/core/exec_context.hpp"

namespace coopgnn {

/// Traffic and time counters of one PE's communicator. Bytes count only data that leaves the PE
/// (self-sends are free), so they measure what a link would carry.
struct comm_stats {
  std::int64_t alltoall_bytes_sent = 0;  ///< bytes sent to other PEs by alltoallv
  std::int64_t alltoall_bytes_recv = 0;  ///< bytes received from other PEs by alltoallv
  std::int64_t allreduce_bytes = 0;      ///< payload bytes this PE contributed to all-reduces
  std::int64_t alltoall_calls = 0;        ///< alltoallv calls (alltoallv_agreed included)
  /// Every collective call on a group of more than one PE: the counts alltoall, alltoallv
  /// (agreed or not), all-reduce, broadcast and barrier, one each. A one-PE group counts none
  /// (nothing crosses a link; its calls are copies).
  std::int64_t collectives = 0;
  double seconds = 0.0;  ///< wall time inside collective calls (incl. waiting)
};

/// One PE's endpoint of a group of `size()` PEs. Every call is collective: all PEs of the group
/// must make the same sequence of calls. A failure on any PE (an exception, a timeout) makes the
/// pending and all later calls on every PE throw coopgnn::comm_error instead of hanging.
class communicator {
 public:
  virtual ~communicator() = default;
  [[nodiscard]] virtual int rank() const = 0;
  [[nodiscard]] virtual int size() const = 0;

  /// Whether this communicator moves the memory `ctx` computes in, i.e. whether the buffers of
  /// alltoallv, allreduce_sum and broadcast may be ctx.space() memory. The host communicator
  /// moves host memory and the emulated device's (heap memory a copy can read); the device
  /// communicators move the memory of CUDA contexts and run on the context's comm() stream
  /// (see peer_communicator.hpp and nccl_communicator.hpp). Counts always stay on the host.
  [[nodiscard]] virtual bool serves(const exec_context& ctx) const = 0;

  /// Exchanges one int64 per peer: recv[q] = what PE q passed as send[rank()].
  /// @param send [size()] values, send[q] goes to PE q; @param recv [size()] output.
  virtual void alltoall(std::span<const std::int64_t> send, std::span<std::int64_t> recv) = 0;

  /// All-to-all-v on bytes. `send` holds the segments for PEs 0..P-1 back to back, segment q
  /// having send_bytes[q] bytes; `recv` receives the segments from PEs 0..P-1 back to back, with
  /// recv_bytes[q] (from a prior alltoall of the counts) bytes from PE q. Empty segments are fine.
  /// @throws comm_error if a peer failed or sizes disagree with what the peer sends.
  virtual void alltoallv(const std::byte* send, std::span<const std::int64_t> send_bytes,
                         std::byte* recv, std::span<const std::int64_t> recv_bytes) = 0;

  /// All-to-all-v on bytes whose counts both sides agreed on earlier in the step: recv_bytes[q]
  /// is what PE q passes as send_bytes[rank()], because the counts went through an alltoall
  /// before (or came from a plan built from one; cooperative minibatching exchanges them once
  /// per layer while sampling, docs/design.md section 6.2). Buffers, memory spaces, stream order
  /// and completion are those of alltoallv (host memory here; a device communicator's buffers are
  /// device memory enqueued on ctx.comm() after ctx.compute(); counts are host spans [size()]).
  /// The difference: an implementation may skip checking the counts against the senders'. The
  /// NCCL communicator does (no host count exchange and no rendezvous before the grouped
  /// send/recv), so counts that disagree there are a caller bug with undefined results (a
  /// truncated or garbage receive, or an NCCL wait that ends in comm_error at the timeout). The
  /// host and peer-copy communicators keep the check, since the counts ride their rendezvous
  /// anyway: a mismatch there is comm_error on every PE, as in alltoallv, and never a copy out
  /// of bounds. This default is alltoallv itself.
  /// @throws comm_error if a peer failed (and, where checked, when the counts disagree).
  virtual void alltoallv_agreed(const std::byte* send, std::span<const std::int64_t> send_bytes,
                                std::byte* recv, std::span<const std::int64_t> recv_bytes) {
    alltoallv(send, send_bytes, recv, recv_bytes);
  }

  /// In-place sum across PEs. The summation order is rank 0, 1, ..., P-1 on every PE, so every
  /// PE ends with bitwise-identical values.
  virtual void allreduce_sum(std::span<float> data) = 0;
  virtual void allreduce_sum(std::span<double> data) = 0;
  virtual void allreduce_sum(std::span<std::int64_t> data) = 0;

  /// Copies `data` of PE `root` into `data` of every PE (equal sizes required).
  virtual void broadcast(std::span<std::byte> data, int root) = 0;

  virtual void barrier() = 0;

  /// Marks the whole group failed with `why`: every PE waiting in a collective now or later
  /// throws comm_error. A PE thread that caught an exception outside a collective calls this so
  /// that its peers stop instead of waiting for it (collectives that fail do it themselves).
  /// Thread-safe; the first reason is kept.
  virtual void abort(const std::string& why) = 0;

  [[nodiscard]] const comm_stats& stats() const { return stats_; }
  void reset_stats() { stats_ = comm_stats{}; }

 protected:
  /// Counts one collective call in stats_.collectives (when size() > 1). Every collective of
  /// an implementation calls it once, at its start.
  void count_collective() {
    if (size() > 1) ++stats_.collectives;
  }
  comm_stats stats_;
};

/// Typed all-to-all-v when both sides already know the counts (e.g. the reverse direction of an
/// earlier exchange): communicator::alltoallv_agreed on host vectors. Elements per PE:
/// send_counts[q] out, recv_counts[q] in (what PE q sends here).
template <typename T>
std::vector<T> alltoallv_known(communicator& comm, std::span<const T> send,
                               std::span<const std::int64_t> send_counts,
                               std::span<const std::int64_t> recv_counts, std::int64_t row = 1) {
  auto const p = static_cast<std::size_t>(comm.size());
  std::vector<std::int64_t> sb(p), rb(p);
  std::int64_t total = 0;
  for (std::size_t q = 0; q < p; ++q) {
    sb[q] = send_counts[q] * row * static_cast<std::int64_t>(sizeof(T));
    rb[q] = recv_counts[q] * row * static_cast<std::int64_t>(sizeof(T));
    total += recv_counts[q] * row;
  }
  std::vector<T> recv(static_cast<std::size_t>(total));
  comm.alltoallv_agreed(reinterpret_cast<const std::byte*>(send.data()), sb,
                        reinterpret_cast<std::byte*>(recv.data()), rb);
  return recv;
}

/// Typed all-to-all-v: `send` holds elements for PEs 0..P-1 back to back (send_counts[q]
/// elements for PE q). Exchanges the counts, then the data; returns what PEs 0..P-1 sent here,
/// back to back, and writes the per-source counts to `recv_counts` [P].
template <typename T>
std::vector<T> alltoallv(communicator& comm, std::span<const T> send,
                         std::span<const std::int64_t> send_counts,
                         std::vector<std::int64_t>& recv_counts) {
  auto const p = static_cast<std::size_t>(comm.size());
  recv_counts.assign(p, 0);
  comm.alltoall(send_counts, recv_counts);
  return alltoallv_known(comm, send, send_counts, recv_counts);
}

}  // namespace coopgnn
