#include "runtime/graph/edges.hpp"

#include <algorithm>

#include "runtime/core/error.hpp"

namespace coopgnn {

void for_each_edge_chunk(std::int64_t num_edges, const edge_chunk_source& source,
                         const std::function<void(std::int64_t first, std::span<const vid_t> src,
                                                  std::span<const vid_t> dst)>& f) {
  auto const chunk = static_cast<std::size_t>(std::min(edge_chunk_edges, num_edges));
  std::vector<vid_t> src(chunk);
  std::vector<vid_t> dst(chunk);
  for (std::int64_t first = 0; first < num_edges; first += edge_chunk_edges) {
    auto const k = static_cast<std::size_t>(std::min(edge_chunk_edges, num_edges - first));
    std::span<vid_t> const s(src.data(), k);
    std::span<vid_t> const d(dst.data(), k);
    source(first, s, d);
    f(first, s, d);
  }
}

// ---- edge cleaning ---------------------------------------------------------------------------

edge_rows clean_edge_rows(vid_t num_nodes, std::int64_t num_drawn, const edge_chunk_source& draw,
                          bool symmetrize, bool drop_self_loops, edge_stats* stats) {
  COOPGNN_EXPECTS(num_nodes >= 0 && num_nodes <= (vid_t{1} << 32),
                  "clean_edge_rows: num_nodes = {} must be in [0, 2^32] (32-bit targets)",
                  num_nodes);
  COOPGNN_EXPECTS(num_drawn >= 0, "clean_edge_rows: num_drawn = {} is negative", num_drawn);
  edge_rows rows;
  rows.num_nodes = num_nodes;
  rows.offsets.assign(static_cast<std::size_t>(num_nodes) + 1, 0);
  // Calls f(u, v) for every drawn edge, in order, one chunk at a time.
  auto pass = [&](auto&& f) {
    for_each_edge_chunk(
        num_drawn, draw,
        [&](std::int64_t first, std::span<const vid_t> s, std::span<const vid_t> d) {
          for (std::size_t i = 0; i < s.size(); ++i) {
            COOPGNN_EXPECTS(s[i] >= 0 && s[i] < num_nodes && d[i] >= 0 && d[i] < num_nodes,
                            "edge {} ({} -> {}) has a vertex id outside [0, {})",
                            first + static_cast<std::int64_t>(i), s[i], d[i], num_nodes);
            f(s[i], d[i]);
          }
        });
  };
  // Which (row, target) entries an edge u -> v makes: the edge itself unless it is a dropped
  // self-loop, and its reverse when symmetrizing a non-loop.
  auto entries = [&](vid_t u, vid_t v, auto&& put) {
    if (u == v) {
      if (!drop_self_loops) put(u, v);
      return;
    }
    put(u, v);
    if (symmetrize) put(v, u);
  };
  edge_stats st;
  st.edges_read = num_drawn;
  // Pass 1: row sizes (offsets[u + 1] counts row u).
  pass([&](vid_t u, vid_t v) {
    if (u == v && drop_self_loops) ++st.self_loops_dropped;
    if (u != v && symmetrize) ++st.reverse_edges_added;
    entries(u, v, [&](vid_t r, vid_t) { ++rows.offsets[static_cast<std::size_t>(r) + 1]; });
  });
  for (vid_t v = 0; v < num_nodes; ++v) rows.offsets[v + 1] += rows.offsets[v];
  rows.targets.resize(static_cast<std::size_t>(rows.offsets[num_nodes]));
  // Pass 2: offsets[u] is row u's next free slot, so it ends at the start of row u + 1.
  pass([&](vid_t u, vid_t v) {
    entries(u, v, [&](vid_t r, vid_t t) {
      rows.targets[static_cast<std::size_t>(rows.offsets[r]++)] = static_cast<std::uint32_t>(t);
    });
  });
  for (vid_t v = num_nodes; v > 0; --v) rows.offsets[v] = rows.offsets[v - 1];
  rows.offsets[0] = 0;
  // Sort each row and drop its repeats, compacting in place.
  eid_t out = 0;
  for (vid_t v = 0; v < num_nodes; ++v) {
    auto const begin = rows.targets.begin() + rows.offsets[v];
    auto const end = rows.targets.begin() + rows.offsets[v + 1];
    std::sort(begin, end);
    auto const last = std::unique(begin, end);
    rows.offsets[v] = out;
    out = std::copy(begin, last, rows.targets.begin() + out) - rows.targets.begin();
  }
  rows.offsets[static_cast<std::size_t>(num_nodes)] = out;
  st.duplicates_removed = static_cast<std::int64_t>(rows.targets.size()) - out;
  rows.targets.resize(static_cast<std::size_t>(out));
  st.edges_final = out;
  if (stats != nullptr) *stats = st;
  return rows;
}

void expand_edge_rows(const edge_rows& rows, std::vector<vid_t>& src, std::vector<vid_t>& dst) {
  auto const m = static_cast<std::size_t>(rows.num_edges());
  src.clear();  // nothing to copy when the vectors grow
  dst.clear();
  src.resize(m);
  dst.resize(m);
  for (vid_t u = 0; u < rows.num_nodes; ++u) {
    for (eid_t e = rows.offsets[u]; e < rows.offsets[u + 1]; ++e) {
      src[static_cast<std::size_t>(e)] = u;
      dst[static_cast<std::size_t>(e)] = rows.targets[static_cast<std::size_t>(e)];
    }
  }
}

edge_stats clean_edges(std::vector<vid_t>& src, std::vector<vid_t>& dst, bool symmetrize,
                       bool drop_self_loops) {
  COOPGNN_EXPECTS(src.size() == dst.size(), "clean_edges: {} sources but {} destinations",
                  src.size(), dst.size());
  vid_t n = 0;
  for (const std::vector<vid_t>* ids : {&src, &dst}) {
    for (std::size_t e = 0; e < ids->size(); ++e) {
      vid_t const v = (*ids)[e];
      COOPGNN_EXPECTS(v >= 0 && v < (vid_t{1} << 32),
                      "clean_edges: edge {} ({} -> {}) has a vertex id outside [0, 2^32)", e,
                      src[e], dst[e]);
      n = std::max(n, v + 1);
    }
  }
  edge_stats st;
  edge_rows const rows = clean_edge_rows(
      n, static_cast<std::int64_t>(src.size()),
      [&](std::int64_t first, std::span<vid_t> s, std::span<vid_t> d) {
        std::copy_n(src.begin() + first, s.size(), s.begin());
        std::copy_n(dst.begin() + first, d.size(), d.begin());
      },
      symmetrize, drop_self_loops, &st);
  // The input is no longer needed: free it before the output is allocated.
  std::vector<vid_t>().swap(src);
  std::vector<vid_t>().swap(dst);
  expand_edge_rows(rows, src, dst);
  return st;
}

}  // namespace coopgnn
