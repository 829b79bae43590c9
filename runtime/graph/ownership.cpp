#include "runtime/graph/ownership.hpp"

#include <algorithm>
#include <numeric>

#include "runtime/core/error.hpp"
#include "runtime/core/rng.hpp"

namespace coopgnn {

ownership::ownership(vid_t num_nodes, int num_pes, std::uint64_t seed) : num_pes_(num_pes) {
  COOPGNN_EXPECTS(num_pes >= 1 && num_pes <= 65535, "number of PEs {} is outside [1, 65535]",
                  num_pes);
  COOPGNN_EXPECTS(num_nodes >= 0, "num_nodes {} is negative", num_nodes);
  auto const st = rng::make_stream(seed, rng::purpose::ownership, 0);
  std::vector<std::pair<std::uint64_t, vid_t>> keyed(static_cast<std::size_t>(num_nodes));
  for (vid_t v = 0; v < num_nodes; ++v) {
    auto const r = rng::draw4(st, static_cast<std::uint64_t>(v), 0, 0);
    keyed[v] = {(static_cast<std::uint64_t>(r[0]) << 32) | r[1], v};
  }
  std::sort(keyed.begin(), keyed.end());
  owner_.resize(static_cast<std::size_t>(num_nodes));
  for (vid_t pos = 0; pos < num_nodes; ++pos) {
    owner_[keyed[pos].second] =
        static_cast<std::uint16_t>((static_cast<__int128>(pos) * num_pes) / num_nodes);
  }
}

std::vector<vid_t> ownership::counts() const {
  std::vector<vid_t> c(static_cast<std::size_t>(num_pes_), 0);
  for (auto o : owner_) ++c[o];
  return c;
}

}  // namespace coopgnn
