#include "runtime/graph/repeated_edges.hpp"

#include <algorithm>
#include <numeric>
#include <tuple>
#include <vector>

#include "runtime/core/error.hpp"

namespace coopgnn {

namespace {

/// [E] 1 for each edge of `ds` that repeats an earlier stored one (remove_repeated_edges' rule).
std::vector<std::uint8_t> repeated_edge_mask(const dataset& ds, std::int64_t& removed) {
  std::size_t const m = ds.src.size();
  COOPGNN_EXPECTS(ds.dst.size() == m, "remove_repeated_edges: {} sources and {} destinations", m,
                  ds.dst.size());
  const std::vector<std::int32_t>* types = ds.hetero ? &ds.hetero->edge_type : nullptr;
  COOPGNN_EXPECTS(types == nullptr || types->size() == m,
                  "remove_repeated_edges: {} edges and {} edge types", m,
                  types == nullptr ? 0 : types->size());
  auto key = [&](std::int64_t e) {
    auto const i = static_cast<std::size_t>(e);
    return std::tuple(ds.dst[i], types == nullptr ? 0 : (*types)[i], ds.src[i]);
  };
  std::vector<std::int64_t> order(m);
  std::iota(order.begin(), order.end(), std::int64_t{0});
  // Ties keep their stored order, so the first of each repeat comes first.
  std::stable_sort(order.begin(), order.end(),
                   [&](std::int64_t a, std::int64_t b) { return key(a) < key(b); });
  std::vector<std::uint8_t> repeat(m, 0);
  removed = 0;
  for (std::size_t i = 1; i < m; ++i) {
    if (key(order[i]) == key(order[i - 1])) {
      repeat[static_cast<std::size_t>(order[i])] = 1;
      ++removed;
    }
  }
  return repeat;
}

}  // namespace

std::int64_t count_repeated_edges(const dataset& ds) {
  std::int64_t removed = 0;
  (void)repeated_edge_mask(ds, removed);
  return removed;
}

std::int64_t remove_repeated_edges(dataset& ds) {
  std::int64_t removed = 0;
  std::vector<std::uint8_t> const repeat = repeated_edge_mask(ds, removed);
  std::size_t const m = ds.src.size();
  std::vector<std::int32_t>* types = ds.hetero ? &ds.hetero->edge_type : nullptr;
  if (removed == 0) return 0;
  std::size_t w = 0;
  for (std::size_t e = 0; e < m; ++e) {
    if (repeat[e] != 0) continue;
    ds.src[w] = ds.src[e];
    ds.dst[w] = ds.dst[e];
    if (types != nullptr) (*types)[w] = (*types)[e];
    ++w;
  }
  ds.src.resize(w);
  ds.dst.resize(w);
  if (types != nullptr) types->resize(w);
  return removed;
}

}  // namespace coopgnn
