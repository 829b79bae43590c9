// The per-PE GPU feature cache (docs/design.md section 9): a hand-written
// set-associative cache of feature rows in device memory with batched lookup, insertion of the
// misses and per-batch hit/miss counts. Its residency decisions are exactly those of the host
// reference set_assoc_policy (cache/set_assoc.hpp): same set hash, same way choice, same batch
// clock, same batch semantics (all keys looked up first, then the misses admitted per set in
// batch order), so host and CUDA runs report the same hits.
//
// Usage per batch (GraphBolt's Query / Replace):
//   auto st = cache.lookup(keys, n, out, miss_pos, stream);   // hits copied into out
//   ... gather rows miss_pos[0..st.misses) from storage into out ...
//   cache.admit(keys, n, out, miss_pos, st.misses, stream);   // misses enter the cache
// This header needs no CUDA headers (.cpp files include it); CUDA builds only.
#pragma once

#ifdef COOPGNN_WITH_CUDA

#include <cstdint>

#include "cache/set_assoc.hpp"
#include "runtime/core/cuda_context.hpp"
#include "runtime/core/half.hpp"

namespace coopgnn::cuda {

/// Hits and misses of one lookup.
struct cache_batch_stats {
  std::int64_t hits = 0;
  std::int64_t misses = 0;
};

/// Set-associative cache of feature rows of width `dim` in device memory, held at the element
/// type of the table it fronts (`dtype`: float32, 4 bytes per element; float16 or bfloat16, 2
/// bytes: a row is narrowed on admission from its widened float32 copy, exactly, and widened
/// again on a hit, so hits give the bits the gather gives). The rows callers pass and receive
/// are float32. One per PE; its methods are stream-ordered on the stream given and not
/// thread-safe.
class device_set_assoc_cache {
 public:
  /// Allocates sets * ways slots (geometry: make_set_assoc_geometry(capacity_rows, ways)) of
  /// `dim` elements of `dtype` (dim * feature_dtype_size(dtype) bytes) plus a key and a stamp
  /// each, from ctx's pool on ctx.compute(), all empty;
  /// synchronises ctx.compute() once so that the methods may use any stream. The slots are
  /// freed on ctx.compute(): work on other streams must be ordered before destruction.
  /// @throws logic_error for capacity_rows < 0, ways < 1 or dim < 1; cuda_error when the
  ///   allocation fails.
  device_set_assoc_cache(const cuda_context& ctx, std::int64_t capacity_rows, std::int64_t dim,
                         std::int64_t ways = set_assoc_policy::default_ways,
                         feature_dtype dtype = feature_dtype::float32);

  [[nodiscard]] const set_assoc_geometry& geometry() const { return geo_; }
  [[nodiscard]] std::int64_t dim() const { return dim_; }
  /// The element type the rows are held at.
  [[nodiscard]] feature_dtype dtype() const { return dtype_; }
  /// Device memory of the row slots: sets * ways * dim * feature_dtype_size(dtype) bytes.
  [[nodiscard]] std::int64_t row_bytes_total() const {
    return static_cast<std::int64_t>(rows_.size());
  }

  /// Starts a batch (advances the clock) and looks up `keys` ([n] device int64, vertex ids >= 0):
  /// for each hit, stamps its slot and copies the row into out[i, :] ([n, dim] device float32,
  /// row-major; a 16-bit row widened exactly); writes the positions i of the misses, ascending,
  /// to miss_pos[0..misses) ([n] device int64). Synchronises `s` once to return the counts.
  /// @throws cuda_error for a failed launch or copy.
  cache_batch_stats lookup(const std::int64_t* keys, std::int64_t n, float* out,
                           std::int64_t* miss_pos, stream_t s);

  /// Admits the misses of the last lookup: for each set, its missing keys in batch order take
  /// the lowest empty way, else the way with the oldest stamp (ties: lowest way), and their rows
  /// are copied from out[miss_pos[j], :] (float32 rows widened from a table of dtype(): a
  /// 16-bit cache narrows them back exactly, float_to_half_exact or the top 16 bits). A key
  /// repeated in the batch is admitted once.
  /// @param keys, out, miss_pos, misses  as passed to / returned by lookup()
  /// @throws cuda_error for a failed launch.
  void admit(const std::int64_t* keys, const float* out, const std::int64_t* miss_pos,
             std::int64_t misses, stream_t s);

  /// The way of each key in its set or -1 ([n] device int64 in, [n] host out), for tests.
  /// Synchronises `s`.
  std::vector<std::int64_t> ways_of(const std::int64_t* keys, std::int64_t n, stream_t s) const;

 private:
  const cuda_context* ctx_;
  set_assoc_geometry geo_;
  std::int64_t dim_;
  feature_dtype dtype_;
  std::uint64_t clock_ = 0;
  device_buffer<std::int64_t> keys_;     // [sets * ways]
  device_buffer<std::uint64_t> stamps_;  // [sets * ways], 0 = empty
  device_buffer<std::uint8_t> rows_;     // [sets * ways, dim] elements of dtype_, as bytes
  device_buffer<unsigned long long> counter_;  // [1] misses of the current lookup
};

}  // namespace coopgnn::cuda

#endif  // COOPGNN_WITH_CUDA
