// Where the frees of a thread go (docs/design.md section 6.7): device_pool::deallocate
// (device_pool.cpp) asks free_stream_redirect for the stream of every stream-ordered free.
// Needs no CUDA header; usable in any build.
#pragma once

#include "runtime/core/cuda_context.hpp"

namespace coopgnn::cuda {

/// While alive, device memory that the constructing thread frees stream-ordered on stream `from`
/// (device_pool::deallocate, hence every device_buffer and buffer destroyed on this thread) is
/// freed on stream `to` instead. A batch prepared on one stream and computed on another
/// (docs/design.md section 6.7): once `to` has waited for `from`'s work on the batch (an event),
/// a free on `to` is ordered after both the writes on `from` and the reads on `to`, as
/// cudaFreeAsync requires ("the allocation must not be accessed after stream execution reaches
/// the free"); a free left on `from` would let `from` reuse the memory while `to` still reads it.
/// Memory allocated on other streams is untouched. Thread-local: other threads, including the
/// one that works on `from`, keep freeing on the allocation's stream. Not nestable; destroy on
/// the constructing thread. Needs no CUDA call (usable in any build).
class free_stream_redirect {
 public:
  free_stream_redirect(stream_t from, stream_t to) : previous_(current_) { current_ = {from, to}; }
  ~free_stream_redirect() { current_ = previous_; }
  free_stream_redirect(const free_stream_redirect&) = delete;
  free_stream_redirect& operator=(const free_stream_redirect&) = delete;
  free_stream_redirect(free_stream_redirect&&) = delete;
  free_stream_redirect& operator=(free_stream_redirect&&) = delete;
  /// The stream a free requested on `s` goes to on the calling thread: the redirect's `to` when
  /// `s` is its `from`, else `s`.
  [[nodiscard]] static stream_t free_stream(stream_t s) {
    return s != nullptr && s == current_.from ? current_.to : s;
  }

 private:
  struct streams {
    stream_t from;
    stream_t to;
  };
  streams previous_;
  static inline thread_local streams current_{nullptr, nullptr};
};

}  // namespace coopgnn::cuda
