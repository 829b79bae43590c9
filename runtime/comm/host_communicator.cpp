#include "runtime/comm/host_communicator.hpp"

#include <fmt/ranges.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <ctime>
#include <exception>
#include <limits>
#include <thread>

#include "runtime/core/error.hpp"
#include "runtime/core/nvtx.hpp"
#include "runtime/core/timer.hpp"

namespace coopgnn {

namespace {

/// FUTEX_WAIT on `word` while it holds `seen`, at most `rel` (null = no limit). Returns on a
/// wake, a change of the word, a signal or the time limit (the caller rechecks).
void futex_wait(const std::atomic<std::uint32_t>& word, std::uint32_t seen, const timespec* rel) {
  static_assert(sizeof(std::atomic<std::uint32_t>) == sizeof(std::uint32_t));
  ::syscall(SYS_futex, reinterpret_cast<const std::uint32_t*>(&word), FUTEX_WAIT_PRIVATE, seen, rel,
            nullptr, 0);
}

/// FUTEX_WAKE of every thread sleeping on `word`.
void futex_wake_all(std::atomic<std::uint32_t>& word) {
  ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAKE_PRIVATE,
            std::numeric_limits<int>::max(), nullptr, nullptr, 0);
}

/// The steady clock's time since its epoch, nanoseconds.
std::int64_t steady_nanoseconds() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

}  // namespace

host_comm_group::host_comm_group(int size, std::chrono::milliseconds timeout)
    : size_(size), timeout_(timeout) {
  COOPGNN_EXPECTS(size >= 1, "a PE group needs at least one PE, got {}", size);
  COOPGNN_EXPECTS(timeout.count() >= 0, "the peer timeout must be >= 0 ms (0 = none), got {}",
                  timeout.count());
  // Spinning only pays when every waiter has a core: with more PEs than hardware threads it
  // would take the core from the PE everybody waits for.
  auto const hw = static_cast<int>(std::thread::hardware_concurrency());
  spins_ = size > 1 && size <= hw ? 2000 : 0;
  here_ = std::make_unique<std::atomic<std::uint32_t>[]>(static_cast<std::size_t>(size));
  ptr_.assign(static_cast<std::size_t>(size), nullptr);
  segments_.assign(static_cast<std::size_t>(size), nullptr);
  scalar_.assign(static_cast<std::size_t>(size), 0);
}

void host_comm_group::abort(const std::string& why) {
  {
    std::lock_guard lk(mu_);
    if ((state_.load(std::memory_order_relaxed) & kAborted) != 0) return;
    why_ = why;
    state_.fetch_or(kAborted, std::memory_order_release);
  }
  futex_wake_all(state_);
}

bool host_comm_group::aborted() const {
  return (state_.load(std::memory_order_acquire) & kAborted) != 0;
}

std::string host_comm_group::reason() const {
  std::lock_guard lk(mu_);
  return why_;
}

void host_comm_group::throw_aborted(int rank, const char* what) const {
  throw comm_error(fmt::format("{} on PE {}: aborted: {}", what, rank, reason()));
}

void host_comm_group::sleep_while(std::uint32_t seen,
                                  std::chrono::steady_clock::time_point deadline) const {
  if (timeout_.count() == 0) {
    futex_wait(state_, seen, nullptr);
    return;
  }
  auto const left = deadline - std::chrono::steady_clock::now();
  if (left <= std::chrono::steady_clock::duration::zero()) return;
  auto const ns = std::chrono::duration_cast<std::chrono::nanoseconds>(left).count();
  timespec const rel{static_cast<time_t>(ns / 1'000'000'000),
                     static_cast<long>(ns % 1'000'000'000)};
  futex_wait(state_, seen, &rel);
}

void host_comm_group::fail_timed_out(int rank, const char* what, std::uint32_t gen) {
  std::vector<int> missing;
  for (int q = 0; q < size_; ++q) {
    if (here_[static_cast<std::size_t>(q)].load(std::memory_order_relaxed) != gen + 1) {
      missing.push_back(q);
    }
  }
  auto why = fmt::format(
      "{} on PE {}: timed out after {:.3g} s waiting for PE{} {} (hung or dead; "
      "--peer-timeout sets the limit)",
      what, rank, static_cast<double>(timeout_.count()) / 1e3, missing.size() == 1 ? "" : "s",
      fmt::join(missing, ", "));
  abort(why);
  throw comm_error(why);
}

double host_comm_group::wait(int rank, const char* what, const std::function<void()>& last) {
  std::uint32_t const seen = state_.load(std::memory_order_acquire);
  if ((seen & kAborted) != 0) throw_aborted(rank, what);
  std::uint32_t const gen = seen / kGeneration;
  here_[static_cast<std::size_t>(rank)].store(gen + 1, std::memory_order_relaxed);
  auto const arrival = steady_nanoseconds();
  // The increment publishes what this PE wrote before the wait (release) and, for the last PE,
  // acquires what every other PE wrote.
  if (arrived_.fetch_add(1, std::memory_order_acq_rel) + 1 == size_) {
    last_arrival_ns_.store(arrival, std::memory_order_relaxed);  // released below
    if (last) last();  // before the release: the peers see what it wrote
    arrived_.store(0, std::memory_order_relaxed);  // visible before the next generation starts
    state_.fetch_add(kGeneration, std::memory_order_release);
    futex_wake_all(state_);
    return 0.0;
  }
  // A PE whose clock read came before an earlier-counted peer's may see a last arrival before
  // its own: it did not wait.
  auto const waited = [&] {
    auto const ns = last_arrival_ns_.load(std::memory_order_relaxed) - arrival;
    return ns > 0 ? static_cast<double>(ns) * 1e-9 : 0.0;
  };
  auto const deadline = std::chrono::steady_clock::now() + timeout_;
  int spins = spins_;
  for (;;) {
    std::uint32_t const now = state_.load(std::memory_order_acquire);
    if (now / kGeneration != gen) return waited();  // released (even if aborted since)
    if ((now & kAborted) != 0) throw_aborted(rank, what);
    if (spins > 0) {
      --spins;
      cpu_relax();
      continue;
    }
    if (timeout_.count() > 0 && std::chrono::steady_clock::now() >= deadline) {
      fail_timed_out(rank, what, gen);
    }
    sleep_while(now, deadline);
  }
}

std::byte* host_comm_group::shared(std::size_t bytes) {
  std::size_t const lines = (bytes + sizeof(cache_line) - 1) / sizeof(cache_line);
  if (shared_.size() < lines) shared_.resize(lines);
  return shared_.empty() ? nullptr : shared_.front().bytes;
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

void host_communicator::meet(const char* what, const std::function<void()>& last) {
  stats_.wait_seconds += group_->wait(rank_, what, last);
}

void host_communicator::throw_if_failed() const {
  if (group_->failure_.empty()) return;
  group_->abort(group_->failure_);
  throw comm_error(group_->failure_);
}

void host_communicator::do_alltoall(std::span<const std::int64_t> send,
                                    std::span<std::int64_t> recv) {
  COOPGNN_NVTX_RANGE("comm/alltoall");
  scoped_wall_cpu_timer t(&stats_.seconds, &stats_.cpu_seconds);
  count_collective();
  auto const p = static_cast<std::size_t>(size());
  COOPGNN_EXPECTS(send.size() == p && recv.size() == p,
                  "alltoall needs {} values per PE, got send {} recv {}", p, send.size(),
                  recv.size());
  host_comm_group& g = *group_;
  g.ptr_[rank_] = send.data();
  const std::int64_t* rows = nullptr;
  // Row r of the transpose holds what every PE sends to PE r; the sends are read while every PE
  // is inside the meeting, so they are free again when it returns.
  meet("alltoall", [&] {
    auto* m = reinterpret_cast<std::int64_t*>(g.shared(p * p * sizeof(std::int64_t)));
    for (std::size_t q = 0; q < p; ++q) {
      const auto* from = static_cast<const std::int64_t*>(g.ptr_[q]);
      for (std::size_t r = 0; r < p; ++r) m[r * p + q] = from[r];
    }
  });
  rows = reinterpret_cast<const std::int64_t*>(g.shared(0));
  std::copy_n(rows + static_cast<std::size_t>(rank_) * p, p, recv.begin());
}

void host_communicator::do_alltoallv(const void* send_data,
                                     std::span<const std::int64_t> send_counts, void* recv_data,
                                     std::span<const std::int64_t> recv_counts, datatype dtype,
                                     cuda::stream_t stream, bool /*checked: always*/) {
  COOPGNN_NVTX_RANGE("comm/alltoallv");
  scoped_wall_cpu_timer t(&stats_.seconds, &stats_.cpu_seconds);
  count_collective();
  expect_host_stream(stream, "alltoallv");
  auto const p = static_cast<std::size_t>(size());
  auto const bytes = alltoallv_bytes(send_counts, recv_counts, dtype);
  auto const& send_bytes = bytes.send;
  auto const& recv_bytes = bytes.recv;
  const auto* send = static_cast<const std::byte*>(send_data);
  auto* recv = static_cast<std::byte*>(recv_data);
  // Offset and size side by side: a receiver reads one cache line of each sender's table.
  send_segments_.resize(p);
  std::int64_t at = 0;
  for (std::size_t q = 0; q < p; ++q) {
    send_segments_[q] = {at, send_bytes[q]};
    at += send_bytes[q];
  }
  host_comm_group& g = *group_;
  g.ptr_[rank_] = send;
  g.segments_[rank_] = send_segments_.data();
  meet("alltoallv");
  std::string mismatch;
  std::int64_t out = 0;
  for (std::size_t q = 0; q < p; ++q) {
    auto const [offset, sent] = g.segments_[q][rank_];
    if (sent != recv_bytes[q]) {
      mismatch = fmt::format("PE {} expected {} bytes from PE {}, which sends {}", rank_,
                             recv_bytes[q], q, sent);
      break;
    }
    if (recv_bytes[q] > 0) {
      std::memcpy(recv + out, static_cast<const std::byte*>(g.ptr_[q]) + offset,
                  static_cast<std::size_t>(recv_bytes[q]));
    }
    if (static_cast<int>(q) != rank_) {
      stats_.alltoall_bytes_recv += recv_bytes[q];
      stats_.alltoall_bytes_sent += send_bytes[q];
    }
    out += recv_bytes[q];
  }
  // Pass the second meeting even on a mismatch: peers may still be reading this PE's buffer.
  meet("alltoallv");
  if (!mismatch.empty()) {
    g.abort(mismatch);
    throw comm_error(mismatch);
  }
  ++stats_.alltoall_calls;
}

// alltoallv with the counts read at the meeting instead of agreed before it: after the first
// meeting every PE's send segments (offset and size per receiver) are published, so the
// receiver knows what arrives, allocates and copies. A failure between the meetings (the
// allocator) still passes the second meeting, so that no peer reads this PE's send buffer after
// it unwound.
void host_communicator::do_alltoallv_with_counts(const void* send_data,
                                                 std::span<const std::int64_t> send_counts,
                                                 std::span<std::int64_t> recv_counts,
                                                 const recv_allocator& alloc, datatype dtype,
                                                 cuda::stream_t stream) {
  COOPGNN_NVTX_RANGE("comm/alltoallv_with_counts");
  scoped_wall_cpu_timer t(&stats_.seconds, &stats_.cpu_seconds);
  count_collective(2);
  expect_host_stream(stream, "alltoallv_with_counts");
  auto const p = static_cast<std::size_t>(size());
  COOPGNN_EXPECTS(send_counts.size() == p && recv_counts.size() == p,
                  "alltoallv_with_counts needs {} counts per PE, got send {} recv {}", p,
                  send_counts.size(), recv_counts.size());
  auto const item = static_cast<std::int64_t>(size_of(dtype));
  send_segments_.resize(p);
  std::int64_t at = 0;
  for (std::size_t q = 0; q < p; ++q) {
    send_segments_[q] = {at, send_counts[q] * item};
    at += send_counts[q] * item;
  }
  host_comm_group& g = *group_;
  g.ptr_[rank_] = send_data;
  g.segments_[rank_] = send_segments_.data();
  meet("alltoallv_with_counts");
  std::exception_ptr failed;
  try {
    std::int64_t total = 0;
    for (std::size_t q = 0; q < p; ++q) total += g.segments_[q][rank_].bytes;
    auto* recv = static_cast<std::byte*>(alloc(total / item));
    std::int64_t out = 0;
    for (std::size_t q = 0; q < p; ++q) {
      auto const [offset, bytes] = g.segments_[q][rank_];
      recv_counts[q] = bytes / item;
      if (bytes > 0) {
        std::memcpy(recv + out, static_cast<const std::byte*>(g.ptr_[q]) + offset,
                    static_cast<std::size_t>(bytes));
      }
      if (static_cast<int>(q) != rank_) {
        stats_.alltoall_bytes_recv += bytes;
        stats_.alltoall_bytes_sent += send_segments_[q].bytes;
      }
      out += bytes;
    }
  } catch (...) {
    failed = std::current_exception();
  }
  meet("alltoallv_with_counts");  // every PE has copied: send buffers are free
  if (failed) {
    g.abort(fmt::format("alltoallv_with_counts on PE {}: the receive allocation failed", rank_));
    std::rethrow_exception(failed);
  }
  ++stats_.alltoall_calls;
}

namespace {

/// out[i] = ((T{} + src[0][i]) + src[1][i]) + ... + src[P-1][i] for i in [begin, end): the
/// rank-order sum, one PE's buffer after the other (each pass streams one buffer and the
/// additions of one pass are independent, so they vectorise; each element still sees its terms
/// in rank order).
template <typename T>
void sum_in_rank_order(const std::vector<const void*>& src, T* out, std::size_t begin,
                       std::size_t end) {
  if (begin >= end) return;
  const T* const first = static_cast<const T*>(src[0]);
  for (std::size_t i = begin; i < end; ++i) out[i] = T{} + first[i];
  for (std::size_t q = 1; q < src.size(); ++q) {
    const T* const s = static_cast<const T*>(src[q]);
    for (std::size_t i = begin; i < end; ++i) out[i] += s[i];
  }
}

}  // namespace

void host_communicator::do_allreduce_sum(const void* send, void* recv, std::size_t count,
                                         datatype dtype, cuda::stream_t stream) {
  COOPGNN_NVTX_RANGE("comm/allreduce");
  scoped_wall_cpu_timer t(&stats_.seconds, &stats_.cpu_seconds);
  count_collective();
  expect_host_stream(stream, "allreduce");
  visit_summable(dtype, "allreduce", [&](auto zero) {
    using T = decltype(zero);
    reduce_scatter_gather<T>(static_cast<const T*>(send), static_cast<T*>(recv), count);
  });
  if (size() > 1) stats_.allreduce_bytes += static_cast<std::int64_t>(count * size_of(dtype));
}

// The sum goes into the group's shared buffer, never into a PE's recv, so a PE may overwrite its
// recv (send, in place) as soon as the sum is complete, and no meeting is needed after the
// copies: the shared buffer is written again only by a later collective, after every PE has
// arrived at that collective's first meeting, i.e. after every PE has finished copying.
// Small sums: the last PE to arrive at the one meeting checks the sizes and sums everything.
// Large ones: that PE checks the sizes and sizes the buffer; then PE c sums chunk c (cache-line
// aligned, so no two PEs write one line) of every PE's send; the second meeting makes every
// chunk final and the sends free, and every PE copies the whole sum into its recv.
template <typename T>
void host_communicator::reduce_scatter_gather(const T* send, T* recv, std::size_t n) {
  auto const p = static_cast<std::size_t>(size());
  auto const me = static_cast<std::size_t>(rank_);
  host_comm_group& g = *group_;
  g.ptr_[me] = send;
  g.scalar_[me] = static_cast<std::int64_t>(n);
  bool const serial = p * n <= kSerialSumElements;
  meet("allreduce", [&] {
    g.failure_.clear();
    for (std::size_t q = 0; q < p; ++q) {
      if (g.scalar_[q] != g.scalar_[0]) {
        g.failure_ = fmt::format("allreduce size mismatch: PE 0 has {} values, PE {} has {}",
                                 g.scalar_[0], q, g.scalar_[q]);
        return;
      }
    }
    T* const sum = reinterpret_cast<T*>(g.shared(n * sizeof(T)));
    if (serial) sum_in_rank_order(g.ptr_, sum, 0, n);
  });
  throw_if_failed();
  T* const sum = reinterpret_cast<T*>(g.shared(0));
  if (!serial) {
    std::size_t const per_line = 64 / sizeof(T);
    std::size_t const lines = (n + per_line - 1) / per_line;
    auto const chunk_begin = [&](std::size_t c) { return std::min(n, c * lines / p * per_line); };
    sum_in_rank_order(g.ptr_, sum, chunk_begin(me), chunk_begin(me + 1));
    meet("allreduce");  // every chunk is summed; no PE reads a send any more
  }
  if (n > 0) std::memcpy(recv, sum, n * sizeof(T));
}

void host_communicator::do_broadcast(const void* send, void* recv, std::size_t count,
                                     datatype dtype, int root, cuda::stream_t stream) {
  COOPGNN_NVTX_RANGE("comm/broadcast");
  scoped_wall_cpu_timer t(&stats_.seconds, &stats_.cpu_seconds);
  count_collective();
  COOPGNN_EXPECTS(root >= 0 && root < size(), "broadcast root {} is outside [0, {})", root, size());
  expect_host_stream(stream, "broadcast");
  auto const bytes = count * size_of(dtype);
  host_comm_group& g = *group_;
  g.ptr_[rank_] = send;
  g.scalar_[rank_] = static_cast<std::int64_t>(bytes);
  // The last PE decides for all: either every PE copies the root's bytes, or none does (and no
  // PE reads the root's buffer after the meeting, when the root may have left).
  meet("broadcast", [&] {
    g.failure_.clear();
    auto const r = static_cast<std::size_t>(root);
    for (std::size_t q = 0; q < g.scalar_.size(); ++q) {
      if (g.scalar_[q] != g.scalar_[r]) {
        g.failure_ =
            fmt::format("broadcast size mismatch: PE {} passed {} bytes, the root (PE {}) {}", q,
                        g.scalar_[q], root, g.scalar_[r]);
        return;
      }
    }
    auto const n = static_cast<std::size_t>(g.scalar_[r]);
    if (n > 0) std::memcpy(g.shared(n), g.ptr_[r], n);
  });
  throw_if_failed();
  if (bytes > 0 && !(rank_ == root && recv == send)) std::memcpy(recv, g.shared(0), bytes);
}

void host_communicator::do_barrier() {
  COOPGNN_NVTX_RANGE("comm/barrier");
  scoped_wall_cpu_timer t(&stats_.seconds, &stats_.cpu_seconds);
  count_collective();
  meet("barrier");
}

}  // namespace coopgnn
