// Peer-copy communicator: PE threads of one process whose buffers are device memory, on one
// device or on devices with P2P access (docs/design.md section 1, comm). Pointers are exchanged on
// the host through a host_comm_group rendezvous; data moves by cudaMemcpyAsync (same device) or
// cudaMemcpyPeerAsync (another device) on each PE's comm stream, ordered by CUDA events.
#pragma once

#include <cstdint>
#include <memory>

#include "runtime/comm/host_communicator.hpp"
#include "runtime/core/cuda_context.hpp"

namespace coopgnn {

/// One PE's endpoint of a device-memory communicator built on a host_comm_group (whose abort
/// flag and timeout it shares: a failed or missing peer makes every PE throw comm_error).
///
/// Memory spaces: the byte buffers of alltoallv and broadcast and the spans of allreduce_sum are
/// DEVICE pointers (on this PE's device, or readable by peers through UVA: device or pinned
/// memory); the counts of alltoall/alltoallv are host memory, as in the interface. Between
/// distinct devices, peers' memory pools must grant access (make_device_communicators does it
/// with cudaDeviceEnablePeerAccess + cudaMemPoolSetAccess where P2P exists; without P2P,
/// cudaMemcpyPeerAsync stages through host memory).
///
/// Ordering: every collective first makes ctx.comm() wait for the work already enqueued on the
/// stream it is given (an event; ctx.compute() for the calls without a stream), so inputs
/// written by kernels on that stream need no extra synchronisation; work on other streams must
/// be joined into it by the caller. Each
/// collective returns when its data has arrived (the comm stream is polled, see below), so the
/// outputs are readable by any stream afterwards and every input buffer may be reused. After a
/// comm_error, copies of the failed call may still be queued on ctx.comm(); the given stream
/// is made to wait for them, so stream-ordered frees on it stay safe, but the host must
/// not reuse those buffers (or free them other than stream-ordered) before ctx.comm() drains.
/// Peers' comm streams may likewise still be reading this PE's inputs of the failed call
/// (their copies wait on events, so they finish): release no pool or device memory to the
/// driver (cudaMemPoolDestroy, trimming, cudaFree) before every PE's context has synchronised.
///
/// Waits: host rendezvous use host_comm_group::wait, whose waits (each PE's host thread from its
/// arrival until the last PE's) are stats().wait_seconds; device completion is polled
/// (cudaStreamQuery) together with the group's abort flag and its timeout. A PE that fails
/// inside a collective aborts the group before it throws.
///
/// Not thread-safe: used by its PE thread only. Non-copyable, non-movable.
class peer_communicator final : public communicator {
 public:
  /// The memory of CUDA contexts.
  [[nodiscard]] bool serves(const exec_context& ctx) const override {
    return ctx.get_backend() == backend::cuda;
  }
  /// @param group  shared by the P PEs of the communicator (size P); may be the group of a
  ///               host_communicator only if both follow the same collective sequence.
  /// @param rank   in [0, group->size())
  /// @param ctx    this PE's context (device, comm and compute streams, pool); must outlive
  ///               the communicator.
  /// @throws logic_error for a null group or a rank out of range; cuda_error when creating the
  ///         event fails. Defined only in CUDA builds (COOPGNN_WITH_CUDA), like cuda_context.
  peer_communicator(std::shared_ptr<host_comm_group> group, int rank,
                    const cuda::cuda_context& ctx);
  ~peer_communicator() override;
  peer_communicator(const peer_communicator&) = delete;
  peer_communicator& operator=(const peer_communicator&) = delete;

  [[nodiscard]] int rank() const override { return host_.rank(); }
  [[nodiscard]] int size() const override { return host_.size(); }

  /// The compute stream of the context: what the calls without a stream are ordered after.
  [[nodiscard]] cuda::stream_t default_stream() const override { return ctx_.compute(); }
  void abort(const std::string& why) override { group_->abort(why); }

  /// The slot a PE publishes at the rendezvous of a collective (internal, public for the .cpp).
  struct slot {
    const void* data = nullptr;           ///< device buffer peers read
    const std::int64_t* bytes = nullptr;  ///< alltoallv: send_bytes [P]
    std::int64_t size = 0;                ///< allreduce elements / broadcast bytes
    int device = 0;                       ///< device of `data`
    cuda::event_t ready = nullptr;        ///< recorded after the producer work of `data`
  };

 protected:
  /// Host-side exchange of one int64 per peer (host spans [P]); no device work.
  void do_alltoall(std::span<const std::int64_t> send, std::span<std::int64_t> recv) override;

  /// All-to-all-v on device memory: each PE pulls segment rank() of every peer's `send` into
  /// its `recv` at the offsets given by recv_counts (P copies on the comm stream, in peer
  /// order). send: device, sum(send_counts) elements; recv: device, sum(recv_counts); counts:
  /// host [P], >= 0. send and recv must not overlap. Empty segments copy nothing (null pointers
  /// are fine when a side is empty).
  /// @throws comm_error when recv_counts[q] differs from what PE q sends (after every PE has
  ///         finished reading, so no buffer is used after its owner returns) or a peer failed;
  ///         logic_error for spans of the wrong length or a null stream.
  /// alltoallv_agreed is this call: the check rides the rendezvous that the peer copies need
  /// anyway, so it costs nothing and stays.
  void do_alltoallv(const void* send, std::span<const std::int64_t> send_counts, void* recv,
                    std::span<const std::int64_t> recv_counts, datatype dtype,
                    cuda::stream_t stream, bool checked) override;

  /// alltoallv with the counts read at its rendezvous: each PE publishes its send bytes with its
  /// buffer, so after the first wait the receiver knows its counts, allocates (on `stream`; the
  /// comm stream waits for the allocation) and pulls its segments as alltoallv does. One
  /// rendezvous where alltoall + alltoallv made two.
  void do_alltoallv_with_counts(const void* send, std::span<const std::int64_t> send_counts,
                                std::span<std::int64_t> recv_counts, const recv_allocator& alloc,
                                datatype dtype, cuda::stream_t stream) override;

  /// Sum of `send` (device, n elements, same n on every PE) into `recv`:
  /// recv[i] = ((T{} + x_0[i]) + x_1[i]) + ... + x_{P-1}[i], in rank order on every PE, so the
  /// result is bitwise equal to the host loop in rank order and identical on every PE.
  /// Allocates a staging buffer of P * n elements from ctx.pool() on the comm stream.
  /// @throws comm_error when the sizes differ between PEs (every PE detects it).
  void do_allreduce_sum(const void* send, void* recv, std::size_t count, datatype dtype,
                        cuda::stream_t stream) override;

  /// Copies PE root's `send` (device) into every PE's `recv`. Equal sizes required.
  /// @throws logic_error for a root outside [0, P); comm_error for a size mismatch.
  void do_broadcast(const void* send, void* recv, std::size_t count, datatype dtype, int root,
                    cuda::stream_t stream) override;

  /// Host barrier (the comm stream is idle between collectives, so nothing else to wait for).
  void do_barrier() override;

 private:
  template <typename T>
  void allreduce_typed(const T* send, T* recv, std::int64_t n);
  void begin(const void* data, const std::int64_t* bytes, std::int64_t size);
  /// Enqueues the copies of segment rank() of every peer's published send into `recv` (peer q's
  /// recv_bytes[q] bytes back to back) on the comm stream and counts the traffic.
  void pull_segments(std::byte* recv, std::span<const std::int64_t> recv_bytes,
                     std::span<const std::int64_t> send_bytes);
  void finish_device(const char* what);
  void on_failure() noexcept;  // order the caller's stream after the comm stream's leftovers

  host_communicator host_;  // the rendezvous, alltoall of counts, barrier
  std::shared_ptr<host_comm_group> group_;
  const cuda::cuda_context& ctx_;
  cuda::event_t ready_ = nullptr;
  cuda::event_t allocated_ = nullptr;  // alltoallv_with_counts: after the receive allocation
  cuda::stream_t caller_ = nullptr;  // the stream of the current collective (after its check)
  slot slot_;
};

}  // namespace coopgnn
