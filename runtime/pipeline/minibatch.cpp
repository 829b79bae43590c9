#include "runtime/pipeline/minibatch.hpp"

#include <algorithm>

#include "runtime/core/error.hpp"

namespace coopgnn {

placed_block place(const exec_context& ctx, const block& b) {
  placed_block p;
  p.view = view(b);
  if (ctx.space() == memory_space::host) return p;
  p.src_ids = upload<vid_t>(ctx, b.src_ids);
  p.indptr = upload<eid_t>(ctx, b.indptr);
  p.indices = upload<std::int64_t>(ctx, b.indices);
  p.weights = upload<float>(ctx, b.weights);
  p.src_degree = upload<std::int64_t>(ctx, b.src_degree);
  p.view.src_ids = p.src_ids.data();
  p.view.indptr = p.indptr.data();
  p.view.indices = p.indices.data();
  p.view.weights = p.weights.data();
  p.view.src_degree = b.src_degree.empty() ? nullptr : p.src_degree.data();
  p.view.space = ctx.space();
  return p;
}

sample_params layer_params(const batch_key& key, std::size_t l) {
  sample_params p;
  p.kind = key.kind;
  p.fanout = key.fanouts[l];
  p.run_seed = key.run_seed;
  p.layer = static_cast<std::uint32_t>(l);
  p.batch = key.batch;
  p.dependency = key.dependency;
  return p;
}

sampled_batch sample_independent(const exec_context& ctx, const csc_graph& g,
                                 std::span<const vid_t> seeds, const batch_key& key) {
  sampled_batch out;
  std::vector<vid_t> frontier(seeds.begin(), seeds.end());
  for (std::size_t l = 0; l < key.fanouts.size(); ++l) {
    auto const s = sample_neighbors(ctx, g, frontier, layer_params(key, l));
    out.blocks.push_back(make_block(g, frontier, s));
    block const& b = out.blocks.back();
    out.work.sampled_edges += b.num_edges();
    out.work.sampled_vertices += b.num_src();
    frontier = b.src_ids;
  }
  out.input_nodes = std::move(frontier);
  out.work.seeds = static_cast<std::int64_t>(seeds.size());
  return out;
}

sampled_batch sample_cooperative(const exec_context& ctx, communicator& comm, const csc_graph& g,
                                 const ownership& owners, std::span<const vid_t> owned_seeds,
                                 const batch_key& key) {
  auto const P = static_cast<std::size_t>(comm.size());
  sampled_batch out;
  std::vector<vid_t> frontier(owned_seeds.begin(), owned_seeds.end());
  for (std::size_t l = 0; l < key.fanouts.size(); ++l) {
    auto const s = sample_neighbors(ctx, g, frontier, layer_params(key, l));
    out.blocks.push_back(make_block(g, frontier, s));
    block const& b = out.blocks.back();
    out.work.sampled_edges += b.num_edges();

    // Partition the local source list by owner (stable: within an owner, source order).
    exchange_plan plan;
    plan.send_counts.assign(P, 0);
    for (vid_t v : b.src_ids) ++plan.send_counts[owners.owner(v)];
    std::vector<std::int64_t> offset(P + 1, 0);
    for (std::size_t q = 0; q < P; ++q) offset[q + 1] = offset[q] + plan.send_counts[q];
    plan.send_perm.resize(b.src_ids.size());
    std::vector<vid_t> send_ids(b.src_ids.size());
    for (std::int64_t i = 0; i < b.num_src(); ++i) {
      auto& pos = offset[owners.owner(b.src_ids[i])];
      plan.send_perm[pos] = i;
      send_ids[pos] = b.src_ids[i];
      ++pos;
    }
    auto const sent0 = comm.stats().alltoall_bytes_sent;
    auto const recv_ids = alltoallv<vid_t>(comm, send_ids, plan.send_counts, plan.recv_counts);
    out.id_bytes.push_back(comm.stats().alltoall_bytes_sent - sent0);

    // Owner-side deduplication: S^{l+1}_p sorted, and the inverse map of every request.
    std::vector<vid_t> next(recv_ids);
    std::sort(next.begin(), next.end());
    next.erase(std::unique(next.begin(), next.end()), next.end());
    plan.recv_inv.resize(recv_ids.size());
    for (std::size_t r = 0; r < recv_ids.size(); ++r) {
      plan.recv_inv[r] = std::lower_bound(next.begin(), next.end(), recv_ids[r]) - next.begin();
    }
    out.work.sampled_vertices += static_cast<std::int64_t>(next.size());
    out.plans.push_back(std::move(plan));
    frontier = std::move(next);
  }
  out.input_nodes = std::move(frontier);
  out.work.seeds = static_cast<std::int64_t>(owned_seeds.size());
  return out;
}

std::int64_t sampled_batch::bytes() const {
  std::int64_t b = 0;
  for (auto const& blk : blocks) {
    b += static_cast<std::int64_t>(
        blk.src_ids.size() * sizeof(vid_t) + blk.indptr.size() * sizeof(eid_t) +
        blk.indices.size() * sizeof(std::int64_t) + blk.weights.size() * sizeof(float) +
        blk.src_degree.size() * sizeof(std::int64_t));
  }
  for (auto const& p : plans) {
    b += static_cast<std::int64_t>(
        (p.send_perm.size() + p.recv_inv.size() + p.send_counts.size() + p.recv_counts.size()) *
        sizeof(std::int64_t));
  }
  return b + static_cast<std::int64_t>(input_nodes.size() * sizeof(vid_t));
}

}  // namespace coopgnn
