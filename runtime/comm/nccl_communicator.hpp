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
/// on the host; each call first makes ctx.comm() wait for ctx.compute(), enqueues the NCCL work
/// on ctx.comm(), then polls cudaStreamQuery + ncclCommGetAsyncError (with the group's abort
/// flag and timeout) until it completes, so outputs are ready and inputs reusable on return.
/// After a failure the NCCL communicator is aborted and every later call throws comm_error.
/// Not thread-safe: used by its PE thread only. Defined only in CUDA builds.
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

  /// Host-side exchange of one int64 per peer (host spans [P]); no NCCL call.
  void alltoall(std::span<const std::int64_t> send, std::span<std::int64_t> recv) override;

  /// Grouped ncclSend / ncclRecv of bytes (ncclUint8): segment q of `send` (device,
  /// send_bytes[q] bytes, segments back to back) goes to PE q, segment q of `recv` (device)
  /// comes from PE q. Empty segments post nothing. The counts are first checked on the host
  /// against what the peers send (one host alltoall), so a mismatch is a comm_error on the PE
  /// that sees it (and then on all, through the group abort) rather than an NCCL hang.
  void alltoallv(const std::byte* send, std::span<const std::int64_t> send_bytes, std::byte* recv,
                 std::span<const std::int64_t> recv_bytes) override;

  /// alltoallv without the count check: the counts were agreed earlier (the interface's
  /// contract), so no host alltoall and no rendezvous precede the grouped ncclSend / ncclRecv.
  /// Counts that disagree are the caller's bug: the receive may be truncated or garbage, or the
  /// wait ends in comm_error at the group's timeout. Everything else as alltoallv.
  void alltoallv_agreed(const std::byte* send, std::span<const std::int64_t> send_bytes,
                        std::byte* recv, std::span<const std::int64_t> recv_bytes) override;

  /// In-place sum of `data` (device, same n on every PE); order per nccl_allreduce.
  /// Sizes are checked on the host first (comm_error on a mismatch).
  void allreduce_sum(std::span<float> data) override;
  void allreduce_sum(std::span<double> data) override;
  void allreduce_sum(std::span<std::int64_t> data) override;

  /// ncclBroadcast of device bytes from PE `root`, in place. Sizes checked on the host first.
  /// @throws logic_error for a root outside [0, P); comm_error for a size mismatch.
  void broadcast(std::span<std::byte> data, int root) override;

  /// Host barrier (the comm stream is idle between collectives).
  void barrier() override;
  void abort(const std::string& why) override { group_->host()->abort(why); }

 private:
  template <typename T>
  void allreduce_impl(std::span<T> data);
  void begin(const char* what);
  void finish(const char* what);
  void wait_ready(const char* what);
  void abort_comm() noexcept;
  void on_failure() noexcept;  // abort_comm, then order compute after comm
  void check_sizes_equal(std::int64_t mine, const char* what);
  void alltoallv_impl(const std::byte* send, std::span<const std::int64_t> send_bytes,
                      std::byte* recv, std::span<const std::int64_t> recv_bytes, bool check);

  host_communicator host_;
  std::shared_ptr<nccl_comm_group> group_;
  const cuda::cuda_context& ctx_;
  nccl_allreduce reduce_;
  ncclComm* comm_ = nullptr;
  cuda::event_t ready_ = nullptr;
};

}  // namespace coopgnn
