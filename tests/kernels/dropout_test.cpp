// The host dropout_forward (kernels/dense/elementwise.hpp) against its definition, element by
// element: keep[i, j] = to_unit(draw4(make_stream(seed, dropout, layer), ids[i], j / 4,
// batch)[j % 4]) >= p through Random123 (rng::draw4), y = keep ? x * scale : +0, for row widths
// around the 64-column steps of the vector paths (tails of every length class), in place and
// out of place, for 1 and 3 threads.
#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <vector>

#include "kernels/dense/elementwise.hpp"
#include "runtime/core/memory.hpp"
#include "runtime/core/rng.hpp"

namespace coopgnn {
namespace {

exec_context const host;

struct dropout_usecase {
  std::int64_t cols;
  float p;
};

TEST(DropoutForward, FloatRowsFollowTheKeyedDefinitionForEveryWidth) {
  std::vector<vid_t> const ids = {0, 7, 123456789, (vid_t{1} << 40) + 3, 5};
  auto const rows = static_cast<std::int64_t>(ids.size());
  dropout_key const key{0xC0FFEEull, 17, 2};
  rng::stream const s = rng::make_stream(key.run_seed, rng::purpose::dropout, key.layer_index);
  for (dropout_usecase u : std::vector<dropout_usecase>{{1, 0.5f},
                                                        {3, 0.5f},
                                                        {4, 0.1f},
                                                        {15, 0.5f},
                                                        {16, 0.5f},
                                                        {17, 0.9f},
                                                        {63, 0.5f},
                                                        {64, 0.5f},
                                                        {65, 0.3f},
                                                        {127, 0.5f},
                                                        {130, 0.5f},
                                                        {1433, 0.5f}}) {
    SCOPED_TRACE(testing::Message() << "cols " << u.cols << " p " << u.p);
    float const scale = 1.0f / (1.0f - u.p);
    std::vector<float> xv(static_cast<std::size_t>(rows * u.cols));
    for (std::size_t e = 0; e < xv.size(); ++e) {
      xv[e] = (e % 5 == 0 ? -1.0f : 1.0f) * (0.5f + 0.37f * static_cast<float>(e % 101));
    }
    std::vector<std::uint8_t> want_keep(xv.size());
    std::vector<float> want_y(xv.size());
    std::int64_t kept = 0;
    for (std::int64_t i = 0; i < rows; ++i) {
      for (std::int64_t j = 0; j < u.cols; ++j) {
        auto const w = rng::draw4(s, static_cast<std::uint64_t>(ids[static_cast<std::size_t>(i)]),
                                  static_cast<std::uint32_t>(j / 4), key.batch);
        bool const keep = rng::to_unit(w[static_cast<std::size_t>(j % 4)]) >= u.p;
        auto const e = static_cast<std::size_t>(i * u.cols + j);
        want_keep[e] = keep ? 1 : 0;
        want_y[e] = keep ? xv[e] * scale : 0.0f;
        kept += keep ? 1 : 0;
      }
    }
    if (xv.size() >= 64) {
      EXPECT_GT(kept, 0);
      EXPECT_LT(kept, static_cast<std::int64_t>(xv.size()));
    }
    for (int threads : {1, 3}) {
      exec_context const ctx = host.with_threads(threads);
      for (bool in_place : {false, true}) {
        SCOPED_TRACE(testing::Message() << threads << " threads, in place " << in_place);
        tensor<float> x = tensor<float>::adopt(matrix<float>(rows, u.cols, xv));
        tensor<float> y(ctx, rows, u.cols);
        // Poison beyond the row ends: a vector path must not write past `cols`.
        buffer<std::uint8_t> keep(ctx, xv.size() + 64);
        for (auto& b : keep.host()) b = 0xAB;
        tensor_view<float> const out = in_place ? x.view() : y.view();
        dropout_forward<float>(ctx, x.view(), host_view(ids), key, u.p, scale, out,
                               keep.view().sub(0, xv.size()));
        auto const got = out.flat().host();
        for (std::size_t e = 0; e < xv.size(); ++e) {
          ASSERT_EQ(keep.host()[e], want_keep[e]) << "element " << e;
          ASSERT_EQ(std::bit_cast<std::uint32_t>(got[e]), std::bit_cast<std::uint32_t>(want_y[e]))
              << "element " << e << ": " << got[e] << " vs " << want_y[e];
        }
        for (std::size_t e = xv.size(); e < keep.size(); ++e) ASSERT_EQ(keep.host()[e], 0xAB);
      }
    }
  }
}

}  // namespace
}  // namespace coopgnn
