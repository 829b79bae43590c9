// Host-side inputs of the CUDA microbenchmarks, kept out of the .cu file (fmt, used by the
// dataset code, does not compile under nvcc).
#pragma once

#include <cstdint>
#include <vector>

#include "runtime/graph/csc.hpp"

namespace coopgnn::bench {

/// The Graph500 R-MAT graph of 2^scale vertices, edge factor 16, symmetrised, as a CSC of
/// in-edges (runtime/graph/generate.hpp, docs/design.md section 3.2). Generated once per scale per
/// process and cached. Generation is single-threaded: about a second at scale 18, minutes at 24.
const csc_graph& rmat_graph(int scale);

/// `count` seed vertices drawn with a keyed hash from [0, num_nodes) (duplicates possible).
std::vector<vid_t> bench_seeds(vid_t num_nodes, std::int64_t count, std::uint64_t seed);

}  // namespace coopgnn::bench
