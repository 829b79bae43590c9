// The trainer's input features (pipeline/trainer.hpp): the host feature table of an untyped
// graph, the per-type tables of a typed one (each at its stored width), the typed rows of a
// batch, and the full table evaluation reads. The device tiers are in trainer_devices.cpp.
#include <algorithm>
#include <numeric>

#include "kernels/dense/link_ops.hpp"
#include "pipeline/trainer_internal.hpp"
#include "runtime/core/error.hpp"
#include "runtime/graph/npy.hpp"

namespace coopgnn {

void trainer::set_host_features(storage_tier tier) {
  if (tier == storage_tier::mmap) {
    features_ = feature_table::map_npy(ds_.feature_file);
    return;
  }
  if (ds_.features_are_16bit()) {
    // 16-bit features stay 16-bit in host memory (read at their width when left in the file).
    if (!ds_.features_in_memory() && owned_features16_.rows() == 0) {
      auto a = read_npy_bits16(ds_.feature_file);
      owned_features16_ =
          matrix<std::uint16_t>(ds_.num_nodes, ds_.feature_dim(), std::move(a.data));
    }
    features_ = feature_table::borrow(ds_.features_in_memory() ? ds_.features16 : owned_features16_,
                                      ds_.feature_type);
    return;
  }
  if (!ds_.features_in_memory() && owned_features_.rows() == 0) {
    // Left in the file by read_dataset: load it now.
    auto a = read_npy<float>(ds_.feature_file);
    owned_features_ = matrix<float>(ds_.num_nodes, ds_.feature_dim(), std::move(a.data));
  }
  features_ = feature_table::borrow(ds_.features_in_memory() ? ds_.features : owned_features_);
}

void trainer::set_typed_features() {
  const hetero_schema& h = *ds_.hetero;
  typed_features_.clear();
  typed_features_.resize(h.node_types.size());
  for (std::int64_t t = 0; t < h.num_node_types(); ++t) {
    auto const i = static_cast<std::size_t>(t);
    if (h.feature_dim(t) == 0) continue;
    if (h.features_in_file(t)) {
      typed_features_[i] = feature_table::map_npy(h.feature_files[i]);
      const feature_table& f = *typed_features_[i];
      COOPGNN_EXPECTS(
          f.rows() == h.count(t) && f.cols() == h.feature_dim(t) && f.dtype() == h.feature_type(t),
          "{}: the mapped features are [{}, {}] {}, node type '{}' [{}, {}] {}",
          h.feature_files[i].string(), f.rows(), f.cols(), to_string(f.dtype()), h.node_types[i],
          h.count(t), h.feature_dim(t), to_string(h.feature_type(t)));
    } else if (h.feature_type(t) == feature_dtype::float32) {
      typed_features_[i] = feature_table::borrow(h.features[i]);
    } else {
      typed_features_[i] = feature_table::borrow(h.features16[i], h.feature_type(t));
    }
  }
}

std::int64_t trainer::add_typed_feature_rows(const exec_context& ctx, std::span<const vid_t> ids,
                                             tensor_view<float> h) const {
  const hetero_schema& hs = *ds_.hetero;
  // Per featured type: the positions of its ids and their local rows.
  std::vector<std::vector<std::int64_t>> pos(typed_features_.size());
  std::vector<std::vector<vid_t>> local(typed_features_.size());
  for (std::size_t i = 0; i < ids.size(); ++i) {
    auto const t = static_cast<std::size_t>(hs.type_of(ids[i]));
    if (!typed_features_[t]) continue;
    pos[t].push_back(static_cast<std::int64_t>(i));
    local[t].push_back(ids[i] - hs.node_offsets[t]);
  }
  std::int64_t bytes = 0;
  for (std::size_t t = 0; t < typed_features_.size(); ++t) {
    if (pos[t].empty()) continue;
    const feature_table& f = *typed_features_[t];
    tensor<float> const rows = to_space(ctx, f.gather(local[t]));
    buffer<std::int64_t> const at =
        upload<std::int64_t>(ctx, std::span<const std::int64_t>(pos[t]));
    scatter_add_rows<float>(ctx, rows.view(), at.view(), h);
    bytes += static_cast<std::int64_t>(pos[t].size()) * f.row_bytes();
  }
  return bytes;
}

void trainer::fill_typed_feature_rows(matrix<float>& all) const {
  const hetero_schema& hs = *ds_.hetero;
  constexpr vid_t kChunk = 1 << 16;  // rows widened at a time
  for (std::size_t t = 0; t < typed_features_.size(); ++t) {
    if (!typed_features_[t]) continue;
    const feature_table& f = *typed_features_[t];
    vid_t const off = hs.node_offsets[t];
    std::vector<vid_t> local;
    for (vid_t a = 0; a < f.rows(); a += kChunk) {
      vid_t const b = std::min<vid_t>(f.rows(), a + kChunk);
      local.resize(static_cast<std::size_t>(b - a));
      std::iota(local.begin(), local.end(), a);
      matrix<float> const rows = f.gather(local);
      std::copy_n(rows.data(), rows.size(), all.data() + (off + a) * all.cols());
    }
  }
}

matrix<float> trainer::inference_input(int pe) const {
  if (pes_.at(pe)->emb) return embedding_values();
  if (ds_.features_in_memory() && !ds_.features_are_16bit()) return ds_.features;
  if (owned_features_.rows() > 0) return owned_features_;
  // Layer-wise inference reads every row: gathered once from the mapped file, or widened from
  // a 16-bit table for the evaluation's duration (the table itself stays 16-bit).
  std::vector<vid_t> all(static_cast<std::size_t>(ds_.num_nodes));
  std::iota(all.begin(), all.end(), vid_t{0});
  return features_->gather(all);
}

}  // namespace coopgnn
