// The sampling protocols on a typed (heterogeneous) graph (docs/typed-sampling.md; docs/design.md
// section 8: the cooperative(P) sample equals the single-PE sample of the global batch):
// cooperative minibatching over P PEs samples exactly the single-PE typed edge set (dst, src,
// relation) of the global batch with the same weights, no typed edge twice; batch_key's relation
// fanouts reach the sampler.
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <memory>
#include <set>
#include <tuple>
#include <vector>

#include "runtime/comm/host_communicator.hpp"
#include "runtime/core/error.hpp"
#include "pipeline/minibatch.hpp"
#include "tests/common/graphs.hpp"
#include "tests/common/pes.hpp"

namespace coopgnn {
namespace {

using test::on_pes;

using typed_edge = std::tuple<vid_t, vid_t, std::int32_t>;  // (dst, src, relation), global ids

/// The typed edges of a block with their weights; `twice` counts edges seen before.
void add_edges(const block& b, std::map<typed_edge, float>& out, int& twice) {
  std::int64_t const R = b.num_relations;
  for (std::int64_t q = 0; q < b.num_dst * R; ++q) {
    vid_t const s = b.src_ids[static_cast<std::size_t>(q / R)];
    for (eid_t e = b.indptr[q]; e < b.indptr[q + 1]; ++e) {
      typed_edge const key{s, b.src_ids[static_cast<std::size_t>(b.indices[e])],
                           static_cast<std::int32_t>(q % R)};
      twice += out.count(key) ? 1 : 0;
      out[key] = b.weights[e];
    }
  }
}

struct typed_protocol_usecase {
  sampler_kind kind;
  std::vector<int> fanouts;           // [L]
  std::vector<int> relation_fanouts;  // [L * R]
  std::int64_t batch;
};

std::ostream& operator<<(std::ostream& os, const typed_protocol_usecase& u) {
  os << to_string(u.kind) << " k_lr =";
  for (int k : u.relation_fanouts) os << " " << k;
  return os << " B=" << u.batch;
}

class TypedProtocol : public ::testing::TestWithParam<typed_protocol_usecase> {};

TEST_P(TypedProtocol, CooperativeEqualsSinglePeOnTheGlobalBatch) {
  auto const u = GetParam();
  std::int32_t const R = 3;
  auto const t = test::random_typed_graph(400, R, 4, 19);
  std::vector<vid_t> global;
  for (std::int64_t i = 0; i < u.batch; ++i) global.push_back((i * 37 + 1) % 400);
  batch_key key{u.kind, u.fanouts, 21, 3, {1, false}};
  key.relation_fanouts = u.relation_fanouts;
  std::size_t const L = u.fanouts.size();

  exec_context const host;
  auto const ref = sample_independent(host, t.g, global, key);
  ASSERT_EQ(ref.blocks.size(), L);
  std::vector<std::map<typed_edge, float>> want(L);
  int twice = 0;
  for (std::size_t l = 0; l < L; ++l) {
    EXPECT_EQ(ref.blocks[l].num_relations, R);
    add_edges(ref.blocks[l], want[l], twice);
  }
  EXPECT_EQ(twice, 0);
  ASSERT_GT(want.back().size(), 0u);
  std::set<vid_t> const want_inputs(ref.input_nodes.begin(), ref.input_nodes.end());

  for (int P : {1, 2, 3, 4}) {
    SCOPED_TRACE(::testing::Message() << "P = " << P);
    ownership const owners(t.g.num_nodes, P, 9);
    std::vector<std::vector<vid_t>> seeds(static_cast<std::size_t>(P));
    for (vid_t v : global) seeds[static_cast<std::size_t>(owners.owner(v))].push_back(v);
    auto group = std::make_shared<host_comm_group>(P, std::chrono::seconds(60));
    std::vector<sampled_batch> got(static_cast<std::size_t>(P));
    on_pes(P, [&](int p) {
      host_communicator comm(group, p);
      exec_context ctx(backend::host, p, 1);
      got[static_cast<std::size_t>(p)] =
          sample_cooperative(ctx, comm, t.g, owners, seeds[static_cast<std::size_t>(p)], key);
    });
    std::vector<std::map<typed_edge, float>> have(L);
    int dup = 0;
    std::set<vid_t> inputs;
    std::int64_t input_rows = 0, edges = 0;
    for (auto const& pe : got) {
      ASSERT_EQ(pe.blocks.size(), L);
      for (std::size_t l = 0; l < L; ++l) {
        EXPECT_EQ(pe.blocks[l].num_relations, R);
        EXPECT_EQ(pe.blocks[l].indptr.size(),
                  static_cast<std::size_t>(pe.blocks[l].num_dst * R + 1));
        add_edges(pe.blocks[l], have[l], dup);
      }
      inputs.insert(pe.input_nodes.begin(), pe.input_nodes.end());
      input_rows += static_cast<std::int64_t>(pe.input_nodes.size());
      edges += pe.work.sampled_edges;
    }
    EXPECT_EQ(dup, 0) << "a typed edge was sampled by two PEs";
    for (std::size_t l = 0; l < L; ++l) EXPECT_EQ(have[l], want[l]) << "layer " << l;
    EXPECT_EQ(inputs, want_inputs);
    EXPECT_EQ(input_rows, static_cast<std::int64_t>(want_inputs.size())) << "an input loaded twice";
    EXPECT_EQ(edges, ref.work.sampled_edges);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Cases, TypedProtocol,
    ::testing::Values(typed_protocol_usecase{sampler_kind::ns, {3, 2}, {3, -1, 0, 2, 1, 4}, 40},
                      typed_protocol_usecase{sampler_kind::labor, {3, 2}, {3, -1, 0, 2, 1, 4}, 40},
                      // One fanout per layer for every relation (relation_fanouts empty).
                      typed_protocol_usecase{sampler_kind::ns, {4, 2}, {}, 30},
                      typed_protocol_usecase{sampler_kind::labor, {5}, {}, 7},
                      // A layer without neighbours (fanout 0 on a typed graph: empty rows).
                      typed_protocol_usecase{sampler_kind::ns, {0, 3}, {}, 20}));

TEST(TypedProtocol, LayerParamsSliceTheRelationFanoutsByLayer) {
  std::vector<int> const fanouts = {5, 6};
  std::vector<int> const per = {1, 2, 3, -1, 0, 4};
  batch_key key{sampler_kind::labor, fanouts, 8, 2, {1, false}};
  EXPECT_TRUE(layer_params(key, 1).relation_fanouts.empty());
  EXPECT_EQ(layer_params(key, 1).fanout, 6);
  key.relation_fanouts = per;
  EXPECT_EQ(layer_params(key, 0).relation_fanouts, (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(layer_params(key, 1).relation_fanouts, (std::vector<int>{-1, 0, 4}));
  EXPECT_EQ(layer_params(key, 1).layer, 1u);
  std::vector<int> const odd = {1, 2, 3};
  key.relation_fanouts = odd;  // 3 entries for 2 layers
  EXPECT_THROW((void)layer_params(key, 0), logic_error);
}

}  // namespace
}  // namespace coopgnn
