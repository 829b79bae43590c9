// The stages of one training step and the two strategies they call (docs/design.md section 6.6):
// a minibatch protocol (independent, cooperative: which seeds a PE takes, how it samples, how rows
// and gradients cross PEs) and a task (node classification, link prediction: the seeds of a
// batch, the head or decoder after the encoder, the loss). The step body (trainer::pe_step) calls
// both and branches on neither. A new protocol or task is one file implementing its interface
// here, chosen by make_protocol / make_task. Internal to the pipeline; not part of the public
// interface.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "models/embedding.hpp"
#include "models/model.hpp"
#include "pipeline/link.hpp"
#include "pipeline/metered_exchange.hpp"
#include "pipeline/minibatch.hpp"
#include "pipeline/trainer.hpp"
#include "runtime/core/stream_handover.hpp"

namespace coopgnn {

class task_batch;

/// What the stages of one step on one PE use of their PE: contexts, communicators, model, the
/// step's keys, meter and metered exchange.
struct step_context {
  const exec_context& ctx;        ///< the PE's compute context (host, emulated or CUDA)
  const exec_context& host_ctx;   ///< host work of the PE (host sampling, pair ids)
  communicator& host_comm;        ///< the host communicator (host data: pair ids)
  /// The communicator of ctx.space() (sampling and row exchanges); the prefetch thread's own
  /// on the prefetch stage (docs/design.md section 6.7), never the PE thread's.
  communicator& rows_comm;
  int rank = 0;                   ///< this PE
  int pes = 1;                    ///< P
  std::uint64_t run_seed = 0;     ///< PE 0's seed (docs/design.md 4.1)
  std::uint32_t batch_index = 0;  ///< global minibatch index (sampling and negative keys)
  models::gnn_model& model;
  models::embedding_table* emb = nullptr;  ///< learnable input rows, or nullptr
  step_meter& meter;
  metered_exchange& exchange;
  /// True when the input rows are learnable: a gradient flows into the input layer's sources.
  [[nodiscard]] bool learns_inputs() const { return emb != nullptr; }
};

/// What the prefetch thread measured while it prepared a batch (docs/design.md section 6.7): its
/// stage seconds and traffic, merged into the step that computes the batch.
struct prepare_record {
  stage_seconds t;                     ///< seconds of the seeds, sample and load stages
  stage_seconds cpu;                   ///< the prefetch thread's CPU seconds of those stages
  std::vector<layer_traffic> traffic;  ///< bytes sent per (layer, direction) while preparing
  std::int64_t staging = 0;            ///< bytes: the largest send + receive staging
};

/// One batch sampled and its input rows loaded on one PE: the value the sample and load stages
/// produce and the compute stages consume (so that a scheduler can prepare batch i + 1 while
/// batch i computes). Everything in the PE's memory space unless said otherwise.
struct prepared_batch {
  std::uint32_t index = 0;   ///< global minibatch index
  std::vector<vid_t> seeds;  ///< [n] this PE's encoder seeds (host), blocks[0]'s destinations
  std::unique_ptr<task_batch> task;    ///< the task's share of the batch (pairs, labels, caches)
  minibatch mb;                        ///< sampled in ctx.space(), or on the host and copied there
  std::vector<block> host_blocks;      ///< host copies of the blocks, for traces only
  std::vector<block_view> blocks;      ///< [L] sampling order, views of mb.blocks
  std::vector<exchange_route> routes;  ///< [L] cooperative: routes[l] serves blocks[l] sources
  exchange_route pair_route;      ///< cooperative link prediction: endpoint owners -> pair scorers
  std::vector<vid_t> input_host;  ///< off the host: the input ids copied there, for host-tier
                                  ///< loads
  tensor<float> inputs;  ///< [|blocks[L-1] sources|, in_dim] the input rows, after the features
                         ///< exchange
  work_counters work;    ///< the work of the batch on this PE so far
  std::int64_t working_set = 0;  ///< blocks, plans, input ids and rows (bytes)
  /// False when the load stage is left to the step (learnt input rows read after the previous
  /// step's optimizer: docs/design.md section 6.7); then `inputs` is empty.
  bool loaded = false;
  /// Prepared ahead on the prefetch thread: what it measured; empty when the step prepared it.
  std::optional<prepare_record> ahead;
  /// Prepared ahead: the end of the prepare work on the prefetch context's stream, which the
  /// step's stream waits for before it reads the batch (CUDA: an event; docs/design.md 6.7).
  stream_handover handover;
  /// The input ids as host memory: the minibatch's own on the host backend, else input_host.
  [[nodiscard]] std::span<const vid_t> input_ids_on_host() const {
    if (mb.input_nodes.space() == memory_space::host) return mb.input_nodes.host();
    return input_host;
  }
};

/// What one step of one PE produced, for its counters and trace (trainer::finish_step).
struct step_record {
  work_counters work;            ///< sampling, loading and cache counts (traffic is the meter's)
  double loss = 0;               ///< this PE's share of the global-batch loss
  double loss_sum = 0;           ///< the global-batch loss (all-reduced)
  std::int64_t working_set = 0;  ///< bytes: blocks, plans, input rows, activations, gradients
  std::int64_t staging = 0;      ///< bytes: the largest exchange's send + receive staging
};

/// The learnable input rows' gradients of a step, routed to the replicas that apply them.
struct embedding_gradients {
  buffer<vid_t> gathered_ids;    ///< independent: every PE's input ids, in rank order
  bool gathered = false;         ///< the rows to update are gathered_ids (else ids)
  buffer_view<const vid_t> ids;  ///< cooperative: [n] this PE's input ids (ctx.space())
  tensor<float> grads;           ///< [n, D] the rows' gradients (ctx.space())
  /// Lazy Adam on the rows (models::embedding_table::apply); nothing without a table.
  void apply(models::embedding_table* emb) const {
    if (emb == nullptr) return;
    emb->apply(gathered ? buffer_view<const vid_t>(gathered_ids.view()) : ids, grads.view());
  }
};

/// How a PE takes its share of a batch and moves rows to and from other PEs (docs/design.md
/// sections 6.1 and 6.2). Layer l of pull / push is block l's route; layer -1 is the pairs' route
/// of link prediction. Stateless between steps; const methods may run on every PE's thread.
class minibatch_protocol {
 public:
  virtual ~minibatch_protocol() = default;
  /// This PE's share of a batch of items (host, batch order): cooperative, the items whose vertex
  /// vertex_of(item) rank owns; independent, items [B rank / P, B (rank + 1) / P).
  [[nodiscard]] virtual std::vector<vid_t> share(
      std::span<const vid_t> items, int rank, int pes,
      const std::function<vid_t(vid_t)>& vertex_of) const = 0;
  /// The encoder's seeds this PE computes so that it gets the rows of `ids` (host, distinct):
  /// cooperative, the ids any PE asked this PE for (an id exchange over the host communicator,
  /// whose route goes into `route`, placed in sc.ctx); independent, the ids themselves.
  [[nodiscard]] virtual std::vector<vid_t> request(step_context& sc, std::span<const vid_t> ids,
                                                   exchange_route& route) const = 0;
  /// sample_cooperative / sample_independent of `seeds` (sctx.space()) on `g`.
  [[nodiscard]] virtual minibatch sample(const exec_context& sctx, communicator& comm,
                                         const csc_view& g,
                                         buffer_view<const std::uint16_t> owner_of,
                                         buffer_view<const vid_t> seeds,
                                         const batch_key& key) const = 0;
  /// The routes of `mb`'s plans in ctx.space() (moved out of mb.plans); empty when independent.
  [[nodiscard]] virtual std::vector<exchange_route> routes(const exec_context& ctx,
                                                           minibatch& mb) const = 0;
  /// Owner -> requester rows of route `layer` (cooperative); independent: `rows` as they are.
  [[nodiscard]] virtual tensor<float> pull(step_context& sc, const prepared_batch& b, int layer,
                                           const char* direction, tensor<float>&& rows) const = 0;
  /// Requester -> owner gradients of route `layer`, summed (cooperative); independent: as they are.
  [[nodiscard]] virtual tensor<float> push(step_context& sc, const prepared_batch& b, int layer,
                                           const char* direction, tensor<float>&& grads) const = 0;
  /// The learnable input rows' gradients `input_grads` ([|inputs|, D], empty without a table)
  /// routed so that every replica's update keeps the table right: cooperative, pushed back to the
  /// owners, each updating its own rows; independent, all-gathered so that every replica applies
  /// the same list. Collective (with a table).
  [[nodiscard]] virtual embedding_gradients route_embedding_gradients(
      step_context& sc, const prepared_batch& b, tensor<float>&& input_grads) const = 0;
  /// A table whose rows are current on their owners' replicas (cooperative: row r from
  /// get(owner(r))) or on every replica (independent: get(0)), on the host.
  [[nodiscard]] virtual matrix<float> assemble(
      std::size_t pes, const std::function<matrix<float>(std::size_t)>& get) const = 0;
};

/// Independent minibatching (protocol_independent.cpp).
std::unique_ptr<minibatch_protocol> make_independent_protocol();
/// Cooperative minibatching over `owners` (kept by reference; protocol_cooperative.cpp).
std::unique_ptr<minibatch_protocol> make_cooperative_protocol(const ownership& owners);

/// A task's share of one batch on one PE, from the seeds stage to the loss.
class task_batch {
 public:
  virtual ~task_batch() = default;
  /// After the encoder: `h` ([|seeds|, d], the last conv's rows) to the task's outputs (logits,
  /// or the pairs' scores). @returns the bytes the outputs and caches hold (working set).
  virtual std::int64_t forward(step_context& sc, const minibatch_protocol& protocol,
                               const prepared_batch& b, tensor<float>&& h) = 0;
  /// The loss of this PE's share, normalised by `norm_items` batch items (into `loss`), and its
  /// gradient with respect to the last conv's rows ([|seeds|, d]); the head's or decoder's
  /// parameter gradients added on the way.
  virtual tensor<float> backward(step_context& sc, const minibatch_protocol& protocol,
                                 const prepared_batch& b, std::int64_t norm_items,
                                 double& loss) = 0;
  /// Fills the trace's task fields: output ids, outputs (host), pairs.
  virtual void trace(const exec_context& ctx, const prepared_batch& b, pe_trace& tr) = 0;
};

/// What is trained (docs/design.md section 7.1): node classification or link prediction.
class training_task {
 public:
  virtual ~training_task() = default;
  /// The training items an epoch shuffles and batches (vertices, or indices of training pairs).
  [[nodiscard]] virtual const std::vector<vid_t>& items() const = 0;
  /// The seeds stage: this PE's share of `global_batch` (via the protocol) into b.task, and the
  /// encoder's seeds into b.seeds (with b.pair_route for link prediction).
  virtual void seeds(step_context& sc, const minibatch_protocol& protocol,
                     std::span<const vid_t> global_batch, prepared_batch& b) const = 0;
  /// Ascending edge keys removed from every layer's sample (edge_exclusion_key); empty = none.
  [[nodiscard]] virtual std::vector<std::uint64_t> excluded(
      std::span<const vid_t> global_batch) const = 0;
  /// The metric that selects models.
  [[nodiscard]] virtual std::string metric_name() const = 0;
  /// Validation and test metrics of a host model on the whole graph (`x`: [|V|, in_dim] host
  /// input rows); node classification fills value only.
  [[nodiscard]] virtual std::pair<link_eval, link_eval> evaluate(const models::gnn_model& model,
                                                                 const matrix<float>& x,
                                                                 int threads) const = 0;
};

/// Node classification on ds's labels and train split (task_node.cpp); ds and g kept by
/// reference. @throws logic_error when ds has no labels, no training vertices, or an unlabelled
/// one.
std::unique_ptr<training_task> make_node_task(const dataset& ds, const csc_graph& g,
                                              const train_config& cfg);
/// Link prediction on ds's link task (task_link.cpp); ds and g kept by reference.
/// @throws logic_error naming the option or dataset when the task, its pairs or the options
///         (negatives, linear head, topk, widths, decoder, exclusion keys) do not fit.
std::unique_ptr<training_task> make_link_task(const dataset& ds, const csc_graph& g,
                                              const train_config& cfg);

}  // namespace coopgnn
