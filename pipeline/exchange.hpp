// The row exchanges of cooperative minibatching (docs/design.md section 6.2, steps 3-6; Algorithm 1
// of Balin, LaSalle & Catalyurek, "Cooperative Minibatching in Graph Neural Networks", TMLR 2025):
// features and layer outputs go owner -> requester (pull), their gradients requester -> owner
// with a scatter-add (push). Written once for every backend: a plan is placed in the PE's memory
// space as an exchange_route, rows are moved with the gather and SpMM kernel entries and an
// all-to-all-v of the communicator that serves that space (the host communicator for host and
// emulated memory, a device communicator for CUDA memory).
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "runtime/comm/communicator.hpp"
#include "runtime/core/exec_context.hpp"
#include "runtime/core/memory.hpp"
#include "pipeline/minibatch.hpp"

namespace coopgnn {

/// An exchange_plan placed in a PE's memory space with its index arrays, ready for both
/// directions. recv_pos is the inverse of send_perm (recv_pos[send_perm[j]] = j: the position
/// among the received rows of local source i); the push CSR groups the requests by owner row
/// (owner row o sums the received rows push_sources[push_indptr[o] .. push_indptr[o + 1]) in
/// ascending request order). Counts stay on the host.
struct exchange_route {
  std::vector<std::int64_t> send_counts;  ///< [P] as exchange_plan
  std::vector<std::int64_t> recv_counts;  ///< [P] as exchange_plan
  std::int64_t num_requester_rows = 0;    ///< |S~^l_p| = send_perm.size()
  std::int64_t num_owner_rows = 0;        ///< |S^{l+1}_p|
  buffer<std::int64_t> send_perm;         ///< [num_requester_rows]
  buffer<std::int64_t> recv_pos;          ///< [num_requester_rows]
  buffer<std::int64_t> recv_inv;          ///< [sum recv] owner row per request
  buffer<std::int64_t> push_indptr;       ///< [num_owner_rows + 1]
  buffer<std::int64_t> push_sources;      ///< [sum recv]
  buffer<float> push_weights;             ///< [sum recv] ones (the push is an SpMM)
  /// One PE (exchange_plan::identity): requester rows == owner rows, the index arrays are empty
  /// and both exchanges hand their input back without a copy or a collective.
  bool identity = false;

  /// Rows this PE sends plus rows it receives in one exchange (staging accounting); 0 for an
  /// identity route.
  [[nodiscard]] std::int64_t staging_rows() const {
    if (identity) return 0;
    return num_requester_rows + static_cast<std::int64_t>(recv_inv.size());
  }
  /// Bytes held by the index arrays.
  [[nodiscard]] std::int64_t bytes() const;
};

/// The route of a plan in ctx.space() (what the sampling protocols return): the index arrays
/// are built there with group_by_value, nothing goes through the host. The plan's arrays move
/// into the route.
/// @param num_owner_rows  |S^{l+1}_p|: the owner side's rows (the next layer's num_dst, or the
///                        number of input nodes for the last layer)
/// An identity plan (one PE) gives an identity route: no index arrays are built.
/// @throws logic_error naming the value when send_perm or recv_inv is outside its range, or
///         when an identity plan's row count differs from num_owner_rows, or
///         (host and emulated backends, where the offsets are readable) when send_perm is not a
///         permutation; on CUDA the values are not checked (group_by_value).
exchange_route make_route(const exec_context& ctx, placed_plan&& plan, std::int64_t num_owner_rows);

/// Typed all-to-all-v of rows in ctx.space() through `comm` into caller-provided storage: `send`
/// holds send_counts[q] rows of `row` elements for PE q, back to back; `recv` (ctx.space(),
/// exactly sum_q recv_counts[q] * row elements) receives the recv_counts[q] rows from each PE q,
/// back to back. The counts are host spans [P] that both sides agreed on earlier in the step
/// (recv_counts[q] is what PE q passes as send_counts[rank()]: an alltoall of the counts, or a
/// plan built from one), so the bytes go through communicator::alltoallv_agreed and the counts
/// are not exchanged again (on NCCL they are not re-checked either: counts that disagree are a
/// caller bug there; the host and peer-copy communicators still fail with comm_error). Ordered
/// on ctx as the communicator's calls are; `recv` is ready and `send` reusable on return.
/// Collective.
/// @throws comm_error when a peer fails; logic_error when send or recv is not in ctx.space() or
///         a size disagrees with the counts.
template <typename T>
void alltoallv_rows_into(const exec_context& ctx, communicator& comm, buffer_view<const T> send,
                         std::span<const std::int64_t> send_counts,
                         std::span<const std::int64_t> recv_counts, buffer_view<T> recv,
                         std::int64_t row = 1) {
  detail::expect_space(ctx, send.space, "alltoallv_rows", "send");
  detail::expect_space(ctx, recv.space, "alltoallv_rows", "recv");
  COOPGNN_EXPECTS(comm.serves(ctx),
                  "alltoallv_rows: the communicator does not move this context's memory (PE {})",
                  ctx.pe());
  auto const p = send_counts.size();
  COOPGNN_EXPECTS(recv_counts.size() == p, "alltoallv_rows: {} send counts but {} receive counts",
                  p, recv_counts.size());
  auto const item = row * static_cast<std::int64_t>(sizeof(T));
  std::vector<std::int64_t> sb(p), rb(p);
  std::int64_t total = 0, sent = 0;
  for (std::size_t q = 0; q < p; ++q) {
    sb[q] = send_counts[q] * item;
    rb[q] = recv_counts[q] * item;
    total += recv_counts[q] * row;
    sent += send_counts[q] * row;
  }
  COOPGNN_EXPECTS(sent == static_cast<std::int64_t>(send.size),
                  "alltoallv_rows: the counts send {} elements but the buffer holds {}", sent,
                  send.size);
  COOPGNN_EXPECTS(total == static_cast<std::int64_t>(recv.size),
                  "alltoallv_rows: the counts receive {} elements but the buffer holds {}", total,
                  recv.size);
  comm.alltoallv_agreed(reinterpret_cast<const std::byte*>(send.data), sb,
                        reinterpret_cast<std::byte*>(recv.data), rb);
}

/// alltoallv_rows_into a new buffer in ctx.space() of sum_q recv_counts[q] * row elements, which
/// it returns. Same contract (agreed counts) and errors.
template <typename T>
buffer<T> alltoallv_rows(const exec_context& ctx, communicator& comm, buffer_view<const T> send,
                         std::span<const std::int64_t> send_counts,
                         std::span<const std::int64_t> recv_counts, std::int64_t row = 1) {
  std::int64_t total = 0;
  for (std::int64_t c : recv_counts) total += c * row;
  buffer<T> recv(ctx, static_cast<std::size_t>(total));
  alltoallv_rows_into<T>(ctx, comm, send, send_counts, recv_counts, recv.view(), row);
  return recv;
}

/// All-to-all-v of rows whose receivers learn the counts in the same collective call
/// (communicator::alltoallv_with_counts: the counts all-to-all fused with the data): `send`
/// (ctx.space()) holds send_counts[q] rows of `row` elements for PE q, back to back. Returns a
/// new buffer in ctx.space() with the rows of PEs 0..P-1 back to back, and writes the rows
/// from each PE to `recv_counts` [P]. Ordered on ctx as the communicator's calls are.
/// Collective.
/// @throws comm_error when a peer fails; logic_error when send is not in ctx.space(), the
///         communicator does not serve ctx, or the counts do not add up to send.size / row.
template <typename T>
buffer<T> alltoallv_rows_with_counts(const exec_context& ctx, communicator& comm,
                                     buffer_view<const T> send,
                                     std::span<const std::int64_t> send_counts,
                                     std::vector<std::int64_t>& recv_counts, std::int64_t row = 1) {
  detail::expect_space(ctx, send.space, "alltoallv_rows_with_counts", "send");
  COOPGNN_EXPECTS(comm.serves(ctx),
                  "alltoallv_rows_with_counts: the communicator does not move this context's "
                  "memory (PE {})",
                  ctx.pe());
  auto const p = send_counts.size();
  auto const item = row * static_cast<std::int64_t>(sizeof(T));
  std::vector<std::int64_t> sb(p), rb(p, 0);
  std::int64_t sent = 0;
  for (std::size_t q = 0; q < p; ++q) {
    sb[q] = send_counts[q] * item;
    sent += send_counts[q] * row;
  }
  COOPGNN_EXPECTS(sent == static_cast<std::int64_t>(send.size),
                  "alltoallv_rows_with_counts: the counts send {} elements but the buffer holds {}",
                  sent, send.size);
  buffer<T> recv;
  comm.alltoallv_with_counts(
      send.data, sb, rb,
      [&](std::int64_t bytes) -> void* {
        recv = buffer<T>(ctx, static_cast<std::size_t>(bytes) / sizeof(T));
        return recv.data();
      },
      datatype::uint8, comm.default_stream());
  recv_counts.assign(p, 0);
  for (std::size_t q = 0; q < p; ++q) recv_counts[q] = rb[q] / item;
  return recv;
}

/// Caller-provided temporary storage of the row exchanges, in the spirit of CUB's temp storage
/// (a caller-owned scratch region the algorithm uses) but grown on demand instead of sized by a
/// first query: the send and receive staging of exchange_pull / exchange_push are views of two
/// slots that keep their memory between calls, so a PE that keeps one workspace for its lifetime
/// allocates staging only when an exchange needs more than every earlier one did, not once per
/// exchange. The slots are the two sides of a route, whichever the direction: `requests` holds
/// one row per received request ([sum recv_counts, d]: the owner's answers in a pull, the
/// gradients it receives in a push), `requester` one row per requester row
/// ([num_requester_rows, d]). A slot grows to exactly what is asked (the old contents are not
/// kept), so the workspace holds the largest staging seen, per side: what
/// exchange_route::staging_rows() accounts for, at the widest d. One workspace per PE (per
/// exec_context); not thread-safe. Memory: ctx.space() of the calls (a slot is reallocated if a
/// call comes from another space). Reuse is safe on every backend: the staging is written and
/// read in ctx's compute order, and every communicator call has finished with its buffers when it
/// returns, or (NCCL's agreed all-to-all-v) has ordered the compute stream after the work that
/// uses them (communicator.hpp). Destroy it before its context (device memory goes back to the
/// context's pool).
class exchange_workspace {
 public:
  /// The staging slots (the two sides of a route, see above).
  enum slot_id : int { requests = 0, requester = 1 };

  /// `n` floats of slot `s` in ctx.space(); values unspecified (whatever an earlier exchange
  /// left). Valid until the next call for the same slot. Reallocates the slot (to exactly n)
  /// when n exceeds its capacity or the slot is in another memory space; n = 0 gives an empty
  /// view in ctx.space() and leaves the slot alone.
  /// @throws cuda_error / std::bad_alloc when the memory cannot be had.
  [[nodiscard]] buffer_view<float> take(const exec_context& ctx, slot_id s, std::size_t n) {
    if (n == 0) return {nullptr, 0, ctx.space()};  // nothing to hold, in the caller's space
    auto& b = slots_[static_cast<std::size_t>(s)];
    if (n > b.size() || b.space() != ctx.space()) {
      b = buffer<float>();  // free first: the pool can hand the same memory back
      b = buffer<float>(ctx, n, no_init);
      ++allocations_;
    }
    return b.view().sub(0, n);
  }
  /// Bytes the slots hold.
  [[nodiscard]] std::int64_t bytes() const {
    return static_cast<std::int64_t>(slots_[0].bytes() + slots_[1].bytes());
  }
  /// How many times a slot was (re)allocated since construction.
  [[nodiscard]] std::int64_t allocations() const { return allocations_; }

 private:
  std::array<buffer<float>, 2> slots_;
  std::int64_t allocations_ = 0;
};

/// All-gather-v of rows: every PE's `send` (rows of `row` elements), concatenated in rank order,
/// on every PE, so every PE holds the same buffer. Built on the all-to-all-v (the rows are
/// replicated once per peer in a staging buffer of P * send.size elements). One collective call:
/// with `known_rows` empty, the row counts travel with the rows (alltoallv_rows_with_counts);
/// with `known_rows` [P] (the rows of each PE, agreed earlier in the step, e.g. by an all-gather
/// of as many rows of another array), the all-to-all-v is agreed (alltoallv_rows). When
/// `rows_out` is given, it receives the rows of each PE [P]. Collective.
/// @throws as alltoallv_rows; logic_error when send.size is not a multiple of row, or known_rows
///         has another length than P or disagrees with this PE's own rows.
template <typename T>
buffer<T> allgatherv_rows(const exec_context& ctx, communicator& comm, buffer_view<const T> send,
                          std::int64_t row = 1, std::span<const std::int64_t> known_rows = {},
                          std::vector<std::int64_t>* rows_out = nullptr) {
  COOPGNN_EXPECTS(row >= 1 && static_cast<std::int64_t>(send.size) % row == 0,
                  "allgatherv_rows: {} elements are not rows of {}", send.size, row);
  auto const P = static_cast<std::size_t>(comm.size());
  auto const rows = static_cast<std::int64_t>(send.size) / row;
  std::vector<std::int64_t> const send_counts(P, rows);
  buffer<T> staging(ctx, send.size * P);
  for (std::size_t q = 0; q < P; ++q)
    copy<T>(ctx, staging.view().sub(q * send.size, send.size), send);
  std::vector<std::int64_t> recv_counts;
  buffer<T> out;
  if (known_rows.empty()) {
    out = alltoallv_rows_with_counts<T>(ctx, comm, staging.view(), send_counts, recv_counts, row);
  } else {
    COOPGNN_EXPECTS(known_rows.size() == P &&
                        known_rows[static_cast<std::size_t>(comm.rank())] == rows,
                    "allgatherv_rows: {} known row counts for {} PEs, or this PE's {} rows differ",
                    known_rows.size(), P, rows);
    recv_counts.assign(known_rows.begin(), known_rows.end());
    out = alltoallv_rows<T>(ctx, comm, staging.view(), send_counts, recv_counts, row);
  }
  if (rows_out != nullptr) *rows_out = std::move(recv_counts);
  return out;
}

/// Owner -> requester (forward): request r is answered with owner_rows[recv_inv[r]]; the row
/// received for local source i lands at row i. Copies only, so every backend moves the same
/// bytes. The row counts are the route's (agreed while sampling), so the all-to-all-v does not
/// exchange them again (alltoallv_rows_into). Collective.
/// @param comm        the communicator of ctx.space() (see the file comment)
/// @param owner_rows  [route.num_owner_rows, d] in ctx.space()
/// @param ws          the PE's staging (the answers sent and the rows received); nullptr: a
///                    workspace local to the call (allocated and freed here)
/// @returns           [route.num_requester_rows, d] in ctx.space() (a new tensor, never a view
///                    of ws)
/// @throws logic_error on a row-count or space mismatch; comm_error when a peer fails.
/// An identity route returns a copy of owner_rows and calls no collective (ws is not touched).
tensor<float> exchange_pull(const exec_context& ctx, communicator& comm,
                            const exchange_route& route, tensor_view<const float> owner_rows,
                            exchange_workspace* ws = nullptr);
/// exchange_pull of rows the caller hands over: an identity route (one PE) returns them as they
/// are (no copy, no collective: the exchange is skipped), any other route as above.
tensor<float> exchange_pull(const exec_context& ctx, communicator& comm,
                            const exchange_route& route, tensor<float>&& owner_rows,
                            exchange_workspace* ws = nullptr);

/// Requester -> owner (backward): each requested row's gradient goes back to its owner, which
/// sums the contributions into its rows in receive order starting from zero (an SpMM over the
/// push CSR with unit weights: each sum is 0 + 1 * a + 1 * b + ... in ascending request order, the
/// same bits on every backend). Counts and staging as exchange_pull. Collective.
/// @param requester_grads  [route.num_requester_rows, d] in ctx.space()
/// @param ws               as exchange_pull (the gradients sent and received)
/// @returns                [route.num_owner_rows, d] in ctx.space() (a new tensor)
/// @throws as exchange_pull. An identity route returns a copy and calls no collective.
tensor<float> exchange_push(const exec_context& ctx, communicator& comm,
                            const exchange_route& route, tensor_view<const float> requester_grads,
                            exchange_workspace* ws = nullptr);
/// exchange_push of gradients the caller hands over: an identity route returns them as they are
/// (each owner row has exactly one request, so the sum is the row itself), any other as above.
tensor<float> exchange_push(const exec_context& ctx, communicator& comm,
                            const exchange_route& route, tensor<float>&& requester_grads,
                            exchange_workspace* ws = nullptr);

}  // namespace coopgnn
