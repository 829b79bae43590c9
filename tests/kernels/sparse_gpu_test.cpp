// CUDA sparse, dense and element-wise kernels against the host references on the same random
// inputs (docs/design.md section 2, parity rule): exact on integer-valued float data, within the
// stated tolerance otherwise; and the hand-written kernels against cuSPARSE. Skips without a GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <span>
#include <unordered_map>
#include <vector>

#include "kernels/dense/elementwise.hpp"
#include "kernels/dense/elementwise_cuda.hpp"
#include "kernels/dense/gemm.hpp"
#include "kernels/dense/gemm_cuda.hpp"
#include "kernels/sparse/edge_softmax.hpp"
#include "kernels/sparse/sddmm.hpp"
#include "kernels/sparse/sparse_cuda.hpp"
#include "kernels/sparse/spmm.hpp"
#include "models/layers.hpp"
#include "runtime/core/device.hpp"
#include "tests/common/graphs.hpp"

#define COOPGNN_SKIP_WITHOUT_DEVICE()                                       \
  do {                                                                      \
    auto const dev_ = ::coopgnn::query_devices();                           \
    if (dev_.count == 0) GTEST_SKIP() << "no CUDA device: " << dev_.reason; \
  } while (0)

#ifdef COOPGNN_WITH_CUDA

#include <cuda_runtime_api.h>

namespace coopgnn {
namespace {

void cuda_ok(cudaError_t st) { ASSERT_EQ(st, cudaSuccess) << cudaGetErrorString(st); }

/// Minimal owning device array for the tests.
template <typename T>
class dev_array {
 public:
  explicit dev_array(std::size_t n) : n_(n) {
    if (n > 0) cuda_ok(cudaMalloc(reinterpret_cast<void**>(&p_), n * sizeof(T)));
  }
  explicit dev_array(const std::vector<T>& h) : dev_array(h.size()) {
    if (n_ > 0) cuda_ok(cudaMemcpy(p_, h.data(), n_ * sizeof(T), cudaMemcpyHostToDevice));
  }
  ~dev_array() {
    if (p_ != nullptr) (void)cudaFree(p_);
  }
  dev_array(const dev_array&) = delete;
  dev_array& operator=(const dev_array&) = delete;
  T* get() const { return p_; }
  std::vector<T> host() const {
    std::vector<T> h(n_);
    cuda_ok(cudaDeviceSynchronize());
    if (n_ > 0) cuda_ok(cudaMemcpy(h.data(), p_, n_ * sizeof(T), cudaMemcpyDeviceToHost));
    return h;
  }

 private:
  T* p_ = nullptr;
  std::size_t n_ = 0;
};

/// A block over test::random_graph: destinations are vertices [0, num_dst) (vertex 0 has no
/// in-edge, vertex 1 is a hub, vertex 2 has one in-edge), every in-edge kept, sources compacted
/// (destinations first), integer weights in [-2, 2].
block graph_block(std::int64_t n, std::int64_t num_dst, int avg_degree, std::uint64_t seed) {
  csc_graph const g = test::random_graph(n, avg_degree, seed);
  std::mt19937_64 gen(seed + 1);
  block b;
  b.num_dst = num_dst;
  std::unordered_map<vid_t, std::int64_t> local;
  for (vid_t v = 0; v < num_dst; ++v) {
    local.emplace(v, v);
    b.src_ids.push_back(v);
  }
  b.indptr.push_back(0);
  for (vid_t s = 0; s < num_dst; ++s) {
    for (vid_t t : g.in_neighbors(s)) {
      auto [it, fresh] = local.emplace(t, static_cast<std::int64_t>(b.src_ids.size()));
      if (fresh) b.src_ids.push_back(t);
      b.indices.push_back(it->second);
      b.weights.push_back(static_cast<float>(static_cast<int>(gen() % 5) - 2));
    }
    b.indptr.push_back(static_cast<eid_t>(b.indices.size()));
  }
  b.src_degree.assign(b.src_ids.size(), 1);
  return b;
}

matrix<float> int_matrix(std::int64_t rows, std::int64_t cols, std::uint64_t seed) {
  std::mt19937_64 gen(seed);
  matrix<float> m(rows, cols);
  for (float& v : m.values()) v = static_cast<float>(static_cast<int>(gen() % 7) - 3);
  return m;
}

matrix<float> real_matrix(std::int64_t rows, std::int64_t cols, std::uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  matrix<float> m(rows, cols);
  for (float& v : m.values()) v = u(gen);
  return m;
}

bool any_nonzero(const std::vector<float>& v) {
  for (float x : v) {
    if (x != 0.0f) return true;
  }
  return false;
}

void expect_close(const std::vector<float>& got, const std::vector<float>& want, float rel,
                  const char* what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (std::size_t i = 0; i < got.size(); ++i) {
    ASSERT_NEAR(got[i], want[i], rel * (1.0f + std::abs(want[i]))) << what << " at " << i;
  }
}

/// The block's arrays on the device and its view.
struct dev_block {
  dev_array<std::int64_t> indptr;
  dev_array<std::int64_t> indices;
  dev_array<float> weights;
  cuda::block_view view;
  explicit dev_block(const block& b) : indptr(b.indptr), indices(b.indices), weights(b.weights) {
    view = {b.num_dst, b.num_src(), b.num_edges(), indptr.get(), indices.get(), weights.get()};
  }
};

struct sparse_usecase {
  std::int64_t n;
  std::int64_t num_dst;
  int degree;
  std::int64_t d;
};

const sparse_usecase kCases[] = {
    {50, 1, 3, 1}, {300, 33, 5, 31}, {500, 64, 8, 33}, {2000, 200, 10, 128}, {2000, 257, 12, 130}};

TEST(sparse_gpu, spmm_and_transpose_match_host) {
  COOPGNN_SKIP_WITHOUT_DEVICE();
  for (auto const& u : kCases) {
    SCOPED_TRACE(testing::Message() << "num_dst=" << u.num_dst << " d=" << u.d);
    block const b = graph_block(u.n, u.num_dst, u.degree, 7 + u.d);
    dev_block db(b);
    for (bool integer : {true, false}) {
      auto const x = integer ? int_matrix(b.num_src(), u.d, 3) : real_matrix(b.num_src(), u.d, 3);
      matrix<float> y_ref(b.num_dst, u.d);
      spmm<float>(b, x, y_ref);
      dev_array<float> dx(x.values());
      dev_array<float> dy(static_cast<std::size_t>(b.num_dst * u.d));
      cuda::spmm(db.view, dx.get(), u.d, dy.get(), nullptr);
      if (integer) {
        ASSERT_EQ(dy.host(), y_ref.values());
        EXPECT_TRUE(any_nonzero(y_ref.values()));
      } else {
        expect_close(dy.host(), y_ref.values(), 1e-5f, "spmm");
      }

      // Backward: x_grad starts non-zero to check accumulation.
      auto const g = integer ? int_matrix(b.num_dst, u.d, 5) : real_matrix(b.num_dst, u.d, 5);
      auto xg_ref = int_matrix(b.num_src(), u.d, 9);
      dev_array<float> dxg(xg_ref.values());
      spmm_transpose_add<float>(b, g, xg_ref);
      std::size_t const ws = cuda::transpose_workspace_bytes(b.num_src(), b.num_edges());
      dev_array<unsigned char> workspace(ws);
      dev_array<std::int64_t> t_indptr(static_cast<std::size_t>(b.num_src() + 1));
      dev_array<std::int64_t> t_edges(static_cast<std::size_t>(b.num_edges()));
      cuda::build_transpose(db.view, workspace.get(), ws, t_indptr.get(), t_edges.get(), nullptr);
      dev_array<float> dg(g.values());
      cuda::spmm_transpose_add(db.view, t_indptr.get(), t_edges.get(), dg.get(), u.d, dxg.get(),
                               nullptr);
      if (integer) {
        ASSERT_EQ(dxg.host(), xg_ref.values());
      } else {
        expect_close(dxg.host(), xg_ref.values(), 1e-5f, "spmm_transpose_add");
      }
    }
  }
}

TEST(sparse_gpu, spmm_matches_cusparse) {
  COOPGNN_SKIP_WITHOUT_DEVICE();
  cuda::cusparse_handle handle;
  for (auto const& u : kCases) {
    block const b = graph_block(u.n, u.num_dst, u.degree, 11 + u.d);
    dev_block db(b);
    auto const x = int_matrix(b.num_src(), u.d, 4);
    dev_array<float> dx(x.values());
    std::size_t const ny = static_cast<std::size_t>(b.num_dst * u.d);
    dev_array<float> ours(ny);
    dev_array<float> theirs(ny);
    cuda::spmm(db.view, dx.get(), u.d, ours.get(), nullptr);
    std::size_t const ws =
        cuda::spmm_cusparse_workspace_bytes(handle.get(), db.view, dx.get(), u.d, theirs.get());
    dev_array<unsigned char> workspace(ws);
    cuda::spmm_cusparse(handle.get(), db.view, dx.get(), u.d, theirs.get(), workspace.get(), ws,
                        nullptr);
    ASSERT_EQ(ours.host(), theirs.host()) << "num_dst=" << u.num_dst << " d=" << u.d;
  }
}

TEST(sparse_gpu, sddmm_matches_host_and_cusparse) {
  COOPGNN_SKIP_WITHOUT_DEVICE();
  cuda::cusparse_handle handle;
  for (auto const& u : kCases) {
    SCOPED_TRACE(testing::Message() << "num_dst=" << u.num_dst << " d=" << u.d);
    block const b = graph_block(u.n, u.num_dst, u.degree, 13 + u.d);
    dev_block db(b);
    auto const x = int_matrix(b.num_src(), u.d, 6);  // a = x: destinations are x's first rows
    dev_array<float> dx(x.values());
    auto const ne = static_cast<std::size_t>(b.num_edges());
    for (bool weighted : {false, true}) {
      std::vector<float> ref(ne);
      sddmm<float>(b, x, x, weighted, ref);
      dev_array<float> out(ne);
      cuda::sddmm(db.view, dx.get(), dx.get(), u.d, weighted, out.get(), nullptr);
      ASSERT_EQ(out.host(), ref);
      EXPECT_TRUE(any_nonzero(ref));
    }
    dev_array<float> ours(ne);
    dev_array<float> theirs(ne);
    cuda::sddmm(db.view, dx.get(), dx.get(), u.d, false, ours.get(), nullptr);
    std::size_t const ws = cuda::sddmm_cusparse_workspace_bytes(handle.get(), db.view, dx.get(),
                                                                dx.get(), u.d, theirs.get());
    dev_array<unsigned char> workspace(ws);
    cuda::sddmm_cusparse(handle.get(), db.view, dx.get(), dx.get(), u.d, theirs.get(),
                         workspace.get(), ws, nullptr);
    ASSERT_EQ(ours.host(), theirs.host());

    // Real-valued data: within the documented relative tolerance of the host.
    auto const xr = real_matrix(b.num_src(), u.d, 8);
    dev_array<float> dxr(xr.values());
    std::vector<float> ref(ne);
    sddmm<float>(b, xr, xr, true, ref);
    dev_array<float> out(ne);
    cuda::sddmm(db.view, dxr.get(), dxr.get(), u.d, true, out.get(), nullptr);
    expect_close(out.host(), ref, 1e-5f * std::sqrt(static_cast<float>(u.d)), "sddmm real");
  }
}

TEST(sparse_gpu, edge_softmax_matches_host) {
  COOPGNN_SKIP_WITHOUT_DEVICE();
  for (auto const& u : kCases) {
    block const b = graph_block(u.n, u.num_dst, u.degree, 17 + u.d);
    dev_array<std::int64_t> indptr(b.indptr);
    auto const ne = static_cast<std::size_t>(b.num_edges());
    std::mt19937_64 gen(u.d);
    std::uniform_real_distribution<float> sc(-5.0f, 5.0f);
    std::vector<float> scores(ne);
    std::vector<float> grad_y(ne);
    for (float& v : scores) v = sc(gen);
    for (float& v : grad_y) v = sc(gen);
    std::vector<float> y_ref(ne);
    edge_softmax<float>(b.indptr, scores, y_ref);
    std::vector<float> gs_ref(ne);
    edge_softmax_backward<float>(b.indptr, y_ref, grad_y, gs_ref);

    dev_array<float> ds(scores);
    dev_array<float> dy(ne);
    cuda::edge_softmax(indptr.get(), b.num_dst, b.num_edges(), ds.get(), dy.get(), nullptr);
    expect_close(dy.host(), y_ref, 1e-5f, "edge_softmax");
    dev_array<float> dgy(grad_y);
    dev_array<float> dgs(ne);
    cuda::edge_softmax_backward(indptr.get(), b.num_dst, b.num_edges(), dy.get(), dgy.get(),
                                dgs.get(), nullptr);
    expect_close(dgs.host(), gs_ref, 1e-5f, "edge_softmax_backward");
    // In place on the device.
    cuda::edge_softmax(indptr.get(), b.num_dst, b.num_edges(), ds.get(), ds.get(), nullptr);
    ASSERT_EQ(ds.host(), dy.host());
  }
}

TEST(sparse_gpu, empty_blocks_launch_nothing) {
  COOPGNN_SKIP_WITHOUT_DEVICE();
  block b;
  b.indptr = {0};
  dev_block db(b);
  EXPECT_NO_THROW(cuda::spmm(db.view, nullptr, 16, nullptr, nullptr));
  EXPECT_NO_THROW(cuda::sddmm(db.view, nullptr, nullptr, 16, true, nullptr, nullptr));
  EXPECT_NO_THROW(cuda::edge_softmax(db.view.indptr, 0, 0, nullptr, nullptr, nullptr));
  dev_array<std::int64_t> t_indptr(1);
  EXPECT_NO_THROW(cuda::build_transpose(db.view, nullptr, 0, t_indptr.get(), nullptr, nullptr));
  EXPECT_EQ(t_indptr.host(), std::vector<std::int64_t>{0});
  EXPECT_THROW(cuda::spmm(db.view, nullptr, -1, nullptr, nullptr), logic_error);
}

TEST(dense_gpu, gemm_matches_host) {
  COOPGNN_SKIP_WITHOUT_DEVICE();
  cuda::cublas_handle handle;
  for (op oa : {op::none, op::transpose}) {
    for (op ob : {op::none, op::transpose}) {
      std::int64_t const m = 33, n = 65, k = 31;
      auto const a = oa == op::none ? int_matrix(m, k, 1) : int_matrix(k, m, 1);
      auto const b = ob == op::none ? int_matrix(k, n, 2) : int_matrix(n, k, 2);
      auto c_ref = int_matrix(m, n, 3);
      dev_array<float> da(a.values());
      dev_array<float> db(b.values());
      dev_array<float> dc(c_ref.values());
      gemm_reference<float>(oa, ob, 2.0f, a, b, 1.0f, c_ref);
      cuda::gemm(handle.get(), oa, ob, m, n, k, 2.0f, da.get(), a.cols(), db.get(), b.cols(), 1.0f,
                 dc.get(), n, nullptr);
      ASSERT_EQ(dc.host(), c_ref.values()) << int(oa) << int(ob);
    }
  }
}

TEST(dense_gpu, elementwise_and_loss_match_host) {
  COOPGNN_SKIP_WITHOUT_DEVICE();
  std::int64_t const rows = 1000, cols = 33;
  auto const h = int_matrix(rows, cols, 4);
  auto const bias = int_matrix(1, cols, 5);
  // bias + ReLU, naive.
  std::vector<float> want(h.values());
  for (std::int64_t i = 0; i < rows; ++i) {
    for (std::int64_t j = 0; j < cols; ++j) {
      float const v = h(i, j) + bias(0, j);
      want[i * cols + j] = v > 0 ? v : 0;
    }
  }
  dev_array<float> dh(h.values());
  dev_array<float> dbias(bias.values());
  cuda::bias_relu(dh.get(), dbias.get(), rows, cols, true, nullptr);
  ASSERT_EQ(dh.host(), want);
  // ReLU backward at that output.
  auto const g = int_matrix(rows, cols, 6);
  std::vector<float> gwant(g.values());
  for (std::size_t i = 0; i < gwant.size(); ++i) gwant[i] = want[i] > 0 ? gwant[i] : 0.0f;
  dev_array<float> dg(g.values());
  dev_array<float> dgi(g.values().size());
  cuda::relu_backward(dg.get(), dh.get(), rows * cols, dgi.get(), nullptr);
  ASSERT_EQ(dgi.host(), gwant);
  // Column sums accumulated into a non-zero bias gradient.
  std::vector<float> bg(bias.values());
  dev_array<float> dbg(bg);
  for (std::int64_t i = 0; i < rows; ++i) {
    for (std::int64_t j = 0; j < cols; ++j) bg[j] += g(i, j);
  }
  cuda::bias_grad_add(dg.get(), rows, cols, dbg.get(), nullptr);
  ASSERT_EQ(dbg.host(), bg);
  // Softmax cross-entropy against the host model loss.
  std::int64_t const n = 257, classes = 40;
  auto const logits = real_matrix(n, classes, 7);
  std::vector<std::int64_t> labels(n);
  for (std::int64_t i = 0; i < n; ++i) labels[i] = (i * 7) % classes;
  matrix<float> grad_ref(n, classes);
  float const loss_ref = softmax_cross_entropy<float>(
      exec_context{}, host_view(logits), host_view(labels), 1.0f / n, host_view(grad_ref));
  dev_array<float> dl(logits.values());
  dev_array<std::int64_t> dlab(labels);
  dev_array<float> dgrad(static_cast<std::size_t>(n * classes));
  dev_array<double> row_loss(static_cast<std::size_t>(n));
  dev_array<float> dloss(1);
  cuda::softmax_cross_entropy(dl.get(), dlab.get(), n, classes, 1.0f / n, dgrad.get(),
                              row_loss.get(), dloss.get(), nullptr);
  EXPECT_NEAR(dloss.host()[0], loss_ref, 1e-6f * (1.0f + std::abs(loss_ref)));
  expect_close(dgrad.host(), grad_ref.values(), 1e-6f, "cross-entropy gradient");
}

}  // namespace
}  // namespace coopgnn

#else  // !COOPGNN_WITH_CUDA

TEST(sparse_gpu, built_without_cuda) { GTEST_SKIP() << "no CUDA device: built without CUDA"; }

#endif  // COOPGNN_WITH_CUDA
