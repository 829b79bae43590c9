// Basic index types (DESIGN.md section 3: 64-bit offsets; vertex ids chosen by size).
//
// The host backend uses 64-bit vertex and edge ids everywhere, which covers every graph that fits
// in one machine's memory; the CUDA backend may narrow vertex ids to 32 bits inside kernels.
#pragma once

#include <cstdint>

namespace coopgnn {

using vid_t = std::int64_t;  ///< global vertex id, 0 <= v < |V|
using eid_t = std::int64_t;  ///< edge offset into CSC indices, 0 <= e < |E|

/// Which implementation executes kernels and copies (DESIGN.md section 2).
enum class backend { host, cuda };

}  // namespace coopgnn
