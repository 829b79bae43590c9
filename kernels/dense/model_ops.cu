// Element-wise device ops of the GNN layers: keyed dropout, GCN coefficients and self term, Adam
// (declared in elementwise_cuda.hpp; the host versions are in models/layers.cpp and
// models/optimizer.cpp). Every floating-point step uses explicit round-to-nearest intrinsics in
// the host's operation order, so nvcc cannot contract it into an FMA: results are bitwise equal
// to the host (which builds with -ffp-contract=off).
#include <cstdint>

#include "kernels/cuda_check.cuh"
#include "kernels/cuda_launch.cuh"
#include "kernels/dense/elementwise_cuda.hpp"
#include "runtime/core/cuda_launch.cuh"
#include "runtime/core/nvtx.hpp"
#include "runtime/core/rng.hpp"

namespace coopgnn::cuda {
namespace detail {
namespace {

/// Thread per (row, quad of four columns): one Philox call gives the four columns' variates.
__global__ void dropout_quad_per_thread(const float* x, const std::int64_t* __restrict__ ids,
                                        std::int64_t rows, std::int64_t cols, std::int64_t quads,
                                        rng::stream s, std::uint32_t batch, float p, float scale,
                                        float* y, std::uint8_t* __restrict__ keep) {
  std::int64_t const total = rows * quads;
  for (std::int64_t t = global_thread(); t < total; t += thread_count()) {
    std::int64_t const i = t / quads;
    std::int64_t const q = t % quads;
    auto const id = static_cast<std::uint64_t>(ids[i]);
    auto const w = rng::draw4(s, id, static_cast<std::uint32_t>(q), batch);
    for (int k = 0; k < 4; ++k) {
      std::int64_t const j = q * 4 + k;
      if (j >= cols) break;
      std::int64_t const e = i * cols + j;
      bool const kept = rng::to_unit(w[k]) >= p;
      keep[e] = kept ? 1 : 0;
      y[e] = kept ? __fmul_rn(x[e], scale) : 0.0f;
    }
  }
}

__global__ void dropout_backward_per_thread(float* __restrict__ g,
                                            const std::uint8_t* __restrict__ keep, std::int64_t n,
                                            float scale) {
  for (std::int64_t e = global_thread(); e < n; e += thread_count()) {
    g[e] = keep[e] != 0 ? __fmul_rn(g[e], scale) : 0.0f;
  }
}

/// Warp per destination, lanes over its edges.
__global__ void gcn_edge_values_row_per_warp(const std::int64_t* __restrict__ indptr,
                                             const std::int64_t* __restrict__ indices,
                                             const float* __restrict__ weights,
                                             const std::int64_t* __restrict__ src_degree,
                                             std::int64_t num_dst, float* __restrict__ out) {
  int const lane = static_cast<int>(threadIdx.x) % warp_size;
  for (std::int64_t s = global_warp(); s < num_dst; s += warp_count()) {
    float const ds = static_cast<float>(src_degree[s]);
    float const ds1 = __fadd_rn(ds, 1.0f);
    for (std::int64_t e = indptr[s] + lane; e < indptr[s + 1]; e += warp_size) {
      float const dt = static_cast<float>(src_degree[indices[e]]);
      float const den = __fsqrt_rn(__fmul_rn(ds1, __fadd_rn(dt, 1.0f)));
      out[e] = __fdiv_rn(__fmul_rn(weights[e], ds), den);
    }
  }
}

__global__ void gcn_self_add_per_thread(const std::int64_t* __restrict__ src_degree,
                                        const float* __restrict__ x, std::int64_t rows,
                                        std::int64_t cols, float* __restrict__ y) {
  std::int64_t const total = rows * cols;
  for (std::int64_t e = global_thread(); e < total; e += thread_count()) {
    std::int64_t const s = e / cols;
    float const c = __fdiv_rn(1.0f, static_cast<float>(src_degree[s] + 1));
    y[e] = __fadd_rn(y[e], __fmul_rn(c, x[e]));
  }
}

__global__ void adam_per_thread(float* __restrict__ value, const float* __restrict__ grad,
                                float* __restrict__ m, float* __restrict__ v, std::int64_t n,
                                adam_step_params a) {
  for (std::int64_t e = global_thread(); e < n; e += thread_count()) {
    adam_element(value[e], grad[e], m[e], v[e], a);
  }
}

}  // namespace
}  // namespace detail

void dropout_forward(const float* x, const std::int64_t* ids, std::int64_t rows, std::int64_t cols,
                     std::uint64_t run_seed, std::uint32_t batch, std::uint32_t layer_index,
                     float p, float scale, float* y, std::uint8_t* keep, cudaStream_t stream) {
  COOPGNN_NVTX_RANGE("dense/dropout_forward");
  constexpr const char* fn = "cuda::dropout_forward";
  COOPGNN_CU_EXPECTS(rows >= 0 && cols >= 0, fn, ": negative shape [", rows, ", ", cols, "]");
  COOPGNN_CU_EXPECTS(p >= 0.0f && p < 1.0f, fn, ": p = ", p, " is outside [0, 1)");
  COOPGNN_CU_EXPECTS(cols < (std::int64_t{1} << 34), fn, ": cols = ", cols,
                     " needs more than 32 bits of column quads");
  if (rows == 0 || cols == 0) return;
  COOPGNN_CU_EXPECTS(x != nullptr && ids != nullptr && y != nullptr && keep != nullptr, fn,
                     ": x, ids, y or keep is null for [", rows, ", ", cols, "]");
  std::int64_t const quads = (cols + 3) / 4;
  rng::stream const s = rng::make_stream(run_seed, rng::purpose::dropout, layer_index);
  COOPGNN_LAUNCH(detail::dropout_quad_per_thread, detail::grid_for_threads(rows * quads),
                 detail::block_threads, 0, stream, x, ids, rows, cols, quads, s, batch, p, scale, y,
                 keep);
}

void dropout_backward(float* g, const std::uint8_t* keep, std::int64_t n, float scale,
                      cudaStream_t stream) {
  COOPGNN_NVTX_RANGE("dense/dropout_backward");
  COOPGNN_CU_EXPECTS(n >= 0, "cuda::dropout_backward: negative size n=", n);
  if (n == 0) return;
  COOPGNN_CU_EXPECTS(g != nullptr && keep != nullptr, "cuda::dropout_backward: g or keep is null");
  COOPGNN_LAUNCH(detail::dropout_backward_per_thread, detail::grid_for_threads(n),
                 detail::block_threads, 0, stream, g, keep, n, scale);
}

void gcn_edge_values(const std::int64_t* indptr, const std::int64_t* indices, const float* weights,
                     const std::int64_t* src_degree, std::int64_t num_dst, float* out,
                     cudaStream_t stream) {
  COOPGNN_NVTX_RANGE("dense/gcn_edge_values");
  constexpr const char* fn = "cuda::gcn_edge_values";
  COOPGNN_CU_EXPECTS(num_dst >= 0, fn, ": negative num_dst=", num_dst);
  if (num_dst == 0) return;
  // indices/weights/out may be null for a block without edges, but the kernel only reads them
  // inside an edge loop, so only the per-destination arrays must exist.
  COOPGNN_CU_EXPECTS(indptr != nullptr && src_degree != nullptr, fn,
                     ": indptr or src_degree is null for ", num_dst, " destinations");
  COOPGNN_LAUNCH(detail::gcn_edge_values_row_per_warp, detail::grid_for_warps(num_dst),
                 detail::block_threads, 0, stream, indptr, indices, weights, src_degree, num_dst,
                 out);
}

void gcn_self_add(const std::int64_t* src_degree, const float* x, std::int64_t rows,
                  std::int64_t cols, float* y, cudaStream_t stream) {
  COOPGNN_NVTX_RANGE("dense/gcn_self_add");
  constexpr const char* fn = "cuda::gcn_self_add";
  COOPGNN_CU_EXPECTS(rows >= 0 && cols >= 0, fn, ": negative shape [", rows, ", ", cols, "]");
  if (rows == 0 || cols == 0) return;
  COOPGNN_CU_EXPECTS(src_degree != nullptr && x != nullptr && y != nullptr, fn,
                     ": src_degree, x or y is null for [", rows, ", ", cols, "]");
  COOPGNN_LAUNCH(detail::gcn_self_add_per_thread, detail::grid_for_threads(rows * cols),
                 detail::block_threads, 0, stream, src_degree, x, rows, cols, y);
}

void adam_step(float* value, const float* grad, float* m, float* v, std::int64_t n,
               const adam_step_params& params, cudaStream_t stream) {
  COOPGNN_NVTX_RANGE("dense/adam_step");
  COOPGNN_CU_EXPECTS(n >= 0, "cuda::adam_step: negative size n=", n);
  if (n == 0) return;
  COOPGNN_CU_EXPECTS(value != nullptr && grad != nullptr && m != nullptr && v != nullptr,
                     "cuda::adam_step: value, grad, m or v is null for n = ", n);
  COOPGNN_LAUNCH(detail::adam_per_thread, detail::grid_for_threads(n), detail::block_threads, 0,
                 stream, value, grad, m, v, n, params);
}

}  // namespace coopgnn::cuda
