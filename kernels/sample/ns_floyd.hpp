// Uniform neighbour sampling without replacement by Floyd's algorithm with keyed draws
// (docs/design.md section 4.2; R. W. Floyd's subset algorithm as given in J. Bentley & R. Floyd,
// "Programming Pearls: A sample of brilliance", CACM 30(9), 1987). One COOPGNN_HD function,
// ns_floyd_select, is the per-seed rule of both backends: the host sampler (sample.cpp) calls it
// in a loop over seeds, the CUDA kernel (sample.cu) in one thread per seed, so both keep the
// same positions bit for bit. nvcc compiles this header: standard library (cstdint) and rng.hpp
// only.
#pragma once

#include <cstdint>

#include "runtime/core/hd.hpp"
#include "runtime/core/rng.hpp"

namespace coopgnn {

/// Largest fanout whose Floyd membership test is a linear scan of the positions chosen so far
/// (at most k (k - 1) / 2 comparisons); above it the caller passes a hash table.
inline constexpr std::uint32_t kFloydLinearMax = 32;

/// Entries of the membership hash table ns_floyd_select needs for fanout k > kFloydLinearMax:
/// the smallest power of two >= 2 k (load factor <= 1/2), so at most 4 k. 0 for k <=
/// kFloydLinearMax. Precondition k <= 2^30 (the table must fit 32-bit indices); a larger k
/// (never drawn: it needs a column of more than 2^30 neighbours) gets 2^31, the largest power
/// of two of 32 bits, instead of looping forever.
COOPGNN_HD inline std::uint32_t ns_floyd_table_size(std::uint32_t k) {
  if (k <= kFloydLinearMax) return 0;
  std::uint32_t t = 1;
  while (t < 2 * static_cast<std::uint64_t>(k) && t < (std::uint32_t{1} << 31)) t <<= 1;
  return t;
}

/// The Floyd draw of step j for seed s: an integer uniform on [0, j] (j < 2^32 - 1).
/// Keyed 64-bit draw u = (w1 << 32) | w0 of rng::draw4(st, id = s, sub = offset + j, batch)
/// (offset: where the sampled range starts in s's column, 0 untyped; a typed relation segment
/// passes its start, so segments of one column draw different keys), mapped by
/// the multiply-high floor(u (j + 1) / 2^64) (Lemire's map without rejection, computed exactly
/// in 64-bit arithmetic as ((u >> 32) m + (((u & 0xFFFFFFFF) m) >> 32)) >> 32 with m = j + 1).
/// Every value of [0, j] has probability within m / 2^64 <= 2^-32 (relative) of 1 / m: the bias
/// is negligible, and the map is integer-exact on host and device.
COOPGNN_HD inline std::uint32_t ns_floyd_draw(rng::stream st, std::uint64_t s, std::uint32_t j,
                                              std::uint32_t batch, std::uint32_t offset = 0) {
  auto const w = rng::draw4(st, s, offset + j, batch);
  std::uint64_t const m = static_cast<std::uint64_t>(j) + 1;
  std::uint64_t const hi = static_cast<std::uint64_t>(w[1]) * m;
  std::uint64_t const lo = static_cast<std::uint64_t>(w[0]) * m;
  return static_cast<std::uint32_t>((hi + (lo >> 32)) >> 32);
}

namespace detail {

/// Restores the max-heap property of a[0 .. end) below `root` (heapsort's sift-down).
COOPGNN_HD inline void floyd_sift_down(std::uint32_t* a, std::uint32_t root, std::uint32_t end) {
  std::uint32_t const v = a[root];
  while (true) {
    std::uint32_t child = 2 * root + 1;
    if (child >= end) break;
    if (child + 1 < end && a[child + 1] > a[child]) ++child;
    if (a[child] <= v) break;
    a[root] = a[child];
    root = child;
  }
  a[root] = v;
}

/// Ascending sort of a[0 .. n): insertion sort for n <= 32, heapsort above (O(n log n), no
/// recursion or allocation, so it runs in one device thread).
COOPGNN_HD inline void floyd_sort(std::uint32_t* a, std::uint32_t n) {
  if (n <= 32) {
    for (std::uint32_t i = 1; i < n; ++i) {
      std::uint32_t const v = a[i];
      std::uint32_t p = i;
      for (; p > 0 && a[p - 1] > v; --p) a[p] = a[p - 1];
      a[p] = v;
    }
    return;
  }
  for (std::uint32_t i = n / 2; i-- > 0;) floyd_sift_down(a, i, n);
  for (std::uint32_t end = n - 1; end > 0; --end) {
    std::uint32_t const t = a[0];
    a[0] = a[end];
    a[end] = t;
    floyd_sift_down(a, 0, end);
  }
}

inline constexpr std::uint32_t kFloydEmpty = 0xFFFFFFFFu;

/// Inserts v into the open-addressing table (linear probing, `mask` + 1 entries, a power of two);
/// false when v was already there.
COOPGNN_HD inline bool floyd_insert(std::uint32_t* table, std::uint32_t mask, std::uint32_t v) {
  std::uint32_t h = (v * 0x9E3779B1u) & mask;
  while (true) {
    std::uint32_t const cur = table[h];
    if (cur == v) return false;
    if (cur == kFloydEmpty) {
      table[h] = v;
      return true;
    }
    h = (h + 1) & mask;
  }
}

}  // namespace detail

/// The positions NS keeps for seed s of in-degree d > k >= 1, written ascending to out[0 .. k).
/// Typed graphs sample a relation segment: d is its length, positions are within it, and
/// `offset` (the segment's start within the column; 0 untyped) shifts the draws' sub-index.
/// Floyd: for j = d - k, ..., d - 1, r = ns_floyd_draw(st, s, j, batch, offset); the position
/// chosen at this step is r if r was not chosen before, else j (never chosen before: earlier
/// steps chose below j). The result is a uniformly random k-subset of [0, d) (each subset with
/// probability 1 / C(d, k) up to the draw's 2^-32 relative bias), so every position is kept
/// with probability k / d. Pure function of (st, s, d, k, batch, offset).
/// Membership test: k <= kFloydLinearMax scans out[0 .. m) (O(k^2) <= 496 comparisons);
/// above it `table` must hold ns_floyd_table_size(k) u32 of scratch (cleared here) used as an
/// open-addressing hash set (expected O(1) per step). Cost O(k) Philox draws plus O(k log k)
/// for the final sort (heapsort above 32), independent of d.
/// @param out    [k] writable (any memory the caller's thread can address)
/// @param table  [ns_floyd_table_size(k)] scratch, or unused (may be null) for k <= 32
/// Preconditions (not checked): 1 <= k < d, offset + d < 2^32.
COOPGNN_HD inline void ns_floyd_select(rng::stream st, std::uint64_t s, std::uint32_t d,
                                       std::uint32_t k, std::uint32_t batch, std::uint32_t* out,
                                       std::uint32_t* table, std::uint32_t offset = 0) {
  std::uint32_t m = 0;
  if (k <= kFloydLinearMax) {
    for (std::uint32_t j = d - k; j < d; ++j) {
      std::uint32_t const r = ns_floyd_draw(st, s, j, batch, offset);
      bool taken = false;
      for (std::uint32_t q = 0; q < m; ++q) taken = taken || out[q] == r;
      out[m++] = taken ? j : r;
    }
  } else {
    std::uint32_t const size = ns_floyd_table_size(k);
    for (std::uint32_t q = 0; q < size; ++q) table[q] = detail::kFloydEmpty;
    for (std::uint32_t j = d - k; j < d; ++j) {
      std::uint32_t const r = ns_floyd_draw(st, s, j, batch, offset);
      std::uint32_t pick = r;
      if (!detail::floyd_insert(table, size - 1, r)) {
        pick = j;
        detail::floyd_insert(table, size - 1, j);
      }
      out[m++] = pick;
    }
  }
  detail::floyd_sort(out, k);
}

}  // namespace coopgnn
