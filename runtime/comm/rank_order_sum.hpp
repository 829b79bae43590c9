// Rank-order sum of the device communicators' all-reduce (internal; CUDA builds only). Safe to
// include from .cu files: no fmt, no CUDA headers.
#pragma once

#include <cstdint>

#include "runtime/core/cuda_context.hpp"

namespace coopgnn::comm_detail {

/// out[i] = ((T{} + in[0 * n + i]) + in[1 * n + i]) + ... + in[(p - 1) * n + i] for i in [0, n):
/// a rank-order sum of p rows of n elements, bitwise equal to the same host loop (plain adds, no
/// contraction). in: device [p, n] row-major; out: device [n], may not alias `in`. Enqueued on
/// `s`, no synchronisation, no allocation; n == 0 launches nothing.
/// @throws cuda_error for a failed launch.
void rank_order_sum(const float* in, int p, std::int64_t n, float* out, cuda::stream_t s);
void rank_order_sum(const double* in, int p, std::int64_t n, double* out, cuda::stream_t s);
void rank_order_sum(const std::int64_t* in, int p, std::int64_t n, std::int64_t* out,
                    cuda::stream_t s);

}  // namespace coopgnn::comm_detail
