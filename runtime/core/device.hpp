// CUDA device discovery (docs/design.md section 2). Available in every build: without CUDA support,
// or on a machine without a GPU, it reports zero devices and says why.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

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

/// Free and total memory of one CUDA device, in bytes.
struct device_memory {
  std::uint64_t free_bytes = 0;   ///< cudaMemGetInfo's free: what allocations may still take
  std::uint64_t total_bytes = 0;  ///< the device's memory
};

/// cudaMemGetInfo on device `device` (made current on the calling thread; the previous current
/// device is restored). Creates the device's primary context if it has none.
/// @throws logic_error in a build without CUDA or when `device` is outside [0, count);
///         cuda_error when the runtime call fails.
device_memory query_device_memory(int device);

/// What each device holds in a CUDA run where PE p runs on device p / pes_per_gpu (the trainer's
/// placement, trainer.hpp): pes_on_device x per_pe + per_device, for devices 0 ..
/// ceil(num_pes / pes_per_gpu) - 1 (the last one may hold fewer PEs). Bytes, saturating at
/// UINT64_MAX. Used by `train --dry-run` against query_device_memory (tools/coopgnn/cmd_train.cpp).
/// @throws logic_error when num_pes < 1 or pes_per_gpu < 1.
std::vector<std::uint64_t> bytes_per_device(std::uint64_t per_pe, std::uint64_t per_device,
                                            int num_pes, int pes_per_gpu);

}  // namespace coopgnn
