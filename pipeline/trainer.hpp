// The trainer: P PE threads running independent or cooperative minibatching over a dataset
// (docs/design.md section 6), evaluation by layer-wise full-neighbour inference, per-epoch reports.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

#include "cache/feature_store.hpp"
#include "models/embedding.hpp"
#include "models/model.hpp"
#include "models/optimizer.hpp"
#include "runtime/comm/host_communicator.hpp"
#include "runtime/graph/csc.hpp"
#include "runtime/graph/dataset.hpp"
#include "runtime/graph/ownership.hpp"
#include "pipeline/config.hpp"
#include "pipeline/link.hpp"
#include "pipeline/minibatch.hpp"

namespace coopgnn {

/// All-to-all bytes one PE sent to other PEs in one step, for one layer and direction
/// (docs/results-schema.md: ids, features, forward, backward).
struct layer_traffic {
  int layer = 0;
  std::string direction;
  std::int64_t bytes = 0;
};

/// The counted shape of one layer of a step on one PE (what the cost model of
/// bench/drivers/cost_model.hpp turns into bytes and arithmetic; counted, not timed).
struct layer_shape {
  int layer = 0;                 ///< block index l (0 next to the seeds); conv L-1-l consumed it
  std::int64_t num_dst = 0;      ///< destinations of block l (|S^l_p|)
  std::int64_t num_src = 0;      ///< its unique sources, destinations first (|S~^{l+1}_p|)
  std::int64_t num_edges = 0;    ///< its sampled edges
  std::int64_t in_dim = 0;       ///< width of the conv's input rows (columns per source)
  std::int64_t out_dim = 0;      ///< width of its output rows
  bool transform_first = false;  ///< the conv multiplied before aggregating (in_dim > out_dim)
  bool input_grad = true;        ///< backward computed dL/dh_src (false for the input layer)
};

/// What one PE computed in one step (step_options::trace), for tests and benchmarks.
struct pe_trace {
  std::vector<std::vector<std::pair<vid_t, vid_t>>> edges;  ///< [L] sampled (src, dst) global ids
                                                            ///< (only with capture_edges)
  std::vector<vid_t> seeds;  ///< output vertices of this PE, in logits row order
                             ///< (link prediction: the distinct endpoints of its pairs)
  matrix<float> logits;      ///< [seeds, C]; link prediction: [pairs, 1] the pairs' scores
  std::vector<std::pair<vid_t, vid_t>> pairs;  ///< link prediction: the scored pairs
  std::vector<float> pair_labels;              ///< link prediction: 1 positive, 0 negative
  std::vector<float> grads;   ///< all-reduced weight gradients, flattened in params() order
  work_counters work;         ///< this PE's work in the step
  double loss = 0;            ///< this PE's contribution (sum over its seeds / B; link
                              ///< prediction: over its pairs / (B (1 + k)))
  stage_seconds seconds;      ///< this PE's wall time per stage in the step
  stage_seconds cpu_seconds;  ///< this PE thread's CPU time per stage (excludes waiting)
  std::vector<layer_traffic> traffic;  ///< cooperative: bytes per layer and direction
  std::vector<layer_shape> layers;     ///< [L] block l's shape and its conv's widths
  std::int64_t parameters = 0;         ///< model parameters (floats) the optimizer updated
  std::int64_t working_set_bytes = 0;  ///< blocks, plans, input rows, activations, gradients
  std::int64_t staging_bytes = 0;      ///< largest all-to-all send + receive staging of the step
};

/// Options of one training step.
struct step_options {
  bool update = true;                      ///< apply the optimizer step
  std::vector<pe_trace>* trace = nullptr;  ///< [P] when set, filled per PE
  bool capture_edges = true;               ///< with trace: also list every sampled edge
  /// > 0: normalise the loss (and so the gradients) by this many items instead of the batch's
  /// size (>= it): a rank's share of a larger global batch, so that the sum of the shares'
  /// gradients is the global batch's gradient (GGS over MPI, tma/workers.hpp).
  std::int64_t normalise_by = 0;
};

/// A trainer's learnable state as host copies (checkpoints: pipeline/checkpoint.hpp).
/// Replicas are equal after every step, so replica 0's weights and Adam state stand for all; the
/// embedding table is assembled as embedding_values() does (cooperative: each row and its
/// moments from its owner's replica).
struct trainer_state {
  std::vector<float> params;  ///< [num_parameters()] float32, params() order
  std::vector<float> adam_m;  ///< [num_parameters()] Adam first moment
  std::vector<float> adam_v;  ///< [num_parameters()] Adam second moment
  std::int64_t adam_steps = 0;
  /// With embedding_dim > 0: the table [|V|, D] and its lazy-Adam moments; empty otherwise.
  matrix<float> emb, emb_m, emb_v;
  std::int64_t emb_steps = 0;
};

/// Where a run stands between two global batches: the epoch, how many of its batches are done
/// and what run_epoch accumulated over them (the part of an epoch's report that is not timing),
/// so that an epoch resumed from it ends with the report of an uninterrupted one.
struct epoch_position {
  int epoch = 1;                ///< 1-based
  std::int64_t next_batch = 0;  ///< batches [0, next_batch) of the epoch are done
  double loss_sum = 0;          ///< sum of their global-batch losses, added in batch order
  work_counters work;           ///< their work summed over PEs (cache counters: see README)
};

/// The model configuration a trainer builds every replica with for (ds, cfg): conv kind, widths
/// (in_dim = embedding_dim when > 0, else ds's feature width F; the output width is ds's classes,
/// or out_dim (default hidden) for link prediction, with cfg's decoder), layers = |fanouts|,
/// head, norm, activation, dropout and init seed. A host gnn_model built from it has the layout
/// of trainer::parameters() (the TMA server's evaluation model). Validates only R-GCN's
/// decomposition (the rest is check_training_run's).
/// @throws logic_error naming --num-blocks (and --num-bases with it) when the blocks do not divide
///         every conv's widths, or --num-bases when it exceeds the relations (Schlichtkrull et al.,
///         eq. 3: B <= R bases).
models::model_config model_config_for(const dataset& ds, const train_config& cfg);

/// Every check trainer's constructor makes before it allocates anything, without allocating
/// (O(|train split|) host work: it builds and drops the training task): the typed-graph rules,
/// relation fanouts, --pes, --fanouts, validate_train_config, features or --embedding-dim, the
/// task's own checks (labels, splits, link options), --drop-last against wrap-around and against
/// the training items, --cache-policy with learnt embeddings, and model_config_for's decomposition
/// checks. The trainer runs exactly this; `train --dry-run` runs it too, so a dry run refuses
/// what the run refuses, with the same message.
/// @throws logic_error naming the option, dataset or file, as listed for trainer::trainer.
void check_training_run(const dataset& ds, const csc_graph& g, const train_config& cfg);

/// The input width of a heterogeneous dataset: the width shared by every node type with
/// features (0 when none has any). Featureless types learn embeddings of this width.
/// @throws logic_error when ds is untyped, or naming two featured types of different widths.
std::int64_t hetero_input_dim(const dataset& ds);

// The step's stages and strategies (pipeline/step.hpp, internal to the pipeline).
struct prepared_batch;
struct step_context;
struct step_meter;
struct step_record;
class minibatch_protocol;
class training_task;

/// Trains a GNN with P PE threads, for node classification or link prediction
/// (train_config::task; docs/design.md sections 6 and 7).
///
/// Link prediction: the items are the positive training edges (link_task::train); a global
/// batch of B positives gets k keyed tail-corrupted negatives each (negative_tail); the
/// encoder's seeds are the pairs' distinct endpoints. Independent: PE p scores positives
/// [B p / P, B (p + 1) / P) of the batch and samples from their endpoints. Cooperative: a pair is
/// scored by the owner of its source; the endpoints it needs are requested from their owners
/// with the same id exchange as a sampling layer (exchange_with_owners, on the host: the pairs
/// are host data), the owners' outputs reach the scorer by exchange_pull and the decoder's
/// gradients go back by exchange_push. The loss is the binary cross-entropy over the B (1 + k)
/// pairs, normalised by B (1 + k). With train_config::exclude, the global batch's positive edges
/// (self) and their reverses (reverse) are removed from every layer's sample on every PE. With
/// embedding_dim > 0 the input rows come from a learnable embedding table per replica
/// (models::embedding_table), updated on the touched rows only (lazy Adam). Independent: every PE's
/// (input id, gradient row) pairs are all-gathered (allgatherv_rows) and every replica applies the
/// same list, so replicas stay equal. Cooperative: a PE's input rows S^L_p are rows it owns and
/// their gradients come back to it (exchange_push), so each owner updates its own rows and nothing
/// is gathered: the table is partitioned by owner (embedding_values() assembles it). With no
/// validation or test pairs, metric_name() is "none" and evaluation gives NaN. Weights are
/// replicated: every PE starts from the same initialisation, all-reduces gradients and applies the
/// same Adam step, so replicas stay equal.
///
/// One step for every backend (docs/design.md section 2) and for every protocol and task, as
/// stages over a minibatch_protocol and a training_task (pipeline/step.hpp, docs/design.md
/// section 6.6): sampling, then the feature load, the cooperative row exchanges, the model's
/// forward and backward, the gradient all-reduce and Adam run through exec_context-dispatched
/// kernels on the PE's memory space. Backends
/// (train_config::compute_backend):
///  - host: everything on the host (the reference);
///  - emulated: the host kernels on memory marked as device memory (tests: the CUDA path's
///    uploads, downloads and memory-space checks, run on the CPU);
///  - cuda: PE p runs on device p / pes_per_gpu (train_config::devices[p / pes_per_gpu] when
///    that list is given; the constructor throws logic_error when the list's length is not
///    ceil(num_pes / pes_per_gpu), or a device repeats or is not visible) with its own
///    cuda_context. Sampling runs on the
///    device (train_config::sample_on_device, the default: the same protocols with the CUDA
///    sampler, unique-and-compact, owner split and dedup kernels, which return exactly the
///    host's blocks) or on the host (then the blocks are copied over). The row
///    exchanges and the gradient all-reduce use the device communicator (NCCL for distinct
///    devices, peer-copy for PEs sharing one). Features come from a device or pinned (UVA) table
///    gathered on the device, or from the host/mmap tier through the host feature store (and its
///    cache), copied to the device.
/// Evaluation runs the host's layer-wise inference on a host copy of replica 0's weights.
class trainer {
 public:
  /// @param ds   dataset with features, labels and a train split (kept by reference)
  /// @param g    CSC of ds's edges (kept by reference)
  /// @throws logic_error when the configuration does not fit the dataset (no features, no
  ///         labels, empty train split, batch size < 1, P < 1, empty fanouts, unknown model,
  ///         drop_last with wrap_around, drop_last with fewer training items than batch_size,
  ///         a cache policy with learnt embeddings; check_training_run lists every check).
  ///         A heterogeneous ds: R-GCN needs g typed (build_csc with the edge types); the other
  ///         models need g untyped (the relations-merged view of the same edges) and no
  ///         relation fanouts, else logic_error.
  trainer(const dataset& ds, const csc_graph& g, const train_config& cfg);
  ~trainer();

  /// Trains epoch `epoch` (1-based) over the shuffled training seeds, then evaluates when
  /// `epoch % eval_every == 0` or `evaluate` is set. `progress(done, total)` is called after each
  /// global batch from PE 0's thread when given; it must not throw.
  epoch_report run_epoch(int epoch, bool evaluate,
                         const std::function<void(std::int64_t, std::int64_t)>& progress = {});

  /// The resumable form of run_epoch: trains batches [from.next_batch, batches_per_epoch()) of
  /// epoch from.epoch, starting its loss and work sums from `from`'s, and calls `stop()` after
  /// every batch (on one thread while every PE waits; it must not throw). When stop() returns
  /// true before the last batch, the PEs end the epoch there together and nothing is evaluated;
  /// either way `*at` (when given) receives the position reached (at->next_batch ==
  /// batches_per_epoch() for a finished epoch). A finished epoch's report equals run_epoch's,
  /// timings apart. @throws logic_error when from.next_batch is outside [0, batches_per_epoch()].
  epoch_report run_epoch(const epoch_position& from, bool evaluate,
                         const std::function<void(std::int64_t, std::int64_t)>& progress,
                         const std::function<bool()>& stop, epoch_position* at);

  /// The learnable state (weights, Adam moments and step count, embedding table and its
  /// moments) downloaded from every PE's space through the copy helpers. Synchronises the
  /// devices. Between steps only.
  [[nodiscard]] trainer_state state() const;
  /// Writes `s` into every replica, each in its PE's space (the PE threads copy and
  /// synchronise): the next step computes what the run that saved `s` computed next.
  /// @throws logic_error naming the array and both sizes on a shape mismatch with this
  ///         trainer's model or embedding table (or an embedding table given to a run without
  ///         one, and vice versa).
  void restore(const trainer_state& s);

  /// One training step on `global_batch` with global minibatch index `batch_index`, run on all
  /// PEs (threads are started and joined inside). For tests and benchmarks. The batch holds
  /// items: seed vertices (node classification) or indices into link_task::train (link
  /// prediction).
  void step(std::span<const vid_t> global_batch, std::uint32_t batch_index,
            const step_options& opt);

  /// Validation and test metric of replica `pe` by full-neighbour inference on the host. With
  /// the mmap tier and features left in their file, the rows are gathered from the mapping for
  /// the call. A replica off the host is first copied into a host model (host_model).
  std::pair<double, double> evaluate(int pe = 0) const;

  /// Link prediction: the validation and test metrics of replica `pe` (full-neighbour
  /// embeddings on the host, then evaluate_pairs or evaluate_user_item of link.hpp).
  /// @throws logic_error for node classification.
  std::pair<link_eval, link_eval> evaluate_link(int pe = 0) const;

  /// Hooks for an engine that drives the trainer from its main thread (TMA / GGS over MPI,
  /// docs/design.md section 7.2). Each runs between steps: never concurrently with step() or
  /// run_epoch.

  /// Replica 0's weights: [num_parameters()] float32 host vector, flat in params() order,
  /// downloaded from its space (host, emulated or CUDA; synchronises PE 0's device). Replicas
  /// are equal after every step, so this is the trainer's model.
  [[nodiscard]] std::vector<float> parameters() const;
  /// Writes `values` ([num_parameters()] float32, host memory, params() order) into every
  /// replica's weights, each in its PE's space (the PE threads copy and synchronise; `values`
  /// may be reused on return). Adam's moments and step count stay as they are (TMA: optimizer
  /// state stays local). The embedding table, if any, is not touched.
  /// @throws logic_error naming both sizes when values.size() != num_parameters().
  void set_parameters(std::span<const float> values);
  /// Replica 0's weight gradients as the last step left them: [num_parameters()] float32 host
  /// vector, params() order, already all-reduced over the P PEs (the sum of every PE's share of
  /// the global-batch loss, normalised by the global batch). Zeros before any step. Synchronises
  /// PE 0's device.
  [[nodiscard]] std::vector<float> gradients() const;
  /// Writes `grads` ([num_parameters()] float32, host memory, params() order) into every
  /// replica's gradient buffer and applies the Adam step every replica applies in step() (the
  /// PE threads, each in its space; synchronises). GGS over MPI: step(batch, index,
  /// {.update = false}), all-reduce gradients() across ranks (and divide by the rank count for a
  /// mean), then apply_gradients. apply_gradients(gradients()) after step(update = false) gives
  /// the same weights, bit for bit, as step(update = true).
  /// @throws logic_error naming both sizes when grads.size() != num_parameters(), and with
  ///         embedding_dim > 0 (the embedding table is updated inside the step, from gradients
  ///         this hook does not carry).
  void apply_gradients(std::span<const float> grads);
  /// The global-batch loss of the most recent step (step(), or each step of run_epoch): the sum
  /// of every PE's pe_trace::loss, all-reduced in double (mean BCE over the B (1 + k) pairs, or
  /// mean cross-entropy over the B seeds). NaN before any step.
  [[nodiscard]] double last_loss() const;
  /// Trainable scalars of one replica (the length of parameters() and gradients()).
  [[nodiscard]] std::int64_t num_parameters() const;

  /// The training items of epoch `epoch`, in the order they are batched (keyed shuffle).
  [[nodiscard]] std::vector<vid_t> epoch_order(int epoch) const;
  /// Global batch `index` of `order` under this run's tail rule: the free epoch_batch with
  /// batch_size and wrap_around of the config (benchmarks that run more batches than an epoch
  /// holds set train_config::wrap_around). @throws logic_error as epoch_batch.
  [[nodiscard]] std::vector<vid_t> epoch_batch(std::span<const vid_t> order,
                                               std::int64_t index) const;
  /// epoch_batch_count(training items, batch_size, drop_last): batches run_epoch trains.
  [[nodiscard]] std::int64_t batches_per_epoch() const;
  /// Replica `pe`, in its PE's memory space (host, emulated or CUDA device memory).
  [[nodiscard]] const models::gnn_model& model(int pe) const;
  [[nodiscard]] models::gnn_model& model(int pe);
  /// Replica `pe`'s current weights in a host model: the replica itself on the host backend,
  /// otherwise a host model the weights are copied into (synchronises the PE's device; the
  /// result is valid until the next call).
  [[nodiscard]] const models::gnn_model& host_model(int pe) const;
  [[nodiscard]] std::string metric_name() const;
  [[nodiscard]] const train_config& config() const { return cfg_; }
  /// Replica `pe`'s embedding table, or nullptr without embedding_dim. Cooperative: only the
  /// rows PE `pe` owns are current there (see embedding_values()).
  [[nodiscard]] const models::embedding_table* embeddings(int pe) const;
  /// The current embedding table on the host: replica 0's (independent; replicas are equal), or
  /// every row from its owner's replica (cooperative). Synchronises the devices.
  /// @throws logic_error without embedding_dim.
  [[nodiscard]] matrix<float> embedding_values() const;
  /// True when the run's feature cache holds rows for real: the GPU cache (--cache-policy
  /// setassoc in front of a device or pinned table on the CUDA backend). The host policies
  /// model a cache: they count hits and misses, rows still come from the table
  /// (cache/feature_store.hpp).
  [[nodiscard]] bool device_cache_holds_rows() const;
  /// The feature table every PE's store reads (its tier: cache/storage.hpp). On the CUDA
  /// backend with the device or pinned tier this is the host table the device copies were
  /// made from.
  [[nodiscard]] const feature_table& features() const { return *features_; }

 private:
  struct pe_state;      // trainer_internal.hpp
  struct placed_graph;  // the graph copied to a device for sampling there (trainer_internal.hpp)
  struct device_state;  // CUDA backend resources (trainer_devices.cpp)
  struct device_state_deleter {
    void operator()(device_state* d) const noexcept;
  };
  void run_pes(const std::function<void(pe_state&)>& body);
  /// run_pes' wait for its PE threads: returns when every finished[p] is set (under mu, cv
  /// notified); when the group has failed and a PE is still running one peer timeout later, it
  /// prints the PEs that are hung and ends the process with status 1 (std::_Exit: a hung thread
  /// cannot be joined). No limit with --peer-timeout 0.
  void exit_if_hung(std::mutex& mu, std::condition_variable& cv,
                    const std::vector<char>& finished) const;
  /// One training step of one PE, the same for every backend and for every protocol and task
  /// (step.hpp): prepare, then forward, loss and backward, gradient all-reduce, optimizer.
  /// `ready`: the batch prepare_ahead made (its measures merged into the step's; its rows
  /// loaded here when it left them), or null to prepare it in the step.
  void pe_step(pe_state& pe, std::span<const vid_t> global_batch, std::uint32_t batch_index,
               const step_options& opt, prepared_batch* ready = nullptr);
  /// The stages a batch needs before it computes (seeds, sample, and with `load` the features),
  /// as a value a later compute stage consumes; collectives on sc's communicators.
  prepared_batch prepare(step_context& sc, pe_state& pe, std::span<const vid_t> global_batch,
                         const step_options& opt, bool load = true);
  /// prepare() on the prefetch thread of `pe` (docs/design.md section 6.7): its own context
  /// (pe.prefetch_ctx: on CUDA its own streams and pool), meter, clock, staging and
  /// communicators (pe.prefetch_comm, and pe.prefetch_device_comm on CUDA); the features left to
  /// the step when the input rows are learnt. Returns the batch with b.work including the
  /// prefetch communicators' traffic, b.ahead the stage seconds and b.handover the end of its
  /// work on the prefetch stream. Waits for that stream on the calling thread (to read the
  /// stage clock). Collective over the prefetch group.
  prepared_batch prepare_ahead(pe_state& pe, std::span<const vid_t> global_batch,
                               std::uint32_t batch_index);
  /// The prefetch depth this run uses: cfg.prefetch, on every backend.
  [[nodiscard]] int prefetch_depth() const;
  /// Fails the prefetch threads' collectives with `why` on every PE: the host group and, on
  /// CUDA, the prefetch device communicators (their peers stop instead of waiting).
  void abort_prefetch(const std::string& why);
  /// Sampling of b.seeds into b (timed; counts the id traffic) with the protocol: in the PE's
  /// space (host, or its device with sample_on_device), or on the host with the blocks then
  /// copied to the device; then the routes are placed in the PE's space. `excluded`: ascending
  /// edge keys removed from every layer's sample (link prediction).
  void sample(step_context& sc, pe_state& pe, std::span<const std::uint64_t> excluded,
              const step_options& opt, prepared_batch& b);
  /// Copies the graph (and the owner map) to every device whose PEs sample there.
  void place_graphs();
  /// The input rows of `b` in the PE's space (timed, counted), then (cooperative) owner ->
  /// requester into b.inputs: the embedding table's rows, the host store (and its cache) for
  /// the host and mmap tiers, the device tiers' gather (and the GPU cache) otherwise.
  void load_features(step_context& sc, pe_state& pe, prepared_batch& b);
  /// The device and pinned tiers' gather (trainer_devices.cpp), under `ctx` (the PE's compute
  /// context, or its prefetch context on the prefetch thread): on its stream and from its pool.
  tensor<float> load_device_tier(const exec_context& ctx, pe_state& pe, const prepared_batch& b,
                                 work_counters& w);
  /// True when the feature table is read by device kernels (device or pinned tier).
  [[nodiscard]] bool device_tier() const;
  /// CUDA backend, before the PEs exist: the contexts, the tier and the device feature tables;
  /// sets features_ (trainer_devices.cpp).
  void setup_cuda_features();
  /// CUDA backend, after the PEs exist: device communicators, device graphs and GPU caches.
  void setup_cuda_pes();
  /// The exec_context PE p computes in (host, emulated, or its CUDA device).
  [[nodiscard]] exec_context compute_context(int p) const;
  /// CUDA backend: every PE's pool high watermark (bytes), after restarting them with
  /// reset_peak_device_memory; empty otherwise.
  [[nodiscard]] std::vector<std::int64_t> peak_device_memory() const;
  void reset_peak_device_memory() const;
  /// Makes PE p's device current on the calling thread (CUDA backend; no-op otherwise).
  void bind_device(int p) const;
  /// features_ for the host-readable tiers host and mmap (loads the .npy when it was left in
  /// the file and the tier is host).
  void set_host_features(storage_tier tier);
  /// The task's validation and test metrics of replica `pe` (evaluate, evaluate_link).
  std::pair<link_eval, link_eval> evaluate_task(int pe) const;
  /// The global-batch loss: every PE's `share` summed by an all-reduce in the PE's space.
  /// @throws error (training diverged), naming the batch and this PE's share, when the sum is
  ///         not finite (on every PE alike, so none is left in a collective).
  double allreduce_loss(pe_state& pe, double share, std::uint32_t batch_index) const;
  /// The input rows as a host matrix for full-neighbour inference: the features, or replica
  /// `pe`'s embedding table.
  matrix<float> inference_input(int pe) const;
  /// Heterogeneous graphs: every node type's feature table (typed_features_) from the dataset's
  /// in-memory float32 or 16-bit matrix (host tier) or its .npy file (mmap tier), at the stored
  /// width. @throws io_error from feature_table::map_npy, logic_error when a mapped file's
  /// shape or dtype is not the dataset's.
  void set_typed_features();
  /// Heterogeneous graphs: h's rows of featured node types (zero rows, from the embedding
  /// table's frozen ids) += their feature rows, gathered from the type's table at its stored
  /// width, widened to float32 and placed at their positions (host gather, uploaded to ctx).
  /// @param ids [m] host, the rows' global ids; @param h [m, F] in ctx.space()
  /// @return the feature bytes read, as stored (rows x F_t x element size).
  std::int64_t add_typed_feature_rows(const exec_context& ctx, std::span<const vid_t> ids,
                                      tensor_view<float> h) const;
  /// Heterogeneous graphs: rows [offset_t, offset_t + count_t) of `all` ([|V|, F] host) become
  /// type t's features, widened, for every featured type (chunked gathers).
  void fill_typed_feature_rows(matrix<float>& all) const;
  /// What every step ends with: counters, loss, and the trace when asked for.
  void finish_step(pe_state& pe, const step_options& opt, step_meter& meter, prepared_batch& b,
                   const step_record& r);

  const dataset& ds_;
  const csc_graph& g_;
  train_config cfg_;
  ownership owners_;
  // CUDA backend only; declared before everything that may hold device memory, so it is
  // destroyed after it (see ~trainer).
  std::unique_ptr<device_state, device_state_deleter> dev_;
  std::unique_ptr<feature_table> features_;  // shared read-only by the PEs' feature stores
  matrix<float> owned_features_;  // features read here when the dataset left them in the file
  matrix<std::uint16_t> owned_features16_;  // the same for 16-bit features (feature_type)
  // Heterogeneous graphs: [T] each node type's feature table (null: the type learns embeddings).
  std::vector<std::unique_ptr<feature_table>> typed_features_;
  std::shared_ptr<host_comm_group> group_;
  /// --prefetch > 0: the prefetch threads' communicators' group (null otherwise).
  std::shared_ptr<host_comm_group> prefetch_group_;
  std::vector<std::unique_ptr<pe_state>> pes_;
  mutable std::unique_ptr<models::gnn_model> host_copy_;     // host_model() off the host backend
  std::vector<std::shared_ptr<const placed_graph>> graphs_;  // [P]; null: the PE samples on
                                                             // the host graph
  std::unique_ptr<training_task> task_;           // node classification or link prediction
  std::unique_ptr<minibatch_protocol> protocol_;  // independent or cooperative
};

}  // namespace coopgnn
