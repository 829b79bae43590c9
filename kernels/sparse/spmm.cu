// CUDA SpMM over a block and its deterministic transpose (declared in sparse_cuda.hpp).
#include <cub/device/device_radix_sort.cuh>

#include "kernels/cuda_check.cuh"
#include "kernels/cuda_launch.cuh"
#include "kernels/sparse/block_view_check.hpp"
#include "kernels/sparse/sparse_cuda.hpp"
#include "runtime/core/cuda_launch.cuh"
#include "runtime/core/nvtx.hpp"

namespace coopgnn::cuda {
namespace detail {
namespace {

/// Columns per lane held in registers: one pass covers 32 * kPerLane columns.
constexpr int kPerLane = 4;
constexpr unsigned kFull = 0xffffffffu;

/// Largest s in [0, n) with indptr[s] <= e (the destination of edge e; n = num_dst).
__device__ inline std::int64_t row_of_edge(const std::int64_t* indptr, std::int64_t n,
                                           std::int64_t e) {
  std::int64_t lo = 0;
  std::int64_t hi = n;  // answer in [lo, hi)
  while (hi - lo > 1) {
    std::int64_t const mid = lo + (hi - lo) / 2;
    if (indptr[mid] <= e) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  return lo;
}

/// For k = 0 .. min(count, 32) - 1 in order, lane k holding (row r_k, weight w_k):
///   acc[c] += w_k * dense[r_k, j0 + lane + 32 c]   (columns < d only),
/// rounding product and sum separately (no FMA), as the host reference does.
__device__ inline void add_lane_rows(float (&acc)[kPerLane], std::int64_t my_row, float my_w,
                                     std::int64_t count, const float* __restrict__ dense,
                                     std::int64_t d, std::int64_t j0, int lane) {
  int const n = static_cast<int>(count < warp_size ? count : warp_size);
  for (int k = 0; k < n; ++k) {
    std::int64_t const r = __shfl_sync(kFull, my_row, k);
    float const wk = __shfl_sync(kFull, my_w, k);
    const float* row = dense + r * d;
#pragma unroll
    for (int c = 0; c < kPerLane; ++c) {
      std::int64_t const j = j0 + lane + c * warp_size;
      if (j < d) acc[c] = __fadd_rn(acc[c], __fmul_rn(wk, row[j]));
    }
  }
}

/// y[s, :] = sum_e w[e] * x[indices[e], :]: one warp per destination s, lanes over columns; the
/// warp loads 32 edges at a time (one per lane) and broadcasts them with shuffles. Products and
/// sums are rounded separately (no FMA), in edge order, as the host reference does.
__global__ void spmm_row_per_warp(const std::int64_t* __restrict__ indptr,
                                  const std::int64_t* __restrict__ indices,
                                  const float* __restrict__ w, const float* __restrict__ x,
                                  std::int64_t d, float* __restrict__ y, std::int64_t num_dst) {
  int const lane = static_cast<int>(threadIdx.x) % warp_size;
  for (std::int64_t s = global_warp(); s < num_dst; s += warp_count()) {
    std::int64_t const e0 = indptr[s];
    std::int64_t const e1 = indptr[s + 1];
    for (std::int64_t j0 = 0; j0 < d; j0 += warp_size * kPerLane) {
      float acc[kPerLane] = {};
      for (std::int64_t eb = e0; eb < e1; eb += warp_size) {
        std::int64_t my_t = 0;
        float my_w = 0.0f;
        if (eb + lane < e1) {
          my_t = indices[eb + lane];
          my_w = w[eb + lane];
        }
        add_lane_rows(acc, my_t, my_w, e1 - eb, x, d, j0, lane);
      }
#pragma unroll
      for (int c = 0; c < kPerLane; ++c) {
        std::int64_t const j = j0 + lane + c * warp_size;
        if (j < d) y[s * d + j] = acc[c];
      }
    }
  }
}

/// x_grad[t, :] += sum over t's edges e (ascending) of w[e] * y_grad[dst(e), :]: one warp per
/// source t of the transposed CSR, a gather (no atomics), same rounding as spmm_row_per_warp.
__global__ void spmm_transpose_row_per_warp(const std::int64_t* __restrict__ indptr,
                                            std::int64_t num_dst,
                                            const std::int64_t* __restrict__ t_indptr,
                                            const std::int64_t* __restrict__ t_edges,
                                            const float* __restrict__ w,
                                            const float* __restrict__ y_grad, std::int64_t d,
                                            float* __restrict__ x_grad, std::int64_t num_src) {
  int const lane = static_cast<int>(threadIdx.x) % warp_size;
  for (std::int64_t t = global_warp(); t < num_src; t += warp_count()) {
    std::int64_t const k0 = t_indptr[t];
    std::int64_t const k1 = t_indptr[t + 1];
    if (k0 == k1) continue;
    for (std::int64_t j0 = 0; j0 < d; j0 += warp_size * kPerLane) {
      float acc[kPerLane];
#pragma unroll
      for (int c = 0; c < kPerLane; ++c) {
        std::int64_t const j = j0 + lane + c * warp_size;
        acc[c] = j < d ? x_grad[t * d + j] : 0.0f;
      }
      for (std::int64_t kb = k0; kb < k1; kb += warp_size) {
        std::int64_t my_s = 0;
        float my_w = 0.0f;
        if (kb + lane < k1) {
          std::int64_t const e = t_edges[kb + lane];
          my_s = row_of_edge(indptr, num_dst, e);
          my_w = w[e];
        }
        add_lane_rows(acc, my_s, my_w, k1 - kb, y_grad, d, j0, lane);
      }
#pragma unroll
      for (int c = 0; c < kPerLane; ++c) {
        std::int64_t const j = j0 + lane + c * warp_size;
        if (j < d) x_grad[t * d + j] = acc[c];
      }
    }
  }
}

__global__ void iota_int64(std::int64_t* __restrict__ out, std::int64_t n) {
  for (std::int64_t i = global_thread(); i < n; i += thread_count()) out[i] = i;
}

/// t_indptr[t] = first position k with sorted_src[k] >= t, for t in [0, num_src].
__global__ void offsets_from_sorted(const std::int64_t* __restrict__ sorted_src,
                                    std::int64_t num_edges, std::int64_t* __restrict__ t_indptr,
                                    std::int64_t num_src) {
  for (std::int64_t t = global_thread(); t <= num_src; t += thread_count()) {
    std::int64_t lo = 0;
    std::int64_t hi = num_edges;
    while (lo < hi) {
      std::int64_t const mid = lo + (hi - lo) / 2;
      if (sorted_src[mid] < t) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    t_indptr[t] = lo;
  }
}

/// Radix-sort key bits covering [0, num_src).
int key_bits(std::int64_t num_src) {
  int bits = 1;
  while (bits < 63 && (std::int64_t{1} << bits) < num_src) ++bits;
  return bits;
}

constexpr std::size_t kAlign = 256;
std::size_t aligned(std::size_t bytes) { return (bytes + kAlign - 1) / kAlign * kAlign; }

std::size_t cub_sort_bytes(std::int64_t num_src, std::int64_t num_edges) {
  std::size_t bytes = 0;
  COOPGNN_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(
      nullptr, bytes, static_cast<const std::int64_t*>(nullptr),
      static_cast<std::int64_t*>(nullptr), static_cast<const std::int64_t*>(nullptr),
      static_cast<std::int64_t*>(nullptr), num_edges, 0, key_bits(num_src)));
  return bytes;
}

}  // namespace
}  // namespace detail

void spmm(const block_view& b, const float* x, std::int64_t d, float* y, cudaStream_t stream) {
  COOPGNN_NVTX_RANGE("sparse/spmm");
  constexpr const char* fn = "cuda::spmm";
  detail::check_block_view(fn, b, true);
  detail::check_dense(fn, "x", x, b.num_edges > 0 ? b.num_src : 0, d);
  detail::check_dense(fn, "y", y, b.num_dst, d);
  if (b.num_dst == 0 || d == 0) return;
  COOPGNN_LAUNCH(detail::spmm_row_per_warp, detail::grid_for_warps(b.num_dst),
                 detail::block_threads, 0, stream, b.indptr, b.indices, b.weights, x, d, y,
                 b.num_dst);
}

std::size_t transpose_workspace_bytes(std::int64_t num_src, std::int64_t num_edges) {
  COOPGNN_CU_EXPECTS(num_src >= 0 && num_edges >= 0,
                     "transpose_workspace_bytes: negative size num_src=", num_src,
                     ", num_edges=", num_edges);
  if (num_edges == 0) return 0;
  std::size_t const arr =
      detail::aligned(static_cast<std::size_t>(num_edges) * sizeof(std::int64_t));
  return 2 * arr + detail::aligned(detail::cub_sort_bytes(num_src, num_edges));
}

void build_transpose(const block_view& b, void* workspace, std::size_t workspace_bytes,
                     std::int64_t* t_indptr, std::int64_t* t_edges, cudaStream_t stream) {
  COOPGNN_NVTX_RANGE("sparse/build_transpose");
  constexpr const char* fn = "cuda::build_transpose";
  detail::check_block_view(fn, b, false);
  COOPGNN_CU_EXPECTS(t_indptr != nullptr, fn, ": t_indptr is null");
  if (b.num_edges == 0) {
    COOPGNN_CUDA_CHECK(cudaMemsetAsync(
        t_indptr, 0, static_cast<std::size_t>(b.num_src + 1) * sizeof(std::int64_t), stream));
    return;
  }
  COOPGNN_CU_EXPECTS(t_edges != nullptr, fn, ": t_edges is null");
  std::size_t const need = transpose_workspace_bytes(b.num_src, b.num_edges);
  COOPGNN_CU_EXPECTS(workspace != nullptr && workspace_bytes >= need, fn, ": workspace has ",
                     workspace_bytes, " bytes, ", need, " needed");
  std::size_t const arr =
      detail::aligned(static_cast<std::size_t>(b.num_edges) * sizeof(std::int64_t));
  auto* base = static_cast<unsigned char*>(workspace);
  auto* edge_ids = reinterpret_cast<std::int64_t*>(base);
  auto* sorted_src = reinterpret_cast<std::int64_t*>(base + arr);
  void* cub_tmp = base + 2 * arr;
  std::size_t cub_bytes = workspace_bytes - 2 * arr;

  COOPGNN_LAUNCH(detail::iota_int64, detail::grid_for_threads(b.num_edges), detail::block_threads,
                 0, stream, edge_ids, b.num_edges);
  COOPGNN_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(cub_tmp, cub_bytes, b.indices, sorted_src,
                                                     edge_ids, t_edges, b.num_edges, 0,
                                                     detail::key_bits(b.num_src), stream));
  COOPGNN_LAUNCH(detail::offsets_from_sorted, detail::grid_for_threads(b.num_src + 1),
                 detail::block_threads, 0, stream, sorted_src, b.num_edges, t_indptr, b.num_src);
}

void spmm_transpose_add(const block_view& b, const std::int64_t* t_indptr,
                        const std::int64_t* t_edges, const float* y_grad, std::int64_t d,
                        float* x_grad, cudaStream_t stream) {
  COOPGNN_NVTX_RANGE("sparse/spmm_transpose_add");
  constexpr const char* fn = "cuda::spmm_transpose_add";
  detail::check_block_view(fn, b, true);
  COOPGNN_CU_EXPECTS(t_indptr != nullptr, fn, ": t_indptr is null");
  COOPGNN_CU_EXPECTS(b.num_edges == 0 || t_edges != nullptr, fn, ": t_edges is null");
  detail::check_dense(fn, "y_grad", y_grad, b.num_edges > 0 ? b.num_dst : 0, d);
  detail::check_dense(fn, "x_grad", x_grad, b.num_src, d);
  if (b.num_edges == 0 || d == 0) return;
  COOPGNN_LAUNCH(detail::spmm_transpose_row_per_warp, detail::grid_for_warps(b.num_src),
                 detail::block_threads, 0, stream, b.indptr, b.num_dst, t_indptr, t_edges,
                 b.weights, y_grad, d, x_grad, b.num_src);
}

}  // namespace coopgnn::cuda
