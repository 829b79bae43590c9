// cuSPARSE alternative path for SpMM and SDDMM over a block (declared in sparse_cuda.hpp): the
// cross-check of the hand-written kernels in GPU tests and the baseline of the benchmarks.
#include <string>

#include "kernels/cuda_check.cuh"
#include "kernels/sparse/block_view_check.hpp"
#include "kernels/sparse/sparse_cuda.hpp"
#include "runtime/core/log.hpp"
#include "runtime/core/nvtx.hpp"

namespace coopgnn::cuda {
namespace detail {
namespace {

/// Owning generic-API descriptors, destroyed on scope exit (errors there are ignored: the
/// descriptors only hold host memory).
template <typename D>
struct owned_sp {
  D d = nullptr;
  ~owned_sp() {
    if (d != nullptr) (void)cusparseDestroySpMat(d);
  }
};
template <typename D>
struct owned_dn {
  D d = nullptr;
  ~owned_dn() {
    if (d != nullptr) (void)cusparseDestroyDnMat(d);
  }
};
using csr_descr = owned_sp<cusparseSpMatDescr_t>;
using const_csr_descr = owned_sp<cusparseConstSpMatDescr_t>;
using dn_descr = owned_dn<cusparseDnMatDescr_t>;
using const_dn_descr = owned_dn<cusparseConstDnMatDescr_t>;

constexpr cusparseSpMMAlg_t kSpmmAlg = CUSPARSE_SPMM_CSR_ALG2;

/// Descriptors of y = A x for the block: A CSR [num_dst, num_src] with 64-bit offsets and
/// indices, x row-major [num_src, d], y row-major [num_dst, d].
struct spmm_operands {
  const_csr_descr a;
  const_dn_descr x;
  dn_descr y;
  spmm_operands(const block_view& b, const float* xp, std::int64_t d, float* yp) {
    COOPGNN_CUSPARSE_CHECK(cusparseCreateConstCsr(
        &a.d, b.num_dst, b.num_src, b.num_edges, b.indptr, b.indices, b.weights, CUSPARSE_INDEX_64I,
        CUSPARSE_INDEX_64I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F));
    COOPGNN_CUSPARSE_CHECK(
        cusparseCreateConstDnMat(&x.d, b.num_src, d, d, xp, CUDA_R_32F, CUSPARSE_ORDER_ROW));
    COOPGNN_CUSPARSE_CHECK(
        cusparseCreateDnMat(&y.d, b.num_dst, d, d, yp, CUDA_R_32F, CUSPARSE_ORDER_ROW));
  }
};

/// Descriptors of out = (a x^T) o spy(A): a row-major [num_dst, d], x row-major [num_src, d] used
/// transposed, the block's CSR pattern with `out` as its values.
struct sddmm_operands {
  const_dn_descr a;
  const_dn_descr x;
  csr_descr c;
  sddmm_operands(const block_view& b, const float* ap, const float* xp, std::int64_t d,
                 float* out) {
    COOPGNN_CUSPARSE_CHECK(
        cusparseCreateConstDnMat(&a.d, b.num_dst, d, d, ap, CUDA_R_32F, CUSPARSE_ORDER_ROW));
    COOPGNN_CUSPARSE_CHECK(
        cusparseCreateConstDnMat(&x.d, b.num_src, d, d, xp, CUDA_R_32F, CUSPARSE_ORDER_ROW));
    // cuSPARSE's output descriptor is non-const; SDDMM writes only the values.
    COOPGNN_CUSPARSE_CHECK(cusparseCreateCsr(
        &c.d, b.num_dst, b.num_src, b.num_edges, const_cast<std::int64_t*>(b.indptr),
        const_cast<std::int64_t*>(b.indices), out, CUSPARSE_INDEX_64I, CUSPARSE_INDEX_64I,
        CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F));
  }
};

void check_spmm(const char* fn, cusparseContext* handle, const block_view& b, const float* x,
                std::int64_t d, const float* y) {
  COOPGNN_CU_EXPECTS(handle != nullptr, fn, ": cuSPARSE handle is null");
  check_block_view(fn, b, true);
  check_dense(fn, "x", x, b.num_src, d);
  check_dense(fn, "y", y, b.num_dst, d);
}

void check_sddmm(const char* fn, cusparseContext* handle, const block_view& b, const float* a,
                 const float* x, std::int64_t d, const float* out) {
  COOPGNN_CU_EXPECTS(handle != nullptr, fn, ": cuSPARSE handle is null");
  check_block_view(fn, b, false);
  check_dense(fn, "a", a, b.num_dst, d);
  check_dense(fn, "x", x, b.num_src, d);
  COOPGNN_CU_EXPECTS(b.num_edges == 0 || out != nullptr, fn, ": out is null");
}

}  // namespace
}  // namespace detail

cusparse_handle::cusparse_handle() { COOPGNN_CUSPARSE_CHECK(cusparseCreate(&handle_)); }

cusparse_handle::~cusparse_handle() {
  if (handle_ == nullptr) return;
  cusparseStatus_t const st = cusparseDestroy(handle_);
  if (st != CUSPARSE_STATUS_SUCCESS) {
    log::write(log::level::error,
               std::string("cusparseDestroy failed: ") + cusparseGetErrorString(st));
  }
}

std::size_t spmm_cusparse_workspace_bytes(cusparseContext* handle, const block_view& b,
                                          const float* x, std::int64_t d, float* y) {
  detail::check_spmm("spmm_cusparse_workspace_bytes", handle, b, x, d, y);
  if (b.num_dst == 0 || d == 0 || b.num_edges == 0) return 0;
  detail::spmm_operands ops(b, x, d, y);
  float const alpha = 1.0f;
  float const beta = 0.0f;
  std::size_t bytes = 0;
  COOPGNN_CUSPARSE_CHECK(cusparseSpMM_bufferSize(
      handle, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, ops.a.d,
      ops.x.d, &beta, ops.y.d, CUDA_R_32F, detail::kSpmmAlg, &bytes));
  return bytes;
}

void spmm_cusparse(cusparseContext* handle, const block_view& b, const float* x, std::int64_t d,
                   float* y, void* workspace, std::size_t workspace_bytes, cudaStream_t stream) {
  COOPGNN_NVTX_RANGE("sparse/cusparse_spmm");
  constexpr const char* fn = "cuda::spmm_cusparse";
  detail::check_spmm(fn, handle, b, x, d, y);
  if (b.num_dst == 0 || d == 0) return;
  if (b.num_edges == 0) {
    COOPGNN_CUDA_CHECK(
        cudaMemsetAsync(y, 0, static_cast<std::size_t>(b.num_dst * d) * sizeof(float), stream));
    return;
  }
  std::size_t const need = spmm_cusparse_workspace_bytes(handle, b, x, d, y);
  COOPGNN_CU_EXPECTS(workspace_bytes >= need && (need == 0 || workspace != nullptr), fn,
                     ": workspace has ", workspace_bytes, " bytes, ", need, " needed");
  COOPGNN_CUSPARSE_CHECK(cusparseSetStream(handle, stream));
  detail::spmm_operands ops(b, x, d, y);
  float const alpha = 1.0f;
  float const beta = 0.0f;
  COOPGNN_CUSPARSE_CHECK(cusparseSpMM(handle, CUSPARSE_OPERATION_NON_TRANSPOSE,
                                    CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, ops.a.d, ops.x.d,
                                    &beta, ops.y.d, CUDA_R_32F, detail::kSpmmAlg, workspace));
}

std::size_t sddmm_cusparse_workspace_bytes(cusparseContext* handle, const block_view& b,
                                           const float* a, const float* x, std::int64_t d,
                                           float* out) {
  detail::check_sddmm("sddmm_cusparse_workspace_bytes", handle, b, a, x, d, out);
  if (b.num_edges == 0 || d == 0) return 0;
  detail::sddmm_operands ops(b, a, x, d, out);
  float const alpha = 1.0f;
  float const beta = 0.0f;
  std::size_t bytes = 0;
  COOPGNN_CUSPARSE_CHECK(cusparseSDDMM_bufferSize(
      handle, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_TRANSPOSE, &alpha, ops.a.d,
      ops.x.d, &beta, ops.c.d, CUDA_R_32F, CUSPARSE_SDDMM_ALG_DEFAULT, &bytes));
  return bytes;
}

void sddmm_cusparse(cusparseContext* handle, const block_view& b, const float* a, const float* x,
                    std::int64_t d, float* out, void* workspace, std::size_t workspace_bytes,
                    cudaStream_t stream) {
  COOPGNN_NVTX_RANGE("sparse/cusparse_sddmm");
  constexpr const char* fn = "cuda::sddmm_cusparse";
  detail::check_sddmm(fn, handle, b, a, x, d, out);
  if (b.num_edges == 0) return;
  if (d == 0) {
    COOPGNN_CUDA_CHECK(
        cudaMemsetAsync(out, 0, static_cast<std::size_t>(b.num_edges) * sizeof(float), stream));
    return;
  }
  std::size_t const need = sddmm_cusparse_workspace_bytes(handle, b, a, x, d, out);
  COOPGNN_CU_EXPECTS(workspace_bytes >= need && (need == 0 || workspace != nullptr), fn,
                     ": workspace has ", workspace_bytes, " bytes, ", need, " needed");
  COOPGNN_CUSPARSE_CHECK(cusparseSetStream(handle, stream));
  // beta = 0, but 0 * (NaN left in out) would still be NaN: start from zeros.
  COOPGNN_CUDA_CHECK(
      cudaMemsetAsync(out, 0, static_cast<std::size_t>(b.num_edges) * sizeof(float), stream));
  detail::sddmm_operands ops(b, a, x, d, out);
  float const alpha = 1.0f;
  float const beta = 0.0f;
  COOPGNN_CUSPARSE_CHECK(cusparseSDDMM(handle, CUSPARSE_OPERATION_NON_TRANSPOSE,
                                     CUSPARSE_OPERATION_TRANSPOSE, &alpha, ops.a.d, ops.x.d, &beta,
                                     ops.c.d, CUDA_R_32F, CUSPARSE_SDDMM_ALG_DEFAULT, workspace));
}

}  // namespace coopgnn::cuda
