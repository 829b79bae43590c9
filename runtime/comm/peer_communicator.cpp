// Peer-copy communicator (peer_communicator.hpp). CUDA builds only.
#if defined(COOPGNN_WITH_CUDA)
#include "runtime/comm/peer_communicator.hpp"

#include <cuda_runtime_api.h>

#include <exception>
#include <vector>

#include "runtime/comm/device_detail.hpp"
#include "runtime/core/cuda_check.hpp"
#include "runtime/core/error.hpp"
#include "runtime/core/nvtx.hpp"
#include "runtime/core/timer.hpp"

namespace coopgnn {
namespace {

/// dst (device dst_device) <- src (device src_device), `bytes` bytes, on stream s.
void copy_device_bytes(void* dst, int dst_device, const void* src, int src_device,
                       std::int64_t bytes, cuda::stream_t s) {
  if (bytes <= 0) return;
  auto const n = static_cast<std::size_t>(bytes);
  if (dst_device == src_device) {
    COOPGNN_CUDA_CHECK(cudaMemcpyAsync(dst, src, n, cudaMemcpyDeviceToDevice, s));
  } else {
    COOPGNN_CUDA_CHECK(cudaMemcpyPeerAsync(dst, dst_device, src, src_device, n, s));
  }
}

const peer_communicator::slot& slot_of(const host_comm_group& g, int q) {
  return *static_cast<const peer_communicator::slot*>(g.published(q));
}

}  // namespace

peer_communicator::peer_communicator(std::shared_ptr<host_comm_group> group, int rank,
                                     const cuda::cuda_context& ctx)
    : host_(group, rank), group_(std::move(group)), ctx_(ctx) {
  ctx_.make_current();
  COOPGNN_CUDA_CHECK(cudaEventCreateWithFlags(&ready_, cudaEventDisableTiming));
  try {
    COOPGNN_CUDA_CHECK(cudaEventCreateWithFlags(&allocated_, cudaEventDisableTiming));
  } catch (...) {
    COOPGNN_CUDA_CHECK_NO_THROW(cudaEventDestroy(ready_));
    throw;
  }
}

peer_communicator::~peer_communicator() {
  if (ready_ != nullptr) COOPGNN_CUDA_CHECK_NO_THROW(cudaEventDestroy(ready_));
  if (allocated_ != nullptr) COOPGNN_CUDA_CHECK_NO_THROW(cudaEventDestroy(allocated_));
}

// Publishes this PE's slot for one collective: the comm stream waits for the caller's stream,
// `ready_` marks that point, and peers may read `data` after waiting on it.
void peer_communicator::begin(const void* data, const std::int64_t* bytes, std::int64_t size) {
  ctx_.make_current();
  COOPGNN_CUDA_CHECK(cudaEventRecord(ready_, caller_));
  COOPGNN_CUDA_CHECK(cudaStreamWaitEvent(ctx_.comm(), ready_, 0));
  slot_ = slot{data, bytes, size, ctx_.device(), ready_};
  group_->publish(rank(), &slot_);
}

void peer_communicator::finish_device(const char* what) {
  comm_detail::poll_until(
      *group_, rank(), what, [this] { return comm_detail::stream_done(ctx_.comm()); },
      [this] { on_failure(); });
}

void peer_communicator::on_failure() noexcept {
  comm_detail::join_comm_into(ctx_, caller_, ready_);
}

void peer_communicator::do_alltoall(std::span<const std::int64_t> send,
                                    std::span<std::int64_t> recv) {
  scoped_wall_cpu_timer t(&stats_.seconds, &stats_.cpu_seconds);  // the wait counts as this communicator's time
  count_collective();
  double const waited = host_.stats().wait_seconds;
  host_.alltoall(send, recv);  // host counts: the host rendezvous is the whole job
  stats_.wait_seconds += host_.stats().wait_seconds - waited;
}

void peer_communicator::do_alltoallv(const void* send_data,
                                     std::span<const std::int64_t> send_counts, void* recv_data,
                                     std::span<const std::int64_t> recv_counts, datatype dtype,
                                     cuda::stream_t stream, bool /*checked: always*/) {
  COOPGNN_NVTX_RANGE("comm/alltoallv");
  scoped_wall_cpu_timer t(&stats_.seconds, &stats_.cpu_seconds);
  count_collective();
  caller_ = comm_detail::caller_stream(stream, rank(), "alltoallv");
  auto const p = static_cast<std::size_t>(size());
  auto const bytes = alltoallv_bytes(send_counts, recv_counts, dtype);
  auto const& send_bytes = bytes.send;
  auto const& recv_bytes = bytes.recv;
  const auto* send = static_cast<const std::byte*>(send_data);
  auto* recv = static_cast<std::byte*>(recv_data);
  comm_detail::guarded(
      *group_, rank(), "alltoallv", [this] { on_failure(); },
      [&] {
        begin(send, send_bytes.data(), 0);
        stats_.wait_seconds += group_->wait(rank(), "alltoallv");
        // Check every count before enqueueing any copy: on a mismatch this PE reads nothing.
        std::string mismatch;
        for (std::size_t q = 0; q < p && mismatch.empty(); ++q) {
          std::int64_t const sent = slot_of(*group_, static_cast<int>(q)).bytes[rank()];
          if (sent != recv_bytes[q]) {
            mismatch = fmt::format("alltoallv: PE {} expected {} bytes from PE {}, which sends {}",
                                   rank(), recv_bytes[q], q, sent);
          }
        }
        if (mismatch.empty()) {
          pull_segments(recv, recv_bytes, send_bytes);
          finish_device("alltoallv");
        }
        // Every PE has finished reading every send buffer once all pass this wait.
        stats_.wait_seconds += group_->wait(rank(), "alltoallv");
        if (!mismatch.empty()) throw comm_error(mismatch);
      });
  ++stats_.alltoall_calls;
}

void peer_communicator::pull_segments(std::byte* recv, std::span<const std::int64_t> recv_bytes,
                                      std::span<const std::int64_t> send_bytes) {
  auto const p = static_cast<std::size_t>(size());
  std::int64_t out = 0;
  for (std::size_t q = 0; q < p; ++q) {
    auto const& peer = slot_of(*group_, static_cast<int>(q));
    std::int64_t offset = 0;
    for (int j = 0; j < rank(); ++j) offset += peer.bytes[j];
    if (recv_bytes[q] > 0) {
      if (q != static_cast<std::size_t>(rank())) {  // own data: ordered by begin()
        COOPGNN_CUDA_CHECK(cudaStreamWaitEvent(ctx_.comm(), peer.ready, 0));
      }
      copy_device_bytes(recv + out, ctx_.device(),
                        static_cast<const std::byte*>(peer.data) + offset, peer.device,
                        recv_bytes[q], ctx_.comm());
    }
    if (q != static_cast<std::size_t>(rank())) {
      stats_.alltoall_bytes_recv += recv_bytes[q];
      stats_.alltoall_bytes_sent += send_bytes[q];
    }
    out += recv_bytes[q];
  }
}

// The counts ride the rendezvous: after the first wait the peers' published send bytes give
// this PE's receive counts. The receive buffer is allocated on the caller's stream after
// begin(), so the comm stream waits for it (allocated_) before the copies. A failed allocation
// still passes the second wait (the peers may be reading this PE's send), then fails the group.
void peer_communicator::do_alltoallv_with_counts(const void* send_data,
                                                 std::span<const std::int64_t> send_counts,
                                                 std::span<std::int64_t> recv_counts,
                                                 const recv_allocator& alloc, datatype dtype,
                                                 cuda::stream_t stream) {
  COOPGNN_NVTX_RANGE("comm/alltoallv_with_counts");
  scoped_wall_cpu_timer t(&stats_.seconds, &stats_.cpu_seconds);
  count_collective(2);
  caller_ = comm_detail::caller_stream(stream, rank(), "alltoallv_with_counts");
  auto const p = static_cast<std::size_t>(size());
  COOPGNN_EXPECTS(recv_counts.size() == p, "alltoallv_with_counts needs {} receive counts, got {}",
                  p, recv_counts.size());
  // The receive counts are what this call finds out: only the send side is converted.
  auto const send_bytes = alltoallv_bytes(send_counts, send_counts, dtype).send;
  auto const item = static_cast<std::int64_t>(size_of(dtype));
  comm_detail::guarded(
      *group_, rank(), "alltoallv_with_counts", [this] { on_failure(); },
      [&] {
        begin(send_data, send_bytes.data(), 0);
        stats_.wait_seconds += group_->wait(rank(), "alltoallv_with_counts");
        std::vector<std::int64_t> recv_bytes(p);
        std::int64_t total = 0;
        for (std::size_t q = 0; q < p; ++q) {
          recv_bytes[q] = slot_of(*group_, static_cast<int>(q)).bytes[rank()];
          recv_counts[q] = recv_bytes[q] / item;
          total += recv_bytes[q];
        }
        std::exception_ptr failed;
        try {
          auto* recv = static_cast<std::byte*>(alloc(total / item));
          COOPGNN_CUDA_CHECK(cudaEventRecord(allocated_, caller_));
          COOPGNN_CUDA_CHECK(cudaStreamWaitEvent(ctx_.comm(), allocated_, 0));
          pull_segments(recv, recv_bytes, send_bytes);
          finish_device("alltoallv_with_counts");
        } catch (...) {
          failed = std::current_exception();
        }
        // Every PE has finished reading every send buffer once all pass this wait.
        stats_.wait_seconds += group_->wait(rank(), "alltoallv_with_counts");
        if (failed) std::rethrow_exception(failed);
      });
  ++stats_.alltoall_calls;
}

void peer_communicator::do_allreduce_sum(const void* send, void* recv, std::size_t count,
                                         datatype dtype, cuda::stream_t stream) {
  COOPGNN_NVTX_RANGE("comm/allreduce");
  scoped_wall_cpu_timer t(&stats_.seconds, &stats_.cpu_seconds);
  count_collective();
  caller_ = comm_detail::caller_stream(stream, rank(), "allreduce");
  auto const n = static_cast<std::int64_t>(count);
  visit_summable(dtype, "allreduce", [&](auto zero) {
    using T = decltype(zero);
    allreduce_typed(static_cast<const T*>(send), static_cast<T*>(recv), n);
  });
  if (size() > 1) stats_.allreduce_bytes += n * static_cast<std::int64_t>(size_of(dtype));
}

template <typename T>
void peer_communicator::allreduce_typed(const T* send, T* recv, std::int64_t n) {
  auto const p = size();
  comm_detail::guarded(
      *group_, rank(), "allreduce", [this] { on_failure(); },
      [&] {
        // [P, n] staging, allocated before peers can read this PE's buffer.
        cuda::device_buffer<T> staging(ctx_.pool(), static_cast<std::size_t>(p * n), ctx_.comm());
        begin(send, nullptr, n);
        stats_.wait_seconds += group_->wait(rank(), "allreduce");
        for (int q = 0; q < p; ++q) {  // every PE sees every size: all detect a mismatch
          if (slot_of(*group_, q).size != n) {
            throw comm_error(
                fmt::format("allreduce size mismatch: PE {} has {} values, PE {} has {}", rank(), n,
                            q, slot_of(*group_, q).size));
          }
        }
        for (int q = 0; q < p && n > 0; ++q) {
          auto const& peer = slot_of(*group_, q);
          if (q != rank()) COOPGNN_CUDA_CHECK(cudaStreamWaitEvent(ctx_.comm(), peer.ready, 0));
          copy_device_bytes(staging.data() + q * n, ctx_.device(), peer.data, peer.device,
                            n * static_cast<std::int64_t>(sizeof(T)), ctx_.comm());
        }
        finish_device("allreduce");
        stats_.wait_seconds += group_->wait(
            rank(), "allreduce");  // every PE has read every input before anyone overwrites its own
        comm_detail::rank_order_sum(staging.data(), p, n, recv, ctx_.comm());
        finish_device("allreduce");
      });
}

void peer_communicator::do_broadcast(const void* send, void* recv, std::size_t count,
                                     datatype dtype, int root, cuda::stream_t stream) {
  COOPGNN_NVTX_RANGE("comm/broadcast");
  scoped_wall_cpu_timer t(&stats_.seconds, &stats_.cpu_seconds);
  count_collective();
  COOPGNN_EXPECTS(root >= 0 && root < size(), "broadcast root {} is outside [0, {})", root, size());
  caller_ = comm_detail::caller_stream(stream, rank(), "broadcast");
  auto const n = static_cast<std::int64_t>(count * size_of(dtype));
  comm_detail::guarded(
      *group_, rank(), "broadcast", [this] { on_failure(); },
      [&] {
        begin(send, nullptr, n);
        stats_.wait_seconds += group_->wait(rank(), "broadcast");
        auto const& src = slot_of(*group_, root);  // valid until the second wait
        std::int64_t const root_size = src.size;
        bool const ok = root_size == n;
        if (ok && n > 0 && recv != src.data) {
          if (rank() != root) COOPGNN_CUDA_CHECK(cudaStreamWaitEvent(ctx_.comm(), src.ready, 0));
          copy_device_bytes(recv, ctx_.device(), src.data, src.device, n, ctx_.comm());
          finish_device("broadcast");
        }
        // The root keeps its buffer until every PE has copied it.
        stats_.wait_seconds += group_->wait(rank(), "broadcast");
        if (!ok) {
          throw comm_error(
              fmt::format("broadcast size mismatch: PE {} has {} bytes, root PE {} has {}", rank(),
                          n, root, root_size));
        }
      });
}

void peer_communicator::do_barrier() {
  COOPGNN_NVTX_RANGE("comm/barrier");
  scoped_wall_cpu_timer t(&stats_.seconds, &stats_.cpu_seconds);
  count_collective();
  stats_.wait_seconds += group_->wait(rank());
}

}  // namespace coopgnn
#endif
