// Caller-provided staging of the row exchanges (exchange_workspace, pipeline/exchange.hpp)
// and the agreed-count all-to-all-v they use: on P host PE threads, on the host and the emulated
// device, exchange_pull / exchange_push with one workspace per PE reproduce the oracle (each PE
// knows every PE's request list, so the pulled rows and the pushed sums are written out here),
// give the same bits as a call without a workspace, and allocate staging only in the first of
// several steps of one shape. A count that disagrees with the sender's is still a comm_error on
// the host communicator.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <numeric>
#include <random>

#include "runtime/comm/host_communicator.hpp"
#include "runtime/core/error.hpp"
#include "pipeline/exchange.hpp"
#include "tests/common/pes.hpp"

namespace coopgnn {
namespace {

constexpr int kPes = 3;
constexpr vid_t kNodes = 40;
constexpr std::int64_t kDim = 4;

int owner(vid_t v) { return static_cast<int>(v % kPes); }

/// PE p's request list: `n` distinct ids of [0, kNodes) in random order (seeded by p and step).
std::vector<vid_t> requests_of(int p, std::size_t n, std::uint32_t seed) {
  std::vector<vid_t> all(static_cast<std::size_t>(kNodes));
  std::iota(all.begin(), all.end(), vid_t{0});
  std::mt19937 rng(seed * 97u + static_cast<std::uint32_t>(p));
  std::shuffle(all.begin(), all.end(), rng);
  all.resize(n);
  return all;
}

/// Row values exact in float, so every summation order gives the same bits.
float feature(vid_t v, std::int64_t j) { return static_cast<float>(v * 10 + j); }
float grad(int p, vid_t v, std::int64_t j) { return static_cast<float>((p + 1) * 1000 + v + j); }

struct pe_result {
  std::vector<float> pulled, pushed;  // flattened [rows, kDim]
  std::vector<vid_t> owned;
};

/// One exchange round trip of PE p (pull of owner rows, push of gradients) with the plan of
/// `ids`, through `ws` (nullptr: none).
pe_result round_trip(const exec_context& ctx, communicator& comm, const std::vector<vid_t>& ids,
                     exchange_workspace* ws) {
  std::vector<std::uint16_t> owners(static_cast<std::size_t>(kNodes));
  for (vid_t v = 0; v < kNodes; ++v) owners[v] = static_cast<std::uint16_t>(owner(v));
  auto const d_owners = upload<std::uint16_t>(ctx, owners);
  auto const d_ids = upload<vid_t>(ctx, ids);
  owner_exchange x = exchange_with_owners(ctx, comm, d_owners.view(), d_ids.view());
  pe_result out;
  out.owned = download<vid_t>(ctx, x.owned.view());
  auto const route =
      make_route(ctx, std::move(x.plan), static_cast<std::int64_t>(out.owned.size()));
  matrix<float> rows(static_cast<std::int64_t>(out.owned.size()), kDim);
  for (std::size_t k = 0; k < out.owned.size(); ++k) {
    for (std::int64_t j = 0; j < kDim; ++j)
      rows(static_cast<std::int64_t>(k), j) = feature(out.owned[k], j);
  }
  auto const d_rows = upload<float>(ctx, rows);
  out.pulled =
      download<float>(ctx, exchange_pull(ctx, comm, route, d_rows.view(), ws).view()).values();
  matrix<float> g(static_cast<std::int64_t>(ids.size()), kDim);
  for (std::size_t i = 0; i < ids.size(); ++i) {
    for (std::int64_t j = 0; j < kDim; ++j)
      g(static_cast<std::int64_t>(i), j) = grad(comm.rank(), ids[i], j);
  }
  auto const d_g = upload<float>(ctx, g);
  out.pushed =
      download<float>(ctx, exchange_push(ctx, comm, route, d_g.view(), ws).view()).values();
  return out;
}

/// The oracle for PE p: pulled row i = feature(ids[i]); pushed row k (owned id v) = the sum over
/// the PEs q that requested v of grad(q, v).
void expect_oracle(int p, const pe_result& r, std::size_t n, std::uint32_t seed) {
  auto const ids = requests_of(p, n, seed);
  ASSERT_EQ(r.pulled.size(), ids.size() * kDim);
  for (std::size_t i = 0; i < ids.size(); ++i) {
    for (std::int64_t j = 0; j < kDim; ++j) {
      EXPECT_EQ(r.pulled[i * kDim + j], feature(ids[i], j)) << "PE " << p << " row " << i;
    }
  }
  std::vector<vid_t> want_owned;
  for (int q = 0; q < kPes; ++q) {
    for (vid_t v : requests_of(q, n, seed)) {
      if (owner(v) == p) want_owned.push_back(v);
    }
  }
  std::sort(want_owned.begin(), want_owned.end());
  want_owned.erase(std::unique(want_owned.begin(), want_owned.end()), want_owned.end());
  ASSERT_EQ(r.owned, want_owned);
  ASSERT_EQ(r.pushed.size(), want_owned.size() * kDim);
  for (std::size_t k = 0; k < want_owned.size(); ++k) {
    for (std::int64_t j = 0; j < kDim; ++j) {
      float want = 0;
      for (int q = 0; q < kPes; ++q) {
        auto const l = requests_of(q, n, seed);
        if (std::find(l.begin(), l.end(), want_owned[k]) != l.end())
          want += grad(q, want_owned[k], j);
      }
      EXPECT_EQ(r.pushed[k * kDim + j], want) << "PE " << p << " owned id " << want_owned[k];
    }
  }
}

class ExchangeWorkspace : public ::testing::TestWithParam<backend> {};

TEST_P(ExchangeWorkspace, ReusedAcrossStepsOfOneShapeWithUnchangedResults) {
  auto group = std::make_shared<host_comm_group>(kPes, std::chrono::seconds(60));
  std::size_t const n = 17;
  test::on_pes(kPes, [&](int p) {
    host_communicator comm(group, p);
    exec_context const ctx(GetParam(), p, 1);
    try {
      exchange_workspace ws;
      auto const ids = requests_of(p, n, 1);
      auto const first = round_trip(ctx, comm, ids, &ws);
      expect_oracle(p, first, n, 1);
      auto const allocs = ws.allocations();
      auto const bytes = ws.bytes();
      EXPECT_GT(allocs, 0);
      // One slot per side of the route, each allocated once in the first step (the pull and the
      // push use the same sides, and the rows have one width here).
      EXPECT_LE(allocs, 2);
      for (int step = 0; step < 3; ++step) {
        auto const again = round_trip(ctx, comm, ids, &ws);
        EXPECT_EQ(again.pulled, first.pulled);
        EXPECT_EQ(again.pushed, first.pushed);
      }
      EXPECT_EQ(ws.allocations(), allocs) << "the workspace grew in a step of the same shape";
      EXPECT_EQ(ws.bytes(), bytes);
      // Without a workspace: the same bits.
      auto const none = round_trip(ctx, comm, ids, nullptr);
      EXPECT_EQ(none.pulled, first.pulled);
      EXPECT_EQ(none.pushed, first.pushed);
      // A smaller step fits in what is there; the oracle still holds.
      auto const small = round_trip(ctx, comm, requests_of(p, 5, 2), &ws);
      expect_oracle(p, small, 5, 2);
      EXPECT_EQ(ws.allocations(), allocs);
    } catch (...) {
      comm.abort("test body failed");
      throw;
    }
  });
}

INSTANTIATE_TEST_SUITE_P(Backends, ExchangeWorkspace,
                         ::testing::Values(backend::host, backend::emulated), [](const auto& info) {
                           return info.param == backend::host ? std::string("host")
                                                              : std::string("emulated");
                         });

TEST(ExchangeWorkspaceSlots, GrowToTheLargestRequestOnlyWhenNeeded) {
  exec_context const ctx(backend::emulated, 0, 1);
  exchange_workspace ws;
  EXPECT_EQ(ws.allocations(), 0);
  auto const none = ws.take(ctx, exchange_workspace::requests, 0);
  EXPECT_EQ(none.size, 0u);
  EXPECT_EQ(none.space, memory_space::device);  // empty, but in the caller's space
  EXPECT_EQ(ws.allocations(), 0);               // nothing needed, nothing allocated
  auto const a = ws.take(ctx, exchange_workspace::requests, 100);
  EXPECT_EQ(a.size, 100u);
  EXPECT_EQ(a.space, memory_space::device);
  EXPECT_EQ(ws.allocations(), 1);
  auto const b = ws.take(ctx, exchange_workspace::requests, 60);
  EXPECT_EQ(b.data, a.data);  // the same memory
  EXPECT_EQ(b.size, 60u);
  EXPECT_EQ(ws.allocations(), 1);
  (void)ws.take(ctx, exchange_workspace::requests, 120);
  EXPECT_EQ(ws.allocations(), 2);
  EXPECT_EQ(ws.bytes(), static_cast<std::int64_t>(120 * sizeof(float)));
  (void)ws.take(ctx, exchange_workspace::requests, 120);
  EXPECT_EQ(ws.allocations(), 2);
  (void)ws.take(ctx, exchange_workspace::requester, 10);  // slots are independent
  EXPECT_EQ(ws.allocations(), 3);
  EXPECT_EQ(ws.bytes(), static_cast<std::int64_t>(130 * sizeof(float)));
  // A host context: the slot moves to host memory.
  exec_context const host(backend::host, 0, 1);
  EXPECT_EQ(ws.take(host, exchange_workspace::requester, 5).space, memory_space::host);
  EXPECT_EQ(ws.allocations(), 4);
}

TEST(AgreedAlltoallv, HostCommunicatorStillRejectsCountsThatDisagree) {
  auto group = std::make_shared<host_comm_group>(2, std::chrono::seconds(60));
  std::vector<int> threw(2, 0);
  test::on_pes(2, [&](int p) {
    host_communicator comm(group, p);
    std::vector<std::byte> send(8), recv(16);
    std::vector<std::int64_t> const sb = {4, 4};
    // PE 1 expects 8 bytes from PE 0, which sends it 4.
    std::vector<std::int64_t> const rb =
        p == 0 ? std::vector<std::int64_t>{4, 4} : std::vector<std::int64_t>{8, 4};
    try {
      comm.alltoallv_agreed(send.data(), sb, recv.data(), rb);
      comm.barrier();  // PE 0 may leave the call before PE 1 aborts the group
    } catch (const comm_error&) {
      threw[static_cast<std::size_t>(p)] = 1;
    }
  });
  EXPECT_EQ(threw, (std::vector<int>{1, 1}));  // PE 1 names it, PE 0 fails through the abort
}

}  // namespace
}  // namespace coopgnn
