#include "cache/feature_store.hpp"

#include "kernels/gather/gather.hpp"

namespace coopgnn {

matrix<float> feature_store::load(std::span<const vid_t> ids) {
  matrix<float> out = gather_rows(*table_, ids);
  stats_.rows += out.rows();
  stats_.bytes += out.size() * static_cast<std::int64_t>(sizeof(float));
  return out;
}

}  // namespace coopgnn
