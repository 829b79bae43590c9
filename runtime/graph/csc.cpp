#include "runtime/graph/csc.hpp"

#include <algorithm>
#include <string>
#include <utility>

#include "runtime/core/error.hpp"
#include "runtime/graph/npy.hpp"

namespace coopgnn {

csc_graph build_csc(vid_t num_nodes, std::int64_t num_edges, const edge_chunk_source& edges) {
  COOPGNN_EXPECTS(num_nodes >= 0, "num_nodes = {} is negative", num_nodes);
  COOPGNN_EXPECTS(num_edges >= 0, "num_edges = {} is negative", num_edges);
  csc_graph g;
  g.num_nodes = num_nodes;
  g.indptr.assign(static_cast<std::size_t>(num_nodes) + 1, 0);
  // Pass 1: in-degrees (indptr[v + 1] counts column v), checking every id.
  for_each_edge_chunk(
      num_edges, edges,
      [&](std::int64_t first, std::span<const vid_t> src, std::span<const vid_t> dst) {
        for (std::size_t i = 0; i < src.size(); ++i) {
          COOPGNN_EXPECTS(src[i] >= 0 && src[i] < num_nodes && dst[i] >= 0 && dst[i] < num_nodes,
                          "edge {} ({} -> {}) has a vertex id outside [0, {})",
                          first + static_cast<std::int64_t>(i), src[i], dst[i], num_nodes);
          ++g.indptr[dst[i] + 1];
        }
      });
  for (vid_t v = 0; v < num_nodes; ++v) g.indptr[v + 1] += g.indptr[v];
  // Pass 2: a counting sort straight into indices; indptr[v] is column v's next free slot, so
  // it ends at the start of column v + 1 and is shifted back afterwards.
  g.indices.resize(static_cast<std::size_t>(num_edges));
  for_each_edge_chunk(num_edges, edges,
                      [&](std::int64_t, std::span<const vid_t> src, std::span<const vid_t> dst) {
                        for (std::size_t i = 0; i < src.size(); ++i) {
                          g.indices[static_cast<std::size_t>(g.indptr[dst[i]]++)] = src[i];
                        }
                      });
  for (vid_t v = num_nodes; v > 0; --v) g.indptr[v] = g.indptr[v - 1];
  g.indptr[0] = 0;
  // Sort each list and drop repeated edges in place (a multigraph would sample an edge twice).
  eid_t out = 0;
  for (vid_t v = 0; v < num_nodes; ++v) {
    auto const begin = g.indices.begin() + g.indptr[v];
    auto const end = g.indices.begin() + g.indptr[v + 1];
    std::sort(begin, end);
    auto const last = std::unique(begin, end);
    g.indptr[v] = out;
    out = std::copy(begin, last, g.indices.begin() + out) - g.indices.begin();
  }
  g.indptr[num_nodes] = out;
  g.indices.resize(static_cast<std::size_t>(out));
  return g;
}

csc_graph build_csc(vid_t num_nodes, std::span<const vid_t> src, std::span<const vid_t> dst) {
  COOPGNN_EXPECTS(src.size() == dst.size(), "edge list has {} sources but {} destinations",
                  src.size(), dst.size());
  return build_csc(num_nodes, static_cast<std::int64_t>(src.size()),
                   [&](std::int64_t first, std::span<vid_t> s, std::span<vid_t> d) {
                     std::copy_n(src.begin() + first, s.size(), s.begin());
                     std::copy_n(dst.begin() + first, d.size(), d.begin());
                   });
}

csc_graph read_edge_csc(vid_t num_nodes, const std::filesystem::path& edge_file) {
  npy_two_row_reader reader(edge_file);
  std::string const what = edge_file.string();
  return build_csc(
      num_nodes, reader.columns(), [&](std::int64_t first, std::span<vid_t> s, std::span<vid_t> d) {
        reader.read(first, s, d);
        for (auto [ids, name] : {std::pair{s, "edge source"}, std::pair{d, "edge destination"}}) {
          for (std::size_t i = 0; i < ids.size(); ++i) {
            if (ids[i] < 0) {
              COOPGNN_IO_FAIL("{}: {} index {} = {} is a negative vertex id", what, name,
                              first + static_cast<std::int64_t>(i), ids[i]);
            }
            if (ids[i] >= num_nodes) {
              COOPGNN_IO_FAIL("{}: {} index {} = {} is out of range: ids must be < |V| = {}", what,
                              name, first + static_cast<std::int64_t>(i), ids[i], num_nodes);
            }
          }
        }
      });
}

csc_graph build_csc(vid_t num_nodes, std::span<const vid_t> src, std::span<const vid_t> dst,
                    std::span<const std::int32_t> edge_type, std::int32_t num_relations) {
  COOPGNN_EXPECTS(num_nodes >= 0, "num_nodes = {} is negative", num_nodes);
  COOPGNN_EXPECTS(num_relations >= 1, "num_relations = {} (>= 1 expected)", num_relations);
  COOPGNN_EXPECTS(src.size() == dst.size() && src.size() == edge_type.size(),
                  "edge list has {} sources, {} destinations and {} edge types", src.size(),
                  dst.size(), edge_type.size());
  csc_graph g;
  g.num_nodes = num_nodes;
  g.num_relations = num_relations;
  g.indptr.assign(static_cast<std::size_t>(num_nodes) + 1, 0);
  for (std::size_t e = 0; e < src.size(); ++e) {
    COOPGNN_EXPECTS(src[e] >= 0 && src[e] < num_nodes && dst[e] >= 0 && dst[e] < num_nodes,
                    "edge {} ({} -> {}) has a vertex id outside [0, {})", e, src[e], dst[e],
                    num_nodes);
    COOPGNN_EXPECTS(edge_type[e] >= 0 && edge_type[e] < num_relations,
                    "edge {} ({} -> {}) has relation {} outside [0, {})", e, src[e], dst[e],
                    edge_type[e], num_relations);
    ++g.indptr[dst[e] + 1];
  }
  for (vid_t v = 0; v < num_nodes; ++v) g.indptr[v + 1] += g.indptr[v];
  // (relation, source) pairs bucketed by destination, then sorted and deduplicated per column.
  std::vector<std::pair<std::int32_t, vid_t>> cols(src.size());
  std::vector<eid_t> fill(g.indptr.begin(), g.indptr.end() - 1);
  for (std::size_t e = 0; e < src.size(); ++e) cols[fill[dst[e]]++] = {edge_type[e], src[e]};
  eid_t out = 0;
  for (vid_t v = 0; v < num_nodes; ++v) {
    auto const begin = cols.begin() + g.indptr[v];
    auto const end = cols.begin() + g.indptr[v + 1];
    std::sort(begin, end);
    auto const last = std::unique(begin, end);
    g.indptr[v] = out;
    out = std::copy(begin, last, cols.begin() + out) - cols.begin();
  }
  g.indptr[num_nodes] = out;
  g.indices.resize(static_cast<std::size_t>(out));
  g.etype.resize(static_cast<std::size_t>(out));
  for (eid_t e = 0; e < out; ++e) {
    g.etype[e] = cols[e].first;
    g.indices[e] = cols[e].second;
  }
  return g;
}

eid_t max_in_degree(const csc_graph& g) {
  eid_t most = 0;
  for (vid_t v = 0; v < g.num_nodes; ++v) most = std::max(most, g.in_degree(v));
  return most;
}

void validate_csc(const csc_graph& g, const std::string& what) {
  if (g.num_nodes < 0) COOPGNN_IO_FAIL("{}: negative vertex count {}", what, g.num_nodes);
  if (static_cast<vid_t>(g.indptr.size()) != g.num_nodes + 1) {
    COOPGNN_IO_FAIL("{}: indptr has {} entries, expected |V| + 1 = {}", what, g.indptr.size(),
                    g.num_nodes + 1);
  }
  if (g.indptr[0] != 0) COOPGNN_IO_FAIL("{}: indptr[0] = {}, expected 0", what, g.indptr[0]);
  for (vid_t v = 0; v < g.num_nodes; ++v) {
    if (g.indptr[v + 1] < g.indptr[v]) {
      COOPGNN_IO_FAIL("{}: offsets decrease at vertex {} ({} > {})", what, v, g.indptr[v],
                      g.indptr[v + 1]);
    }
  }
  if (g.indptr.back() != g.num_edges()) {
    COOPGNN_IO_FAIL("{}: indptr ends at {} but there are {} edges", what, g.indptr.back(),
                    g.num_edges());
  }
  for (eid_t e = 0; e < g.num_edges(); ++e) {
    if (g.indices[e] < 0 || g.indices[e] >= g.num_nodes) {
      COOPGNN_IO_FAIL("{}: edge {} has vertex id {} outside [0, {})", what, e, g.indices[e],
                      g.num_nodes);
    }
  }
  if (g.num_relations < 1) {
    COOPGNN_IO_FAIL("{}: num_relations = {} (>= 1 expected)", what, g.num_relations);
  }
  if (g.etype.empty()) {
    if (g.num_relations > 1 && g.num_edges() > 0) {
      COOPGNN_IO_FAIL("{}: {} relations but no edge types for {} edges", what, g.num_relations,
                      g.num_edges());
    }
    return;
  }
  if (g.etype.size() != g.indices.size()) {
    COOPGNN_IO_FAIL("{}: {} edge types for {} edges", what, g.etype.size(), g.indices.size());
  }
  for (eid_t e = 0; e < g.num_edges(); ++e) {
    if (g.etype[e] < 0 || g.etype[e] >= g.num_relations) {
      COOPGNN_IO_FAIL("{}: edge {} has relation {} outside [0, {})", what, e, g.etype[e],
                      g.num_relations);
    }
  }
  for (vid_t v = 0; v < g.num_nodes; ++v) {
    for (eid_t e = g.indptr[v] + 1; e < g.indptr[v + 1]; ++e) {
      bool const ordered = g.etype[e - 1] < g.etype[e] ||
                           (g.etype[e - 1] == g.etype[e] && g.indices[e - 1] < g.indices[e]);
      if (!ordered) {
        COOPGNN_IO_FAIL(
            "{}: in-edges of vertex {} are not sorted by (relation, source) without repeats at "
            "edge {} ((relation {}, source {}) after (relation {}, source {}))",
            what, v, e, g.etype[e], g.indices[e], g.etype[e - 1], g.indices[e - 1]);
      }
    }
  }
}

}  // namespace coopgnn
