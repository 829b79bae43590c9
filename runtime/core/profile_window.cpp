#include "runtime/core/profile_window.hpp"

#include <charconv>
#include <string_view>

#include "runtime/core/error.hpp"

#if defined(COOPGNN_WITH_CUDA)
#include <cuda_profiler_api.h>

#include "runtime/core/cuda_check.hpp"
#endif

namespace coopgnn::nvtx {

void cuda_profiler(bool start) {
#if defined(COOPGNN_WITH_CUDA)
  if (start) {
    COOPGNN_CUDA_CHECK(cudaProfilerStart());
  } else {
    COOPGNN_CUDA_CHECK(cudaProfilerStop());
  }
#else
  COOPGNN_EXPECTS(false, "cuda_profiler({}): this coopgnn was built without CUDA", start);
#endif
}

std::pair<std::int64_t, std::int64_t> parse_profile_steps(const std::string& text,
                                                          const std::string& option) {
  auto const number = [](std::string_view s, std::int64_t& out) {
    auto const [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    return !s.empty() && ec == std::errc() && end == s.data() + s.size() && out >= 0;
  };
  auto const colon = text.find(':');
  // Bad user input: plain messages (no source location, unlike a violated precondition).
  std::int64_t a = -1, b = -1;
  if (colon == std::string::npos || !number(std::string_view(text).substr(0, colon), a) ||
      !number(std::string_view(text).substr(colon + 1), b)) {
    throw logic_error(fmt::format(
        "{} '{}': expected A:B, two global step indices >= 0 (e.g. 10:19)", option, text));
  }
  if (a > b) {
    throw logic_error(
        fmt::format("{} '{}': the first step {} is after the last {}", option, text, a, b));
  }
  return {a, b};
}

profile_window::profile_window(std::int64_t first, std::int64_t last, hook h, bool cuda)
    : first_(first), last_(last), hook_(std::move(h)) {
  COOPGNN_EXPECTS(first < 0 || last >= first, "profile window [{}, {}] is empty", first, last);
  if (!hook_ && cuda) hook_ = cuda_profiler;
}

void profile_window::before_step(std::int64_t step) const {
  if (first_ >= 0 && step == first_ && hook_) hook_(true);
}

void profile_window::after_step(std::int64_t step) const {
  if (first_ >= 0 && step == last_ && hook_) hook_(false);
}

}  // namespace coopgnn::nvtx
