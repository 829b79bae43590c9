// Stratified vertex splits for readers whose data has no split of its own (formats/formats.hpp
// stratified_split).
#include <algorithm>
#include <cmath>
#include <map>
#include <vector>

#include "formats/formats.hpp"
#include "runtime/core/error.hpp"
#include "runtime/core/rng.hpp"
#include "runtime/graph/generate.hpp"

namespace coopgnn {

void stratified_split(dataset& ds, double train, double valid, std::uint64_t seed) {
  if (!(train >= 0 && valid >= 0 && train + valid <= 1.0 + 1e-12)) {
    COOPGNN_IO_FAIL(
        "--train-fraction {} and --valid-fraction {} must be in [0, 1] and sum to at most 1",
        train, valid);
  }
  if (static_cast<vid_t>(ds.labels.size()) != ds.num_nodes) {
    COOPGNN_IO_FAIL("dataset '{}': a stratified split needs one label per vertex ({} labels, {} "
                    "vertices)",
                    ds.name, ds.labels.size(), ds.num_nodes);
  }
  // The vertices of each class in the order of the keyed permutation keyed_split uses.
  std::map<std::int64_t, std::vector<vid_t>> by_class;
  for (vid_t v : keyed_permutation(ds.num_nodes, seed, rng::purpose::split, 0)) {
    std::int64_t const c = ds.labels[static_cast<std::size_t>(v)];
    if (c >= 0) by_class[c].push_back(v);
  }
  ds.train.clear();
  ds.valid.clear();
  ds.test.clear();
  for (const auto& [c, members] : by_class) {
    auto const n = static_cast<double>(members.size());
    auto const ntrain = std::min(static_cast<std::size_t>(std::llround(n * train)), members.size());
    auto const nvalid = std::min(static_cast<std::size_t>(std::llround(n * valid)),
                                 members.size() - ntrain);
    auto const b = members.begin();
    ds.train.insert(ds.train.end(), b, b + static_cast<std::ptrdiff_t>(ntrain));
    ds.valid.insert(ds.valid.end(), b + static_cast<std::ptrdiff_t>(ntrain),
                    b + static_cast<std::ptrdiff_t>(ntrain + nvalid));
    ds.test.insert(ds.test.end(), b + static_cast<std::ptrdiff_t>(ntrain + nvalid), members.end());
  }
  std::sort(ds.train.begin(), ds.train.end());
  std::sort(ds.valid.begin(), ds.valid.end());
  std::sort(ds.test.begin(), ds.test.end());
}

}  // namespace coopgnn
