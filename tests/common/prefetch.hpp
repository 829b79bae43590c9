// The cases and oracle of the prefetch tests (docs/design.md section 6.7), shared by
// tests/pipeline/prefetch_test.cpp (host and emulated backends) and
// tests/pipeline/prefetch_gpu_test.cpp (CUDA): a run with --prefetch N must give the serial
// run's (--prefetch 0) losses, counters and final weights bit for bit.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "pipeline/trainer.hpp"

namespace coopgnn::test {

struct prefetch_usecase {
  std::string name;
  task_kind task;
  minibatch_mode mode;
  backend where;
  int pes;
  int depth;               // --prefetch
  bool cache;              // a cache of 120 rows per PE: LRU on the host tiers, on CUDA the GPU
                           // cache (setassoc) in front of the device table
  std::int64_t kappa;      // --batch-dependency (LABOR)
  std::int64_t embedding;  // --embedding-dim (0: the features)
};

inline std::ostream& operator<<(std::ostream& os, const prefetch_usecase& u) {
  return os << u.name;
}

/// The case's configuration with --prefetch 0 (batch 96, LABOR, seed 29 or link_cfg's). On
/// CUDA every PE runs on device 0 (pes_per_gpu = P, so the device communicators are peer-copy
/// ones) and samples there.
train_config prefetch_cfg(const prefetch_usecase& u);

/// What a run produced that the prefetch must not change.
struct prefetch_run {
  std::vector<epoch_report> epochs;
  std::vector<float> params;
  std::vector<float> embeddings;  // the learnt rows (empty without them)
};

/// `epochs` epochs of `cfg` on the case's dataset (protocol_data, or link_data for link
/// prediction), without evaluation.
prefetch_run run_prefetch_case(const prefetch_usecase& u, const train_config& cfg, int epochs);

/// Records gtest failures unless a and b hold the same floats bit for bit (non-empty).
void expect_bits(const std::vector<float>& a, const std::vector<float>& b, const char* what);

/// Trains the case serially and with --prefetch u.depth for two epochs and expects the same
/// batches, losses (bitwise), work and cache counters, weights and learnt rows; checks that the
/// case exercises what it names (batches to prefetch, cache hits, exchanges).
void expect_prefetch_gives_serial_bits(const prefetch_usecase& u);

/// Stops an epoch after batch 2 with depth 2 (batches 3 and 4 asked for, prepared, dropped),
/// resumes it in the same trainer and expects the serial epoch's loss and weights. `where`: the
/// backend; no cache (dropped batches advance a cache's contents).
void expect_stopped_prefetch_resumes(backend where);

}  // namespace coopgnn::test
