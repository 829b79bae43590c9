// CUDA implementation of the per-PE context (cuda_context.hpp) and of the checking helpers
// (cuda_check.hpp). Compiled only in CUDA builds.
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusparse.h>
#include <nvtx3/nvToolsExtCudaRt.h>

#include <cstdint>
#include <cstdio>
#include <string>

#include "runtime/core/cuda_check.hpp"
#include "runtime/core/cuda_context.hpp"
#include "runtime/core/cuda_events.hpp"
#include "runtime/core/log.hpp"
#include "runtime/core/nvtx.hpp"

namespace coopgnn {
namespace cuda {
namespace detail {

void copy_async(void* dst, const void* src, std::size_t bytes, stream_t s) {
  if (bytes == 0) return;
  COOPGNN_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, s));
}

void zero_async(void* p, std::size_t bytes, stream_t s) {
  if (bytes == 0) return;
  COOPGNN_CUDA_CHECK(cudaMemsetAsync(p, 0, bytes, s));
}

void synchronize(stream_t s) { COOPGNN_CUDA_CHECK(cudaStreamSynchronize(s)); }

CUevent_st* create_timing_event() {
  cudaEvent_t e = nullptr;
  COOPGNN_CUDA_CHECK(cudaEventCreate(&e));
  return e;
}

void destroy_event(CUevent_st* e) noexcept {
  if (e != nullptr) COOPGNN_CUDA_CHECK_NO_THROW(cudaEventDestroy(e));
}

CUevent_st* create_ordering_event() {
  cudaEvent_t e = nullptr;
  COOPGNN_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  return e;
}

void stream_wait_event(CUstream_st* s, CUevent_st* e) {
  COOPGNN_CUDA_CHECK(cudaStreamWaitEvent(s, e, 0));
}

void record_event(CUevent_st* e, CUstream_st* s) { COOPGNN_CUDA_CHECK(cudaEventRecord(e, s)); }

double elapsed_seconds(CUevent_st* start, CUevent_st* stop) {
  float ms = 0.0f;
  COOPGNN_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
  return 1e-3 * static_cast<double>(ms);
}

void* pinned_allocate(std::size_t bytes) {
  if (bytes == 0) return nullptr;
  void* p = nullptr;
  COOPGNN_CUDA_CHECK(cudaHostAlloc(&p, bytes, cudaHostAllocMapped | cudaHostAllocPortable));
  return p;
}

void pinned_free(void* p) noexcept {
  if (p != nullptr) COOPGNN_CUDA_CHECK_NO_THROW(cudaFreeHost(p));
}

const void* mapped_device_pointer(const void* host) {
  void* d = nullptr;
  COOPGNN_CUDA_CHECK(cudaHostGetDevicePointer(&d, const_cast<void*>(host), 0));
  return d;
}

}  // namespace detail

cuda_context::cuda_context(int device, int pe, std::uint64_t release_threshold_bytes)
    : device_(device), pe_(pe) {
  int count = 0;
  COOPGNN_CUDA_CHECK(cudaGetDeviceCount(&count));
  COOPGNN_CUDA_EXPECTS(device >= 0 && device < count,
                       "cuda_context: device " + std::to_string(device) + " is outside [0, " +
                           std::to_string(count) + ")");
  try {
    COOPGNN_CUDA_CHECK(cudaSetDevice(device));
    COOPGNN_CUDA_CHECK(cudaStreamCreateWithFlags(&compute_, cudaStreamNonBlocking));
    COOPGNN_CUDA_CHECK(cudaStreamCreateWithFlags(&h2d_, cudaStreamNonBlocking));
    COOPGNN_CUDA_CHECK(cudaStreamCreateWithFlags(&comm_, cudaStreamNonBlocking));
    std::string const prefix = "pe" + std::to_string(pe);
    nvtx::name_stream(compute_, prefix + "/compute");
    nvtx::name_stream(h2d_, prefix + "/h2d");
    nvtx::name_stream(comm_, prefix + "/comm");

    pool_ = std::make_shared<device_pool>(release_threshold_bytes);  // on `device`, current now

    COOPGNN_CUBLAS_CHECK(cublasCreate(&cublas_));
    // Plain FP32 (no TF32 tensor-core rounding) unless the run asks for it (set_tf32_math,
    // --gemm-math tf32): the layers' results stay within the host reference's float tolerance
    // (models/device_model.hpp).
    COOPGNN_CUBLAS_CHECK(cublasSetMathMode(cublas_, CUBLAS_DEFAULT_MATH));
    COOPGNN_CUBLAS_CHECK(cublasSetStream(cublas_, compute_));
    COOPGNN_CUSPARSE_CHECK(cusparseCreate(&cusparse_));
    COOPGNN_CUSPARSE_CHECK(cusparseSetStream(cusparse_, compute_));
  } catch (...) {
    release();
    throw;
  }
}

cuda_context::~cuda_context() { release(); }

void cuda_context::set_tf32_math(bool tf32) const {
  COOPGNN_CUBLAS_CHECK(
      cublasSetMathMode(cublas_, tf32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH));
}

void cuda_context::release() noexcept {
  // Handles and streams are destroyed with their own device current (the destructor may run on
  // a thread whose current device is another PE's).
  if (compute_ != nullptr || pool_ != nullptr) COOPGNN_CUDA_CHECK_NO_THROW(cudaSetDevice(device_));
  for (stream_t s : {compute_, h2d_, comm_}) {
    if (s != nullptr) COOPGNN_CUDA_CHECK_NO_THROW(cudaStreamSynchronize(s));
  }
  if (cusparse_ != nullptr && cusparseDestroy(cusparse_) != CUSPARSE_STATUS_SUCCESS) {
    log::write(log::level::error, "cusparseDestroy failed");
  }
  if (cublas_ != nullptr && cublasDestroy(cublas_) != CUBLAS_STATUS_SUCCESS) {
    log::write(log::level::error, "cublasDestroy failed");
  }
  pool_.reset();
  for (stream_t s : {compute_, h2d_, comm_}) {
    if (s != nullptr) COOPGNN_CUDA_CHECK_NO_THROW(cudaStreamDestroy(s));
  }
  cusparse_ = nullptr;
  cublas_ = nullptr;
  compute_ = h2d_ = comm_ = nullptr;
}

void cuda_context::make_current() const { COOPGNN_CUDA_CHECK(cudaSetDevice(device_)); }

void cuda_context::synchronize() const {
  for (stream_t s : {compute_, h2d_, comm_}) detail::synchronize(s);
}

host_registration::host_registration(const void* data, std::size_t bytes)
    : data_(const_cast<void*>(data)) {
  COOPGNN_CUDA_EXPECTS(data != nullptr && bytes > 0,
                       "host_registration: empty range of " + std::to_string(bytes) + " bytes");
  COOPGNN_CUDA_CHECK(
      cudaHostRegister(data_, bytes, cudaHostRegisterMapped | cudaHostRegisterPortable));
}

host_registration::~host_registration() { COOPGNN_CUDA_CHECK_NO_THROW(cudaHostUnregister(data_)); }

const void* host_registration::device_data() const { return detail::mapped_device_pointer(data_); }

}  // namespace cuda

namespace nvtx {
void name_stream(cuda::stream_t s, const std::string& name) {
#if defined(COOPGNN_HAVE_NVTX)
  nvtxNameCudaStreamA(s, name.c_str());
#else
  (void)s;
  (void)name;
#endif
}
}  // namespace nvtx

}  // namespace coopgnn
