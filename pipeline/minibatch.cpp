#include "pipeline/minibatch.hpp"

#include <algorithm>

#include "runtime/core/error.hpp"
#include "runtime/core/rng.hpp"
#include "pipeline/exchange.hpp"

namespace coopgnn {

sample_params layer_params(const batch_key& key, std::size_t l) {
  sample_params p;
  p.kind = key.kind;
  p.fanout = key.fanouts[l];
  p.run_seed = key.run_seed;
  p.layer = static_cast<std::uint32_t>(l);
  p.batch = key.batch;
  p.dependency = key.dependency;
  if (!key.relation_fanouts.empty()) {
    std::size_t const L = key.fanouts.size();
    COOPGNN_EXPECTS(L > 0 && key.relation_fanouts.size() % L == 0,
                    "batch_key: {} relation fanouts for {} layers (L * R expected)",
                    key.relation_fanouts.size(), L);
    std::size_t const R = key.relation_fanouts.size() / L;
    p.relation_fanouts.assign(
        key.relation_fanouts.begin() + static_cast<std::ptrdiff_t>(l * R),
        key.relation_fanouts.begin() + static_cast<std::ptrdiff_t>((l + 1) * R));
  }
  return p;
}

namespace {

/// Samples layer l for `frontier` and appends the compacted block, counting its edges (the first
/// half of a layer in both protocols).
const block_buffers& sample_layer(const exec_context& ctx, const csc_view& g,
                                  const buffer<vid_t>& frontier, const batch_key& key,
                                  std::size_t l, minibatch& out) {
  sampled_buffers s;
  if (!g.typed() && key.fanouts[l] == 0) {
    // Fanout 0: no neighbours (an MLP layer's block: sources = destinations). Typed graphs take
    // the sampler, which gives n * R empty rows for fanout 0.
    s.indptr = buffer<eid_t>(ctx, frontier.size() + 1);
    fill_zero(ctx, s.indptr.view());
    s.nbrs = buffer<vid_t>(ctx, 0);
    s.weights = buffer<float>(ctx, 0);
  } else {
    s = sample_neighbors(ctx, g, frontier.view(), layer_params(key, l));
    if (key.excluded.size > 0) s = exclude_edges(ctx, frontier.view(), s, key.excluded);
  }
  out.blocks.push_back(make_block(ctx, g, frontier.view(), s));
  out.work.sampled_edges += static_cast<std::int64_t>(out.blocks.back().indices.size());
  return out.blocks.back();
}

}  // namespace

minibatch sample_independent(const exec_context& ctx, const csc_view& g,
                             buffer_view<const vid_t> seeds, const batch_key& key) {
  minibatch out;
  buffer<vid_t> frontier = clone<vid_t>(ctx, seeds);
  for (std::size_t l = 0; l < key.fanouts.size(); ++l) {
    block_buffers const& b = sample_layer(ctx, g, frontier, key, l, out);
    out.work.sampled_vertices += static_cast<std::int64_t>(b.src_ids.size());
    frontier = clone<vid_t>(ctx, b.src_ids.view());
  }
  out.input_nodes = std::move(frontier);
  out.work.seeds = static_cast<std::int64_t>(seeds.size);
  return out;
}

owner_exchange exchange_with_owners(const exec_context& ctx, communicator& comm,
                                    buffer_view<const std::uint16_t> owner_of,
                                    buffer_view<const vid_t> ids) {
  auto const P = static_cast<std::size_t>(comm.size());
  if (P == 1) {
    // One PE owns everything: the requester list is the owner list (no split, no collective,
    // no deduplication), so cooperative with one PE does exactly independent's work.
    auto const n = static_cast<std::int64_t>(ids.size);
    owner_exchange out;
    out.plan.send_counts = {n};
    out.plan.recv_counts = {n};
    out.plan.send_perm = buffer<std::int64_t>(ctx, 0);
    out.plan.recv_inv = buffer<std::int64_t>(ctx, 0);
    out.plan.identity = true;
    out.owned = clone<vid_t>(ctx, ids);
    return out;
  }
  // Partition the local list by owner (stable), then send each id to its owner.
  auto split = split_by_owner(ctx, owner_of, comm.size(), ids);
  exchange_plan plan;
  plan.send_counts = std::move(split.counts);
  auto const sent0 = comm.stats().alltoall_bytes_sent;
  // The counts travel with the ids: one collective call, and the owner learns recv_counts.
  buffer<vid_t> const recv_ids = alltoallv_rows_with_counts<vid_t>(
      ctx, comm, split.sorted_ids.view(), plan.send_counts, plan.recv_counts);
  owner_exchange out;
  out.id_bytes = comm.stats().alltoall_bytes_sent - sent0;
  // Owner-side deduplication: the owned ids sorted, and the inverse map of every request.
  auto u = unique_with_inverse(ctx, recv_ids.view());
  out.plan = {std::move(plan.send_counts), std::move(plan.recv_counts), std::move(split.perm),
              std::move(u.inverse)};
  out.owned = std::move(u.unique);
  return out;
}

minibatch sample_cooperative(const exec_context& ctx, communicator& comm, const csc_view& g,
                             buffer_view<const std::uint16_t> owner_of,
                             buffer_view<const vid_t> owned_seeds, const batch_key& key) {
  minibatch out;
  buffer<vid_t> frontier = clone<vid_t>(ctx, owned_seeds);
  for (std::size_t l = 0; l < key.fanouts.size(); ++l) {
    block_buffers const& b = sample_layer(ctx, g, frontier, key, l, out);

    owner_exchange x = exchange_with_owners(ctx, comm, owner_of, b.src_ids.view());
    out.id_bytes.push_back(x.id_bytes);
    out.work.sampled_vertices += static_cast<std::int64_t>(x.owned.size());
    out.plans.push_back(std::move(x.plan));
    frontier = std::move(x.owned);
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

sampled_batch to_host(const exec_context& ctx, minibatch&& mb) {
  sampled_batch out;
  for (auto& b : mb.blocks) out.blocks.push_back(to_host(ctx, std::move(b)));
  for (auto& p : mb.plans) {
    out.plans.push_back({std::move(p.send_counts), std::move(p.recv_counts),
                         to_host(ctx, std::move(p.send_perm)), to_host(ctx, std::move(p.recv_inv)),
                         p.identity});
  }
  out.input_nodes = to_host(ctx, std::move(mb.input_nodes));
  out.work = mb.work;
  out.id_bytes = std::move(mb.id_bytes);
  return out;
}

placed_plan copy_plan(const exec_context& ctx, const placed_plan& p) {
  return {p.send_counts, p.recv_counts, clone<std::int64_t>(ctx, p.send_perm.view()),
          clone<std::int64_t>(ctx, p.recv_inv.view()), p.identity};
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

void count_by_type(const hetero_schema& h, const exec_context& ctx, const minibatch& mb,
                   work_counters& w) {
  // Read in place on the host; copies where the minibatch lives on a device (ids and offsets
  // only: an accounting cost typed runs pay, untyped runs never).
  auto const T = h.node_types.size();
  auto const R = h.edge_types.size();
  w.rows_per_type.assign(T, 0);
  w.edges_per_relation.assign(R, 0);
  std::vector<vid_t> id_copy;
  auto const ids = host_readable<vid_t>(ctx, mb.input_nodes.view(), id_copy);
  for (vid_t v : ids) ++w.rows_per_type[static_cast<std::size_t>(h.type_of(v))];
  // Relations merged (untyped blocks of a typed dataset): no per-relation split to count.
  if (!mb.blocks.empty() && mb.blocks.front().num_relations == 1 && R > 1) {
    w.edges_per_relation.clear();
    return;
  }
  for (auto const& b : mb.blocks) {
    std::vector<eid_t> ip_copy;
    auto const ip = host_readable<eid_t>(ctx, b.indptr.view(), ip_copy);
    auto const rows = static_cast<std::size_t>(b.num_dst) * R;
    COOPGNN_EXPECTS(static_cast<std::int32_t>(R) == b.num_relations && ip.size() == rows + 1,
                    "count_by_type: a block of {} rows per destination for {} relations",
                    b.num_relations, R);
    for (std::size_t row = 0; row < rows; ++row)
      w.edges_per_relation[row % R] += ip[row + 1] - ip[row];
  }
}

std::vector<vid_t> epoch_order(std::span<const vid_t> train, std::uint64_t seed, int epoch) {
  auto const st = rng::make_stream(seed, rng::purpose::shuffle, 0);
  std::vector<std::pair<std::uint64_t, vid_t>> keyed;
  keyed.reserve(train.size());
  for (vid_t v : train) {
    auto const r =
        rng::draw4(st, static_cast<std::uint64_t>(v), 0, static_cast<std::uint32_t>(epoch));
    keyed.emplace_back((static_cast<std::uint64_t>(r[0]) << 32) | r[1], v);
  }
  std::sort(keyed.begin(), keyed.end());
  std::vector<vid_t> order;
  order.reserve(keyed.size());
  for (auto const& kv : keyed) order.push_back(kv.second);
  return order;
}

std::int64_t epoch_batch_count(std::int64_t items, std::int64_t batch_size, bool drop_last) {
  COOPGNN_EXPECTS(items >= 0, "epoch_batch_count: {} items is negative", items);
  COOPGNN_EXPECTS(batch_size >= 1, "--batch-size must be at least 1, got {}", batch_size);
  return drop_last ? items / batch_size : (items + batch_size - 1) / batch_size;
}

std::vector<vid_t> epoch_batch(std::span<const vid_t> order, std::int64_t batch_size,
                               std::int64_t index, bool wrap_around) {
  COOPGNN_EXPECTS(batch_size >= 1, "--batch-size must be at least 1, got {}", batch_size);
  COOPGNN_EXPECTS(index >= 0, "epoch_batch: batch index {} is negative", index);
  auto const n = static_cast<std::int64_t>(order.size());
  if (wrap_around) {
    auto const b = std::min(batch_size, n);
    std::vector<vid_t> batch(static_cast<std::size_t>(b));
    // index * b in 128 bits, so that no index overflows before the reduction mod n.
    auto const start = static_cast<std::int64_t>(
        (static_cast<unsigned __int128>(index) * static_cast<unsigned __int128>(b)) %
        static_cast<unsigned __int128>(std::max<std::int64_t>(n, 1)));
    for (std::int64_t i = 0; i < b; ++i) batch[i] = order[(start + i) % n];
    return batch;
  }
  auto const count = epoch_batch_count(n, batch_size, false);
  COOPGNN_EXPECTS(index < count,
                  "epoch_batch: batch {} of an epoch of {} items in batches of {} "
                  "(it holds {})",
                  index, n, batch_size, count);
  auto const lo = index * batch_size, hi = std::min(n, lo + batch_size);
  return {order.begin() + lo, order.begin() + hi};
}

}  // namespace coopgnn
