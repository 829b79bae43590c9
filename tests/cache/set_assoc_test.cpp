// The set-associative cache policy (cache/set_assoc.hpp), the host reference of the GPU cache:
// geometry, a hand-worked trace, exact LRU as its one-set special case, and an independent naive
// model on random batched traces.
#include "cache/set_assoc.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <set>
#include <vector>

#include "runtime/core/error.hpp"

namespace coopgnn {
namespace {

TEST(SetAssocGeometry, SetsAndWays) {
  auto g = make_set_assoc_geometry(100, 32);
  EXPECT_EQ(g.ways, 32);
  EXPECT_EQ(g.sets, 3);  // 96 of the 100 rows are usable
  g = make_set_assoc_geometry(5, 32);
  EXPECT_EQ(g.ways, 5);
  EXPECT_EQ(g.sets, 1);
  g = make_set_assoc_geometry(0, 32);
  EXPECT_EQ(g.sets, 0);
  EXPECT_THROW(make_set_assoc_geometry(-1, 32), logic_error);
  EXPECT_THROW(make_set_assoc_geometry(10, 0), logic_error);
  EXPECT_THROW(set_assoc_policy(-3), logic_error);
}

TEST(SetAssocGeometry, Fmix64IsMurmur3sFinaliser) {
  // fmix64 is a bijection with fmix64(0) = 0; these values follow from its definition, worked
  // out with Python's arbitrary-precision integers (independent of this code).
  EXPECT_EQ(fmix64(0), 0u);
  EXPECT_EQ(fmix64(1), 0xb456bcfc34c2cb2cULL);
  EXPECT_EQ(fmix64(2), 0x3abf2a20650683e7ULL);
}

TEST(SetAssocGeometry, SetsAreUsedEvenly) {
  auto const g = make_set_assoc_geometry(64 * 32, 32);
  std::vector<int> count(static_cast<std::size_t>(g.sets));
  for (std::int64_t k = 0; k < 64 * 1000; ++k) ++count[static_cast<std::size_t>(g.set_of(k))];
  auto const [lo, hi] = std::minmax_element(count.begin(), count.end());
  EXPECT_GT(*lo, 850);  // mean 1000, sd about 31
  EXPECT_LT(*hi, 1150);
}

TEST(SetAssocPolicy, HandWorkedOneSetTrace) {
  // 4 rows, 4 ways: one set. Stamps are batch numbers; victims are the oldest, lowest way.
  set_assoc_policy p(4, 4);
  std::vector<std::uint8_t> hit(4);
  std::vector<std::int64_t> b1 = {1, 2, 3, 4};  // batch 1: ways 0..3, all stamped 1
  p.access_batch(b1, hit);
  EXPECT_EQ(p.size(), 4);
  EXPECT_FALSE(p.access(5));  // batch 2: all stamps 1, so way 0 (key 1) goes
  EXPECT_EQ(p.way_of(5), 0);
  EXPECT_FALSE(p.contains(1));
  EXPECT_FALSE(p.access(1));  // batch 3: way 0 has stamp 2, ways 1..3 stamp 1: way 1 (key 2)
  EXPECT_EQ(p.way_of(1), 1);
  std::vector<std::int64_t> b4 = {3, 2};  // batch 4: 3 hits (way 2 stamped 4); 2 takes way 3
  hit.resize(2);
  p.access_batch(b4, hit);
  EXPECT_EQ(hit, (std::vector<std::uint8_t>{1, 0}));
  EXPECT_EQ(p.way_of(2), 3);
  EXPECT_FALSE(p.contains(4));
  EXPECT_EQ(p.hits(), 1);
  EXPECT_EQ(p.misses(), 7);
}

TEST(SetAssocPolicy, OneSetWithOneKeyPerBatchIsExactLru) {
  std::mt19937_64 gen(3);
  std::geometric_distribution<int> key(0.05);
  set_assoc_policy sa(16, 16);
  lru_policy lru(16);
  for (int i = 0; i < 5000; ++i) {
    auto const k = static_cast<std::int64_t>(key(gen));
    ASSERT_EQ(sa.access(k), lru.access(k)) << "access " << i << " key " << k;
  }
  EXPECT_GT(lru.hits(), 1000);
  EXPECT_GT(lru.misses(), 500);
}

/// Independent model: per set, a map key -> (stamp, arrival order), victim chosen as the smallest
/// (stamp, way) where ways are assigned by arrival into free positions.
struct naive_set_assoc {
  struct slot {
    bool used = false;
    std::int64_t key = 0;
    std::uint64_t stamp = 0;
  };
  set_assoc_geometry g;
  std::vector<std::vector<slot>> sets;
  std::uint64_t clock = 0;
  naive_set_assoc(std::int64_t cap, std::int64_t ways) : g(make_set_assoc_geometry(cap, ways)) {
    sets.assign(static_cast<std::size_t>(g.sets), std::vector<slot>(static_cast<std::size_t>(g.ways)));
  }
  std::vector<std::uint8_t> batch(const std::vector<std::int64_t>& keys) {
    ++clock;
    std::vector<std::uint8_t> hit(keys.size(), 0);
    for (std::size_t i = 0; i < keys.size(); ++i) {
      for (auto& s : sets[static_cast<std::size_t>(g.set_of(keys[i]))]) {
        if (s.used && s.key == keys[i]) {
          s.stamp = clock;
          hit[i] = 1;
        }
      }
    }
    for (std::size_t i = 0; i < keys.size(); ++i) {
      if (hit[i]) continue;
      auto& set = sets[static_cast<std::size_t>(g.set_of(keys[i]))];
      if (std::any_of(set.begin(), set.end(),
                      [&](const slot& s) { return s.used && s.key == keys[i]; })) {
        continue;  // admitted earlier in this batch
      }
      auto it = std::find_if(set.begin(), set.end(), [](const slot& s) { return !s.used; });
      if (it == set.end()) {
        it = std::min_element(set.begin(), set.end(),
                              [](const slot& a, const slot& b) { return a.stamp < b.stamp; });
      }
      *it = slot{true, keys[i], clock};
    }
    return hit;
  }
};

TEST(SetAssocPolicy, MatchesNaiveModelOnRandomBatches) {
  std::mt19937_64 gen(11);
  for (std::int64_t ways : {1, 4, 32}) {
    for (std::int64_t cap : {1, 7, 64, 200}) {
      SCOPED_TRACE("ways " + std::to_string(ways) + " capacity " + std::to_string(cap));
      set_assoc_policy p(cap, ways);
      naive_set_assoc ref(cap, ways);
      std::uniform_int_distribution<std::int64_t> key(0, 3 * cap + 5);
      std::uniform_int_distribution<int> len(0, static_cast<int>(cap) + 10);
      for (int b = 0; b < 200; ++b) {
        std::vector<std::int64_t> keys(static_cast<std::size_t>(len(gen)));
        for (auto& k : keys) k = key(gen);
        std::vector<std::uint8_t> hit(keys.size());
        p.access_batch(keys, hit);
        ASSERT_EQ(hit, ref.batch(keys)) << "batch " << b;
      }
      std::int64_t resident = 0;
      for (std::int64_t k = 0; k <= 3 * cap + 5; ++k) resident += p.contains(k) ? 1 : 0;
      EXPECT_EQ(resident, p.size());
      EXPECT_LE(p.size(), cap);
      EXPECT_GT(p.hits(), 0);
    }
  }
}

}  // namespace
}  // namespace coopgnn
