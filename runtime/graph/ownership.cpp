#include "runtime/graph/ownership.hpp"

#include <algorithm>
#include <numeric>

#include "runtime/core/error.hpp"
#include "runtime/core/rng.hpp"

namespace coopgnn {

ownership::ownership(vid_t num_nodes, int num_pes, std::uint64_t seed)
    : ownership(num_nodes, num_pes, seed, std::vector<vid_t>{0, num_nodes}) {}

ownership::ownership(vid_t num_nodes, int num_pes, std::uint64_t seed,
                     std::span<const vid_t> type_offsets)
    : num_pes_(num_pes) {
  COOPGNN_EXPECTS(num_pes >= 1 && num_pes <= 65535, "number of PEs {} is outside [1, 65535]",
                  num_pes);
  COOPGNN_EXPECTS(num_nodes >= 0, "num_nodes {} is negative", num_nodes);
  COOPGNN_EXPECTS(
      type_offsets.size() >= 2 && type_offsets.front() == 0 && type_offsets.back() == num_nodes,
      "ownership: node type offsets must run from 0 to |V| = {} ({} offsets given)", num_nodes,
      type_offsets.size());
  auto const st = rng::make_stream(seed, rng::purpose::ownership, 0);
  owner_.resize(static_cast<std::size_t>(num_nodes));
  std::vector<std::pair<std::uint64_t, vid_t>> keyed;
  for (std::size_t t = 0; t + 1 < type_offsets.size(); ++t) {
    vid_t const lo = type_offsets[t], hi = type_offsets[t + 1];
    COOPGNN_EXPECTS(lo <= hi, "ownership: node type offsets decrease at type {} ({} > {})", t, lo,
                    hi);
    vid_t const n = hi - lo;
    // The keys are the global ids' (one permutation of all vertices, restricted to the type).
    keyed.resize(static_cast<std::size_t>(n));
    for (vid_t v = lo; v < hi; ++v) {
      auto const r = rng::draw4(st, static_cast<std::uint64_t>(v), 0, 0);
      keyed[static_cast<std::size_t>(v - lo)] = {(static_cast<std::uint64_t>(r[0]) << 32) | r[1],
                                                 v};
    }
    std::sort(keyed.begin(), keyed.end());
    for (vid_t pos = 0; pos < n; ++pos) {
      owner_[static_cast<std::size_t>(keyed[static_cast<std::size_t>(pos)].second)] =
          static_cast<std::uint16_t>((static_cast<__int128>(pos) * num_pes) / n);
    }
  }
}

std::vector<vid_t> ownership::counts() const {
  std::vector<vid_t> c(static_cast<std::size_t>(num_pes_), 0);
  for (auto o : owner_) ++c[o];
  return c;
}

}  // namespace coopgnn
