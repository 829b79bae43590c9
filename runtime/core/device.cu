// CUDA implementation of device discovery; compiled only when the CUDA backend is built.
#include <cuda_runtime.h>

#include "runtime/core/device.hpp"

namespace coopgnn {

device_info query_devices() {
  device_info info;
  int n = 0;
  cudaError_t const st = cudaGetDeviceCount(&n);
  if (st != cudaSuccess) {
    info.reason = cudaGetErrorString(st);
    (void)cudaGetLastError();  // clear the sticky-free error so later calls start clean
    return info;
  }
  info.count = n;
  if (n == 0) {
    info.reason = "the CUDA runtime reports 0 devices";
    return info;
  }
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, 0) == cudaSuccess) info.first_name = prop.name;
  return info;
}

}  // namespace coopgnn
