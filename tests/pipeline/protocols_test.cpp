// The two minibatch protocols (docs/design.md sections 6 and 8): cooperative over P PEs samples
// exactly the single-PE edge set of the global batch and computes the same logits and gradients;
// independent(P=1) == cooperative(P=1); independent work >= cooperative work on every batch.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <thread>

#include "runtime/core/error.hpp"
#include "pipeline/trainer.hpp"
#include "tests/common/steps.hpp"

namespace coopgnn {
namespace {

struct protocol_usecase {
  std::string model;
  sampler_kind sampler;
  std::vector<int> fanouts;
  std::int64_t batch;
  bool linear_head;
  std::int64_t kappa = 1;  ///< LABOR batch dependency
};

std::ostream& operator<<(std::ostream& os, const protocol_usecase& u) {
  os << u.model << "/" << to_string(u.sampler) << " fanouts";
  for (int f : u.fanouts) os << " " << f;
  return os << " B=" << u.batch << (u.linear_head ? " head" : "") << " kappa=" << u.kappa;
}

using test::as_set;
using test::step_result;

const test::step_fixture& data() { return test::protocol_data(); }

train_config make_cfg(const protocol_usecase& u, minibatch_mode mode, int P) {
  train_config c;
  c.mode = mode;
  c.num_pes = P;
  c.model = models::parse_conv_kind(u.model);
  c.hidden = 8;
  c.linear_head = u.linear_head;
  c.fanouts = u.fanouts;
  c.sampler = u.sampler;
  c.batch_dependency = u.kappa;
  c.batch_size = u.batch;
  c.dropout = 0.3f;  // active: masks must be keyed by vertex, not by row
  c.seed = 77;
  if (c.model == models::conv_kind::gat) {
    c.heads = 2;
    c.out_heads = 2;
    c.attn_dropout = 0.3f;  // keyed by global (destination, source, head): PE-independent
    c.residual = true;
  }
  return c;
}

step_result run_step(const protocol_usecase& u, minibatch_mode mode, int P) {
  return test::run_protocol_step(make_cfg(u, mode, P));
}

class ProtocolTest : public ::testing::TestWithParam<protocol_usecase> {};

TEST_P(ProtocolTest, CooperativeEqualsSinglePe) {
  auto const u = GetParam();
  auto const ref = run_step(u, minibatch_mode::independent, 1);
  ASSERT_GT(ref.edges[0].size(), 0u);
  for (int P : {1, 2, 3, 4, 8}) {
    SCOPED_TRACE(::testing::Message() << "P = " << P);
    auto const coop = run_step(u, minibatch_mode::cooperative, P);
    for (std::size_t l = 0; l < u.fanouts.size(); ++l) {
      EXPECT_EQ(as_set(coop.edges[l]), as_set(ref.edges[l])) << "layer " << l;
      EXPECT_EQ(coop.edges[l].size(), as_set(coop.edges[l]).size())
          << "layer " << l << ": an edge was sampled by two PEs";
    }
    test::expect_same_outputs(coop, ref);
  }
}

TEST_P(ProtocolTest, IndependentP1EqualsCooperativeP1) {
  auto const u = GetParam();
  auto const ind = run_step(u, minibatch_mode::independent, 1);
  auto const coop = run_step(u, minibatch_mode::cooperative, 1);
  for (std::size_t l = 0; l < u.fanouts.size(); ++l) EXPECT_EQ(ind.edges[l], coop.edges[l]);
  test::expect_same_outputs(coop, ind);
  EXPECT_EQ(ind.work.sampled_edges, coop.work.sampled_edges);
  EXPECT_EQ(ind.work.sampled_vertices, coop.work.sampled_vertices);
  EXPECT_EQ(ind.work.feature_rows, coop.work.feature_rows);
  EXPECT_EQ(coop.work.alltoall_bytes, 0);
}

TEST_P(ProtocolTest, IndependentDoesAtLeastTheCooperativeWork) {
  auto const u = GetParam();
  for (int P : {2, 4, 8}) {
    SCOPED_TRACE(::testing::Message() << "P = " << P);
    auto const ind = run_step(u, minibatch_mode::independent, P);
    auto const coop = run_step(u, minibatch_mode::cooperative, P);
    EXPECT_GE(ind.work.sampled_edges, coop.work.sampled_edges);
    EXPECT_GE(ind.work.sampled_vertices, coop.work.sampled_vertices);
    EXPECT_GE(ind.work.feature_rows, coop.work.feature_rows);
    EXPECT_EQ(ind.work.alltoall_bytes, 0);
    EXPECT_GT(coop.work.alltoall_bytes, 0);
    // Keyed sampling: the union of the independent samples is the cooperative sample.
    for (std::size_t l = 0; l < u.fanouts.size(); ++l) {
      EXPECT_EQ(as_set(ind.edges[l]), as_set(coop.edges[l])) << "layer " << l;
    }
    test::expect_same_outputs(ind, coop);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Protocols, ProtocolTest,
    ::testing::Values(protocol_usecase{"sage", sampler_kind::ns, {4, 3}, 64, false},
                      protocol_usecase{"sage", sampler_kind::labor, {5, 5, 5}, 50, false},
                      protocol_usecase{"gcn", sampler_kind::ns, {-1, 3}, 33, true},
                      protocol_usecase{"gcn", sampler_kind::labor, {3}, 5, false},
                      protocol_usecase{"sage", sampler_kind::labor, {4, 4}, 40, false, 8},
                      protocol_usecase{"gat", sampler_kind::ns, {4, 3}, 64, false},
                      protocol_usecase{"gat", sampler_kind::labor, {-1, 3}, 33, true}));

// R-GCN on a heterogeneous graph (docs/typed-sampling.md): typed sampling (per-relation fanouts),
// per-type ownership, the featureless types' embedding rows and the featured type's fixed rows
// through the same exchanges. Cooperative(P) == one PE, and the union of the independent samples is
// the cooperative sample.
struct hetero_usecase {
  sampler_kind sampler;
  std::vector<int> fanouts;
  std::vector<int> relation_fanouts;  // [L * 5] or empty
  std::int64_t bases;
  std::int64_t batch;
  std::int64_t blocks = 0;  // block-diagonal decomposition (eq. 4)
};

std::ostream& operator<<(std::ostream& os, const hetero_usecase& u) {
  os << to_string(u.sampler) << " fanouts";
  for (int f : u.fanouts) os << " " << f;
  if (!u.relation_fanouts.empty()) os << " per-relation";
  return os << " bases " << u.bases << " blocks " << u.blocks << " B=" << u.batch;
}

train_config hetero_cfg(const hetero_usecase& u, minibatch_mode mode, int P) {
  train_config c;
  c.mode = mode;
  c.num_pes = P;
  c.model = models::conv_kind::rgcn;
  c.hidden = 8;
  c.fanouts = u.fanouts;
  c.relation_fanouts = u.relation_fanouts;
  c.num_bases = u.bases;
  c.num_blocks = u.blocks;
  c.sampler = u.sampler;
  c.batch_size = u.batch;
  c.dropout = 0.3f;
  c.seed = 41;
  return c;
}

class HeteroProtocolTest : public ::testing::TestWithParam<hetero_usecase> {};

TEST_P(HeteroProtocolTest, CooperativeEqualsSinglePe) {
  auto const u = GetParam();
  auto const& d = test::hetero_protocol_data();
  auto const ref = test::run_protocol_step(d, hetero_cfg(u, minibatch_mode::independent, 1));
  ASSERT_GT(ref.edges[0].size(), 0u);
  for (int P : {1, 2, 3, 4}) {
    SCOPED_TRACE(::testing::Message() << "P = " << P);
    auto const coop = test::run_protocol_step(d, hetero_cfg(u, minibatch_mode::cooperative, P));
    for (std::size_t l = 0; l < u.fanouts.size(); ++l) {
      EXPECT_EQ(as_set(coop.edges[l]), as_set(ref.edges[l])) << "layer " << l;
      EXPECT_EQ(coop.edges[l].size(), as_set(coop.edges[l]).size()) << "layer " << l;
    }
    test::expect_same_outputs(coop, ref);
    auto const ind = test::run_protocol_step(d, hetero_cfg(u, minibatch_mode::independent, P));
    for (std::size_t l = 0; l < u.fanouts.size(); ++l) {
      EXPECT_EQ(as_set(ind.edges[l]), as_set(coop.edges[l])) << "layer " << l;
    }
    test::expect_same_outputs(ind, ref);
    EXPECT_GE(ind.work.sampled_edges, coop.work.sampled_edges);
    EXPECT_GE(ind.work.feature_rows, coop.work.feature_rows);
    // The counts by type and relation add up, and cooperative counts every edge once: its
    // per-relation edges are the single PE's (the sample is the same edge set).
    for (auto const* r : {&coop, &ind}) {
      ASSERT_EQ(r->work.rows_per_type.size(), 3u);
      ASSERT_EQ(r->work.edges_per_relation.size(), 5u);
      std::int64_t rows = 0, edges = 0;
      for (auto v : r->work.rows_per_type) rows += v;
      for (auto v : r->work.edges_per_relation) edges += v;
      EXPECT_EQ(rows, r->work.feature_rows);
      EXPECT_EQ(edges, r->work.sampled_edges);
    }
    EXPECT_EQ(coop.work.edges_per_relation, ref.work.edges_per_relation);
    EXPECT_EQ(coop.work.rows_per_type, ref.work.rows_per_type);
    for (std::size_t t = 0; t < 3; ++t)
      EXPECT_GE(ind.work.rows_per_type[t], coop.work.rows_per_type[t]) << "type " << t;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Rgcn, HeteroProtocolTest,
    ::testing::Values(
        hetero_usecase{sampler_kind::ns, {3, 2}, {}, 0, 40},
        // relation 1 (paper -> author) not sampled at layer 0, all cites at 1
        hetero_usecase{sampler_kind::ns, {3, 2}, {2, 0, 1, 1, 3, -1, 2, 1, 1, -1}, 2, 37},
        hetero_usecase{sampler_kind::labor, {4, 4}, {}, 3, 50},
        // Block-diagonal: 4 blocks (12 -> 8 -> 4 wide), and 2 with LABOR.
        hetero_usecase{sampler_kind::ns, {3, 2}, {}, 0, 40, 4},
        hetero_usecase{sampler_kind::labor, {4, 4}, {2, 0, 1, 1, 3, -1, 2, 1, 1, -1}, 0, 45, 2}));

TEST(HeteroTrainer, RgcnLearnsTheSyntheticTaskInBothProtocols) {
  auto const& d = test::hetero_protocol_data();
  for (auto mode : {minibatch_mode::cooperative, minibatch_mode::independent}) {
    train_config c = hetero_cfg({sampler_kind::ns, {-1, -1}, {}, 2, 45}, mode, 3);
    c.hidden = 16;
    c.dropout = 0.0f;
    c.weight_decay = 0.0f;
    trainer tr(d.ds, d.g, c);
    epoch_report r;
    for (int e = 1; e <= 15; ++e) r = tr.run_epoch(e, e == 15);
    // 4 balanced classes: chance is 0.25; the features alone carry the class.
    EXPECT_GT(r.test_metric, 0.7) << to_string(mode);
  }
}

TEST(HeteroTrainer, UntypedModelsRunOnTheRelationsMergedGraph) {
  // bench modes' GCN baseline for R-GCN: the typed dataset on an untyped CSC of the same edges.
  // With every neighbour kept, GCN's sample is R-GCN's typed sample with the relations dropped
  // (the same (dst, src) pairs), and cooperative(P) == one PE still holds.
  auto const& d = test::hetero_protocol_data();
  test::step_fixture merged;
  merged.ds = d.ds;
  merged.g = build_csc(d.ds.num_nodes, d.ds.src, d.ds.dst);
  train_config typed =
      hetero_cfg({sampler_kind::ns, {-1, -1}, {}, 0, 40}, minibatch_mode::independent, 1);
  auto const rgcn = test::run_protocol_step(d, typed);
  train_config c = typed;
  c.model = models::conv_kind::gcn;
  auto const ref = test::run_protocol_step(merged, c);
  ASSERT_GT(ref.edges[0].size(), 0u);
  for (std::size_t l = 0; l < 2; ++l) {
    EXPECT_EQ(as_set(ref.edges[l]), as_set(rgcn.edges[l])) << "layer " << l;
  }
  EXPECT_EQ(ref.work.rows_per_type, rgcn.work.rows_per_type);
  EXPECT_TRUE(ref.work.edges_per_relation.empty()) << "no relations to split the edges by";
  for (int P : {2, 3}) {
    c.mode = minibatch_mode::cooperative;
    c.num_pes = P;
    auto const coop = test::run_protocol_step(merged, c);
    test::expect_same_outputs(coop, ref);
  }
  // The typed CSC is R-GCN's only; relation fanouts need the typed CSC too.
  c.relation_fanouts = {2, 0, 1, 1, 3, -1, 2, 1, 1, -1};
  EXPECT_THROW(trainer(merged.ds, merged.g, c), logic_error);
}

TEST(HeteroTrainer, RefusesWhatTypedGraphsDoNotSupport) {
  auto const& d = test::hetero_protocol_data();
  train_config c =
      hetero_cfg({sampler_kind::ns, {3, 2}, {}, 0, 40}, minibatch_mode::cooperative, 2);
  c.model = models::conv_kind::sage;
  EXPECT_THROW(trainer(d.ds, d.g, c), logic_error);  // --model rgcn needed
  c.model = models::conv_kind::rgcn;
  c.embedding_dim = 5;  // the featured type is 12 wide
  EXPECT_THROW(trainer(d.ds, d.g, c), logic_error);
  c.embedding_dim = 0;
  c.relation_fanouts = {1, 2, 3};  // not L x R
  EXPECT_THROW(trainer(d.ds, d.g, c), logic_error);
  // An untyped CSC for a typed dataset.
  c.relation_fanouts = {};
  csc_graph const flat = build_csc(d.ds.num_nodes, d.ds.src, d.ds.dst);
  EXPECT_THROW(trainer(d.ds, flat, c), logic_error);
  // Block-diagonal: 3 blocks divide the 12 input features but not --hidden 8; with bases.
  auto expect_option_error = [&](const train_config& bad, const char* what) {
    try {
      trainer const t(d.ds, d.g, bad);
      ADD_FAILURE() << "no error for " << what;
    } catch (const logic_error& e) {
      EXPECT_NE(std::string(e.what()).find("--num-blocks"), std::string::npos) << e.what();
    }
  };
  c.num_blocks = 3;
  expect_option_error(c, "3 blocks of hidden 8");
  c.num_blocks = 4;
  c.num_bases = 2;
  expect_option_error(c, "blocks with bases");
  c.num_bases = 0;
  c.hidden = 6;  // 4 does not divide 6
  expect_option_error(c, "4 blocks of hidden 6");
}

TEST(Trainer, WorkAccountingMatchesTheBlocks) {
  protocol_usecase u{"sage", sampler_kind::ns, {4, 3}, 64, false};
  auto const r = run_step(u, minibatch_mode::independent, 1);
  std::int64_t edges = 0;
  for (auto const& e : r.edges) edges += static_cast<std::int64_t>(e.size());
  EXPECT_EQ(r.work.sampled_edges, edges);
  EXPECT_EQ(r.work.seeds, 64);
  EXPECT_GE(r.work.feature_rows, 64);
}

TEST(Trainer, LearnsAndIsReproducibleForAnyThreadCount) {
  auto run = [&](int threads, minibatch_mode mode) {
    train_config c = make_cfg({"sage", sampler_kind::ns, {5, 5}, 128, false}, mode, 3);
    c.sample_threads = threads;
    c.hidden = 16;
    c.lr = 0.02f;
    return test::run_protocol_epochs(c, 8);
  };
  auto const [l1, r1] = run(1, minibatch_mode::cooperative);
  auto const [l3, r3] = run(3, minibatch_mode::cooperative);
  EXPECT_EQ(l1, l3) << "loss trajectory depends on the sampler thread count";
  EXPECT_LT(l1.back(), l1.front());
  EXPECT_GT(r1.test_metric, 0.6) << "4 classes, homophilous graph: well above chance (0.25)";
  EXPECT_EQ(r1.metric_name, "accuracy");
  EXPECT_EQ(r1.batches, (420 + 127) / 128);
  auto const [li, ri] = run(1, minibatch_mode::independent);
  for (std::size_t e = 0; e < l1.size(); ++e) EXPECT_NEAR(li[e], l1[e], 1e-3);
}

TEST(Trainer, LossTrajectoryDoesNotDependOnThePeThreadBudget) {
  // The compute budget (BLAS row split, parallel sparse and element-wise host kernels), with the
  // sampler's threads fixed: bitwise the same losses for 1, 2 and 3 threads per PE.
  auto run = [&](int threads) {
    train_config c =
        make_cfg({"gcn", sampler_kind::ns, {5, 5}, 128, false}, minibatch_mode::cooperative, 2);
    c.threads_per_pe = threads;
    c.sample_threads = 1;
    c.hidden = 16;
    c.lr = 0.02f;
    return test::run_protocol_epochs(c, 3).first;
  };
  auto const l1 = run(1);
  EXPECT_EQ(run(2), l1) << "2 threads per PE";
  EXPECT_EQ(run(3), l1) << "3 threads per PE";
}

TEST(Trainer, PeThreadBudgetResolvesAutoAndRejectsNegatives) {
  train_config c;
  c.num_pes = 2;
  c.threads_per_pe = 5;
  EXPECT_EQ(pe_thread_budget(c), 5);
  EXPECT_EQ(sampler_threads(c), 5);  // 0 = the PE budget
  c.sample_threads = 2;
  EXPECT_EQ(sampler_threads(c), 2);
  c.threads_per_pe = 0;
  int const hw = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  EXPECT_EQ(pe_thread_budget(c), std::max(1, hw / 2));
  c.num_pes = 4 * hw;  // more PEs than threads: still one each
  EXPECT_EQ(pe_thread_budget(c), 1);
  c.threads_per_pe = -1;
  EXPECT_THROW((void)pe_thread_budget(c), logic_error);
}

TEST(Trainer, RejectsConfigurationsThatDoNotFit) {
  auto const& d = data();
  auto cfg = make_cfg({"sage", sampler_kind::ns, {4}, 64, false}, minibatch_mode::cooperative, 2);
  auto bad = cfg;
  EXPECT_THROW((void)models::parse_conv_kind("gin"), logic_error);
  bad = cfg;
  bad.fanouts = {};
  EXPECT_THROW(trainer(d.ds, d.g, bad), logic_error);
  bad = cfg;
  bad.fanouts = {-2};
  EXPECT_THROW(trainer(d.ds, d.g, bad), logic_error);
  bad = cfg;
  bad.batch_size = 0;
  EXPECT_THROW(trainer(d.ds, d.g, bad), logic_error);
  dataset nofeat = d.ds;
  nofeat.features = matrix<float>(d.ds.num_nodes, 0);
  EXPECT_THROW(trainer(nofeat, d.g, cfg), logic_error);
  dataset notrain = d.ds;
  notrain.train.clear();
  EXPECT_THROW(trainer(notrain, d.g, cfg), logic_error);
}

}  // namespace
}  // namespace coopgnn
