// Learnable node embeddings (issue 11; DESIGN.md section 7): the input of an encoder on a graph
// without node features (twitter, Gowalla), updated only on the rows a step touched.
#pragma once

#include <cstdint>

#include "models/optimizer.hpp"
#include "runtime/core/exec_context.hpp"
#include "runtime/core/matrix.hpp"
#include "runtime/core/memory.hpp"
#include "runtime/core/types.hpp"

namespace coopgnn::models {

/// A [num_rows, dim] float32 table in the memory space of a context, with its gradient, a
/// per-row touch count and the lazy-Adam moments.
///
/// One step: gather() the minibatch's input rows; accumulate() their gradients (and mark them
/// touched); the trainer all-reduces grads() and touched() over the PEs (so replicas stay equal
/// in both protocols); step() then applies Adam (adam_update_rows, PyTorch SparseAdam semantics:
/// one global step counter; moments of untouched rows are left as they are; weight decay, when
/// set, applies to the touched rows only) to exactly the rows with a non-zero touch count, and
/// clears their gradients and counts.
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
  /// The gradient [num_rows, dim] and touch counts [num_rows] (what the trainer all-reduces).
  [[nodiscard]] buffer_view<float> grads() { return grads_.view().flat(); }
  [[nodiscard]] buffer_view<float> touched() { return touched_.view(); }

  /// out = values[ids] [m, dim] in ctx.space(). @param ids [m] in [0, rows) (host: checked,
  /// logic_error naming the first bad position; CUDA: the caller guarantees them).
  [[nodiscard]] tensor<float> gather(buffer_view<const vid_t> ids) const;
  /// grads[ids[i]] += g[i] (i ascending) and touched[ids[i]] += 1.
  /// @param ids [m]; @param g [m, dim]. @throws logic_error on a size or space mismatch.
  void accumulate(buffer_view<const vid_t> ids, tensor_view<const float> g);
  /// Adam on every row whose touch count is non-zero, then clears those rows' gradients and
  /// counts. Synchronises ctx (the touched rows are listed on the host).
  void step();
  /// The values on the host (downloaded off the host; synchronises).
  [[nodiscard]] matrix<float> to_host_matrix() const;
  /// Values copied from `other` (same shape, any space).
  void copy_values_from(const embedding_table& other);

  embedding_table(const embedding_table&) = delete;
  embedding_table& operator=(const embedding_table&) = delete;

 private:
  exec_context ctx_;
  adam_options options_;
  tensor<float> values_;
  tensor<float> grads_;
  buffer<float> touched_;
  tensor<float> m_;
  tensor<float> v_;
  std::int64_t t_ = 0;
};

}  // namespace coopgnn::models
