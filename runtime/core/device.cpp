#include "runtime/core/device.hpp"

#include <algorithm>

#include "runtime/core/error.hpp"
#include "runtime/core/memory_limit.hpp"

#ifdef COOPGNN_WITH_CUDA
#include <cuda_runtime_api.h>

#include "runtime/core/cuda_check.hpp"
#else
#include "runtime/core/cuda_context.hpp"
#endif

namespace coopgnn {

std::vector<std::uint64_t> bytes_per_device(std::uint64_t per_pe, std::uint64_t per_device,
                                            int num_pes, int pes_per_gpu) {
  COOPGNN_EXPECTS(num_pes >= 1, "bytes_per_device: num_pes must be at least 1, got {}", num_pes);
  COOPGNN_EXPECTS(pes_per_gpu >= 1, "bytes_per_device: pes_per_gpu must be at least 1, got {}",
                  pes_per_gpu);
  int const devices = (num_pes + pes_per_gpu - 1) / pes_per_gpu;
  std::vector<std::uint64_t> out;
  out.reserve(static_cast<std::size_t>(devices));
  for (int d = 0; d < devices; ++d) {
    int const pes = std::min(pes_per_gpu, num_pes - d * pes_per_gpu);
    std::uint64_t const share =
        per_pe == 0 ? 0 : saturating_bytes(static_cast<std::int64_t>(pes), per_pe);
    out.push_back(share > UINT64_MAX - per_device ? UINT64_MAX : share + per_device);
  }
  return out;
}

}  // namespace coopgnn

#ifdef COOPGNN_WITH_CUDA
namespace coopgnn {
device_memory query_device_memory(int device) {
  int n = 0;
  COOPGNN_CUDA_CHECK(cudaGetDeviceCount(&n));
  COOPGNN_EXPECTS(device >= 0 && device < n, "CUDA device {} does not exist ({} visible)", device,
                  n);
  int previous = 0;
  COOPGNN_CUDA_CHECK(cudaGetDevice(&previous));
  COOPGNN_CUDA_CHECK(cudaSetDevice(device));
  std::size_t free_b = 0, total_b = 0;
  cudaError_t const st = cudaMemGetInfo(&free_b, &total_b);
  COOPGNN_CUDA_CHECK(cudaSetDevice(previous));
  COOPGNN_CUDA_CHECK(st);
  return {static_cast<std::uint64_t>(free_b), static_cast<std::uint64_t>(total_b)};
}
}  // namespace coopgnn
#else  // without CUDA: no device exists
namespace coopgnn {
device_info query_devices() { return device_info{0, "built without CUDA (COOPGNN_CUDA=OFF)", {}}; }
device_memory query_device_memory(int device) {
  COOPGNN_FAIL("CUDA device {}: this build has no CUDA backend (COOPGNN_CUDA=OFF)", device);
}

// Without CUDA no cuda_context can exist, so no device memory is ever allocated; these
// definitions let the device types (device_buffer, pinned_buffer and the structs holding them)
// be declared, moved and destroyed in shared code of a host-only build. Allocating throws.
namespace cuda::detail {
void* pool_allocate(mem_pool_t, std::size_t bytes, stream_t) {
  if (bytes == 0) return nullptr;
  COOPGNN_FAIL("device memory requested in a build without CUDA");
}
void pool_free(void*, stream_t) noexcept {}
void copy_async(void*, const void*, std::size_t bytes, stream_t) {
  if (bytes == 0) return;
  COOPGNN_FAIL("device copy requested in a build without CUDA");
}
void zero_async(void*, std::size_t bytes, stream_t) {
  if (bytes == 0) return;
  COOPGNN_FAIL("device memset requested in a build without CUDA");
}
void synchronize(stream_t) {}
void* pinned_allocate(std::size_t bytes) {
  if (bytes == 0) return nullptr;
  COOPGNN_FAIL("pinned memory requested in a build without CUDA");
}
void pinned_free(void*) noexcept {}
const void* mapped_device_pointer(const void* host) { return host; }
}  // namespace cuda::detail

namespace cuda {
cuda_context::cuda_context(int device, int pe, std::uint64_t) : device_(device), pe_(pe) {
  COOPGNN_FAIL("cuda_context: this build has no CUDA backend");
}
cuda_context::~cuda_context() = default;
}  // namespace cuda
}  // namespace coopgnn
#endif
