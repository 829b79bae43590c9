// Learnable node embeddings (docs/design.md section 7.1): the input of an encoder on a graph
// without node features (twitter, Gowalla), updated only on the rows a step touched.
#pragma once

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

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
///
/// Frozen rows (heterogeneous graphs, docs/typed-sampling.md): the rows of node types with
/// features are not the table's: their input is the type's feature table (kept at its stored
/// width), so the table stores only the other rows (learnable embeddings of the same width:
/// DGL's RelGraphEmbed, PyG's ogbn-mag R-GCN example). Row ids stay the global ids [0, rows());
/// a frozen row costs no memory, gathers as zeros and is skipped by apply(), as if it had no
/// gradient. A learnt row's initial value is the one it has without frozen rows.
class embedding_table {
 public:
  using row_range = std::pair<std::int64_t, std::int64_t>;  ///< [first, last)
  /// @param layer_index keys the initialisation (use one no model layer uses)
  /// @param frozen disjoint row ranges within [0, num_rows) that the table does not store
  /// @throws logic_error for num_rows < 0 or dim < 1, invalid options, or frozen ranges that
  ///         leave [0, num_rows), are empty-negative (first > last) or overlap; cuda_error when
  ///         the device pool is exhausted.
  embedding_table(const exec_context& ctx, std::int64_t num_rows, std::int64_t dim,
                  std::uint64_t seed, std::uint32_t layer_index, const adam_options& options,
                  std::vector<row_range> frozen = {});

  /// The row ids' range [0, rows()), frozen rows included.
  [[nodiscard]] std::int64_t rows() const { return num_rows_; }
  /// Rows stored (and learnt): rows() less the frozen ones.
  [[nodiscard]] std::int64_t stored_rows() const { return m_.rows(); }
  [[nodiscard]] std::int64_t dim() const { return values_.cols(); }
  /// The stored rows [stored_rows, dim] in ascending row id, in ctx.space() (expand() places
  /// them at their ids).
  [[nodiscard]] tensor_view<const float> values() const {
    return {values_.data(), stored_rows(), dim(), values_.space()};
  }
  /// out = values[ids] [m, dim] in ctx.space(), zero rows for frozen ids. @param ids [m] in
  /// [0, rows) (host: checked, logic_error naming the first bad position; CUDA without frozen
  /// rows: the caller guarantees them; with frozen rows the ids are read on the host and checked).
  [[nodiscard]] tensor<float> gather(buffer_view<const vid_t> ids) const;
  /// One Adam step on the stored rows named by `ids` with gradient sum_{i: ids[i] = r} g[i]
  /// (summed in ascending i; ids may repeat and come in any order); frozen ids are skipped.
  /// Deterministic.
  /// @param ids [m] in [0, rows); @param g [m, dim]. @throws logic_error on a size or space
  ///        mismatch (host: an id outside [0, rows)).
  void apply(buffer_view<const vid_t> ids, tensor_view<const float> g);
  /// Frozen row ranges [first, last), ascending.
  [[nodiscard]] const std::vector<row_range>& frozen() const { return frozen_; }
  /// [rows, dim] host matrix of `stored` ([stored_rows, dim], values() or a moment) at the rows'
  /// ids, zero rows at frozen ids. Synchronises.
  [[nodiscard]] matrix<float> expand(tensor_view<const float> stored) const;
  /// The values at every id on the host, expand(values()): zeros at frozen ids.
  [[nodiscard]] matrix<float> to_host_matrix() const { return expand(values()); }
  /// The lazy-Adam moments [stored_rows, dim] float32 in ctx.space(), and the global step count.
  [[nodiscard]] tensor_view<const float> first_moment() const { return m_.view(); }
  [[nodiscard]] tensor_view<const float> second_moment() const { return v_.view(); }
  [[nodiscard]] std::int64_t steps() const { return t_; }
  /// Restores a saved table (checkpoints): values, m and v ([rows * dim] float32 each, at every
  /// id as expand() gives them, host memory, row-major; frozen ids' rows are ignored) are copied
  /// into ctx.space() and the step count becomes t, so the next apply() computes what it would
  /// have in the run that saved them. Synchronises.
  /// @throws logic_error naming the sizes on a length mismatch, or for t < 0.
  void restore(std::span<const float> values, std::span<const float> m, std::span<const float> v,
               std::int64_t t);

  embedding_table(const embedding_table&) = delete;
  embedding_table& operator=(const embedding_table&) = delete;

 private:
  /// The stored row of id r, or zero_row() when r is frozen. @pre 0 <= r < rows()
  [[nodiscard]] std::int64_t stored_row(std::int64_t r) const;
  /// With frozen rows, values_ ends in one zero row (never updated) that frozen ids gather.
  [[nodiscard]] std::int64_t zero_row() const { return stored_rows(); }

  exec_context ctx_;
  adam_options options_;
  std::int64_t num_rows_ = 0;
  tensor<float> values_;  // [stored_rows (+ 1 zero row with frozen rows), dim]
  tensor<float> m_;
  tensor<float> v_;
  std::int64_t t_ = 0;
  std::vector<row_range> frozen_;  // ascending, disjoint
  /// The stored ranges: [first, last) of ids whose rows are stored from `base` on.
  struct stored_range {
    std::int64_t first, last, base;
  };
  std::vector<stored_range> stored_;
};

}  // namespace coopgnn::models
