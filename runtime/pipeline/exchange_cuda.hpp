// The row exchanges of cooperative minibatching on the CUDA backend: the device versions of
// exchange_pull and exchange_push (runtime/pipeline/minibatch.hpp; Algorithm 1 of Balin, LaSalle
// & Catalyurek, "Cooperative Minibatching in Graph Neural Networks", TMLR 2025), routing layer
// outputs forward and their gradients backward through a device communicator (NCCL or peer-copy,
// runtime/comm/device_comm.hpp).
//
// Includable from .cpp files in any build; definitions exist only in CUDA builds.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "models/device_model.hpp"
#include "runtime/comm/communicator.hpp"
#include "runtime/core/cuda_context.hpp"
#include "runtime/pipeline/minibatch.hpp"

namespace coopgnn::cuda {

/// An exchange_plan with its index arrays on the device, ready for the two directions.
struct device_exchange_plan {
  std::vector<std::int64_t> send_counts;  ///< [P] host, as exchange_plan
  std::vector<std::int64_t> recv_counts;  ///< [P] host, as exchange_plan
  std::int64_t num_requester_rows = 0;    ///< |S~^l_p| = send_perm.size() (a permutation)
  std::int64_t num_owner_rows = 0;        ///< |S^{l+1}_p|
  device_buffer<std::int64_t> send_perm;  ///< [num_requester_rows] as exchange_plan
  device_buffer<std::int64_t> recv_pos;   ///< [num_requester_rows] position in the received rows
                                          ///< of local source i: the inverse of send_perm
  device_buffer<std::int64_t> recv_inv;   ///< [sum recv] owner row per request
  // The scatter-add of exchange_push as an SpMM over a CSR by owner row: owner row o sums the
  // received rows push_sources[push_indptr[o] .. push_indptr[o + 1]) (ascending request index)
  // with unit weights.
  device_buffer<std::int64_t> push_indptr;   ///< [num_owner_rows + 1]
  device_buffer<std::int64_t> push_sources;  ///< [sum recv] request indices grouped by owner row
  device_buffer<float> push_weights;         ///< [sum recv] ones
};

/// Typed all-to-all-v of device rows through a device communicator: `send` holds
/// send_counts[q] rows of `row` elements for PE q, back to back; returns the recv_counts[q] rows
/// from each PE q, back to back, in a new buffer from ctx's pool (the device counterpart of
/// alltoallv_known in runtime/comm/communicator.hpp). Collective.
/// @param send_counts, recv_counts  [P] host row counts (recv from a prior count exchange)
/// @throws comm_error when a peer fails; cuda_error when the allocation fails.
template <typename T>
device_buffer<T> alltoallv_device(const cuda_context& ctx, communicator& comm,
                                  const device_buffer<T>& send,
                                  std::span<const std::int64_t> send_counts,
                                  std::span<const std::int64_t> recv_counts, std::int64_t row = 1) {
  auto const p = send_counts.size();
  auto const item = row * static_cast<std::int64_t>(sizeof(T));
  std::vector<std::int64_t> sb(p), rb(p);
  std::int64_t total = 0;
  for (std::size_t q = 0; q < p; ++q) {
    sb[q] = send_counts[q] * item;
    rb[q] = recv_counts[q] * item;
    total += recv_counts[q] * row;
  }
  auto recv = ctx.allocate<T>(static_cast<std::size_t>(total));
  comm.alltoallv(reinterpret_cast<const std::byte*>(send.data()), sb,
                 reinterpret_cast<std::byte*>(recv.data()), rb);
  return recv;
}

/// Copies `plan` to the device on ctx.compute() with the push CSR (built on the host).
/// @param num_owner_rows  |S^{l+1}_p|: the owner-side row count (next layer's num_dst)
/// @throws logic_error when send_perm is not a permutation of [0, send_perm.size()) or a
///         recv_inv entry is outside [0, num_owner_rows) (the message names the position);
///         cuda_error on CUDA failures. Synchronises ctx.compute() once.
device_exchange_plan upload(const cuda_context& ctx, const exchange_plan& plan,
                            std::int64_t num_owner_rows);

/// Owner -> requester: the device version of coopgnn::exchange_pull. Request r is answered with
/// owner_rows[recv_inv[r]]; the requester places the row it receives for local source i at row i.
/// Byte-for-byte equal to the host version (copies only).
/// @param comm        a device communicator of this PE (buffers are device memory)
/// @param owner_rows  [num_owner_rows, d] device
/// @returns           [num_requester_rows, d] device
/// @throws logic_error on a row-count mismatch; comm_error when a peer fails; cuda_error.
device_matrix exchange_pull(const cuda_context& ctx, communicator& comm,
                            const device_exchange_plan& plan, const device_matrix& owner_rows);

/// Requester -> owner: the device version of coopgnn::exchange_push. Each requested row's
/// gradient goes back to its owner, which sums the contributions into its rows in receive order
/// starting from zero (spmm over the push CSR: ascending request index per owner row, unit
/// weights), so the sums are bitwise those of the host version.
/// @param requester_grads  [num_requester_rows, d] device
/// @returns                [num_owner_rows, d] device
/// @throws as exchange_pull.
device_matrix exchange_push(const cuda_context& ctx, communicator& comm,
                            const device_exchange_plan& plan, const device_matrix& requester_grads);

}  // namespace coopgnn::cuda
