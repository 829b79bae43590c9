// Deterministic reductions shared by the .cu files of kernels/dense, without atomics (the same
// bits on every run): column sums of a per-element term (the bias gradient, the PReLU per-channel
// slope gradient, the LayerNorm gamma/beta gradients) and one-block sums (the loss totals, the
// shared PReLU slope gradient). Internal; include from .cu files only.
#pragma once

#include <algorithm>
#include <cstdint>

#include "kernels/cuda_launch.cuh"
#include "runtime/core/cuda_launch.cuh"

namespace coopgnn::cuda::detail {

inline constexpr int col_sums_tile = 32;  // columns per block and row lanes per column

/// Block (32 x 32 threads) per 32 columns: thread (lane r, column c) sums term(i, j) over rows
/// i = r, r + 32, ... ascending; thread r == 0 then adds the 32 partials in lane order and adds
/// the total to sums[j]. No atomics: the same bits on every run; the order differs from a
/// host's ascending sum (exact on integer-valued data).
template <typename Term>
__global__ void col_sums_tile_per_block(Term term, std::int64_t rows, std::int64_t cols,
                                        float* __restrict__ sums) {
  constexpr int kTile = col_sums_tile;
  __shared__ float partial[kTile][kTile + 1];
  int const c = static_cast<int>(threadIdx.x);
  int const r = static_cast<int>(threadIdx.y);
  for (std::int64_t tile = blockIdx.x; tile * kTile < cols; tile += gridDim.x) {
    std::int64_t const j = tile * kTile + c;
    float acc = 0.0f;
    if (j < cols) {
      for (std::int64_t i = r; i < rows; i += kTile) acc += term(i, j);
    }
    partial[r][c] = acc;
    __syncthreads();
    if (r == 0 && j < cols) {
      float total = 0.0f;
      for (int k = 0; k < kTile; ++k) total += partial[k][c];
      sums[j] += total;
    }
    __syncthreads();
  }
}

/// sums[j] += sum_{i < rows} term(i, j) for j < cols on `stream` (col_sums_tile_per_block).
/// term is a copyable functor with `__device__ float operator()(int64 i, int64 j) const`.
template <typename Term>
void col_sums_add(Term term, std::int64_t rows, std::int64_t cols, float* sums,
                  cudaStream_t stream) {
  std::int64_t const tiles = (cols + col_sums_tile - 1) / col_sums_tile;
  auto const grid = static_cast<unsigned>(std::min<std::int64_t>(tiles, max_grid));
  COOPGNN_LAUNCH(col_sums_tile_per_block<Term>, grid, dim3(col_sums_tile, col_sums_tile), 0, stream,
                 term, rows, cols, sums);
}

/// The term g[i, j] of a row-major [rows, d] matrix.
struct matrix_term {
  const float* g;
  std::int64_t d;
  __device__ float operator()(std::int64_t i, std::int64_t j) const { return g[i * d + j]; }
};

inline constexpr int sum_threads = 256;

/// One block of sum_threads threads: thread t sums term(k) for k = t, t + 256, ... ascending in
/// Acc, then a shared-memory tree in a fixed order; thread 0 calls store(total).
template <typename Acc, typename Term, typename Store>
__global__ void sum_single_block(Term term, std::int64_t n, Store store) {
  __shared__ Acc part[sum_threads];
  int const t = static_cast<int>(threadIdx.x);
  Acc acc = 0;
  for (std::int64_t k = t; k < n; k += sum_threads) acc += term(k);
  part[t] = acc;
  __syncthreads();
  for (int half = sum_threads / 2; half > 0; half /= 2) {
    if (t < half) part[t] += part[t + half];
    __syncthreads();
  }
  if (t == 0) store(part[0]);
}

/// Element k of a double array.
struct double_array_term {
  const double* v;
  __device__ double operator()(std::int64_t k) const { return v[k]; }
};

/// *loss = float(scale * total).
struct store_scaled {
  float* loss;
  float scale;
  __device__ void operator()(double total) const {
    *loss = static_cast<float>(static_cast<double>(scale) * total);
  }
};

/// *loss = float(scale * sum_{i < n} row_loss[i]) on `stream` (sum_single_block); n == 0 writes
/// 0 without reading row_loss. The total of the loss kernels.
inline void store_loss_sum(const double* row_loss, std::int64_t n, float scale, float* loss,
                           cudaStream_t stream) {
  if (n == 0) {
    COOPGNN_CUDA_CHECK(cudaMemsetAsync(loss, 0, sizeof(float), stream));
    return;
  }
  COOPGNN_LAUNCH((sum_single_block<double, double_array_term, store_scaled>), 1, sum_threads, 0,
                 stream, double_array_term{row_loss}, n, store_scaled{loss, scale});
}

}  // namespace coopgnn::cuda::detail
