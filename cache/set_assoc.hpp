// The set-associative feature cache of the GPU (docs/design.md section 9), as
// a cache_policy. The host class is the reference the CUDA cache (cache/gpu_cache.hpp) must match
// exactly: same set mapping, same slot choice, same batch semantics, hence the same hits.
//
// Design, after HugeCTR's gpu_cache that GraphBolt wraps (dmlc/dgl,
// graphbolt/src/cuda/extension/gpu_cache): keys hash (MurmurHash3's 64-bit finaliser) to one of S
// sets of W ways; each slot keeps the batch clock of its last use; a miss takes the lowest empty
// way of its set, else the way with the oldest clock (ties: lowest way), i.e. LRU within the set at
// batch granularity. Unlike HugeCTR, admission inside one batch is ordered (keys of one set are
// admitted in batch order), so the result is deterministic and the GPU can reproduce it with one
// warp per set.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cache/policy.hpp"
#include "runtime/core/hd.hpp"

namespace coopgnn {

/// MurmurHash3's 64-bit finaliser (fmix64; Appleby, MurmurHash3, public domain): a bijection of
/// uint64 that mixes every input bit into every output bit. Pure.
COOPGNN_HD inline std::uint64_t fmix64(std::uint64_t k) {
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdULL;
  k ^= k >> 33;
  k *= 0xc4ceb9fe1a85ec53ULL;
  k ^= k >> 33;
  return k;
}

/// Geometry of a set-associative cache of `capacity_rows` rows with up to `ways` ways:
/// ways = min(requested ways, capacity), sets = floor(capacity / ways) (0 when capacity is 0).
/// The cache holds sets * ways <= capacity rows (all of them when ways divides the capacity).
struct set_assoc_geometry {
  std::int64_t sets = 0;
  std::int64_t ways = 0;
  /// The set of `key`: fmix64(key) mod sets. Precondition: sets > 0.
  [[nodiscard]] COOPGNN_HD std::int64_t set_of(std::int64_t key) const {
    return static_cast<std::int64_t>(fmix64(static_cast<std::uint64_t>(key)) %
                                     static_cast<std::uint64_t>(sets));
  }
};

/// @throws logic_error when capacity_rows < 0 or ways < 1 (the message names the value).
set_assoc_geometry make_set_assoc_geometry(std::int64_t capacity_rows, std::int64_t ways);

/// Set-associative cache policy with per-set LRU at batch granularity. A batch clock starts at 0
/// and advances by one at the start of every access_batch() (and every access(), a batch of one):
///  - query(key): hit iff key is in one of the W ways of set_of(key); a hit stamps the way with
///    the current clock.
///  - admit(key) (resident: nothing): in set_of(key), take the lowest-numbered empty way, else
///    the way with the smallest stamp (ties: lowest way); store key, stamp = current clock.
/// So within a batch, keys of one set are admitted in batch order and a later miss may replace an
/// earlier key of the same batch when more than W keys of the batch miss in one set.
/// Cost: O(W) per query or admit; memory O(capacity), allocated at construction.
/// Deterministic. Not thread-safe (one per PE).
class set_assoc_policy final : public cache_policy {
 public:
  static constexpr std::int64_t default_ways = 32;  ///< one warp lane per way on the GPU
  /// @throws logic_error when capacity_rows < 0 or ways < 1.
  explicit set_assoc_policy(std::int64_t capacity_rows, std::int64_t ways = default_ways);
  bool query(std::int64_t key) override;
  void admit(std::int64_t key) override;
  [[nodiscard]] bool contains(std::int64_t key) const override;
  [[nodiscard]] std::int64_t size() const override { return size_; }
  [[nodiscard]] std::string name() const override { return "setassoc"; }
  [[nodiscard]] const set_assoc_geometry& geometry() const { return geo_; }
  /// The way holding `key` in its set, or -1. Changes nothing.
  [[nodiscard]] std::int64_t way_of(std::int64_t key) const;

 protected:
  void begin_batch() override { ++clock_; }

 private:
  set_assoc_geometry geo_;
  std::vector<std::int64_t> keys_;    // [sets * ways]
  std::vector<std::uint64_t> stamp_;  // [sets * ways]; 0 = empty (the clock is >= 1 when used)
  std::uint64_t clock_ = 0;
  std::int64_t size_ = 0;
};

}  // namespace coopgnn
