#include "kernels/sparse/csr_check.hpp"

#include "runtime/core/error.hpp"

namespace coopgnn::detail {

void check_indptr(const char* fn, std::span<const eid_t> indptr, std::int64_t num_edges) {
  COOPGNN_EXPECTS(!indptr.empty(), "{}: indptr is empty (it needs num_dst + 1 >= 1 offsets)", fn);
  COOPGNN_EXPECTS(indptr.front() == 0, "{}: indptr[0] = {}, expected 0", fn, indptr.front());
  for (std::size_t s = 1; s < indptr.size(); ++s) {
    COOPGNN_EXPECTS(indptr[s] >= indptr[s - 1], "{}: indptr decreases at row {} ({} -> {})", fn,
                    s - 1, indptr[s - 1], indptr[s]);
  }
  COOPGNN_EXPECTS(indptr.back() == num_edges, "{}: indptr ends at {} but there are {} edges", fn,
                  indptr.back(), num_edges);
}

void check_edge_array(const char* fn, const char* what, std::size_t size, std::int64_t num_edges) {
  COOPGNN_EXPECTS(static_cast<std::int64_t>(size) == num_edges,
                  "{}: {} has {} entries for {} edges", fn, what, size, num_edges);
}

}  // namespace coopgnn::detail
