#include "cache/set_assoc.hpp"

#include <algorithm>

#include "runtime/core/error.hpp"

namespace coopgnn {

set_assoc_geometry make_set_assoc_geometry(std::int64_t capacity_rows, std::int64_t ways) {
  COOPGNN_EXPECTS(capacity_rows >= 0, "set-associative cache: capacity {} rows must be >= 0",
                  capacity_rows);
  COOPGNN_EXPECTS(ways >= 1, "set-associative cache: ways {} must be >= 1", ways);
  set_assoc_geometry g;
  if (capacity_rows == 0) return g;
  g.ways = std::min(ways, capacity_rows);
  g.sets = capacity_rows / g.ways;
  return g;
}

set_assoc_policy::set_assoc_policy(std::int64_t capacity_rows, std::int64_t ways)
    : cache_policy(capacity_rows), geo_(make_set_assoc_geometry(capacity_rows, ways)) {
  auto const slots = static_cast<std::size_t>(geo_.sets * geo_.ways);
  keys_.assign(slots, 0);
  stamp_.assign(slots, 0);
}

std::int64_t set_assoc_policy::way_of(std::int64_t key) const {
  if (geo_.sets == 0) return -1;
  auto const base = geo_.set_of(key) * geo_.ways;
  for (std::int64_t w = 0; w < geo_.ways; ++w) {
    auto const s = static_cast<std::size_t>(base + w);
    if (stamp_[s] != 0 && keys_[s] == key) return w;
  }
  return -1;
}

bool set_assoc_policy::contains(std::int64_t key) const { return way_of(key) >= 0; }

bool set_assoc_policy::query(std::int64_t key) {
  auto const w = way_of(key);
  if (w < 0) return record(false);
  stamp_[static_cast<std::size_t>(geo_.set_of(key) * geo_.ways + w)] = clock_;
  return record(true);
}

void set_assoc_policy::admit(std::int64_t key) {
  if (geo_.sets == 0 || way_of(key) >= 0) return;
  auto const base = geo_.set_of(key) * geo_.ways;
  std::int64_t victim = 0;  // the lowest empty way (stamp 0 is the smallest), else the oldest
  for (std::int64_t w = 1; w < geo_.ways; ++w) {
    if (stamp_[static_cast<std::size_t>(base + w)] <
        stamp_[static_cast<std::size_t>(base + victim)]) {
      victim = w;
    }
  }
  auto const s = static_cast<std::size_t>(base + victim);
  if (stamp_[s] == 0) ++size_;
  keys_[s] = key;
  stamp_[s] = clock_;
}

}  // namespace coopgnn
