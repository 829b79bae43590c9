#include "runtime/core/device.hpp"

#ifndef COOPGNN_WITH_CUDA
#include "runtime/core/cuda_context.hpp"
#include "runtime/core/error.hpp"

namespace coopgnn {
device_info query_devices() { return device_info{0, "built without CUDA (COOPGNN_CUDA=OFF)", {}}; }

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
