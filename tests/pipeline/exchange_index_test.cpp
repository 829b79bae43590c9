// The index arrays of an exchange route (make_route, pipeline/exchange.hpp): the push CSR
// and recv_pos with which every backend's exchanges reproduce the plain scatter-add and scatter
// of a plan exactly. The expected values are those plain loops, written out here; broken plans
// are rejected.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>

#include "kernels/sparse/spmm.hpp"
#include "runtime/core/error.hpp"
#include "pipeline/exchange.hpp"

namespace coopgnn {
namespace {

exchange_plan random_plan(std::int64_t requester_rows, std::int64_t owner_rows,
                          std::int64_t requests, std::uint32_t seed) {
  std::mt19937 rng(seed);
  exchange_plan plan;
  plan.send_perm.resize(static_cast<std::size_t>(requester_rows));
  std::iota(plan.send_perm.begin(), plan.send_perm.end(), std::int64_t{0});
  std::shuffle(plan.send_perm.begin(), plan.send_perm.end(), rng);
  std::uniform_int_distribution<std::int64_t> row(0, owner_rows - 1);
  for (std::int64_t r = 0; r < requests; ++r) plan.recv_inv.push_back(row(rng));
  return plan;
}

/// The route of `plan` on the host, and its index arrays as host vectors.
struct host_route {
  std::vector<std::int64_t> recv_pos, push_indptr, push_sources;
};
host_route make_exchange_index(const exchange_plan& plan, std::int64_t owner_rows) {
  exec_context const host;
  auto r = make_route(
      host,
      placed_plan{plan.send_counts, plan.recv_counts, upload<std::int64_t>(host, plan.send_perm),
                  upload<std::int64_t>(host, plan.recv_inv)},
      owner_rows);
  auto vec = [](const buffer<std::int64_t>& b) {
    return std::vector<std::int64_t>(b.host().begin(), b.host().end());
  };
  return {vec(r.recv_pos), vec(r.push_indptr), vec(r.push_sources)};
}

TEST(ExchangeIndex, PushCsrSumsLikeTheHostScatterAdd) {
  std::int64_t const owners = 37, requests = 400, d = 5;
  auto const plan = random_plan(10, owners, requests, 3);
  auto const x = make_exchange_index(plan, owners);
  // Received rows with values whose sums depend on the order (not exactly representable).
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  matrix<float> recv(requests, d);
  for (auto& v : recv.values()) v = u(rng) * 1e3f + u(rng) * 1e-3f;
  // Host exchange_push: out[recv_inv[r]] += recv[r] in ascending r, from zero.
  matrix<float> want(owners, d);
  for (std::int64_t r = 0; r < requests; ++r) {
    for (std::int64_t j = 0; j < d; ++j) want(plan.recv_inv[r], j) += recv(r, j);
  }
  // What the device computes: SpMM over the push CSR with unit weights.
  std::vector<float> const ones(static_cast<std::size_t>(requests), 1.0f);
  matrix<float> got(owners, d);
  spmm<float>(x.push_indptr, x.push_sources, ones, recv, got);
  EXPECT_EQ(got.values(), want.values());
  EXPECT_EQ(x.push_indptr.back(), requests);
  for (std::int64_t o = 0; o < owners; ++o) {
    EXPECT_TRUE(std::is_sorted(x.push_sources.begin() + x.push_indptr[o],
                               x.push_sources.begin() + x.push_indptr[o + 1]))
        << "requests of owner row " << o << " out of receive order";
  }
}

TEST(ExchangeIndex, RecvPosPlacesRowsLikeTheHostPull) {
  auto const plan = random_plan(50, 4, 0, 11);
  auto const x = make_exchange_index(plan, 4);
  // Host exchange_pull: out[send_perm[pos]] = recv[pos]; the device gathers recv[recv_pos[i]].
  for (std::size_t pos = 0; pos < plan.send_perm.size(); ++pos) {
    EXPECT_EQ(x.recv_pos[static_cast<std::size_t>(plan.send_perm[pos])],
              static_cast<std::int64_t>(pos));
  }
}

TEST(ExchangeIndex, EmptyPlansAndOwnerRowsWithoutRequests) {
  exchange_plan plan;
  auto const x = make_exchange_index(plan, 3);
  EXPECT_TRUE(x.recv_pos.empty());
  EXPECT_EQ(x.push_indptr, (std::vector<std::int64_t>{0, 0, 0, 0}));
  EXPECT_TRUE(x.push_sources.empty());
}

TEST(ExchangeIndex, RejectsBrokenPlans) {
  exchange_plan plan;
  plan.send_perm = {0, 2, 2};
  EXPECT_THROW((void)make_exchange_index(plan, 1), logic_error);
  plan.send_perm = {0, 3, 1};
  EXPECT_THROW((void)make_exchange_index(plan, 1), logic_error);
  plan.send_perm = {};
  plan.recv_inv = {0, 1};
  EXPECT_THROW((void)make_exchange_index(plan, 1), logic_error);
  plan.recv_inv = {-1};
  EXPECT_THROW((void)make_exchange_index(plan, 1), logic_error);
}

}  // namespace
}  // namespace coopgnn
