// cuBLAS GEMM with row-major semantics (declared in gemm_cuda.hpp).
#include <string>

#include "kernels/cuda_check.cuh"
#include "kernels/dense/gemm_cuda.hpp"
#include "runtime/core/log.hpp"
#include "runtime/core/nvtx.hpp"

namespace coopgnn::cuda {

cublas_handle::cublas_handle() {
  COOPGNN_CUBLAS_CHECK(cublasCreate(&handle_));
  COOPGNN_CUBLAS_CHECK(cublasSetMathMode(handle_, CUBLAS_DEFAULT_MATH));  // plain FP32, no TF32
}

cublas_handle::~cublas_handle() {
  if (handle_ == nullptr) return;
  cublasStatus_t const st = cublasDestroy(handle_);
  if (st != CUBLAS_STATUS_SUCCESS) {
    log::write(log::level::error,
               std::string("cublasDestroy failed: ") + cublasGetStatusString(st));
  }
}

void gemm(cublasContext* handle, op op_a, op op_b, std::int64_t m, std::int64_t n, std::int64_t k,
          float alpha, const float* a, std::int64_t lda, const float* b, std::int64_t ldb,
          float beta, float* c, std::int64_t ldc, cudaStream_t stream) {
  COOPGNN_NVTX_RANGE("dense/gemm");
  COOPGNN_CU_EXPECTS(handle != nullptr, "cuda::gemm: cuBLAS handle is null");
  COOPGNN_CU_EXPECTS(m >= 0 && n >= 0 && k >= 0, "cuda::gemm: negative dimension m=", m, ", n=", n,
                     ", k=", k);
  std::int64_t const a_cols = op_a == op::none ? k : m;
  std::int64_t const b_cols = op_b == op::none ? n : k;
  // cuBLAS requires leading dimensions >= 1 even for empty operands.
  COOPGNN_CU_EXPECTS(lda >= a_cols && lda >= 1, "cuda::gemm: lda=", lda, " is smaller than A's ",
                     a_cols, " stored columns");
  COOPGNN_CU_EXPECTS(ldb >= b_cols && ldb >= 1, "cuda::gemm: ldb=", ldb, " is smaller than B's ",
                     b_cols, " stored columns");
  COOPGNN_CU_EXPECTS(ldc >= n && ldc >= 1, "cuda::gemm: ldc=", ldc, " is smaller than C's ", n,
                     " columns");
  if (m == 0 || n == 0) return;
  COOPGNN_CU_EXPECTS(c != nullptr, "cuda::gemm: C is null for a [", m, ", ", n, "] result");
  COOPGNN_CU_EXPECTS(k == 0 || (a != nullptr && b != nullptr),
                     "cuda::gemm: A or B is null for k = ", k);
  COOPGNN_CUBLAS_CHECK(cublasSetStream(handle, stream));
  // Row-major C [m, n] is column-major C^T [n, m] = op(B)^T [n, k] * op(A)^T [k, m]; a row-major
  // operand read column-major is its transpose, so the op flags carry over unchanged.
  auto const to_cublas = [](op o) { return o == op::none ? CUBLAS_OP_N : CUBLAS_OP_T; };
  COOPGNN_CUBLAS_CHECK(cublasSgemm_64(handle, to_cublas(op_b), to_cublas(op_a), n, m, k, &alpha, b,
                                    ldb, a, lda, &beta, c, ldc));
}

}  // namespace coopgnn::cuda
