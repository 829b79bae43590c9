// Choice of the device communicator and the factory (device_comm.hpp).
#include "runtime/comm/device_comm.hpp"

#include <exception>
#include <thread>

#include "runtime/core/error.hpp"

#if defined(COOPGNN_WITH_CUDA)
#include <cuda_runtime_api.h>

#include "runtime/comm/nccl_communicator.hpp"
#include "runtime/comm/peer_communicator.hpp"
#include "runtime/core/cuda_check.hpp"
#endif

namespace coopgnn {

std::string_view to_string(device_comm_kind kind) {
  return kind == device_comm_kind::nccl ? "nccl" : "peer";
}

std::string_view to_string(device_comm_choice choice) {
  switch (choice) {
    case device_comm_choice::peer:
      return "peer";
    case device_comm_choice::nccl:
      return "nccl";
    case device_comm_choice::automatic:
      break;
  }
  return "auto";
}

device_comm_choice parse_device_comm_choice(std::string_view option) {
  if (option == "auto") return device_comm_choice::automatic;
  if (option == "peer") return device_comm_choice::peer;
  if (option == "nccl") return device_comm_choice::nccl;
  COOPGNN_FAIL("--device-comm '{}': expected auto, nccl or peer", option);
}

device_comm_kind choose_device_comm(std::span<const int> pe_devices, std::string_view option) {
  COOPGNN_EXPECTS(option == "auto" || option == "nccl" || option == "peer",
                  "device_comm: unknown value '{}' (expected auto, nccl or peer)", option);
  COOPGNN_EXPECTS(!pe_devices.empty(), "device_comm: no PEs (the device list is empty)");
  int shared_a = -1, shared_b = -1;
  for (std::size_t p = 0; p < pe_devices.size(); ++p) {
    COOPGNN_EXPECTS(pe_devices[p] >= 0, "device_comm: PE {} has device ordinal {} (negative)", p,
                    pe_devices[p]);
    for (std::size_t q = 0; q < p && shared_a < 0; ++q) {
      if (pe_devices[q] == pe_devices[p]) {
        shared_a = static_cast<int>(q);
        shared_b = static_cast<int>(p);
      }
    }
  }
  if (option == "peer") return device_comm_kind::peer;
  if (option == "nccl") {
    COOPGNN_EXPECTS(shared_a < 0,
                    "device_comm=nccl needs one device per PE, but PEs {} and {} share device {} "
                    "(NCCL cannot put two ranks on one device); use device_comm=peer or auto",
                    shared_a, shared_b, shared_a >= 0 ? pe_devices[shared_a] : -1);
    return device_comm_kind::nccl;
  }
  if (shared_a >= 0 || pe_devices.size() == 1) return device_comm_kind::peer;
  return device_comm_kind::nccl;
}

#if defined(COOPGNN_WITH_CUDA)
namespace {

/// Enables peer access between every pair of distinct devices that supports it, and lets each
/// device that can read another's memory read the contexts' stream-ordered pools there (pool
/// memory is not covered by cudaDeviceEnablePeerAccess). Without P2P, cudaMemcpyPeerAsync
/// stages through the host instead. Leaves the calling thread's current device as it was.
void enable_peer_access(std::span<const cuda::cuda_context* const> contexts) {
  int current = 0;
  COOPGNN_CUDA_CHECK(cudaGetDevice(&current));
  for (const auto* a : contexts) {
    for (const auto* b : contexts) {
      int const from = b->device(), to = a->device();  // `from` reads memory of `to`
      if (from == to) continue;
      int can = 0;
      COOPGNN_CUDA_CHECK(cudaDeviceCanAccessPeer(&can, from, to));
      if (can == 0) continue;
      COOPGNN_CUDA_CHECK(cudaSetDevice(from));
      cudaError_t const st = cudaDeviceEnablePeerAccess(to, 0);
      if (st == cudaErrorPeerAccessAlreadyEnabled) {
        (void)cudaGetLastError();  // not an error here; clear it
      } else {
        COOPGNN_CUDA_CHECK(st);
      }
      cudaMemAccessDesc desc{};
      desc.location.type = cudaMemLocationTypeDevice;
      desc.location.id = from;
      desc.flags = cudaMemAccessFlagsProtReadWrite;
      COOPGNN_CUDA_CHECK(cudaMemPoolSetAccess(a->pool(), &desc, 1));
    }
  }
  COOPGNN_CUDA_CHECK(cudaSetDevice(current));
}

}  // namespace
#endif

std::vector<std::unique_ptr<communicator>> make_device_communicators(
    std::span<const cuda::cuda_context* const> contexts, std::string_view option,
    std::chrono::milliseconds timeout) {
  COOPGNN_EXPECTS(!contexts.empty(), "make_device_communicators: no PE contexts");
  std::vector<int> devices;
  for (std::size_t p = 0; p < contexts.size(); ++p) {
    COOPGNN_EXPECTS(contexts[p] != nullptr, "make_device_communicators: context of PE {} is null",
                    p);
    devices.push_back(contexts[p]->device());
  }
  auto const kind = choose_device_comm(devices, option);
#if defined(COOPGNN_WITH_CUDA)
  int const pes = static_cast<int>(contexts.size());
  std::vector<std::unique_ptr<communicator>> out(contexts.size());
  if (kind == device_comm_kind::peer) {
    int current = 0;
    COOPGNN_CUDA_CHECK(cudaGetDevice(&current));
    enable_peer_access(contexts);
    auto group = std::make_shared<host_comm_group>(pes, timeout);
    for (int p = 0; p < pes; ++p) {
      out[p] = std::make_unique<peer_communicator>(group, p, *contexts[p]);
    }
    COOPGNN_CUDA_CHECK(cudaSetDevice(current));  // the constructors made their devices current
    return out;
  }
  // NCCL: the ranks initialise concurrently, one helper thread each.
  auto group = std::make_shared<nccl_comm_group>(pes, timeout);
  std::vector<std::exception_ptr> errors(contexts.size());
  {
    std::vector<std::jthread> threads;
    for (int p = 0; p < pes; ++p) {
      threads.emplace_back([&, p] {
        try {
          out[p] = std::make_unique<nccl_communicator>(group, p, *contexts[p]);
        } catch (const std::exception& e) {
          errors[p] = std::current_exception();
          group->host()->abort(fmt::format("PE {} failed to initialise NCCL: {}", p, e.what()));
        }
      });
    }
  }
  // Report the root cause: an error other than a peer's comm_error when there is one.
  std::exception_ptr first;
  for (auto const& e : errors) {
    if (!e) continue;
    if (!first) first = e;
    try {
      std::rethrow_exception(e);
    } catch (const comm_error&) {
    } catch (...) {
      first = e;
      break;
    }
  }
  if (first) std::rethrow_exception(first);  // `out` aborts whatever was initialised
  return out;
#else
  (void)kind;
  (void)timeout;
  COOPGNN_FAIL("make_device_communicators: coopgnn was built without CUDA (COOPGNN_CUDA=OFF)");
#endif
}

}  // namespace coopgnn
