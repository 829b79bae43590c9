#include "pipeline/exchange.hpp"

#include <algorithm>

#include "kernels/gather/gather.hpp"
#include "kernels/sparse/spmm.hpp"
#include "runtime/core/error.hpp"
#include "runtime/core/nvtx.hpp"

namespace coopgnn {

std::int64_t exchange_route::bytes() const {
  return static_cast<std::int64_t>(send_perm.bytes() + recv_pos.bytes() + recv_inv.bytes() +
                                   push_indptr.bytes() + push_sources.bytes() +
                                   push_weights.bytes());
}

exchange_route make_route(const exec_context& ctx, placed_plan&& plan,
                          std::int64_t num_owner_rows) {
  detail::expect_space(ctx, plan.send_perm.space(), "make_route", "send_perm");
  detail::expect_space(ctx, plan.recv_inv.space(), "make_route", "recv_inv");
  exchange_route r;
  r.send_counts = std::move(plan.send_counts);
  r.recv_counts = std::move(plan.recv_counts);
  r.num_owner_rows = num_owner_rows;
  if (plan.identity) {
    // One PE: the requester rows are the owner rows; nothing to index.
    COOPGNN_EXPECTS(r.send_counts.size() == 1 && r.send_counts[0] == num_owner_rows,
                    "make_route: an identity plan of {} rows for {} owner rows",
                    r.send_counts.empty() ? -1 : r.send_counts[0], num_owner_rows);
    r.num_requester_rows = num_owner_rows;
    r.identity = true;
    return r;
  }
  r.num_requester_rows = static_cast<std::int64_t>(plan.send_perm.size());
  // recv_pos: the inverse of send_perm (each value once); the push CSR: recv_inv grouped by
  // owner row, ascending request order. Both stay in ctx.space().
  auto pos = group_by_value(ctx, r.num_requester_rows, plan.send_perm.view());
  if (ctx.runs_on_host()) {
    // Where the offsets are readable: send_perm must be a permutation (each value once).
    auto const* off = pos.offsets.data();
    for (std::int64_t i = 0; i < r.num_requester_rows; ++i) {
      COOPGNN_EXPECTS(off[i + 1] == i + 1,
                      "make_route: send_perm is not a permutation of [0, {}) (value {} appears {} "
                      "times)",
                      r.num_requester_rows, i, off[i + 1] - off[i]);
    }
  }
  auto push = group_by_value(ctx, num_owner_rows, plan.recv_inv.view());
  r.recv_pos = std::move(pos.positions);
  r.push_indptr = std::move(push.offsets);
  r.push_sources = std::move(push.positions);
  r.push_weights = to_space(ctx, std::vector<float>(plan.recv_inv.size(), 1.0f));
  r.send_perm = std::move(plan.send_perm);
  r.recv_inv = std::move(plan.recv_inv);
  return r;
}

namespace {
/// out[i, :] = rows[ids[i], :] into a new tensor (the ids of a route were validated when it was
/// made).
tensor<float> gather(const exec_context& ctx, tensor_view<const float> rows,
                     const buffer<std::int64_t>& ids) {
  tensor<float> out(ctx, static_cast<std::int64_t>(ids.size()), rows.cols);
  gather_rows(ctx, rows, ids.view(), out.view());
  return out;
}

/// [rows, d] of workspace slot `s` as a tensor view.
tensor_view<float> staging_rows(const exec_context& ctx, exchange_workspace& ws,
                                exchange_workspace::slot_id s, std::int64_t rows, std::int64_t d) {
  auto const v = ws.take(ctx, s, static_cast<std::size_t>(rows * d));
  return {v.data, rows, d, v.space};
}
}  // namespace

tensor<float> exchange_pull(const exec_context& ctx, communicator& comm,
                            const exchange_route& route, tensor_view<const float> owner_rows,
                            exchange_workspace* ws) {
  COOPGNN_NVTX_RANGE("comm/exchange_pull");
  COOPGNN_EXPECTS(owner_rows.rows == route.num_owner_rows,
                  "exchange_pull: {} owner rows for a route with {}", owner_rows.rows,
                  route.num_owner_rows);
  std::int64_t const d = owner_rows.cols;
  if (route.identity)
    return tensor<float>(clone<float>(ctx, owner_rows.flat()), owner_rows.rows, d);
  exchange_workspace local;
  exchange_workspace& w = ws != nullptr ? *ws : local;
  // Answer every request in receive order, then put each received row at its local source.
  auto const m = static_cast<std::int64_t>(route.recv_inv.size());
  auto const answers = staging_rows(ctx, w, exchange_workspace::requests, m, d);
  gather_rows(ctx, owner_rows, route.recv_inv.view(), answers);
  auto const received =
      staging_rows(ctx, w, exchange_workspace::requester, route.num_requester_rows, d);
  alltoallv_rows_into<float>(ctx, comm, answers.flat(), route.recv_counts, route.send_counts,
                             received.flat(), d);
  return gather(ctx, received, route.recv_pos);
}

tensor<float> exchange_push(const exec_context& ctx, communicator& comm,
                            const exchange_route& route, tensor_view<const float> requester_grads,
                            exchange_workspace* ws) {
  COOPGNN_NVTX_RANGE("comm/exchange_push");
  COOPGNN_EXPECTS(requester_grads.rows == route.num_requester_rows,
                  "exchange_push: {} requester rows for a route with {}", requester_grads.rows,
                  route.num_requester_rows);
  std::int64_t const d = requester_grads.cols;
  if (route.identity) {
    return tensor<float>(clone<float>(ctx, requester_grads.flat()), requester_grads.rows, d);
  }
  exchange_workspace local;
  exchange_workspace& w = ws != nullptr ? *ws : local;
  auto const sent =
      staging_rows(ctx, w, exchange_workspace::requester, route.num_requester_rows, d);
  gather_rows(ctx, requester_grads, route.send_perm.view(), sent);
  auto const m = static_cast<std::int64_t>(route.recv_inv.size());
  auto const recv = staging_rows(ctx, w, exchange_workspace::requests, m, d);
  alltoallv_rows_into<float>(ctx, comm, sent.flat(), route.send_counts, route.recv_counts,
                             recv.flat(), d);
  tensor<float> out(ctx, route.num_owner_rows, d);
  // Owner row o = the sum of its requests' rows in receive order, from zero.
  csr_view const push{
      route.num_owner_rows,     m, m, route.push_indptr.data(), route.push_sources.data(),
      route.push_indptr.space()};
  spmm<float>(ctx, push, route.push_weights.view(), recv, out.view());
  return out;
}

tensor<float> exchange_pull(const exec_context& ctx, communicator& comm,
                            const exchange_route& route, tensor<float>&& owner_rows,
                            exchange_workspace* ws) {
  if (!route.identity) return exchange_pull(ctx, comm, route, owner_rows.view(), ws);
  COOPGNN_EXPECTS(owner_rows.rows() == route.num_owner_rows,
                  "exchange_pull: {} owner rows for a route with {}", owner_rows.rows(),
                  route.num_owner_rows);
  return std::move(owner_rows);
}

tensor<float> exchange_push(const exec_context& ctx, communicator& comm,
                            const exchange_route& route, tensor<float>&& requester_grads,
                            exchange_workspace* ws) {
  if (!route.identity) return exchange_push(ctx, comm, route, requester_grads.view(), ws);
  COOPGNN_EXPECTS(requester_grads.rows() == route.num_requester_rows,
                  "exchange_push: {} requester rows for a route with {}", requester_grads.rows(),
                  route.num_requester_rows);
  return std::move(requester_grads);
}

}  // namespace coopgnn
