#include "runtime/core/device.hpp"

#ifndef COOPGNN_WITH_CUDA
namespace coopgnn {
device_info query_devices() { return device_info{0, "built without CUDA (COOPGNN_CUDA=OFF)", {}}; }
}  // namespace coopgnn
#endif
