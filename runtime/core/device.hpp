// CUDA device discovery (docs/design.md section 2). Available in every build: without CUDA support,
// or on a machine without a GPU, it reports zero devices and says why.
#pragma once

#include <cstdint>
#include <span>
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

/// Which CUDA devices one process of a multi-process job (one `coopgnn tma` rank) takes, or why
/// it cannot take any.
struct rank_devices {
  std::vector<int> devices;  ///< [n] device ordinals in this process's numbering (the one
                             ///< CUDA_VISIBLE_DEVICES leaves); empty when `error` is set
  std::string reason;        ///< how they were chosen, for the log (empty on error)
  std::string error;         ///< why no choice exists (the numbers and the fixes); empty if ok
  [[nodiscard]] bool ok() const { return error.empty(); }
};

/// The devices of GPU-using process `local_index` of the `local_ranks` on its node that use GPUs
/// (node-local numbering, 0-based), each needing n = ceil(num_pes / pes_per_gpu) devices, when
/// the process sees `visible` devices (cudaGetDeviceCount) and `visibility_set` says whether
/// CUDA_VISIBLE_DEVICES is set in its environment. Pure (no CUDA, no MPI):
///  - local_ranks x n <= visible: a block of the node's devices,
///    [local_index n, (local_index + 1) n) (every process sees the node's devices);
///  - else, when visibility_set and visible >= n: 0 .. n - 1 (the launcher gave each process
///    its own devices, e.g. srun --gpus-per-task or a per-rank CUDA_VISIBLE_DEVICES);
///  - else an error naming local_ranks, n, num_pes, pes_per_gpu and visible, and the fixes
///    (fewer ranks per node, --pes / --pes-per-gpu, per-rank CUDA_VISIBLE_DEVICES).
/// That the chosen devices are not another process's is not decided here: a per-rank
/// CUDA_VISIBLE_DEVICES that is the same for every rank passes; the caller compares the
/// processes' device identities (query_device_identity).
/// @throws logic_error when local_ranks < 1, local_index is outside [0, local_ranks),
///         num_pes < 1, pes_per_gpu < 1 or visible < 0.
rank_devices choose_rank_devices(int local_index, int local_ranks, int num_pes, int pes_per_gpu,
                                 int visible, bool visibility_set);

/// What tells one physical CUDA device apart from every other, whatever a process's
/// CUDA_VISIBLE_DEVICES numbering: two processes on a node that see the same device get the same
/// uuid.
struct device_identity {
  std::string uuid;        ///< cudaDeviceProp::uuid as "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx"
  std::string pci_bus_id;  ///< cudaDeviceGetPCIBusId, e.g. "0000:3B:00.0"
  std::string name;        ///< cudaDeviceProp::name
};

/// The identity of device `device` (cudaGetDeviceProperties, cudaDeviceGetPCIBusId; neither makes
/// a context).
/// @throws logic_error in a build without CUDA or when `device` is outside [0, count);
///         cuda_error when a runtime call fails.
device_identity query_device_identity(int device);

/// "GPU-" and the 16 bytes of a CUDA uuid in the 8-4-4-4-12 hex groups nvidia-smi -L prints.
std::string format_device_uuid(std::span<const unsigned char, 16> bytes);

}  // namespace coopgnn
