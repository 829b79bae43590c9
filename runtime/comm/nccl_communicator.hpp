// NCCL communicator: one NCCL rank per PE thread of one process, one device per PE
// (docs/design.md section 1, comm). Communicators are non-blocking (ncclConfig_t::blocking = 0) so
// that every wait polls and can give up: a failed peer, an NCCL asynchronous error or a timeout
// aborts the NCCL communicator (ncclCommAbort) and throws comm_error instead of hanging (the RAFT
// sync_stream habit).
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <memory>

#include "runtime/comm/host_communicator.hpp"
#include "runtime/core/cuda_context.hpp"

struct ncclComm;  // NCCL's opaque communicator (ncclComm_t = ncclComm*)

namespace coopgnn {

/// Shared state of the P NCCL ranks of one process: the NCCL unique id (ncclGetUniqueId, called
/// once here) and a host_comm_group for host-side exchanges, the abort flag and the timeout.
/// Defined only in CUDA builds.
class nccl_comm_group {
 public:
  /// @param size     number of PEs (>= 1)
  /// @param timeout  limit of every wait (initialisation included) before the group fails
  /// @throws logic_error for size < 1; comm_error when ncclGetUniqueId fails.
  explicit nccl_comm_group(int size, std::chrono::milliseconds timeout = std::chrono::minutes(10));
  /// Number of PEs (NCCL ranks).
  [[nodiscard]] int size() const { return host_->size(); }
  /// The host rendezvous of the group: abort flag, reason, timeout, host-side exchanges.
  [[nodiscard]] const std::shared_ptr<host_comm_group>& host() const { return host_; }
  /// The ncclUniqueId's bytes (NCCL_UNIQUE_ID_BYTES = 128).
  [[nodiscard]] const std::array<char, 128>& unique_id() const { return id_; }

 private:
  std::shared_ptr<host_comm_group> host_;
  std::array<char, 128> id_{};
};

/// How nccl_communicator sums floating-point all-reduces.
enum class nccl_allreduce {
  /// ncclAllGather into a [P, n] staging buffer, then the rank-order sum of peer_communicator:
  /// bitwise equal to the host loop in rank order and identical on every PE (the interface's
  /// contract). Moves P * n elements per PE instead of ~2n, and allocates P * n from the pool.
  rank_order,
  /// ncclAllReduce(ncclSum): NCCL's ring/tree order, identical on every PE but not equal to the
  /// rank-order host sum for float/double (integers are exact either way).
  native,
};

/// One PE's NCCL endpoint. Memory spaces, ordering and waits as peer_communicator: byte buffers
/// and all-reduce spans are DEVICE memory of this PE's device; counts are host spans exchanged
/// on the host; each call first makes ctx.comm() wait for the stream it is given (ctx.compute()
/// for the calls without a stream), enqueues the NCCL work on ctx.comm(), then polls
/// cudaStreamQuery + ncclCommGetAsyncError (with the group's abort flag and timeout) until it
/// completes, so outputs are ready and inputs reusable on return. After a failure the NCCL
/// communicator is aborted and every later call throws comm_error. Not thread-safe: used by its PE
/// thread only. Defined only in CUDA builds.
class nccl_communicator final : public communicator {
 public:
  /// The memory of CUDA contexts.
  [[nodiscard]] bool serves(const exec_context& ctx) const override {
    return ctx.get_backend() == backend::cuda;
  }
  /// Initialises rank `rank` (ncclCommInitRankConfig, non-blocking, polled). Collective: the P
  /// PEs construct their communicators concurrently, each on its own thread (as NCCL requires;
  /// make_device_communicators does this). First exchanges the PEs' devices on the host and
  /// refuses two PEs on one device (NCCL would fail or hang).
  /// @param ctx  this PE's context; must outlive the communicator.
  /// @throws logic_error for a bad rank or a device shared between PEs (on every PE);
  ///         comm_error when NCCL initialisation fails, a peer fails, or the timeout passes.
  nccl_communicator(std::shared_ptr<nccl_comm_group> group, int rank, const cuda::cuda_context& ctx,
                    nccl_allreduce reduce = nccl_allreduce::rank_order);
  /// Releases the NCCL communicator with ncclCommAbort: it is idle (every collective has
  /// completed on return), and abort, unlike finalize + destroy, never waits for the peers, so
  /// the communicators of a group may be destroyed in any order. Never throws; logs failures.
  ~nccl_communicator() override;
  nccl_communicator(const nccl_communicator&) = delete;
  nccl_communicator& operator=(const nccl_communicator&) = delete;

  [[nodiscard]] int rank() const override { return host_.rank(); }
  [[nodiscard]] int size() const override { return host_.size(); }

  /// The compute stream of the context: what the calls without a stream are ordered after.
  [[nodiscard]] cuda::stream_t default_stream() const override { return ctx_.compute(); }
  /// False: NCCL's PEs meet inside its kernels, where no arrival time reaches the host, so
  /// stats().wait_seconds stays 0 (unmeasured, not zero) and the waiting is in `seconds`.
  [[nodiscard]] bool measures_wait() const override { return false; }
  void abort(const std::string& why) override { group_->host()->abort(why); }

 protected:
  /// Host-side exchange of one int64 per peer (host spans [P]); no NCCL call.
  void do_alltoall(std::span<const std::int64_t> send, std::span<std::int64_t> recv) override;

  /// Grouped ncclSend / ncclRecv of bytes (ncclUint8): segment q of `send` (device,
  /// send_counts[q] elements, segments back to back) goes to PE q, segment q of `recv` (device)
  /// comes from PE q. Empty segments post nothing. With `checked` (alltoallv) the counts are
  /// first checked on the host against what the peers send (one host alltoall), so a mismatch
  /// is a comm_error on the PE that sees it (and then on all, through the group abort) rather
  /// than an NCCL hang. Without it (alltoallv_agreed) no host alltoall and no rendezvous precede
  /// the grouped calls: counts that disagree are the caller's bug (the receive may be truncated
  /// or garbage, or the wait ends in comm_error at the group's timeout); and the call returns
  /// once the grouped calls are enqueued, with `stream` made to wait for them (no host wait for
  /// the device; see communicator::alltoallv_agreed): an NCCL error or a missing peer is then
  /// reported by the next call that waits.
  void do_alltoallv(const void* send, std::span<const std::int64_t> send_counts, void* recv,
                    std::span<const std::int64_t> recv_counts, datatype dtype,
                    cuda::stream_t stream, bool checked) override;

  /// The counts through the host rendezvous (one host alltoall: the same as the checked
  /// alltoallv's check), the allocation on `stream`, then the grouped send/recv, enqueued and
  /// ordered before `stream`'s later work as alltoallv_agreed is (no host wait for the device).
  void do_alltoallv_with_counts(const void* send, std::span<const std::int64_t> send_counts,
                                std::span<std::int64_t> recv_counts, const recv_allocator& alloc,
                                datatype dtype, cuda::stream_t stream) override;

  /// Sum of `send` (device, same n on every PE) into `recv`; order per nccl_allreduce.
  /// Sizes are checked on the host first (comm_error on a mismatch).
  void do_allreduce_sum(const void* send, void* recv, std::size_t count, datatype dtype,
                        cuda::stream_t stream) override;

  /// ncclBroadcast of device memory from PE `root`. Sizes checked on the host first.
  /// @throws logic_error for a root outside [0, P); comm_error for a size mismatch.
  void do_broadcast(const void* send, void* recv, std::size_t count, datatype dtype, int root,
                    cuda::stream_t stream) override;

  /// Host barrier (the comm stream is idle between collectives).
  void do_barrier() override;

 private:
  void begin(const char* what);
  /// begin(), then the self segment and one grouped ncclSend / ncclRecv per peer on ctx.comm();
  /// counts the traffic. Byte counts [P] host.
  void send_recv(const char* what, const std::byte* send, std::span<const std::int64_t> send_bytes,
                 std::byte* recv, std::span<const std::int64_t> recv_bytes);
  void finish(const char* what);
  /// Waits until the NCCL calls are enqueued, then makes caller_ wait for ctx.comm() (no host
  /// wait for the device).
  void enqueued(const char* what);
  void wait_ready(const char* what);
  void abort_comm() noexcept;
  void on_failure() noexcept;  // abort_comm, then order the caller's stream after comm
  void check_sizes_equal(std::int64_t mine, const char* what);

  host_communicator host_;
  std::shared_ptr<nccl_comm_group> group_;
  const cuda::cuda_context& ctx_;
  nccl_allreduce reduce_;
  ncclComm* comm_ = nullptr;
  cuda::event_t ready_ = nullptr;
  cuda::stream_t caller_ = nullptr;  // the stream of the current collective (after its check)
};

}  // namespace coopgnn
