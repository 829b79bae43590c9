// Per-PE CUDA execution resources (docs/design.md section 1, core; section 12: per-PE state
// lives in the PE's context, nothing global, RAII for every device resource).
//
// This header needs no CUDA headers, so .cpp files (tests, runtime code) can include it in any
// build. The CUDA types appear through their opaque handle structs. Definitions live in
// cuda_context.cu and exist only in CUDA builds (COOPGNN_WITH_CUDA); a host-only build must not
// call them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <utility>
#include <vector>

// The CUDA runtime's own opaque handle types (cudaStream_t = CUstream_st*, ...).
struct CUstream_st;
struct CUevent_st;
struct CUmemPoolHandle_st;
struct cublasContext;
struct cusparseContext;

namespace coopgnn::cuda {

using stream_t = CUstream_st*;               ///< = cudaStream_t
using event_t = CUevent_st*;                 ///< = cudaEvent_t
using mem_pool_t = CUmemPoolHandle_st*;      ///< = cudaMemPool_t
using cublas_handle_t = cublasContext*;      ///< = cublasHandle_t
using cusparse_handle_t = cusparseContext*;  ///< = cusparseHandle_t

/// The device memory of one PE: RMM's statistics_resource_adaptor over a
/// cuda_async_memory_resource, which owns a stream-ordered CUDA memory pool (cudaMemPoolCreate,
/// pinned device location, cudaMemPoolAttrReleaseThreshold = the constructor's threshold) of its
/// own on the device. Allocations are cudaMallocFromPoolAsync and frees cudaFreeAsync on the
/// caller's stream, counted by the adaptor on the way; every PE has its own pool, also when
/// several PEs share one GPU. Defined in device_pool.cpp with RMM (CUDA builds only; a host-only
/// build links stubs that throw on allocation and never needs RMM).
///
/// Ownership: shared by its cuda_context and every buffer allocated from it (make it with
/// std::make_shared), so the pool object outlives every buffer; buffers must still be destroyed
/// before their context, whose streams they free on.
/// Threading: allocate, deallocate and the counters may be called from any thread (the adaptor
/// locks); reset_peak_used must not race with another reset_peak_used. Non-copyable,
/// non-movable.
class device_pool : public std::enable_shared_from_this<device_pool> {
 public:
  /// A pool on the calling thread's current device, keeping up to `release_threshold_bytes`
  /// cached across stream synchronisations (memory beyond that goes back to the driver).
  /// @throws cuda_error when the device has no memory-pool support or pool creation fails.
  explicit device_pool(std::uint64_t release_threshold_bytes);
  /// Destroys the pool (cudaMemPoolDestroy; the driver releases the memory once frees still
  /// queued on streams have run). Never throws.
  ~device_pool();
  device_pool(const device_pool&) = delete;
  device_pool& operator=(const device_pool&) = delete;
  device_pool(device_pool&&) = delete;
  device_pool& operator=(device_pool&&) = delete;

  /// `bytes` of device memory, stream-ordered on `s` (usable by work enqueued on `s` after this
  /// call; other streams need an event). Uninitialised, 256-byte aligned; 0 bytes gives nullptr
  /// and counts nothing. @throws cuda_error naming the byte count when the pool cannot grow.
  [[nodiscard]] void* allocate(std::size_t bytes, stream_t s) const;
  /// Frees `p`, which allocate(bytes, ...) returned, stream-ordered on `s` (its memory is reused
  /// only by work ordered after everything enqueued on `s` before this call). `bytes` must be
  /// the allocated size: the counters subtract it. nullptr is ignored. Never throws.
  void deallocate(void* p, std::size_t bytes, stream_t s) const noexcept;

  /// The cudaMemPool_t underneath, for cudaMemPoolSetAccess (peers on other devices reading
  /// this PE's buffers). Implicit so that `cudaMemPoolSetAccess(ctx.pool(), ...)` reads as it
  /// did when the context held a bare cudaMemPool_t.
  [[nodiscard]] mem_pool_t handle() const { return handle_; }
  operator mem_pool_t() const { return handle_; }  // NOLINT(google-explicit-constructor)

  /// Bytes allocated and not yet freed (the adaptor's byte counter), exact request sizes.
  [[nodiscard]] std::uint64_t used_bytes() const;
  /// The most bytes in use at once since creation or the last reset_peak_used (exact request
  /// sizes, not the pool's reservation): the PE's peak device memory.
  [[nodiscard]] std::uint64_t peak_used_bytes() const;
  /// Restarts the peak at the bytes in use now (pops the adaptor's counter frame of the last
  /// reset, if any, and pushes a new one).
  void reset_peak_used() const;

 private:
  struct resources;  // the RMM resources (device_pool.cpp)
  std::unique_ptr<resources> r_;
  mem_pool_t handle_ = nullptr;
};

namespace detail {
/// cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, s): any direction under UVA.
/// @throws cuda_error.
void copy_async(void* dst, const void* src, std::size_t bytes, stream_t s);
/// cudaMemsetAsync(p, 0, bytes, s). @throws cuda_error.
void zero_async(void* p, std::size_t bytes, stream_t s);
/// cudaStreamSynchronize(s). @throws cuda_error, including faults of earlier kernels on `s`.
void synchronize(stream_t s);
}  // namespace detail

/// Move-only owner of `size` elements of T in device memory, allocated stream-ordered from a
/// PE's device_pool and freed on the stream it was allocated on (cudaFreeAsync), so reuse is
/// ordered after every kernel enqueued before the free on that stream. Work on other streams
/// that reads the buffer must be ordered before its destruction by the caller (events). The
/// buffer shares ownership of its pool. Contents are uninitialised. T must be trivially copyable.
template <class T>
class device_buffer {
 public:
  device_buffer() = default;
  /// Allocates n elements on stream s from `pool` (no synchronisation); `pool` must be owned by
  /// a std::shared_ptr (a cuda_context's is).
  /// @throws cuda_error when the pool cannot provide n * sizeof(T) bytes.
  device_buffer(const device_pool& pool, std::size_t n, stream_t s)
      : data_(static_cast<T*>(pool.allocate(n * sizeof(T), s))),
        size_(n),
        stream_(s),
        pool_(pool.shared_from_this()) {}
  device_buffer(const device_buffer&) = delete;
  device_buffer& operator=(const device_buffer&) = delete;
  device_buffer(device_buffer&& o) noexcept
      : data_(std::exchange(o.data_, nullptr)),
        size_(std::exchange(o.size_, 0)),
        stream_(o.stream_),
        pool_(std::move(o.pool_)) {}
  device_buffer& operator=(device_buffer&& o) noexcept {
    if (this != &o) {
      reset();
      data_ = std::exchange(o.data_, nullptr);
      size_ = std::exchange(o.size_, 0);
      stream_ = o.stream_;
      pool_ = std::move(o.pool_);
    }
    return *this;
  }
  ~device_buffer() { reset(); }

  /// Frees the memory (stream-ordered) and leaves an empty buffer.
  void reset() noexcept {
    if (data_ != nullptr) pool_->deallocate(data_, bytes(), stream_);
    data_ = nullptr;
    size_ = 0;
  }

  [[nodiscard]] T* data() { return data_; }
  [[nodiscard]] const T* data() const { return data_; }
  [[nodiscard]] std::size_t size() const { return size_; }
  [[nodiscard]] std::size_t bytes() const { return size_ * sizeof(T); }
  [[nodiscard]] bool empty() const { return size_ == 0; }
  [[nodiscard]] stream_t stream() const { return stream_; }
  /// The pool the memory came from (null for a default-constructed buffer).
  [[nodiscard]] const std::shared_ptr<const device_pool>& pool() const { return pool_; }
  /// Gives up ownership without freeing: returns the pointer (the new owner frees it with
  /// pool()->deallocate(p, bytes, stream()), taking pool(), bytes() and stream() before this
  /// call) and leaves the buffer empty.
  [[nodiscard]] T* release() noexcept {
    size_ = 0;
    return std::exchange(data_, nullptr);
  }

 private:
  T* data_ = nullptr;
  std::size_t size_ = 0;
  stream_t stream_ = nullptr;
  std::shared_ptr<const device_pool> pool_;
};

/// Resources of one PE on one device: the device id, three named streams, cuBLAS and cuSPARSE
/// handles bound to the compute stream, and a private stream-ordered memory pool (device_pool).
///
/// Streams (all non-blocking with respect to the legacy default stream):
///  - compute(): kernels of the PE (sampling, gather from device memory, dense/sparse math);
///  - h2d():     host-to-device copies and UVA reads of pinned host memory (feature loading);
///  - comm():    collectives (NCCL) of the PE.
/// NVTX names "pe<k>/compute", "pe<k>/h2d", "pe<k>/comm" (docs/design.md section 12, NVTX).
///
/// Memory pool: one device_pool per context on its device (an RMM cuda_async_memory_resource
/// under a statistics_resource_adaptor), with cudaMemPoolAttrReleaseThreshold =
/// `release_threshold_bytes`: memory the pool holds beyond that is returned to the driver at
/// stream synchronisation points.
///
/// Threading: a context belongs to one PE thread; the constructor makes `device` current on the
/// calling thread. Non-copyable and non-movable (handles are bound to its streams).
/// Destruction synchronises the three streams, then destroys handles, pool and streams; every
/// device_buffer allocated from it must be destroyed first. Failures there are logged, not thrown.
class cuda_context {
 public:
  /// @param device   CUDA device ordinal in [0, cudaGetDeviceCount())
  /// @param pe       PE rank, used only for NVTX names
  /// @param release_threshold_bytes  bytes the pool keeps cached across synchronisations
  ///                 (default 1 GiB)
  /// @throws logic_error for a device ordinal out of range; cuda_error when any CUDA, cuBLAS or
  ///         cuSPARSE call fails (nothing is leaked: already created resources are released).
  explicit cuda_context(int device, int pe = 0,
                        std::uint64_t release_threshold_bytes = std::uint64_t{1} << 30);
  ~cuda_context();
  cuda_context(const cuda_context&) = delete;
  cuda_context& operator=(const cuda_context&) = delete;
  cuda_context(cuda_context&&) = delete;
  cuda_context& operator=(cuda_context&&) = delete;

  [[nodiscard]] int device() const { return device_; }
  [[nodiscard]] int pe() const { return pe_; }
  [[nodiscard]] stream_t compute() const { return compute_; }
  [[nodiscard]] stream_t h2d() const { return h2d_; }
  [[nodiscard]] stream_t comm() const { return comm_; }
  [[nodiscard]] cublas_handle_t cublas() const { return cublas_; }
  /// Sets the math mode of cublas() for every GEMM issued on it from now on: `tf32` true selects
  /// CUBLAS_TF32_TENSOR_OP_MATH (FP32 inputs rounded to TF32, 10-bit mantissa, on the Tensor
  /// Cores; FP32 accumulation; --gemm-math tf32), false CUBLAS_DEFAULT_MATH (plain FP32, the
  /// default at construction). Host-side call, no stream work. @throws cuda_error when cuBLAS
  /// refuses it.
  void set_tf32_math(bool tf32) const;
  [[nodiscard]] cusparse_handle_t cusparse() const { return cusparse_; }
  /// The PE's device memory (converts to its cudaMemPool_t).
  [[nodiscard]] const device_pool& pool() const { return *pool_; }

  /// Makes device() current on the calling thread (cudaSetDevice). @throws cuda_error.
  void make_current() const;

  /// The most bytes in use at once from this context's pool since creation or the last
  /// reset_peak_used (device_pool::peak_used_bytes: RMM's statistics adaptor, exact request
  /// sizes): the PE's peak device memory.
  [[nodiscard]] std::uint64_t peak_used_bytes() const { return pool_->peak_used_bytes(); }
  /// Restarts the peak at the bytes in use now.
  void reset_peak_used() const { pool_->reset_peak_used(); }

  /// Blocks until all work on the three streams has finished.
  /// @throws cuda_error carrying the first asynchronous fault.
  void synchronize() const;

  /// n uninitialised elements on stream s (default: compute()). No synchronisation.
  /// @throws cuda_error when out of memory.
  template <class T>
  [[nodiscard]] device_buffer<T> allocate(std::size_t n, stream_t s = nullptr) const {
    return device_buffer<T>(*pool_, n, s != nullptr ? s : compute_);
  }

  /// A device copy of `host` enqueued on stream s (default compute()). The copy is asynchronous
  /// with respect to the host only for pinned `host`; the caller keeps `host` alive and
  /// unchanged until the stream reaches the copy (pageable memory is staged by the driver before
  /// the call returns). @throws cuda_error.
  template <class T>
  [[nodiscard]] device_buffer<T> to_device(std::span<const T> host, stream_t s = nullptr) const {
    auto buf = allocate<T>(host.size(), s);
    if (!host.empty()) detail::copy_async(buf.data(), host.data(), buf.bytes(), buf.stream());
    return buf;
  }

  /// A host copy of `buf`, read on buf.stream(); synchronises that stream.
  /// @throws cuda_error, including asynchronous faults of earlier work on the stream.
  template <class T>
  [[nodiscard]] std::vector<T> to_host(const device_buffer<T>& buf) const {
    std::vector<T> out(buf.size());
    if (!out.empty()) detail::copy_async(out.data(), buf.data(), buf.bytes(), buf.stream());
    detail::synchronize(buf.stream());
    return out;
  }

 private:
  void release() noexcept;

  int device_ = 0;
  int pe_ = 0;
  stream_t compute_ = nullptr;
  stream_t h2d_ = nullptr;
  stream_t comm_ = nullptr;
  cublas_handle_t cublas_ = nullptr;
  cusparse_handle_t cusparse_ = nullptr;
  std::shared_ptr<device_pool> pool_;
};

/// Move-only page-locked host allocation mapped into the device address space
/// (cudaHostAlloc with cudaHostAllocMapped | cudaHostAllocPortable): kernels read it in place
/// over the interconnect (UVA), and device_data() is the pointer to pass them.
/// @throws cuda_error when pinning fails.
template <class T>
class pinned_buffer {
 public:
  pinned_buffer() = default;
  explicit pinned_buffer(std::size_t n);
  pinned_buffer(const pinned_buffer&) = delete;
  pinned_buffer& operator=(const pinned_buffer&) = delete;
  pinned_buffer(pinned_buffer&& o) noexcept
      : data_(std::exchange(o.data_, nullptr)), size_(std::exchange(o.size_, 0)) {}
  pinned_buffer& operator=(pinned_buffer&& o) noexcept {
    if (this != &o) {
      reset();
      data_ = std::exchange(o.data_, nullptr);
      size_ = std::exchange(o.size_, 0);
    }
    return *this;
  }
  ~pinned_buffer() { reset(); }
  void reset() noexcept;

  [[nodiscard]] T* data() { return data_; }
  [[nodiscard]] const T* data() const { return data_; }
  /// The device-side address of data() (equal to it on UVA platforms).
  [[nodiscard]] const T* device_data() const;
  [[nodiscard]] std::size_t size() const { return size_; }
  [[nodiscard]] std::span<T> span() { return {data_, size_}; }

 private:
  T* data_ = nullptr;
  std::size_t size_ = 0;
};

namespace detail {
void* pinned_allocate(std::size_t bytes);
void pinned_free(void* p) noexcept;
const void* mapped_device_pointer(const void* host);
}  // namespace detail

template <class T>
pinned_buffer<T>::pinned_buffer(std::size_t n)
    : data_(static_cast<T*>(detail::pinned_allocate(n * sizeof(T)))), size_(n) {}
template <class T>
void pinned_buffer<T>::reset() noexcept {
  detail::pinned_free(data_);
  data_ = nullptr;
  size_ = 0;
}
template <class T>
const T* pinned_buffer<T>::device_data() const {
  return data_ == nullptr ? nullptr : static_cast<const T*>(detail::mapped_device_pointer(data_));
}

/// Pins an existing host range in place for the object's lifetime (cudaHostRegister with
/// cudaHostRegisterMapped | cudaHostRegisterPortable), so kernels can read it over UVA through
/// device_data(). The range must outlive this object and must not already be registered.
/// @throws cuda_error when registration fails (for example an unsupported range).
class host_registration {
 public:
  host_registration(const void* data, std::size_t bytes);
  host_registration(const host_registration&) = delete;
  host_registration& operator=(const host_registration&) = delete;
  ~host_registration();
  /// The device-side address of the registered range's first byte.
  [[nodiscard]] const void* device_data() const;

 private:
  void* data_ = nullptr;
};

}  // namespace coopgnn::cuda
