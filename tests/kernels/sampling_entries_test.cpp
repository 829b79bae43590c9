// The sampling entries of every backend (kernels/sample/sampling.hpp) on the emulated device
// against the host reference functions of sample.hpp and a reference written here: the same
// samples and blocks bit for bit, the owner split stable by owner, the dedup sorted with its
// inverse, group_by_value a stable counting sort; bad input is named on every backend.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <vector>

#include "kernels/sample/sampling.hpp"
#include "kernels/sparse/spmm.hpp"
#include "runtime/core/error.hpp"
#include "runtime/graph/ownership.hpp"
#include "tests/common/graphs.hpp"
#include "tests/common/input_checks.hpp"

namespace coopgnn {
namespace {

exec_context const host;
exec_context const emulated(backend::emulated);

TEST(SamplingEntries, SampleAndBlockOnEveryBackendEqualTheHostReference) {
  auto const ds = test::synthetic_dataset(300, 3, 4, 9, 5);
  auto const g = build_csc(ds.num_nodes, ds.src, ds.dst);
  std::vector<vid_t> seeds(ds.train.begin(), ds.train.begin() + 33);
  for (sampler_kind kind : {sampler_kind::ns, sampler_kind::labor}) {
    sample_params p;
    p.kind = kind;
    p.fanout = 4;
    p.run_seed = 17;
    p.layer = 1;
    p.batch = 3;
    auto const want_s = sample_neighbors(host, g, seeds, p);
    auto const want_b = make_block(g, seeds, want_s);
    for (const exec_context* ctx : {&host, &emulated}) {
      auto const placed = upload_graph(*ctx, g);
      csc_view const gv = placed.view();
      auto const ds_seeds = upload<vid_t>(*ctx, seeds);
      auto const s = sample_neighbors(*ctx, gv, ds_seeds.view(), p);
      EXPECT_EQ(download<eid_t>(*ctx, s.indptr.view()), want_s.indptr);
      EXPECT_EQ(download<vid_t>(*ctx, s.nbrs.view()), want_s.nbrs);
      EXPECT_EQ(download<float>(*ctx, s.weights.view()), want_s.weights);
      auto const b = to_host(*ctx, make_block(*ctx, gv, ds_seeds.view(), s));
      EXPECT_EQ(b.src_ids, want_b.src_ids);
      EXPECT_EQ(b.indptr, want_b.indptr);
      EXPECT_EQ(b.indices, want_b.indices);
      EXPECT_EQ(b.weights, want_b.weights);
      EXPECT_EQ(b.src_degree, want_b.src_degree);
      ASSERT_GT(b.indices.size(), 0u);
    }
  }
}

TEST(SamplingEntries, OwnerSplitIsStableByOwnerAndNamesBadIds) {
  ownership const owners(50, 3, 7);
  std::vector<vid_t> const ids = {4, 49, 0, 17, 4, 33, 21, 8, 0, 42};
  for (const exec_context* ctx : {&host, &emulated}) {
    auto const map = upload<std::uint16_t>(*ctx, owners.map());
    auto const d_ids = upload<vid_t>(*ctx, ids);
    auto const s = split_by_owner(*ctx, map.view(), 3, d_ids.view());
    auto const perm = download<std::int64_t>(*ctx, s.perm.view());
    auto const sorted = download<vid_t>(*ctx, s.sorted_ids.view());
    // Reference: owner by owner, input order within an owner.
    std::vector<std::int64_t> want_perm;
    std::vector<std::int64_t> want_counts(3, 0);
    for (int q = 0; q < 3; ++q) {
      for (std::size_t i = 0; i < ids.size(); ++i) {
        if (owners.owner(ids[i]) == q) {
          want_perm.push_back(static_cast<std::int64_t>(i));
          ++want_counts[static_cast<std::size_t>(q)];
        }
      }
    }
    EXPECT_EQ(perm, want_perm);
    EXPECT_EQ(s.counts, want_counts);
    for (std::size_t j = 0; j < perm.size(); ++j) EXPECT_EQ(sorted[j], ids[perm[j]]);
    auto const bad = upload<vid_t>(*ctx, std::vector<vid_t>{3, 50});
    EXPECT_THROW((void)split_by_owner(*ctx, map.view(), 3, bad.view()), logic_error);
    // An owner map for more PEs than asked for is named too.
    EXPECT_THROW((void)split_by_owner(*ctx, map.view(), 2, d_ids.view()), logic_error);
  }
}

TEST(SamplingEntries, UniqueWithInverseAndGroupByValue) {
  std::vector<vid_t> const ids = {9, 2, 9, 7, 2, 2, 11};
  std::vector<std::int64_t> const values = {3, 0, 3, 1, 0, 3};
  for (const exec_context* ctx : {&host, &emulated}) {
    auto const d = upload<vid_t>(*ctx, ids);
    auto const u = unique_with_inverse(*ctx, d.view());
    auto const uniq = download<vid_t>(*ctx, u.unique.view());
    auto const inv = download<std::int64_t>(*ctx, u.inverse.view());
    EXPECT_EQ(uniq, (std::vector<vid_t>{2, 7, 9, 11}));
    for (std::size_t i = 0; i < ids.size(); ++i) EXPECT_EQ(uniq[inv[i]], ids[i]);
    auto const dv = upload<std::int64_t>(*ctx, values);
    auto const g = group_by_value(*ctx, 5, dv.view());
    EXPECT_EQ(download<eid_t>(*ctx, g.offsets.view()), (std::vector<eid_t>{0, 2, 3, 3, 6, 6}));
    EXPECT_EQ(download<std::int64_t>(*ctx, g.positions.view()),
              (std::vector<std::int64_t>{1, 4, 3, 0, 2, 5}));
    auto const empty = unique_with_inverse(*ctx, buffer<vid_t>(*ctx, 0).view());
    EXPECT_TRUE(empty.unique.empty());
  }
  auto const out_of_range = upload<std::int64_t>(host, std::vector<std::int64_t>{0, 5});
  EXPECT_THROW((void)group_by_value(host, 5, out_of_range.view()), logic_error);
}

TEST(SamplingEntries, ExcludeEdgesDropsExactlyTheKeysAndRenormalises) {
  auto const g = test::random_graph(300, 8, 4);
  std::vector<vid_t> seeds;
  for (vid_t v = 0; v < 300; v += 3) seeds.push_back(v);
  sample_params p;
  p.fanout = 5;
  p.run_seed = 2;
  exec_context const host;
  auto const s = sample_neighbors(host, view(g), host_view(std::as_const(seeds)), p);
  // Exclude every sampled edge whose source is even, plus keys that match nothing.
  std::vector<std::uint64_t> keys = {edge_exclusion_key(299, 298)};
  auto const ip = s.indptr.host();
  auto const nb = s.nbrs.host();
  auto const w = s.weights.host();
  for (std::size_t i = 0; i < seeds.size(); ++i) {
    for (eid_t e = ip[i]; e < ip[i + 1]; ++e) {
      if (nb[e] % 2 == 0) keys.push_back(edge_exclusion_key(nb[e], seeds[i]));
    }
  }
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  for (backend b : {backend::host, backend::emulated}) {
    exec_context const ctx(b);
    auto const ds = upload<vid_t>(ctx, seeds);
    sampled_buffers const placed{upload<eid_t>(ctx, ip), upload<vid_t>(ctx, nb),
                                 upload<float>(ctx, w)};
    auto const dk = upload<std::uint64_t>(ctx, keys);
    auto const r = exclude_edges(ctx, ds.view(), placed, dk.view());
    auto const rip = download<eid_t>(ctx, r.indptr.view());
    auto const rnb = download<vid_t>(ctx, r.nbrs.view());
    auto const rw = download<float>(ctx, r.weights.view());
    std::int64_t dropped = 0;
    for (std::size_t i = 0; i < seeds.size(); ++i) {
      // Expected: the odd sources in order, weights w / sum of the kept w.
      std::vector<vid_t> kept;
      std::vector<float> kw;
      float sum = 0;
      for (eid_t e = ip[i]; e < ip[i + 1]; ++e) {
        if (nb[e] % 2 != 0) {
          kept.push_back(nb[e]);
          kw.push_back(w[e]);
          sum += w[e];
        } else {
          ++dropped;
        }
      }
      ASSERT_EQ(rip[i + 1] - rip[i], static_cast<eid_t>(kept.size())) << "seed " << seeds[i];
      for (std::size_t j = 0; j < kept.size(); ++j) {
        EXPECT_EQ(rnb[static_cast<std::size_t>(rip[i]) + j], kept[j]);
        EXPECT_EQ(rw[static_cast<std::size_t>(rip[i]) + j], kw[j] / sum);
      }
    }
    EXPECT_GT(dropped, 0) << "nothing excluded: the check would be vacuous";
  }
  // Keys must be ascending and distinct.
  std::vector<std::uint64_t> const unsorted = {5, 3};
  EXPECT_THROW(exclude_edges(host, host_view(std::as_const(seeds)), s, host_view(unsorted)),
               logic_error);
  EXPECT_THROW(edge_exclusion_key(-1, 0), logic_error);
}

// Ids out of range, keys out of order, offsets outside the sample: the host reference's
// logic_error, its message word for word, on the host and on the emulated device (which runs
// the same host checks on device-marked memory); borderline valid inputs give the host result.
TEST(SamplingEntries, BadBlockAndExclusionInputIsNamedOnEveryBackend) {
  for (const exec_context* ctx : {&host, &emulated}) {
    test::run_block_checks(*ctx);
    test::run_exclude_checks(*ctx);
  }
}

TEST(SamplingEntries, SpacesAreCheckedNotBridged) {
  auto const ds = test::synthetic_dataset(40, 2, 2, 4, 1);
  auto const g = build_csc(ds.num_nodes, ds.src, ds.dst);
  std::vector<vid_t> const seeds = {1, 2};
  sample_params p;
  // The host graph and host seeds on an emulated context: an error, not a copy.
  EXPECT_THROW((void)sample_neighbors(emulated, view(g), host_view(seeds), p), logic_error);
  // The host-data overload is the host reference only.
  EXPECT_THROW((void)sample_neighbors(emulated, g, seeds, p), logic_error);
}

}  // namespace
}  // namespace coopgnn
