#include "runtime/pipeline/minibatch.hpp"

#include <algorithm>

#include "runtime/core/error.hpp"

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

exchange_index make_exchange_index(const exchange_plan& plan, std::int64_t num_owner_rows) {
  exchange_index x;
  auto const n = plan.send_perm.size();
  x.recv_pos.assign(n, -1);
  for (std::size_t j = 0; j < n; ++j) {
    auto const i = plan.send_perm[j];
    COOPGNN_EXPECTS(i >= 0 && static_cast<std::size_t>(i) < n &&
                        x.recv_pos[static_cast<std::size_t>(i)] < 0,
                    "exchange plan: send_perm[{}] = {} is not part of a permutation of [0, {})", j,
                    i, n);
    x.recv_pos[static_cast<std::size_t>(i)] = static_cast<std::int64_t>(j);
  }
  COOPGNN_EXPECTS(num_owner_rows >= 0, "exchange plan: {} owner rows", num_owner_rows);
  auto const m = plan.recv_inv.size();
  x.push_indptr.assign(static_cast<std::size_t>(num_owner_rows) + 1, 0);
  for (std::size_t r = 0; r < m; ++r) {
    auto const o = plan.recv_inv[r];
    COOPGNN_EXPECTS(o >= 0 && o < num_owner_rows,
                    "exchange plan: recv_inv[{}] = {} is outside [0, {})", r, o, num_owner_rows);
    ++x.push_indptr[static_cast<std::size_t>(o) + 1];
  }
  for (std::size_t o = 0; o < static_cast<std::size_t>(num_owner_rows); ++o) {
    x.push_indptr[o + 1] += x.push_indptr[o];
  }
  x.push_sources.resize(m);
  std::vector<std::int64_t> next(x.push_indptr.begin(), x.push_indptr.end() - 1);
  for (std::size_t r = 0; r < m; ++r) {
    auto& slot = next[static_cast<std::size_t>(plan.recv_inv[r])];
    x.push_sources[static_cast<std::size_t>(slot++)] = static_cast<std::int64_t>(r);
  }
  return x;
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

matrix<float> exchange_pull(communicator& comm, const exchange_plan& plan,
                            const matrix<float>& owner_rows, std::int64_t num_requester_rows) {
  std::int64_t const d = owner_rows.cols();
  // Answer every request in receive order: grouped by requester, as the requester sent them.
  std::vector<float> send(plan.recv_inv.size() * static_cast<std::size_t>(d));
  for (std::size_t r = 0; r < plan.recv_inv.size(); ++r) {
    COOPGNN_EXPECTS(plan.recv_inv[r] < owner_rows.rows(),
                    "exchange_pull: request {} asks for owner row {} of {}", r, plan.recv_inv[r],
                    owner_rows.rows());
    std::copy_n(owner_rows.row(plan.recv_inv[r]), d, send.data() + r * d);
  }
  auto const recv = alltoallv_known<float>(comm, send, plan.recv_counts, plan.send_counts, d);
  matrix<float> out(num_requester_rows, d);
  for (std::size_t pos = 0; pos < plan.send_perm.size(); ++pos) {
    std::copy_n(recv.data() + pos * d, d, out.row(plan.send_perm[pos]));
  }
  return out;
}

matrix<float> exchange_push(communicator& comm, const exchange_plan& plan,
                            const matrix<float>& requester_grads, std::int64_t num_owner_rows) {
  std::int64_t const d = requester_grads.cols();
  std::vector<float> send(plan.send_perm.size() * static_cast<std::size_t>(d));
  for (std::size_t pos = 0; pos < plan.send_perm.size(); ++pos) {
    std::copy_n(requester_grads.row(plan.send_perm[pos]), d, send.data() + pos * d);
  }
  auto const recv = alltoallv_known<float>(comm, send, plan.send_counts, plan.recv_counts, d);
  matrix<float> out(num_owner_rows, d);
  for (std::size_t r = 0; r < plan.recv_inv.size(); ++r) {
    float* dst = out.row(plan.recv_inv[r]);
    const float* src = recv.data() + r * d;
    for (std::int64_t j = 0; j < d; ++j) dst[j] += src[j];
  }
  return out;
}

}  // namespace coopgnn
