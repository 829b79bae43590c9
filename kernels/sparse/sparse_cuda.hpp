// CUDA versions of the sparse kernels over a sampled block (docs/design.md section 2: every kernel
// exists twice; the host references are kernels/sparse/{spmm,sddmm,edge_softmax}.hpp).
//
// Plain C++ may include this header: it needs only the CUDA runtime API. Everything takes raw
// device pointers, sizes and a stream; nothing allocates (temporary storage comes from the
// caller), synchronises, or keeps global state. Launches and library calls are checked and throw
// coopgnn::cuda_error; bad sizes or null pointers throw coopgnn::logic_error before any launch.
// Index values are not validated on the device: the block must satisfy the invariants of
// kernels/sample/block.hpp (an index outside [0, num_src) is undefined behaviour).
// Index arithmetic is 64-bit throughout (blocks may exceed 2^31 edges).
#pragma once

#ifdef COOPGNN_WITH_CUDA

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

struct cusparseContext;  // cusparseHandle_t without including cusparse.h

namespace coopgnn::cuda {

/// A block's CSR by destination in device memory (the device image of coopgnn::block).
struct block_view {
  std::int64_t num_dst = 0;               ///< rows
  std::int64_t num_src = 0;               ///< columns (sources, destinations first)
  std::int64_t num_edges = 0;             ///< == indptr[num_dst]
  const std::int64_t* indptr = nullptr;   ///< [num_dst + 1] device
  const std::int64_t* indices = nullptr;  ///< [num_edges] device, each in [0, num_src)
  const float* weights = nullptr;         ///< [num_edges] device edge values
};

/// An owning cuSPARSE handle (cusparseCreate / cusparseDestroy); one per PE and device.
class cusparse_handle {
 public:
  /// @throws cuda_error when cusparseCreate fails (e.g. no device).
  cusparse_handle();
  ~cusparse_handle();  ///< non-throwing: a failed destroy is logged to stderr
  cusparse_handle(const cusparse_handle&) = delete;
  cusparse_handle& operator=(const cusparse_handle&) = delete;
  [[nodiscard]] cusparseContext* get() const { return handle_; }

 private:
  cusparseContext* handle_ = nullptr;
};

/// y = A x, the device version of coopgnn::spmm(block, x, y): for s < num_dst,
///   y[s, :] = sum_{e in [indptr[s], indptr[s+1])} weights[e] * x[indices[e], :]
/// summed from zero in edge order (a destination without edges gets a zero row). One warp per
/// destination row, lanes over columns (spmm_row_per_warp).
/// @param x  [num_src, d] row-major float32, device; @param y [num_dst, d], device, overwritten
/// @throws logic_error on negative sizes or a null pointer for a non-empty operand;
///         cuda_error when the launch fails.
/// Aliasing: y must not overlap x. Empty: num_dst == 0 or d == 0 launches nothing.
/// Deterministic, same summation order as the host (bitwise equal up to FMA contraction; exact on
/// integer-valued data). Runs on `stream`, asynchronous, no allocation.
void spmm(const block_view& b, const float* x, std::int64_t d, float* y, cudaStream_t stream);

/// Bytes of device workspace build_transpose needs for a block of num_src sources and num_edges
/// edges (a CUB radix-sort query plus two [num_edges] int64 arrays, 256-byte aligned).
/// @throws logic_error on negative sizes; cuda_error when the CUB size query fails.
std::size_t transpose_workspace_bytes(std::int64_t num_src, std::int64_t num_edges);

/// Builds the transposed CSR (by source) of the block, for the deterministic backward of spmm:
/// t_edges lists the edge ids sorted by source (stable: ascending edge id within a source) and
/// t_indptr[t] is the first position of source t. A stable CUB radix sort of (indices[e], e).
/// @param workspace        device, >= transpose_workspace_bytes(b.num_src, b.num_edges) bytes
/// @param t_indptr         [num_src + 1] device, overwritten
/// @param t_edges          [num_edges] device, overwritten
/// @throws logic_error when the workspace is too small or a pointer is null; cuda_error on a
///         failed launch or sort. Empty: num_edges == 0 only zeroes t_indptr.
/// Deterministic. Runs on `stream`, asynchronous, no allocation.
void build_transpose(const block_view& b, void* workspace, std::size_t workspace_bytes,
                     std::int64_t* t_indptr, std::int64_t* t_edges, cudaStream_t stream);

/// x_grad += A^T y_grad, the device version of coopgnn::spmm_transpose_add(block, ...):
///   x_grad[t, :] += sum_{e: indices[e] == t, ascending e} weights[e] * y_grad[dst(e), :]
/// computed as a gather over the transposed CSR (one warp per source row, no atomics), so each
/// element is summed in the host's order starting from its previous value.
/// @param t_indptr, t_edges  from build_transpose on the same block
/// @param y_grad             [num_dst, d] device; @param x_grad [num_src, d] device, accumulated
/// @throws logic_error on negative sizes or null pointers; cuda_error on a failed launch.
/// Aliasing: x_grad must not overlap y_grad. Empty: nothing launched. Deterministic.
void spmm_transpose_add(const block_view& b, const std::int64_t* t_indptr,
                        const std::int64_t* t_edges, const float* y_grad, std::int64_t d,
                        float* x_grad, cudaStream_t stream);

/// The device version of coopgnn::sddmm: for s < num_dst, e in [indptr[s], indptr[s+1]):
///   out[e] = scale[e] * sum_{j < d} a[s, j] * x[indices[e], j]
/// with scale = b.weights when scale_by_weights, else 1. One warp per destination; the d products
/// are summed per lane (strided) then by a warp butterfly, a fixed order that differs from the
/// host's ascending sum: exact on integer-valued data, otherwise within a relative 1e-5 of the
/// host (sddmm_row_per_warp).
/// @param a    [>= num_dst, d] device, destination rows first (a block's source matrix works)
/// @param x    [num_src, d] device; @param out [num_edges] device, overwritten
/// @throws logic_error on negative sizes or null pointers; cuda_error on a failed launch.
/// Empty: num_edges == 0 launches nothing; d == 0 writes zeros. Deterministic.
void sddmm(const block_view& b, const float* a, const float* x, std::int64_t d,
           bool scale_by_weights, float* out, cudaStream_t stream);

/// The device version of coopgnn::edge_softmax: per destination s, m_s = max scores over its
/// edges, out[e] = exp(scores[e] - m_s) / sum_{e' of s} exp(scores[e'] - m_s). One warp per
/// destination (edge_softmax_row_per_warp); sums are per lane then a warp butterfly: within a
/// relative 1e-5 of the host for float inputs.
/// @param indptr  [num_dst + 1] device; @param scores, out [num_edges] device (out may be scores)
/// @throws logic_error on negative sizes or null pointers; cuda_error on a failed launch.
/// Empty: nothing launched. Deterministic.
void edge_softmax(const std::int64_t* indptr, std::int64_t num_dst, std::int64_t num_edges,
                  const float* scores, float* out, cudaStream_t stream);

/// The device version of coopgnn::edge_softmax_backward:
///   grad_scores[e] = y[e] * (grad_y[e] - sum_{e' of dst(e)} y[e'] grad_y[e']).
/// One warp per destination; tolerance as edge_softmax.
/// @param y, grad_y, grad_scores  [num_edges] device (grad_scores may be grad_y)
/// @throws logic_error on negative sizes or null pointers; cuda_error on a failed launch.
void edge_softmax_backward(const std::int64_t* indptr, std::int64_t num_dst, std::int64_t num_edges,
                           const float* y, const float* grad_y, float* grad_scores,
                           cudaStream_t stream);

// ---- cuSPARSE alternative path (cross-check in tests, baseline in benchmarks) -----------------

/// Bytes of workspace spmm_cusparse needs for these operands (cusparseSpMM_bufferSize,
/// CUSPARSE_SPMM_CSR_ALG2, 64-bit indices, row-major dense operands).
/// @throws logic_error on bad sizes or null pointers; cuda_error when cuSPARSE fails.
std::size_t spmm_cusparse_workspace_bytes(cusparseContext* handle, const block_view& b,
                                          const float* x, std::int64_t d, float* y);

/// y = A x as spmm, computed by cusparseSpMM on the block's CSR (ALG2: deterministic for a
/// non-transposed A). Summation order is cuSPARSE's: exact on integer-valued data, otherwise
/// within a relative 1e-5 of spmm. Sets the handle's stream to `stream`.
/// @param workspace  device, >= spmm_cusparse_workspace_bytes(...) bytes (may be null if 0)
/// @throws logic_error on bad sizes, null pointers or a too small workspace; cuda_error when a
///         cuSPARSE call fails. Empty: num_dst == 0 or d == 0 does nothing; num_edges == 0 zeroes
///         y with cudaMemsetAsync.
void spmm_cusparse(cusparseContext* handle, const block_view& b, const float* x, std::int64_t d,
                   float* y, void* workspace, std::size_t workspace_bytes, cudaStream_t stream);

/// Bytes of workspace sddmm_cusparse needs (cusparseSDDMM_bufferSize, CSR, 64-bit indices).
std::size_t sddmm_cusparse_workspace_bytes(cusparseContext* handle, const block_view& b,
                                           const float* a, const float* x, std::int64_t d,
                                           float* out);

/// out[e] = sum_j a[dst(e), j] * x[indices[e], j] by cusparseSDDMM (unweighted: cuSPARSE has no
/// per-edge scale; multiply afterwards if needed). a [>= num_dst, d] and x [num_src, d] are
/// row-major device matrices; out [num_edges] is the CSR value array, overwritten (beta = 0).
/// Sets the handle's stream. Tolerance against sddmm as for sddmm against the host.
/// @throws as spmm_cusparse. Empty: num_edges == 0 does nothing.
void sddmm_cusparse(cusparseContext* handle, const block_view& b, const float* a, const float* x,
                    std::int64_t d, float* out, void* workspace, std::size_t workspace_bytes,
                    cudaStream_t stream);

}  // namespace coopgnn::cuda

#endif  // COOPGNN_WITH_CUDA
