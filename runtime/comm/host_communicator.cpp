#include "runtime/comm/host_communicator.hpp"

#include <fmt/ranges.h>

#include <algorithm>
#include <cstring>
#include <exception>

#include "runtime/core/error.hpp"
#include "runtime/core/nvtx.hpp"
#include "runtime/core/timer.hpp"

namespace coopgnn {

host_comm_group::host_comm_group(int size, std::chrono::milliseconds timeout)
    : size_(size), timeout_(timeout) {
  COOPGNN_EXPECTS(size >= 1, "a PE group needs at least one PE, got {}", size);
  COOPGNN_EXPECTS(timeout.count() >= 0, "the peer timeout must be >= 0 ms (0 = none), got {}",
                  timeout.count());
  here_.assign(static_cast<std::size_t>(size), 0);
  ptr_.assign(static_cast<std::size_t>(size), nullptr);
  recv_.assign(static_cast<std::size_t>(size), nullptr);
  counts_.assign(static_cast<std::size_t>(size), nullptr);
  scalar_.assign(static_cast<std::size_t>(size), 0);
}

void host_comm_group::abort(const std::string& why) {
  std::lock_guard lk(mu_);
  if (!aborted_) {
    aborted_ = true;
    why_ = why;
  }
  cv_.notify_all();
}

bool host_comm_group::aborted() const {
  std::lock_guard lk(mu_);
  return aborted_;
}

std::string host_comm_group::reason() const {
  std::lock_guard lk(mu_);
  return why_;
}

void host_comm_group::wait(int rank, const char* what, const std::function<void()>& last) {
  std::unique_lock lk(mu_);
  if (aborted_) throw comm_error(fmt::format("{} on PE {}: aborted: {}", what, rank, why_));
  std::uint64_t const gen = generation_;
  here_[static_cast<std::size_t>(rank)] = 1;
  if (++arrived_ == size_) {
    if (last) last();  // before the release: the peers see what it wrote
    arrived_ = 0;
    std::fill(here_.begin(), here_.end(), 0);
    ++generation_;
    cv_.notify_all();
    return;
  }
  auto const released = [&] { return generation_ != gen || aborted_; };
  bool done = true;
  if (timeout_.count() == 0) {
    cv_.wait(lk, released);
  } else {
    done = cv_.wait_for(lk, timeout_, released);
  }
  if (!done) {
    std::vector<int> missing;
    for (int q = 0; q < size_; ++q) {
      if (here_[static_cast<std::size_t>(q)] == 0) missing.push_back(q);
    }
    aborted_ = true;
    why_ = fmt::format(
        "{} on PE {}: timed out after {:.3g} s waiting for PE{} {} (hung or dead; "
        "--peer-timeout sets the limit)",
        what, rank, static_cast<double>(timeout_.count()) / 1e3, missing.size() == 1 ? "" : "s",
        fmt::join(missing, ", "));
    cv_.notify_all();
    throw comm_error(why_);
  }
  if (generation_ == gen) {
    throw comm_error(fmt::format("{} on PE {}: aborted: {}", what, rank, why_));
  }
}

host_communicator::host_communicator(std::shared_ptr<host_comm_group> group, int rank)
    : group_(std::move(group)), rank_(rank) {
  COOPGNN_EXPECTS(group_ != nullptr, "host_communicator needs a group");
  COOPGNN_EXPECTS(rank >= 0 && rank < group_->size(), "rank {} is outside [0, {})", rank,
                  group_->size());
}

void host_communicator::expect_host_stream(cuda::stream_t stream, const char* what) const {
  COOPGNN_EXPECTS(stream == nullptr,
                  "{} on PE {}: the host communicator moves heap memory and takes no stream "
                  "(got a non-null stream)",
                  what, rank_);
}

void host_communicator::do_alltoall(std::span<const std::int64_t> send,
                                    std::span<std::int64_t> recv) {
  COOPGNN_NVTX_RANGE("comm/alltoall");
  scoped_timer t(&stats_.seconds);
  count_collective();
  auto const p = static_cast<std::size_t>(size());
  COOPGNN_EXPECTS(send.size() == p && recv.size() == p,
                  "alltoall needs {} values per PE, got send {} recv {}", p, send.size(),
                  recv.size());
  group_->ptr_[rank_] = send.data();
  group_->wait(rank_, "alltoall");
  for (std::size_t q = 0; q < p; ++q) {
    recv[q] = static_cast<const std::int64_t*>(group_->ptr_[q])[rank_];
  }
  group_->wait(rank_, "alltoall");
}

void host_communicator::do_alltoallv(const void* send_data,
                                     std::span<const std::int64_t> send_counts, void* recv_data,
                                     std::span<const std::int64_t> recv_counts, datatype dtype,
                                     cuda::stream_t stream, bool /*checked: always*/) {
  COOPGNN_NVTX_RANGE("comm/alltoallv");
  scoped_timer t(&stats_.seconds);
  count_collective();
  expect_host_stream(stream, "alltoallv");
  auto const p = static_cast<std::size_t>(size());
  auto const bytes = alltoallv_bytes(send_counts, recv_counts, dtype);
  auto const& send_bytes = bytes.send;
  auto const& recv_bytes = bytes.recv;
  const auto* send = static_cast<const std::byte*>(send_data);
  auto* recv = static_cast<std::byte*>(recv_data);
  group_->ptr_[rank_] = send;
  group_->counts_[rank_] = send_bytes.data();
  group_->wait(rank_, "alltoallv");
  std::string mismatch;
  std::int64_t out = 0;
  for (std::size_t q = 0; q < p; ++q) {
    const std::int64_t* counts = group_->counts_[q];
    std::int64_t offset = 0;
    for (int j = 0; j < rank_; ++j) offset += counts[j];
    if (counts[rank_] != recv_bytes[q]) {
      mismatch = fmt::format("PE {} expected {} bytes from PE {}, which sends {}", rank_,
                             recv_bytes[q], q, counts[rank_]);
      break;
    }
    if (recv_bytes[q] > 0) {
      std::memcpy(recv + out, static_cast<const std::byte*>(group_->ptr_[q]) + offset,
                  static_cast<std::size_t>(recv_bytes[q]));
    }
    if (static_cast<int>(q) != rank_) {
      stats_.alltoall_bytes_recv += recv_bytes[q];
      stats_.alltoall_bytes_sent += send_bytes[q];
    }
    out += recv_bytes[q];
  }
  // Pass the second barrier even on a mismatch: peers may still be reading this PE's buffer.
  group_->wait(rank_, "alltoallv");
  if (!mismatch.empty()) {
    group_->abort(mismatch);
    throw comm_error(mismatch);
  }
  ++stats_.alltoall_calls;
}

// alltoallv with the counts read at the rendezvous instead of agreed before it: after the first
// wait every PE's byte counts are published, so the receiver knows what arrives, allocates and
// copies. A failure between the waits (the allocator) still passes the second wait, so that no
// peer reads this PE's send buffer after it unwound.
void host_communicator::do_alltoallv_with_counts(const void* send_data,
                                                 std::span<const std::int64_t> send_counts,
                                                 std::span<std::int64_t> recv_counts,
                                                 const recv_allocator& alloc, datatype dtype,
                                                 cuda::stream_t stream) {
  COOPGNN_NVTX_RANGE("comm/alltoallv_with_counts");
  scoped_timer t(&stats_.seconds);
  count_collective(2);
  expect_host_stream(stream, "alltoallv_with_counts");
  auto const p = static_cast<std::size_t>(size());
  COOPGNN_EXPECTS(recv_counts.size() == p, "alltoallv_with_counts needs {} receive counts, got {}",
                  p, recv_counts.size());
  auto const send_bytes = alltoallv_bytes(send_counts, recv_counts, dtype).send;
  auto const item = static_cast<std::int64_t>(size_of(dtype));
  group_->ptr_[rank_] = send_data;
  group_->counts_[rank_] = send_bytes.data();
  group_->wait(rank_, "alltoallv_with_counts");
  std::exception_ptr failed;
  try {
    std::int64_t total = 0;
    for (std::size_t q = 0; q < p; ++q) total += group_->counts_[q][rank_];
    auto* recv = static_cast<std::byte*>(alloc(total / item));
    std::int64_t out = 0;
    for (std::size_t q = 0; q < p; ++q) {
      const std::int64_t* counts = group_->counts_[q];
      std::int64_t offset = 0;
      for (int j = 0; j < rank_; ++j) offset += counts[j];
      std::int64_t const bytes = counts[rank_];
      recv_counts[q] = bytes / item;
      if (bytes > 0) {
        std::memcpy(recv + out, static_cast<const std::byte*>(group_->ptr_[q]) + offset,
                    static_cast<std::size_t>(bytes));
      }
      if (static_cast<int>(q) != rank_) {
        stats_.alltoall_bytes_recv += bytes;
        stats_.alltoall_bytes_sent += send_bytes[q];
      }
      out += bytes;
    }
  } catch (...) {
    failed = std::current_exception();
  }
  group_->wait(rank_, "alltoallv_with_counts");  // every PE has copied: send buffers are free
  if (failed) {
    group_->abort(
        fmt::format("alltoallv_with_counts on PE {}: the receive allocation failed", rank_));
    std::rethrow_exception(failed);
  }
  ++stats_.alltoall_calls;
}

// Reduce-scatter, then all-gather, through the published buffers. Chunk c = [c n / P,
// (c + 1) n / P) belongs to PE c: after the first wait PE c sums chunk c of every PE's send in
// rank order into its own recv (the only writer of that chunk there; in place, only PE c reads
// chunk c of its own buffer, so overwriting it element by element after reading is safe). After
// the second wait every chunk is final in its owner's recv, and each PE copies the chunks of
// the others into its recv (each PE writes only its own recv, and the chunks it reads are never
// written again). The third wait keeps every buffer alive until all copies are done. Per PE:
// n additions and n copies whatever P (the sum of every PE's whole buffer was n P additions).
void host_communicator::do_allreduce_sum(const void* send, void* recv, std::size_t count,
                                         datatype dtype, cuda::stream_t stream) {
  COOPGNN_NVTX_RANGE("comm/allreduce");
  scoped_timer t(&stats_.seconds);
  count_collective();
  expect_host_stream(stream, "allreduce");
  visit_summable(dtype, "allreduce", [&](auto zero) {
    using T = decltype(zero);
    reduce_scatter_gather<T>(static_cast<const T*>(send), static_cast<T*>(recv), count);
  });
  if (size() > 1) stats_.allreduce_bytes += static_cast<std::int64_t>(count * size_of(dtype));
}

template <typename T>
void host_communicator::reduce_scatter_gather(const T* send, T* recv, std::size_t n) {
  auto const p = static_cast<std::size_t>(size());
  auto const me = static_cast<std::size_t>(rank_);
  group_->ptr_[me] = send;
  group_->recv_[me] = recv;
  group_->scalar_[me] = static_cast<std::int64_t>(n);
  group_->wait(rank_, "allreduce");
  // Every PE sees every size, so all of them detect a mismatch and none reads a buffer.
  for (std::size_t q = 0; q < p; ++q) {
    if (group_->scalar_[q] != static_cast<std::int64_t>(n)) {
      auto why = fmt::format("allreduce size mismatch: PE {} has {} values, PE {} has {}", rank_, n,
                             q, group_->scalar_[q]);
      group_->abort(why);
      throw comm_error(why);
    }
  }
  auto const chunk_begin = [n, p](std::size_t c) { return c * n / p; };
  for (std::size_t i = chunk_begin(me); i < chunk_begin(me + 1); ++i) {
    T sum{};
    for (std::size_t q = 0; q < p; ++q) sum += static_cast<const T*>(group_->ptr_[q])[i];
    recv[i] = sum;
  }
  group_->wait(rank_, "allreduce");  // every chunk is summed
  for (std::size_t c = 0; c < p; ++c) {
    std::size_t const b = chunk_begin(c), e = chunk_begin(c + 1);
    if (c == me || b == e) continue;
    std::memcpy(recv + b, static_cast<const T*>(group_->recv_[c]) + b, (e - b) * sizeof(T));
  }
  group_->wait(rank_, "allreduce");  // every PE has copied: buffers may be reused
}

void host_communicator::do_broadcast(const void* send, void* recv, std::size_t count,
                                     datatype dtype, int root, cuda::stream_t stream) {
  COOPGNN_NVTX_RANGE("comm/broadcast");
  scoped_timer t(&stats_.seconds);
  count_collective();
  COOPGNN_EXPECTS(root >= 0 && root < size(), "broadcast root {} is outside [0, {})", root, size());
  expect_host_stream(stream, "broadcast");
  auto const bytes = count * size_of(dtype);
  group_->ptr_[rank_] = send;
  group_->scalar_[rank_] = static_cast<std::int64_t>(bytes);
  group_->wait(rank_, "broadcast");
  // Every PE sees every size after the wait and decides alike: either all copy, or none does
  // (a PE must never copy from the root's buffer after the root has left with an error).
  int bad = -1;
  for (int r = 0; r < size() && bad < 0; ++r) {
    if (group_->scalar_[r] != group_->scalar_[root]) bad = r;
  }
  if (bad >= 0) {
    auto why = fmt::format("broadcast size mismatch: PE {} passed {} bytes, the root (PE {}) {}",
                           bad, group_->scalar_[bad], root, group_->scalar_[root]);
    group_->abort(why);
    throw comm_error(why);
  }
  const void* const src = group_->ptr_[root];
  if (bytes > 0 && recv != src) std::memcpy(recv, src, bytes);
  group_->wait(rank_, "broadcast");
}

void host_communicator::do_barrier() {
  COOPGNN_NVTX_RANGE("comm/barrier");
  scoped_timer t(&stats_.seconds);
  count_collective();
  group_->wait(rank_, "barrier");
}

}  // namespace coopgnn
