// CUDA sampler vs host sampler: exact parity (docs/design.md sections 2 and 8: host and CUDA
// samplers agree exactly). The host functions of sample.hpp are the oracle; every comparison is
// exact (weights and variates bit for bit).
#include <gtest/gtest.h>

#include "tests/common/gpu.hpp"

#if defined(COOPGNN_WITH_CUDA)
#include <algorithm>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "kernels/sample/labor_variate.hpp"
#include "kernels/sample/sample.hpp"
#include "kernels/sample/sample_cuda.hpp"
#include "runtime/core/cuda_context.hpp"
#include "runtime/core/error.hpp"
#include "runtime/graph/ownership.hpp"
#include "tests/common/graphs.hpp"
#include "tests/common/input_checks.hpp"

namespace coopgnn {
namespace {

template <class T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() &&
         (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0);
}

/// The graphs: a small random one, and one whose hub (vertex 1) has in-degree 69999 > 2^16.
const csc_graph& graph_of(bool hub) {
  static const csc_graph small = test::random_graph(600, 9, 21);
  static const csc_graph large = test::random_graph(70000, 6, 22);
  return hub ? large : small;
}

/// Seeds: vertex 0 (in-degree 0), the hub 1, vertex 2 (in-degree 1), then every 7th vertex.
std::vector<vid_t> seeds_of(const csc_graph& g) {
  std::vector<vid_t> s = {0, 1, 2};
  for (vid_t v = 3; v < g.num_nodes; v += 7) s.push_back(v);
  return s;
}

struct sample_gpu_usecase {
  sampler_kind kind;
  int fanout;
  std::int64_t kappa;  // LABOR batch dependency (1 = plain)
  bool hub;            // the graph with a vertex of in-degree > 2^16
};

std::ostream& operator<<(std::ostream& os, const sample_gpu_usecase& u) {
  return os << to_string(u.kind) << " k=" << u.fanout << " kappa=" << u.kappa
            << (u.hub ? " hub" : " small");
}

/// Samples `seeds` under `p` on the host and on the device and compares the samples and the
/// blocks bit for bit (rows, edges, order, weights, sources, degrees, num_relations).
void expect_same_sample_and_block(const cuda::cuda_context& ctx, const csc_graph& g,
                                  const cuda::device_csc& dg, const std::vector<vid_t>& seeds,
                                  const cuda::device_buffer<vid_t>& dseeds,
                                  const sample_params& p) {
  auto const want = sample_neighbors(exec_context{}, g, seeds, p);
  ASSERT_EQ(want.indptr.size(), seeds.size() * g.num_relations + 1);
  ASSERT_GT(want.nbrs.size(), 0u);
  auto const got_d = cuda::sample_neighbors(ctx, dg, dseeds, p);
  auto const got = cuda::to_host(ctx, got_d);
  EXPECT_EQ(got.indptr, want.indptr);
  EXPECT_EQ(got.nbrs, want.nbrs);
  EXPECT_TRUE(same_bits(got.weights, want.weights));

  auto const want_b = make_block(g, seeds, want);
  auto const got_b = cuda::to_host(ctx, cuda::make_block(ctx, dg, dseeds, got_d));
  EXPECT_EQ(got_b.num_relations, g.num_relations);
  EXPECT_EQ(got_b.num_dst, want_b.num_dst);
  EXPECT_EQ(got_b.src_ids, want_b.src_ids);
  EXPECT_EQ(got_b.indptr, want_b.indptr);
  EXPECT_EQ(got_b.indices, want_b.indices);
  EXPECT_TRUE(same_bits(got_b.weights, want_b.weights));
  EXPECT_EQ(got_b.src_degree, want_b.src_degree);
  EXPECT_GT(got_b.num_src(), got_b.num_dst) << "no source outside the destinations";
}

class SampleGpuTest : public ::testing::TestWithParam<sample_gpu_usecase> {};

TEST_P(SampleGpuTest, SameEdgesOrderAndWeightsAsHost) {
  COOPGNN_REQUIRE_DEVICE();
  auto const u = GetParam();
  auto const& g = graph_of(u.hub);
  auto const seeds = seeds_of(g);
  cuda::cuda_context ctx(0);
  auto const dg = cuda::upload(ctx, g);
  auto const dseeds = ctx.to_device(std::span<const vid_t>(seeds));
  for (std::uint32_t batch : {0u, 1u, 3u, 6u}) {
    SCOPED_TRACE(::testing::Message() << u << " batch " << batch);
    sample_params p{u.kind, u.fanout, 2024, 1, batch};
    p.dependency.batch_dependency = u.kappa;
    expect_same_sample_and_block(ctx, g, dg, seeds, dseeds, p);
  }
}

TEST_P(SampleGpuTest, DuplicateSeedsSampleIdentically) {
  COOPGNN_REQUIRE_DEVICE();
  auto const u = GetParam();
  auto const& g = graph_of(u.hub);
  std::vector<vid_t> const seeds = {1, 5, 1, 0, 5, 2};
  cuda::cuda_context ctx(0);
  auto const dg = cuda::upload(ctx, g);
  sample_params p{u.kind, u.fanout, 7, 0, 2};
  p.dependency.batch_dependency = u.kappa;
  auto const want = sample_neighbors(exec_context{}, g, seeds, p);
  auto const got = cuda::to_host(
      ctx, cuda::sample_neighbors(ctx, dg, ctx.to_device(std::span<const vid_t>(seeds)), p));
  EXPECT_EQ(got.indptr, want.indptr);
  EXPECT_EQ(got.nbrs, want.nbrs);
  EXPECT_TRUE(same_bits(got.weights, want.weights));
}

INSTANTIATE_TEST_SUITE_P(
    Samplers, SampleGpuTest,
    ::testing::Values(sample_gpu_usecase{sampler_kind::ns, 10, 1, false},
                      sample_gpu_usecase{sampler_kind::ns, 1, 1, false},
                      sample_gpu_usecase{sampler_kind::ns, -1, 1, false},
                      sample_gpu_usecase{sampler_kind::ns, 10, 1, true},
                      sample_gpu_usecase{sampler_kind::ns, 33, 1, true},
                      // Floyd's hash set and heapsort in one device thread (the hub's d > k).
                      sample_gpu_usecase{sampler_kind::ns, 3000, 1, true},
                      sample_gpu_usecase{sampler_kind::ns, -1, 1, true},
                      sample_gpu_usecase{sampler_kind::labor, 10, 1, false},
                      sample_gpu_usecase{sampler_kind::labor, 3, 4, false},
                      sample_gpu_usecase{sampler_kind::labor, 5, 0, false},
                      sample_gpu_usecase{sampler_kind::labor, -1, 1, false},
                      sample_gpu_usecase{sampler_kind::labor, 10, 1, true},
                      sample_gpu_usecase{sampler_kind::labor, 10, 4, true},
                      sample_gpu_usecase{sampler_kind::labor, -1, 4, true}));

/// Typed graphs: a small one with 3 relations and one whose hub (vertex 1) has a segment of
/// 69999 > 2^16 edges in each of its 2 relations.
const test::typed_graph& typed_graph_of(bool hub) {
  static const test::typed_graph small = test::random_typed_graph(600, 3, 4, 23);
  static const test::typed_graph large = test::random_typed_graph(70000, 2, 3, 24);
  return hub ? large : small;
}

struct typed_gpu_usecase {
  sampler_kind kind;
  std::vector<int> relation_fanouts;  // [R]
  std::int64_t kappa;
  bool hub;
};

std::ostream& operator<<(std::ostream& os, const typed_gpu_usecase& u) {
  os << to_string(u.kind) << " k_r =";
  for (int k : u.relation_fanouts) os << " " << k;
  return os << " kappa=" << u.kappa << (u.hub ? " hub" : " small");
}

class TypedSampleGpuTest : public ::testing::TestWithParam<typed_gpu_usecase> {};

TEST_P(TypedSampleGpuTest, SameRowsEdgesAndWeightsAsHost) {
  COOPGNN_REQUIRE_DEVICE();
  auto const u = GetParam();
  auto const& g = typed_graph_of(u.hub).g;
  auto const seeds = seeds_of(g);
  cuda::cuda_context ctx(0);
  auto const dg = cuda::upload(ctx, g);
  auto const dseeds = ctx.to_device(std::span<const vid_t>(seeds));
  for (std::uint32_t batch : {0u, 1u, 5u}) {
    SCOPED_TRACE(::testing::Message() << u << " batch " << batch);
    sample_params p{u.kind, 1, 2024, 1, batch};
    p.relation_fanouts = u.relation_fanouts;
    p.dependency.batch_dependency = u.kappa;
    expect_same_sample_and_block(ctx, g, dg, seeds, dseeds, p);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Samplers, TypedSampleGpuTest,
    ::testing::Values(typed_gpu_usecase{sampler_kind::ns, {3, 0, -1}, 1, false},
                      typed_gpu_usecase{sampler_kind::ns, {40, 1, 33}, 1, false},
                      typed_gpu_usecase{sampler_kind::ns, {10, 3000}, 1, true},
                      typed_gpu_usecase{sampler_kind::ns, {-1, 0}, 1, true},
                      typed_gpu_usecase{sampler_kind::labor, {3, 0, -1}, 1, false},
                      typed_gpu_usecase{sampler_kind::labor, {5, 5, 5}, 4, false},
                      typed_gpu_usecase{sampler_kind::labor, {10, 2}, 1, true},
                      typed_gpu_usecase{sampler_kind::labor, {0, -1}, 0, true}));

TEST(SampleGpu, TypedFanoutChecksMatchTheHost) {
  COOPGNN_REQUIRE_DEVICE();
  cuda::cuda_context ctx(0);
  auto const& g = typed_graph_of(false).g;
  auto const dg = cuda::upload(ctx, g);
  std::vector<vid_t> const ok = {3};
  auto const dok = ctx.to_device(std::span<const vid_t>(ok));
  sample_params p{sampler_kind::ns, 0, 0, 0, 0};  // fanout 0 on a typed graph: empty rows
  auto const none = cuda::to_host(ctx, cuda::sample_neighbors(ctx, dg, dok, p));
  EXPECT_EQ(none.indptr, std::vector<eid_t>(4, 0));
  p.relation_fanouts = {1, 2};  // two fanouts for three relations
  EXPECT_THROW(cuda::sample_neighbors(ctx, dg, dok, p), logic_error);
  auto const plain = cuda::upload(ctx, graph_of(false));
  auto const s = cuda::sample_neighbors(ctx, plain, dok, {sampler_kind::ns, 2, 0, 0, 0});
  EXPECT_THROW(cuda::make_block(ctx, dg, dok, s), logic_error);  // 2 offsets, 4 expected
}

TEST(SampleGpu, LaborVariatesAreBitIdentical) {
  COOPGNN_REQUIRE_DEVICE();
  cuda::cuda_context ctx(0);
  std::vector<vid_t> vertices(20000);
  std::iota(vertices.begin(), vertices.end(), vid_t{0});
  vertices.push_back(vid_t{1} << 40);
  auto const dv = ctx.to_device(std::span<const vid_t>(vertices));
  for (std::int64_t kappa : {1, 4, 0}) {
    for (bool layer_dep : {false, true}) {
      for (std::uint32_t batch : {0u, 1u, 2u, 3u, 5u, 1000u}) {
        labor_dependency const dep{kappa, layer_dep};
        auto const plan = make_labor_variate_plan(99, dep, 2, batch);
        std::vector<float> want(vertices.size());
        for (std::size_t i = 0; i < vertices.size(); ++i) {
          want[i] = labor_variate(plan, static_cast<std::uint64_t>(vertices[i]));
          ASSERT_EQ(want[i],
                    labor_variate(99, dep, 2, batch, static_cast<std::uint64_t>(vertices[i])));
        }
        auto const got = ctx.to_host(cuda::labor_variates(ctx, plan, dv));
        EXPECT_TRUE(same_bits(got, want)) << "kappa " << kappa << " batch " << batch;
      }
    }
  }
}

TEST(SampleGpu, OwnerSplitMatchesHostPartition) {
  COOPGNN_REQUIRE_DEVICE();
  cuda::cuda_context ctx(0);
  vid_t const n = 5000;
  std::vector<vid_t> ids;
  for (vid_t v = n - 1; v >= 0; v -= 3) ids.push_back(v);
  ids.push_back(17);  // a repeated id keeps both positions
  auto const dids = ctx.to_device(std::span<const vid_t>(ids));
  for (int P : {1, 2, 3, 8}) {
    ownership const owners(n, P, 5);
    // Host reference: counting partition, stable within an owner.
    std::vector<std::int64_t> counts(P, 0), offset(P + 1, 0), perm(ids.size());
    for (vid_t v : ids) ++counts[owners.owner(v)];
    for (int q = 0; q < P; ++q) offset[q + 1] = offset[q] + counts[q];
    for (std::size_t i = 0; i < ids.size(); ++i) perm[offset[owners.owner(ids[i])]++] = i;
    auto const map = cuda::upload_owners(ctx, owners);
    auto const split = cuda::split_by_owner(ctx, map, P, dids);
    EXPECT_EQ(split.counts, counts) << "P = " << P;
    EXPECT_EQ(ctx.to_host(split.perm), perm) << "P = " << P;
    auto const sorted = ctx.to_host(split.sorted_ids);
    for (std::size_t i = 0; i < ids.size(); ++i) ASSERT_EQ(sorted[i], ids[perm[i]]);
  }
  ownership const owners(n, 4, 5);
  auto const map = cuda::upload_owners(ctx, owners);
  std::vector<vid_t> const bad = {3, n};
  EXPECT_THROW(cuda::split_by_owner(ctx, map, 4, ctx.to_device(std::span<const vid_t>(bad))),
               logic_error);
}

TEST(SampleGpu, UniqueWithInverseMatchesHostDedup) {
  COOPGNN_REQUIRE_DEVICE();
  cuda::cuda_context ctx(0);
  std::vector<vid_t> ids;
  for (vid_t i = 0; i < 3000; ++i) {
    ids.push_back((i * 7919) % 1013 + (i % 5 == 0 ? (vid_t{1} << 40) : 0));
  }
  ids.insert(ids.begin() + 2, {vid_t{-5}, -(vid_t{1} << 50), vid_t{-5}});  // signed keys
  for (std::size_t take : {std::size_t{0}, std::size_t{1}, std::size_t{2}, ids.size()}) {
    SCOPED_TRACE(take);
    std::vector<vid_t> const in(ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(take));
    // Host reference: what sample_cooperative does with the received ids.
    std::vector<vid_t> next(in);
    std::sort(next.begin(), next.end());
    next.erase(std::unique(next.begin(), next.end()), next.end());
    std::vector<std::int64_t> inv(in.size());
    for (std::size_t r = 0; r < in.size(); ++r) {
      inv[r] = std::lower_bound(next.begin(), next.end(), in[r]) - next.begin();
    }
    auto const got = cuda::unique_with_inverse(ctx, ctx.to_device(std::span<const vid_t>(in)));
    EXPECT_EQ(ctx.to_host(got.unique), next);
    EXPECT_EQ(ctx.to_host(got.inverse), inv);
  }
}

TEST(SampleGpu, RejectsBadInputAndHandlesEmpty) {
  COOPGNN_REQUIRE_DEVICE();
  cuda::cuda_context ctx(0);
  auto const& g = graph_of(false);
  auto const dg = cuda::upload(ctx, g);
  std::vector<vid_t> const bad = {3, g.num_nodes};
  auto const dbad = ctx.to_device(std::span<const vid_t>(bad));
  EXPECT_THROW(cuda::sample_neighbors(ctx, dg, dbad, {sampler_kind::ns, 5, 0, 0, 0}), logic_error);
  std::vector<vid_t> const ok = {3};
  auto const dok = ctx.to_device(std::span<const vid_t>(ok));
  EXPECT_THROW(cuda::sample_neighbors(ctx, dg, dok, {sampler_kind::ns, 0, 0, 0, 0}), logic_error);
  auto const none = ctx.allocate<vid_t>(0);
  auto const empty =
      cuda::to_host(ctx, cuda::sample_neighbors(ctx, dg, none, {sampler_kind::labor, 5, 0, 0, 0}));
  EXPECT_EQ(empty.indptr, std::vector<eid_t>{0});
  EXPECT_TRUE(empty.nbrs.empty());
  std::vector<vid_t> const twice = {4, 4};
  auto const dtwice = ctx.to_device(std::span<const vid_t>(twice));
  auto const s = cuda::sample_neighbors(ctx, dg, dtwice, {sampler_kind::ns, 2, 0, 0, 0});
  EXPECT_THROW(cuda::make_block(ctx, dg, dtwice, s), logic_error);
}

/// Runs f, which must throw logic_error with `what` in its message.
template <class F>
void expect_logic_error(F&& f, const std::string& what) {
  try {
    f();
    ADD_FAILURE() << "no logic_error; expected one saying \"" << what << "\"";
  } catch (const logic_error& e) {
    EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
  }
}

// The validation flags ride along with the count reads (one status word per call): every
// sampler still names the first bad input, NS and LABOR alike, and the context stays usable.
TEST(SampleGpu, ValidationRidesWithTheCountReadsAndNamesTheInput) {
  COOPGNN_REQUIRE_DEVICE();
  cuda::cuda_context ctx(0);
  auto const& g = graph_of(false);
  auto const dg = cuda::upload(ctx, g);
  std::vector<vid_t> const bad = {3, 5, g.num_nodes + 7, -1};
  auto const dbad = ctx.to_device(std::span<const vid_t>(bad));
  std::string const first = "seed " + std::to_string(g.num_nodes + 7) + " (position 2)";
  for (sampler_kind k : {sampler_kind::ns, sampler_kind::labor}) {
    expect_logic_error(
        [&] {
          (void)cuda::sample_neighbors(ctx, dg, dbad, {k, 5, 0, 0, 0});
        },
        first);
  }
  std::vector<vid_t> const twice = {2, 9, 4, 9};
  auto const dtwice = ctx.to_device(std::span<const vid_t>(twice));
  auto const s = cuda::sample_neighbors(ctx, dg, dtwice, {sampler_kind::ns, 2, 0, 0, 0});
  expect_logic_error([&] { (void)cuda::make_block(ctx, dg, dtwice, s); },
                     "destination 9 appears twice");
  ownership const owners(g.num_nodes, 4, 5);
  auto const map = cuda::upload_owners(ctx, owners);
  expect_logic_error([&] { (void)cuda::split_by_owner(ctx, map, 4, dbad); },
                     "id " + std::to_string(g.num_nodes + 7) + " (position 2)");
  // Still usable: a valid call after the failures gives the host's counts.
  std::vector<vid_t> const ok = {3, 5, 0};
  auto const split = cuda::split_by_owner(ctx, map, 4, ctx.to_device(std::span<const vid_t>(ok)));
  std::vector<std::int64_t> counts(4, 0);
  for (vid_t v : ok) ++counts[static_cast<std::size_t>(owners.owner(v))];
  EXPECT_EQ(split.counts, counts);
}

// make_block and exclude_edges check their inputs on the device as the host does: the bad ids,
// keys and offsets of tests/common/input_checks.cpp throw logic_error with the host's message
// (read back with the count each call reads anyway), the valid borderline cases match the host
// bit for bit, and the context stays usable between the failures.
TEST(SampleGpu, BlockAndExclusionChecksMatchTheHost) {
  COOPGNN_REQUIRE_DEVICE();
  cuda::cuda_context cuda(0);
  exec_context const ctx(cuda);
  test::run_block_checks(ctx);
  test::run_exclude_checks(ctx);
}

// The same through the cuda:: functions directly: a destination and a source out of range, keys
// out of order and a row past the sample's edges.
TEST(SampleGpu, DeviceBlockAndExclusionNameTheBadInput) {
  COOPGNN_REQUIRE_DEVICE();
  cuda::cuda_context ctx(0);
  auto const& g = graph_of(false);
  auto const dg = cuda::upload(ctx, g);
  auto dev = [&](const auto& v) { return ctx.to_device(std::span(v)); };
  std::vector<vid_t> const dst = {3, g.num_nodes};
  std::vector<eid_t> const ip = {0, 1, 1};
  std::vector<vid_t> const nb = {5};
  std::vector<float> const w = {1};
  auto const d_dst = dev(dst);
  auto const d_ip = dev(ip);
  auto const d_nb = dev(nb);
  auto const d_w = dev(w);
  cuda::device_sampled_view const sv(d_ip, d_nb, d_w);
  std::string const n = std::to_string(g.num_nodes);
  expect_logic_error([&] { (void)cuda::make_block(ctx, dg, d_dst, sv); },
                     "make_block: destination " + n + " (position 1) is outside [0, " + n + ")");
  std::vector<vid_t> const ok = {3, 4};
  std::vector<vid_t> const bad_nb = {-3};
  auto const d_ok = dev(ok);
  auto const d_bad_nb = dev(bad_nb);
  expect_logic_error(
      [&] {
        (void)cuda::make_block(ctx, dg, d_ok, {d_ip, d_bad_nb, d_w});
      },
      "make_block: sampled source -3 (edge 0) is outside [0, " + n + ")");
  std::vector<std::uint64_t> const unsorted = {9, 4};
  auto const d_unsorted = dev(unsorted);
  expect_logic_error([&] { (void)cuda::exclude_edges(ctx, d_ok, sv, d_unsorted, 1); },
                     "exclude_edges: keys are not ascending and distinct at position 1");
  std::vector<eid_t> const past = {0, 1, 4};
  auto const d_past = dev(past);
  expect_logic_error(
      [&] {
        (void)cuda::exclude_edges(ctx, d_ok, {d_past, d_nb, d_w}, {}, 1);
      },
      "exclude_edges: row 1 of the sample has offsets [1, 4), not a range within its 1 "
      "neighbours");
  // Still usable: the valid block.
  auto const b = cuda::to_host(ctx, cuda::make_block(ctx, dg, d_ok, sv));
  EXPECT_EQ(b.src_ids, (std::vector<vid_t>{3, 4, 5}));
  EXPECT_EQ(b.indices, (std::vector<std::int64_t>{2}));
}

}  // namespace
}  // namespace coopgnn

#else
TEST(SampleGpu, Skipped) { GTEST_SKIP() << "no CUDA device: built without CUDA"; }
#endif
