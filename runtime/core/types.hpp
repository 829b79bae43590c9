// Basic index types (docs/design.md section 3.3: 64-bit vertex ids and edge offsets).
//
// The host backend uses 64-bit vertex and edge ids everywhere, which covers every graph that fits
// in one machine's memory; the CUDA backend may narrow vertex ids to 32 bits inside kernels.
#pragma once

#include <cstdint>

namespace coopgnn {

using vid_t = std::int64_t;  ///< global vertex id, 0 <= v < |V|
using eid_t = std::int64_t;  ///< edge offset into CSC indices, 0 <= e < |E|

/// Which implementation executes kernels and copies (docs/design.md section 2).
///  - host:     host references on host memory (the reference backend);
///  - cuda:     CUDA kernels on the memory of the PE's device;
///  - emulated: test-only device: the host references run on memory that is marked as device
///              memory (separate allocations, poisoned when allocated, never readable through
///              the host accessors of the view types), so the CPU suite runs the CUDA path's
///              uploads, downloads and memory-space checks end to end (runtime/core/memory.hpp).
enum class backend { host, cuda, emulated };

/// Where a buffer lives (docs/design.md section 2): host memory, or the device memory of a PE (a
/// CUDA device, or the emulated device of backend::emulated).
enum class memory_space { host, device };

}  // namespace coopgnn
