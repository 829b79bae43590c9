// Feature storage seen by a PE (docs/design.md section 9): rows are read from the run's
// feature table (cache/storage.hpp: host memory or a memory-mapped .npy on the host backend),
// optionally through a per-PE cache policy (cache/policy.hpp) that decides which rows the fast
// tier holds.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "cache/policy.hpp"
#include "cache/storage.hpp"
#include "runtime/core/matrix.hpp"
#include "runtime/core/types.hpp"

namespace coopgnn {

/// Counters of one store: rows and bytes requested (bytes as stored: rows x the table's
/// row_bytes()), and the cache's verdicts on them.
struct feature_store_stats {
  std::int64_t rows = 0;
  std::int64_t bytes = 0;
  std::int64_t cache_hits = 0;    ///< rows the cache held
  std::int64_t cache_misses = 0;  ///< rows read from storage (all rows when there is no cache)
};

/// Read access to node features for one PE. The cache policy here is a model of a cache: it
/// decides, exactly as the policy would, which loads hit and which miss, and counts them (the
/// cache study and the "cache" numbers of every run), but every row is still gathered from the
/// table, which is where the host tiers keep all rows anyway; it holds no rows of its own. The
/// cache that holds rows is the GPU cache (cache/gpu_cache.hpp, --cache-policy setassoc on the
/// CUDA backend). Not thread-safe (one per PE); the table is shared
/// read-only between PEs and must outlive the store.
class feature_store {
 public:
  /// @param table  the run's feature table (host-readable tier), shared by the PEs
  explicit feature_store(const feature_table* table) : table_(table) {}
  /// Puts `cache` in front of storage (nullptr: none). In cooperative minibatching a PE loads
  /// only vertices it owns, so per-PE caches are disjoint; in independent minibatching a PE
  /// caches whatever it loads (the cooperative paper, section 3.2; docs/design.md section 9).
  void set_cache(std::unique_ptr<cache_policy> cache) { cache_ = std::move(cache); }
  [[nodiscard]] const cache_policy* cache() const { return cache_.get(); }
  /// Loads rows `ids` ([m], each in [0, |V|)) as an [m, F] float32 host matrix (16-bit tables
  /// widened, feature_table::gather) and counts them; with a cache,
  /// the ids form one batch of cache_policy::access_batch (all looked up against the state left
  /// by earlier loads, then the misses admitted in order).
  /// @throws logic_error for an id out of range.
  matrix<float> load(std::span<const vid_t> ids);
  [[nodiscard]] std::int64_t dim() const { return table_->cols(); }
  [[nodiscard]] const feature_store_stats& stats() const { return stats_; }
  void reset_stats() { stats_ = {}; }

 private:
  const feature_table* table_;
  std::unique_ptr<cache_policy> cache_;
  feature_store_stats stats_;
  std::vector<std::uint8_t> hit_;  // scratch: hit flags of the last load
};

}  // namespace coopgnn
