#include "kernels/sample/sample.hpp"

#include <algorithm>
#include <unordered_map>

#include "kernels/dispatch.hpp"
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

namespace {

/// Positions (ascending) that NS keeps for seed s: the k smallest (key, position) pairs.
void ns_select(const csc_view& g, vid_t s, int fanout, rng::stream st, std::uint32_t batch,
               std::vector<std::pair<std::uint32_t, std::uint32_t>>& scratch,
               std::vector<std::uint32_t>& keep) {
  keep.clear();
  auto const d = static_cast<std::int64_t>(g.in_degree(s));
  if (fanout < 0 || d <= fanout) {
    for (std::int64_t j = 0; j < d; ++j) keep.push_back(static_cast<std::uint32_t>(j));
    return;
  }
  scratch.resize(static_cast<std::size_t>(d));
  for (std::int64_t j = 0; j < d; ++j) {
    auto const pos = static_cast<std::uint32_t>(j);
    scratch[j] = {rng::draw_u32(st, static_cast<std::uint64_t>(s), pos, batch), pos};
  }
  std::nth_element(scratch.begin(), scratch.begin() + fanout, scratch.end());
  for (int j = 0; j < fanout; ++j) keep.push_back(scratch[j].second);
  std::sort(keep.begin(), keep.end());
}

/// Positions that LABOR-0 keeps for seed s.
/// Variates of dependent minibatching cost two normal quantiles and a CDF each: they are
/// memoised per vertex within one call (the values are a pure function of the vertex, so the
/// memo changes nothing but the time). Plain LABOR (kappa 1 or 0) draws directly.
class variate_memo {
 public:
  explicit variate_memo(const sample_params& p)
      : plan_(make_labor_variate_plan(p.run_seed, p.dependency, p.layer, p.batch)),
        memoise_(p.dependency.batch_dependency > 1) {}
  float operator()(vid_t t) {
    if (!memoise_) return draw(t);
    auto [it, inserted] = memo_.try_emplace(t, 0.0f);
    if (inserted) it->second = draw(t);
    return it->second;
  }

 private:
  float draw(vid_t t) const { return labor_variate(plan_, static_cast<std::uint64_t>(t)); }
  labor_variate_plan plan_;
  bool memoise_;
  std::unordered_map<vid_t, float> memo_;
};

void labor_select(const csc_view& g, vid_t s, const sample_params& p, variate_memo& variate,
                  std::vector<std::uint32_t>& keep) {
  int const fanout = p.fanout;
  keep.clear();
  auto const d = static_cast<std::int64_t>(g.in_degree(s));
  if (fanout < 0 || d <= fanout) {
    for (std::int64_t j = 0; j < d; ++j) keep.push_back(static_cast<std::uint32_t>(j));
    return;
  }
  float const threshold = static_cast<float>(fanout) / static_cast<float>(d);
  auto const nbrs = g.in_neighbors(s);
  for (std::int64_t j = 0; j < d; ++j) {
    float const r = variate(nbrs[j]);
    if (r <= threshold) keep.push_back(static_cast<std::uint32_t>(j));
  }
}

/// The host sampler (the reference) on a host-readable CSC; `threads` split the seeds.
sampled_neighbors sample_host(int host_threads, const csc_view& g, std::span<const vid_t> seeds,
                              const sample_params& params) {
  COOPGNN_EXPECTS(params.dependency.batch_dependency >= 0,
                  "batch dependency (kappa) {} is negative: expected 0 (never refresh) or >= 1",
                  params.dependency.batch_dependency);
  COOPGNN_EXPECTS(params.fanout == -1 || params.fanout >= 1,
                  "fanout {} is invalid: expected a positive count or -1 (all neighbours)",
                  params.fanout);
  auto const n = static_cast<std::int64_t>(seeds.size());
  for (std::int64_t i = 0; i < n; ++i) {
    COOPGNN_EXPECTS(seeds[i] >= 0 && seeds[i] < g.num_nodes,
                    "seed {} (position {}) is outside [0, {})", seeds[i], i, g.num_nodes);
    COOPGNN_EXPECTS(g.in_degree(seeds[i]) < (eid_t{1} << 32),
                    "seed {} has in-degree {}: positions must fit 32 bits", seeds[i],
                    g.in_degree(seeds[i]));
  }
  rng::stream const st = rng::make_stream(params.run_seed, rng::purpose::ns, params.layer);

  // Pass 1: kept positions per seed, computed in parallel chunks; pass 2: concatenate in order.
  std::vector<std::vector<std::uint32_t>> kept(static_cast<std::size_t>(n));
  auto work_range = [&](std::int64_t begin, std::int64_t end) {
    std::vector<std::pair<std::uint32_t, std::uint32_t>> scratch;
    std::vector<std::uint32_t> keep;
    variate_memo variate(params);
    for (std::int64_t i = begin; i < end; ++i) {
      if (params.kind == sampler_kind::ns) {
        ns_select(g, seeds[i], params.fanout, st, params.batch, scratch, keep);
      } else {
        labor_select(g, seeds[i], params, variate, keep);
      }
      kept[i] = keep;
    }
  };
  // At least 256 seeds a thread; the result does not depend on the split.
  int const threads =
      static_cast<int>(std::min<std::int64_t>(host_threads, std::max<std::int64_t>(n / 256, 1)));
  parallel_rows(n, threads, work_range);

  sampled_neighbors out;
  out.indptr.assign(static_cast<std::size_t>(n) + 1, 0);
  for (std::int64_t i = 0; i < n; ++i) {
    out.indptr[i + 1] = out.indptr[i] + static_cast<eid_t>(kept[i].size());
  }
  out.nbrs.resize(static_cast<std::size_t>(out.indptr[n]));
  out.weights.resize(out.nbrs.size());
  for (std::int64_t i = 0; i < n; ++i) {
    auto const nbrs = g.in_neighbors(seeds[i]);
    float const w = kept[i].empty() ? 0.0f : 1.0f / static_cast<float>(kept[i].size());
    eid_t o = out.indptr[i];
    for (std::uint32_t j : kept[i]) {
      out.nbrs[o] = nbrs[j];
      out.weights[o] = w;
      ++o;
    }
  }
  return out;
}

/// Host unique-and-compact on a host-readable CSC and sample arrays.
block make_block_host(const csc_view& g, std::span<const vid_t> dst,
                      std::span<const eid_t> s_indptr, std::span<const vid_t> s_nbrs,
                      std::span<const float> s_weights) {
  auto const n = static_cast<std::int64_t>(dst.size());
  COOPGNN_EXPECTS(static_cast<std::int64_t>(s_indptr.size()) == n + 1,
                  "make_block: {} destinations but the sample has {} offsets", n, s_indptr.size());
  COOPGNN_EXPECTS(s_nbrs.size() == s_weights.size() &&
                      static_cast<eid_t>(s_nbrs.size()) == s_indptr[static_cast<std::size_t>(n)],
                  "make_block: the sample has {} neighbours, {} weights and {} by its offsets",
                  s_nbrs.size(), s_weights.size(), s_indptr[static_cast<std::size_t>(n)]);
  // Destinations sorted with their positions, to find a source among them by binary search.
  std::vector<std::pair<vid_t, std::int64_t>> dst_sorted(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) dst_sorted[i] = {dst[i], i};
  std::sort(dst_sorted.begin(), dst_sorted.end());
  for (std::int64_t i = 1; i < n; ++i) {
    COOPGNN_EXPECTS(dst_sorted[i].first != dst_sorted[i - 1].first,
                    "make_block: destination {} appears twice", dst_sorted[i].first);
  }
  auto find_dst = [&](vid_t v) -> std::int64_t {
    auto it = std::lower_bound(dst_sorted.begin(), dst_sorted.end(),
                               std::pair<vid_t, std::int64_t>{v, -1});
    return (it != dst_sorted.end() && it->first == v) ? it->second : -1;
  };
  std::vector<vid_t> others;
  others.reserve(s_nbrs.size());
  for (vid_t t : s_nbrs) {
    if (find_dst(t) < 0) others.push_back(t);
  }
  std::sort(others.begin(), others.end());
  others.erase(std::unique(others.begin(), others.end()), others.end());

  block b;
  b.num_dst = n;
  b.src_ids.reserve(static_cast<std::size_t>(n) + others.size());
  b.src_ids.assign(dst.begin(), dst.end());
  b.src_ids.insert(b.src_ids.end(), others.begin(), others.end());
  b.indptr.assign(s_indptr.begin(), s_indptr.end());
  b.weights.assign(s_weights.begin(), s_weights.end());
  b.indices.resize(s_nbrs.size());
  for (std::size_t e = 0; e < s_nbrs.size(); ++e) {
    vid_t const t = s_nbrs[e];
    std::int64_t const local = find_dst(t);
    b.indices[e] = local >= 0
                       ? local
                       : n + (std::lower_bound(others.begin(), others.end(), t) - others.begin());
  }
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

block_view block_buffers::view() const {
  return {num_dst,
          static_cast<std::int64_t>(src_ids.size()),
          static_cast<std::int64_t>(indices.size()),
          src_ids.data(),
          indptr.data(),
          indices.data(),
          weights.data(),
          src_degree.empty() ? nullptr : src_degree.data(),
          src_ids.space()};
}

std::int64_t block_buffers::bytes() const {
  return static_cast<std::int64_t>(src_ids.bytes() + indptr.bytes() + indices.bytes() +
                                   weights.bytes() + src_degree.bytes());
}

sampled_buffers sample_neighbors(const exec_context& ctx, const csc_view& g,
                                 buffer_view<const vid_t> seeds, const sample_params& params) {
  detail::expect_spaces(ctx, "sample_neighbors", {{"the graph", g.space}, {"seeds", seeds.space}});
  if (ctx.runs_on_host()) {
    auto s = sample_host(ctx.threads(), g, raw(seeds), params);
    return {to_space(ctx, std::move(s.indptr)), to_space(ctx, std::move(s.nbrs)),
            to_space(ctx, std::move(s.weights))};
  }
#ifdef COOPGNN_WITH_CUDA
  auto d = cuda::sample_neighbors(
      *ctx.cuda(),
      cuda::device_csc_view(g.num_nodes, {g.indptr, static_cast<std::size_t>(g.num_nodes + 1)},
                            {g.indices, static_cast<std::size_t>(g.num_edges)}),
      {seeds.data, seeds.size}, params);
  return {buffer<eid_t>::adopt(std::move(d.indptr)), buffer<vid_t>::adopt(std::move(d.nbrs)),
          buffer<float>::adopt(std::move(d.weights))};
#else
  detail::no_cuda_build("sample_neighbors");
#endif
}

std::uint64_t edge_exclusion_key(vid_t t, vid_t s) {
  constexpr vid_t limit = vid_t{1} << 32;
  COOPGNN_EXPECTS(t >= 0 && t < limit && s >= 0 && s < limit,
                  "edge exclusion: ids {} -> {} are outside [0, 2^32)", t, s);
  return (static_cast<std::uint64_t>(t) << 32) | static_cast<std::uint64_t>(s);
}

sampled_buffers exclude_edges(const exec_context& ctx, buffer_view<const vid_t> seeds,
                              const sampled_buffers& sampled,
                              buffer_view<const std::uint64_t> keys) {
  constexpr const char* fn = "exclude_edges";
  detail::expect_spaces(
      ctx, fn,
      {{"seeds", seeds.space}, {"the sample", sampled.nbrs.space()}, {"keys", keys.space}});
  COOPGNN_EXPECTS(sampled.indptr.size() == seeds.size + 1,
                  "{}: the sample has {} offsets for {} seeds", fn, sampled.indptr.size(),
                  seeds.size);
  if (ctx.runs_on_host()) {
    auto const k = raw(keys);
    for (std::size_t i = 1; i < k.size(); ++i) {
      COOPGNN_EXPECTS(k[i - 1] < k[i], "{}: keys are not ascending and distinct at position {}", fn,
                      i);
    }
    auto const sd = raw(seeds);
    auto const ip = raw(sampled.indptr);
    auto const nb = raw(sampled.nbrs);
    auto const w = raw(sampled.weights);
    auto excluded = [&](std::size_t i, eid_t e) {
      return std::binary_search(k.begin(), k.end(), edge_exclusion_key(nb[e], sd[i]));
    };
    std::vector<eid_t> indptr(sd.size() + 1, 0);
    std::vector<vid_t> nbrs;
    std::vector<float> weights;
    for (std::size_t i = 0; i < sd.size(); ++i) {
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
  }
#ifdef COOPGNN_WITH_CUDA
  auto d = cuda::exclude_edges(
      *ctx.cuda(), {seeds.data, seeds.size},
      cuda::device_sampled_view({sampled.indptr.data(), sampled.indptr.size()},
                                {sampled.nbrs.data(), sampled.nbrs.size()},
                                {sampled.weights.data(), sampled.weights.size()}),
      {keys.data, keys.size});
  return {buffer<eid_t>::adopt(std::move(d.indptr)), buffer<vid_t>::adopt(std::move(d.nbrs)),
          buffer<float>::adopt(std::move(d.weights))};
#else
  detail::no_cuda_build(fn);
#endif
}

block_buffers make_block(const exec_context& ctx, const csc_view& g, buffer_view<const vid_t> dst,
                         const sampled_buffers& s) {
  detail::expect_spaces(
      ctx, "make_block",
      {{"the graph", g.space}, {"dst", dst.space}, {"the sample", s.nbrs.space()}});
  block_buffers out;
  out.num_dst = static_cast<std::int64_t>(dst.size);
  if (ctx.runs_on_host()) {
    block b = make_block_host(g, raw(dst), raw(s.indptr), raw(s.nbrs), raw(s.weights));
    out.src_ids = to_space(ctx, std::move(b.src_ids));
    out.indptr = to_space(ctx, std::move(b.indptr));
    out.indices = to_space(ctx, std::move(b.indices));
    out.weights = to_space(ctx, std::move(b.weights));
    out.src_degree = to_space(ctx, std::move(b.src_degree));
    return out;
  }
#ifdef COOPGNN_WITH_CUDA
  auto d = cuda::make_block(
      *ctx.cuda(),
      cuda::device_csc_view(g.num_nodes, {g.indptr, static_cast<std::size_t>(g.num_nodes + 1)},
                            {g.indices, static_cast<std::size_t>(g.num_edges)}),
      {dst.data, dst.size},
      cuda::device_sampled_view({s.indptr.data(), s.indptr.size()}, {s.nbrs.data(), s.nbrs.size()},
                                {s.weights.data(), s.weights.size()}));
  out.src_ids = buffer<vid_t>::adopt(std::move(d.src_ids));
  out.indptr = buffer<eid_t>::adopt(std::move(d.indptr));
  out.indices = buffer<std::int64_t>::adopt(std::move(d.indices));
  out.weights = buffer<float>::adopt(std::move(d.weights));
  out.src_degree = buffer<std::int64_t>::adopt(std::move(d.src_degree));
  return out;
#else
  detail::no_cuda_build("make_block");
#endif
}

block to_host(const exec_context& ctx, const block_buffers& b) {
  block h;
  h.num_dst = b.num_dst;
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
          clone<std::int64_t>(ctx, b.src_degree.view())};
}

csc_buffers upload_graph(const exec_context& ctx, const csc_graph& g) {
  return {g.num_nodes, upload<eid_t>(ctx, g.indptr), upload<vid_t>(ctx, g.indices)};
}

block_buffers upload_block(const exec_context& ctx, const block& b) {
  (void)view(b);  // validates the sizes
  return {b.num_dst,
          upload<vid_t>(ctx, b.src_ids),
          upload<eid_t>(ctx, b.indptr),
          upload<std::int64_t>(ctx, b.indices),
          upload<float>(ctx, b.weights),
          upload<std::int64_t>(ctx, b.src_degree)};
}

owner_split split_by_owner(const exec_context& ctx, buffer_view<const std::uint16_t> owner_of,
                           int num_pes, buffer_view<const vid_t> ids) {
  detail::expect_spaces(ctx, "split_by_owner", {{"owner_of", owner_of.space}, {"ids", ids.space}});
  COOPGNN_EXPECTS(num_pes >= 1 && num_pes <= 65535, "split_by_owner: {} PEs", num_pes);
  if (ctx.runs_on_host()) {
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
  }
#ifdef COOPGNN_WITH_CUDA
  auto d = cuda::split_by_owner(*ctx.cuda(), {owner_of.data, owner_of.size}, num_pes,
                                {ids.data, ids.size});
  return {std::move(d.counts), buffer<std::int64_t>::adopt(std::move(d.perm)),
          buffer<vid_t>::adopt(std::move(d.sorted_ids))};
#else
  detail::no_cuda_build("split_by_owner");
#endif
}

unique_ids unique_with_inverse(const exec_context& ctx, buffer_view<const vid_t> ids) {
  detail::expect_space(ctx, ids.space, "unique_with_inverse", "ids");
  if (ctx.runs_on_host()) {
    std::vector<vid_t> uniq(ids.data, ids.data + ids.size);
    std::sort(uniq.begin(), uniq.end());
    uniq.erase(std::unique(uniq.begin(), uniq.end()), uniq.end());
    std::vector<std::int64_t> inverse(ids.size);
    for (std::size_t r = 0; r < ids.size; ++r) {
      inverse[r] = std::lower_bound(uniq.begin(), uniq.end(), ids.data[r]) - uniq.begin();
    }
    return {to_space(ctx, std::move(uniq)), to_space(ctx, std::move(inverse))};
  }
#ifdef COOPGNN_WITH_CUDA
  auto d = cuda::unique_with_inverse(*ctx.cuda(), {ids.data, ids.size});
  return {buffer<vid_t>::adopt(std::move(d.unique)),
          buffer<std::int64_t>::adopt(std::move(d.inverse))};
#else
  detail::no_cuda_build("unique_with_inverse");
#endif
}

}  // namespace coopgnn
