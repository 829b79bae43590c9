#include "kernels/sparse/sddmm.hpp"

#include <vector>

#include "kernels/sparse/csr_check.hpp"
#include "runtime/core/error.hpp"

namespace coopgnn {

template <typename T>
void sddmm(std::span<const eid_t> indptr, std::span<const std::int64_t> indices, const matrix<T>& a,
           const matrix<T>& x, std::span<const T> edge_scale, std::span<T> out) {
  constexpr const char* fn = "sddmm";
  auto const num_edges = static_cast<std::int64_t>(indices.size());
  detail::check_indptr(fn, indptr, num_edges);
  detail::check_edge_array(fn, "out", out.size(), num_edges);
  if (!edge_scale.empty()) detail::check_edge_array(fn, "edge_scale", edge_scale.size(), num_edges);
  std::int64_t const num_dst = static_cast<std::int64_t>(indptr.size()) - 1;
  COOPGNN_EXPECTS(a.cols() == x.cols(), "{}: a has {} columns but x has {}", fn, a.cols(),
                  x.cols());
  COOPGNN_EXPECTS(a.rows() >= num_dst, "{}: a has {} rows but there are {} destinations", fn,
                  a.rows(), num_dst);
  std::int64_t const d = x.cols();
  std::int64_t const num_src = x.rows();
  for (std::int64_t s = 0; s < num_dst; ++s) {
    const T* arow = a.row(s);
    for (eid_t e = indptr[s]; e < indptr[s + 1]; ++e) {
      std::int64_t const t = indices[e];
      COOPGNN_EXPECTS(0 <= t && t < num_src, "{}: edge {} of row {} reads source {} of {}", fn, e,
                      s, t, num_src);
      const T* xrow = x.row(t);
      T acc{0};
      for (std::int64_t j = 0; j < d; ++j) acc += arow[j] * xrow[j];
      out[e] = edge_scale.empty() ? acc : edge_scale[e] * acc;
    }
  }
}

template <typename T>
void sddmm(const block& b, const matrix<T>& a, const matrix<T>& x, bool scale_by_weights,
           std::span<T> out) {
  COOPGNN_EXPECTS(b.num_dst >= 0 && static_cast<std::int64_t>(b.indptr.size()) == b.num_dst + 1,
                  "sddmm: block has num_dst = {} but indptr has {} offsets", b.num_dst,
                  b.indptr.size());
  COOPGNN_EXPECTS(x.rows() == b.num_src(), "sddmm: x has {} rows but the block has {} sources",
                  x.rows(), b.num_src());
  std::vector<T> scale;
  if (scale_by_weights) {
    detail::check_edge_array("sddmm", "block weights", b.weights.size(), b.num_edges());
    scale.assign(b.weights.begin(), b.weights.end());
  }
  sddmm<T>(b.indptr, b.indices, a, x, std::span<const T>(scale), out);
}

template void sddmm<float>(std::span<const eid_t>, std::span<const std::int64_t>,
                           const matrix<float>&, const matrix<float>&, std::span<const float>,
                           std::span<float>);
template void sddmm<double>(std::span<const eid_t>, std::span<const std::int64_t>,
                            const matrix<double>&, const matrix<double>&, std::span<const double>,
                            std::span<double>);
template void sddmm<float>(const block&, const matrix<float>&, const matrix<float>&, bool,
                           std::span<float>);
template void sddmm<double>(const block&, const matrix<double>&, const matrix<double>&, bool,
                            std::span<double>);

}  // namespace coopgnn
