#include "tools/coopgnn/split_edges.hpp"

#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <utility>

#include "runtime/core/error.hpp"
#include "runtime/graph/generate.hpp"
#include "runtime/graph/repeated_edges.hpp"

namespace coopgnn {

namespace {

// Stream layers under rng::purpose::split; generate.cpp's vertex split uses layer 0.
constexpr std::uint32_t kSplitOrder = 16;  ///< random: the permutation of the candidates
constexpr std::uint32_t kTmaRole = 17;     ///< tma without a vertex split: validation or test
constexpr std::uint32_t kTmaPick = 18;     ///< tma: which outgoing edge a node gives up
constexpr std::uint32_t kNegatives = 19;   ///< negative_sampler
constexpr std::uint32_t kOrient = 20;      ///< symmetric graphs: which end of a pair is the head
constexpr std::uint32_t kDenseSub = 0x80000000u;  ///< sub-index range of the dense draws

/// An integer in [0, n) from 64 random bits (multiply-high; bias <= n / 2^64).
std::int64_t below(std::uint64_t bits, std::int64_t n) {
  return static_cast<std::int64_t>(
      (static_cast<unsigned __int128>(bits) * static_cast<std::uint64_t>(n)) >> 64);
}

std::uint64_t join(std::uint32_t hi, std::uint32_t lo) {
  return (static_cast<std::uint64_t>(hi) << 32) | lo;
}

/// Distinct out-neighbours of u other than u.
std::int64_t proper_degree(const out_adjacency& a, vid_t u) {
  auto const nb = a.neighbours(u);
  return static_cast<std::int64_t>(nb.size()) -
         (std::binary_search(nb.begin(), nb.end(), u) ? 1 : 0);
}

/// The stored orientation of the undirected pair {u, v} (u < v) of a symmetric graph: (u, v) or
/// (v, u) by a fair coin keyed by (seed, u, v), so that neither the lower nor the higher id is
/// always the head whose tail link prediction corrupts.
std::pair<vid_t, vid_t> orient(rng::stream s, vid_t u, vid_t v) {
  bool const flip =
      (rng::draw_u32(s, static_cast<std::uint64_t>(u), static_cast<std::uint32_t>(v),
                     static_cast<std::uint32_t>(static_cast<std::uint64_t>(v) >> 32)) &
       1u) != 0;
  return flip ? std::pair{v, u} : std::pair{u, v};
}

/// Moves the split's task into `out` and completes the report's counts: training pairs,
/// validation and test positives (pairs labelled 1, or all pairs of an unlabelled set) and the
/// edges the output graph keeps.
void finish_split(dataset& out, link_task lt, split_report& rep) {
  auto positives = [](const pair_set& s) {
    return s.labels.empty() ? s.size()
                            : static_cast<std::int64_t>(
                                  std::count(s.labels.begin(), s.labels.end(), std::int64_t{1}));
  };
  rep.train = lt.train.size();
  rep.valid = positives(lt.valid);
  rep.test = positives(lt.test);
  // The training graph holds each edge once, as train and info count the input's.
  (void)remove_repeated_edges(out);
  rep.edges_out = out.num_edges();
  out.link = std::move(lt);
}

}  // namespace

std::span<const vid_t> out_adjacency::neighbours(vid_t u) const {
  auto const b = static_cast<std::size_t>(offsets[static_cast<std::size_t>(u)]);
  auto const e = static_cast<std::size_t>(offsets[static_cast<std::size_t>(u) + 1]);
  return std::span<const vid_t>(targets).subspan(b, e - b);
}

std::int64_t out_adjacency::find(vid_t u, vid_t v) const {
  auto const nb = neighbours(u);
  auto const it = std::lower_bound(nb.begin(), nb.end(), v);
  if (it == nb.end() || *it != v) return -1;
  return offsets[static_cast<std::size_t>(u)] + (it - nb.begin());
}

out_adjacency build_out_adjacency(vid_t n, std::span<const vid_t> src, std::span<const vid_t> dst) {
  COOPGNN_EXPECTS(src.size() == dst.size(), "build_out_adjacency: {} sources but {} destinations",
                  src.size(), dst.size());
  COOPGNN_EXPECTS(n >= 0, "build_out_adjacency: negative vertex count {}", n);
  out_adjacency a;
  a.offsets.assign(static_cast<std::size_t>(n) + 1, 0);
  for (std::size_t e = 0; e < src.size(); ++e) {
    COOPGNN_EXPECTS(src[e] >= 0 && src[e] < n && dst[e] >= 0 && dst[e] < n,
                    "build_out_adjacency: edge {} ({} -> {}) has an id outside [0, {})", e, src[e],
                    dst[e], n);
    ++a.offsets[static_cast<std::size_t>(src[e]) + 1];
  }
  std::partial_sum(a.offsets.begin(), a.offsets.end(), a.offsets.begin());
  std::vector<std::int64_t> fill(a.offsets.begin(), a.offsets.end() - 1);
  std::vector<vid_t> t(src.size());
  for (std::size_t e = 0; e < src.size(); ++e) {
    t[static_cast<std::size_t>(fill[static_cast<std::size_t>(src[e])]++)] = dst[e];
  }
  // Sort and deduplicate each list, compacting in place.
  std::int64_t w = 0;
  for (vid_t u = 0; u < n; ++u) {
    auto const b = a.offsets[static_cast<std::size_t>(u)];
    auto const e = a.offsets[static_cast<std::size_t>(u) + 1];
    std::sort(t.begin() + b, t.begin() + e);
    auto const last = std::unique(t.begin() + b, t.begin() + e);
    a.offsets[static_cast<std::size_t>(u)] = w;
    for (auto it = t.begin() + b; it != last; ++it) t[static_cast<std::size_t>(w++)] = *it;
  }
  a.offsets[static_cast<std::size_t>(n)] = w;
  t.resize(static_cast<std::size_t>(w));
  a.targets = std::move(t);
  return a;
}

negative_sampler::negative_sampler(const out_adjacency& full, std::uint64_t seed)
    : full_(full),
      stream_(rng::make_stream(seed, rng::purpose::split, kNegatives)),
      stamp_(static_cast<std::size_t>(full.num_nodes()), 0) {}

std::int64_t negative_sampler::candidates(vid_t u) const {
  return full_.num_nodes() - 1 - proper_degree(full_, u);
}

void negative_sampler::draw(vid_t u, std::int64_t k, std::uint64_t query, std::vector<vid_t>& out) {
  vid_t const n = full_.num_nodes();
  COOPGNN_EXPECTS(u >= 0 && u < n, "negative_sampler::draw: source {} outside [0, {})", u, n);
  COOPGNN_EXPECTS(k >= 0, "negative_sampler::draw: negative count {}", k);
  if (k == 0) return;
  std::int64_t const m = candidates(u);
  if (m < k) {
    COOPGNN_IO_FAIL(
        "vertex {} has only {} candidate negatives (vertices other than itself that it has no "
        "edge to) but {} per positive were asked for: lower --negatives",
        u, m, k);
  }
  if (m > 2 * k && 16 * m >= n) {
    // Rejection: uniform vertices, dropping u, true edges and repeats.
    std::uint64_t const tag = ++epoch_;
    std::int64_t got = 0;
    for (std::uint32_t a = 0; got < k; ++a) {
      auto const w4 = rng::draw4(stream_, query, a, 0);
      for (int h = 0; h < 2 && got < k; ++h) {
        vid_t const c = below(join(w4[2 * h], w4[2 * h + 1]), n);
        auto& st = stamp_[static_cast<std::size_t>(c)];
        if (c == u || st == tag || full_.has_edge(u, c)) continue;
        st = tag;
        out.push_back(c);
        ++got;
      }
    }
    return;
  }
  // Dense: enumerate A(u), then a keyed partial Fisher-Yates picks k of them.
  pool_.clear();
  auto const nb = full_.neighbours(u);
  std::size_t j = 0;
  for (vid_t w = 0; w < n; ++w) {
    while (j < nb.size() && nb[j] < w) ++j;
    if (w != u && (j == nb.size() || nb[j] != w)) pool_.push_back(w);
  }
  for (std::int64_t i = 0; i < k; ++i) {
    auto const w4 = rng::draw4(stream_, query, kDenseSub | static_cast<std::uint32_t>(i), 0);
    std::int64_t const pick = i + below(join(w4[0], w4[1]), m - i);
    std::swap(pool_[static_cast<std::size_t>(i)], pool_[static_cast<std::size_t>(pick)]);
    out.push_back(pool_[static_cast<std::size_t>(i)]);
  }
}

namespace {

/// Appends the query of positive u -> v with k negatives keyed by `query_key` to `s`.
void add_query(pair_set& s, vid_t u, vid_t v, std::int64_t k, std::uint64_t query_key,
               negative_sampler& neg, std::vector<vid_t>& scratch) {
  auto const q = k > 0 ? (s.indexes.empty() ? 0 : s.indexes.back() + 1) : 0;
  s.src.push_back(u);
  s.dst.push_back(v);
  if (k == 0) return;
  s.labels.push_back(1);
  s.indexes.push_back(q);
  scratch.clear();
  neg.draw(u, k, query_key, scratch);
  for (vid_t w : scratch) {
    s.src.push_back(u);
    s.dst.push_back(w);
    s.labels.push_back(0);
    s.indexes.push_back(q);
  }
}

}  // namespace

dataset split_edges(const dataset& in, const split_options& opt, split_report* report) {
  validate_dataset(in, fmt::format("dataset '{}'", in.name));
  if (opt.negatives < -1) {
    COOPGNN_IO_FAIL("--negatives {} must be >= 0 (or -1 for the scheme's default)", opt.negatives);
  }
  std::int64_t const k =
      opt.negatives >= 0 ? opt.negatives : (opt.scheme == split_scheme::tma ? 1000 : 100);
  vid_t const n = in.num_nodes;
  out_adjacency const full = build_out_adjacency(n, in.src, in.dst);
  split_report rep;
  rep.negatives = k;
  rep.edges_in = in.num_edges();
  rep.repeats_removed = count_repeated_edges(in);
  rep.symmetric = true;
  for (vid_t u = 0; u < n && rep.symmetric; ++u) {
    for (vid_t v : full.neighbours(u)) {
      if (!full.has_edge(v, u)) {
        rep.symmetric = false;
        break;
      }
    }
  }
  bool const sym = rep.symmetric;
  // Per distinct arc: held out as a positive, or removed from the training graph.
  std::vector<std::uint8_t> held(full.targets.size(), 0);
  std::vector<std::uint8_t> removed(full.targets.size(), 0);
  auto hold_out = [&](vid_t u, vid_t v, std::int64_t pos) {
    held[static_cast<std::size_t>(pos)] = 1;
    removed[static_cast<std::size_t>(pos)] = 1;
    if (std::int64_t const r = full.find(v, u); r >= 0 && !opt.keep_reverse) {
      removed[static_cast<std::size_t>(r)] = 1;
    }
  };

  link_task lt;
  lt.name = "link_prediction";
  negative_sampler neg(full, opt.seed);
  std::vector<vid_t> scratch;
  rng::stream const orient_stream = rng::make_stream(opt.seed, rng::purpose::split, kOrient);

  if (opt.scheme == split_scheme::random) {
    double const sum = opt.fractions[0] + opt.fractions[1] + opt.fractions[2];
    if (std::any_of(opt.fractions.begin(), opt.fractions.end(), [](double f) { return f < 0; }) ||
        std::abs(sum - 1.0) > 1e-6) {
      COOPGNN_IO_FAIL("--fractions {},{},{}: need three non-negative fractions summing to 1",
                      opt.fractions[0], opt.fractions[1], opt.fractions[2]);
    }
    // Candidates in (u, v) order: their positions in full.targets.
    std::vector<std::int64_t> cand;
    for (vid_t u = 0; u < n; ++u) {
      auto const nb = full.neighbours(u);
      for (std::size_t i = 0; i < nb.size(); ++i) {
        if (nb[i] != u && (!sym || u < nb[i])) cand.push_back(full.offsets[u] + i);
      }
    }
    auto const c = static_cast<std::int64_t>(cand.size());
    rep.candidates = c;
    if (c == 0) COOPGNN_IO_FAIL("dataset '{}': no edges to split (only self-loops?)", in.name);
    std::vector<vid_t> const perm =
        keyed_permutation(c, opt.seed, rng::purpose::split, kSplitOrder);
    auto const nv =
        std::min<std::int64_t>(std::llround(opt.fractions[1] * static_cast<double>(c)), c);
    auto const nt =
        std::min<std::int64_t>(std::llround(opt.fractions[2] * static_cast<double>(c)), c - nv);
    std::vector<std::uint8_t> part(static_cast<std::size_t>(c), 0);  // 0 train, 1 valid, 2 test
    for (std::int64_t i = 0; i < nv + nt; ++i) part[perm[i]] = i < nv ? 1 : 2;
    // Source of each candidate arc (the adjacency stores targets only).
    std::vector<vid_t> src_of(cand.size());
    for (vid_t u = 0, i = 0; u < n; ++u) {
      while (i < c && cand[i] < full.offsets[u + 1]) src_of[i++] = u;
    }
    for (std::int64_t i = 0; i < c; ++i) {
      if (part[i] == 0) continue;
      vid_t const u = src_of[i];
      vid_t const v = full.targets[cand[i]];
      // The held-out arc is the oriented positive: with --keep-reverse its reverse stays.
      auto const [head, tail] = sym ? orient(orient_stream, u, v) : std::pair{u, v};
      hold_out(head, tail, head == u ? cand[i] : full.find(head, tail));
      add_query(part[i] == 1 ? lt.valid : lt.test, head, tail, k, static_cast<std::uint64_t>(i),
                neg, scratch);
    }
  } else {
    // Roles: 1 validation, 2 test, 0 none.
    std::vector<std::uint8_t> role(static_cast<std::size_t>(n), 0);
    if (!in.valid.empty() || !in.test.empty()) {
      for (vid_t v : in.valid) role[v] = 1;
      for (vid_t v : in.test) role[v] = 2;
    } else {
      rng::stream const s = rng::make_stream(opt.seed, rng::purpose::split, kTmaRole);
      for (vid_t v = 0; v < n; ++v) {
        role[v] = (rng::draw_u32(s, static_cast<std::uint64_t>(v), 0, 0) & 1u) != 0 ? 2 : 1;
      }
    }
    // Outgoing training edges left per node (distinct, self-loops excluded).
    std::vector<std::int64_t> left(static_cast<std::size_t>(n));
    for (vid_t v = 0; v < n; ++v) left[v] = proper_degree(full, v);
    rng::stream const pick = rng::make_stream(opt.seed, rng::purpose::split, kTmaPick);
    std::vector<std::int64_t> ok;
    for (vid_t u = 0; u < n; ++u) {
      if (role[u] == 0 || proper_degree(full, u) < 2) continue;
      ++rep.candidates;
      ok.clear();
      if (left[u] >= 2) {
        auto const nb = full.neighbours(u);
        for (std::size_t i = 0; i < nb.size(); ++i) {
          vid_t const v = nb[i];
          std::int64_t const p = full.offsets[u] + static_cast<std::int64_t>(i);
          if (v == u || removed[p]) continue;
          std::int64_t const r = full.find(v, u);
          if (r >= 0 && held[r]) continue;                           // the pair is held out already
          if (r >= 0 && !opt.keep_reverse && left[v] < 2) continue;  // v would lose its last edge
          ok.push_back(p);
        }
      }
      if (ok.empty()) {
        ++rep.skipped_nodes;
        continue;
      }
      auto const w4 = rng::draw4(pick, static_cast<std::uint64_t>(u), 0, 0);
      std::int64_t const p = ok[static_cast<std::size_t>(
          below(join(w4[0], w4[1]), static_cast<std::int64_t>(ok.size())))];
      vid_t const v = full.targets[p];
      hold_out(u, v, p);
      --left[u];
      if (full.find(v, u) >= 0 && !opt.keep_reverse) --left[v];
      add_query(role[u] == 1 ? lt.valid : lt.test, u, v, k, static_cast<std::uint64_t>(u), neg,
                scratch);
    }
    if (rep.candidates == 0) {
      COOPGNN_IO_FAIL(
          "dataset '{}': no node with at least 2 out-neighbours{} to hold an edge out from",
          in.name, in.valid.empty() && in.test.empty() ? "" : " in its validation/test split");
    }
  }

  // Training positives and the training graph.
  for (vid_t u = 0; u < n; ++u) {
    auto const nb = full.neighbours(u);
    for (std::size_t i = 0; i < nb.size(); ++i) {
      std::int64_t const p = full.offsets[u] + static_cast<std::int64_t>(i);
      vid_t const v = nb[i];
      if (v == u || removed[p] || (sym && v < u)) continue;
      if (sym && held[static_cast<std::size_t>(full.find(v, u))]) continue;
      auto const [head, tail] = sym ? orient(orient_stream, u, v) : std::pair{u, v};
      lt.train.src.push_back(head);
      lt.train.dst.push_back(tail);
    }
  }
  dataset out;
  out.name = opt.name.empty() ? in.name : opt.name;
  out.num_nodes = n;
  for (std::size_t e = 0; e < in.src.size(); ++e) {
    if (removed[static_cast<std::size_t>(full.find(in.src[e], in.dst[e]))]) continue;
    out.src.push_back(in.src[e]);
    out.dst.push_back(in.dst[e]);
  }
  out.features = in.features;
  out.features16 = in.features16;  // 16-bit features stay 16-bit (written as '<f2')
  out.feature_type = in.feature_type;
  out.feature_cols = in.features_in_memory() ? in.feature_dim() : 0;
  out.labels = in.labels;
  out.num_classes = in.num_classes;
  out.train = in.train;
  out.valid = in.valid;
  out.test = in.test;
  finish_split(out, std::move(lt), rep);
  if (report != nullptr) *report = rep;
  return out;
}

namespace {

/// Appends K distinct tails of query `query` (source u of relation r) to `out`: uniform over
/// [lo, hi) minus u and minus `taken` (u's true r-tails, ascending). See split_typed_edges.
/// `stamp` ([hi - lo], the caller's, zero at first) and `epoch` mark the tails drawn by this call
/// (O(1) per draw); dense sources (fewer than 2 K or 1/16 of the range as candidates) draw from
/// the explicit candidate list instead of rejection.
void draw_typed_negatives(rng::stream s, vid_t u, vid_t lo, vid_t hi, std::span<const vid_t> taken,
                          std::int64_t k, std::uint64_t query, std::vector<std::uint32_t>& stamp,
                          std::uint32_t& epoch, std::vector<vid_t>& out) {
  if (k == 0) return;
  auto is_taken = [&](vid_t w) {
    return w == u || std::binary_search(taken.begin(), taken.end(), w);
  };
  std::int64_t excluded = 0;
  for (vid_t w : taken) excluded += w >= lo && w < hi && w != u ? 1 : 0;
  std::int64_t const m = (hi - lo) - excluded - (u >= lo && u < hi ? 1 : 0);
  if (m < k) {
    COOPGNN_IO_FAIL(
        "vertex {} has only {} candidate negatives of the destination type (vertices other than "
        "itself that it has no edge of the relation to) but {} per positive were asked for: "
        "lower --negatives",
        u, m, k);
  }
  std::size_t const begin = out.size();
  if (m > 2 * k && 16 * m >= hi - lo) {
    // Rejection (negative_sampler's rule: at least 1/16 of the range are candidates, so the
    // expected draws stay below 32 per negative); repeats are found by a stamp per vertex.
    std::uint32_t const tag = ++epoch;
    for (std::uint32_t a = 0; static_cast<std::int64_t>(out.size() - begin) < k; ++a) {
      auto const w4 = rng::draw4(s, query, a, 0);
      for (int h = 0; h < 2 && static_cast<std::int64_t>(out.size() - begin) < k; ++h) {
        vid_t const c = lo + below(join(w4[2 * h], w4[2 * h + 1]), hi - lo);
        auto& st = stamp[static_cast<std::size_t>(c - lo)];
        if (st == tag || is_taken(c)) continue;
        st = tag;
        out.push_back(c);
      }
    }
    return;
  }
  std::vector<vid_t> pool;
  for (vid_t w = lo; w < hi; ++w) {
    if (!is_taken(w)) pool.push_back(w);
  }
  for (std::int64_t i = 0; i < k; ++i) {
    auto const w4 = rng::draw4(s, query, kDenseSub | static_cast<std::uint32_t>(i), 0);
    std::int64_t const pick = i + below(join(w4[0], w4[1]), m - i);
    std::swap(pool[static_cast<std::size_t>(i)], pool[static_cast<std::size_t>(pick)]);
    out.push_back(pool[static_cast<std::size_t>(i)]);
  }
}

}  // namespace

dataset split_typed_edges(const dataset& in, const split_options& opt, split_report* report) {
  validate_dataset(in, fmt::format("dataset '{}'", in.name));
  COOPGNN_EXPECTS(in.hetero.has_value(), "split_typed_edges: dataset '{}' is untyped", in.name);
  const hetero_schema& h = *in.hetero;
  std::int64_t const r = h.edge_type_index(opt.relation);
  if (r < 0) {
    COOPGNN_IO_FAIL("--relation '{}' is not an edge type of dataset '{}': its edge types are {}",
                    opt.relation, in.name, fmt::join(h.edge_types, ", "));
  }
  if (opt.scheme != split_scheme::random) {
    COOPGNN_IO_FAIL("--relation: typed splits take --scheme random only");
  }
  if (opt.negatives < -1) {
    COOPGNN_IO_FAIL("--negatives {} must be >= 0 (or -1 for the scheme's default)", opt.negatives);
  }
  double const sum = opt.fractions[0] + opt.fractions[1] + opt.fractions[2];
  if (std::any_of(opt.fractions.begin(), opt.fractions.end(), [](double f) { return f < 0; }) ||
      std::abs(sum - 1.0) > 1e-6) {
    COOPGNN_IO_FAIL("--fractions {},{},{}: need three non-negative fractions summing to 1",
                    opt.fractions[0], opt.fractions[1], opt.fractions[2]);
  }
  std::int64_t const k = opt.negatives >= 0 ? opt.negatives : 100;
  std::int64_t const rev = reverse_edge_type(h, r);
  auto const parts = split_edge_type(h.edge_types[static_cast<std::size_t>(r)], "--relation");
  auto const dt = static_cast<std::size_t>(h.node_type_index(parts[2]));
  vid_t const lo = h.node_offsets[dt];
  vid_t const hi = h.node_offsets[dt + 1];
  vid_t const n = in.num_nodes;
  // Adjacency of relation r (and of its reverse) over global ids.
  std::vector<vid_t> rs, rd, vs, vd;
  for (std::size_t e = 0; e < in.src.size(); ++e) {
    if (h.edge_type[e] == r) {
      rs.push_back(in.src[e]);
      rd.push_back(in.dst[e]);
    }
    if (h.edge_type[e] == rev) {
      vs.push_back(in.src[e]);
      vd.push_back(in.dst[e]);
    }
  }
  out_adjacency const full = build_out_adjacency(n, rs, rd);
  out_adjacency const back = build_out_adjacency(n, vs, vd);
  bool const self_rev = rev == r;
  // Candidates in (u, v) order.
  std::vector<std::pair<vid_t, vid_t>> cand;
  for (vid_t u = 0; u < n; ++u) {
    for (vid_t v : full.neighbours(u)) {
      if (v == u) continue;
      if (self_rev && v < u && full.has_edge(v, u)) continue;  // the pair {v, u} is counted once
      cand.emplace_back(u, v);
    }
  }
  auto const c = static_cast<std::int64_t>(cand.size());
  split_report rep;
  rep.negatives = k;
  rep.edges_in = in.num_edges();
  rep.repeats_removed = count_repeated_edges(in);
  rep.candidates = c;
  if (c == 0) {
    COOPGNN_IO_FAIL("dataset '{}': relation '{}' has no edges to split (only self-loops?)", in.name,
                    opt.relation);
  }
  std::vector<vid_t> const perm = keyed_permutation(c, opt.seed, rng::purpose::split, kSplitOrder);
  auto const nv =
      std::min<std::int64_t>(std::llround(opt.fractions[1] * static_cast<double>(c)), c);
  auto const nt =
      std::min<std::int64_t>(std::llround(opt.fractions[2] * static_cast<double>(c)), c - nv);
  std::vector<std::uint8_t> part(static_cast<std::size_t>(c), 0);  // 0 train, 1 valid, 2 test
  for (std::int64_t i = 0; i < nv + nt; ++i)
    part[static_cast<std::size_t>(perm[i])] = i < nv ? 1 : 2;
  // Removed arcs: positions in `full` (relation r) and in `back` (its reverse).
  std::vector<std::uint8_t> gone(full.targets.size(), 0);
  std::vector<std::uint8_t> gone_back(back.targets.size(), 0);
  link_task lt;
  lt.name = "link_prediction";
  rng::stream const ns = rng::make_stream(opt.seed, rng::purpose::split, kNegatives);
  std::vector<vid_t> scratch;
  std::vector<std::uint32_t> stamp(static_cast<std::size_t>(hi - lo), 0);
  std::uint32_t epoch = 0;
  rng::stream const orient_stream = rng::make_stream(opt.seed, rng::purpose::split, kOrient);
  for (std::int64_t i = 0; i < c; ++i) {
    auto const [u, v] = cand[static_cast<std::size_t>(i)];
    // A pair present in both directions of a self-reverse relation was listed once as (u < v):
    // a keyed coin picks its stored orientation, as split_edges does for symmetric graphs.
    auto const [head, tail] =
        self_rev && full.has_edge(v, u) ? orient(orient_stream, u, v) : std::pair{u, v};
    auto const pi = static_cast<std::size_t>(i);
    if (part[pi] == 0) {
      lt.train.src.push_back(head);
      lt.train.dst.push_back(tail);
      lt.train.relation.push_back(static_cast<std::int32_t>(r));
      continue;
    }
    gone[static_cast<std::size_t>(full.find(head, tail))] = 1;
    if (!opt.keep_reverse && rev >= 0) {
      if (std::int64_t const q = back.find(tail, head); q >= 0) {
        gone_back[static_cast<std::size_t>(q)] = 1;
        if (self_rev) gone[static_cast<std::size_t>(q)] = 1;
      }
    }
    pair_set& set = part[pi] == 1 ? lt.valid : lt.test;
    auto const q = k > 0 ? (set.indexes.empty() ? 0 : set.indexes.back() + 1) : 0;
    scratch.clear();
    draw_typed_negatives(ns, head, lo, hi, full.neighbours(head), k, static_cast<std::uint64_t>(i),
                         stamp, epoch, scratch);
    for (std::size_t j = 0; j <= scratch.size(); ++j) {
      set.src.push_back(head);
      set.dst.push_back(j == 0 ? tail : scratch[j - 1]);
      set.relation.push_back(static_cast<std::int32_t>(r));
      if (k > 0) {
        set.labels.push_back(j == 0 ? 1 : 0);
        set.indexes.push_back(q);
      }
    }
  }
  dataset out = in;
  out.name = opt.name.empty() ? in.name : opt.name;
  out.src.clear();
  out.dst.clear();
  out.hetero->edge_type.clear();
  for (std::size_t e = 0; e < in.src.size(); ++e) {
    std::int32_t const et = h.edge_type[e];
    bool drop = false;
    if (et == r) drop = gone[static_cast<std::size_t>(full.find(in.src[e], in.dst[e]))] != 0;
    if (!drop && et == rev) {
      drop = gone_back[static_cast<std::size_t>(back.find(in.src[e], in.dst[e]))] != 0;
    }
    if (drop) continue;
    out.src.push_back(in.src[e]);
    out.dst.push_back(in.dst[e]);
    out.hetero->edge_type.push_back(et);
  }
  finish_split(out, std::move(lt), rep);
  out.link_first = false;
  validate_dataset(out, fmt::format("split of dataset '{}'", in.name));
  if (report != nullptr) *report = rep;
  return out;
}

}  // namespace coopgnn
