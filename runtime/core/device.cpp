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

rank_devices choose_rank_devices(int local_index, int local_ranks, int num_pes, int pes_per_gpu,
                                 int visible, bool visibility_set) {
  COOPGNN_EXPECTS(local_ranks >= 1, "choose_rank_devices: local_ranks must be at least 1, got {}",
                  local_ranks);
  COOPGNN_EXPECTS(local_index >= 0 && local_index < local_ranks,
                  "choose_rank_devices: local_index {} is outside [0, {})", local_index,
                  local_ranks);
  COOPGNN_EXPECTS(num_pes >= 1, "choose_rank_devices: num_pes must be at least 1, got {}", num_pes);
  COOPGNN_EXPECTS(pes_per_gpu >= 1, "choose_rank_devices: pes_per_gpu must be at least 1, got {}",
                  pes_per_gpu);
  COOPGNN_EXPECTS(visible >= 0, "choose_rank_devices: visible must be >= 0, got {}", visible);
  int const n = (num_pes + pes_per_gpu - 1) / pes_per_gpu;
  rank_devices out;
  auto const range = [&](int first) {
    for (int d = first; d < first + n; ++d) out.devices.push_back(d);
  };
  // 64-bit: local_ranks x n may pass INT_MAX for absurd inputs.
  if (static_cast<std::int64_t>(local_ranks) * n <= visible) {
    range(local_index * n);
    out.reason = fmt::format("node-local GPU rank {} of {}, {} device{} each of the {} visible{}",
                             local_index, local_ranks, n, n == 1 ? "" : "s", visible,
                             visibility_set ? " (CUDA_VISIBLE_DEVICES)" : "");
    return out;
  }
  if (visibility_set && visible >= n) {
    range(0);
    out.reason = fmt::format(
        "CUDA_VISIBLE_DEVICES leaves this rank {} device{} (fewer than the {} x {} its node's {} "
        "GPU ranks need together, so the launcher gave each rank its own): the first {}",
        visible, visible == 1 ? "" : "s", local_ranks, n, local_ranks, n);
    return out;
  }
  std::string const need = fmt::format(
      "{} GPU rank{} on this node need {} CUDA device{} each (--pes {} / --pes-per-gpu {}, "
      "rounded up), {} in all, but this rank sees {}{}",
      local_ranks, local_ranks == 1 ? "" : "s", n, n == 1 ? "" : "s", num_pes, pes_per_gpu,
      static_cast<std::int64_t>(local_ranks) * n, visible,
      visibility_set ? " (CUDA_VISIBLE_DEVICES is set)" : "");
  if (visible < n) {
    out.error = fmt::format(
        "{}. Not even one rank fits: lower --pes or raise --pes-per-gpu (several PEs share a "
        "GPU), or make {} devices visible to each rank",
        need, n);
  } else {
    out.error = fmt::format(
        "{}. Start at most {} GPU rank{} per node (mpirun --map-by ppr:{}:node, srun "
        "--ntasks-per-node={}), use fewer devices per rank (lower --pes or raise --pes-per-gpu), "
        "or give each rank its own devices (srun --gpus-per-task={}, or a per-rank "
        "CUDA_VISIBLE_DEVICES)",
        need, visible / n, visible / n == 1 ? "" : "s", visible / n, visible / n, n);
  }
  return out;
}

std::string format_device_uuid(std::span<const unsigned char, 16> b) {
  std::string s = "GPU-";
  for (std::size_t i = 0; i < b.size(); ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) s += '-';
    s += fmt::format("{:02x}", b[i]);
  }
  return s;
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

device_identity query_device_identity(int device) {
  int n = 0;
  COOPGNN_CUDA_CHECK(cudaGetDeviceCount(&n));
  COOPGNN_EXPECTS(device >= 0 && device < n, "CUDA device {} does not exist ({} visible)", device,
                  n);
  cudaDeviceProp prop{};
  COOPGNN_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  char bus[64] = {};
  COOPGNN_CUDA_CHECK(cudaDeviceGetPCIBusId(bus, static_cast<int>(sizeof bus), device));
  device_identity id;
  id.uuid = format_device_uuid(std::span<const unsigned char, 16>(
      reinterpret_cast<const unsigned char*>(prop.uuid.bytes), 16));
  id.pci_bus_id = bus;
  id.name = prop.name;
  return id;
}
}  // namespace coopgnn
#else  // without CUDA: no device exists
namespace coopgnn {
device_info query_devices() { return device_info{0, "built without CUDA (COOPGNN_CUDA=OFF)", {}}; }
device_memory query_device_memory(int device) {
  COOPGNN_FAIL("CUDA device {}: this build has no CUDA backend (COOPGNN_CUDA=OFF)", device);
}
device_identity query_device_identity(int device) {
  COOPGNN_FAIL("CUDA device {}: this build has no CUDA backend (COOPGNN_CUDA=OFF)", device);
}

// Without CUDA no cuda_context can exist, so no device memory is ever allocated; these
// definitions let the device types (device_buffer, pinned_buffer and the structs holding them)
// be declared, moved and destroyed in shared code of a host-only build. Allocating throws.
namespace cuda::detail {
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
// No device_pool is ever constructed; its destructor and deallocate run only on empty objects.
struct device_pool::resources {};
device_pool::device_pool(std::uint64_t) {
  COOPGNN_FAIL("device_pool: this build has no CUDA backend");
}
device_pool::~device_pool() = default;
void* device_pool::allocate(std::size_t bytes, stream_t) const {
  if (bytes == 0) return nullptr;
  COOPGNN_FAIL("device memory requested in a build without CUDA");
}
void device_pool::deallocate(void*, std::size_t, stream_t) const noexcept {}
std::uint64_t device_pool::used_bytes() const { return 0; }
std::uint64_t device_pool::peak_used_bytes() const { return 0; }
void device_pool::reset_peak_used() const {}

cuda_context::cuda_context(int device, int pe, std::uint64_t) : device_(device), pe_(pe) {
  COOPGNN_FAIL("cuda_context: this build has no CUDA backend");
}
cuda_context::~cuda_context() = default;
}  // namespace cuda
}  // namespace coopgnn
#endif
