// Link prediction above the kernels (docs/design.md section 7.1): the scored pairs of a
// minibatch of positive edges with keyed tail-corrupted negatives, and the evaluation of
// full-neighbour embeddings on a dataset's validation / test pairs.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "models/link_layers.hpp"
#include "models/model.hpp"
#include "runtime/core/matrix.hpp"
#include "runtime/graph/csc.hpp"
#include "runtime/graph/dataset.hpp"

namespace coopgnn {

/// Negative j of training positive `positive` (an index into link_task::train) in global
/// minibatch `batch`: the tail of (src, ?) drawn uniformly from [lo, hi) without the source
/// itself. Attempt a = 0, 1, ... draws w = rng::draw4(make_stream(run_seed, purpose::negative,
/// a), positive, j, batch) and maps the 64-bit value (w[0] << 32 | w[1]) to lo + floor(x (hi -
/// lo) / 2^64); the first candidate != src is returned. A pure function of its arguments, so
/// every PE and every protocol draws the same negatives for a batch (the cooperative == single-PE
/// invariant holds for link prediction).
/// @throws logic_error when hi - lo < 2 (no vertex other than the source to draw) or when 64
///         attempts all hit the source (probability below 2^-64 for hi - lo >= 2).
vid_t negative_tail(std::uint64_t run_seed, std::uint32_t batch, std::int64_t positive, int j,
                    vid_t src, vid_t lo, vid_t hi);

/// The pairs one PE scores in one step: its positives, each followed by its k negatives, and
/// the distinct endpoints they read (the rows of the encoder's output the decoder needs).
struct link_batch {
  std::vector<vid_t> targets;                  ///< distinct endpoints, in first-appearance order
  std::vector<std::int64_t> src_rows;          ///< [m] pair source as a row of targets
  std::vector<std::int64_t> dst_rows;          ///< [m] pair destination as a row of targets
  std::vector<float> labels;                   ///< [m] 1 for a positive, 0 for a negative
  std::vector<std::pair<vid_t, vid_t>> pairs;  ///< [m] the pairs as global ids
  /// [m] each pair's relation (its positive's, an edge-type index) on a typed task; empty
  /// when the task's pairs carry no relations.
  std::vector<std::int64_t> relations;
};

/// The tail range [lo, hi) of the negatives of relation r's pairs on a typed graph: the global
/// ids of the relation's destination node type ("src:rel:dst" -> dst).
/// @throws logic_error for r outside [0, R).
std::pair<vid_t, vid_t> relation_tail_range(const hetero_schema& h, std::int64_t r);

/// Builds the pairs of `positives` (indices into task.train; this PE's share of the global
/// batch) with `negatives` keyed negatives each (negative_tail; tails over the items on
/// user-item data; on a typed task (task.train.relation set, `schema` given) over the
/// destination node type of the positive's relation, relation_tail_range, and each negative
/// keeps its positive's relation; over [0, num_nodes) otherwise). O(m) expected with a hash map.
/// @throws logic_error for an index outside task.train, negatives < 0, or a typed task without
///         its schema.
link_batch make_link_batch(const link_task& task, std::span<const vid_t> positives, int negatives,
                           std::uint64_t run_seed, std::uint32_t batch, vid_t num_nodes,
                           const hetero_schema* schema = nullptr);

/// Metrics of one evaluation set: the model-selection value and every metric computed.
struct link_eval {
  std::string metric_name;  ///< "mrr" (queries of > 1 negative), "roc_auc" (labelled pairs,
                            ///< or one negative per positive), "recall@K"
  double value = 0;
  std::vector<std::pair<std::string, double>> all;  ///< name, value
};

/// True when `set` has queries (indexes) and every query holds exactly one positive and one
/// negative (split-edges --negatives 1): its MRR can only be 1 or 1/2 per query, so ROC-AUC
/// selects models instead. O(|set|); false for a set without queries.
bool one_negative_per_query(const pair_set& set);

/// Which metric selects models on `set` (see evaluate_pairs / evaluate_user_item): "mrr" for
/// queries with more than one negative, "roc_auc" for labelled pairs without queries or with
/// one negative per positive (one_negative_per_query), "recall@K" for positives only on
/// user-item data.
/// @throws logic_error when the set cannot be scored (positives only on non-user-item data).
std::string link_metric_name(const link_task& task, const pair_set& set, int topk);

/// The metric that selects models on `task`: "none" when it has neither validation nor test
/// pairs, else link_metric_name of its validation set (its test set when validation is empty).
/// @throws logic_error as link_metric_name.
std::string link_task_metric_name(const link_task& task, int topk);

/// The decoder's score (a logit: sigmoid gives the edge probability) of every pair of `set` on
/// host embeddings z [|V|, d]: [set.size()] float32, in set order, computed on the host in
/// chunks of 65536 pairs; distmult uses each pair's set.relation (relation 0 when empty).
/// Deterministic. @throws logic_error for an id outside [0, |V|) or a relation out of range.
std::vector<float> score_pairs(const models::link_decoder<float>& decoder, const matrix<float>& z,
                               const pair_set& set);

/// Scores every pair of `set` with `decoder` on host embeddings z [|V|, d] (in chunks; the
/// distmult decoder with each pair's set.relation, relation 0 when the set has none) and
/// computes: with `indexes`, MRR (ties against the positive), OGB's MRR, Hits@1/10/50
/// (models/link_metrics.hpp); with both labels present, ROC-AUC and average precision.
/// metric_name and value: "mrr" with queries of more than one negative, else "roc_auc" (one
/// negative per positive, one_negative_per_query, or no queries); `all` holds every metric.
/// @throws logic_error when the set has no negatives, or as the metrics.
link_eval evaluate_pairs(const models::link_decoder<float>& decoder, const matrix<float>& z,
                         const pair_set& set);

/// Top-K recommendation over all items (LightGCN's protocol, data/README.md "gowalla"): for every
/// user with pairs in `set`, the dot-product score of every item, the user's training items
/// (task.train) excluded; Recall@K and NDCG@K averaged over those users. metric_name
/// "recall@K". Scores come from a blocked GEMM of user rows against item rows on the host.
/// @throws logic_error when the decoder is not dot (full ranking with the MLP decoder would
///         evaluate |U| |I| MLPs) or the set is empty.
link_eval evaluate_user_item(const models::link_decoder<float>& decoder, const matrix<float>& z,
                             const link_task& task, const pair_set& set, int topk, int threads);

/// Link-prediction evaluation of a host model on a whole graph (trainer::evaluate_link; the TMA
/// server's evaluator, on a gnn_model built from model_config_for and given averaged weights):
/// z = model.infer_full(g, x, threads) (layer-wise full-neighbour embeddings [|V|, d]), then
/// for each of t.valid and t.test: evaluate_user_item when link_metric_name says "recall@K",
/// else evaluate_pairs. An empty set gives metric_name link_task_metric_name(t, topk) and value
/// NaN (`all` empty). Deterministic for any thread count.
/// @param model    a link-prediction model (with a decoder) in host memory
/// @param g        CSC of the graph message passing runs on, |V| = g.num_nodes
/// @param x        [|V|, model.config().in_dim] float32 host input rows (features, or an
///                 embedding table)
/// @param t        the task; its pairs' ids in [0, |V|)
/// @param topk     K of Recall@K / NDCG@K (user-item data), >= 1
/// @param threads  host threads, >= 1
/// @returns the validation and test metrics.
/// @throws logic_error when the model has no decoder or lives off the host, as infer_full for a
///         shape mismatch, and as the evaluators.
std::pair<link_eval, link_eval> evaluate_link_model(const models::gnn_model& model,
                                                    const csc_graph& g, const matrix<float>& x,
                                                    const link_task& t, int topk, int threads);

}  // namespace coopgnn
