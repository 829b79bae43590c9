// Residency policies of the per-PE CPU feature cache (docs/design.md section 9;
// GraphBolt's CPU feature cache offers "s3-fifo", "sieve", "lru" and "clock").
//
// A policy only decides which vertex ids (int64 keys) are resident in a cache of `capacity` rows;
// the rows themselves live in the feature cache that owns the policy. Each access is one lookup:
// a hit leaves the resident set unchanged, a miss admits the key and, when the cache is full,
// evicts per the policy first. Every policy is deterministic: the same access sequence on a fresh
// policy of the same capacity gives the same hits and the same resident set. Policies are not
// thread-safe; each PE owns its own (per-PE state lives in the PE's context).
//
// Memory: O(capacity) (S3-FIFO: O(capacity + ghost entries)), grown on demand while the cache
// fills, so a large capacity costs nothing until it is used. Once the cache is full no access
// allocates.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace coopgnn {

namespace detail {

inline constexpr std::int64_t no_slot = -1;  ///< "absent" for slot ids and list links

/// Hash map from int64 keys to non-negative int64 slot ids: open addressing, linear probing,
/// backward-shift deletion (no tombstones), load factor <= 1/2, buckets grown by doubling. find,
/// insert and erase are O(1) expected. Allocates only when the number of live entries reaches a
/// new maximum, so a map whose entry count is bounded stops allocating once warm.
class key_slot_map {
 public:
  /// The slot of `key`, or no_slot when absent.
  [[nodiscard]] std::int64_t find(std::int64_t key) const;
  /// Adds key -> slot. Precondition (unchecked, internal): `key` absent, `slot` >= 0.
  void insert(std::int64_t key, std::int64_t slot);
  /// Overwrites the slot of a present key. Precondition (unchecked, internal): `key` present.
  void assign(std::int64_t key, std::int64_t slot);
  /// Removes `key`; returns whether it was present.
  bool erase(std::int64_t key);
  [[nodiscard]] std::int64_t size() const { return size_; }

 private:
  struct bucket {
    std::int64_t key = 0;
    std::int64_t slot = no_slot;  // no_slot marks an empty bucket
  };
  [[nodiscard]] std::int64_t locate(std::int64_t key) const;  // bucket index or no_slot
  void grow();
  std::vector<bucket> buckets_;
  std::uint64_t mask_ = 0;
  std::int64_t size_ = 0;
};

/// Head (newest), tail (oldest) and length of one FIFO/recency list threaded through a node_pool.
struct node_list {
  std::int64_t head = no_slot;
  std::int64_t tail = no_slot;
  std::int64_t size = 0;
};

/// Nodes of intrusive doubly linked lists kept in one vector: a node holds a key, links towards
/// the head ("newer") and the tail ("older"), a small counter (visited bit or frequency) and a tag
/// (which list it is on). Released nodes are recycled through an intrusive free list, so the pool
/// allocates only when more nodes are live than ever before. Every operation is O(1).
class node_pool {
 public:
  /// A node for `key` with counter and tag 0, unlinked; recycles a released node first.
  std::int64_t acquire(std::int64_t key);
  /// Returns an unlinked node to the free list.
  void release(std::int64_t id);
  /// Links unlinked node `id` in front of `list.head`.
  void push_head(node_list& list, std::int64_t id);
  /// Unlinks node `id`, which must be on `list`.
  void unlink(node_list& list, std::int64_t id);

  [[nodiscard]] std::int64_t key(std::int64_t id) const { return nodes_[at(id)].key; }
  [[nodiscard]] std::int64_t newer(std::int64_t id) const { return nodes_[at(id)].newer; }
  [[nodiscard]] std::int64_t older(std::int64_t id) const { return nodes_[at(id)].older; }
  [[nodiscard]] std::uint8_t count(std::int64_t id) const { return nodes_[at(id)].count; }
  void set_count(std::int64_t id, std::uint8_t c) { nodes_[at(id)].count = c; }
  [[nodiscard]] std::uint8_t tag(std::int64_t id) const { return nodes_[at(id)].tag; }
  void set_tag(std::int64_t id, std::uint8_t t) { nodes_[at(id)].tag = t; }

 private:
  struct node {
    std::int64_t key = 0;
    std::int64_t newer = no_slot;
    std::int64_t older = no_slot;  // also the free-list link of a released node
    std::uint8_t count = 0;
    std::uint8_t tag = 0;
  };
  static std::size_t at(std::int64_t id) { return static_cast<std::size_t>(id); }
  std::vector<node> nodes_;
  std::int64_t free_head_ = no_slot;
};

}  // namespace detail

/// Decides which keys (vertex ids) are resident in a fixed-capacity cache of rows, and counts the
/// hits and misses of the accesses made through it.
///
/// Contract shared by every implementation:
///  - access(key) returns true on a hit. On a miss the key is admitted, evicting per the policy
///    when the cache is full; right after any access to a cache of capacity >= 1 the key is
///    resident.
///  - capacity 0: every access misses and nothing is stored.
///  - size() <= capacity() at all times.
///  - Deterministic: a fresh policy fed the same access sequence yields the same results.
///  - Not thread-safe; one instance per PE. Not copyable (a polymorphic base).
class cache_policy {
 public:
  virtual ~cache_policy() = default;
  cache_policy(const cache_policy&) = delete;
  cache_policy& operator=(const cache_policy&) = delete;

  /// Looks up `key` (any int64 value) and updates the policy's state: access(key) is
  /// query(key), then admit(key) on a miss. Returns true on a hit. Counts one hit or one miss.
  /// Cost: O(1) expected for LRU; for CLOCK, SIEVE and S3-FIFO O(1) expected amortised over the
  /// sequence (an eviction scan only passes keys whose bit or frequency an earlier hit set).
  /// Allocates only while the cache is filling.
  bool access(std::int64_t key) {
    begin_batch();
    if (query(key)) return true;
    admit(key);
    return false;
  }

  /// One batch of lookups as a cache serving a whole minibatch does it (GraphBolt's
  /// Query-then-Replace): first every key is queried against the
  /// state left by earlier batches (hits update recency / visited bits / frequencies, and are
  /// counted), then the missed keys are admitted in order. A key repeated within the batch is
  /// queried each time it occurs (so it can miss twice) but admitted once. Writes hit[i] = 1 for
  /// a hit of keys[i], else 0.
  /// @param keys  [n] any int64 values
  /// @param hit   [n] output
  /// @throws logic_error when hit.size() != keys.size().
  /// Batch semantics are those of the GPU cache (cache/set_assoc.hpp); for a batch of one key it
  /// equals access().
  void access_batch(std::span<const std::int64_t> keys, std::span<std::uint8_t> hit);

  /// The hit half of access(): returns whether `key` is resident, counting one hit or one miss;
  /// a hit updates the policy's state (recency, visited bit, frequency); a miss changes nothing
  /// else.
  virtual bool query(std::int64_t key) = 0;

  /// The miss half of access(): makes `key` resident, evicting per the policy when full. Does
  /// nothing when `key` is already resident or the capacity is 0. Counts nothing.
  virtual void admit(std::int64_t key) = 0;

  /// Whether `key` is resident now. Changes nothing (no counters, no visited bits). O(1) expected.
  [[nodiscard]] virtual bool contains(std::int64_t key) const = 0;

  /// Number of resident keys, 0 <= size() <= capacity().
  [[nodiscard]] virtual std::int64_t size() const = 0;

  /// The policy's name as accepted by make_cache_policy: "lru", "clock", "sieve", "s3fifo" or
  /// "setassoc".
  [[nodiscard]] virtual std::string name() const = 0;

  /// Hits counted since construction or the last reset_counters().
  [[nodiscard]] std::int64_t hits() const { return hits_; }
  /// Misses counted since construction or the last reset_counters().
  [[nodiscard]] std::int64_t misses() const { return misses_; }
  /// misses / (hits + misses); 0 when nothing was accessed.
  [[nodiscard]] double miss_rate() const;
  /// Zeroes the hit and miss counters; the resident set and the policy's state are kept.
  void reset_counters() { hits_ = misses_ = 0; }
  /// Capacity in rows (keys), fixed at construction.
  [[nodiscard]] std::int64_t capacity() const { return capacity_; }

 protected:
  /// @throws logic_error when `capacity_rows` < 0 (the message names the value).
  explicit cache_policy(std::int64_t capacity_rows);
  /// Called at the start of every access() and access_batch(); policies with a batch clock
  /// (set_assoc_policy) advance it here. Default: nothing.
  virtual void begin_batch() {}
  /// Counts one access and returns `hit`.
  bool record(bool hit) {
    (hit ? hits_ : misses_) += 1;
    return hit;
  }

 private:
  std::int64_t capacity_;
  std::int64_t hits_ = 0;
  std::int64_t misses_ = 0;
};

/// Exact least-recently-used replacement: on a miss in a full cache, evicts the key whose last
/// access is the oldest. A recency list (head = most recent) in a node pool plus an
/// open-addressing key map; every access is O(1) expected and, once full, allocation-free.
/// Deterministic. Classic LRU (e.g. Mattson et al., IBM Systems Journal 1970, stack algorithms);
/// GraphBolt's "lru" CPU cache policy.
class lru_policy final : public cache_policy {
 public:
  /// @throws logic_error when `capacity_rows` < 0.
  explicit lru_policy(std::int64_t capacity_rows);
  bool query(std::int64_t key) override;
  void admit(std::int64_t key) override;
  [[nodiscard]] bool contains(std::int64_t key) const override;
  [[nodiscard]] std::int64_t size() const override { return list_.size; }
  [[nodiscard]] std::string name() const override { return "lru"; }

 private:
  detail::node_pool pool_;
  detail::node_list list_;
  detail::key_slot_map map_;
};

/// CLOCK (second chance, FIFO-reinsertion; Corbató, "A paging experiment with the Multics
/// system", 1968): `capacity` slots in a circle, one reference bit each, and a hand pointing at the
/// oldest slot. A hit sets the key's bit. A miss in a full cache sweeps the hand: a set bit is
/// cleared and passed over, the first slot with a clear bit is replaced by the new key (bit clear,
/// as in GraphBolt and libCacheSim) and the hand moves one past it. While the cache fills, keys
/// take slots 0, 1, 2, ... and the hand stays at slot 0. Hits O(1); misses O(1) amortised (each
/// bit cleared was set by a hit). Deterministic; once full, allocation-free.
class clock_policy final : public cache_policy {
 public:
  /// @throws logic_error when `capacity_rows` < 0.
  explicit clock_policy(std::int64_t capacity_rows);
  bool query(std::int64_t key) override;
  void admit(std::int64_t key) override;
  [[nodiscard]] bool contains(std::int64_t key) const override;
  [[nodiscard]] std::int64_t size() const override {
    return static_cast<std::int64_t>(keys_.size());
  }
  [[nodiscard]] std::string name() const override { return "clock"; }

 private:
  std::vector<std::int64_t> keys_;        // slot -> key
  std::vector<std::uint8_t> referenced_;  // slot -> reference bit
  std::int64_t hand_ = 0;
  detail::key_slot_map map_;  // key -> slot
};

/// SIEVE (Zhang et al., "SIEVE is Simpler than LRU", NSDI 2024, Algorithm 1): one FIFO queue with
/// a visited bit per key and a hand. New keys enter at the head unvisited; a hit only sets the
/// visited bit (no reordering). A miss in a full cache evicts from the hand (from the tail when the
/// hand is unset): while the key under the hand is visited, clear its bit and move the hand one
/// step towards the head, wrapping to the tail past the head; evict the first unvisited key and
/// leave the hand on its neighbour towards the head (unset when it was the head). Unlike CLOCK,
/// retained keys keep their place and new keys sit behind the hand. Hits O(1); misses O(1)
/// amortised. Deterministic; once full, allocation-free.
class sieve_policy final : public cache_policy {
 public:
  /// @throws logic_error when `capacity_rows` < 0.
  explicit sieve_policy(std::int64_t capacity_rows);
  bool query(std::int64_t key) override;
  void admit(std::int64_t key) override;
  [[nodiscard]] bool contains(std::int64_t key) const override;
  [[nodiscard]] std::int64_t size() const override { return queue_.size; }
  [[nodiscard]] std::string name() const override { return "sieve"; }

 private:
  void evict();
  detail::node_pool pool_;
  detail::node_list queue_;
  std::int64_t hand_ = detail::no_slot;
  detail::key_slot_map map_;
};

/// S3-FIFO (Yang et al., "FIFO queues are all you need for cache eviction", SOSP 2023,
/// Algorithm 1), with the ghost queue GraphBolt adopted in PR 7492/7508:
///  - a small FIFO S with a target of max(1, floor(capacity / 10)) keys, a main FIFO M (the rest,
///    capacity - |S target|) and a ghost FIFO G of evicted keys only (no rows), holding at most
///    |M target| keys; a frequency 0..3 per resident key.
///  - hit: freq = min(freq + 1, 3).
///  - miss: while |S| + |M| >= capacity, evict(); then, if the key is in G it leaves G and enters
///    M's head, else S's head, with freq 0 (G is consulted after evicting, as in the paper).
///  - evict(): evictS() when |S| >= S target, else evictM().
///  - evictS(): repeat on S's tail t: if freq(t) > 1 (accessed at least twice while in S) move t to
///    M's head keeping freq, and if M then exceeds its target run evictM(); otherwise move t's key
///    to G's head (dropping G's oldest key when G is full) and stop.
///  - evictM(): repeat on M's tail t: if freq(t) > 0, reinsert t at M's head with freq - 1;
///    otherwise evict t (it does not enter G) and stop.
///  An evictS() that overflows M frees two rows (one from M, one to G), so size() can sit below
///  capacity() for a while, as in the paper.
/// Differences from GraphBolt's cache_policy.h, which promotes on freq > 0 and resets freq on
/// promotion: this follows the paper. Hits O(1); misses O(1) amortised (each reinsertion spends a
/// frequency earned by a hit; a key moves from S to M at most once per residency). Deterministic;
/// once full, allocation-free.
class s3fifo_policy final : public cache_policy {
 public:
  /// @throws logic_error when `capacity_rows` < 0.
  explicit s3fifo_policy(std::int64_t capacity_rows);
  bool query(std::int64_t key) override;
  void admit(std::int64_t key) override;
  [[nodiscard]] bool contains(std::int64_t key) const override;
  [[nodiscard]] std::int64_t size() const override { return small_.size + main_.size; }
  [[nodiscard]] std::string name() const override { return "s3fifo"; }

  /// Target size of S: max(1, floor(capacity / 10)), 0 when capacity is 0.
  [[nodiscard]] std::int64_t small_target() const { return small_target_; }
  /// Target size of M: capacity - small_target(). M may hold more while S is below its target.
  [[nodiscard]] std::int64_t main_target() const { return capacity() - small_target_; }
  /// Most keys G holds: main_target().
  [[nodiscard]] std::int64_t ghost_capacity() const { return main_target(); }
  /// Current lengths of S, M and G.
  [[nodiscard]] std::int64_t small_size() const { return small_.size; }
  [[nodiscard]] std::int64_t main_size() const { return main_.size; }
  [[nodiscard]] std::int64_t ghost_size() const { return ghost_.size; }
  /// Whether `key` is in the ghost queue G (evicted from S recently; not resident).
  [[nodiscard]] bool in_ghost(std::int64_t key) const;

 private:
  void evict();
  void evict_small();
  void evict_main();
  void push_ghost(std::int64_t id);
  std::int64_t small_target_;
  detail::node_pool pool_;  // tag: which queue a node is on
  detail::node_list small_, main_, ghost_;
  detail::key_slot_map map_;  // key -> node, for S, M and G
};

/// The per-PE feature caches a run can ask for (--cache-policy): none, or a policy below.
enum class cache_policy_kind { none, lru, clock, sieve, s3fifo, setassoc };

/// "none", "lru", "clock", "sieve", "s3fifo" or "setassoc".
std::string to_string(cache_policy_kind k);
/// Parses those names ("s3-fifo" too). @throws logic_error naming the value otherwise.
cache_policy_kind parse_cache_policy_kind(const std::string& name);

/// A policy by name: "lru", "clock", "sieve", "s3fifo" (or "s3-fifo", GraphBolt's spelling),
/// "setassoc" (set_assoc_policy with its default ways, cache/set_assoc.hpp; the GPU cache), for
/// a cache of `capacity_rows` >= 0 rows. Names are case-sensitive. Deterministic; allocates the
/// (initially empty) policy.
/// @throws logic_error naming the value for an unknown name or a negative capacity.
std::unique_ptr<cache_policy> make_cache_policy(const std::string& name,
                                                std::int64_t capacity_rows);

}  // namespace coopgnn
