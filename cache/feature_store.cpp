#include "cache/feature_store.hpp"

#include "kernels/gather/gather.hpp"

namespace coopgnn {

matrix<float> feature_store::load(std::span<const vid_t> ids) {
  matrix<float> out = gather_rows(*table_, ids);
  stats_.rows += out.rows();
  stats_.bytes += out.size() * static_cast<std::int64_t>(sizeof(float));
  if (cache_) {
    for (vid_t v : ids) {
      if (cache_->access(v)) {
        ++stats_.cache_hits;
      } else {
        ++stats_.cache_misses;
      }
    }
  } else {
    stats_.cache_misses += out.rows();
  }
  return out;
}

}  // namespace coopgnn
