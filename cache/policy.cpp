// Residency policies of the per-PE CPU feature cache: see policy.hpp for each algorithm.
#include "cache/policy.hpp"

#include <algorithm>
#include <utility>

#include "cache/set_assoc.hpp"
#include "runtime/core/error.hpp"

namespace coopgnn {

namespace detail {

namespace {

// splitmix64's finaliser: spreads consecutive vertex ids over the buckets.
std::uint64_t mix(std::int64_t key) {
  auto z = static_cast<std::uint64_t>(key);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

}  // namespace

// ---- key_slot_map ------------------------------------------------------------------------------

std::int64_t key_slot_map::locate(std::int64_t key) const {
  if (buckets_.empty()) return no_slot;
  for (auto i = mix(key) & mask_;; i = (i + 1) & mask_) {
    auto const& b = buckets_[i];
    if (b.slot == no_slot) return no_slot;
    if (b.key == key) return static_cast<std::int64_t>(i);
  }
}

std::int64_t key_slot_map::find(std::int64_t key) const {
  auto const i = locate(key);
  return i == no_slot ? no_slot : buckets_[static_cast<std::size_t>(i)].slot;
}

void key_slot_map::insert(std::int64_t key, std::int64_t slot) {
  if (static_cast<std::size_t>(size_ + 1) * 2 > buckets_.size()) grow();
  auto i = mix(key) & mask_;
  while (buckets_[i].slot != no_slot) i = (i + 1) & mask_;
  buckets_[i] = {key, slot};
  ++size_;
}

void key_slot_map::assign(std::int64_t key, std::int64_t slot) {
  buckets_[static_cast<std::size_t>(locate(key))].slot = slot;
}

bool key_slot_map::erase(std::int64_t key) {
  auto const found = locate(key);
  if (found == no_slot) return false;
  // Backward-shift deletion: pull later members of the probe run into the hole unless their home
  // bucket lies cyclically in (hole, j], where they must stay to remain reachable.
  auto hole = static_cast<std::uint64_t>(found);
  for (auto j = (hole + 1) & mask_; buckets_[j].slot != no_slot; j = (j + 1) & mask_) {
    auto const home = mix(buckets_[j].key) & mask_;
    bool const stays = hole <= j ? (hole < home && home <= j) : (hole < home || home <= j);
    if (!stays) {
      buckets_[hole] = buckets_[j];
      hole = j;
    }
  }
  buckets_[hole].slot = no_slot;
  --size_;
  return true;
}

void key_slot_map::grow() {
  std::vector<bucket> old = std::exchange(buckets_, {});
  buckets_.resize(std::max<std::size_t>(16, old.size() * 2));
  mask_ = buckets_.size() - 1;
  for (auto const& b : old) {
    if (b.slot == no_slot) continue;
    auto i = mix(b.key) & mask_;
    while (buckets_[i].slot != no_slot) i = (i + 1) & mask_;
    buckets_[i] = b;
  }
}

// ---- node_pool ---------------------------------------------------------------------------------

std::int64_t node_pool::acquire(std::int64_t key) {
  std::int64_t id = free_head_;
  if (id != no_slot) {
    free_head_ = nodes_[at(id)].older;
  } else {
    id = static_cast<std::int64_t>(nodes_.size());
    nodes_.emplace_back();
  }
  nodes_[at(id)] = node{key, no_slot, no_slot, 0, 0};
  return id;
}

void node_pool::release(std::int64_t id) {
  nodes_[at(id)].older = free_head_;
  free_head_ = id;
}

void node_pool::push_head(node_list& list, std::int64_t id) {
  auto& n = nodes_[at(id)];
  n.newer = no_slot;
  n.older = list.head;
  if (list.head != no_slot) {
    nodes_[at(list.head)].newer = id;
  } else {
    list.tail = id;
  }
  list.head = id;
  ++list.size;
}

void node_pool::unlink(node_list& list, std::int64_t id) {
  auto& n = nodes_[at(id)];
  if (n.newer != no_slot) {
    nodes_[at(n.newer)].older = n.older;
  } else {
    list.head = n.older;
  }
  if (n.older != no_slot) {
    nodes_[at(n.older)].newer = n.newer;
  } else {
    list.tail = n.newer;
  }
  n.newer = n.older = no_slot;
  --list.size;
}

}  // namespace detail

// ---- cache_policy ------------------------------------------------------------------------------

cache_policy::cache_policy(std::int64_t capacity_rows) : capacity_(capacity_rows) {
  COOPGNN_EXPECTS(capacity_rows >= 0, "cache policy: capacity_rows must be >= 0, got {}",
                  capacity_rows);
}

void cache_policy::access_batch(std::span<const std::int64_t> keys, std::span<std::uint8_t> hit) {
  COOPGNN_EXPECTS(hit.size() == keys.size(), "cache_policy::access_batch: {} keys but {} hit flags",
                  keys.size(), hit.size());
  begin_batch();
  for (std::size_t i = 0; i < keys.size(); ++i) hit[i] = query(keys[i]) ? 1 : 0;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    if (hit[i] == 0) admit(keys[i]);
  }
}

double cache_policy::miss_rate() const {
  auto const total = hits_ + misses_;
  return total == 0 ? 0.0 : static_cast<double>(misses_) / static_cast<double>(total);
}

// ---- LRU ---------------------------------------------------------------------------------------

lru_policy::lru_policy(std::int64_t capacity_rows) : cache_policy(capacity_rows) {}

bool lru_policy::contains(std::int64_t key) const { return map_.find(key) != detail::no_slot; }

bool lru_policy::query(std::int64_t key) {
  if (auto const id = map_.find(key); id != detail::no_slot) {
    pool_.unlink(list_, id);
    pool_.push_head(list_, id);
    return record(true);
  }
  return record(false);
}

void lru_policy::admit(std::int64_t key) {
  if (capacity() == 0 || map_.find(key) != detail::no_slot) return;
  std::int64_t id;
  if (list_.size == capacity()) {  // evict the least recently used key; its node is recycled
    id = list_.tail;
    pool_.unlink(list_, id);
    map_.erase(pool_.key(id));
    pool_.release(id);
  }
  id = pool_.acquire(key);
  pool_.push_head(list_, id);
  map_.insert(key, id);
}

// ---- CLOCK -------------------------------------------------------------------------------------

clock_policy::clock_policy(std::int64_t capacity_rows) : cache_policy(capacity_rows) {}

bool clock_policy::contains(std::int64_t key) const { return map_.find(key) != detail::no_slot; }

bool clock_policy::query(std::int64_t key) {
  if (auto const slot = map_.find(key); slot != detail::no_slot) {
    referenced_[static_cast<std::size_t>(slot)] = 1;
    return record(true);
  }
  return record(false);
}

void clock_policy::admit(std::int64_t key) {
  if (capacity() == 0 || map_.find(key) != detail::no_slot) return;
  if (size() < capacity()) {  // filling: slots in order, the hand stays on slot 0 (the oldest)
    map_.insert(key, size());
    keys_.push_back(key);
    referenced_.push_back(0);
    return;
  }
  while (referenced_[static_cast<std::size_t>(hand_)] != 0) {
    referenced_[static_cast<std::size_t>(hand_)] = 0;
    hand_ = hand_ + 1 == capacity() ? 0 : hand_ + 1;
  }
  auto const victim = static_cast<std::size_t>(hand_);
  map_.erase(keys_[victim]);
  keys_[victim] = key;
  map_.insert(key, hand_);
  hand_ = hand_ + 1 == capacity() ? 0 : hand_ + 1;
}

// ---- SIEVE -------------------------------------------------------------------------------------

sieve_policy::sieve_policy(std::int64_t capacity_rows) : cache_policy(capacity_rows) {}

bool sieve_policy::contains(std::int64_t key) const { return map_.find(key) != detail::no_slot; }

bool sieve_policy::query(std::int64_t key) {
  if (auto const id = map_.find(key); id != detail::no_slot) {
    pool_.set_count(id, 1);  // visited
    return record(true);
  }
  return record(false);
}

void sieve_policy::admit(std::int64_t key) {
  if (capacity() == 0 || map_.find(key) != detail::no_slot) return;
  if (queue_.size == capacity()) evict();
  auto const id = pool_.acquire(key);  // unvisited
  pool_.push_head(queue_, id);
  map_.insert(key, id);
}

void sieve_policy::evict() {
  auto o = hand_ != detail::no_slot ? hand_ : queue_.tail;
  while (pool_.count(o) != 0) {
    pool_.set_count(o, 0);
    o = pool_.newer(o) != detail::no_slot ? pool_.newer(o) : queue_.tail;
  }
  hand_ = pool_.newer(o);
  pool_.unlink(queue_, o);
  map_.erase(pool_.key(o));
  pool_.release(o);
}

// ---- S3-FIFO -----------------------------------------------------------------------------------

namespace {
enum s3_queue : std::uint8_t { queue_small = 0, queue_main = 1, queue_ghost = 2 };
constexpr std::uint8_t s3_max_freq = 3;
}  // namespace

s3fifo_policy::s3fifo_policy(std::int64_t capacity_rows)
    : cache_policy(capacity_rows),
      small_target_(capacity_rows > 0 ? std::max<std::int64_t>(1, capacity_rows / 10) : 0) {}

bool s3fifo_policy::contains(std::int64_t key) const {
  auto const id = map_.find(key);
  return id != detail::no_slot && pool_.tag(id) != queue_ghost;
}

bool s3fifo_policy::in_ghost(std::int64_t key) const {
  auto const id = map_.find(key);
  return id != detail::no_slot && pool_.tag(id) == queue_ghost;
}

bool s3fifo_policy::query(std::int64_t key) {
  if (auto const id = map_.find(key); id != detail::no_slot && pool_.tag(id) != queue_ghost) {
    pool_.set_count(id, static_cast<std::uint8_t>(std::min<int>(pool_.count(id) + 1, s3_max_freq)));
    return record(true);
  }
  return record(false);
}

void s3fifo_policy::admit(std::int64_t key) {
  if (capacity() == 0 || contains(key)) return;
  while (size() >= capacity()) evict();
  // Look G up only now: the eviction above may just have pushed this key's ghost out of G.
  if (auto const ghost = map_.find(key); ghost != detail::no_slot) {
    pool_.unlink(ghost_, ghost);
    pool_.set_count(ghost, 0);
    pool_.set_tag(ghost, queue_main);
    pool_.push_head(main_, ghost);
    return;
  }
  auto const id = pool_.acquire(key);  // freq 0, tag queue_small
  pool_.push_head(small_, id);
  map_.insert(key, id);
}

void s3fifo_policy::evict() {
  if (small_.size >= small_target_) {
    evict_small();
  } else {
    evict_main();
  }
}

void s3fifo_policy::evict_small() {
  while (small_.size > 0) {
    auto const t = small_.tail;
    pool_.unlink(small_, t);
    if (pool_.count(t) > 1) {
      pool_.set_tag(t, queue_main);
      pool_.push_head(main_, t);
      if (main_.size > main_target()) evict_main();
    } else {
      push_ghost(t);
      return;
    }
  }
}

void s3fifo_policy::evict_main() {
  while (main_.size > 0) {
    auto const t = main_.tail;
    pool_.unlink(main_, t);
    if (auto const f = pool_.count(t); f > 0) {
      pool_.set_count(t, static_cast<std::uint8_t>(f - 1));
      pool_.push_head(main_, t);
    } else {
      map_.erase(pool_.key(t));
      pool_.release(t);
      return;
    }
  }
}

void s3fifo_policy::push_ghost(std::int64_t id) {
  if (ghost_capacity() == 0) {
    map_.erase(pool_.key(id));
    pool_.release(id);
    return;
  }
  if (ghost_.size == ghost_capacity()) {
    auto const oldest = ghost_.tail;
    pool_.unlink(ghost_, oldest);
    map_.erase(pool_.key(oldest));
    pool_.release(oldest);
  }
  pool_.set_count(id, 0);
  pool_.set_tag(id, queue_ghost);
  pool_.push_head(ghost_, id);
}

// ---- factory -----------------------------------------------------------------------------------

std::string to_string(cache_policy_kind k) {
  switch (k) {
    case cache_policy_kind::none:
      return "none";
    case cache_policy_kind::lru:
      return "lru";
    case cache_policy_kind::clock:
      return "clock";
    case cache_policy_kind::sieve:
      return "sieve";
    case cache_policy_kind::s3fifo:
      return "s3fifo";
    case cache_policy_kind::setassoc:
      return "setassoc";
  }
  return "none";
}

cache_policy_kind parse_cache_policy_kind(const std::string& name) {
  if (name == "none") return cache_policy_kind::none;
  if (name == "lru") return cache_policy_kind::lru;
  if (name == "clock") return cache_policy_kind::clock;
  if (name == "sieve") return cache_policy_kind::sieve;
  if (name == "s3fifo" || name == "s3-fifo") return cache_policy_kind::s3fifo;
  if (name == "setassoc") return cache_policy_kind::setassoc;
  COOPGNN_FAIL("unknown cache policy '{}' (expected none, lru, clock, sieve, s3fifo, setassoc)",
               name);
}

std::unique_ptr<cache_policy> make_cache_policy(const std::string& name,
                                                std::int64_t capacity_rows) {
  COOPGNN_EXPECTS(capacity_rows >= 0,
                  "make_cache_policy: capacity_rows must be >= 0, got {} (policy '{}')",
                  capacity_rows, name);
  if (name == "lru") return std::make_unique<lru_policy>(capacity_rows);
  if (name == "clock") return std::make_unique<clock_policy>(capacity_rows);
  if (name == "sieve") return std::make_unique<sieve_policy>(capacity_rows);
  if (name == "s3fifo" || name == "s3-fifo") return std::make_unique<s3fifo_policy>(capacity_rows);
  if (name == "setassoc") return std::make_unique<set_assoc_policy>(capacity_rows);
  COOPGNN_FAIL(
      "make_cache_policy: unknown cache policy '{}' (expected lru, clock, sieve, s3fifo, setassoc)",
      name);
}

}  // namespace coopgnn
