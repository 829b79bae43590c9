// CUDA SDDMM over a block (declared in sparse_cuda.hpp; host reference kernels/sparse/sddmm.hpp).
#include "kernels/cuda_check.cuh"
#include "kernels/cuda_launch.cuh"
#include "kernels/sparse/block_view_check.hpp"
#include "kernels/sparse/sparse_cuda.hpp"
#include "runtime/core/cuda_launch.cuh"
#include "runtime/core/nvtx.hpp"

namespace coopgnn::cuda {
namespace detail {
namespace {

/// out[e] = scale(e) * dot(a[s, :], x[indices[e], :]): one warp per destination s; for each of
/// its edges the lanes take strided columns and a butterfly sums the 32 partials.
__global__ void sddmm_row_per_warp(const std::int64_t* __restrict__ indptr,
                                   const std::int64_t* __restrict__ indices,
                                   const float* __restrict__ w, const float* __restrict__ a,
                                   const float* __restrict__ x, std::int64_t d,
                                   float* __restrict__ out, std::int64_t num_dst) {
  int const lane = static_cast<int>(threadIdx.x) % warp_size;
  for (std::int64_t s = global_warp(); s < num_dst; s += warp_count()) {
    const float* arow = a + s * d;
    for (std::int64_t e = indptr[s]; e < indptr[s + 1]; ++e) {
      const float* xrow = x + indices[e] * d;
      float partial = 0.0f;
      for (std::int64_t j = lane; j < d; j += warp_size) partial += arow[j] * xrow[j];
      float const total = warp_sum(partial);
      if (lane == 0) out[e] = w != nullptr ? w[e] * total : total;
    }
  }
}

}  // namespace
}  // namespace detail

void sddmm(const block_view& b, const float* a, const float* x, std::int64_t d,
           bool scale_by_weights, float* out, cudaStream_t stream) {
  COOPGNN_NVTX_RANGE("sparse/sddmm");
  constexpr const char* fn = "cuda::sddmm";
  detail::check_block_view(fn, b, scale_by_weights);
  std::int64_t const rows_read = b.num_edges > 0 ? 1 : 0;
  detail::check_dense(fn, "a", a, rows_read * b.num_dst, d);
  detail::check_dense(fn, "x", x, rows_read * b.num_src, d);
  COOPGNN_CU_EXPECTS(b.num_edges == 0 || out != nullptr, fn, ": out is null for ", b.num_edges,
                     " edges");
  if (b.num_edges == 0) return;
  COOPGNN_LAUNCH(detail::sddmm_row_per_warp, detail::grid_for_warps(b.num_dst),
                 detail::block_threads, 0, stream, b.indptr, b.indices,
                 scale_by_weights ? b.weights : nullptr, a, x, d, out, b.num_dst);
}

}  // namespace coopgnn::cuda
