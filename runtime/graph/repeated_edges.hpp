// Repeated edges of a dataset's edge list: the graph every command works on holds each edge once
// (docs/design.md section 3.2), as build_csc's per-column deduplication gives `train` and `info`.
#pragma once

#include <cstdint>

#include "runtime/graph/dataset.hpp"

namespace coopgnn {

/// Removes from ds's edge list (ds.src, ds.dst and, typed, ds.hetero->edge_type) every edge that
/// repeats an earlier stored edge with the same (source, destination) pair, and on a typed graph
/// the same relation: the edges build_csc deduplicates, so that the list left holds the edges of
/// the CSC `train` builds, in their stored order (the first of each repeat kept). Returns how
/// many were removed (0: ds unchanged). Edges left in their file (ds.edge_file) are not read:
/// returns 0. Host memory: 9 bytes per edge while it runs; O(E log E).
/// @throws logic_error when ds.src, ds.dst (and a typed graph's edge_type) differ in length.
std::int64_t remove_repeated_edges(dataset& ds);

/// How many edges remove_repeated_edges would remove from `ds`, without changing it. Same
/// memory, time and errors.
std::int64_t count_repeated_edges(const dataset& ds);

}  // namespace coopgnn
