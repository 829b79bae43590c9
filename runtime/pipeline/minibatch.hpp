// Sampling of one minibatch under the two protocols of DESIGN.md section 6, and the row
// exchanges that route features, layer outputs and gradients in cooperative mode (Algorithm 1 of
// Balin, LaSalle & Catalyurek, "Cooperative Minibatching in Graph Neural Networks", TMLR 2025).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "kernels/sample/sample.hpp"
#include "runtime/comm/communicator.hpp"
#include "runtime/core/matrix.hpp"
#include "runtime/core/memory.hpp"
#include "runtime/graph/ownership.hpp"
#include "runtime/pipeline/config.hpp"

namespace coopgnn {

/// Routing of one cooperative layer: the requester side is a block's source list S~^l_p, the
/// owner side is S^{l+1}_p, the unique vertices other PEs asked this PE for.
struct exchange_plan {
  std::vector<std::int64_t> send_counts;  ///< [P] ids this PE requested from each owner
  std::vector<std::int64_t> recv_counts;  ///< [P] ids each requester asked this PE for
  std::vector<std::int64_t> send_perm;    ///< [sum send] local source index of each request
  std::vector<std::int64_t> recv_inv;     ///< [sum recv] owner row (in S^{l+1}_p) per request
};

/// One PE's share of a sampled minibatch.
struct sampled_batch {
  std::vector<block> blocks;           ///< [L]; blocks[l] samples layer l (0 next to the seeds)
  std::vector<exchange_plan> plans;    ///< [L] cooperative only; plans[l] serves blocks[l] sources
  std::vector<vid_t> input_nodes;      ///< vertices whose features this PE loads from storage
  work_counters work;                  ///< sampled edges and vertices of this PE
  std::vector<std::int64_t> id_bytes;  ///< [L] cooperative: id bytes sent to other PEs per layer

  /// Bytes held by the blocks and plans (what a PE keeps for the whole step).
  [[nodiscard]] std::int64_t bytes() const;
};

/// A host block placed in a PE's memory space: on the host, a view of the block itself (which
/// must outlive this object); elsewhere, copies of its arrays and a view of them.
struct placed_block {
  buffer<vid_t> src_ids;
  buffer<eid_t> indptr;
  buffer<std::int64_t> indices;
  buffer<float> weights;
  buffer<std::int64_t> src_degree;
  block_view view;
};

/// Places `b` in ctx.space() (see placed_block). @throws logic_error for an inconsistent block.
placed_block place(const exec_context& ctx, const block& b);

/// Samplers' keys for layer l of global minibatch `batch`.
struct batch_key {
  sampler_kind kind = sampler_kind::ns;
  std::span<const int> fanouts;  ///< [L]
  std::uint64_t run_seed = 0;
  std::uint32_t batch = 0;
  labor_dependency dependency;  ///< LABOR kappa and layer dependency
};

/// The sampler parameters of layer l (l < key.fanouts.size()) under `key`.
sample_params layer_params(const batch_key& key, std::size_t l);

/// Independent minibatching: samples every layer locally for `seeds` (this PE's part of the
/// global batch). input_nodes = the sources of the last block. No communication.
sampled_batch sample_independent(const exec_context& ctx, const csc_graph& g,
                                 std::span<const vid_t> seeds, const batch_key& key);

/// Cooperative minibatching, sampling phase: `owned_seeds` are the global batch's seeds owned by
/// this PE (S^0_p). For each layer: sample, unique-and-compact, send each source id to its owner
/// (all-to-all of counts, then ids), deduplicate what arrives into S^{l+1}_p (sorted), keep the
/// plan. input_nodes = S^L_p. Collective: every PE of `comm` must call it for the same batch.
/// @throws comm_error if a peer fails.
sampled_batch sample_cooperative(const exec_context& ctx, communicator& comm, const csc_graph& g,
                                 const ownership& owners, std::span<const vid_t> owned_seeds,
                                 const batch_key& key);

}  // namespace coopgnn
