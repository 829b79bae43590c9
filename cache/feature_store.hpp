// Feature storage seen by a PE (DESIGN.md section 1, cache). This issue provides the host tier:
// rows are read from the dataset's in-memory float32 matrix. Device, pinned (UVA) and
// memory-mapped tiers and the per-PE caches (issue 4) sit behind the same load() call.
#pragma once

#include <cstdint>
#include <span>

#include "runtime/core/matrix.hpp"
#include "runtime/core/types.hpp"

namespace coopgnn {

/// Counters of one store: rows and bytes read from storage.
struct feature_store_stats {
  std::int64_t rows = 0;
  std::int64_t bytes = 0;
};

/// Read access to node features for one PE. Not thread-safe (one per PE); the table is shared
/// read-only between PEs and must outlive the store.
class feature_store {
 public:
  explicit feature_store(const matrix<float>* table) : table_(table) {}
  /// Loads rows `ids` ([m], each in [0, |V|)) as an [m, F] matrix and counts them.
  /// @throws logic_error for an id out of range.
  matrix<float> load(std::span<const vid_t> ids);
  [[nodiscard]] std::int64_t dim() const { return table_->cols(); }
  [[nodiscard]] const feature_store_stats& stats() const { return stats_; }
  void reset_stats() { stats_ = {}; }

 private:
  const matrix<float>* table_;
  feature_store_stats stats_;
};

}  // namespace coopgnn
