// Cache residency policies (cache/policy.hpp): hand-worked traces per policy, properties every
// policy must hold, naive references on random traces, and the factory's errors.
#include "cache/policy.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <deque>
#include <random>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "runtime/core/error.hpp"

namespace coopgnn {
namespace {

using trace_t = std::vector<std::int64_t>;

const std::vector<std::string> kPolicies = {"lru", "clock", "sieve", "s3fifo"};

/// Runs `trace` through `p` and returns one letter per access: 'H' hit, 'M' miss.
std::string run(cache_policy& p, const trace_t& trace) {
  std::string out;
  for (auto k : trace) out += p.access(k) ? 'H' : 'M';
  return out;
}

std::set<std::int64_t> resident(const cache_policy& p, std::int64_t universe_lo,
                                std::int64_t universe_hi) {
  std::set<std::int64_t> s;
  for (auto k = universe_lo; k <= universe_hi; ++k) {
    if (p.contains(k)) s.insert(k);
  }
  return s;
}

// ---- deterministic traces --------------------------------------------------------------------

double unit(std::mt19937_64& g) { return static_cast<double>(g() >> 11) * 0x1.0p-53; }

trace_t uniform_trace(std::int64_t universe, std::int64_t length, std::uint64_t seed) {
  std::mt19937_64 g(seed);
  trace_t t(static_cast<std::size_t>(length));
  for (auto& k : t) k = static_cast<std::int64_t>(g() % static_cast<std::uint64_t>(universe));
  return t;
}

/// Zipf(s): P(rank r) proportional to 1 / (r + 1)^s over `universe` ranks, by inverse CDF. Ranks
/// are spread over the key space by an odd multiplier so popular keys are not adjacent ids.
trace_t zipf_trace(std::int64_t universe, std::int64_t length, double s, std::uint64_t seed) {
  std::vector<double> cdf(static_cast<std::size_t>(universe));
  double acc = 0;
  for (std::int64_t r = 0; r < universe; ++r) {
    acc += 1.0 / std::pow(static_cast<double>(r + 1), s);
    cdf[static_cast<std::size_t>(r)] = acc;
  }
  std::mt19937_64 g(seed);
  trace_t t(static_cast<std::size_t>(length));
  for (auto& k : t) {
    auto const u = unit(g) * acc;
    auto const r = std::min<std::int64_t>(std::upper_bound(cdf.begin(), cdf.end(), u) - cdf.begin(),
                                          universe - 1);
    k = (r * 7919) % universe;
  }
  return t;
}

// ---- naive references (O(capacity) per access, written for obviousness) ------------------------

struct naive_lru {
  std::int64_t cap;
  std::vector<std::int64_t> keys;  // front = most recent
  bool access(std::int64_t k) {
    if (cap == 0) return false;
    auto it = std::find(keys.begin(), keys.end(), k);
    bool const hit = it != keys.end();
    if (hit) {
      keys.erase(it);
    } else if (static_cast<std::int64_t>(keys.size()) == cap) {
      keys.pop_back();
    }
    keys.insert(keys.begin(), k);
    return hit;
  }
};

struct naive_clock {
  std::int64_t cap;
  std::vector<std::int64_t> keys;
  std::vector<int> ref;
  std::size_t hand = 0;
  bool access(std::int64_t k) {
    if (cap == 0) return false;
    auto it = std::find(keys.begin(), keys.end(), k);
    if (it != keys.end()) {
      ref[static_cast<std::size_t>(it - keys.begin())] = 1;
      return true;
    }
    if (static_cast<std::int64_t>(keys.size()) < cap) {
      keys.push_back(k);
      ref.push_back(0);
      return false;
    }
    while (ref[hand] == 1) {
      ref[hand] = 0;
      hand = (hand + 1) % keys.size();
    }
    keys[hand] = k;
    hand = (hand + 1) % keys.size();
    return false;
  }
};

struct naive_sieve {
  std::int64_t cap;
  std::vector<std::int64_t> keys;  // index 0 = tail (oldest), back = head (newest)
  std::vector<int> visited;
  std::size_t hand = 0;  // index into keys; == keys.size() means "unset: start at the tail"
  bool access(std::int64_t k) {
    if (cap == 0) return false;
    auto it = std::find(keys.begin(), keys.end(), k);
    if (it != keys.end()) {
      visited[static_cast<std::size_t>(it - keys.begin())] = 1;
      return true;
    }
    if (static_cast<std::int64_t>(keys.size()) == cap) {
      std::size_t o = hand < keys.size() ? hand : 0;
      while (visited[o] == 1) {
        visited[o] = 0;
        o = o + 1 < keys.size() ? o + 1 : 0;
      }
      keys.erase(keys.begin() + static_cast<std::ptrdiff_t>(o));
      visited.erase(visited.begin() + static_cast<std::ptrdiff_t>(o));
      hand = o;  // the newer neighbour slid into o; o == size means the evicted one was the head
    }
    keys.push_back(k);
    visited.push_back(0);
    if (hand == keys.size() - 1) hand = keys.size();  // an unset hand stays unset
    return false;
  }
};

struct naive_s3fifo {
  struct entry {
    std::int64_t key;
    int freq;
  };
  std::int64_t cap, small_target, main_target;
  std::deque<entry> s, m;      // front = head (newest), back = tail (oldest)
  std::deque<std::int64_t> g;  // front = newest ghost
  explicit naive_s3fifo(std::int64_t c)
      : cap(c),
        small_target(c > 0 ? std::max<std::int64_t>(1, c / 10) : 0),
        main_target(c - small_target) {}
  static entry* find(std::deque<entry>& q, std::int64_t k) {
    for (auto& e : q) {
      if (e.key == k) return &e;
    }
    return nullptr;
  }
  void evict_main() {
    while (!m.empty()) {
      auto t = m.back();
      m.pop_back();
      if (t.freq > 0) {
        m.push_front({t.key, t.freq - 1});
      } else {
        return;
      }
    }
  }
  void evict_small() {
    while (!s.empty()) {
      auto t = s.back();
      s.pop_back();
      if (t.freq > 1) {
        m.push_front(t);
        if (static_cast<std::int64_t>(m.size()) > main_target) evict_main();
      } else {
        if (main_target > 0) {
          if (static_cast<std::int64_t>(g.size()) == main_target) g.pop_back();
          g.push_front(t.key);
        }
        return;
      }
    }
  }
  bool access(std::int64_t k) {
    if (cap == 0) return false;
    entry* e = find(s, k);
    if (e == nullptr) e = find(m, k);
    if (e != nullptr) {
      e->freq = std::min(e->freq + 1, 3);
      return true;
    }
    while (static_cast<std::int64_t>(s.size() + m.size()) >= cap) {
      if (static_cast<std::int64_t>(s.size()) >= small_target) {
        evict_small();
      } else {
        evict_main();
      }
    }
    if (auto it = std::find(g.begin(), g.end(), k); it != g.end()) {
      g.erase(it);
      m.push_front({k, 0});
    } else {
      s.push_front({k, 0});
    }
    return false;
  }
};

// ---- properties every policy holds
// ---------------------------------------------------------------

TEST(CachePolicy, CapacityZeroMissesEverythingAndStoresNothing) {
  trace_t const trace = {1, 1, 2, 1, 2, 2, 0, -5, 1};
  for (auto const& name : kPolicies) {
    SCOPED_TRACE(name);
    auto p = make_cache_policy(name, 0);
    EXPECT_EQ(run(*p, trace), std::string(trace.size(), 'M'));
    EXPECT_EQ(p->size(), 0);
    EXPECT_EQ(p->hits(), 0);
    EXPECT_EQ(p->misses(), static_cast<std::int64_t>(trace.size()));
    EXPECT_EQ(p->miss_rate(), 1.0);
    EXPECT_FALSE(p->contains(1));
  }
}

TEST(CachePolicy, CapacityOneHitsOnlyImmediateRepeats) {
  // With one row every policy keeps exactly the last key (S3-FIFO: a promoted key is evicted from
  // M, whose target is 0, in the same eviction).
  trace_t const trace = {1, 1, 2, 2, 2, 1, 3, 1};
  for (auto const& name : kPolicies) {
    SCOPED_TRACE(name);
    auto p = make_cache_policy(name, 1);
    EXPECT_EQ(run(*p, trace), "MHMHHMMM");
    EXPECT_EQ(p->size(), 1);
    EXPECT_TRUE(p->contains(1));
  }
}

TEST(CachePolicy, LargeEnoughCacheHasOnlyCompulsoryMisses) {
  auto const trace = zipf_trace(200, 3000, 0.9, 7);
  auto const distinct = static_cast<std::int64_t>(std::set(trace.begin(), trace.end()).size());
  ASSERT_GT(distinct, 50);  // the oracle is not trivial
  for (auto const& name : kPolicies) {
    for (auto cap : {distinct, distinct + 1, std::int64_t{1000}}) {
      SCOPED_TRACE(name + " capacity " + std::to_string(cap));
      auto p = make_cache_policy(name, cap);
      run(*p, trace);
      EXPECT_EQ(p->misses(), distinct);
      EXPECT_EQ(p->hits(), static_cast<std::int64_t>(trace.size()) - distinct);
      EXPECT_EQ(p->size(), distinct);
    }
  }
}

TEST(CachePolicy, CountersSizeAndResidencyStayConsistent) {
  // Capacities around a warp and S3-FIFO's 10% split; keys include negatives.
  auto trace = zipf_trace(300, 4000, 0.8, 11);
  for (std::size_t i = 0; i < trace.size(); i += 3) trace[i] = -trace[i] - 1;
  for (auto const& name : kPolicies) {
    for (std::int64_t cap : {1, 2, 3, 9, 10, 11, 31, 32, 33, 250}) {
      SCOPED_TRACE(name + " capacity " + std::to_string(cap));
      auto p = make_cache_policy(name, cap);
      std::int64_t accesses = 0;
      for (auto k : trace) {
        p->access(k);
        ++accesses;
        ASSERT_TRUE(p->contains(k)) << "a key is resident right after its access";
        ASSERT_LE(p->size(), cap);
        ASSERT_EQ(p->hits() + p->misses(), accesses);
      }
      EXPECT_EQ(static_cast<std::int64_t>(resident(*p, -300, 300).size()), p->size());
      EXPECT_GT(p->hits(), 0);
    }
  }
}

TEST(CachePolicy, DeterministicForAGivenSequence) {
  auto const trace = zipf_trace(500, 5000, 1.0, 3);
  for (auto const& name : kPolicies) {
    SCOPED_TRACE(name);
    auto a = make_cache_policy(name, 37);
    auto b = make_cache_policy(name, 37);
    EXPECT_EQ(run(*a, trace), run(*b, trace));
    EXPECT_EQ(resident(*a, 0, 499), resident(*b, 0, 499));
  }
}

TEST(CachePolicy, ResetCountersKeepsContents) {
  for (auto const& name : kPolicies) {
    SCOPED_TRACE(name);
    auto p = make_cache_policy(name, 4);
    EXPECT_EQ(p->miss_rate(), 0.0);  // no accesses yet
    run(*p, {1, 2, 1});
    EXPECT_EQ(p->hits(), 1);
    EXPECT_EQ(p->misses(), 2);
    EXPECT_DOUBLE_EQ(p->miss_rate(), 2.0 / 3.0);
    p->reset_counters();
    EXPECT_EQ(p->hits(), 0);
    EXPECT_EQ(p->misses(), 0);
    EXPECT_EQ(p->miss_rate(), 0.0);
    EXPECT_EQ(p->size(), 2);
    EXPECT_TRUE(p->access(2));
    EXPECT_EQ(p->hits(), 1);
    EXPECT_EQ(p->capacity(), 4);
  }
}

TEST(CachePolicy, SkewedTraceMissesLessThanUniform) {
  // 1000 keys, 100 rows. Under uniform independent accesses any policy's steady-state hit rate is
  // capacity / universe = 0.1 (every resident key is equally likely next); Zipf(1) must do better.
  constexpr std::int64_t universe = 1000, cap = 100, length = 20000;
  auto const uniform = uniform_trace(universe, length, 1);
  auto const skewed = zipf_trace(universe, length, 1.0, 2);
  for (auto const& name : kPolicies) {
    SCOPED_TRACE(name);
    auto pu = make_cache_policy(name, cap);
    auto pz = make_cache_policy(name, cap);
    run(*pu, uniform);
    run(*pz, skewed);
    EXPECT_NEAR(pu->miss_rate(), 0.9, 0.02);
    EXPECT_LT(pz->miss_rate(), pu->miss_rate() - 0.2);
  }
}

// ---- LRU -------------------------------------------------------------------------------------

TEST(LruPolicy, HandWorkedTraces) {
  {
    // capacity 2: 1 M [1]; 2 M [2 1]; 1 H [1 2]; 3 M evicts 2 [3 1]; 2 M evicts 1 [2 3].
    lru_policy p(2);
    EXPECT_EQ(run(p, {1, 2, 1, 3, 2}), "MMHMM");
    EXPECT_EQ(resident(p, 0, 5), (std::set<std::int64_t>{2, 3}));
  }
  {
    // capacity 3, lists most recent first:
    // 1 M [1]; 2 M [2 1]; 3 M [3 2 1]; 1 H [1 3 2]; 4 M evicts 2 [4 1 3]; 1 H [1 4 3];
    // 2 M evicts 3 [2 1 4]; 5 M evicts 4 [5 2 1]; 3 M evicts 1 [3 5 2]; 4 M evicts 2 [4 3 5].
    lru_policy p(3);
    EXPECT_EQ(run(p, {1, 2, 3, 1, 4, 1, 2, 5, 3, 4}), "MMMHMHMMMM");
    EXPECT_EQ(resident(p, 0, 6), (std::set<std::int64_t>{3, 4, 5}));
  }
}

TEST(LruPolicy, CyclicTraceOfCapacityPlusOneKeysAlwaysMisses) {
  for (std::int64_t cap : {1, 2, 5, 16, 33}) {
    SCOPED_TRACE(cap);
    lru_policy p(cap);
    trace_t trace;
    for (int round = 0; round < 5; ++round) {
      for (std::int64_t k = 0; k <= cap; ++k) trace.push_back(k);
    }
    EXPECT_EQ(run(p, trace), std::string(trace.size(), 'M'));
    EXPECT_EQ(p.size(), cap);
  }
}

// ---- CLOCK -----------------------------------------------------------------------------------

TEST(ClockPolicy, HandWorkedTraces) {
  {
    // capacity 3; slots s0 s1 s2 with reference bits in (), h = hand.
    // 1 2 3 M fill s0..s2, h=s0. 1 H: 1(1).
    // 4 M: s0 1(1) cleared, s1 2(0) replaced by 4, h=s2.      [1 4 3]
    // 2 M: s2 3(0) replaced by 2, h=s0.                        [1 4 2]
    // 1 H: 1(1). 4 H: 4(1).
    // 5 M: s0 cleared, s1 cleared, s2 2(0) replaced by 5, h=s0. [1 4 5]
    // 2 M: s0 1(0) replaced by 2, h=s1.                         [2 4 5]
    // 4 H: 4(1).
    // 1 M: s1 4(1) cleared, s2 5(0) replaced by 1, h=s0.        [2 4 1]
    clock_policy p(3);
    EXPECT_EQ(run(p, {1, 2, 3, 1, 4, 2, 1, 4, 5, 2, 4, 1}), "MMMHMMHHMMHM");
    EXPECT_EQ(resident(p, 0, 6), (std::set<std::int64_t>{1, 2, 4}));
  }
  {
    // The SIEVE trace below (capacity 4; A..H = 1..8), for contrast: CLOCK puts new keys in the
    // replaced slot, just behind the hand, so the old popular keys A and B are swept out.
    // A B C D M fill s0..s3, h=s0. A H, B H.
    // E M: clears A, B; replaces C (s2) with E, h=s3.    [A B E D]
    // A H.  F M: replaces D (s3), h=s0.                  [A B E F]
    // B H, E H.
    // G M: clears A, B, E; replaces F (s3), h=s0.        [A B E G]
    // H M: replaces A (s0), h=s1.   C M: replaces B, h=s2.   A M: replaces E, h=s3.
    // B M: replaces G, h=s0.                             [H C A B]
    clock_policy p(4);
    EXPECT_EQ(run(p, {1, 2, 3, 4, 1, 2, 5, 1, 6, 2, 5, 7, 8, 3, 1, 2}), "MMMMHHMHMHHMMMMM");
    EXPECT_EQ(resident(p, 0, 9), (std::set<std::int64_t>{1, 2, 3, 8}));
  }
}

// ---- SIEVE -----------------------------------------------------------------------------------

TEST(SievePolicy, HandWorkedTrace) {
  // Capacity 4, keys A..H = 1..8. Queues are written head (newest) first; * marks a visited key;
  // the hand is unset until the first eviction, which starts at the tail.
  //  A B C D  M M M M   D C B A
  //  A B      H H       D C B* A*
  //  E        M         hand: A* -> clear, B* -> clear, C unvisited: evict C; hand = D
  //                     E D B A
  //  A        H         E D B A*
  //  F        M         hand D unvisited: evict D; hand = E.          F E B A*
  //  B E      H H       F E* B* A*
  //  G        M         hand E* -> clear, F unvisited: evict F (the newest key!); F was the head,
  //                     so the hand is unset.                          G E B* A*
  //  H        M         hand from the tail: A* -> clear, B* -> clear, E unvisited: evict E;
  //                     hand = G.                                      H G B A
  //  C        M         hand G unvisited: evict G; hand = H.           C H B A
  //  A B      H H       A and B, popular and retained in place behind the hand, still hit.
  sieve_policy p(4);
  EXPECT_EQ(run(p, {1, 2, 3, 4, 1, 2, 5, 1, 6, 2, 5, 7, 8, 3, 1, 2}), "MMMMHHMHMHHMMMHH");
  EXPECT_EQ(resident(p, 0, 9), (std::set<std::int64_t>{1, 2, 3, 8}));
  // Continuing: queue C H B* A*, hand on H. I (9) M: H unvisited, evicted; hand = C.  I C B* A*
  // J (10) M: C unvisited, evicted; hand = I.                                       J I B* A*
  EXPECT_FALSE(p.access(9));
  EXPECT_FALSE(p.contains(8));
  EXPECT_FALSE(p.access(10));
  EXPECT_FALSE(p.contains(3));
  EXPECT_EQ(resident(p, 0, 11), (std::set<std::int64_t>{1, 2, 9, 10}));
}

TEST(SievePolicy, NewKeysSitBehindTheHand) {
  // Capacity 3: 1 2 3 M (queue 3 2 1); 1 H, 2 H (3 2* 1*).
  // 4 M: tail 1* cleared, 2* cleared, 3 evicted; 3 was the head, hand unset.  4 2 1
  // 5 M: from the tail, 1 unvisited: evicted; hand = 2.                        5 4 2
  // 2 H. 6 M: hand 2* cleared, 4 unvisited: evicted; hand = 5.                 6 5 2
  sieve_policy p(3);
  EXPECT_EQ(run(p, {1, 2, 3, 1, 2, 4, 5, 2, 6}), "MMMHHMMHM");
  EXPECT_EQ(resident(p, 0, 7), (std::set<std::int64_t>{2, 5, 6}));
}

// ---- S3-FIFO ---------------------------------------------------------------------------------

TEST(S3FifoPolicy, QueueTargets) {
  struct usecase {
    std::int64_t capacity, small, main;
  };
  for (auto const& u : {usecase{0, 0, 0}, usecase{1, 1, 0}, usecase{3, 1, 2}, usecase{9, 1, 8},
                        usecase{10, 1, 9}, usecase{25, 2, 23}, usecase{100, 10, 90}}) {
    SCOPED_TRACE(u.capacity);
    s3fifo_policy p(u.capacity);
    EXPECT_EQ(p.small_target(), u.small);
    EXPECT_EQ(p.main_target(), u.main);
    EXPECT_EQ(p.ghost_capacity(), u.main);
  }
}

TEST(S3FifoPolicy, HandWorkedTrace) {
  // Capacity 3: S target 1, M target 2, G holds 2 keys. Queues head (newest) first, freq in ().
  //  t1-3   1 2 3   M M M  cache not full yet, all enter S: S=[3 2 1]
  //  t4-5   1 1     H H    freq(1) = 2
  //  t6     2       H      freq(2) = 1
  //  t7     4       M      full, |S| = 3 >= 1: evictS. Tail 1 has freq 2 > 1: moved to M=[1(2)].
  //                        Tail 2 has freq 1 (accessed once only): to G=[2], stop.
  //                        S=[4 3] M=[1(2)] G=[2]
  //  t8     2       M      full: evictS moves tail 3 (freq 0) to G=[3 2]. 2 is in G: it leaves G
  //                        and enters M.   S=[4] M=[2 1(2)] G=[3]
  //  t9     3       M      full: evictS moves 4 to G=[4 3]; 3 is in G -> M.
  //                        S=[] M=[3 2 1(2)] G=[4]   (M above its target while S is short)
  //  t10    5       M      full, |S| = 0 < 1: evictM. Tail 1 (2) reinserted as 1(1); tail 2 (0)
  //                        evicted (M evictions do not enter G). S=[5] M=[1(1) 3] G=[4]
  //  t11    1       H      freq(1) = 2
  //  t12    2       M      not in G. evictS: 5 to G=[5 4]. S=[2] M=[1(2) 3] G=[5 4]
  //  t13    5       M      evictS: 2 to G; G is full, so its oldest (4) is dropped: G=[2 5].
  //                        5 in G -> M.    S=[] M=[5 1(2) 3] G=[2]
  //  t14    6       M      evictM: tail 3 (0) evicted.  S=[6] M=[5 1(2)] G=[2]
  //  t15    1       H      freq(1) = 3
  //  t16    3       M      not in G. evictS: 6 to G=[6 2].  S=[3] M=[5 1(3)] G=[6 2]
  //  t17    6       M      evictS: 3 to G, dropping 2: G=[3 6]. 6 in G -> M.
  //                        S=[] M=[6 5 1(3)] G=[3]
  //  t18    7       M      evictM: tail 1 (3) reinserted as 1(2); tail 5 (0) evicted.
  //                        S=[7] M=[1(2) 6] G=[3]
  //  t19    5       M      not in G. evictS: 7 to G=[7 3].  S=[5] M=[1(2) 6] G=[7 3]
  //  t20    1       H      freq(1) = 3
  s3fifo_policy p(3);
  trace_t const trace = {1, 2, 3, 1, 1, 2, 4, 2, 3, 5, 1, 2, 5, 6, 1, 3, 6, 7, 5, 1};
  auto const got = run(p, trace);
  EXPECT_EQ(got, "MMMHHHMMMMHMMMHMMMMH");
  EXPECT_EQ(resident(p, 0, 9), (std::set<std::int64_t>{1, 5, 6}));
  EXPECT_EQ(p.small_size(), 1);
  EXPECT_EQ(p.main_size(), 2);
  EXPECT_EQ(p.ghost_size(), 2);
  EXPECT_TRUE(p.in_ghost(7));
  EXPECT_TRUE(p.in_ghost(3));
  EXPECT_FALSE(p.in_ghost(2));  // pushed out of G at t17
  EXPECT_FALSE(p.in_ghost(6));  // left G at t17
  EXPECT_FALSE(p.contains(7));  // a ghost is not resident
}

TEST(S3FifoPolicy, OneHitWondersDoNotDisplaceMain) {
  // Capacity 10 (S 1, M 9). Keys 0..8 are each accessed three times while passing through S so
  // they end in M; then a scan of 100 fresh keys passes through S and G only. Every hot key still
  // hits afterwards, where LRU would have lost all of them.
  s3fifo_policy p(10);
  lru_policy lru(10);
  trace_t trace;
  for (std::int64_t k = 0; k < 9; ++k) {
    for (int r = 0; r < 3; ++r) trace.push_back(k);
  }
  for (std::int64_t k = 100; k < 200; ++k) trace.push_back(k);
  run(p, trace);
  run(lru, trace);
  for (std::int64_t k = 0; k < 9; ++k) {
    EXPECT_TRUE(p.contains(k)) << k;
    EXPECT_FALSE(lru.contains(k)) << k;
  }
  EXPECT_EQ(p.main_size(), 9);
}

TEST(S3FifoPolicy, PromotionThatOverflowsMainEvictsFromMainAndKeepsEvictingFromSmall) {
  // Capacity 20: S target 2, M target 18. Paper, Algorithm 1, evictS: after moving a key to a full
  // M it calls evictM and then keeps scanning S until a key goes to G.
  s3fifo_policy p(20);
  trace_t trace;
  std::string want;
  for (std::int64_t k = 1; k <= 18; ++k) {  // 1..18 each end with freq 2, all in S (not full)
    trace.insert(trace.end(), {k, k, k});
    want += "MHH";
  }
  // 101 102 M M: the cache is now full, S holds all 20 keys (oldest 1).
  // 103 M: evictS moves 1..18 (freq 2) to M, which reaches its target 18 without overflowing,
  //        then 101 (freq 0) goes to G.                      S=[103 102] M=[18 .. 1] G=[101]
  // 102 102 H H: freq(102) = 2.
  // 104 M: evictS moves 102 to M (19 > 18), so evictM runs: two rounds of reinsertion take every
  //        freq from 2 to 0, then the tail, 1, is evicted. evictS goes on: 103 (freq 0) to G.
  //        S=[] M=[102 18 .. 2] G=[103 101]; 104 enters S: 19 resident, one row free.
  // 103 M: in G, so it enters M without any eviction.       S=[104] M=[103 102 18 .. 2] G=[101]
  // 1 M:   evicted at 104. Full, |S| = 1 < 2: evictM evicts the tail, 2.  S=[1 104]
  // 2 M:   evictS moves 104 to G.   S=[2 1] M=[103 102 18 .. 3] G=[104 101]
  // 3 H, 1 H.
  trace.insert(trace.end(), {101, 102, 103, 102, 102, 104, 103, 1, 2, 3, 1});
  want += "MMMHHMMMMHH";
  EXPECT_EQ(run(p, trace), want);
  EXPECT_EQ(p.small_size(), 2);
  EXPECT_EQ(p.main_size(), 18);
  EXPECT_EQ(p.ghost_size(), 2);
  EXPECT_TRUE(p.in_ghost(104));
  EXPECT_TRUE(p.in_ghost(101));
  EXPECT_FALSE(p.in_ghost(103));
  std::set<std::int64_t> expected = {1, 2, 102, 103};
  for (std::int64_t k = 3; k <= 18; ++k) expected.insert(k);
  EXPECT_EQ(resident(p, 0, 200), expected);
}

// ---- against naive references on random traces ------------------------------------------------

template <class Naive>
void expect_matches_naive(const std::string& name, Naive make_naive) {
  for (std::int64_t cap : {1, 2, 3, 10, 31, 32, 33, 100, 250}) {
    for (auto const& trace : {uniform_trace(3 * cap + 7, 3000, 5 + static_cast<std::uint64_t>(cap)),
                              zipf_trace(10 * cap + 7, 3000, 1.1, 9)}) {
      SCOPED_TRACE(name + " capacity " + std::to_string(cap));
      auto p = make_cache_policy(name, cap);
      auto naive = make_naive(cap);
      std::string want;
      for (auto k : trace) want += naive.access(k) ? 'H' : 'M';
      ASSERT_NE(want.find('H'), std::string::npos);
      ASSERT_EQ(run(*p, trace), want);
    }
  }
}

TEST(CachePolicy, MatchesNaiveReferences) {
  expect_matches_naive("lru", [](std::int64_t c) { return naive_lru{c, {}}; });
  expect_matches_naive("clock", [](std::int64_t c) { return naive_clock{c, {}, {}, 0}; });
  expect_matches_naive("sieve", [](std::int64_t c) { return naive_sieve{c, {}, {}, 0}; });
  expect_matches_naive("s3fifo", [](std::int64_t c) { return naive_s3fifo(c); });
}

// ---- detail::key_slot_map
// ------------------------------------------------------------------------

TEST(KeySlotMap, MatchesStdUnorderedMapUnderChurn) {
  detail::key_slot_map m;
  std::unordered_map<std::int64_t, std::int64_t> ref;
  std::mt19937_64 g(17);
  for (int i = 0; i < 50000; ++i) {
    // A small key range keeps probe runs long and makes erase hit present keys often.
    auto const key = static_cast<std::int64_t>(g() % 301) - 150;
    if (g() % 2 == 0 && ref.count(key) == 0) {
      m.insert(key, i);
      ref[key] = i;
    } else {
      ASSERT_EQ(m.erase(key), ref.erase(key) == 1);
    }
    ASSERT_EQ(m.size(), static_cast<std::int64_t>(ref.size()));
    if (i % 97 == 0) {
      for (std::int64_t k = -150; k <= 150; ++k) {
        auto it = ref.find(k);
        ASSERT_EQ(m.find(k), it == ref.end() ? detail::no_slot : it->second) << k;
      }
    }
  }
}

// ---- factory ---------------------------------------------------------------------------------

TEST(MakeCachePolicy, NamesAndAliases) {
  struct usecase {
    const char* asked;
    const char* name;
  };
  for (auto const& u : {usecase{"lru", "lru"}, usecase{"clock", "clock"}, usecase{"sieve", "sieve"},
                        usecase{"s3fifo", "s3fifo"}, usecase{"s3-fifo", "s3fifo"},
                        usecase{"setassoc", "setassoc"}}) {
    auto p = make_cache_policy(u.asked, 7);
    EXPECT_EQ(p->name(), u.name);
    EXPECT_EQ(p->capacity(), 7);
    EXPECT_EQ(p->size(), 0);
  }
}

TEST(MakeCachePolicy, RejectsUnknownNamesAndNegativeCapacity) {
  for (std::string bad : {"LRU", "fifo", "", "s3_fifo"}) {
    try {
      make_cache_policy(bad, 4);
      ADD_FAILURE() << "no throw for '" << bad << "'";
    } catch (const logic_error& e) {
      EXPECT_NE(std::string(e.what()).find("'" + bad + "'"), std::string::npos) << e.what();
    }
  }
  try {
    make_cache_policy("lru", -5);
    ADD_FAILURE() << "no throw for capacity -5";
  } catch (const logic_error& e) {
    EXPECT_NE(std::string(e.what()).find("-5"), std::string::npos) << e.what();
  }
  EXPECT_THROW(lru_policy(-1), logic_error);
  EXPECT_THROW(clock_policy(-1), logic_error);
  EXPECT_THROW(sieve_policy(-1), logic_error);
  EXPECT_THROW(s3fifo_policy(-1), logic_error);
}

// ---- batches (access_batch) --------------------------------------------------------------------

TEST(CachePolicy, BatchQueriesBeforeAdmitting) {
  // LRU of 2 rows. One batch {1, 1}: both lookups see the state before the batch, so both miss
  // (sequential access would hit the second), and 1 is admitted once.
  lru_policy p(2);
  std::vector<std::int64_t> keys = {1, 1};
  std::vector<std::uint8_t> hit(2, 9);
  p.access_batch(keys, hit);
  EXPECT_EQ(hit, (std::vector<std::uint8_t>{0, 0}));
  EXPECT_EQ(p.size(), 1);
  EXPECT_EQ(p.misses(), 2);
  // Batch {2, 3, 4} into 2 rows: all miss, admitted in order, so the last two stay.
  keys = {2, 3, 4};
  hit.assign(3, 9);
  p.access_batch(keys, hit);
  EXPECT_EQ(hit, (std::vector<std::uint8_t>{0, 0, 0}));
  EXPECT_FALSE(p.contains(1));
  EXPECT_FALSE(p.contains(2));
  EXPECT_TRUE(p.contains(3));
  EXPECT_TRUE(p.contains(4));
  // Batch {4, 5, 3}: 4 and 3 hit first (3 becomes the most recent), then 5 evicts 4.
  keys = {4, 5, 3};
  hit.assign(3, 9);
  p.access_batch(keys, hit);
  EXPECT_EQ(hit, (std::vector<std::uint8_t>{1, 0, 1}));
  EXPECT_TRUE(p.contains(3));
  EXPECT_TRUE(p.contains(5));
  EXPECT_FALSE(p.contains(4));
  EXPECT_EQ(p.hits(), 2);
  EXPECT_EQ(p.misses(), 6);
}

TEST(CachePolicy, BatchOfOneEqualsAccess) {
  auto const trace = zipf_trace(300, 3000, 0.9, 5);
  for (auto const& name : kPolicies) {
    SCOPED_TRACE(name);
    auto a = make_cache_policy(name, 40);
    auto b = make_cache_policy(name, 40);
    std::string batched;
    for (auto k : trace) {
      std::uint8_t h = 9;
      b->access_batch(std::span<const std::int64_t>(&k, 1), std::span<std::uint8_t>(&h, 1));
      batched += h != 0 ? 'H' : 'M';
    }
    EXPECT_EQ(run(*a, trace), batched);
    EXPECT_EQ(resident(*a, 0, 299), resident(*b, 0, 299));
  }
}

TEST(CachePolicy, BatchRejectsMismatchedHitFlags) {
  lru_policy p(4);
  std::vector<std::int64_t> keys = {1, 2};
  std::vector<std::uint8_t> hit(1);
  EXPECT_THROW(p.access_batch(keys, hit), logic_error);
}

}  // namespace
}  // namespace coopgnn
