// The device memory of one PE (cuda_context.hpp, device_pool) on RMM: a statistics_resource_adaptor
// over a cuda_async_memory_resource. CUDA builds only (the host-only build's stubs are in
// device.cpp); this is the one translation unit that includes RMM, so RMM's headers (and the CCCL
// they carry) reach no kernel.
#if defined(COOPGNN_WITH_CUDA)
#include <rmm/aligned.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/cuda_async_memory_resource.hpp>
#include <rmm/mr/statistics_resource_adaptor.hpp>

#include <cuda/stream_ref>

#include <exception>
#include <mutex>
#include <new>
#include <optional>

#include "runtime/core/cuda_context.hpp"
#include "runtime/core/error.hpp"
#include "runtime/core/free_stream.hpp"

namespace coopgnn::cuda {

struct device_pool::resources {
  explicit resources(std::uint64_t release_threshold_bytes)
      : pool(std::nullopt, static_cast<std::size_t>(release_threshold_bytes)), stats(pool) {}

  rmm::mr::cuda_async_memory_resource pool;   // the PE's cudaMemPool
  rmm::mr::statistics_resource_adaptor stats;  // counts every allocation made through it
  // reset_peak_used: bytes in use when the adaptor's current counter frame was pushed; the
  // frame counts from 0, so the bytes in use are base + frame.value and the peak since the
  // reset is base + frame.peak.
  std::mutex reset_mutex;
  std::int64_t base = 0;
  bool pushed = false;
};

device_pool::device_pool(std::uint64_t release_threshold_bytes) {
  try {
    r_ = std::make_unique<resources>(release_threshold_bytes);
  } catch (const std::exception& e) {
    throw cuda_error(fmt::format("device_pool: creating the RMM cuda_async_memory_resource "
                                 "(release threshold {} bytes) failed: {}",
                                 release_threshold_bytes, e.what()));
  }
  handle_ = r_->pool.pool_handle();
}

device_pool::~device_pool() = default;

void* device_pool::allocate(std::size_t bytes, stream_t s) const {
  if (bytes == 0) return nullptr;
  try {
    return r_->stats.allocate(::cuda::stream_ref{s}, bytes, rmm::CUDA_ALLOCATION_ALIGNMENT);
  } catch (const std::bad_alloc& e) {  // rmm::out_of_memory and rmm::bad_alloc
    throw cuda_error(fmt::format(
        "device_pool: out of device memory allocating {} bytes ({} bytes in use by this PE): {}",
        bytes, used_bytes(), e.what()));
  } catch (const std::exception& e) {
    throw cuda_error(fmt::format("device_pool: allocating {} bytes failed: {}", bytes, e.what()));
  }
}

void device_pool::deallocate(void* p, std::size_t bytes, stream_t s) const noexcept {
  if (p != nullptr) {
    // On `s`, or where a free_stream_redirect of this thread sends frees of `s`.
    r_->stats.deallocate(::cuda::stream_ref{free_stream_redirect::free_stream(s)}, p, bytes,
                         rmm::CUDA_ALLOCATION_ALIGNMENT);
  }
}

std::uint64_t device_pool::used_bytes() const {
  std::lock_guard lock(r_->reset_mutex);
  return static_cast<std::uint64_t>(r_->base + r_->stats.get_bytes_counter().value);
}

std::uint64_t device_pool::peak_used_bytes() const {
  std::lock_guard lock(r_->reset_mutex);
  return static_cast<std::uint64_t>(r_->base + r_->stats.get_bytes_counter().peak);
}

void device_pool::reset_peak_used() const {
  std::lock_guard lock(r_->reset_mutex);
  if (r_->pushed) r_->stats.pop_counters();  // folds the frame into the one below it
  r_->base = r_->stats.get_bytes_counter().value;
  r_->stats.push_counters();
  r_->pushed = true;
}

}  // namespace coopgnn::cuda
#endif
