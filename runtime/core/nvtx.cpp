#include "runtime/core/nvtx.hpp"

#if defined(COOPGNN_HAVE_NVTX)
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace coopgnn::nvtx {

void name_thread(const std::string& name) {
#if defined(COOPGNN_HAVE_NVTX)
  nvtxNameOsThreadA(static_cast<std::uint32_t>(::syscall(SYS_gettid)), name.c_str());
#else
  (void)name;
#endif
}

#if !defined(COOPGNN_WITH_CUDA)
void name_stream(cuda::stream_t, const std::string&) {}
#endif

}  // namespace coopgnn::nvtx
