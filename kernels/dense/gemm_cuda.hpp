// Dense GEMM on the device through cuBLAS, with the row-major semantics of the host reference
// kernels/dense/gemm.hpp (docs/design.md section 2: every kernel exists twice). Includable from
// plain C++: needs only the CUDA runtime API.
#pragma once

#ifdef COOPGNN_WITH_CUDA

#include <cuda_runtime_api.h>

#include <cstdint>

#include "kernels/dense/op.hpp"

struct cublasContext;  // cublasHandle_t without including cublas_v2.h

namespace coopgnn::cuda {

/// An owning cuBLAS handle (cublasCreate / cublasDestroy); one per PE and device.
class cublas_handle {
 public:
  /// @throws cuda_error when cublasCreate fails (e.g. no device).
  cublas_handle();
  ~cublas_handle();  ///< non-throwing: a failed destroy is logged to stderr
  cublas_handle(const cublas_handle&) = delete;
  cublas_handle& operator=(const cublas_handle&) = delete;
  [[nodiscard]] cublasContext* get() const { return handle_; }

 private:
  cublasContext* handle_ = nullptr;
};

/// C = alpha * op(A) * op(B) + beta * C on row-major float32 device data, exactly the contract of
/// coopgnn::gemm (pointer overload): op(A) [m, k], op(B) [k, n], C [m, n], row strides lda, ldb,
/// ldc in elements. Computed by cublasSgemm_64 on the column-major view C^T = op(B)^T op(A)^T
/// (operands swapped, same op flags). The handle's stream is set to `stream`; the call is
/// asynchronous and does not allocate (cuBLAS may use its own workspace).
/// @throws logic_error naming the argument on a negative dimension, a too small leading
///         dimension or a null pointer for a non-empty operand; cuda_error when cuBLAS fails.
/// Aliasing: C must not overlap A or B. Empty: m == 0 or n == 0 does nothing; k == 0 scales C by
/// beta (cuBLAS semantics; beta == 0 overwrites with zeros).
/// Determinism: cuBLAS is run-to-run deterministic on one device and stream for a fixed
/// configuration; results differ from the host in summation order: exact on integer-valued data
/// whose partial sums stay below 2^24, otherwise within a relative 1e-5 * sqrt(k).
void gemm(cublasContext* handle, op op_a, op op_b, std::int64_t m, std::int64_t n, std::int64_t k,
          float alpha, const float* a, std::int64_t lda, const float* b, std::int64_t ldb,
          float beta, float* c, std::int64_t ldc, cudaStream_t stream);

}  // namespace coopgnn::cuda

#endif  // COOPGNN_WITH_CUDA
