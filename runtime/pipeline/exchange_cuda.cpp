#ifdef COOPGNN_WITH_CUDA

#include "runtime/pipeline/exchange_cuda.hpp"

#include <algorithm>
#include <span>

#include "kernels/gather/gather_cuda.hpp"
#include "kernels/sparse/sparse_cuda.hpp"
#include "runtime/core/error.hpp"
#include "runtime/core/nvtx.hpp"

namespace coopgnn::cuda {

namespace {

table_view view_of(const device_matrix& m) {
  return table_view{m.data.data(), m.rows, m.cols, m.cols};
}

}  // namespace

namespace {
/// out[i, :] = rows[ids[i], :] without the id check: a plan's ids were validated by upload(),
/// so no synchronisation is needed. Enqueued on ctx.compute().
device_matrix gather_unchecked(const cuda_context& ctx, const device_matrix& rows,
                               const device_buffer<std::int64_t>& ids) {
  device_matrix out;
  out.rows = static_cast<std::int64_t>(ids.size());
  out.cols = rows.cols;
  out.data = ctx.allocate<float>(static_cast<std::size_t>(out.rows * out.cols));
  auto first_bad = ctx.allocate<unsigned long long>(1);  // never read: ids are known good
  gather_rows_async(view_of(rows), ids.data(), out.rows, out.data.data(), first_bad.data(),
                    ctx.compute());
  return out;
}
}  // namespace

device_exchange_plan upload(const cuda_context& ctx, const exchange_plan& plan,
                            std::int64_t num_owner_rows) {
  device_exchange_plan d;
  d.send_counts = plan.send_counts;
  d.recv_counts = plan.recv_counts;
  d.num_requester_rows = static_cast<std::int64_t>(plan.send_perm.size());
  d.num_owner_rows = num_owner_rows;
  auto const x = make_exchange_index(plan, num_owner_rows);
  std::vector<float> const ones(plan.recv_inv.size(), 1.0f);
  d.send_perm = ctx.to_device(std::span<const std::int64_t>(plan.send_perm));
  d.recv_pos = ctx.to_device(std::span<const std::int64_t>(x.recv_pos));
  d.recv_inv = ctx.to_device(std::span<const std::int64_t>(plan.recv_inv));
  d.push_indptr = ctx.to_device(std::span<const std::int64_t>(x.push_indptr));
  d.push_sources = ctx.to_device(std::span<const std::int64_t>(x.push_sources));
  d.push_weights = ctx.to_device(std::span<const float>(ones));
  detail::synchronize(ctx.compute());  // the pageable host vectors above die here
  return d;
}

device_matrix exchange_pull(const cuda_context& ctx, communicator& comm,
                            const device_exchange_plan& plan, const device_matrix& owner_rows) {
  COOPGNN_NVTX_RANGE("comm/exchange_pull");
  COOPGNN_EXPECTS(owner_rows.rows == plan.num_owner_rows,
                  "exchange_pull: {} owner rows for a plan with {}", owner_rows.rows,
                  plan.num_owner_rows);
  std::int64_t const d = owner_rows.cols;
  // Answer every request in receive order, then put each received row at its local source.
  auto const answers = gather_unchecked(ctx, owner_rows, plan.recv_inv);
  device_matrix received;
  received.rows = plan.num_requester_rows;
  received.cols = d;
  received.data =
      alltoallv_device(ctx, comm, answers.data, plan.recv_counts, plan.send_counts, d);
  return gather_unchecked(ctx, received, plan.recv_pos);
}

device_matrix exchange_push(const cuda_context& ctx, communicator& comm,
                            const device_exchange_plan& plan,
                            const device_matrix& requester_grads) {
  COOPGNN_NVTX_RANGE("comm/exchange_push");
  COOPGNN_EXPECTS(requester_grads.rows == plan.num_requester_rows,
                  "exchange_push: {} requester rows for a plan with {}", requester_grads.rows,
                  plan.num_requester_rows);
  std::int64_t const d = requester_grads.cols;
  auto const sent = gather_unchecked(ctx, requester_grads, plan.send_perm);
  auto const recv = alltoallv_device(ctx, comm, sent.data, plan.send_counts, plan.recv_counts, d);
  auto const m = static_cast<std::int64_t>(plan.recv_inv.size());
  device_matrix out;
  out.rows = plan.num_owner_rows;
  out.cols = d;
  out.data = ctx.allocate<float>(static_cast<std::size_t>(out.rows * d));
  // Owner row o = sum of its requests' rows in receive order, from zero (SpMM over the CSR by
  // owner row with unit weights: bitwise the host's `+=` loop). Every owner row was requested
  // at least once (S^{l+1}_p is the set of requested ids), so m >= num_owner_rows.
  block_view const b{plan.num_owner_rows, std::max(m, plan.num_owner_rows), m,
                     plan.push_indptr.data(), plan.push_sources.data(),
                     plan.push_weights.data()};
  spmm(b, recv.data(), d, out.data.data(), ctx.compute());
  return out;
}

}  // namespace coopgnn::cuda

#endif  // COOPGNN_WITH_CUDA
