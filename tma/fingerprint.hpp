// What the ranks of a TMA job must agree on before they train (docs/design.md, "The option
// table"): the options that change the arithmetic, the model's size, the task and the dataset's
// content. `coopgnn tma` gathers every rank's fingerprint at start-up (mpi_session::all_gather)
// and stops every rank, naming the first difference, when they disagree.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "runtime/graph/dataset.hpp"
#include "pipeline/config.hpp"

namespace coopgnn::tma {

/// One rank's fingerprint: arithmetic_options(cfg) (model kind and widths, sampler, fanouts,
/// optimizer, seed, --gemm-math, ...), "--task", "--mode", "--scheme" = `scheme`,
/// "parameters" = `num_parameters` (the model's float32 parameter count), "dataset" (ds.name),
/// "dataset.num_nodes" and "dataset.content" = `content` (dataset_fingerprint). Host memory;
/// does not throw beyond std::bad_alloc.
nlohmann::json rank_fingerprint(const dataset& ds, const train_config& cfg,
                                const std::string& scheme, std::int64_t num_parameters,
                                const std::string& content);

/// Compares the fingerprints of every rank, `gathered[r]` rank r's rank_fingerprint as JSON text
/// (all_gather's result, the same on every rank). Returns "" when they all agree, else one
/// message naming the first key (in key order) on which some rank differs from rank 0 and every
/// value with its ranks: "the ranks disagree on --hidden: 32 on ranks 0, 1; 64 on rank 2 (start
/// every rank with the same options and dataset)"; for dataset.content it adds which parts differ
/// (fingerprint_difference of the first two values): "the ranks disagree on dataset.content
/// (their datasets' split differ): ...". A text that is not JSON is reported as that
/// rank's difference. Deterministic; does not throw beyond std::bad_alloc.
std::string fingerprint_mismatch(const std::vector<std::string>& gathered);

}  // namespace coopgnn::tma
