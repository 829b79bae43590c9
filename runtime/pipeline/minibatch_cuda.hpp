// Sampling of one minibatch on the CUDA backend under the two protocols of DESIGN.md section 6:
// the device versions of sample_independent and sample_cooperative (runtime/pipeline/
// minibatch.hpp; Algorithm 1 of Balin, LaSalle & Catalyurek, "Cooperative Minibatching in Graph
// Neural Networks", TMLR 2025). They return exactly the host functions' blocks, plans and work
// counters (the device sampler, unique-and-compact, owner split and dedup are each bitwise equal
// to their host references, kernels/sample/sample_cuda.hpp).
//
// Includable from .cpp files in any build; definitions exist only in CUDA builds.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "kernels/sample/sample_cuda.hpp"
#include "runtime/comm/communicator.hpp"
#include "runtime/pipeline/exchange.hpp"
#include "runtime/pipeline/minibatch.hpp"

namespace coopgnn::cuda {

/// One PE's share of a minibatch sampled on the device.
struct device_sampled_batch {
  std::vector<device_block> blocks;          ///< [L]; blocks[l] samples layer l
  std::vector<exchange_route> routes;        ///< [L] cooperative only: the plans on the device
  std::vector<exchange_plan> host_plans;     ///< [L] cooperative only: the same plans on the host
  device_buffer<vid_t> input_nodes;          ///< vertices whose features this PE loads
  work_counters work;                        ///< as sampled_batch::work
  std::vector<std::int64_t> id_bytes;        ///< [L] cooperative: id bytes sent to other PEs

  /// Bytes of the blocks, plans and input ids on the device.
  [[nodiscard]] std::int64_t bytes() const;
};

/// The view of a device block (what the model's layers take).
inline block_view view(const device_block& b) {
  return {b.num_dst,
          static_cast<std::int64_t>(b.src_ids.size()),
          static_cast<std::int64_t>(b.indices.size()),
          b.src_ids.data(),
          b.indptr.data(),
          b.indices.data(),
          b.weights.data(),
          b.src_degree.empty() ? nullptr : b.src_degree.data(),
          memory_space::device};
}

/// Device independent minibatching: sample_neighbors + make_block per layer on ctx.compute().
/// @param g      the graph on this PE's device
/// @param seeds  [n] host ids, this PE's part of the global batch (distinct)
/// @throws logic_error / cuda_error as the device sampler. Synchronises ctx.compute() a few
///         times per layer (sizes known only on the device).
device_sampled_batch sample_independent(const cuda_context& ctx, const device_csc& g,
                                        std::span<const vid_t> seeds, const batch_key& key);

/// Device cooperative minibatching, sampling phase; per layer: sample and compact S~^l_p on the
/// device, split it by owner (split_by_owner), exchange the counts (host) and the ids (device
/// all-to-all-v through `comm`), deduplicate what arrived into S^{l+1}_p (unique_with_inverse),
/// and keep the plan (send_perm, recv_inv are copied to the host once to build the device
/// plan's push CSR and recv_pos, see exchange_cuda.hpp). Collective over `comm`.
/// @param xctx      the PE's exec_context over ctx (the routes are placed with it)
/// @param comm      this PE's device communicator
/// @param owner_of  [|V|] device owner map (upload_owners) of an ownership over comm.size() PEs
/// @param owned_seeds  [n] host ids: the global batch's seeds this PE owns (S^0_p)
/// @throws comm_error if a peer fails; logic_error / cuda_error as the kernels.
device_sampled_batch sample_cooperative(const cuda_context& ctx, const exec_context& xctx,
                                        communicator& comm,
                                        const device_csc& g,
                                        const device_buffer<std::uint16_t>& owner_of,
                                        std::span<const vid_t> owned_seeds, const batch_key& key);

}  // namespace coopgnn::cuda
