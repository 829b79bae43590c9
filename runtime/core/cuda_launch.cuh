// The one kernel launch helper of every .cu file (docs/design.md section 12; RAFT's RAFT_CHECK_CUDA
// habit): empty grids are skipped, every launch is checked, and a build with COOPGNN_DEBUG_SYNC=ON
// synchronises the stream after each launch and checks again, so an asynchronous fault (an
// illegal address, a trap) is reported at the kernel that caused it, by name, instead of at the
// next synchronising call. Include from .cu files only.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <string>

#include "runtime/core/cuda_check.hpp"

namespace coopgnn::cuda::detail {

/// Checks the launch just enqueued on `s` (and, with COOPGNN_DEBUG_SYNC, its completion).
/// @throws cuda_error "<kernel> launch at <file>:<line>: ..." naming the kernel.
inline void check_launch(const char* kernel, cudaStream_t s, const char* file, int line) {
  cudaError_t st = cudaGetLastError();
#ifdef COOPGNN_DEBUG_SYNC
  if (st == cudaSuccess) st = cudaStreamSynchronize(s);
#else
  (void)s;
#endif
  if (st != cudaSuccess) [[unlikely]] {
    std::string const what = std::string("launch of ") + kernel;
    ::coopgnn::detail::throw_cuda(st, what.c_str(), file, line);
  }
}

/// kernel<<<grid, block, smem, s>>>(args...) unless the grid or block is empty, then
/// check_launch. Arguments convert to the kernel's parameter types as in a plain launch.
template <typename... Params, typename... Args>
void launch(const char* name, const char* file, int line, void (*kernel)(Params...), dim3 grid,
            dim3 block, std::size_t smem, cudaStream_t s, Args&&... args) {
  if (grid.x == 0 || grid.y == 0 || grid.z == 0 || block.x * block.y * block.z == 0) return;
  kernel<<<grid, block, smem, s>>>(static_cast<Params>(args)...);
  check_launch(name, s, file, line);
}

}  // namespace coopgnn::cuda::detail

/// COOPGNN_LAUNCH(kernel, grid, block, smem, stream, args...): the checked launch above, with
/// the kernel's name and the call site in its error message.
#define COOPGNN_LAUNCH(kernel, grid, block, smem, stream, ...)                                    \
  ::coopgnn::cuda::detail::launch(#kernel, __FILE__, __LINE__, kernel, grid, block, smem, stream, \
                                  ##__VA_ARGS__)
