// COOPGNN_HD marks functions shared by host references and CUDA kernels (docs/design.md section 2;
// CUTLASS habit: the host reference runs the same per-element math in a plain loop).
#pragma once

#if defined(__CUDACC__)
#define COOPGNN_HD __host__ __device__
#else
#define COOPGNN_HD
#endif
