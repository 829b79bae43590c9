// The one pair of sampling protocols (pipeline/minibatch.hpp) on a CUDA context against
// the same protocols on the host (the reference): per PE the same blocks, exchange plans, input
// nodes, work counters and id bytes, with P PEs sharing device 0 through the peer-copy
// communicator, including PEs that own no seed. (On the emulated device, CI runs the same code
// through tests/pipeline/emulated_device_test.cpp.)
#include <gtest/gtest.h>

#include "tests/common/gpu.hpp"

#ifdef COOPGNN_WITH_CUDA

#include <chrono>
#include <exception>
#include <memory>
#include <thread>
#include <vector>

#include "runtime/comm/device_comm.hpp"
#include "runtime/comm/host_communicator.hpp"
#include "pipeline/minibatch.hpp"
#include "tests/common/graphs.hpp"
#include "tests/common/pes.hpp"

namespace coopgnn {
namespace {

struct pe_sample {
  std::vector<block> blocks;
  std::vector<exchange_plan> plans;
  std::vector<vid_t> input_nodes;
  work_counters work;
  std::vector<std::int64_t> id_bytes;
};

using test::on_pes;

std::vector<pe_sample> host_cooperative(const csc_graph& g, const ownership& owners,
                                        const std::vector<std::vector<vid_t>>& seeds,
                                        const batch_key& key) {
  int const P = static_cast<int>(seeds.size());
  auto group = std::make_shared<host_comm_group>(P, std::chrono::seconds(60));
  std::vector<pe_sample> out(seeds.size());
  on_pes(P, [&](int p) {
    host_communicator comm(group, p);
    exec_context ctx(backend::host, p, 1);
    auto sb = sample_cooperative(ctx, comm, g, owners, seeds[p], key);
    out[p] = {std::move(sb.blocks), std::move(sb.plans), std::move(sb.input_nodes), sb.work,
              std::move(sb.id_bytes)};
  });
  return out;
}

std::vector<pe_sample> device_cooperative(const csc_graph& g, const ownership& owners,
                                          const std::vector<std::vector<vid_t>>& seeds,
                                          const batch_key& key) {
  int const P = static_cast<int>(seeds.size());
  std::vector<std::unique_ptr<cuda::cuda_context>> ctxs;
  std::vector<const cuda::cuda_context*> cps;
  for (int p = 0; p < P; ++p) {
    ctxs.push_back(std::make_unique<cuda::cuda_context>(0, p));
    cps.push_back(ctxs.back().get());
  }
  std::vector<pe_sample> out(seeds.size());
  {
    auto comms = make_device_communicators(cps, "peer", std::chrono::seconds(60));
    exec_context const x0(*ctxs[0]);
    auto const graph = upload_graph(x0, g);
    auto const owner_of = upload<std::uint16_t>(x0, owners.map());
    csc_view const dg = graph.view();
    ctxs[0]->synchronize();
    try {
      on_pes(P, [&](int p) {
        auto const& ctx = *ctxs[static_cast<std::size_t>(p)];
        ctx.make_current();
        try {
          exec_context const xctx(ctx);
          auto const placed = upload<vid_t>(xctx, seeds[p]);
          auto sb = to_host(xctx, sample_cooperative(xctx, *comms[static_cast<std::size_t>(p)], dg,
                                                     owner_of.view(), placed.view(), key));
          pe_sample& r = out[static_cast<std::size_t>(p)];
          r = {std::move(sb.blocks), std::move(sb.plans), std::move(sb.input_nodes), sb.work,
               std::move(sb.id_bytes)};
        } catch (const std::exception& e) {
          comms[static_cast<std::size_t>(p)]->abort(e.what());
          throw;
        }
      });
    } catch (...) {
      for (auto& c : ctxs) c->synchronize();
      throw;
    }
    for (auto& c : ctxs) c->synchronize();
  }  // device buffers and communicators before the contexts
  return out;
}

void expect_same_block(const block& got, const block& want) {
  EXPECT_EQ(got.num_dst, want.num_dst);
  EXPECT_EQ(got.num_relations, want.num_relations);
  EXPECT_EQ(got.src_ids, want.src_ids);
  EXPECT_EQ(got.indptr, want.indptr);
  EXPECT_EQ(got.indices, want.indices);
  EXPECT_EQ(got.weights, want.weights);
  EXPECT_EQ(got.src_degree, want.src_degree);
}

struct protocol_case {
  sampler_kind kind;
  std::vector<int> fanouts;
  int pes;
  std::int64_t batch;  ///< global batch size (1 leaves PEs without seeds)
};

class DeviceSamplingProtocol : public ::testing::TestWithParam<protocol_case> {};

TEST_P(DeviceSamplingProtocol, CooperativeEqualsHostPerPe) {
  COOPGNN_REQUIRE_DEVICE();
  auto const c = GetParam();
  auto const ds = test::synthetic_dataset(600, 3, 4, 8, 11);
  auto const g = build_csc(ds.num_nodes, ds.src, ds.dst);
  ownership const owners(ds.num_nodes, c.pes, 9);
  std::vector<std::vector<vid_t>> seeds(static_cast<std::size_t>(c.pes));
  for (std::int64_t i = 0; i < c.batch; ++i) {
    vid_t const v = ds.train[static_cast<std::size_t>(i)];
    seeds[static_cast<std::size_t>(owners.owner(v))].push_back(v);
  }
  batch_key const key{c.kind, c.fanouts, 21, 3, {4, false}};
  auto const want = host_cooperative(g, owners, seeds, key);
  auto const got = device_cooperative(g, owners, seeds, key);
  for (int p = 0; p < c.pes; ++p) {
    SCOPED_TRACE(::testing::Message() << "PE " << p << " with " << seeds[p].size() << " seeds");
    auto const& w = want[static_cast<std::size_t>(p)];
    auto const& o = got[static_cast<std::size_t>(p)];
    ASSERT_EQ(o.blocks.size(), w.blocks.size());
    for (std::size_t l = 0; l < w.blocks.size(); ++l) {
      SCOPED_TRACE(::testing::Message() << "layer " << l);
      expect_same_block(o.blocks[l], w.blocks[l]);
      EXPECT_EQ(o.plans[l].send_counts, w.plans[l].send_counts);
      EXPECT_EQ(o.plans[l].recv_counts, w.plans[l].recv_counts);
      EXPECT_EQ(o.plans[l].send_perm, w.plans[l].send_perm);
      EXPECT_EQ(o.plans[l].recv_inv, w.plans[l].recv_inv);
    }
    EXPECT_EQ(o.input_nodes, w.input_nodes);
    EXPECT_EQ(o.work.sampled_edges, w.work.sampled_edges);
    EXPECT_EQ(o.work.sampled_vertices, w.work.sampled_vertices);
    EXPECT_EQ(o.work.seeds, w.work.seeds);
    EXPECT_EQ(o.id_bytes, w.id_bytes);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Cases, DeviceSamplingProtocol,
    ::testing::Values(protocol_case{sampler_kind::ns, {4, 3}, 2, 64},
                      protocol_case{sampler_kind::labor, {5, 5, 5}, 4, 50},
                      protocol_case{sampler_kind::ns, {-1, 2}, 4, 1},  // PEs without seeds
                      protocol_case{sampler_kind::labor, {3}, 3, 40}));

TEST(DeviceSamplingProtocol, TypedCooperativeEqualsHostPerPe) {
  COOPGNN_REQUIRE_DEVICE();
  auto const t = test::random_typed_graph(500, 3, 4, 13);
  for (auto kind : {sampler_kind::ns, sampler_kind::labor}) {
    SCOPED_TRACE(to_string(kind));
    int const P = 3;
    ownership const owners(t.g.num_nodes, P, 9);
    std::vector<std::vector<vid_t>> seeds(static_cast<std::size_t>(P));
    for (vid_t v = 1; v < 500; v += 11)
      seeds[static_cast<std::size_t>(owners.owner(v))].push_back(v);
    std::vector<int> const fanouts = {3, 2};
    std::vector<int> const relation_fanouts = {3, -1, 0, 2, 1, 4};
    batch_key key{kind, fanouts, 21, 3, {1, false}};
    key.relation_fanouts = relation_fanouts;
    auto const want = host_cooperative(t.g, owners, seeds, key);
    auto const got = device_cooperative(t.g, owners, seeds, key);
    for (int p = 0; p < P; ++p) {
      SCOPED_TRACE(::testing::Message() << "PE " << p);
      auto const& w = want[static_cast<std::size_t>(p)];
      auto const& o = got[static_cast<std::size_t>(p)];
      ASSERT_EQ(o.blocks.size(), w.blocks.size());
      for (std::size_t l = 0; l < w.blocks.size(); ++l) {
        EXPECT_EQ(o.blocks[l].num_relations, 3);
        expect_same_block(o.blocks[l], w.blocks[l]);
      }
      EXPECT_EQ(o.input_nodes, w.input_nodes);
      EXPECT_EQ(o.work.sampled_edges, w.work.sampled_edges);
    }
  }
}

TEST(DeviceSamplingProtocol, IndependentEqualsHost) {
  COOPGNN_REQUIRE_DEVICE();
  auto const ds = test::synthetic_dataset(600, 3, 4, 8, 11);
  auto const g = build_csc(ds.num_nodes, ds.src, ds.dst);
  std::vector<vid_t> const seeds(ds.train.begin(), ds.train.begin() + 40);
  std::vector<int> const fanouts = {5, 4};
  batch_key const key{sampler_kind::labor, fanouts, 21, 3, {16, true}};
  auto const want = sample_independent(exec_context{}, g, seeds, key);
  cuda::cuda_context cuda(0);
  exec_context const ctx(cuda);
  auto const graph = upload_graph(ctx, g);
  csc_view const dg = graph.view();
  auto const placed = upload<vid_t>(ctx, seeds);
  auto const got = to_host(ctx, sample_independent(ctx, dg, placed.view(), key));
  ASSERT_EQ(got.blocks.size(), want.blocks.size());
  for (std::size_t l = 0; l < want.blocks.size(); ++l) {
    SCOPED_TRACE(l);
    expect_same_block(got.blocks[l], want.blocks[l]);
  }
  EXPECT_EQ(got.input_nodes, want.input_nodes);
  EXPECT_EQ(got.work.sampled_edges, want.work.sampled_edges);
  EXPECT_EQ(got.work.sampled_vertices, want.work.sampled_vertices);
  EXPECT_TRUE(got.plans.empty());
}

}  // namespace
}  // namespace coopgnn

#else
TEST(DeviceSamplingProtocol, NeedsACudaBuild) {
  GTEST_SKIP() << "built without CUDA: the device sampling protocols do not exist in this build";
}
#endif
