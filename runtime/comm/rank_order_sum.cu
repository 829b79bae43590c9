// Rank-order sum of the device communicators' all-reduce (declared in rank_order_sum.hpp).
#include <algorithm>

#include "runtime/comm/rank_order_sum.hpp"
#include "runtime/core/cuda_check.hpp"
#include "runtime/core/cuda_launch.cuh"

namespace coopgnn::comm_detail {
namespace {

constexpr int kThreads = 256;
constexpr std::int64_t kMaxBlocks = 1 << 16;  // grid-stride beyond this

/// Thread per element: element i sums rows 0..p-1 in rank order, starting from T{}.
template <typename T>
__global__ void rank_order_sum_per_thread(const T* __restrict__ in, int p, std::int64_t n,
                                          T* __restrict__ out) {
  std::int64_t const stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    T acc{};
    for (int r = 0; r < p; ++r) acc += in[r * n + i];  // adds only: nothing to contract
    out[i] = acc;
  }
}

template <typename T>
void launch(const T* in, int p, std::int64_t n, T* out, cuda::stream_t s) {
  if (n == 0) return;
  auto const blocks =
      static_cast<unsigned>(std::clamp<std::int64_t>((n + kThreads - 1) / kThreads, 1, kMaxBlocks));
  COOPGNN_LAUNCH(rank_order_sum_per_thread<T>, blocks, kThreads, 0, s, in, p, n, out);
}

}  // namespace

void rank_order_sum(const float* in, int p, std::int64_t n, float* out, cuda::stream_t s) {
  launch(in, p, n, out, s);
}
void rank_order_sum(const double* in, int p, std::int64_t n, double* out, cuda::stream_t s) {
  launch(in, p, n, out, s);
}
void rank_order_sum(const std::int64_t* in, int p, std::int64_t n, std::int64_t* out,
                    cuda::stream_t s) {
  launch(in, p, n, out, s);
}

}  // namespace coopgnn::comm_detail
