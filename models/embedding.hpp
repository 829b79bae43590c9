// Learnable node embeddings (docs/design.md section 7.1): the input of an encoder on a graph
// without node features (twitter, Gowalla), updated only on the rows a step touched.
#pragma once

#include <cstdint>
#include <span>

#include "models/optimizer.hpp"
#include "runtime/core/exec_context.hpp"
#include "runtime/core/matrix.hpp"
#include "runtime/core/memory.hpp"
#include "runtime/core/types.hpp"

namespace coopgnn::models {

/// A [num_rows, dim] float32 table in the memory space of a context, with the lazy-Adam moments.
///
/// One step: gather() the minibatch's input rows; the trainer all-gathers every PE's (input id,
/// gradient row) pairs so that every replica sees the same list; apply() then sums the rows per
/// id and applies Adam (adam_update_rows, PyTorch SparseAdam semantics: one global step counter;
/// the moments of untouched rows are left as they are; weight decay, when set, applies to the
/// touched rows only) to exactly the ids in the list. Replicas that apply the same list stay
/// bitwise equal, in both protocols.
///
/// Initialisation: element (r, c) = (2u - 1) sqrt(3) * 0.1 (standard deviation 0.1, as
/// LightGCN's normal(0, 0.1) init), u from rng::draw4(make_stream(seed, purpose::init,
/// layer_index), r, c, 0): a pure function of the key, the same on every backend.
class embedding_table {
 public:
  /// @param layer_index keys the initialisation (use one no model layer uses)
  /// @throws logic_error for num_rows < 0 or dim < 1 or invalid options; cuda_error when the
  ///         device pool is exhausted.
  embedding_table(const exec_context& ctx, std::int64_t num_rows, std::int64_t dim,
                  std::uint64_t seed, std::uint32_t layer_index, const adam_options& options);

  [[nodiscard]] std::int64_t rows() const { return values_.rows(); }
  [[nodiscard]] std::int64_t dim() const { return values_.cols(); }
  [[nodiscard]] tensor_view<const float> values() const { return values_.view(); }
  /// out = values[ids] [m, dim] in ctx.space(). @param ids [m] in [0, rows) (host: checked,
  /// logic_error naming the first bad position; CUDA: the caller guarantees them).
  [[nodiscard]] tensor<float> gather(buffer_view<const vid_t> ids) const;
  /// One Adam step on the rows named by `ids` with gradient sum_{i: ids[i] = r} g[i] (summed in
  /// ascending i; ids may repeat and come in any order). Deterministic.
  /// @param ids [m] in [0, rows); @param g [m, dim]. @throws logic_error on a size or space
  ///        mismatch (host: an id outside [0, rows)).
  void apply(buffer_view<const vid_t> ids, tensor_view<const float> g);
  /// Rows [first, first + values.rows()) become `values` and are frozen: apply() skips them from
  /// now on (no Adam step, no weight decay), as if they had no gradient. For heterogeneous
  /// graphs (docs/typed-sampling.md): the input rows of node types with features are those
  /// features, fixed; the rows of featureless types stay learnable embeddings of the same width
  /// (DGL's RelGraphEmbed, PyG's ogbn-mag R-GCN example). Frozen ranges must not overlap.
  /// Synchronises.
  /// @param values [n, dim()] host memory
  /// @throws logic_error when the range leaves [0, rows()), the width differs from dim(), or the
  ///         range overlaps one frozen before.
  void set_frozen_rows(std::int64_t first, const matrix<float>& values);
  /// Frozen row ranges [first, last), ascending.
  [[nodiscard]] const std::vector<std::pair<std::int64_t, std::int64_t>>& frozen() const {
    return frozen_;
  }
  /// The values on the host (downloaded off the host; synchronises).
  [[nodiscard]] matrix<float> to_host_matrix() const;
  /// The lazy-Adam moments [rows, dim] float32 in ctx.space(), and the global step count.
  [[nodiscard]] tensor_view<const float> first_moment() const { return m_.view(); }
  [[nodiscard]] tensor_view<const float> second_moment() const { return v_.view(); }
  [[nodiscard]] std::int64_t steps() const { return t_; }
  /// Restores a saved table (checkpoints): values, m and v ([rows * dim] float32 each, host
  /// memory, row-major) are copied into ctx.space() and the step count becomes t, so the next
  /// apply() computes what it would have in the run that saved them. Synchronises.
  /// @throws logic_error naming the sizes on a length mismatch, or for t < 0.
  void restore(std::span<const float> values, std::span<const float> m, std::span<const float> v,
               std::int64_t t);

  embedding_table(const embedding_table&) = delete;
  embedding_table& operator=(const embedding_table&) = delete;

 private:
  exec_context ctx_;
  adam_options options_;
  tensor<float> values_;
  tensor<float> m_;
  tensor<float> v_;
  std::int64_t t_ = 0;
  std::vector<std::pair<std::int64_t, std::int64_t>> frozen_;  // [first, last), ascending
};

}  // namespace coopgnn::models
