#include "runtime/core/stream_handover.hpp"

#include "runtime/core/cuda_events.hpp"

namespace coopgnn {

stream_handover::stream_handover(const exec_context& from) {
#ifdef COOPGNN_WITH_CUDA
  const cuda::cuda_context* c = from.cuda();
  if (c == nullptr) return;
  c->make_current();  // the event belongs to the current device
  event_ = cuda::detail::create_ordering_event();
  try {
    cuda::detail::record_event(event_, c->compute());
  } catch (...) {
    cuda::detail::destroy_event(std::exchange(event_, nullptr));
    throw;
  }
#else
  (void)from;
#endif
}

stream_handover::~stream_handover() {
#ifdef COOPGNN_WITH_CUDA
  cuda::detail::destroy_event(event_);
#endif
}

stream_handover& stream_handover::operator=(stream_handover&& o) noexcept {
  if (this != &o) {
#ifdef COOPGNN_WITH_CUDA
    cuda::detail::destroy_event(event_);
#endif
    event_ = std::exchange(o.event_, nullptr);
  }
  return *this;
}

void stream_handover::wait(const exec_context& to) const {
#ifdef COOPGNN_WITH_CUDA
  if (event_ == nullptr || to.cuda() == nullptr) return;
  cuda::detail::stream_wait_event(to.cuda()->compute(), event_);
#else
  (void)to;
#endif
}

}  // namespace coopgnn
