// Device communicators: which implementation connects the PEs of one process whose buffers are
// device memory, and the factory that builds one communicator per PE (docs/design.md section 1,
// comm; section 6.3, the all-to-all exchanges of cooperative minibatching).
//
// The rule (choose_device_comm):
//  - "auto": NCCL when every PE has its own device and there are at least two PEs; the
//    peer-copy communicator when two PEs share a device (NCCL forbids two ranks of one
//    communicator on one device: it fails or hangs) or when there is a single PE (nothing to
//    connect, so NCCL's setup would be pure cost).
//  - "nccl": NCCL; every PE must have its own device, otherwise logic_error.
//  - "peer": the peer-copy communicator, whatever the devices (between devices without P2P
//    access the CUDA runtime stages peer copies through host memory: correct, but slow).
//
// This header needs no CUDA headers; the choice is plain host code available in every build.
#pragma once

#include <chrono>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "runtime/comm/communicator.hpp"
#include "runtime/core/cuda_context.hpp"

namespace coopgnn {

/// Implementations of the communicator interface on device memory.
enum class device_comm_kind {
  peer,  ///< peer_communicator: cudaMemcpy(Peer)Async pulls, host rendezvous (same process)
  nccl,  ///< nccl_communicator: one NCCL rank per PE, one device per PE
};

/// "peer" or "nccl".
[[nodiscard]] std::string_view to_string(device_comm_kind kind);

/// The `device_comm` option: let choose_device_comm decide, or ask for one implementation.
enum class device_comm_choice { automatic, peer, nccl };
/// "auto", "peer" or "nccl" (the option strings choose_device_comm takes).
[[nodiscard]] std::string_view to_string(device_comm_choice choice);
/// Parses "auto", "peer" or "nccl". @throws logic_error naming the value otherwise.
[[nodiscard]] device_comm_choice parse_device_comm_choice(std::string_view option);

/// Applies the rule above.
/// @param pe_devices  [P] CUDA device ordinal of PE p (P >= 1, ordinals >= 0); not checked
///                    against the devices present (no CUDA call is made).
/// @param option      the `device_comm` option: "auto", "nccl" or "peer".
/// @returns the implementation to use. Pure function of its arguments.
/// @throws logic_error for an empty list, a negative ordinal, an unknown option, or "nccl" with
///         two PEs on one device (the message names the option, the PEs and the device).
[[nodiscard]] device_comm_kind choose_device_comm(std::span<const int> pe_devices,
                                                  std::string_view option);

/// Builds the communicators of a group of P = contexts.size() PEs of this process, PE p working
/// on contexts[p] (its device, comm() stream and memory pool), of the kind choose_device_comm
/// picks for the contexts' devices and `option`. Call from one thread before the PE threads
/// start (NCCL ranks are initialised concurrently on helper threads, as NCCL requires); then
/// hand communicator p to PE p's thread. For the peer kind, peer access is enabled between
/// every pair of distinct devices that supports it, and each context's pool is made readable by
/// those devices (cudaMemPoolSetAccess). The calling thread's current device is restored.
/// The buffers passed to the communicators' byte and allreduce calls are device memory (see
/// peer_communicator.hpp and nccl_communicator.hpp); counts stay on the host.
/// @param contexts  [P] non-null, alive for as long as the communicators are.
/// @param option    "auto", "nccl" or "peer" (see choose_device_comm).
/// @param timeout   limit of every wait inside a collective before it fails the group.
/// @returns [P] communicators, rank p at index p.
/// @throws logic_error for bad arguments (as choose_device_comm) or in a build without CUDA;
///         cuda_error / comm_error when CUDA or NCCL setup fails (nothing is left running).
[[nodiscard]] std::vector<std::unique_ptr<communicator>> make_device_communicators(
    std::span<const cuda::cuda_context* const> contexts, std::string_view option = "auto",
    std::chrono::milliseconds timeout = std::chrono::minutes(10));

}  // namespace coopgnn
