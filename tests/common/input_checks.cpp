#include "tests/common/input_checks.hpp"

#include <gtest/gtest.h>

#include "kernels/sample/sampling.hpp"
#include "runtime/core/error.hpp"
#include "runtime/core/memory.hpp"

namespace coopgnn::test {
namespace {

/// 20 vertices; in-edges of v: v + 1 and v + 2 (mod 20).
const csc_graph& checks_graph() {
  static const csc_graph g = [] {
    std::vector<vid_t> src, dst;
    for (vid_t v = 0; v < 20; ++v) {
      for (vid_t d : {1, 2}) {
        src.push_back((v + d) % 20);
        dst.push_back(v);
      }
    }
    return build_csc(20, src, dst);
  }();
  return g;
}

constexpr vid_t two31 = 2147483648;  // 2^31: 2 * 2^31 = 2^32 does not fit a key

/// Calls f; expects logic_error whose message is `error` (exactly: an error of input carries no
/// check location) when error is non-empty, else no throw. Returns whether f completed.
template <class F>
bool expect_outcome(const std::string& where, const std::string& error, F&& f) {
  try {
    f();
  } catch (const logic_error& e) {
    EXPECT_FALSE(error.empty()) << where << ": unexpected logic_error: " << e.what();
    EXPECT_EQ(std::string(e.what()), error) << where;
    return false;
  }
  EXPECT_TRUE(error.empty()) << where << ": no logic_error; expected \"" << error << "\"";
  return true;
}

sampled_buffers place(const exec_context& ctx, const std::vector<eid_t>& indptr,
                      const std::vector<vid_t>& nbrs, const std::vector<float>& weights) {
  return {upload<eid_t>(ctx, indptr), upload<vid_t>(ctx, nbrs), upload<float>(ctx, weights)};
}

}  // namespace

// clang-format off
std::vector<block_check_case> block_check_cases() {
  std::string const bound = " is outside [0, 20)";
  return {
      {"offsets for another n", {3, 4}, {0, 1}, {5}, {1},
       "make_block: 2 destinations x 1 relations but the sample has 2 offsets (3 expected)"},
      {"last offset", {3}, {0, 2}, {5}, {1},
       "make_block: the sample has 1 neighbours, 1 weights and 2 by its offsets"},
      {"weights", {3}, {0, 1}, {5}, {},
       "make_block: the sample has 1 neighbours, 0 weights and 1 by its offsets"},
      {"destination |V|", {3, 20}, {0, 0, 0}, {}, {},
       "make_block: destination 20 (position 1)" + bound},
      {"destination -1", {-1, 3}, {0, 1, 1}, {4}, {1},
       "make_block: destination -1 (position 0)" + bound},
      {"destination out of range and repeated: the range first",
       {4, 20, 20}, {0, 0, 0, 0}, {}, {}, "make_block: destination 20 (position 1)" + bound},
      {"source -1", {3, 4}, {0, 1, 3}, {5, -1, 21}, {1, 0.5f, 0.5f},
       "make_block: sampled source -1 (edge 1)" + bound},
      {"source |V|", {3}, {0, 3}, {5, 6, 20}, {1, 1, 1},
       "make_block: sampled source 20 (edge 2)" + bound},
      {"bad destination before bad source", {3, 99}, {0, 1, 1}, {-7}, {1},
       "make_block: destination 99 (position 1)" + bound},
      {"bad source before a repeated destination", {3, 4, 3}, {0, 1, 1, 2}, {5, 21}, {1, 1},
       "make_block: sampled source 21 (edge 1)" + bound},
      {"repeated destination", {3, 4, 3}, {0, 1, 1, 2}, {5, 6}, {1, 1},
       "make_block: destination 3 appears twice"},
      {"boundary ids", {0, 19}, {0, 2, 3}, {19, 0, 1}, {0.5f, 0.5f, 1}, ""},
      {"empty", {}, {0}, {}, {}, ""},
  };
}

std::vector<exclude_check_case> exclude_check_cases() {
  std::string const offsets = "exclude_edges: row ";
  return {
      {"weights", {3}, {0, 2}, {5, 6}, {1}, {},
       "exclude_edges: the sample has 2 neighbours and 1 weights"},
      {"keys descending", {3}, {0, 1}, {5}, {1}, {5, 3},
       "exclude_edges: keys are not ascending and distinct at position 1"},
      {"keys repeated", {3}, {0, 1}, {5}, {1}, {1, 2, 2, 9},
       "exclude_edges: keys are not ascending and distinct at position 2"},
      {"keys before offsets", {3, 4}, {0, 3, 1}, {5, 6}, {1, 1}, {7, 7},
       "exclude_edges: keys are not ascending and distinct at position 1"},
      {"offsets past the edges", {3}, {0, 3}, {5, 6}, {0.5f, 0.5f}, {},
       offsets + "0 of the sample has offsets [0, 3), not a range within its 2 neighbours"},
      {"offsets decreasing", {3, 4}, {0, 2, 1}, {5, 6}, {0.5f, 0.5f}, {},
       offsets + "1 of the sample has offsets [2, 1), not a range within its 2 neighbours"},
      {"offsets negative", {3}, {-1, 0}, {5}, {1}, {},
       offsets + "0 of the sample has offsets [-1, 0), not a range within its 1 neighbours"},
      {"source -2", {3, 4}, {0, 1, 3}, {5, 6, -2}, {1, 0.5f, 0.5f}, {},
       "edge exclusion: ids -2 -> 4 are outside [0, 2^32)"},
      {"source 2^32", {3}, {0, 1}, {4294967296}, {1}, {1},
       "edge exclusion: ids 4294967296 -> 3 are outside [0, 2^32)"},
      {"destination s R + r = 2^32 (typed, R = 2)", {3, two31}, {0, 1, 1, 2, 2}, {5, 6},
       {1, 1}, {},
       "edge exclusion: destination 2147483648 of relation 0 (of 2) makes a key s R + r "
       "outside [0, 2^32)"},
      {"the first bad edge: a source before a later bad destination", {3, 4, 4294967296},
       {0, 1, 2, 3}, {5, -6, 7}, {1, 1, 1}, {},
       "edge exclusion: ids -6 -> 4 are outside [0, 2^32)"},
      {"a bad seed without edges is not checked", {3, two31}, {0, 1, 1, 1, 1}, {5}, {1}, {}, ""},
      {"largest keys", {3, 2147483647}, {0, 1, 1, 2, 3}, {4294967295, 0, 4294967295},
       {1, 1, 1}, {18446744073709551615ULL}, ""},  // (2^32 - 1) -> 2^31 - 1, relation 1
      {"keys drop an edge", {3, 4}, {0, 2, 3}, {5, 6, 7}, {0.5f, 0.5f, 1},
       {25769803779ULL}, ""},  // (6 << 32) | 3
      {"empty", {}, {0}, {}, {}, {1, 2}, ""},
  };
}
// clang-format on

void run_block_checks(const exec_context& ctx) {
  exec_context const host;
  auto const& g = checks_graph();
  auto const placed = upload_graph(ctx, g);
  for (const auto& c : block_check_cases()) {
    std::string const where = to_string(ctx.get_backend()) + " make_block, " + c.name;
    auto const dst = upload<vid_t>(ctx, c.dst);
    auto const s = place(ctx, c.indptr, c.nbrs, c.weights);
    block got;
    bool const ran = expect_outcome(
        where, c.error, [&] { got = to_host(ctx, make_block(ctx, placed.view(), dst.view(), s)); });
    if (!ran || !c.error.empty()) continue;
    block const want = to_host(host, make_block(host, view(g), host_view(c.dst),
                                                place(host, c.indptr, c.nbrs, c.weights)));
    EXPECT_EQ(got.src_ids, want.src_ids) << where;
    EXPECT_EQ(got.indptr, want.indptr) << where;
    EXPECT_EQ(got.indices, want.indices) << where;
    EXPECT_EQ(got.weights, want.weights) << where;
    EXPECT_EQ(got.src_degree, want.src_degree) << where;
  }
}

void run_exclude_checks(const exec_context& ctx) {
  exec_context const host;
  for (const auto& c : exclude_check_cases()) {
    std::string const where = to_string(ctx.get_backend()) + " exclude_edges, " + c.name;
    auto const seeds = upload<vid_t>(ctx, c.seeds);
    auto const keys = upload<std::uint64_t>(ctx, c.keys);
    auto const s = place(ctx, c.indptr, c.nbrs, c.weights);
    std::vector<eid_t> indptr;
    std::vector<vid_t> nbrs;
    std::vector<float> weights;
    bool const ran = expect_outcome(where, c.error, [&] {
      auto const r = exclude_edges(ctx, seeds.view(), s, keys.view());
      indptr = download<eid_t>(ctx, r.indptr.view());
      nbrs = download<vid_t>(ctx, r.nbrs.view());
      weights = download<float>(ctx, r.weights.view());
    });
    if (!ran || !c.error.empty()) continue;
    auto const want = exclude_edges(host, host_view(c.seeds),
                                    place(host, c.indptr, c.nbrs, c.weights), host_view(c.keys));
    EXPECT_EQ(indptr, download<eid_t>(host, want.indptr.view())) << where;
    EXPECT_EQ(nbrs, download<vid_t>(host, want.nbrs.view())) << where;
    EXPECT_EQ(weights, download<float>(host, want.weights.view())) << where;
  }
}

}  // namespace coopgnn::test
