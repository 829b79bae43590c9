#include "runtime/pipeline/minibatch.hpp"

#include <algorithm>
#include <type_traits>

#include "runtime/core/error.hpp"
#include "runtime/pipeline/exchange.hpp"

namespace coopgnn {

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

namespace {

/// A copy of `src` in ctx.space() (a frontier that outlives the block it came from).
buffer<vid_t> copy_ids(const exec_context& ctx, buffer_view<const vid_t> src) {
  buffer<vid_t> out(ctx, src.size);
  copy<vid_t>(ctx, out.view(), src);
  return out;
}

/// Samples layer l for `frontier` and appends the compacted block, counting its edges (the first
/// half of a layer in both protocols).
const block_buffers& sample_layer(const exec_context& ctx, const csc_view& g,
                                  const buffer<vid_t>& frontier, const batch_key& key,
                                  std::size_t l, minibatch& out) {
  auto const s = sample_neighbors(ctx, g, frontier.view(), layer_params(key, l));
  out.blocks.push_back(make_block(ctx, g, frontier.view(), s));
  out.work.sampled_edges += static_cast<std::int64_t>(out.blocks.back().indices.size());
  return out.blocks.back();
}

}  // namespace

minibatch sample_independent(const exec_context& ctx, const csc_view& g,
                             buffer_view<const vid_t> seeds, const batch_key& key) {
  minibatch out;
  buffer<vid_t> frontier = copy_ids(ctx, seeds);
  for (std::size_t l = 0; l < key.fanouts.size(); ++l) {
    block_buffers const& b = sample_layer(ctx, g, frontier, key, l, out);
    out.work.sampled_vertices += static_cast<std::int64_t>(b.src_ids.size());
    frontier = copy_ids(ctx, b.src_ids.view());
  }
  out.input_nodes = std::move(frontier);
  out.work.seeds = static_cast<std::int64_t>(seeds.size);
  return out;
}

minibatch sample_cooperative(const exec_context& ctx, communicator& comm, const csc_view& g,
                             buffer_view<const std::uint16_t> owner_of,
                             buffer_view<const vid_t> owned_seeds, const batch_key& key) {
  auto const P = static_cast<std::size_t>(comm.size());
  minibatch out;
  buffer<vid_t> frontier = copy_ids(ctx, owned_seeds);
  for (std::size_t l = 0; l < key.fanouts.size(); ++l) {
    block_buffers const& b = sample_layer(ctx, g, frontier, key, l, out);

    // Partition the local source list by owner (stable), then send each id to its owner.
    auto split = split_by_owner(ctx, owner_of, comm.size(), b.src_ids.view());
    exchange_plan plan;
    plan.send_counts = std::move(split.counts);
    plan.recv_counts.assign(P, 0);
    comm.alltoall(plan.send_counts, plan.recv_counts);
    auto const sent0 = comm.stats().alltoall_bytes_sent;
    buffer<vid_t> const recv_ids = alltoallv_rows<vid_t>(ctx, comm, split.sorted_ids.view(),
                                                         plan.send_counts, plan.recv_counts);
    out.id_bytes.push_back(comm.stats().alltoall_bytes_sent - sent0);

    // Owner-side deduplication: S^{l+1}_p sorted, and the inverse map of every request.
    auto u = unique_with_inverse(ctx, recv_ids.view());
    out.work.sampled_vertices += static_cast<std::int64_t>(u.unique.size());
    out.plans.push_back({std::move(plan.send_counts), std::move(plan.recv_counts),
                         std::move(split.perm), std::move(u.inverse)});
    frontier = std::move(u.unique);
  }
  out.input_nodes = std::move(frontier);
  out.work.seeds = static_cast<std::int64_t>(owned_seeds.size);
  return out;
}

sampled_batch sample_independent(const exec_context& ctx, const csc_graph& g,
                                 std::span<const vid_t> seeds, const batch_key& key) {
  COOPGNN_EXPECTS(ctx.space() == memory_space::host,
                  "sample_independent: the host-data overload needs a host context");
  return to_host(ctx, sample_independent(ctx, view(g), host_view(seeds), key));
}

sampled_batch sample_cooperative(const exec_context& ctx, communicator& comm, const csc_graph& g,
                                 const ownership& owners, std::span<const vid_t> owned_seeds,
                                 const batch_key& key) {
  COOPGNN_EXPECTS(ctx.space() == memory_space::host,
                  "sample_cooperative: the host-data overload needs a host context");
  return to_host(ctx, sample_cooperative(ctx, comm, view(g), host_view(owners.map()),
                                         host_view(owned_seeds), key));
}

namespace {
template <class T>
std::vector<T> host_vector(const exec_context& ctx, buffer<T>&& b) {
  if (b.space() == memory_space::host) return std::move(b).release_host();
  return download<T>(ctx, b.view());
}
}  // namespace

sampled_batch to_host(const exec_context& ctx, minibatch&& mb) {
  sampled_batch out;
  for (auto& b : mb.blocks) {
    block h;
    h.num_dst = b.num_dst;
    h.src_ids = host_vector(ctx, std::move(b.src_ids));
    h.indptr = host_vector(ctx, std::move(b.indptr));
    h.indices = host_vector(ctx, std::move(b.indices));
    h.weights = host_vector(ctx, std::move(b.weights));
    h.src_degree = host_vector(ctx, std::move(b.src_degree));
    out.blocks.push_back(std::move(h));
  }
  for (auto& p : mb.plans) {
    out.plans.push_back({std::move(p.send_counts), std::move(p.recv_counts),
                         host_vector(ctx, std::move(p.send_perm)),
                         host_vector(ctx, std::move(p.recv_inv))});
  }
  out.input_nodes = host_vector(ctx, std::move(mb.input_nodes));
  out.work = mb.work;
  out.id_bytes = std::move(mb.id_bytes);
  return out;
}

block_buffers copy_block(const exec_context& ctx, const block_buffers& b) {
  auto dup = [&](const auto& src) {
    using T = std::remove_cvref_t<decltype(*src.data())>;
    buffer<T> d(ctx, src.size());
    copy<T>(ctx, d.view(), src.view());
    return d;
  };
  block_buffers out;
  out.num_dst = b.num_dst;
  out.src_ids = dup(b.src_ids);
  out.indptr = dup(b.indptr);
  out.indices = dup(b.indices);
  out.weights = dup(b.weights);
  out.src_degree = dup(b.src_degree);
  return out;
}

placed_plan copy_plan(const exec_context& ctx, const placed_plan& p) {
  placed_plan out{p.send_counts, p.recv_counts, buffer<std::int64_t>(ctx, p.send_perm.size()),
                  buffer<std::int64_t>(ctx, p.recv_inv.size())};
  copy<std::int64_t>(ctx, out.send_perm.view(), p.send_perm.view());
  copy<std::int64_t>(ctx, out.recv_inv.view(), p.recv_inv.view());
  return out;
}

std::int64_t minibatch::bytes() const {
  std::int64_t b = 0;
  for (auto const& blk : blocks) b += blk.bytes();
  for (auto const& p : plans) {
    b += static_cast<std::int64_t>(p.send_perm.bytes() + p.recv_inv.bytes() +
                                   (p.send_counts.size() + p.recv_counts.size()) *
                                       sizeof(std::int64_t));
  }
  return b + static_cast<std::int64_t>(input_nodes.bytes());
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
