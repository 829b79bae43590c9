#include "runtime/core/stage_clock.hpp"

#include "runtime/core/cuda_context.hpp"
#include "runtime/core/cuda_events.hpp"
#include "runtime/core/error.hpp"

namespace coopgnn {

stage_clock::~stage_clock() {
#ifdef COOPGNN_WITH_CUDA
  if (ctx_.cuda() == nullptr || spans_.empty()) return;
  try {
    ctx_.cuda()->make_current();  // the events' device (the destructor may run on any thread)
  } catch (...) {                 // a failure shows again in the destroys below, which log
  }
  for (span& s : spans_) {
    cuda::detail::destroy_event(s.start);
    cuda::detail::destroy_event(s.stop);
  }
#endif
}

int stage_clock::begin() {
  if (static_cast<std::size_t>(used_) == spans_.size()) spans_.emplace_back();
  span& s = spans_[static_cast<std::size_t>(used_)];
  s.ended = false;
#ifdef COOPGNN_WITH_CUDA
  if (const cuda::cuda_context* c = ctx_.cuda()) {
    if (s.start == nullptr) s.start = cuda::detail::create_timing_event();
    if (s.stop == nullptr) s.stop = cuda::detail::create_timing_event();
    cuda::detail::record_event(s.start, c->compute());
    return used_++;
  }
#endif
  s.t0 = std::chrono::steady_clock::now();
  return used_++;
}

void stage_clock::end(int i) {
  COOPGNN_EXPECTS(i >= 0 && i < used_, "stage_clock::end: span {} was not begun ({} this step)", i,
                  used_);
  span& s = spans_[static_cast<std::size_t>(i)];
  COOPGNN_EXPECTS(!s.ended, "stage_clock::end: span {} has already ended", i);
  s.ended = true;
#ifdef COOPGNN_WITH_CUDA
  if (const cuda::cuda_context* c = ctx_.cuda()) {
    cuda::detail::record_event(s.stop, c->compute());
    return;
  }
#endif
  s.t1 = std::chrono::steady_clock::now();
}

double stage_clock::seconds(int i) const {
  COOPGNN_EXPECTS(i >= 0 && i < used_, "stage_clock::seconds: span {} was not begun ({} this step)",
                  i, used_);
  span const& s = spans_[static_cast<std::size_t>(i)];
  COOPGNN_EXPECTS(s.ended, "stage_clock::seconds: span {} has not ended", i);
#ifdef COOPGNN_WITH_CUDA
  if (ctx_.cuda() != nullptr) {
    return cuda::detail::elapsed_seconds(s.start, s.stop);
  }
#endif
  return std::chrono::duration<double>(s.t1 - s.t0).count();
}

}  // namespace coopgnn
