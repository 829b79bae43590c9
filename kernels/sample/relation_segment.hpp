// The relation segments of a typed CSC column (runtime/graph/csc.hpp: a typed column is sorted by
// (relation, source id), so the in-edges of one relation are one contiguous range). One
// COOPGNN_HD function serves the host sampler (sample.cpp), the CUDA kernels (sample.cu) and the
// full-neighbour block (models/model.cpp). nvcc compiles this header: cstdint and types.hpp only.
#pragma once

#include <cstdint>

#include "runtime/core/hd.hpp"
#include "runtime/core/types.hpp"

namespace coopgnn {

/// A half-open range [begin, end) of CSC edge offsets.
struct edge_range {
  eid_t begin = 0;
  eid_t end = 0;
  [[nodiscard]] COOPGNN_HD eid_t size() const { return end - begin; }
};

namespace detail {
/// First position in [lo, hi) whose relation is >= v (hi when none), for ascending etype there.
COOPGNN_HD inline eid_t first_relation_at_least(const std::int32_t* etype, eid_t lo, eid_t hi,
                                                std::int32_t v) {
  while (lo < hi) {
    eid_t const mid = lo + (hi - lo) / 2;
    if (etype[mid] < v) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}
}  // namespace detail

/// The in-edges of column s that have relation r: [b, e) within [indptr[s], indptr[s + 1]) with
/// etype[b .. e) == r, found by two binary searches on etype (O(log d_s)).
/// Untyped (etype null): the whole column for r = 0, an empty range at indptr[s + 1] otherwise.
/// r outside [0, R) gives an empty range (at the end of the relations below it).
/// @param indptr [|V| + 1], @param etype [|E|] or null, in memory the calling thread can read.
/// Preconditions (not checked): 0 <= s < |V|; the column sorted by relation.
COOPGNN_HD inline edge_range relation_segment(const eid_t* indptr, const std::int32_t* etype,
                                              vid_t s, std::int32_t r) {
  eid_t const lo = indptr[s];
  eid_t const hi = indptr[s + 1];
  if (etype == nullptr) return r == 0 ? edge_range{lo, hi} : edge_range{hi, hi};
  eid_t const b = detail::first_relation_at_least(etype, lo, hi, r);
  return {b, detail::first_relation_at_least(etype, b, hi, r + 1)};
}

}  // namespace coopgnn
