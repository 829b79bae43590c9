// CUDA device discovery (DESIGN.md section 2). Available in every build: without CUDA support,
// or on a machine without a GPU, it reports zero devices and says why.
#pragma once

#include <string>

namespace coopgnn {

/// What the CUDA runtime reports about this machine.
struct device_info {
  int count = 0;           ///< usable CUDA devices (0 when none or when built without CUDA)
  std::string reason;      ///< why count is 0, empty otherwise
  std::string first_name;  ///< name of device 0, when count > 0
};

/// Queries the CUDA runtime (cudaGetDeviceCount). Never throws; a failed query is reported in
/// `reason` (for example "no CUDA-capable device is detected" or "built without CUDA").
device_info query_devices();

}  // namespace coopgnn
