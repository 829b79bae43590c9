#include "kernels/sample/block.hpp"

#include "runtime/core/error.hpp"

namespace coopgnn {

block_view view(const block& b) {
  COOPGNN_EXPECTS(b.num_dst >= 0 && b.num_dst <= b.num_src(),
                  "block: num_dst = {} but the block has {} sources", b.num_dst, b.num_src());
  COOPGNN_EXPECTS(b.num_relations >= 1, "block: num_relations = {} (>= 1 expected)",
                  b.num_relations);
  COOPGNN_EXPECTS(static_cast<std::int64_t>(b.indptr.size()) == b.num_dst * b.num_relations + 1,
                  "block: indptr has {} offsets for {} destinations x {} relations",
                  b.indptr.size(), b.num_dst, b.num_relations);
  COOPGNN_EXPECTS(b.weights.size() == b.indices.size(), "block: {} weights for {} edges",
                  b.weights.size(), b.indices.size());
  COOPGNN_EXPECTS(b.src_degree.empty() || b.src_degree.size() == b.src_ids.size(),
                  "block: src_degree has {} entries for {} sources", b.src_degree.size(),
                  b.src_ids.size());
  return {b.num_dst,         b.num_src(),
          b.num_edges(),     b.src_ids.data(),
          b.indptr.data(),   b.indices.data(),
          b.weights.data(),  b.src_degree.empty() ? nullptr : b.src_degree.data(),
          memory_space::host, b.num_relations};
}

}  // namespace coopgnn
