// Communicator interface of the PEs (docs/design.md sections 1 and 6): all-to-all-v, all-reduce,
// broadcast and barrier. The host implementation (host_communicator.hpp) connects PE threads of
// one process; the CUDA backend adds peer-copy and NCCL implementations behind the same calls.
//
// Shape (RAFT's comms_iface): each collective is one type-erased virtual call of the
// implementation, taking (send, recv, element counts, datatype, stream); the typed calls the
// pipeline uses (allreduce_sum(std::span<float>), alltoallv on bytes, ...) are written once,
// here, over that core. The stream is explicit in the core: the stream on which the inputs were
// produced and after which the outputs are read (a device communicator's work is ordered after
// it; nullptr for the host communicator, whose buffers are heap memory). The typed calls without
// a stream pass default_stream(): the compute stream of a device communicator's context.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "runtime/core/cuda_context.hpp"
#include "runtime/core/exec_context.hpp"

namespace coopgnn {

/// Element type of a type-erased collective (RAFT's datatype_t, restricted to what is moved).
enum class datatype : std::uint8_t {
  uint8,    ///< bytes (alltoallv and broadcast payloads); not summable
  int64,    ///< std::int64_t
  float32,  ///< float
  float64,  ///< double
};

/// Bytes of one element of `t`.
[[nodiscard]] constexpr std::size_t size_of(datatype t) {
  switch (t) {
    case datatype::uint8:
      return 1;
    case datatype::int64:
    case datatype::float64:
      return 8;
    case datatype::float32:
      return 4;
  }
  return 1;
}

/// The datatype of element type T (std::byte, std::int64_t, float or double).
template <class T>
constexpr datatype datatype_of() {
  using U = std::remove_cv_t<T>;
  if constexpr (std::is_same_v<U, std::byte> || std::is_same_v<U, std::uint8_t>) {
    return datatype::uint8;
  } else if constexpr (std::is_same_v<U, std::int64_t>) {
    return datatype::int64;
  } else if constexpr (std::is_same_v<U, float>) {
    return datatype::float32;
  } else {
    static_assert(std::is_same_v<U, double>, "collectives move bytes, int64, float or double");
    return datatype::float64;
  }
}

namespace detail {
/// Throws logic_error "<what>: <datatype> elements cannot be summed" (communicator.cpp; kept
/// out of line so that this header stays free of fmt, which nvcc cannot compile).
[[noreturn]] void throw_not_summable(const char* what, datatype t);
}  // namespace detail

/// Calls f(T{}) with T the element type of `t` among those an all-reduce sums (int64, float,
/// double): how an implementation turns the type-erased core back into its typed loop.
/// @throws logic_error "<what>: ..." for datatype::uint8 (bytes are not summed).
template <class F>
void visit_summable(datatype t, const char* what, F&& f) {
  switch (t) {
    case datatype::int64:
      f(std::int64_t{});
      return;
    case datatype::float32:
      f(float{});
      return;
    case datatype::float64:
      f(double{});
      return;
    case datatype::uint8:
      break;
  }
  detail::throw_not_summable(what, t);
}

/// Traffic and time counters of one PE's communicator. Bytes count only data that leaves the PE
/// (self-sends are free), so they measure what a link would carry.
struct comm_stats {
  std::int64_t alltoall_bytes_sent = 0;  ///< bytes sent to other PEs by alltoallv
  std::int64_t alltoall_bytes_recv = 0;  ///< bytes received from other PEs by alltoallv
  std::int64_t allreduce_bytes = 0;      ///< payload bytes this PE contributed to all-reduces
  /// alltoallv calls (alltoallv_agreed and alltoallv_with_counts included)
  std::int64_t alltoall_calls = 0;
  /// Every collective operation on a group of more than one PE: the counts alltoall, alltoallv
  /// (agreed or not), all-reduce, broadcast and barrier, one each; alltoallv_with_counts counts
  /// two, the counts exchange it carries and the data, so that this number is the protocol's
  /// operations whether or not the counts ride with the data (`calls` counts the calls). A
  /// one-PE group counts none (nothing crosses a link; its calls are copies).
  std::int64_t collectives = 0;
  /// Collective calls on a group of more than one PE, one per call whatever it carries: what
  /// pays a collective's fixed cost (a rendezvous, an NCCL launch). collectives - calls is the
  /// number of counts exchanges that rode with their data (alltoallv_with_counts).
  std::int64_t calls = 0;
  /// Counts exchanges made as calls of their own (alltoall) on a group of more than one PE.
  std::int64_t count_exchanges = 0;
  /// Wall time inside collective calls, seconds: transfer and waiting together.
  double seconds = 0.0;
  /// The part of `seconds` spent waiting at meetings for the last PE of the group to arrive
  /// (from this PE's arrival until the last arrival; host_comm_group::wait), seconds. The rest,
  /// seconds - wait_seconds, is transfer: copies, reductions, and being scheduled again once
  /// released. Measured where communicator::measures_wait() is true; 0 otherwise.
  double wait_seconds = 0.0;
  /// The calling thread's CPU time inside collective calls (CLOCK_THREAD_CPUTIME_ID), seconds:
  /// copies, reductions, enqueueing and polling. A thread waiting at a meeting sleeps and uses
  /// none, so seconds - wait_seconds - cpu_seconds is time the PE thread was ready but had no
  /// core (more PE threads than cores) or was blocked otherwise (a device copy it waits for).
  double cpu_seconds = 0.0;
};

/// One PE's endpoint of a group of `size()` PEs. Every call is collective: all PEs of the group
/// must make the same sequence of calls (with the same datatype). A failure on any PE (an
/// exception, a timeout) makes the pending and all later calls on every PE throw
/// coopgnn::comm_error instead of hanging. Every call returns when its outputs are complete
/// (readable from any stream) and its inputs reusable, except where a device communicator says
/// it returns once enqueued (alltoallv_agreed and alltoallv_with_counts on NCCL): then the
/// outputs are ready, and the inputs reusable, for work ordered after the call on its stream.
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

  /// Whether stats().wait_seconds measures the waiting inside this communicator's calls: true
  /// for the host and peer-copy communicators (their PEs meet on the host, where each PE's
  /// arrival time is known); false for NCCL, whose PEs meet inside the device's kernels, with no
  /// arrival time on the host (its wait_seconds stays 0, and its waiting is in `seconds`).
  [[nodiscard]] virtual bool measures_wait() const { return true; }

  /// The stream the calls without a stream argument order their work after: nullptr for the
  /// host communicator; the compute stream of a device communicator's context.
  [[nodiscard]] virtual cuda::stream_t default_stream() const { return nullptr; }

  /// Exchanges one int64 per peer: recv[q] = what PE q passed as send[rank()]. Host memory on
  /// every communicator (counts), no stream.
  /// @param send [size()] values, send[q] goes to PE q; @param recv [size()] output.
  void alltoall(std::span<const std::int64_t> send, std::span<std::int64_t> recv) {
    if (size() > 1) ++stats_.count_exchanges;
    do_alltoall(send, recv);
  }

  /// All-to-all-v of `dtype` elements. `send` holds the segments for PEs 0..P-1 back to back,
  /// segment q having send_counts[q] elements; `recv` receives the segments from PEs 0..P-1
  /// back to back, with recv_counts[q] (from a prior alltoall of the counts) elements from PE q.
  /// Counts are host spans [size()], >= 0; empty segments are fine (null buffers when a side is
  /// empty). Buffers are serves() memory, ordered after `stream` (nullptr on the host). send
  /// and recv must not overlap.
  /// @throws comm_error if a peer failed or recv_counts disagree with what the peers send;
  ///         logic_error for spans of the wrong length or a stream the communicator cannot use.
  void alltoallv(const void* send, std::span<const std::int64_t> send_counts, void* recv,
                 std::span<const std::int64_t> recv_counts, datatype dtype, cuda::stream_t stream) {
    do_alltoallv(send, send_counts, recv, recv_counts, dtype, stream, true);
  }
  /// alltoallv on bytes (datatype::uint8) after default_stream().
  void alltoallv(const std::byte* send, std::span<const std::int64_t> send_bytes, std::byte* recv,
                 std::span<const std::int64_t> recv_bytes) {
    do_alltoallv(send, send_bytes, recv, recv_bytes, datatype::uint8, default_stream(), true);
  }

  /// All-to-all-v whose counts both sides agreed on earlier in the step: recv_counts[q] is what
  /// PE q passes as send_counts[rank()], because the counts went through an alltoall before (or
  /// came from a plan built from one; cooperative minibatching exchanges them once per layer
  /// while sampling, docs/design.md section 6.2). Buffers, memory spaces, stream order and
  /// completion are those of alltoallv. The difference: an implementation may skip checking
  /// the counts against the senders'. The NCCL communicator does (no host count exchange and no
  /// rendezvous before the grouped send/recv), so counts that disagree there are a caller bug
  /// with undefined results (a truncated or garbage receive, or an NCCL wait that ends in
  /// comm_error at the timeout). The host and peer-copy communicators keep the check, since the
  /// counts ride their rendezvous anyway: a mismatch there is comm_error on every PE, as in
  /// alltoallv, and never a copy out of bounds. NCCL also returns as soon as the exchange is
  /// enqueued, with `stream` ordered after it (no host wait for the device between a step's
  /// agreed exchanges and its kernels); its failures are reported by the next call that waits.
  /// @throws comm_error if a peer failed (and, where checked, when the counts disagree).
  void alltoallv_agreed(const void* send, std::span<const std::int64_t> send_counts, void* recv,
                        std::span<const std::int64_t> recv_counts, datatype dtype,
                        cuda::stream_t stream) {
    do_alltoallv(send, send_counts, recv, recv_counts, dtype, stream, false);
  }
  /// alltoallv_agreed on bytes (datatype::uint8) after default_stream().
  void alltoallv_agreed(const std::byte* send, std::span<const std::int64_t> send_bytes,
                        std::byte* recv, std::span<const std::int64_t> recv_bytes) {
    do_alltoallv(send, send_bytes, recv, recv_bytes, datatype::uint8, default_stream(), false);
  }

  /// Where alltoallv_with_counts receives: called once per call on the receiving PE with the
  /// number of `dtype` elements that arrive (sum of the learnt counts, >= 0), after the counts
  /// are known and before any data is copied; returns that many elements of serves() memory
  /// (ordered on the call's stream: a device allocation on it is fine), which the caller owns.
  /// It may return nullptr for 0 elements. If it throws, this PE rethrows that exception once
  /// its peers have stopped reading its send, and aborts the group: the peers fail with
  /// comm_error in this call or, at the latest, in their next one.
  using recv_allocator = std::function<void*(std::int64_t elements)>;

  /// All-to-all-v whose receivers learn the counts in the same call: the counts all-to-all and
  /// the all-to-all-v of alltoall + alltoallv fused, so one collective call (one rendezvous or
  /// NCCL group) where there were two. Each PE passes its send segments (back to back, segment q
  /// of send_counts[q] elements for PE q); on return recv_counts[q] holds what PE q sent here,
  /// and the buffer `alloc` returned holds the segments of PEs 0..P-1 back to back. Counts are
  /// host spans [size()], >= 0; buffers serves() memory, ordered after `stream` (nullptr on the
  /// host); send is reusable and the received data ready on return (as alltoallv). Counts
  /// towards stats: one call, two collectives (the counts exchange and the data).
  /// @throws comm_error if a peer failed (see recv_allocator for `alloc` throwing); logic_error
  ///         for spans of the wrong length or a stream the communicator cannot use.
  void alltoallv_with_counts(const void* send, std::span<const std::int64_t> send_counts,
                             std::span<std::int64_t> recv_counts, const recv_allocator& alloc,
                             datatype dtype, cuda::stream_t stream) {
    do_alltoallv_with_counts(send, send_counts, recv_counts, alloc, dtype, stream);
  }

  /// Sum across PEs: recv[i] = ((T{} + send_0[i]) + send_1[i]) + ... + send_{P-1}[i], in rank
  /// order on every PE, so every PE ends with bitwise-identical values (the NCCL communicator's
  /// `native` mode sums floats in NCCL's order instead, see nccl_communicator.hpp). `count`
  /// elements of `dtype` (int64, float32 or float64), equal on every PE; send == recv is the
  /// in-place sum, otherwise the buffers must not overlap. serves() memory, after `stream`.
  /// @throws comm_error when the counts differ between PEs (every PE detects it) or a peer
  ///         failed; logic_error for datatype::uint8 or a stream the communicator cannot use.
  void allreduce_sum(const void* send, void* recv, std::size_t count, datatype dtype,
                     cuda::stream_t stream) {
    do_allreduce_sum(send, recv, count, dtype, stream);
  }
  /// In-place allreduce_sum of `data` after `stream`.
  template <class T>
  void allreduce_sum(std::span<T> data, cuda::stream_t stream) {
    do_allreduce_sum(data.data(), data.data(), data.size(), datatype_of<T>(), stream);
  }
  /// In-place allreduce_sum of `data` after default_stream().
  void allreduce_sum(std::span<float> data) { allreduce_sum(data, default_stream()); }
  void allreduce_sum(std::span<double> data) { allreduce_sum(data, default_stream()); }
  void allreduce_sum(std::span<std::int64_t> data) { allreduce_sum(data, default_stream()); }

  /// Copies `count` elements of `dtype` from `send` of PE `root` into `recv` of every PE (the
  /// root's own recv too; send == recv is in place; `send` is read on the root only). Equal
  /// counts required. serves() memory, after `stream`.
  /// @throws logic_error for a root outside [0, size()); comm_error for a count mismatch or a
  ///         failed peer.
  void broadcast(const void* send, void* recv, std::size_t count, datatype dtype, int root,
                 cuda::stream_t stream) {
    do_broadcast(send, recv, count, dtype, root, stream);
  }
  /// In-place broadcast of bytes from PE `root` after default_stream().
  void broadcast(std::span<std::byte> data, int root) {
    do_broadcast(data.data(), data.data(), data.size(), datatype::uint8, root, default_stream());
  }

  /// Returns when every PE has called it (host rendezvous; device streams are idle between
  /// collectives, so there is nothing else to wait for).
  void barrier() { do_barrier(); }

  /// Marks the whole group failed with `why`: every PE waiting in a collective now or later
  /// throws comm_error. A PE thread that caught an exception outside a collective calls this so
  /// that its peers stop instead of waiting for it (collectives that fail do it themselves).
  /// Thread-safe; the first reason is kept.
  virtual void abort(const std::string& why) = 0;

  [[nodiscard]] const comm_stats& stats() const { return stats_; }
  void reset_stats() { stats_ = comm_stats{}; }

 protected:
  // The type-erased core: one virtual call per collective, with the contracts of the public
  // calls above. `checked` is false for alltoallv_agreed.
  virtual void do_alltoall(std::span<const std::int64_t> send, std::span<std::int64_t> recv) = 0;
  virtual void do_alltoallv(const void* send, std::span<const std::int64_t> send_counts, void* recv,
                            std::span<const std::int64_t> recv_counts, datatype dtype,
                            cuda::stream_t stream, bool checked) = 0;
  virtual void do_alltoallv_with_counts(const void* send, std::span<const std::int64_t> send_counts,
                                        std::span<std::int64_t> recv_counts,
                                        const recv_allocator& alloc, datatype dtype,
                                        cuda::stream_t stream) = 0;
  virtual void do_allreduce_sum(const void* send, void* recv, std::size_t count, datatype dtype,
                                cuda::stream_t stream) = 0;
  virtual void do_broadcast(const void* send, void* recv, std::size_t count, datatype dtype,
                            int root, cuda::stream_t stream) = 0;
  virtual void do_barrier() = 0;

  /// The byte counts of an all-to-all-v: send_counts and recv_counts ([size()] elements of
  /// `dtype` each) times size_of(dtype), what the byte-moving implementations use.
  struct byte_counts {
    std::vector<std::int64_t> send, recv;
  };
  /// @throws logic_error "alltoallv needs P counts per PE, got send S recv R" for spans of
  ///         another length than size().
  [[nodiscard]] byte_counts alltoallv_bytes(std::span<const std::int64_t> send_counts,
                                            std::span<const std::int64_t> recv_counts,
                                            datatype dtype) const;

  /// Counts one collective call carrying `operations` collective operations (2 for
  /// alltoallv_with_counts: the counts and the data) in stats_ (when size() > 1). Every
  /// collective of an implementation calls it once, at its start.
  void count_collective(int operations = 1) {
    if (size() <= 1) return;
    ++stats_.calls;
    stats_.collectives += operations;
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
/// elements for PE q). The counts travel with the data (communicator::alltoallv_with_counts: one
/// collective call); returns what PEs 0..P-1 sent here, back to back, and writes the per-source
/// counts to `recv_counts` [P]. Host memory (the host communicator).
template <typename T>
std::vector<T> alltoallv(communicator& comm, std::span<const T> send,
                         std::span<const std::int64_t> send_counts,
                         std::vector<std::int64_t>& recv_counts) {
  auto const p = static_cast<std::size_t>(comm.size());
  auto const item = static_cast<std::int64_t>(sizeof(T));
  std::vector<std::int64_t> sb(send_counts.begin(), send_counts.end()), rb(p, 0);
  for (auto& b : sb) b *= item;
  std::vector<T> recv;
  comm.alltoallv_with_counts(
      send.data(), sb, rb,
      [&recv, item](std::int64_t bytes) -> void* {
        recv.resize(static_cast<std::size_t>(bytes / item));
        return recv.data();
      },
      datatype::uint8, comm.default_stream());
  recv_counts.assign(p, 0);
  for (std::size_t q = 0; q < p; ++q) recv_counts[q] = rb[q] / item;
  return recv;
}

}  // namespace coopgnn
