#include "cache/feature_store.hpp"

#include <algorithm>


namespace coopgnn {

matrix<float> feature_store::load(std::span<const vid_t> ids) {
  matrix<float> out = table_->gather(ids);
  stats_.rows += out.rows();
  stats_.bytes += out.rows() * table_->row_bytes();  // as stored (2 bytes per 16-bit element)
  if (cache_) {
    hit_.resize(ids.size());
    cache_->access_batch(ids, hit_);
    auto const hits = std::count(hit_.begin(), hit_.end(), std::uint8_t{1});
    stats_.cache_hits += hits;
    stats_.cache_misses += static_cast<std::int64_t>(ids.size()) - hits;
  } else {
    stats_.cache_misses += out.rows();
  }
  return out;
}

}  // namespace coopgnn
