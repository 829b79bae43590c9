#include "kernels/sample/sample.hpp"

#include <algorithm>
#include <string>

#include "kernels/dispatch.hpp"
#include "kernels/sample/ns_floyd.hpp"
#include "kernels/sample/relation_segment.hpp"
#include "kernels/sample/sample_checks.hpp"
#include "kernels/sample/sampling.hpp"
#include "runtime/core/error.hpp"
#include "runtime/core/parallel.hpp"
#include "runtime/core/rng.hpp"

#ifdef COOPGNN_WITH_CUDA
#include "kernels/sample/sample_cuda.hpp"
#endif

namespace coopgnn {

sampler_kind parse_sampler_kind(const std::string& name) {
  if (name == "ns") return sampler_kind::ns;
  if (name == "labor") return sampler_kind::labor;
  COOPGNN_FAIL("unknown sampler '{}': expected 'ns' or 'labor'", name);
}

std::string to_string(sampler_kind k) { return k == sampler_kind::ns ? "ns" : "labor"; }

std::vector<int> fanouts_per_relation(const sample_params& params, std::int32_t num_relations,
                                      bool typed) {
  COOPGNN_EXPECTS(num_relations >= 1, "sampling: the graph has num_relations = {} (>= 1 expected)",
                  num_relations);
  auto const R = static_cast<std::size_t>(num_relations);
  COOPGNN_EXPECTS(params.relation_fanouts.empty() || params.relation_fanouts.size() == R,
                  "relation_fanouts has {} entries for a graph of {} relations",
                  params.relation_fanouts.size(), R);
  std::vector<int> k = params.relation_fanouts.empty() ? std::vector<int>(R, params.fanout)
                                                       : params.relation_fanouts;
  for (std::size_t r = 0; r < R; ++r) {
    if (typed) {
      COOPGNN_EXPECTS(k[r] >= -1,
                      "fanout {} of relation {} is invalid: expected a count >= 0 or -1 (all "
                      "neighbours)",
                      k[r], r);
    } else {
      COOPGNN_EXPECTS(k[r] == -1 || k[r] >= 1,
                      "fanout {} is invalid: expected a positive count or -1 (all neighbours)",
                      k[r]);
    }
  }
  return k;
}

namespace {

/// The variates of LABOR-0 for one range of seeds: a pure function of the vertex, so memoising
/// them changes nothing but the time. When |V| <= max(2^22, 8 x the range's candidate edges) the
/// memo is a thread-local float array over the vertices (-1 = not drawn; the entries drawn are
/// reset when the memo is destroyed, so a call costs O(its candidates), not O(|V|)): one load
/// instead of a Philox call (plain LABOR) or two normal quantiles and a CDF (dependent
/// minibatching, kappa > 1). Otherwise kappa > 1 memoises in an open-addressing table (linear
/// probing, grown at load 1/2) and plain LABOR draws directly.
class variate_memo {
 public:
  variate_memo(const sample_params& p, vid_t num_nodes, std::int64_t candidates)
      : plan_(make_labor_variate_plan(p.run_seed, p.dependency, p.layer, p.batch)),
        dense_(num_nodes <= std::max<vid_t>(vid_t{1} << 22, 8 * candidates)),
        memoise_(p.dependency.batch_dependency > 1) {
    if (dense_) {
      auto& slots = dense_slots();
      if (slots.size() < static_cast<std::size_t>(num_nodes)) {
        slots.resize(static_cast<std::size_t>(num_nodes), -1.0f);
      }
      slots_ = slots.data();
    }
  }
  variate_memo(const variate_memo&) = delete;
  variate_memo& operator=(const variate_memo&) = delete;
  ~variate_memo() {
    for (vid_t t : touched_) slots_[t] = -1.0f;
  }
  float operator()(vid_t t) {
    if (dense_) {
      float& v = slots_[t];
      if (v < 0.0f) {
        v = draw(t);
        touched_.push_back(t);
      }
      return v;
    }
    if (!memoise_) return draw(t);
    if (2 * (used_ + 1) > keys_.size()) grow();
    std::size_t h = slot_of(t);
    while (keys_[h] != t) {
      if (keys_[h] < 0) {
        keys_[h] = t;
        values_[h] = draw(t);
        ++used_;
        break;
      }
      h = (h + 1) & (keys_.size() - 1);
    }
    return values_[h];
  }

 private:
  static std::vector<float>& dense_slots() {
    thread_local std::vector<float> slots;
    return slots;
  }
  [[nodiscard]] std::size_t slot_of(vid_t t) const {
    return static_cast<std::size_t>(rng::mix64(static_cast<std::uint64_t>(t))) & (keys_.size() - 1);
  }
  void grow() {
    std::vector<vid_t> old_keys(std::max<std::size_t>(1024, 2 * keys_.size()), -1);
    std::vector<float> old_values(old_keys.size());
    old_keys.swap(keys_);
    old_values.swap(values_);
    for (std::size_t i = 0; i < old_keys.size(); ++i) {
      if (old_keys[i] < 0) continue;
      std::size_t h = slot_of(old_keys[i]);
      while (keys_[h] >= 0) h = (h + 1) & (keys_.size() - 1);
      keys_[h] = old_keys[i];
      values_[h] = old_values[i];
    }
  }
  float draw(vid_t t) const { return labor_variate(plan_, static_cast<std::uint64_t>(t)); }
  labor_variate_plan plan_;
  bool dense_;
  bool memoise_;
  float* slots_ = nullptr;
  std::vector<vid_t> touched_;
  std::vector<vid_t> keys_;  // -1 = empty; size 0 or a power of two
  std::vector<float> values_;
  std::size_t used_ = 0;
};

/// The host sampler (the reference) on a host-readable CSC; `host_threads` split the seeds.
/// Rows: seed i's relation r is row i * R + r (R = g.num_relations, 1 when untyped); row (i, r)
/// samples the relation segment [b, e) of the seed's column (relation_segment) with fanout k_r
/// (fanouts_per_relation). NS: counts min(k_r, d_r) are known up front, so indptr is a prefix sum
/// and every row writes its slots directly (Floyd's algorithm, ns_floyd.hpp, for d_r > k_r, draws
/// keyed by the position in the whole column). LABOR: per-chunk buffers, then one concatenation
/// in row order. Nothing is allocated per seed.
sampled_neighbors sample_host(int host_threads, const csc_view& g, std::span<const vid_t> seeds,
                              const sample_params& params) {
  COOPGNN_EXPECTS(params.dependency.batch_dependency >= 0,
                  "batch dependency (kappa) {} is negative: expected 0 (never refresh) or >= 1",
                  params.dependency.batch_dependency);
  std::vector<int> const fanouts = fanouts_per_relation(params, g.num_relations, g.typed());
  std::int64_t const R = g.num_relations;
  auto const n = static_cast<std::int64_t>(seeds.size());
  // At least 256 seeds a chunk, one chunk a thread; the result does not depend on the split.
  std::int64_t const chunks =
      std::min<std::int64_t>(std::max(host_threads, 1), std::max<std::int64_t>(n / 256, 1));
  auto chunk_begin = [&](std::int64_t c) { return n * c / chunks; };
  auto for_chunks = [&](auto&& f) {
    parallel_rows(chunks, static_cast<int>(chunks), [&](std::int64_t c0, std::int64_t c1) {
      for (std::int64_t c = c0; c < c1; ++c) f(c, chunk_begin(c), chunk_begin(c + 1));
    });
  };
  bool const ns = params.kind == sampler_kind::ns;
  auto segment = [&](vid_t s, std::int64_t r) {
    return relation_segment(g.indptr, g.etype, s, static_cast<std::int32_t>(r));
  };

  // Pass 1 (parallel): validation and, for NS, the kept count of every row in indptr[q + 1].
  sampled_neighbors out;
  out.indptr.assign(static_cast<std::size_t>(n * R) + 1, 0);
  std::vector<std::int64_t> first_bad(static_cast<std::size_t>(chunks), -1);
  for_chunks([&](std::int64_t c, std::int64_t begin, std::int64_t end) {
    for (std::int64_t i = begin; i < end; ++i) {
      vid_t const s = seeds[i];
      if (s < 0 || s >= g.num_nodes || g.in_degree(s) >= (eid_t{1} << 32)) {
        first_bad[c] = i;
        return;
      }
      if (!ns) continue;
      for (std::int64_t r = 0; r < R; ++r) {
        eid_t const d = segment(s, r).size();
        auto const k = static_cast<eid_t>(fanouts[static_cast<std::size_t>(r)]);
        out.indptr[i * R + r + 1] = k < 0 ? d : std::min<eid_t>(d, k);
      }
    }
  });
  for (std::int64_t const i : first_bad) {
    if (i < 0) continue;
    vid_t const s = seeds[i];
    COOPGNN_EXPECTS(s >= 0 && s < g.num_nodes, "seed {} (position {}) is outside [0, {})", s, i,
                    g.num_nodes);
    COOPGNN_FAIL("seed {} has in-degree {}: positions must fit 32 bits", s, g.in_degree(s));
  }

  if (ns) {
    for (std::int64_t q = 0; q < n * R; ++q) out.indptr[q + 1] += out.indptr[q];
    out.nbrs.resize(static_cast<std::size_t>(out.indptr[n * R]));
    out.weights.resize(out.nbrs.size());
    rng::stream const st = rng::make_stream(params.run_seed, rng::purpose::ns, params.layer);
    for_chunks([&](std::int64_t, std::int64_t begin, std::int64_t end) {
      // Scratch grows to the largest k actually drawn (k < d <= the largest in-degree), so a
      // fanout far above every degree costs nothing.
      std::vector<std::uint32_t> pos;
      std::vector<std::uint32_t> table;
      for (std::int64_t i = begin; i < end; ++i) {
        vid_t const s = seeds[i];
        for (std::int64_t r = 0; r < R; ++r) {
          edge_range const seg = segment(s, r);
          eid_t const d = seg.size();
          auto const k = static_cast<eid_t>(fanouts[static_cast<std::size_t>(r)]);
          vid_t const* nb = g.indices + seg.begin;
          eid_t const o = out.indptr[i * R + r];
          if (k == 0 || d == 0) continue;
          if (k < 0 || d <= k) {
            float const w = 1.0f / static_cast<float>(d);
            std::copy(nb, nb + d, out.nbrs.begin() + o);
            std::fill(out.weights.begin() + o, out.weights.begin() + o + d, w);
            continue;
          }
          auto const kk = static_cast<std::uint32_t>(k);
          if (pos.size() < kk) {
            pos.resize(kk);
            table.resize(ns_floyd_table_size(kk));
          }
          ns_floyd_select(st, static_cast<std::uint64_t>(s), static_cast<std::uint32_t>(d), kk,
                          params.batch, pos.data(), table.data(),
                          static_cast<std::uint32_t>(seg.begin - g.indptr[s]));
          float const w_sampled = 1.0f / static_cast<float>(kk);
          for (std::uint32_t q = 0; q < kk; ++q) {
            out.nbrs[o + q] = nb[pos[q]];
            out.weights[o + q] = w_sampled;
          }
        }
      }
    });
    return out;
  }

  // LABOR: kept neighbours per chunk (in row order), counts in indptr[q + 1], then concatenate.
  std::vector<std::vector<vid_t>> kept(static_cast<std::size_t>(chunks));
  for_chunks([&](std::int64_t c, std::int64_t begin, std::int64_t end) {
    std::int64_t candidates = 0;
    for (std::int64_t i = begin; i < end; ++i) candidates += g.in_degree(seeds[i]);
    variate_memo variate(params, g.num_nodes, candidates);
    auto& buf = kept[c];
    for (std::int64_t i = begin; i < end; ++i) {
      vid_t const s = seeds[i];
      for (std::int64_t r = 0; r < R; ++r) {
        edge_range const seg = segment(s, r);
        eid_t const d = seg.size();
        auto const k = static_cast<eid_t>(fanouts[static_cast<std::size_t>(r)]);
        vid_t const* nb = g.indices + seg.begin;
        if (k == 0) continue;
        if (k < 0 || d <= k) {
          buf.insert(buf.end(), nb, nb + d);
          out.indptr[i * R + r + 1] = d;
          continue;
        }
        float const threshold = static_cast<float>(k) / static_cast<float>(d);
        std::size_t const before = buf.size();
        for (eid_t j = 0; j < d; ++j) {
          if (variate(nb[j]) <= threshold) buf.push_back(nb[j]);
        }
        out.indptr[i * R + r + 1] = static_cast<eid_t>(buf.size() - before);
      }
    }
  });
  for (std::int64_t q = 0; q < n * R; ++q) out.indptr[q + 1] += out.indptr[q];
  out.nbrs.resize(static_cast<std::size_t>(out.indptr[n * R]));
  out.weights.resize(out.nbrs.size());
  for_chunks([&](std::int64_t c, std::int64_t begin, std::int64_t end) {
    std::copy(kept[c].begin(), kept[c].end(), out.nbrs.begin() + out.indptr[begin * R]);
    for (std::int64_t q = begin * R; q < end * R; ++q) {
      eid_t const cnt = out.indptr[q + 1] - out.indptr[q];
      float const w = cnt == 0 ? 0.0f : 1.0f / static_cast<float>(cnt);
      std::fill(out.weights.begin() + out.indptr[q], out.weights.begin() + out.indptr[q + 1], w);
    }
  });
  return out;
}

/// Vertex id -> local index for unique-and-compact: a thread-local array over the vertices
/// (entries reset to -1 when the map is destroyed, so each call costs O(its sources), not
/// O(|V|)) when |V| <= max(2^22, 8 x the ids to map), else an open-addressing table sized
/// for the ids to map. -1 means absent.
class local_index_map {
 public:
  local_index_map(vid_t num_nodes, std::size_t max_ids)
      : dense_(num_nodes <= std::max<vid_t>(vid_t{1} << 22, 8 * static_cast<vid_t>(max_ids))) {
    if (dense_) {
      auto& slots = dense_slots();
      if (slots.size() < static_cast<std::size_t>(num_nodes)) {
        slots.resize(static_cast<std::size_t>(num_nodes), -1);
      }
      slots_ = slots.data();
    } else {
      std::size_t cap = 1024;
      while (cap < 2 * max_ids) cap <<= 1;
      keys_.assign(cap, -1);
      values_.assign(cap, -1);
    }
  }
  local_index_map(const local_index_map&) = delete;
  local_index_map& operator=(const local_index_map&) = delete;
  ~local_index_map() {
    if (dense_) {
      for (vid_t v : touched_) slots_[v] = -1;
    }
  }
  [[nodiscard]] bool dense() const { return dense_; }
  /// The entry of v, inserted as -1 if new (`inserted` says which).
  std::int64_t& entry(vid_t v, bool& inserted) {
    if (dense_) {
      inserted = slots_[v] == -1;
      if (inserted) touched_.push_back(v);
      return slots_[v];
    }
    std::size_t h =
        static_cast<std::size_t>(rng::mix64(static_cast<std::uint64_t>(v))) & (keys_.size() - 1);
    while (keys_[h] != v) {
      if (keys_[h] < 0) {
        keys_[h] = v;
        inserted = true;
        return values_[h];
      }
      h = (h + 1) & (keys_.size() - 1);
    }
    inserted = false;
    return values_[h];
  }
  /// The value of a present v.
  [[nodiscard]] std::int64_t at(vid_t v) const {
    if (dense_) return slots_[v];
    std::size_t h =
        static_cast<std::size_t>(rng::mix64(static_cast<std::uint64_t>(v))) & (keys_.size() - 1);
    while (keys_[h] != v) h = (h + 1) & (keys_.size() - 1);
    return values_[h];
  }
  /// Dense only: the slot array (-1 = absent) over [0, num_nodes).
  [[nodiscard]] const std::int64_t* slots() const { return slots_; }

 private:
  static std::vector<std::int64_t>& dense_slots() {
    thread_local std::vector<std::int64_t> slots;
    return slots;
  }
  bool dense_;
  std::int64_t* slots_ = nullptr;
  std::vector<vid_t> touched_;
  std::vector<vid_t> keys_;
  std::vector<std::int64_t> values_;
};

/// Host unique-and-compact on a host-readable CSC and sample arrays: one map from vertex id to
/// local index; destinations inserted first (a repeat is an error), then every sampled source
/// not yet present is marked; the marked sources are ordered by id (a scan of the dense array
/// when they are many against |V|, else a sort) and numbered after the destinations; a final
/// pass maps every edge. O(n + E) expected plus the ordering.
block make_block_host(const csc_view& g, std::span<const vid_t> dst,
                      std::span<const eid_t> s_indptr, std::span<const vid_t> s_nbrs,
                      std::span<const float> s_weights) {
  auto const n = static_cast<std::int64_t>(dst.size());
  std::int64_t const R = g.num_relations;
  COOPGNN_EXPECTS(R >= 1, "make_block: the graph has num_relations = {}", R);
  COOPGNN_EXPECTS(static_cast<std::int64_t>(s_indptr.size()) == n * R + 1,
                  "make_block: {} destinations x {} relations but the sample has {} offsets "
                  "({} expected)",
                  n, R, s_indptr.size(), n * R + 1);
  COOPGNN_EXPECTS(
      s_nbrs.size() == s_weights.size() && static_cast<eid_t>(s_nbrs.size()) == s_indptr.back(),
      "make_block: the sample has {} neighbours, {} weights and {} by its offsets", s_nbrs.size(),
      s_weights.size(), s_indptr.back());
  for (std::int64_t i = 0; i < n; ++i) {
    COOPGNN_EXPECTS(id_in_range(dst[i], g.num_nodes),
                    "make_block: destination {} (position {}) is outside [0, {})", dst[i], i,
                    g.num_nodes);
  }
  for (std::size_t e = 0; e < s_nbrs.size(); ++e) {
    COOPGNN_EXPECTS(id_in_range(s_nbrs[e], g.num_nodes),
                    "make_block: sampled source {} (edge {}) is outside [0, {})", s_nbrs[e], e,
                    g.num_nodes);
  }
  local_index_map map(g.num_nodes, static_cast<std::size_t>(n) + s_nbrs.size());
  bool inserted = false;
  for (std::int64_t i = 0; i < n; ++i) {
    std::int64_t& slot = map.entry(dst[i], inserted);
    COOPGNN_EXPECTS(inserted, "make_block: destination {} appears twice", dst[i]);
    slot = i;
  }
  constexpr std::int64_t pending = -2;  // a source that is not a destination, not yet numbered
  std::vector<vid_t> others;
  for (vid_t const t : s_nbrs) {
    std::int64_t& slot = map.entry(t, inserted);
    if (inserted) {
      slot = pending;
      others.push_back(t);
    }
  }
  if (map.dense() && others.size() >= static_cast<std::size_t>(g.num_nodes) / 32) {
    std::size_t q = 0;
    std::int64_t const* slots = map.slots();
    for (vid_t v = 0; v < g.num_nodes; ++v) {
      if (slots[v] == pending) others[q++] = v;
    }
  } else {
    std::sort(others.begin(), others.end());
  }
  for (std::size_t q = 0; q < others.size(); ++q) {
    map.entry(others[q], inserted) = n + static_cast<std::int64_t>(q);
  }

  block b;
  b.num_dst = n;
  b.num_relations = static_cast<std::int32_t>(R);
  b.src_ids.reserve(static_cast<std::size_t>(n) + others.size());
  b.src_ids.assign(dst.begin(), dst.end());
  b.src_ids.insert(b.src_ids.end(), others.begin(), others.end());
  b.indptr.assign(s_indptr.begin(), s_indptr.end());
  b.weights.assign(s_weights.begin(), s_weights.end());
  b.indices.resize(s_nbrs.size());
  for (std::size_t e = 0; e < s_nbrs.size(); ++e) b.indices[e] = map.at(s_nbrs[e]);
  b.src_degree.resize(b.src_ids.size());
  for (std::size_t i = 0; i < b.src_ids.size(); ++i) b.src_degree[i] = g.in_degree(b.src_ids[i]);
  return b;
}

}  // namespace

sampled_neighbors sample_neighbors(const exec_context& ctx, const csc_graph& g,
                                   std::span<const vid_t> seeds, const sample_params& params) {
  COOPGNN_EXPECTS(ctx.get_backend() == backend::host,
                  "sample_neighbors: this overload is the host reference (host backend); the "
                  "entry taking a csc_view serves every backend");
  return sample_host(ctx.threads(), view(g), seeds, params);
}

block make_block(const csc_graph& g, std::span<const vid_t> dst, const sampled_neighbors& sampled) {
  return make_block_host(view(g), dst, sampled.indptr, sampled.nbrs, sampled.weights);
}

// ---- the entries of every backend ----------------------------------------------------------

namespace {
template <class T>
std::span<const T> raw(buffer_view<const T> v) {  // host code reading host or emulated memory
  return {v.data, v.size};
}
template <class T>
std::span<const T> raw(const buffer<T>& b) {
  return {b.data(), b.size()};
}
}  // namespace

#ifdef COOPGNN_WITH_CUDA
namespace {
/// The device view of a CSC view in device memory (etype only when typed).
cuda::device_csc_view device_graph(const csc_view& g) {
  return {g.num_nodes,
          {g.indptr, static_cast<std::size_t>(g.num_nodes + 1)},
          {g.indices, static_cast<std::size_t>(g.num_edges)},
          {g.etype, g.etype == nullptr ? 0 : static_cast<std::size_t>(g.num_edges)},
          g.num_relations};
}
}  // namespace
#endif

block_view block_buffers::view() const {
  return {num_dst,
          static_cast<std::int64_t>(src_ids.size()),
          static_cast<std::int64_t>(indices.size()),
          src_ids.data(),
          indptr.data(),
          indices.data(),
          weights.data(),
          src_degree.empty() ? nullptr : src_degree.data(),
          src_ids.space(),
          num_relations};
}

std::int64_t block_buffers::bytes() const {
  return static_cast<std::int64_t>(src_ids.bytes() + indptr.bytes() + indices.bytes() +
                                   weights.bytes() + src_degree.bytes());
}

sampled_buffers sample_neighbors(const exec_context& ctx, const csc_view& g,
                                 buffer_view<const vid_t> seeds, const sample_params& params) {
  detail::expect_spaces(ctx, "sample_neighbors", {{"the graph", g.space}, {"seeds", seeds.space}});
  auto const on_cuda = COOPGNN_CUDA_BRANCH([&]() -> sampled_buffers {
    auto d = cuda::sample_neighbors(*ctx.cuda(), device_graph(g), {seeds.data, seeds.size}, params);
    return {buffer<eid_t>::adopt(std::move(d.indptr)), buffer<vid_t>::adopt(std::move(d.nbrs)),
            buffer<float>::adopt(std::move(d.weights))};
  });
  return detail::dispatch(ctx, "sample_neighbors", on_cuda, [&]() -> sampled_buffers {
    auto s = sample_host(ctx.threads(), g, raw(seeds), params);
    return {to_space(ctx, std::move(s.indptr)), to_space(ctx, std::move(s.nbrs)),
            to_space(ctx, std::move(s.weights))};
  });
}

std::string exclusion_key_message(exclusion_key_fault fault, vid_t t, vid_t s, std::int32_t r,
                                  std::int32_t R) {
  switch (fault) {
    case exclusion_key_fault::relation:
      return fmt::format("edge exclusion: relation {} is outside [0, {})", r, R);
    case exclusion_key_fault::destination:
      return fmt::format(
          "edge exclusion: destination {} of relation {} (of {}) makes a key s R + r outside "
          "[0, 2^32)",
          s, r, R);
    case exclusion_key_fault::source:
      return fmt::format("edge exclusion: ids {} -> {} are outside [0, 2^32)", t, s * R + r);
    case exclusion_key_fault::none:
      break;
  }
  return {};
}

std::uint64_t edge_exclusion_key(vid_t t, vid_t s) {
  COOPGNN_EXPECTS(exclusion_key_check(t, s, 0, 1) == exclusion_key_fault::none,
                  "edge exclusion: ids {} -> {} are outside [0, 2^32)", t, s);
  return exclusion_key(t, s, 0, 1);
}

std::uint64_t edge_exclusion_key(vid_t t, vid_t s, std::int32_t r, std::int32_t R) {
  exclusion_key_fault const fault = exclusion_key_check(t, s, r, R);
  if (fault != exclusion_key_fault::none) [[unlikely]] {
    COOPGNN_FAIL("{}", exclusion_key_message(fault, t, s, r, R));
  }
  return exclusion_key(t, s, r, R);
}

sampled_buffers exclude_edges(const exec_context& ctx, buffer_view<const vid_t> seeds,
                              const sampled_buffers& sampled,
                              buffer_view<const std::uint64_t> keys) {
  constexpr const char* fn = "exclude_edges";
  detail::expect_spaces(
      ctx, fn,
      {{"seeds", seeds.space}, {"the sample", sampled.nbrs.space()}, {"keys", keys.space}});
  std::size_t const rows = sampled.indptr.size() - (sampled.indptr.size() > 0 ? 1 : 0);
  COOPGNN_EXPECTS(sampled.indptr.size() >= 1 &&
                      (seeds.size == 0 ? rows == 0 : rows % seeds.size == 0 && rows > 0),
                  "{}: the sample has {} offsets for {} seeds (n R + 1 expected, R >= 1 rows per "
                  "seed)",
                  fn, sampled.indptr.size(), seeds.size);
  COOPGNN_EXPECTS(sampled.nbrs.size() == sampled.weights.size(),
                  "{}: the sample has {} neighbours and {} weights", fn, sampled.nbrs.size(),
                  sampled.weights.size());
  auto const R = static_cast<std::int32_t>(seeds.size == 0 ? 1 : rows / seeds.size);
  auto const on_cuda = COOPGNN_CUDA_BRANCH([&]() -> sampled_buffers {
    auto d = cuda::exclude_edges(
        *ctx.cuda(), {seeds.data, seeds.size},
        cuda::device_sampled_view({sampled.indptr.data(), sampled.indptr.size()},
                                  {sampled.nbrs.data(), sampled.nbrs.size()},
                                  {sampled.weights.data(), sampled.weights.size()}),
        {keys.data, keys.size}, R);
    return {buffer<eid_t>::adopt(std::move(d.indptr)), buffer<vid_t>::adopt(std::move(d.nbrs)),
            buffer<float>::adopt(std::move(d.weights))};
  });
  return detail::dispatch(ctx, fn, on_cuda, [&]() -> sampled_buffers {
    // The checks in the order the CUDA path ranks them (sample.cu, exclude_check): keys, rows'
    // offsets, then every sampled edge's key as the loop below meets it.
    auto const k = raw(keys);
    for (std::size_t i = 1; i < k.size(); ++i) {
      COOPGNN_EXPECTS(keys_ordered(k[i - 1], k[i]),
                      "{}: keys are not ascending and distinct at position {}", fn, i);
    }
    auto const sd = raw(seeds);
    auto const ip = raw(sampled.indptr);
    auto const nb = raw(sampled.nbrs);
    auto const w = raw(sampled.weights);
    for (std::size_t q = 0; q < rows; ++q) {
      COOPGNN_EXPECTS(sample_row_in_bounds(ip[q], ip[q + 1], static_cast<eid_t>(nb.size())),
                      "{}: row {} of the sample has offsets [{}, {}), not a range within its {} "
                      "neighbours",
                      fn, q, ip[q], ip[q + 1], nb.size());
    }
    auto excluded = [&](std::size_t q, eid_t e) {
      return std::binary_search(
          k.begin(), k.end(),
          edge_exclusion_key(nb[e], sd[q / static_cast<std::size_t>(R)],
                             static_cast<std::int32_t>(q % static_cast<std::size_t>(R)), R));
    };
    std::vector<eid_t> indptr(rows + 1, 0);
    std::vector<vid_t> nbrs;
    std::vector<float> weights;
    for (std::size_t i = 0; i < rows; ++i) {
      float sum = 0.0f;
      for (eid_t e = ip[i]; e < ip[i + 1]; ++e) {
        if (!excluded(i, e)) sum += w[e];
      }
      for (eid_t e = ip[i]; e < ip[i + 1]; ++e) {
        if (excluded(i, e)) continue;
        nbrs.push_back(nb[e]);
        weights.push_back(w[e] / sum);
      }
      indptr[i + 1] = static_cast<eid_t>(nbrs.size());
    }
    return {to_space(ctx, std::move(indptr)), to_space(ctx, std::move(nbrs)),
            to_space(ctx, std::move(weights))};
  });
}

block_buffers make_block(const exec_context& ctx, const csc_view& g, buffer_view<const vid_t> dst,
                         const sampled_buffers& s) {
  detail::expect_spaces(
      ctx, "make_block",
      {{"the graph", g.space}, {"dst", dst.space}, {"the sample", s.nbrs.space()}});
  block_buffers out;
  out.num_dst = static_cast<std::int64_t>(dst.size);
  auto const on_cuda = COOPGNN_CUDA_BRANCH([&] {
    auto d = cuda::make_block(*ctx.cuda(), device_graph(g), {dst.data, dst.size},
                              cuda::device_sampled_view({s.indptr.data(), s.indptr.size()},
                                                        {s.nbrs.data(), s.nbrs.size()},
                                                        {s.weights.data(), s.weights.size()}));
    out.num_relations = d.num_relations;
    out.src_ids = buffer<vid_t>::adopt(std::move(d.src_ids));
    out.indptr = buffer<eid_t>::adopt(std::move(d.indptr));
    out.indices = buffer<std::int64_t>::adopt(std::move(d.indices));
    out.weights = buffer<float>::adopt(std::move(d.weights));
    out.src_degree = buffer<std::int64_t>::adopt(std::move(d.src_degree));
  });
  detail::dispatch(ctx, "make_block", on_cuda, [&] {
    block b = make_block_host(g, raw(dst), raw(s.indptr), raw(s.nbrs), raw(s.weights));
    out.num_relations = b.num_relations;
    out.src_ids = to_space(ctx, std::move(b.src_ids));
    out.indptr = to_space(ctx, std::move(b.indptr));
    out.indices = to_space(ctx, std::move(b.indices));
    out.weights = to_space(ctx, std::move(b.weights));
    out.src_degree = to_space(ctx, std::move(b.src_degree));
  });
  return out;
}

block to_host(const exec_context& ctx, const block_buffers& b) {
  block h;
  h.num_dst = b.num_dst;
  h.num_relations = b.num_relations;
  h.src_ids = download<vid_t>(ctx, b.src_ids.view());
  h.indptr = download<eid_t>(ctx, b.indptr.view());
  h.indices = download<std::int64_t>(ctx, b.indices.view());
  h.weights = download<float>(ctx, b.weights.view());
  h.src_degree = download<std::int64_t>(ctx, b.src_degree.view());
  return h;
}

block to_host(const exec_context& ctx, block_buffers&& b) {
  block h;
  h.num_dst = b.num_dst;
  h.num_relations = b.num_relations;
  h.src_ids = to_host(ctx, std::move(b.src_ids));
  h.indptr = to_host(ctx, std::move(b.indptr));
  h.indices = to_host(ctx, std::move(b.indices));
  h.weights = to_host(ctx, std::move(b.weights));
  h.src_degree = to_host(ctx, std::move(b.src_degree));
  return h;
}

block_buffers copy_block(const exec_context& ctx, const block_buffers& b) {
  return {b.num_dst,
          clone<vid_t>(ctx, b.src_ids.view()),
          clone<eid_t>(ctx, b.indptr.view()),
          clone<std::int64_t>(ctx, b.indices.view()),
          clone<float>(ctx, b.weights.view()),
          clone<std::int64_t>(ctx, b.src_degree.view()),
          b.num_relations};
}

csc_buffers upload_graph(const exec_context& ctx, const csc_graph& g) {
  return {g.num_nodes, upload<eid_t>(ctx, g.indptr), upload<vid_t>(ctx, g.indices),
          upload<std::int32_t>(ctx, g.etype), g.num_relations};
}

block_buffers upload_block(const exec_context& ctx, const block& b) {
  (void)view(b);  // validates the sizes
  return {b.num_dst,
          upload<vid_t>(ctx, b.src_ids),
          upload<eid_t>(ctx, b.indptr),
          upload<std::int64_t>(ctx, b.indices),
          upload<float>(ctx, b.weights),
          upload<std::int64_t>(ctx, b.src_degree),
          b.num_relations};
}

owner_split split_by_owner(const exec_context& ctx, buffer_view<const std::uint16_t> owner_of,
                           int num_pes, buffer_view<const vid_t> ids) {
  detail::expect_spaces(ctx, "split_by_owner", {{"owner_of", owner_of.space}, {"ids", ids.space}});
  COOPGNN_EXPECTS(num_pes >= 1 && num_pes <= 65535, "split_by_owner: {} PEs", num_pes);
  auto const on_cuda = COOPGNN_CUDA_BRANCH([&]() -> owner_split {
    auto d = cuda::split_by_owner(*ctx.cuda(), {owner_of.data, owner_of.size}, num_pes,
                                  {ids.data, ids.size});
    return {std::move(d.counts), buffer<std::int64_t>::adopt(std::move(d.perm)),
            buffer<vid_t>::adopt(std::move(d.sorted_ids))};
  });
  return detail::dispatch(ctx, "split_by_owner", on_cuda, [&]() -> owner_split {
    auto const P = static_cast<std::size_t>(num_pes);
    auto const m = ids.size;
    auto const n = static_cast<vid_t>(owner_of.size);
    owner_split out;
    out.counts.assign(P, 0);
    for (std::size_t i = 0; i < m; ++i) {
      vid_t const v = ids.data[i];
      COOPGNN_EXPECTS(v >= 0 && v < n, "split_by_owner: id {} at position {} is outside [0, {})", v,
                      i, n);
      auto const q = owner_of.data[v];
      COOPGNN_EXPECTS(q < P, "split_by_owner: vertex {} has owner {} of {} PEs", v, q, P);
      ++out.counts[q];
    }
    // Stable partition by owner: within an owner, input order.
    std::vector<std::int64_t> offset(P + 1, 0);
    for (std::size_t q = 0; q < P; ++q) offset[q + 1] = offset[q] + out.counts[q];
    std::vector<std::int64_t> perm(m);
    std::vector<vid_t> sorted(m);
    for (std::size_t i = 0; i < m; ++i) {
      auto& pos = offset[owner_of.data[ids.data[i]]];
      perm[static_cast<std::size_t>(pos)] = static_cast<std::int64_t>(i);
      sorted[static_cast<std::size_t>(pos)] = ids.data[i];
      ++pos;
    }
    out.perm = to_space(ctx, std::move(perm));
    out.sorted_ids = to_space(ctx, std::move(sorted));
    return out;
  });
}

unique_ids unique_with_inverse(const exec_context& ctx, buffer_view<const vid_t> ids) {
  detail::expect_space(ctx, ids.space, "unique_with_inverse", "ids");
  auto const on_cuda = COOPGNN_CUDA_BRANCH([&]() -> unique_ids {
    auto d = cuda::unique_with_inverse(*ctx.cuda(), {ids.data, ids.size});
    return {buffer<vid_t>::adopt(std::move(d.unique)),
            buffer<std::int64_t>::adopt(std::move(d.inverse))};
  });
  return detail::dispatch(ctx, "unique_with_inverse", on_cuda, [&]() -> unique_ids {
    std::vector<vid_t> uniq(ids.data, ids.data + ids.size);
    std::sort(uniq.begin(), uniq.end());
    uniq.erase(std::unique(uniq.begin(), uniq.end()), uniq.end());
    std::vector<std::int64_t> inverse(ids.size);
    for (std::size_t r = 0; r < ids.size; ++r) {
      inverse[r] = std::lower_bound(uniq.begin(), uniq.end(), ids.data[r]) - uniq.begin();
    }
    return {to_space(ctx, std::move(uniq)), to_space(ctx, std::move(inverse))};
  });
}

}  // namespace coopgnn
