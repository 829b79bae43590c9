#include "kernels/sparse/edge_softmax.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "kernels/sparse/csr_check.hpp"

namespace coopgnn {

template <typename T>
void edge_softmax(std::span<const eid_t> indptr, std::span<const T> scores, std::span<T> out) {
  constexpr const char* fn = "edge_softmax";
  auto const num_edges = static_cast<std::int64_t>(scores.size());
  detail::check_indptr(fn, indptr, num_edges);
  detail::check_edge_array(fn, "out", out.size(), num_edges);
  std::int64_t const num_dst = static_cast<std::int64_t>(indptr.size()) - 1;
  for (std::int64_t s = 0; s < num_dst; ++s) {
    eid_t const e0 = indptr[s];
    eid_t const e1 = indptr[s + 1];
    if (e0 == e1) continue;
    T mx = -std::numeric_limits<T>::infinity();
    for (eid_t e = e0; e < e1; ++e) mx = std::max(mx, scores[e]);
    T sum{0};
    for (eid_t e = e0; e < e1; ++e) sum += std::exp(scores[e] - mx);
    for (eid_t e = e0; e < e1; ++e) out[e] = std::exp(scores[e] - mx) / sum;
  }
}

template <typename T>
void edge_softmax_backward(std::span<const eid_t> indptr, std::span<const T> y,
                           std::span<const T> grad_y, std::span<T> grad_scores) {
  constexpr const char* fn = "edge_softmax_backward";
  auto const num_edges = static_cast<std::int64_t>(y.size());
  detail::check_indptr(fn, indptr, num_edges);
  detail::check_edge_array(fn, "grad_y", grad_y.size(), num_edges);
  detail::check_edge_array(fn, "grad_scores", grad_scores.size(), num_edges);
  std::int64_t const num_dst = static_cast<std::int64_t>(indptr.size()) - 1;
  for (std::int64_t s = 0; s < num_dst; ++s) {
    T dot{0};
    for (eid_t e = indptr[s]; e < indptr[s + 1]; ++e) dot += y[e] * grad_y[e];
    for (eid_t e = indptr[s]; e < indptr[s + 1]; ++e) grad_scores[e] = y[e] * (grad_y[e] - dot);
  }
}

template void edge_softmax<float>(std::span<const eid_t>, std::span<const float>, std::span<float>);
template void edge_softmax<double>(std::span<const eid_t>, std::span<const double>,
                                   std::span<double>);
template void edge_softmax_backward<float>(std::span<const eid_t>, std::span<const float>,
                                           std::span<const float>, std::span<float>);
template void edge_softmax_backward<double>(std::span<const eid_t>, std::span<const double>,
                                            std::span<const double>, std::span<double>);

}  // namespace coopgnn
