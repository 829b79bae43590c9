// NCCL communicator (nccl_communicator.hpp). CUDA builds only.
#if defined(COOPGNN_WITH_CUDA)
#include "runtime/comm/nccl_communicator.hpp"

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <cstring>

#include "runtime/comm/device_comm.hpp"
#include "runtime/comm/device_detail.hpp"
#include "runtime/core/cuda_check.hpp"
#include "runtime/core/error.hpp"
#include "runtime/core/log.hpp"
#include "runtime/core/nvtx.hpp"
#include "runtime/core/timer.hpp"

static_assert(sizeof(ncclUniqueId) == 128, "nccl_comm_group stores the id in 128 bytes");

namespace coopgnn {
namespace {

std::string nccl_message(ncclResult_t r, ncclComm_t comm) {
  const char* last = ncclGetLastError(comm);
  return fmt::format("{}{}{}", ncclGetErrorString(r), last != nullptr && *last != 0 ? ": " : "",
                     last != nullptr ? last : "");
}

[[noreturn]] void throw_nccl(ncclResult_t r, const char* call, ncclComm_t comm, int line) {
  throw comm_error(
      fmt::format("{} failed [nccl_communicator.cpp:{}]: {}", call, line, nccl_message(r, comm)));
}

}  // namespace
}  // namespace coopgnn

/// Checks an NCCL call of communicator `comm` (may be null): ncclSuccess and, for the
/// non-blocking communicators used here, ncclInProgress pass; anything else throws comm_error
/// with ncclGetErrorString and ncclGetLastError.
#define COOPGNN_NCCL_CHECK(call, comm)                                                  \
  do {                                                                                  \
    ncclResult_t const coopgnn_nccl_ = (call);                                          \
    if (coopgnn_nccl_ != ncclSuccess && coopgnn_nccl_ != ncclInProgress) [[unlikely]] { \
      ::coopgnn::throw_nccl(coopgnn_nccl_, #call, (comm), __LINE__);                    \
    }                                                                                   \
  } while (0)

namespace coopgnn {
namespace {

ncclDataType_t nccl_type(datatype t) {
  switch (t) {
    case datatype::uint8:
      return ncclUint8;
    case datatype::int64:
      return ncclInt64;
    case datatype::float32:
      return ncclFloat32;
    case datatype::float64:
      return ncclFloat64;
  }
  return ncclUint8;
}

std::shared_ptr<host_comm_group> host_group_of(const std::shared_ptr<nccl_comm_group>& g) {
  COOPGNN_EXPECTS(g != nullptr, "nccl_communicator needs a group");
  return g->host();
}

}  // namespace

nccl_comm_group::nccl_comm_group(int size, std::chrono::milliseconds timeout)
    : host_(std::make_shared<host_comm_group>(size, timeout)) {
  ncclUniqueId id;
  COOPGNN_NCCL_CHECK(ncclGetUniqueId(&id), nullptr);
  std::memcpy(id_.data(), &id, sizeof(id));
}

nccl_communicator::nccl_communicator(std::shared_ptr<nccl_comm_group> group, int rank,
                                     const cuda::cuda_context& ctx, nccl_allreduce reduce)
    : host_(host_group_of(group), rank), group_(std::move(group)), ctx_(ctx), reduce_(reduce) {
  COOPGNN_NVTX_RANGE("comm/init");
  auto const p = static_cast<std::size_t>(size());
  // Every PE learns every device, so a shared device fails on all PEs alike (no hang).
  std::vector<std::int64_t> mine(p, ctx_.device()), all(p);
  host_.alltoall(mine, all);
  std::vector<int> devices(all.begin(), all.end());
  (void)choose_device_comm(devices, "nccl");

  ctx_.make_current();
  COOPGNN_CUDA_CHECK(cudaEventCreateWithFlags(&ready_, cudaEventDisableTiming));
  try {
    ncclUniqueId id;
    std::memcpy(&id, group_->unique_id().data(), sizeof(id));
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0;  // every call returns at once; completion is polled (wait_ready)
    comm_detail::guarded(
        *group_->host(), rank, "NCCL init", [this] { on_failure(); },
        [&] {
          COOPGNN_NCCL_CHECK(ncclCommInitRankConfig(&comm_, size(), id, rank, &config), nullptr);
          wait_ready("NCCL init");
        });
  } catch (...) {
    COOPGNN_CUDA_CHECK_NO_THROW(cudaEventDestroy(ready_));
    throw;
  }
}

// Every collective has completed when it returns, so the communicator is idle here and
// ncclCommAbort cuts nothing short; unlike ncclCommFinalize + ncclCommDestroy it never waits for
// the peers, so the P communicators may be destroyed in any order, from any thread.
nccl_communicator::~nccl_communicator() {
  abort_comm();
  if (ready_ != nullptr) COOPGNN_CUDA_CHECK_NO_THROW(cudaEventDestroy(ready_));
}

void nccl_communicator::on_failure() noexcept {
  abort_comm();  // in-flight NCCL kernels exit
  comm_detail::join_comm_into(ctx_, caller_, ready_);
}

void nccl_communicator::abort_comm() noexcept {
  if (comm_ == nullptr) return;
  ncclResult_t const st = ncclCommAbort(comm_);
  if (st != ncclSuccess) {
    log::error("ncclCommAbort on PE {}: {}", rank(), ncclGetErrorString(st));
  }
  comm_ = nullptr;
}

// Non-blocking NCCL: after init, ncclGroupEnd or a collective outside a group, the operation may
// still be in progress (not yet enqueued). Poll ncclCommGetAsyncError until it leaves
// ncclInProgress; any other state than success is an error.
void nccl_communicator::wait_ready(const char* what) {
  comm_detail::poll_until(
      *group_->host(), rank(), what,
      [&] {
        ncclResult_t state = ncclSuccess;
        COOPGNN_NCCL_CHECK(ncclCommGetAsyncError(comm_, &state), comm_);
        if (state == ncclInProgress) return false;
        if (state != ncclSuccess) {
          throw comm_error(
              fmt::format("{}: NCCL asynchronous error: {}", what, nccl_message(state, comm_)));
        }
        return true;
      },
      [this] { on_failure(); });
}

void nccl_communicator::begin(const char* what) {
  if (comm_ == nullptr) {
    throw comm_error(
        fmt::format("{} on PE {}: the NCCL communicator was aborted by an earlier "
                    "failure ({})",
                    what, rank(), group_->host()->reason()));
  }
  ctx_.make_current();
  COOPGNN_CUDA_CHECK(cudaEventRecord(ready_, caller_));
  COOPGNN_CUDA_CHECK(cudaStreamWaitEvent(ctx_.comm(), ready_, 0));
}

// The RAFT sync_stream habit: poll the stream and NCCL's asynchronous error together, abort the
// communicator on an error, on the group's abort flag or on timeout.
void nccl_communicator::finish(const char* what) {
  wait_ready(what);
  comm_detail::poll_until(
      *group_->host(), rank(), what,
      [&] {
        ncclResult_t state = ncclSuccess;
        COOPGNN_NCCL_CHECK(ncclCommGetAsyncError(comm_, &state), comm_);
        if (state != ncclSuccess && state != ncclInProgress) {
          throw comm_error(
              fmt::format("{}: NCCL asynchronous error: {}", what, nccl_message(state, comm_)));
        }
        return comm_detail::stream_done(ctx_.comm());
      },
      [this] { on_failure(); });
}

// Host-side check that every PE passes the same element count (every PE sees all counts, so
// all of them fail together and none starts an NCCL call that could never complete).
void nccl_communicator::check_sizes_equal(std::int64_t mine, const char* what) {
  auto const p = static_cast<std::size_t>(size());
  std::vector<std::int64_t> send(p, mine), all(p);
  host_.alltoall(send, all);
  for (std::size_t q = 0; q < p; ++q) {
    if (all[q] != mine) {
      throw comm_error(fmt::format("{} size mismatch: PE {} has {}, PE {} has {}", what, rank(),
                                   mine, q, all[q]));
    }
  }
}

void nccl_communicator::do_alltoall(std::span<const std::int64_t> send,
                                    std::span<std::int64_t> recv) {
  scoped_wall_cpu_timer t(&stats_.seconds, &stats_.cpu_seconds);  // the wait counts as this communicator's time
  count_collective();
  host_.alltoall(send, recv);
}

// checked: exchange the counts on the host and compare them with recv_bytes before any NCCL
// call (alltoallv); without it (alltoallv_agreed) the grouped send/recv starts at once and the
// call returns when it is enqueued, ordered before the caller's later work (no host wait for the
// device: the agreed exchanges of a step run back to back with its kernels).
void nccl_communicator::do_alltoallv(const void* send_data,
                                     std::span<const std::int64_t> send_counts, void* recv_data,
                                     std::span<const std::int64_t> recv_counts, datatype dtype,
                                     cuda::stream_t stream, bool check) {
  COOPGNN_NVTX_RANGE("comm/alltoallv");
  scoped_wall_cpu_timer t(&stats_.seconds, &stats_.cpu_seconds);
  count_collective();
  caller_ = comm_detail::caller_stream(stream, rank(), "alltoallv");
  auto const p = static_cast<std::size_t>(size());
  auto const bytes = alltoallv_bytes(send_counts, recv_counts, dtype);
  auto const& send_bytes = bytes.send;
  auto const& recv_bytes = bytes.recv;
  comm_detail::guarded(
      *group_->host(), rank(), "alltoallv", [this] { on_failure(); },
      [&] {
        if (check) {
          std::vector<std::int64_t> incoming(p);
          host_.alltoall(send_bytes, incoming);
          for (std::size_t q = 0; q < p; ++q) {
            if (incoming[q] != recv_bytes[q]) {
              throw comm_error(
                  fmt::format("alltoallv: PE {} expected {} bytes from PE {}, which sends {}",
                              rank(), recv_bytes[q], q, incoming[q]));
            }
          }
          group_->host()->wait(
              rank(), "alltoallv");  // a PE that found a mismatch has aborted: nobody starts NCCL
        }
        send_recv("alltoallv", static_cast<const std::byte*>(send_data), send_bytes,
                  static_cast<std::byte*>(recv_data), recv_bytes);
        if (check) {
          finish("alltoallv");
        } else {
          enqueued("alltoallv");
        }
      });
  ++stats_.alltoall_calls;
}

// The counts go through the host rendezvous (as the checked alltoallv's check does), then the
// receiver allocates on the caller's stream, and begin() (inside send_recv) orders the comm stream
// after that allocation. Returns when the grouped send/recv is enqueued, like alltoallv_agreed.
// A PE whose allocation fails aborts the group (guarded): its peers' NCCL waits see the abort.
void nccl_communicator::do_alltoallv_with_counts(const void* send_data,
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
      *group_->host(), rank(), "alltoallv_with_counts", [this] { on_failure(); },
      [&] {
        std::vector<std::int64_t> recv_bytes(p);
        host_.alltoall(send_bytes, recv_bytes);
        std::int64_t total = 0;
        for (std::size_t q = 0; q < p; ++q) {
          recv_counts[q] = recv_bytes[q] / item;
          total += recv_bytes[q];
        }
        auto* recv = static_cast<std::byte*>(alloc(total / item));
        send_recv("alltoallv_with_counts", static_cast<const std::byte*>(send_data), send_bytes,
                  recv, recv_bytes);
        enqueued("alltoallv_with_counts");
      });
  ++stats_.alltoall_calls;
}

// begin() (the comm stream after the caller's stream), the self segment as a local copy, then
// one NCCL group of every non-empty send and receive on the comm stream.
void nccl_communicator::send_recv(const char* what, const std::byte* send,
                                  std::span<const std::int64_t> send_bytes, std::byte* recv,
                                  std::span<const std::int64_t> recv_bytes) {
  auto const p = static_cast<std::size_t>(size());
  begin(what);
  std::vector<std::int64_t> send_off(p + 1, 0), recv_off(p + 1, 0);
  for (std::size_t q = 0; q < p; ++q) {
    send_off[q + 1] = send_off[q] + send_bytes[q];
    recv_off[q + 1] = recv_off[q] + recv_bytes[q];
  }
  auto const me = static_cast<std::size_t>(rank());
  if (recv_bytes[me] > 0) {  // the self segment is a local copy
    COOPGNN_CUDA_CHECK(cudaMemcpyAsync(recv + recv_off[me], send + send_off[me],
                                       static_cast<std::size_t>(recv_bytes[me]),
                                       cudaMemcpyDeviceToDevice, ctx_.comm()));
  }
  COOPGNN_NCCL_CHECK(ncclGroupStart(), comm_);
  try {
    for (std::size_t q = 0; q < p; ++q) {
      if (q == me) continue;
      if (send_bytes[q] > 0) {
        COOPGNN_NCCL_CHECK(ncclSend(send + send_off[q], static_cast<std::size_t>(send_bytes[q]),
                                    ncclUint8, static_cast<int>(q), comm_, ctx_.comm()),
                           comm_);
      }
      if (recv_bytes[q] > 0) {
        COOPGNN_NCCL_CHECK(ncclRecv(recv + recv_off[q], static_cast<std::size_t>(recv_bytes[q]),
                                    ncclUint8, static_cast<int>(q), comm_, ctx_.comm()),
                           comm_);
      }
      stats_.alltoall_bytes_sent += send_bytes[q];
      stats_.alltoall_bytes_recv += recv_bytes[q];
    }
  } catch (...) {
    // Close the group before unwinding: an open group would swallow every later NCCL
    // call of this thread (the group depth is thread-local), and ncclCommAbort in
    // on_failure must not run inside it. The error is the one being rethrown.
    (void)ncclGroupEnd();
    throw;
  }
  COOPGNN_NCCL_CHECK(ncclGroupEnd(), comm_);
}

// The NCCL work is enqueued (polled: the communicator is non-blocking), and the caller's stream
// waits for the comm stream, so later work on it reads the outputs and may reuse the inputs. No
// wait for the device: an asynchronous NCCL error or a peer that never arrives surfaces at the
// next call that waits (finish(): the checked collectives, the all-reduces).
void nccl_communicator::enqueued(const char* what) {
  wait_ready(what);
  COOPGNN_CUDA_CHECK(cudaEventRecord(ready_, ctx_.comm()));
  COOPGNN_CUDA_CHECK(cudaStreamWaitEvent(caller_, ready_, 0));
}

void nccl_communicator::do_allreduce_sum(const void* send, void* recv, std::size_t count,
                                         datatype dtype, cuda::stream_t stream) {
  COOPGNN_NVTX_RANGE("comm/allreduce");
  scoped_wall_cpu_timer t(&stats_.seconds, &stats_.cpu_seconds);
  count_collective();
  caller_ = comm_detail::caller_stream(stream, rank(), "allreduce");
  auto const p = size();
  auto const n = static_cast<std::int64_t>(count);
  visit_summable(dtype, "allreduce", [&](auto zero) {
    using T = decltype(zero);
    comm_detail::guarded(
        *group_->host(), rank(), "allreduce", [this] { on_failure(); },
        [&] {
          check_sizes_equal(n, "allreduce");
          if (n == 0) return;  // equal on every PE: all skip
          bool const rank_order = reduce_ == nccl_allreduce::rank_order && dtype != datatype::int64;
          if (rank_order) {
            cuda::device_buffer<T> staging(ctx_.pool(), static_cast<std::size_t>(p * n),
                                           ctx_.comm());
            begin("allreduce");
            COOPGNN_NCCL_CHECK(ncclAllGather(send, staging.data(), static_cast<std::size_t>(n),
                                             nccl_type(dtype), comm_, ctx_.comm()),
                               comm_);
            wait_ready("allreduce");  // the gather is enqueued before the sum that reads it
            comm_detail::rank_order_sum(staging.data(), p, n, static_cast<T*>(recv), ctx_.comm());
            finish("allreduce");
          } else {  // integers are exact in any order
            begin("allreduce");
            COOPGNN_NCCL_CHECK(ncclAllReduce(send, recv, static_cast<std::size_t>(n),
                                             nccl_type(dtype), ncclSum, comm_, ctx_.comm()),
                               comm_);
            finish("allreduce");
          }
        });
  });
  if (p > 1) stats_.allreduce_bytes += n * static_cast<std::int64_t>(size_of(dtype));
}

void nccl_communicator::do_broadcast(const void* send, void* recv, std::size_t count,
                                     datatype dtype, int root, cuda::stream_t stream) {
  COOPGNN_NVTX_RANGE("comm/broadcast");
  scoped_wall_cpu_timer t(&stats_.seconds, &stats_.cpu_seconds);
  count_collective();
  COOPGNN_EXPECTS(root >= 0 && root < size(), "broadcast root {} is outside [0, {})", root, size());
  caller_ = comm_detail::caller_stream(stream, rank(), "broadcast");
  auto const n = static_cast<std::int64_t>(count * size_of(dtype));
  comm_detail::guarded(
      *group_->host(), rank(), "broadcast", [this] { on_failure(); },
      [&] {
        check_sizes_equal(n, "broadcast");
        if (n == 0) return;
        begin("broadcast");
        COOPGNN_NCCL_CHECK(ncclBroadcast(send, recv, static_cast<std::size_t>(n), ncclUint8, root,
                                         comm_, ctx_.comm()),
                           comm_);
        finish("broadcast");
      });
}

void nccl_communicator::do_barrier() {
  COOPGNN_NVTX_RANGE("comm/barrier");
  scoped_wall_cpu_timer t(&stats_.seconds, &stats_.cpu_seconds);
  count_collective();
  group_->host()->wait(rank());
}

}  // namespace coopgnn
#endif
