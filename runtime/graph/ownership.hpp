// Vertex ownership (docs/design.md section 5): a seeded random permutation of the vertices cut into
// P equal contiguous ranges. The cooperative paper (Balin et al., TMLR 2025) found this naive
// scheme balances load well.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "runtime/core/types.hpp"

namespace coopgnn {

/// owner(v) = floor(pi(v) * P / |V|), pi a random permutation keyed by the run seed
/// (rng::purpose::ownership). Every PE computes the same map from the same seed.
class ownership {
 public:
  ownership() = default;
  /// @param num_nodes |V| >= 0; @param num_pes P >= 1; @param seed run seed.
  /// @throws logic_error for P < 1 or P > 65535. O(|V| log |V|) time, 2 bytes per vertex.
  ownership(vid_t num_nodes, int num_pes, std::uint64_t seed);
  /// Ownership per node type (heterogeneous graphs, hetero_schema::node_offsets): the
  /// vertices of type t, [type_offsets[t], type_offsets[t + 1]), are ordered by the same keyed
  /// permutation and cut into P equal contiguous ranges of their own, so every PE owns
  /// floor or ceil(count_t / P) vertices of every type. {0, |V|} is the untyped map above.
  /// @param type_offsets [T + 1] ascending, from 0 to num_nodes
  /// @throws logic_error for P outside [1, 65535] or offsets that do not run from 0 to |V|
  ///         ascending.
  ownership(vid_t num_nodes, int num_pes, std::uint64_t seed, std::span<const vid_t> type_offsets);

  /// The owner PE of v (no bounds check; v in [0, |V|)).
  [[nodiscard]] int owner(vid_t v) const { return owner_[static_cast<std::size_t>(v)]; }
  [[nodiscard]] int num_pes() const { return num_pes_; }
  /// The owner of every vertex, [|V|] PE ids (the owner map the sampling kernels take).
  [[nodiscard]] std::span<const std::uint16_t> map() const {
    return {owner_.data(), owner_.size()};
  }
  [[nodiscard]] vid_t num_nodes() const { return static_cast<vid_t>(owner_.size()); }
  /// Number of vertices owned by each PE ([P]); sizes differ by at most one.
  [[nodiscard]] std::vector<vid_t> counts() const;

 private:
  int num_pes_ = 1;
  std::vector<std::uint16_t> owner_;
};

}  // namespace coopgnn
