#include "runtime/graph/edges.hpp"

#include <algorithm>
#include <utility>

#include "runtime/core/error.hpp"

namespace coopgnn {

// ---- edge cleaning ---------------------------------------------------------------------------

edge_stats clean_edges(std::vector<vid_t>& src, std::vector<vid_t>& dst, bool symmetrize,
                       bool drop_self_loops) {
  COOPGNN_EXPECTS(src.size() == dst.size(), "clean_edges: {} sources but {} destinations",
                  src.size(), dst.size());
  edge_stats st;
  st.edges_read = static_cast<std::int64_t>(src.size());
  std::vector<std::pair<vid_t, vid_t>> e;
  e.reserve(src.size() * (symmetrize ? 2 : 1));
  for (std::size_t i = 0; i < src.size(); ++i) {
    if (src[i] == dst[i] && drop_self_loops) {
      ++st.self_loops_dropped;
      continue;
    }
    e.emplace_back(src[i], dst[i]);
  }
  if (symmetrize) {
    std::size_t const m = e.size();
    for (std::size_t i = 0; i < m; ++i) {
      if (e[i].first != e[i].second) {
        e.emplace_back(e[i].second, e[i].first);
        ++st.reverse_edges_added;
      }
    }
  }
  std::sort(e.begin(), e.end());
  auto const last = std::unique(e.begin(), e.end());
  st.duplicates_removed = static_cast<std::int64_t>(e.end() - last);
  e.erase(last, e.end());
  src.resize(e.size());
  dst.resize(e.size());
  for (std::size_t i = 0; i < e.size(); ++i) {
    src[i] = e[i].first;
    dst[i] = e[i].second;
  }
  st.edges_final = static_cast<std::int64_t>(e.size());
  return st;
}

}  // namespace coopgnn
