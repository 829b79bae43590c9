// Link-prediction steps summarised across PEs (docs/design.md sections 7.1 and 8): the fixture and
// helpers the link-prediction protocol tests of every backend share.
#pragma once

#include <map>
#include <span>
#include <tuple>
#include <vector>

#include "pipeline/trainer.hpp"

namespace coopgnn::test {

/// A link-prediction dataset on test::synthetic_dataset (homophilous, class-revealing
/// features): every 8th undirected edge {u, v} (u < v, in id order) is held out for test with
/// one uniform non-edge negative (u, w) each, both directions removed from the graph; the other
/// undirected edges are the training positives (u < v) and stay in the graph in both directions.
struct link_fixture {
  dataset ds;
  csc_graph g;
};
link_fixture make_link_fixture(vid_t n, std::uint64_t seed);
/// make_link_fixture(600, 5), built once per process.
const link_fixture& link_data();

/// A typed link-prediction task on test::hetero_protocol_data() (papers with class-revealing
/// features; relations 0 author:writes:paper, 1 paper:written_by:author, 2 subject:has:paper,
/// 3 paper:in:subject, 4 paper:cites:paper): for each relation r of `relations`, its distinct
/// arcs u -> v in (u, v) order; every 8th goes to the test set with `negatives` distinct tails w
/// of r's destination type (w != u, u -> w not an r-arc; std::mt19937_64, seed 17) as one query
/// (labels, indexes), and leaves the graph together with its reverse (v -> u in relation 0 for
/// relation 1, in relation 4 for relation 4, in 1 for 0, 3 for 2, 2 for 3); the other arcs are
/// the training positives. Every pair carries its relation.
link_fixture make_typed_link_fixture(const std::vector<std::int32_t>& relations, int negatives);
/// make_typed_link_fixture({1, 4}, 5), built once per process.
const link_fixture& typed_link_data();
/// The base configuration of the typed link tests: R-GCN (2 bases) 12 -> 8 -> 6 with the
/// distmult decoder, fanouts 3,2, B = 41 positives, 2 negatives each, dropout 0.2, seed 19.
train_config typed_link_cfg(minibatch_mode mode, int P);

/// The base configuration of the link-prediction protocol tests: SAGE 8 -> 6, fanouts 4,3,
/// B = 37 positives, 2 negatives each, dropout 0.2, seed 13.
train_config link_cfg(minibatch_mode mode, int P);

/// Every PE's pairs of one step merged: the scores of each (u, v, label), sorted (a pair may
/// occur more than once), replica 0's gradients, the summed work and the loss.
struct link_step {
  std::map<std::tuple<vid_t, vid_t, float>, std::vector<float>> scores;
  std::vector<float> grads;
  work_counters work;
  double loss = 0;
  std::int64_t pairs = 0;
};

/// Builds a trainer for `cfg` on `f` and runs one step (no update) on the first cfg.batch_size
/// positives of epoch 1's order with minibatch index 5; records a gtest failure when replicas'
/// gradients differ.
link_step run_link_step(const train_config& cfg, const link_fixture& f = link_data());
/// The same on a given global batch (indices into f's training positives) with minibatch `index`.
link_step run_link_step(const train_config& cfg, std::span<const vid_t> batch, std::uint32_t index,
                        const link_fixture& f = link_data());

/// Same pairs, scores within `tol` (absolute), gradients within tol * 10 of the largest, loss
/// within a relative tol; records gtest failures naming the first mismatch.
void expect_same(const link_step& a, const link_step& ref, float tol = 1e-5f);

}  // namespace coopgnn::test
