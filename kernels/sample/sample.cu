// CUDA neighbour sampling, unique-and-compact and owner split (sample_cuda.hpp). Host reference:
// sample.cpp; the keys, rules and output order are the same, so results match bit for bit.
#include <cuda_runtime.h>

#include <cstdint>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_select.cuh>
#include <span>
#include <string>
#include <vector>

#include "kernels/sample/labor_variate.hpp"
#include "kernels/sample/ns_floyd.hpp"
#include "kernels/sample/relation_segment.hpp"
#include "kernels/sample/sample_checks.hpp"
#include "kernels/sample/sample_cuda.hpp"
#include "runtime/core/cuda_check.hpp"
#include "runtime/core/cuda_launch.cuh"
#include "runtime/core/nvtx.hpp"
#include "runtime/core/rng.hpp"

namespace coopgnn::cuda {
namespace {

constexpr int kBlock = 256;
using ull = unsigned long long;
static_assert(sizeof(ull) == sizeof(std::uint64_t));

/// make_block's checks in the host's order (make_block_host, sample.cpp): the check of a
/// check_word (sample_checks.hpp) in its status word 0.
enum block_check : std::uint32_t {
  block_destination_range = 0,  ///< position i: dst[i] outside [0, |V|)
  block_source_range = 1,       ///< edge e: nbrs[e] outside [0, |V|)
  block_destination_twice = 2,  ///< sorted position i: the i-th smallest destination repeats
};

/// exclude_edges' checks in the host's order (exclude_edges, sample.cpp).
enum exclude_check : std::uint32_t {
  exclude_keys_order = 0,   ///< position i: keys[i - 1] >= keys[i]
  exclude_row_offsets = 1,  ///< row q: indptr[q], indptr[q + 1] not a range in [0, |nbrs|]
  exclude_edge_key = 2,     ///< row q: the first row with an edge without a key
};

/// Blocks for `n` items, one thread each, capped (the kernels below loop grid-stride).
unsigned grid_for(std::int64_t n) {
  std::int64_t const blocks = (n + kBlock - 1) / kBlock;
  return static_cast<unsigned>(blocks < 65535 * 16 ? blocks : 65535 * 16);
}

/// Largest i in [0, n) with offsets[i] <= e, for non-decreasing offsets[0 .. n] with
/// offsets[0] <= e < offsets[n]: the segment that owns item e.
__device__ std::int64_t segment_of(const std::int64_t* offsets, std::int64_t n, std::int64_t e) {
  std::int64_t lo = 0, hi = n;  // invariant: offsets[lo] <= e < offsets[hi]
  while (hi - lo > 1) {
    std::int64_t const mid = lo + (hi - lo) / 2;
    if (offsets[mid] <= e) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  return lo;
}

/// First index i in [0, n) with a[i] >= v (n when none), for ascending a.
__device__ std::int64_t lower_bound(const std::int64_t* a, std::int64_t n, std::int64_t v) {
  std::int64_t lo = 0, hi = n;
  while (lo < hi) {
    std::int64_t const mid = lo + (hi - lo) / 2;
    if (a[mid] < v) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

// ---- sampling kernels ---------------------------------------------------------------------------

/// For row q = i * R + r (seed i, relation r): cand[q] = d, the length of seed i's relation-r
/// segment (relation_segment; the whole column untyped), row_begin[q] its first edge offset (0
/// and 0 for an invalid seed). Reports the first invalid seed position (outside [0, |V|) or of
/// in-degree >= 2^32) in *bad (atomicMin).
__global__ void row_degrees_per_thread(const vid_t* seeds, std::int64_t rows, int R,
                                       const eid_t* indptr, const std::int32_t* etype,
                                       vid_t num_nodes, std::int64_t* cand, eid_t* row_begin,
                                       ull* bad) {
  for (std::int64_t q = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; q < rows;
       q += std::int64_t{gridDim.x} * blockDim.x) {
    std::int64_t const i = q / R;
    auto const r = static_cast<std::int32_t>(q % R);
    vid_t const s = seeds[i];
    eid_t d = 0;
    eid_t b = 0;
    if (s < 0 || s >= num_nodes) {
      atomicMin(bad, static_cast<ull>(i));
    } else if (indptr[s + 1] - indptr[s] >= (eid_t{1} << 32)) {
      atomicMin(bad, static_cast<ull>(i));  // an empty row too: later kernels stay in bounds
    } else {
      edge_range const seg = relation_segment(indptr, etype, s, r);
      d = seg.size();
      b = seg.begin;
    }
    cand[q] = d;
    row_begin[q] = b;
  }
}

/// NS: count[q] = segment length d of row q (already in count[q]) clamped to min(k, d) for
/// k = fanouts[q % R] >= 0 (k = 0: an empty row); k = -1 leaves d.
__global__ void ns_counts_per_thread(std::int64_t* count, std::int64_t rows, int R,
                                     const int* fanouts) {
  for (std::int64_t q = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; q < rows;
       q += std::int64_t{gridDim.x} * blockDim.x) {
    int const k = fanouts[q % R];
    if (k >= 0 && count[q] > k) count[q] = k;
  }
}

/// NS, one thread per row q = i * R + r (the host's per-row loop, sample.cpp): k = 0 writes
/// nothing; d <= k or k = -1 copies the segment; d > k runs ns_floyd_select (ns_floyd.hpp, the
/// host's very function, offset = segment start - column start) into pos[out_indptr[q] ..) with
/// the hash scratch table[4 out_indptr[q] ..) for k > 32 (4 k >= ns_floyd_table_size(k)
/// entries), then gathers the kept neighbours. Weight 1 / count.
__global__ void ns_floyd_per_row(const vid_t* seeds, std::int64_t rows, int R, const eid_t* indptr,
                                 const std::int32_t* etype, const vid_t* indices,
                                 const int* fanouts, rng::stream st, std::uint32_t batch,
                                 const eid_t* out_indptr, std::uint32_t* pos, std::uint32_t* table,
                                 vid_t* nbrs, float* weights) {
  for (std::int64_t q = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; q < rows;
       q += std::int64_t{gridDim.x} * blockDim.x) {
    vid_t const s = seeds[q / R];
    auto const r = static_cast<std::int32_t>(q % R);
    int const fanout = fanouts[r];
    edge_range const seg = relation_segment(indptr, etype, s, r);
    eid_t const d = seg.size();
    vid_t const* nb = indices + seg.begin;
    eid_t const o = out_indptr[q];
    if (fanout == 0 || d == 0) continue;
    if (fanout < 0 || d <= fanout) {
      float const w = 1.0f / static_cast<float>(d);
      for (eid_t j = 0; j < d; ++j) {
        nbrs[o + j] = nb[j];
        weights[o + j] = w;
      }
      continue;
    }
    auto const k = static_cast<std::uint32_t>(fanout);
    std::uint32_t* p = pos + o;
    ns_floyd_select(st, static_cast<std::uint64_t>(s), static_cast<std::uint32_t>(d), k, batch, p,
                    table == nullptr ? nullptr : table + 4 * o,
                    static_cast<std::uint32_t>(seg.begin - indptr[s]));
    float const w = 1.0f / static_cast<float>(k);
    for (std::uint32_t j = 0; j < k; ++j) {
      nbrs[o + j] = nb[p[j]];
      weights[o + j] = w;
    }
  }
}

/// LABOR, one thread per candidate edge e = (row q, position j in its segment): keep[e] = 1 if
/// the row keeps its whole segment (k = -1 or d <= k), 0 for k = 0, else
/// labor_variate(plan, t) <= float(k) / float(d), k = fanouts[q % R].
__global__ void labor_flags_per_edge(const std::int64_t* cand_off, std::int64_t rows, int R,
                                     std::int64_t num_cand, const eid_t* row_begin,
                                     const vid_t* indices, const int* fanouts,
                                     labor_variate_plan plan, std::int64_t* keep) {
  for (std::int64_t e = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; e < num_cand;
       e += std::int64_t{gridDim.x} * blockDim.x) {
    std::int64_t const q = segment_of(cand_off, rows, e);
    std::int64_t const d = cand_off[q + 1] - cand_off[q];
    int const fanout = fanouts[q % R];
    if (fanout < 0 || d <= fanout) {
      keep[e] = 1;
    } else if (fanout == 0) {
      keep[e] = 0;
    } else {
      vid_t const t = indices[row_begin[q] + (e - cand_off[q])];
      float const threshold = static_cast<float>(fanout) / static_cast<float>(d);
      keep[e] = labor_variate(plan, static_cast<std::uint64_t>(t)) <= threshold ? 1 : 0;
    }
  }
}

/// out_indptr[q] = pos[cand_off[q]] for q in [0, rows]: kept edges before row q.
__global__ void output_offsets_per_row(const std::int64_t* cand_off, std::int64_t rows,
                                       const std::int64_t* pos, eid_t* out_indptr) {
  for (std::int64_t q = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; q <= rows;
       q += std::int64_t{gridDim.x} * blockDim.x) {
    out_indptr[q] = pos[cand_off[q]];
  }
}

/// Writes each kept candidate e to slot pos[e]: its neighbour id and weight 1 / kept(row).
__global__ void write_kept_per_edge(const std::int64_t* cand_off, std::int64_t rows,
                                    std::int64_t num_cand, const eid_t* row_begin,
                                    const vid_t* indices, const std::int64_t* pos,
                                    const eid_t* out_indptr, vid_t* nbrs, float* weights) {
  for (std::int64_t e = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; e < num_cand;
       e += std::int64_t{gridDim.x} * blockDim.x) {
    std::int64_t const o = pos[e];
    if (pos[e + 1] == o) continue;  // not kept
    std::int64_t const q = segment_of(cand_off, rows, e);
    nbrs[o] = indices[row_begin[q] + (e - cand_off[q])];
    weights[o] = 1.0f / static_cast<float>(out_indptr[q + 1] - out_indptr[q]);
  }
}

// ---- unique-and-compact kernels
// -------------------------------------------------------------------

__global__ void iota_per_thread(std::int64_t* out, std::int64_t n) {
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < n;
       i += std::int64_t{gridDim.x} * blockDim.x) {
    out[i] = i;
  }
}

/// Reports the first position i >= 1 of a sorted array with a[i] == a[i - 1] in *check
/// (check_word block_destination_twice, atomicMin).
__global__ void find_duplicate_per_thread(const vid_t* sorted, std::int64_t n, ull* check) {
  for (std::int64_t i = 1 + blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < n;
       i += std::int64_t{gridDim.x} * blockDim.x) {
    if (sorted[i] == sorted[i - 1]) {
      atomicMin(check, check_word(block_destination_twice, static_cast<std::uint64_t>(i)));
    }
  }
}

/// Reports the first position i with ids[i] outside [0, num_nodes) in *check (check_word
/// `what`, atomicMin).
__global__ void check_ids_per_thread(const vid_t* ids, std::int64_t n, vid_t num_nodes,
                                     std::uint32_t what, ull* check) {
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < n;
       i += std::int64_t{gridDim.x} * blockDim.x) {
    if (!id_in_range(ids[i], num_nodes)) {
      atomicMin(check, check_word(what, static_cast<std::uint64_t>(i)));
    }
  }
}

/// local[e] = position of nbrs[e] among the destinations, or -1; other[e] = (local[e] < 0).
/// Reports the first edge whose source is outside [0, num_nodes) in *check (check_word
/// block_source_range, atomicMin; the search itself reads only the destinations).
__global__ void locate_in_dst_per_edge(const vid_t* nbrs, std::int64_t num_edges,
                                       const vid_t* dst_sorted, const std::int64_t* dst_pos,
                                       std::int64_t n, vid_t num_nodes, std::int64_t* local,
                                       unsigned char* other, ull* check) {
  for (std::int64_t e = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; e < num_edges;
       e += std::int64_t{gridDim.x} * blockDim.x) {
    vid_t const t = nbrs[e];
    if (!id_in_range(t, num_nodes)) {
      atomicMin(check, check_word(block_source_range, static_cast<std::uint64_t>(e)));
    }
    std::int64_t const k = lower_bound(dst_sorted, n, t);
    bool const found = k < n && dst_sorted[k] == t;
    local[e] = found ? dst_pos[k] : -1;
    other[e] = found ? 0 : 1;
  }
}

/// indices[e] = local[e] if the source is a destination, else n + rank of nbrs[e] in `uniq`.
__global__ void compact_indices_per_edge(const vid_t* nbrs, const std::int64_t* local,
                                         std::int64_t num_edges, const vid_t* uniq,
                                         std::int64_t num_uniq, std::int64_t n,
                                         std::int64_t* indices) {
  for (std::int64_t e = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; e < num_edges;
       e += std::int64_t{gridDim.x} * blockDim.x) {
    std::int64_t const l = local[e];
    indices[e] = l >= 0 ? l : n + lower_bound(uniq, num_uniq, nbrs[e]);
  }
}

/// out[i] = position of ids[i] in the sorted array `sorted` of n values (lower bound).
__global__ void rank_in_sorted_per_thread(const vid_t* ids, std::int64_t m, const vid_t* sorted,
                                          std::int64_t n, std::int64_t* out) {
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < m;
       i += std::int64_t{gridDim.x} * blockDim.x) {
    out[i] = lower_bound(sorted, n, ids[i]);
  }
}

/// degree[i] = in-degree of ids[i] (0 for an id outside [0, num_nodes), which make_block has
/// refused before it launches this: the guard only keeps the reads in bounds).
__global__ void degrees_per_vertex(const vid_t* ids, std::int64_t m, const eid_t* indptr,
                                   vid_t num_nodes, std::int64_t* degree) {
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < m;
       i += std::int64_t{gridDim.x} * blockDim.x) {
    vid_t const v = ids[i];
    degree[i] = id_in_range(v, num_nodes) ? indptr[v + 1] - indptr[v] : 0;
  }
}

// ---- owner split and variates
// ---------------------------------------------------------------------

__global__ void owners_per_id(const vid_t* ids, std::int64_t m, const std::uint16_t* owner_of,
                              vid_t num_nodes, int num_pes, std::uint16_t* owner, ull* counts,
                              ull* bad) {
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < m;
       i += std::int64_t{gridDim.x} * blockDim.x) {
    vid_t const v = ids[i];
    if (v < 0 || v >= num_nodes || owner_of[v] >= num_pes) {
      atomicMin(bad, static_cast<ull>(i));
      owner[i] = 0;
      continue;
    }
    owner[i] = owner_of[v];
    atomicAdd(counts + owner_of[v], 1ULL);
  }
}

__global__ void gather_ids_per_thread(const vid_t* ids, const std::int64_t* perm, std::int64_t m,
                                      vid_t* out) {
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < m;
       i += std::int64_t{gridDim.x} * blockDim.x) {
    out[i] = ids[perm[i]];
  }
}

__global__ void labor_variates_per_vertex(labor_variate_plan plan, const vid_t* vertices,
                                          std::int64_t m, float* out) {
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < m;
       i += std::int64_t{gridDim.x} * blockDim.x) {
    out[i] = labor_variate(plan, static_cast<std::uint64_t>(vertices[i]));
  }
}

// ---- edge exclusion (link prediction's target edges) --------------------------------------------

/// True when key (t << 32 | s) is in keys[0 .. n) (ascending).
__device__ bool excluded_key(const std::uint64_t* keys, std::int64_t n, std::uint64_t key) {
  std::int64_t lo = 0, hi = n;
  while (lo < hi) {
    std::int64_t const mid = lo + (hi - lo) / 2;
    if (keys[mid] < key) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo < n && keys[lo] == key;
}

/// Reports the first position i >= 1 with keys[i - 1] >= keys[i] in *check (check_word
/// exclude_keys_order, atomicMin).
__global__ void check_keys_per_thread(const std::uint64_t* keys, std::int64_t num_keys,
                                      ull* check) {
  for (std::int64_t i = 1 + blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < num_keys;
       i += std::int64_t{gridDim.x} * blockDim.x) {
    if (!keys_ordered(keys[i - 1], keys[i])) {
      atomicMin(check, check_word(exclude_keys_order, static_cast<std::uint64_t>(i)));
    }
  }
}

/// kept[q] = the sampled edges of row q (seed q / R, relation q % R) not in keys, keyed
/// exclusion_key(t, seed, relation, R) (one thread per row; R = 1 untyped). A row whose offsets
/// are not a range of the num_nbrs edges (reported as exclude_row_offsets q) or with an edge
/// whose key does not exist (exclude_edge_key q) reads no further and keeps nothing.
__global__ void exclude_count_per_row(const vid_t* seeds, std::int64_t rows, std::int32_t R,
                                      const eid_t* indptr, std::int64_t num_nbrs, const vid_t* nbrs,
                                      const std::uint64_t* keys, std::int64_t num_keys,
                                      std::int64_t* kept, ull* check) {
  for (std::int64_t q = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; q < rows;
       q += std::int64_t{gridDim.x} * blockDim.x) {
    eid_t const begin = indptr[q];
    eid_t const end = indptr[q + 1];
    if (!sample_row_in_bounds(begin, end, num_nbrs)) {
      atomicMin(check, check_word(exclude_row_offsets, static_cast<std::uint64_t>(q)));
      kept[q] = 0;
      continue;
    }
    vid_t const s = seeds[q / R];
    auto const r = static_cast<std::int32_t>(q % R);
    std::int64_t c = 0;
    for (eid_t e = begin; e < end; ++e) {
      if (exclusion_key_check(nbrs[e], s, r, R) != exclusion_key_fault::none) {
        atomicMin(check, check_word(exclude_edge_key, static_cast<std::uint64_t>(q)));
        c = 0;
        break;
      }
      c += excluded_key(keys, num_keys, exclusion_key(nbrs[e], s, r, R)) ? 0 : 1;
    }
    kept[q] = c;
  }
}

/// Writes row q's kept edges at out_indptr[q] with weights w / (sum of kept w), the sum in
/// edge order with correctly rounded float adds: the host reference's operations exactly.
/// Launched only after exclude_count_per_row's checks passed; a row whose offsets or destination
/// fail them is skipped all the same (no read out of bounds, no overflow, whatever the input).
__global__ void exclude_write_per_row(const vid_t* seeds, std::int64_t rows, std::int32_t R,
                                      const eid_t* indptr, std::int64_t num_nbrs, const vid_t* nbrs,
                                      const float* weights, const std::uint64_t* keys,
                                      std::int64_t num_keys, const std::int64_t* out_indptr,
                                      vid_t* out_nbrs, float* out_weights) {
  for (std::int64_t q = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; q < rows;
       q += std::int64_t{gridDim.x} * blockDim.x) {
    eid_t const begin = indptr[q];
    eid_t const end = indptr[q + 1];
    if (!sample_row_in_bounds(begin, end, num_nbrs)) continue;
    vid_t const s = seeds[q / R];
    auto const r = static_cast<std::int32_t>(q % R);
    if (exclusion_key_check(0, s, r, R) != exclusion_key_fault::none) continue;
    float sum = 0.0f;
    for (eid_t e = begin; e < end; ++e) {
      if (!excluded_key(keys, num_keys, exclusion_key(nbrs[e], s, r, R))) {
        sum = __fadd_rn(sum, weights[e]);
      }
    }
    std::int64_t o = out_indptr[q];
    for (eid_t e = begin; e < end; ++e) {
      if (!excluded_key(keys, num_keys, exclusion_key(nbrs[e], s, r, R))) {
        out_nbrs[o] = nbrs[e];
        out_weights[o] = __fdiv_rn(weights[e], sum);
        ++o;
      }
    }
  }
}

// ---- host helpers -------------------------------------------------------------------------------

/// Launches `kernel` over `items` threads (nothing for 0 items) through the checked launch of
/// runtime/core/cuda_launch.cuh; `name`, `file` and `line` are the call site's (ITEMS_LAUNCH).
template <class Kernel, class... Args>
void launch_items(const char* name, const char* file, int line, stream_t s, std::int64_t items,
                  Kernel kernel, Args... args) {
  if (items <= 0) return;
  detail::launch(name, file, line, kernel, grid_for(items), kBlock, 0, s, args...);
}
#define ITEMS_LAUNCH(s, items, kernel, ...) \
  launch_items(#kernel, __FILE__, __LINE__, s, items, kernel, __VA_ARGS__)

/// Reads one device value: a host round trip (synchronises s). Every call site says why it
/// needs the value on the host.
template <class T>
T read_one(const T* p, stream_t s) {
  T v{};
  COOPGNN_CUDA_CHECK(cudaMemcpyAsync(&v, p, sizeof(T), cudaMemcpyDeviceToHost, s));
  COOPGNN_CUDA_CHECK(cudaStreamSynchronize(s));
  return v;
}

/// "No bad position" in a status word 0 (all bits set, the identity of atomicMin).
constexpr ull kNone = ~0ULL;
static_assert(kNone == check_word_none);

/// A call's device status words, read back together in one host round trip (read_status):
/// word 0 is a "first bad position" slot for atomicMin (kNone while every input is valid; a
/// check_word of sample_checks.hpp where a call has several checks), words 1 .. words-1 hold
/// the counts or values the call needs on the host (output sizes, CUB item counts), written
/// there by kernels and CUB calls or copied in by stage_word. A validation result thus rides
/// along with a count the call must read anyway instead of costing its own synchronisation.
/// Initialised on the compute stream: word 0 kNone, the others 0.
device_buffer<ull> make_status(const cuda_context& ctx, std::size_t words) {
  auto st = ctx.allocate<ull>(words);
  detail::zero_async(st.data(), st.bytes(), ctx.compute());
  COOPGNN_CUDA_CHECK(cudaMemsetAsync(st.data(), 0xFF, sizeof(ull), ctx.compute()));
  return st;
}

/// Copies the count (or offset) at device address p into status word k, ordered on s (no
/// synchronisation).
void stage_word(device_buffer<ull>& st, std::size_t k, const std::int64_t* p, stream_t s) {
  static_assert(sizeof(std::int64_t) == sizeof(ull));
  COOPGNN_CUDA_CHECK(cudaMemcpyAsync(st.data() + k, p, sizeof(ull), cudaMemcpyDeviceToDevice, s));
}

/// The status words on the host: one device-to-host copy after everything enqueued on s
/// (synchronises s: one host round trip).
std::vector<ull> read_status(const device_buffer<ull>& st, stream_t s) {
  std::vector<ull> h(st.size());
  COOPGNN_CUDA_CHECK(cudaMemcpyAsync(h.data(), st.data(), st.bytes(), cudaMemcpyDeviceToHost, s));
  COOPGNN_CUDA_CHECK(cudaStreamSynchronize(s));
  return h;
}

/// In-place exclusive sum of data[0 .. n) (n >= 1) with temporary storage from the pool.
void exclusive_sum(const cuda_context& ctx, std::int64_t* data, std::int64_t n) {
  std::size_t bytes = 0;
  COOPGNN_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, bytes, data, data, n, ctx.compute()));
  auto temp = ctx.allocate<unsigned char>(bytes);
  COOPGNN_CUDA_CHECK(
      cub::DeviceScan::ExclusiveSum(temp.data(), bytes, data, data, n, ctx.compute()));
}

/// Stable radix sort of (keys, values) pairs; empty input is a no-op.
template <class K, class V>
void sort_pairs(const cuda_context& ctx, const K* keys_in, K* keys_out, const V* values_in,
                V* values_out, std::int64_t n, int end_bit = sizeof(K) * 8) {
  if (n == 0) return;
  std::size_t bytes = 0;
  COOPGNN_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, bytes, keys_in, keys_out, values_in,
                                                     values_out, n, 0, end_bit, ctx.compute()));
  auto temp = ctx.allocate<unsigned char>(bytes);
  COOPGNN_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(
      temp.data(), bytes, keys_in, keys_out, values_in, values_out, n, 0, end_bit, ctx.compute()));
}

}  // namespace

device_csc upload(const cuda_context& ctx, const csc_graph& g) {
  COOPGNN_NVTX_RANGE("sample/upload_graph");
  device_csc d;
  d.num_nodes = g.num_nodes;
  d.indptr = ctx.to_device(std::span<const eid_t>(g.indptr));
  d.indices = ctx.to_device(std::span<const vid_t>(g.indices));
  d.etype = ctx.to_device(std::span<const std::int32_t>(g.etype));
  d.num_relations = g.num_relations;
  return d;
}

device_sampled_neighbors sample_neighbors(const cuda_context& ctx, device_csc_view g,
                                          device_span<const vid_t> seeds,
                                          const sample_params& params) {
  COOPGNN_NVTX_RANGE("sample/neighbors");
  COOPGNN_CUDA_EXPECTS(params.dependency.batch_dependency >= 0,
                       "batch dependency (kappa) " +
                           std::to_string(params.dependency.batch_dependency) +
                           " is negative: expected 0 (never refresh) or >= 1");
  std::vector<int> const fanouts = fanouts_per_relation(params, g.num_relations, g.typed());
  int const R = g.num_relations;
  int kmax = 0;
  for (int const k : fanouts) kmax = k > kmax ? k : kmax;
  stream_t const s = ctx.compute();
  auto const n = static_cast<std::int64_t>(seeds.size());
  std::int64_t const rows = n * R;
  const std::int32_t* etype = g.etype.empty() ? nullptr : g.etype.data();
  device_sampled_neighbors out;
  out.indptr = ctx.allocate<eid_t>(static_cast<std::size_t>(rows) + 1);
  if (n == 0) {
    detail::zero_async(out.indptr.data(), sizeof(eid_t), s);
    return out;
  }
  auto const dfanouts = ctx.to_device(std::span<const int>(fanouts), s);

  // Segment lengths and starts per row (input validation), then NS or LABOR.
  auto cand_off = ctx.allocate<std::int64_t>(static_cast<std::size_t>(rows) + 1);
  auto row_begin = ctx.allocate<eid_t>(static_cast<std::size_t>(rows));
  // [0] the first invalid seed, [1] the scanned total (NS: sampled edges; LABOR: candidates).
  auto status = make_status(ctx, 2);
  detail::zero_async(cand_off.data() + rows, sizeof(std::int64_t), s);
  ITEMS_LAUNCH(s, rows, row_degrees_per_thread, seeds.data(), rows, R, g.indptr.data(), etype,
               g.num_nodes, cand_off.data(), row_begin.data(), status.data());
  // The seeds' check rides along with the first count read: an invalid seed's rows are empty,
  // so the kernels enqueued before the read stay in bounds.
  auto check_seeds = [&](ull first_bad) {
    if (first_bad == kNone) return;
    // Error path only: the offending id for the message.
    vid_t const v = read_one(seeds.data() + first_bad, s);
    COOPGNN_CUDA_EXPECTS(false, "seed " + std::to_string(v) + " (position " +
                                    std::to_string(first_bad) + ") is outside [0, " +
                                    std::to_string(g.num_nodes) +
                                    ") or has an in-degree that does not fit 32 bits");
  };

  if (params.kind == sampler_kind::ns) {
    // Counts min(k, d) are known: offsets by one scan, then one thread per row writes its slots.
    COOPGNN_NVTX_RANGE("sample/ns_floyd");
    ITEMS_LAUNCH(s, rows, ns_counts_per_thread, cand_off.data(), rows, R, dfanouts.data());
    exclusive_sum(ctx, cand_off.data(), rows + 1);
    COOPGNN_CUDA_CHECK(cudaMemcpyAsync(out.indptr.data(), cand_off.data(),
                                       (static_cast<std::size_t>(rows) + 1) * sizeof(eid_t),
                                       cudaMemcpyDeviceToDevice, s));
    stage_word(status, 1, cand_off.data() + rows, s);
    // Host round trip 1 of 1: the sampled edge count sizes the outputs (and the seeds' check).
    auto const words = read_status(status, s);
    check_seeds(words[0]);
    auto const total = static_cast<std::int64_t>(words[1]);
    out.nbrs = ctx.allocate<vid_t>(total);
    out.weights = ctx.allocate<float>(total);
    // Scratch follows the output, not the fanout: a row with d > k writes k slots, and its hash
    // set (k > kFloydLinearMax) takes ns_floyd_table_size(k) <= 4 k entries at 4 x its slots, so
    // a fanout far above every degree costs nothing (the host sampler's rule, sample.cpp). The
    // table size of kmax itself is never computed: 2 kmax may not fit 32 bits.
    bool const hashed = kmax > static_cast<int>(kFloydLinearMax);
    device_buffer<std::uint32_t> pos;    // kept positions of the rows with d > k
    device_buffer<std::uint32_t> table;  // Floyd hash sets, 4 entries per output slot (k > 32)
    if (kmax > 0 && total > 0) pos = ctx.allocate<std::uint32_t>(total);
    if (hashed && total > 0) table = ctx.allocate<std::uint32_t>(4 * total);
    rng::stream const st = rng::make_stream(params.run_seed, rng::purpose::ns, params.layer);
    ITEMS_LAUNCH(s, rows, ns_floyd_per_row, seeds.data(), rows, R, g.indptr.data(), etype,
                 g.indices.data(), dfanouts.data(), st, params.batch, out.indptr.data(), pos.data(),
                 hashed ? table.data() : nullptr, out.nbrs.data(), out.weights.data());
    return out;
  }

  // LABOR: candidate offsets (exclusive sum of the segment lengths), keep flags per candidate
  // (plus one trailing 0 so that the scan yields the total).
  exclusive_sum(ctx, cand_off.data(), rows + 1);
  stage_word(status, 1, cand_off.data() + rows, s);
  // Host round trip 1 of 2: the candidate count sizes the keep flags (and the seeds' check).
  auto const st = read_status(status, s);
  check_seeds(st[0]);
  auto const num_cand = static_cast<std::int64_t>(st[1]);
  auto keep = ctx.allocate<std::int64_t>(static_cast<std::size_t>(num_cand) + 1);
  detail::zero_async(keep.data() + num_cand, sizeof(std::int64_t), s);
  labor_variate_plan const plan =
      make_labor_variate_plan(params.run_seed, params.dependency, params.layer, params.batch);
  ITEMS_LAUNCH(s, num_cand, labor_flags_per_edge, cand_off.data(), rows, R, num_cand,
               row_begin.data(), g.indices.data(), dfanouts.data(), plan, keep.data());

  // Compact: pos = exclusive sum of keep; row q's edges start at pos[cand_off[q]].
  exclusive_sum(ctx, keep.data(), num_cand + 1);
  // Host round trip 2 of 2: the kept edge count sizes the outputs.
  std::int64_t const total = read_one(keep.data() + num_cand, s);
  ITEMS_LAUNCH(s, rows + 1, output_offsets_per_row, cand_off.data(), rows, keep.data(),
               out.indptr.data());
  out.nbrs = ctx.allocate<vid_t>(total);
  out.weights = ctx.allocate<float>(total);
  ITEMS_LAUNCH(s, num_cand, write_kept_per_edge, cand_off.data(), rows, num_cand, row_begin.data(),
               g.indices.data(), keep.data(), out.indptr.data(), out.nbrs.data(),
               out.weights.data());
  return out;
}

sampled_neighbors to_host(const cuda_context& ctx, const device_sampled_neighbors& s) {
  sampled_neighbors h;
  h.indptr = ctx.to_host(s.indptr);
  h.nbrs = ctx.to_host(s.nbrs);
  h.weights = ctx.to_host(s.weights);
  return h;
}

device_block make_block(const cuda_context& ctx, device_csc_view g, device_span<const vid_t> dst,
                        device_sampled_view sampled) {
  COOPGNN_NVTX_RANGE("sample/unique_compact");
  stream_t const s = ctx.compute();
  auto const n = static_cast<std::int64_t>(dst.size());
  std::int64_t const R = g.num_relations;
  // The host's checks (make_block_host, sample.cpp), in its order: sizes here, the sample's
  // last offset and every id on the device (status words 0 and 2, read with the count below).
  COOPGNN_CUDA_EXPECTS(R >= 1, "make_block: the graph has num_relations = " + std::to_string(R));
  COOPGNN_CUDA_EXPECTS(static_cast<std::int64_t>(sampled.indptr.size()) == n * R + 1,
                       "make_block: " + std::to_string(n) + " destinations x " + std::to_string(R) +
                           " relations but the sample has " +
                           std::to_string(sampled.indptr.size()) + " offsets (" +
                           std::to_string(n * R + 1) + " expected)");
  auto const num_edges = static_cast<std::int64_t>(sampled.nbrs.size());

  // Destinations sorted with their positions; a repeated destination is an error.
  auto positions = ctx.allocate<std::int64_t>(n);
  auto dst_sorted = ctx.allocate<vid_t>(n);
  auto dst_pos = ctx.allocate<std::int64_t>(n);
  ITEMS_LAUNCH(s, n, iota_per_thread, positions.data(), n);
  sort_pairs(ctx, dst.data(), dst_sorted.data(), positions.data(), dst_pos.data(), n);
  // [0] the first failed check (check_word, block_check: a destination or source outside
  // [0, |V|), a repeated destination), [1] sources that are not destinations
  // (DeviceSelect::Flagged's count), [2] the sample's last offset.
  auto status = make_status(ctx, 3);
  ITEMS_LAUNCH(s, n, check_ids_per_thread, dst.data(), n, g.num_nodes,
               static_cast<std::uint32_t>(block_destination_range), status.data());
  ITEMS_LAUNCH(s, n, find_duplicate_per_thread, dst_sorted.data(), n, status.data());
  stage_word(status, 2, sampled.indptr.data() + n * R, s);

  // Sources that are not destinations: select, sort, unique.
  auto local = ctx.allocate<std::int64_t>(num_edges);
  auto other = ctx.allocate<unsigned char>(num_edges);
  ITEMS_LAUNCH(s, num_edges, locate_in_dst_per_edge, sampled.nbrs.data(), num_edges,
               dst_sorted.data(), dst_pos.data(), n, g.num_nodes, local.data(), other.data(),
               status.data());
  auto others = ctx.allocate<vid_t>(num_edges);
  auto count = ctx.allocate<std::int64_t>(1);
  if (num_edges > 0) {
    std::size_t bytes = 0;
    COOPGNN_CUDA_CHECK(cub::DeviceSelect::Flagged(nullptr, bytes, sampled.nbrs.data(), other.data(),
                                                  others.data(), status.data() + 1, num_edges, s));
    auto temp = ctx.allocate<unsigned char>(bytes);
    COOPGNN_CUDA_CHECK(cub::DeviceSelect::Flagged(temp.data(), bytes, sampled.nbrs.data(),
                                                  other.data(), others.data(), status.data() + 1,
                                                  num_edges, s));
  }
  // Host round trip 1 of 2: the count of other sources is the sort's and unique's item count
  // (CUB takes it on the host); the input checks ride along (nothing enqueued so far reads the
  // graph or through the offsets, and a repeated destination makes locate's answer ambiguous,
  // never out of bounds, so a bad input is refused here before anything depends on it).
  auto const st = read_status(status, s);
  auto const last_offset = static_cast<std::int64_t>(st[2]);
  COOPGNN_CUDA_EXPECTS(sampled.weights.size() == sampled.nbrs.size() && last_offset == num_edges,
                       "make_block: the sample has " + std::to_string(num_edges) + " neighbours, " +
                           std::to_string(sampled.weights.size()) + " weights and " +
                           std::to_string(last_offset) + " by its offsets");
  if (st[0] != kNone) {
    // Error path only: the offending id for the message (the host's text).
    std::uint64_t const at = position_of(st[0]);
    std::string const bound = ") is outside [0, " + std::to_string(g.num_nodes) + ")";
    switch (check_of(st[0])) {
      case block_destination_range:
        COOPGNN_CUDA_EXPECTS(false, "make_block: destination " +
                                        std::to_string(read_one(dst.data() + at, s)) +
                                        " (position " + std::to_string(at) + bound);
        break;
      case block_source_range:
        COOPGNN_CUDA_EXPECTS(false, "make_block: sampled source " +
                                        std::to_string(read_one(sampled.nbrs.data() + at, s)) +
                                        " (edge " + std::to_string(at) + bound);
        break;
      default:
        COOPGNN_CUDA_EXPECTS(false, "make_block: destination " +
                                        std::to_string(read_one(dst_sorted.data() + at, s)) +
                                        " appears twice");
    }
  }
  auto const num_others = static_cast<std::int64_t>(st[1]);
  auto others_sorted = ctx.allocate<vid_t>(num_others);
  auto uniq = ctx.allocate<vid_t>(num_others);
  std::int64_t num_uniq = 0;
  if (num_others > 0) {
    std::size_t bytes = 0;
    COOPGNN_CUDA_CHECK(cub::DeviceRadixSort::SortKeys(nullptr, bytes, others.data(),
                                                      others_sorted.data(), num_others, 0, 64, s));
    auto temp = ctx.allocate<unsigned char>(bytes);
    COOPGNN_CUDA_CHECK(cub::DeviceRadixSort::SortKeys(temp.data(), bytes, others.data(),
                                                      others_sorted.data(), num_others, 0, 64, s));
    std::size_t ubytes = 0;
    COOPGNN_CUDA_CHECK(cub::DeviceSelect::Unique(nullptr, ubytes, others_sorted.data(), uniq.data(),
                                                 count.data(), num_others, s));
    auto utemp = ctx.allocate<unsigned char>(ubytes);
    COOPGNN_CUDA_CHECK(cub::DeviceSelect::Unique(utemp.data(), ubytes, others_sorted.data(),
                                                 uniq.data(), count.data(), num_others, s));
    // Host round trip 2 of 2: the unique count sizes the block's source ids.
    num_uniq = read_one(count.data(), s);
  }

  device_block b;
  b.num_dst = n;
  b.num_relations = static_cast<std::int32_t>(R);
  b.src_ids = ctx.allocate<vid_t>(n + num_uniq);
  detail::copy_async(b.src_ids.data(), dst.data(), dst.bytes(), s);
  detail::copy_async(b.src_ids.data() + n, uniq.data(), num_uniq * sizeof(vid_t), s);
  b.indptr = ctx.allocate<eid_t>(sampled.indptr.size());
  detail::copy_async(b.indptr.data(), sampled.indptr.data(), sampled.indptr.bytes(), s);
  b.weights = ctx.allocate<float>(num_edges);
  detail::copy_async(b.weights.data(), sampled.weights.data(), sampled.weights.bytes(), s);
  b.indices = ctx.allocate<std::int64_t>(num_edges);
  ITEMS_LAUNCH(s, num_edges, compact_indices_per_edge, sampled.nbrs.data(), local.data(), num_edges,
               uniq.data(), num_uniq, n, b.indices.data());
  b.src_degree = ctx.allocate<std::int64_t>(n + num_uniq);
  ITEMS_LAUNCH(s, n + num_uniq, degrees_per_vertex, b.src_ids.data(), n + num_uniq, g.indptr.data(),
               g.num_nodes, b.src_degree.data());
  return b;
}

block to_host(const cuda_context& ctx, const device_block& b) {
  block h;
  h.num_dst = b.num_dst;
  h.num_relations = b.num_relations;
  h.src_ids = ctx.to_host(b.src_ids);
  h.indptr = ctx.to_host(b.indptr);
  h.indices = ctx.to_host(b.indices);
  h.weights = ctx.to_host(b.weights);
  h.src_degree = ctx.to_host(b.src_degree);
  return h;
}

device_buffer<std::uint16_t> upload_owners(const cuda_context& ctx, const ownership& owners) {
  return ctx.to_device(owners.map());  // pageable: staged by the driver before this returns
}

device_owner_split split_by_owner(const cuda_context& ctx,
                                  device_span<const std::uint16_t> owner_of, int num_pes,
                                  device_span<const vid_t> ids) {
  COOPGNN_NVTX_RANGE("sample/split_by_owner");
  COOPGNN_CUDA_EXPECTS(
      num_pes >= 1 && num_pes <= 65535,
      "split_by_owner: number of PEs " + std::to_string(num_pes) + " is outside [1, 65535]");
  stream_t const s = ctx.compute();
  auto const m = static_cast<std::int64_t>(ids.size());
  // [0] the first invalid id, [1 + q] the ids PE q owns.
  auto status = make_status(ctx, 1 + static_cast<std::size_t>(num_pes));
  auto owner = ctx.allocate<std::uint16_t>(m);
  ITEMS_LAUNCH(s, m, owners_per_id, ids.data(), m, owner_of.data(),
               static_cast<vid_t>(owner_of.size()), num_pes, owner.data(), status.data() + 1,
               status.data());
  auto positions = ctx.allocate<std::int64_t>(m);
  ITEMS_LAUNCH(s, m, iota_per_thread, positions.data(), m);
  auto owner_sorted = ctx.allocate<std::uint16_t>(m);
  device_owner_split out;
  out.perm = ctx.allocate<std::int64_t>(m);
  sort_pairs(ctx, owner.data(), owner_sorted.data(), positions.data(), out.perm.data(), m);
  out.sorted_ids = ctx.allocate<vid_t>(m);
  ITEMS_LAUNCH(s, m, gather_ids_per_thread, ids.data(), out.perm.data(), m, out.sorted_ids.data());
  // Host round trip 1 of 1: the per-owner counts are the caller's (host) send counts; the ids'
  // check rides along (an invalid id gets owner 0, so nothing before the read is out of bounds).
  auto const st = read_status(status, s);
  if (auto const first_bad = st[0]; first_bad != kNone) {
    // Error path only: the offending id for the message.
    COOPGNN_CUDA_EXPECTS(false, "split_by_owner: id " +
                                    std::to_string(read_one(ids.data() + first_bad, s)) +
                                    " (position " + std::to_string(first_bad) +
                                    ") is outside [0, " + std::to_string(owner_of.size()) +
                                    ") or its owner is not below " + std::to_string(num_pes));
  }
  out.counts.assign(st.begin() + 1, st.end());
  return out;
}

device_unique unique_with_inverse(const cuda_context& ctx, device_span<const vid_t> ids) {
  COOPGNN_NVTX_RANGE("sample/unique_inverse");
  stream_t const s = ctx.compute();
  auto const m = static_cast<std::int64_t>(ids.size());
  device_unique out;
  out.inverse = ctx.allocate<std::int64_t>(m);
  if (m == 0) {
    out.unique = ctx.allocate<vid_t>(0);
    return out;
  }
  auto sorted = ctx.allocate<vid_t>(m);
  {
    std::size_t bytes = 0;
    COOPGNN_CUDA_CHECK(
        cub::DeviceRadixSort::SortKeys(nullptr, bytes, ids.data(), sorted.data(), m, 0, 64, s));
    auto temp = ctx.allocate<unsigned char>(bytes);
    COOPGNN_CUDA_CHECK(
        cub::DeviceRadixSort::SortKeys(temp.data(), bytes, ids.data(), sorted.data(), m, 0, 64, s));
  }
  auto uniq = ctx.allocate<vid_t>(m);
  auto count = ctx.allocate<std::int64_t>(1);
  {
    std::size_t bytes = 0;
    COOPGNN_CUDA_CHECK(
        cub::DeviceSelect::Unique(nullptr, bytes, sorted.data(), uniq.data(), count.data(), m, s));
    auto temp = ctx.allocate<unsigned char>(bytes);
    COOPGNN_CUDA_CHECK(cub::DeviceSelect::Unique(temp.data(), bytes, sorted.data(), uniq.data(),
                                                 count.data(), m, s));
  }
  // Host round trip 1 of 1: the unique count sizes the output.
  auto const num_uniq = read_one(count.data(), s);
  out.unique = ctx.allocate<vid_t>(num_uniq);
  detail::copy_async(out.unique.data(), uniq.data(), num_uniq * sizeof(vid_t), s);
  ITEMS_LAUNCH(s, m, rank_in_sorted_per_thread, ids.data(), m, out.unique.data(), num_uniq,
               out.inverse.data());
  return out;
}

device_buffer<float> labor_variates(const cuda_context& ctx, const labor_variate_plan& plan,
                                    device_span<const vid_t> vertices) {
  auto const m = static_cast<std::int64_t>(vertices.size());
  auto out = ctx.allocate<float>(m);
  ITEMS_LAUNCH(ctx.compute(), m, labor_variates_per_vertex, plan, vertices.data(), m, out.data());
  return out;
}

device_sampled_neighbors exclude_edges(const cuda_context& ctx, device_span<const vid_t> seeds,
                                       device_sampled_view sampled,
                                       device_span<const std::uint64_t> keys, std::int32_t R) {
  COOPGNN_NVTX_RANGE("sample/exclude_edges");
  constexpr const char* fn = "exclude_edges";
  stream_t const s = ctx.compute();
  auto const n = static_cast<std::int64_t>(seeds.size());
  // The host's checks (exclude_edges, sample.cpp), in its order: sizes here, the keys' order,
  // the rows' offsets and every edge's key on the device (status word 0).
  COOPGNN_CUDA_EXPECTS(R >= 1 && static_cast<std::int64_t>(sampled.indptr.size()) == n * R + 1,
                       std::string(fn) + ": the sample has " +
                           std::to_string(sampled.indptr.size()) + " offsets for " +
                           std::to_string(n) +
                           " seeds (n R + 1 expected, R = " + std::to_string(R) + ")");
  COOPGNN_CUDA_EXPECTS(sampled.nbrs.size() == sampled.weights.size(),
                       std::string(fn) + ": the sample has " + std::to_string(sampled.nbrs.size()) +
                           " neighbours and " + std::to_string(sampled.weights.size()) +
                           " weights");
  auto const rows = n * R;
  auto const num_nbrs = static_cast<std::int64_t>(sampled.nbrs.size());
  auto const num_keys = static_cast<std::int64_t>(keys.size());
  device_sampled_neighbors out;
  out.indptr = ctx.allocate<eid_t>(static_cast<std::size_t>(rows) + 1);
  COOPGNN_CUDA_CHECK(cudaMemsetAsync(out.indptr.data(), 0, (rows + 1) * sizeof(eid_t), s));
  // [0] the first failed check (check_word, exclude_check), [1] the kept edge count.
  auto status = make_status(ctx, 2);
  ITEMS_LAUNCH(s, num_keys, check_keys_per_thread, keys.data(), num_keys, status.data());
  ITEMS_LAUNCH(s, rows, exclude_count_per_row, seeds.data(), rows, R, sampled.indptr.data(),
               num_nbrs, sampled.nbrs.data(), keys.data(), num_keys, out.indptr.data(),
               status.data());
  exclusive_sum(ctx, out.indptr.data(), rows + 1);
  stage_word(status, 1, out.indptr.data() + rows, s);
  // Host round trip 1 of 1: the kept edge count sizes the outputs; the checks ride along (a
  // row that fails one keeps nothing, so the sum stays in bounds; the writes come after).
  auto const st = read_status(status, s);
  if (st[0] != kNone) {
    std::uint64_t const at = position_of(st[0]);
    switch (check_of(st[0])) {
      case exclude_keys_order:
        COOPGNN_CUDA_EXPECTS(false, std::string(fn) +
                                        ": keys are not ascending and distinct at position " +
                                        std::to_string(at));
        break;
      case exclude_row_offsets: {
        // Error path only: the row's offsets for the message (the host's text).
        eid_t const begin = read_one(sampled.indptr.data() + at, s);
        eid_t const end = read_one(sampled.indptr.data() + at + 1, s);
        COOPGNN_CUDA_EXPECTS(false, std::string(fn) + ": row " + std::to_string(at) +
                                        " of the sample has offsets [" + std::to_string(begin) +
                                        ", " + std::to_string(end) + "), not a range within its " +
                                        std::to_string(num_nbrs) + " neighbours");
        break;
      }
      default: {
        // Error path only: row `at`'s seed and neighbours, to name its first edge without a key
        // as edge_exclusion_key does.
        eid_t const begin = read_one(sampled.indptr.data() + at, s);
        eid_t const end = read_one(sampled.indptr.data() + at + 1, s);
        vid_t const seed = read_one(seeds.data() + at / static_cast<std::uint64_t>(R), s);
        auto const r = static_cast<std::int32_t>(at % static_cast<std::uint64_t>(R));
        std::vector<vid_t> row(static_cast<std::size_t>(end - begin));
        if (!row.empty()) {
          COOPGNN_CUDA_CHECK(cudaMemcpyAsync(row.data(), sampled.nbrs.data() + begin,
                                             row.size() * sizeof(vid_t), cudaMemcpyDeviceToHost,
                                             s));
          COOPGNN_CUDA_CHECK(cudaStreamSynchronize(s));
        }
        for (vid_t const t : row) {
          exclusion_key_fault const fault = exclusion_key_check(t, seed, r, R);
          COOPGNN_CUDA_EXPECTS(fault == exclusion_key_fault::none,
                               exclusion_key_message(fault, t, seed, r, R));
        }
        COOPGNN_CUDA_EXPECTS(false, std::string(fn) + ": row " + std::to_string(at) +
                                        " has an edge without an exclusion key");
      }
    }
  }
  auto const total = static_cast<std::int64_t>(st[1]);
  out.nbrs = ctx.allocate<vid_t>(static_cast<std::size_t>(total));
  out.weights = ctx.allocate<float>(static_cast<std::size_t>(total));
  ITEMS_LAUNCH(s, rows, exclude_write_per_row, seeds.data(), rows, R, sampled.indptr.data(),
               num_nbrs, sampled.nbrs.data(), sampled.weights.data(), keys.data(), num_keys,
               out.indptr.data(), out.nbrs.data(), out.weights.data());
  return out;
}

}  // namespace coopgnn::cuda
