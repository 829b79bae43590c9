// The global minibatches of an epoch, the sampling of one minibatch under the two protocols of
// docs/design.md section 6, and the row exchanges that route features, layer outputs and
// gradients in cooperative mode (Algorithm 1 of Balin, LaSalle & Catalyurek, "Cooperative
// Minibatching in Graph Neural Networks", TMLR 2025).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "kernels/sample/sample.hpp"
#include "kernels/sample/sampling.hpp"
#include "runtime/comm/communicator.hpp"
#include "runtime/core/matrix.hpp"
#include "runtime/core/memory.hpp"
#include "runtime/graph/dataset.hpp"
#include "runtime/graph/ownership.hpp"
#include "pipeline/config.hpp"

namespace coopgnn {

/// Routing of one cooperative layer: the requester side is a block's source list S~^l_p, the
/// owner side is S^{l+1}_p, the unique vertices other PEs asked this PE for.
struct exchange_plan {
  std::vector<std::int64_t> send_counts;  ///< [P] ids this PE requested from each owner
  std::vector<std::int64_t> recv_counts;  ///< [P] ids each requester asked this PE for
  std::vector<std::int64_t> send_perm;    ///< [sum send] local source index of each request
  std::vector<std::int64_t> recv_inv;     ///< [sum recv] owner row (in S^{l+1}_p) per request
  /// One PE: the owner rows are the requester rows in their order, nothing is exchanged, and
  /// send_perm and recv_inv are empty (the identity is implicit).
  bool identity = false;
};

/// One PE's share of a sampled minibatch.
struct sampled_batch {
  std::vector<block> blocks;           ///< [L]; blocks[l] samples layer l (0 next to the seeds)
  std::vector<exchange_plan> plans;    ///< [L] cooperative only; plans[l] serves blocks[l] sources
  std::vector<vid_t> input_nodes;      ///< vertices whose features this PE loads from storage
  work_counters work;                  ///< sampled edges and vertices of this PE
  std::vector<std::int64_t> id_bytes;  ///< [L] cooperative: id bytes sent to other PEs per layer
};

/// An exchange_plan in a memory space: the counts on the host, the index arrays where the PE
/// computes (they never leave the device on the CUDA backend).
struct placed_plan {
  std::vector<std::int64_t> send_counts;  ///< [P] as exchange_plan
  std::vector<std::int64_t> recv_counts;  ///< [P]
  buffer<std::int64_t> send_perm;         ///< [sum send]
  buffer<std::int64_t> recv_inv;          ///< [sum recv]; both empty when identity
  bool identity = false;                  ///< as exchange_plan::identity
};

/// One PE's share of a sampled minibatch in the memory space it was sampled in: what the one
/// pair of protocols below returns on every backend.
struct minibatch {
  std::vector<block_buffers> blocks;   ///< [L]; blocks[l] samples layer l (0 next to the seeds)
  std::vector<placed_plan> plans;      ///< [L] cooperative only (the routes are built from them,
                                       ///< exchange.hpp)
  buffer<vid_t> input_nodes;           ///< vertices whose features this PE loads from storage
  work_counters work;                  ///< sampled edges and vertices of this PE
  std::vector<std::int64_t> id_bytes;  ///< [L] cooperative: id bytes sent to other PEs per layer

  /// Bytes held by the blocks, plans and input ids (what a PE keeps for the whole step).
  [[nodiscard]] std::int64_t bytes() const;
};

/// The host copy of a minibatch (the blocks as host `block`s): moved without a copy when `mb`
/// is in host memory, downloaded otherwise.
sampled_batch to_host(const exec_context& ctx, minibatch&& mb);

/// A copy of plan `p` in ctx.space() (blocks: copy_block, kernels/sample/sampling.hpp).
placed_plan copy_plan(const exec_context& ctx, const placed_plan& p);

/// Samplers' keys for layer l of global minibatch `batch`.
struct batch_key {
  sampler_kind kind = sampler_kind::ns;
  std::span<const int> fanouts;  ///< [L]
  std::uint64_t run_seed = 0;
  std::uint32_t batch = 0;
  labor_dependency dependency;  ///< LABOR kappa and layer dependency
  /// Edges removed from every layer's sample (exclude_edges, kernels/sample/sampling.hpp):
  /// ascending edge_exclusion_key values in the sampling context's space; empty = none.
  buffer_view<const std::uint64_t> excluded;
  /// Typed graphs: [L * R] row-major by layer (entry l * R + r = layer l's fanout k_r of relation
  /// r; -1 all, 0 none, >= 1); empty = fanouts[l] for every relation of layer l.
  std::span<const int> relation_fanouts;
};

/// The sampler parameters of layer l (l < key.fanouts.size()) under `key`: fanout = fanouts[l];
/// relation_fanouts = key.relation_fanouts[l * R .. (l + 1) * R) with R =
/// relation_fanouts.size() / fanouts.size() (empty when key.relation_fanouts is).
/// @throws logic_error when key.relation_fanouts is not a multiple of [L] entries.
sample_params layer_params(const batch_key& key, std::size_t l);

/// One cooperative id exchange (Algorithm 1 of the cooperative paper, lines 4-7): `ids` (this
/// PE's requester-side list, duplicates allowed) is split by owner (stable), the ids go to their
/// owners with their counts in one collective call (alltoallv_rows_with_counts: an all-to-all-v
/// of ctx.space() memory through `comm` whose receivers learn the counts), and what arrives is
/// deduplicated. `plan` routes rows between the two sides: exchange_pull(make_route(ctx,
/// plan, owned.size)) turns rows of `owned` into rows of `ids`, exchange_push sums them back.
/// Collective over `comm` (every PE calls it); `comm` must move ctx.space() memory.
/// With one PE (comm.size() == 1) every exchange is an identity and is skipped, on every backend
/// alike: nothing is split, sent or deduplicated, `owned` is a copy of `ids` in their order, the
/// plan is marked identity and id_bytes is 0 (no collective is called).
/// @param owner_of [|V|] owner map in ctx.space(); @param ids [n] vertex ids in ctx.space(),
///        distinct (a compacted block's sources, a link batch's targets: every caller's are);
///        with more than one PE duplicates are deduplicated, with one PE they are not checked
/// @throws comm_error if a peer fails; logic_error as split_by_owner / unique_with_inverse.
struct owner_exchange {
  placed_plan plan;     ///< requester positions <-> owner rows
  buffer<vid_t> owned;  ///< the distinct ids other PEs (or this one) asked this PE for, sorted
  std::int64_t id_bytes = 0;  ///< id bytes this PE sent to other PEs
};
owner_exchange exchange_with_owners(const exec_context& ctx, communicator& comm,
                                    buffer_view<const std::uint16_t> owner_of,
                                    buffer_view<const vid_t> ids);

/// Independent minibatching (docs/design.md section 6.1): samples every layer locally for `seeds`
/// (this PE's part of the global batch) with the sampling entries of ctx's backend; input_nodes =
/// the sources of the last block. No communication.
/// @param g      the graph in ctx.space(); @param seeds [n] distinct ids in ctx.space()
/// @throws logic_error as sample_neighbors / make_block.
minibatch sample_independent(const exec_context& ctx, const csc_view& g,
                             buffer_view<const vid_t> seeds, const batch_key& key);

/// Cooperative minibatching, sampling phase (Algorithm 1 of the cooperative paper, lines 1-8):
/// `owned_seeds` are the global batch's seeds owned by this PE (S^0_p). For each layer: sample
/// and compact S~^l_p, split it by owner, send the ids with their counts (one
/// alltoallv_with_counts of ctx.space() memory through `comm`: the owner learns its counts in
/// the same call), deduplicate what arrives into S^{l+1}_p
/// (sorted), and keep the plan (send_perm and recv_inv copied to the host). input_nodes = S^L_p.
/// Collective: every PE of `comm` calls it for the same batch; `comm` must move ctx.space()
/// memory (the host communicator for host and emulated memory, a device one for CUDA).
/// @param owner_of  [|V|] owner map (ownership::map()) in ctx.space(), over comm.size() PEs
/// @throws comm_error if a peer fails; logic_error as the entries.
minibatch sample_cooperative(const exec_context& ctx, communicator& comm, const csc_view& g,
                             buffer_view<const std::uint16_t> owner_of,
                             buffer_view<const vid_t> owned_seeds, const batch_key& key);

/// The host protocols on host data (host backend; what tools and benchmarks call): the
/// protocols above on view(g) and the host copy of the result.
sampled_batch sample_independent(const exec_context& ctx, const csc_graph& g,
                                 std::span<const vid_t> seeds, const batch_key& key);
sampled_batch sample_cooperative(const exec_context& ctx, communicator& comm, const csc_graph& g,
                                 const ownership& owners, std::span<const vid_t> owned_seeds,
                                 const batch_key& key);

/// Typed graphs: the minibatch's input rows per node type and sampled edges per relation into
/// w.rows_per_type [T] and w.edges_per_relation [R] (replaced; edges_per_relation left empty when
/// the blocks merged the relations). Reads mb in place on the host; where it lives on a device,
/// copies its ids and block offsets to the host (synchronises).
/// @throws logic_error when a block's relation count is not the schema's.
void count_by_type(const hetero_schema& h, const exec_context& ctx, const minibatch& mb,
                   work_counters& w);

/// The training seeds of epoch `epoch` in batching order: `train` sorted by the 64-bit key
/// draw4(make_stream(seed, purpose::shuffle, 0), v, 0, epoch) (ties by id), so every PE and every
/// tool that replays a run (bench cache) derives the same global batches from the run seed.
/// Global batch b of the epoch is epoch_batch(order, B, b, wrap_around) with minibatch index
/// (epoch - 1) * epoch_batch_count(|train|, B, drop_last) + b (trainer::run_epoch).
/// @param train  [N] training vertex ids; O(N log N).
std::vector<vid_t> epoch_order(std::span<const vid_t> train, std::uint64_t seed, int epoch);

/// Global batches in an epoch of `items` items (train_config::drop_last): ceil(items /
/// batch_size), the last one short when batch_size does not divide items (DGL's and PyG's
/// default), or floor(items / batch_size) with drop_last. 0 when items == 0 (and with drop_last
/// when items < batch_size). wrap_around has ceil's count. O(1).
/// @throws logic_error for items < 0 or batch_size < 1.
std::int64_t epoch_batch_count(std::int64_t items, std::int64_t batch_size, bool drop_last);

/// Global batch `index` of the epoch order `order` (host memory, any length N), as a new vector:
///  - without wrap_around: order[index B, min((index + 1) B, N)), so batches
///    0 .. epoch_batch_count(N, B, false) - 1 hold every item exactly once, the last with
///    N - (count - 1) B items; the same for drop_last (whose count stops one earlier);
///  - with wrap_around: min(B, N) items order[(index min(B, N) + i) mod N], i = 0 .. min(B, N) - 1:
///    every batch is full (the tail is filled from the start of the order, repeating items), for
///    any index >= 0, so a benchmark can run more batches than an epoch holds. N == 0 gives an
///    empty batch.
/// @throws logic_error for batch_size < 1, index < 0, or (without wrap_around) index >= the
///         epoch's batch count.
std::vector<vid_t> epoch_batch(std::span<const vid_t> order, std::int64_t batch_size,
                               std::int64_t index, bool wrap_around);

}  // namespace coopgnn
