#ifdef COOPGNN_WITH_CUDA

#include "runtime/pipeline/minibatch_cuda.hpp"

#include "runtime/core/error.hpp"
#include "runtime/core/nvtx.hpp"

namespace coopgnn::cuda {

namespace {

/// A device copy of `src` on ctx.compute().
device_buffer<vid_t> copy_of(const cuda_context& ctx, const device_buffer<vid_t>& src) {
  auto out = ctx.allocate<vid_t>(src.size());
  if (src.bytes() > 0) detail::copy_async(out.data(), src.data(), src.bytes(), ctx.compute());
  return out;
}

/// Samples layer l for `frontier` and appends the compacted block to out.blocks, counting its
/// edges (the first half of a layer in both protocols).
const device_block& sample_layer(const cuda_context& ctx, const device_csc& g,
                                 const device_buffer<vid_t>& frontier, const batch_key& key,
                                 std::size_t l, device_sampled_batch& out) {
  auto const s = sample_neighbors(ctx, g, frontier, layer_params(key, l));
  out.blocks.push_back(make_block(ctx, g, frontier, s));
  out.work.sampled_edges += static_cast<std::int64_t>(out.blocks.back().indices.size());
  return out.blocks.back();
}

}  // namespace

std::int64_t device_sampled_batch::bytes() const {
  std::int64_t b = 0;
  for (auto const& blk : blocks) {
    b += static_cast<std::int64_t>(blk.src_ids.bytes() + blk.indptr.bytes() +
                                   blk.indices.bytes() + blk.weights.bytes() +
                                   blk.src_degree.bytes());
  }
  for (auto const& r : routes) b += r.bytes();
  return b + static_cast<std::int64_t>(input_nodes.bytes());
}

device_sampled_batch sample_independent(const cuda_context& ctx, const device_csc& g,
                                        std::span<const vid_t> seeds, const batch_key& key) {
  COOPGNN_NVTX_RANGE("sample/independent_device");
  device_sampled_batch out;
  auto frontier = ctx.to_device(seeds);
  for (std::size_t l = 0; l < key.fanouts.size(); ++l) {
    device_block const& b = sample_layer(ctx, g, frontier, key, l, out);
    out.work.sampled_vertices += static_cast<std::int64_t>(b.src_ids.size());
    frontier = copy_of(ctx, b.src_ids);
  }
  out.input_nodes = std::move(frontier);
  out.work.seeds = static_cast<std::int64_t>(seeds.size());
  return out;
}

device_sampled_batch sample_cooperative(const cuda_context& ctx, const exec_context& xctx,
                                        communicator& comm,
                                        const device_csc& g,
                                        const device_buffer<std::uint16_t>& owner_of,
                                        std::span<const vid_t> owned_seeds, const batch_key& key) {
  COOPGNN_NVTX_RANGE("sample/cooperative_device");
  auto const P = static_cast<std::size_t>(comm.size());
  device_sampled_batch out;
  auto frontier = ctx.to_device(owned_seeds);
  for (std::size_t l = 0; l < key.fanouts.size(); ++l) {
    device_block const& b = sample_layer(ctx, g, frontier, key, l, out);

    // Partition the local source list by owner (stable), then send each id to its owner.
    auto const split = split_by_owner(ctx, owner_of, comm.size(), b.src_ids);
    exchange_plan plan;
    plan.send_counts = split.counts;
    plan.recv_counts.assign(P, 0);
    comm.alltoall(plan.send_counts, plan.recv_counts);
    auto const sent0 = comm.stats().alltoall_bytes_sent;
    std::vector<std::int64_t> send_bytes(P), recv_bytes(P);
    std::int64_t total = 0;
    for (std::size_t q = 0; q < P; ++q) {
      send_bytes[q] = plan.send_counts[q] * static_cast<std::int64_t>(sizeof(vid_t));
      recv_bytes[q] = plan.recv_counts[q] * static_cast<std::int64_t>(sizeof(vid_t));
      total += plan.recv_counts[q];
    }
    auto recv_ids = ctx.allocate<vid_t>(static_cast<std::size_t>(total));
    comm.alltoallv(reinterpret_cast<const std::byte*>(split.sorted_ids.data()), send_bytes,
                   reinterpret_cast<std::byte*>(recv_ids.data()), recv_bytes);
    out.id_bytes.push_back(comm.stats().alltoall_bytes_sent - sent0);

    // Owner-side deduplication: S^{l+1}_p sorted, and the inverse map of every request.
    auto u = unique_with_inverse(ctx, recv_ids);
    auto const next_rows = static_cast<std::int64_t>(u.unique.size());
    out.work.sampled_vertices += next_rows;
    plan.send_perm = ctx.to_host(split.perm);
    plan.recv_inv = ctx.to_host(u.inverse);
    out.routes.push_back(make_route(xctx, plan, next_rows));
    out.host_plans.push_back(std::move(plan));
    frontier = std::move(u.unique);
  }
  out.input_nodes = std::move(frontier);
  out.work.seeds = static_cast<std::int64_t>(owned_seeds.size());
  return out;
}

}  // namespace coopgnn::cuda

#endif  // COOPGNN_WITH_CUDA
