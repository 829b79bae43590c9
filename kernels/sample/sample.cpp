#include "kernels/sample/sample.hpp"

#include <algorithm>
#include <exception>
#include <thread>
#include <unordered_map>

#include "runtime/core/error.hpp"
#include "runtime/core/rng.hpp"

namespace coopgnn {

sampler_kind parse_sampler_kind(const std::string& name) {
  if (name == "ns") return sampler_kind::ns;
  if (name == "labor") return sampler_kind::labor;
  COOPGNN_FAIL("unknown sampler '{}': expected 'ns' or 'labor'", name);
}

std::string to_string(sampler_kind k) { return k == sampler_kind::ns ? "ns" : "labor"; }

namespace {

/// Positions (ascending) that NS keeps for seed s: the k smallest (key, position) pairs.
void ns_select(const csc_graph& g, vid_t s, int fanout, rng::stream st, std::uint32_t batch,
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

void labor_select(const csc_graph& g, vid_t s, const sample_params& p, variate_memo& variate,
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

}  // namespace

sampled_neighbors sample_neighbors(const exec_context& ctx, const csc_graph& g,
                                   std::span<const vid_t> seeds, const sample_params& params) {
  COOPGNN_EXPECTS(ctx.get_backend() == backend::host,
                  "sample_neighbors: the CUDA sampler is not part of this build");
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
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(ctx.threads()));
  auto work = [&](std::int64_t begin, std::int64_t end, int t) noexcept {
    try {
      work_range(begin, end);
    } catch (...) {
      errors[static_cast<std::size_t>(t)] = std::current_exception();
    }
  };
  int const threads =
      static_cast<int>(std::min<std::int64_t>(ctx.threads(), std::max<std::int64_t>(n / 256, 1)));
  if (threads <= 1) {
    work_range(0, n);
  } else {
    {
      std::vector<std::jthread> pool;
      for (int t = 0; t < threads; ++t) {
        pool.emplace_back(work, n * t / threads, n * (t + 1) / threads, t);
      }
    }
    for (auto const& e : errors) {
      if (e) std::rethrow_exception(e);
    }
  }

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

block make_block(const csc_graph& g, std::span<const vid_t> dst, const sampled_neighbors& sampled) {
  auto const n = static_cast<std::int64_t>(dst.size());
  COOPGNN_EXPECTS(static_cast<std::int64_t>(sampled.indptr.size()) == n + 1,
                  "make_block: {} destinations but the sample has {} offsets", n,
                  sampled.indptr.size());
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
  others.reserve(sampled.nbrs.size());
  for (vid_t t : sampled.nbrs) {
    if (find_dst(t) < 0) others.push_back(t);
  }
  std::sort(others.begin(), others.end());
  others.erase(std::unique(others.begin(), others.end()), others.end());

  block b;
  b.num_dst = n;
  b.src_ids.reserve(static_cast<std::size_t>(n) + others.size());
  b.src_ids.assign(dst.begin(), dst.end());
  b.src_ids.insert(b.src_ids.end(), others.begin(), others.end());
  b.indptr = sampled.indptr;
  b.weights = sampled.weights;
  b.indices.resize(sampled.nbrs.size());
  for (std::size_t e = 0; e < sampled.nbrs.size(); ++e) {
    vid_t const t = sampled.nbrs[e];
    std::int64_t const local = find_dst(t);
    b.indices[e] = local >= 0
                       ? local
                       : n + (std::lower_bound(others.begin(), others.end(), t) - others.begin());
  }
  b.src_degree.resize(b.src_ids.size());
  for (std::size_t i = 0; i < b.src_ids.size(); ++i) b.src_degree[i] = g.in_degree(b.src_ids[i]);
  return b;
}

}  // namespace coopgnn
