// Machine-readable and human-readable forms of epoch reports (`--metrics-out`, console tables).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "runtime/pipeline/config.hpp"

namespace coopgnn {

/// One JSON object per epoch and mode: mode, pes, epoch, train_loss, val_metric, test_metric,
/// metric_name, task ("node_classification" / "link_prediction"), metrics {val: {name: value},
/// test: {...}} (link prediction: every metric evaluated; absent when none), seconds {sample,
/// feature_load, forward, backward, communication, optimizer, epoch, eval}, work {seeds,
/// sampled_edges, sampled_vertices, feature_rows, feature_bytes, alltoall_bytes, allreduce_bytes}
/// (summed over PEs and batches), cache {hits, misses, miss_rate} (summed over PEs; without a cache
/// every row is a miss), batches. NaN metrics (not evaluated) are written as null.
nlohmann::json to_json(const epoch_report& r);

/// `v` as a JSON number, or null when it is NaN or infinite (JSON has neither).
nlohmann::json number_or_null(double v);

/// One console line: epoch, loss, metrics, stage times and work.
std::string format_epoch_line(const epoch_report& r);

/// Side-by-side table of the final epochs of several runs (one column per run), with the
/// independent / cooperative ratios of the work counters when both modes are present.
std::string format_comparison(const std::vector<epoch_report>& finals,
                              const std::vector<epoch_report>& totals);

}  // namespace coopgnn
