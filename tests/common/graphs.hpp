// Test graphs and datasets built from a seed (never from the code under test).
#pragma once

#include <cstdint>
#include <vector>

#include "runtime/graph/csc.hpp"
#include "runtime/graph/dataset.hpp"

namespace coopgnn::test {

/// A random directed graph (no duplicate edges, no self-loops) with n vertices and about
/// avg_degree in-edges per vertex, plus the shapes that break samplers: vertex 0 has in-degree 0,
/// vertex 1 receives an edge from every other vertex (a hub), vertex 2 has exactly one in-edge.
csc_graph random_graph(vid_t n, int avg_degree, std::uint64_t seed);

/// A random typed (heterogeneous) graph with its raw edge list (the oracle of the typed tests,
/// never read back from the CSC): n vertices, R relations, about avg_degree in-edges per vertex
/// and relation (sources drawn uniformly, self-loops skipped), with the shapes that break typed
/// samplers: vertex 0 has no in-edge, vertex 1 receives an edge from every other vertex in every
/// relation (a hub per relation, so the same pair under R relations), vertex 2 has exactly one
/// in-edge (from 3, relation R - 1). The list holds each (src, dst, relation) once.
struct typed_graph {
  csc_graph g;                    ///< build_csc(n, src, dst, rel, R)
  std::vector<vid_t> src, dst;    ///< [E] distinct (src, dst, rel) triples
  std::vector<std::int32_t> rel;  ///< [E] in [0, R)
};
typed_graph random_typed_graph(vid_t n, std::int32_t R, int avg_degree, std::uint64_t seed);

/// A learnable node-classification dataset on an undirected random graph: `classes` classes,
/// features = one-hot(class) * 2 + noise in [0, 1), 60/20/20 split, about avg_degree neighbours,
/// with homophilous edges (an edge joins two vertices of the same class with prob. 0.8).
dataset synthetic_dataset(vid_t n, int classes, std::int64_t feature_dim, int avg_degree,
                          std::uint64_t seed);

}  // namespace coopgnn::test
