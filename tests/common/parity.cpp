#include "tests/common/parity.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <random>

#include "kernels/dense/elementwise.hpp"
#include "kernels/dense/gemm.hpp"
#include "kernels/dense/link_ops.hpp"
#include "kernels/gather/gather.hpp"
#include "kernels/sample/sampling.hpp"
#include "kernels/sparse/attention.hpp"
#include "kernels/sparse/edge_softmax.hpp"
#include "kernels/sparse/sddmm.hpp"
#include "kernels/sparse/spmm.hpp"
#include "runtime/core/half.hpp"
#include "runtime/core/memory.hpp"
#include "tests/common/graphs.hpp"

namespace coopgnn::test {
namespace {

/// Integer-valued floats in [-k, k] (sums of products stay exact in float).
std::vector<float> ints(std::size_t n, int k, std::uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::vector<float> v(n);
  for (auto& x : v) x = static_cast<float>(static_cast<int>(gen() % (2 * k + 1)) - k);
  return v;
}

template <typename T>
void append(std::vector<double>& out, const std::vector<T>& v) {
  for (auto x : v) out.push_back(static_cast<double>(x));
}

/// A CSR with `rows` destinations over `cols` sources: row 0 without edges, row 1 with an edge
/// from every source (the huge-degree row), the rest a few pseudo-random edges.
struct csr_case {
  std::int64_t rows = 0, cols = 0;
  std::vector<eid_t> indptr;
  std::vector<std::int64_t> indices;
};
csr_case make_csr(std::int64_t rows, std::int64_t cols, std::uint64_t seed) {
  csr_case c;
  c.rows = rows;
  c.cols = cols;
  c.indptr.push_back(0);
  std::mt19937_64 gen(seed);
  for (std::int64_t s = 0; s < rows; ++s) {
    if (s == 1) {
      for (std::int64_t t = 0; t < cols; ++t) c.indices.push_back(t);
    } else if (s > 1 && cols > 0) {
      auto const d = static_cast<std::int64_t>(gen() % 5);
      for (std::int64_t e = 0; e < d; ++e)
        c.indices.push_back(static_cast<std::int64_t>(gen() % cols));
    }
    c.indptr.push_back(static_cast<eid_t>(c.indices.size()));
  }
  return c;
}

struct shape {
  std::int64_t rows, cols;
};
std::vector<shape> const kShapes = {{0, 4}, {1, 1}, {31, 3}, {32, 32}, {33, 5}, {7, 33}, {100, 4}};

/// The cases of kernels/dense/link_ops.hpp for an [m, n] shape.
void append_link_cases(std::vector<op_case>& all, std::int64_t m, std::int64_t n,
                       const std::string& sz) {
  all.push_back({"row_dot " + sz, 1e-5, [=](const exec_context& ctx) {
                   auto a = upload(ctx, matrix<float>(m, n, ints(m * n, 4, 30)));
                   auto b = upload(ctx, matrix<float>(m, n, ints(m * n, 4, 31)));
                   buffer<float> o(ctx, static_cast<std::size_t>(m));
                   row_dot<float>(ctx, a.view(), b.view(), o.view());
                   std::vector<double> out;
                   append(out, download<float>(ctx, o.view()));
                   return out;
                 }});
  all.push_back({"scale_rows and hadamard " + sz, 0.0, [=](const exec_context& ctx) {
                   auto s = upload<float>(ctx, ints(static_cast<std::size_t>(m), 3, 32));
                   auto x = upload(ctx, matrix<float>(m, n, ints(m * n, 4, 33)));
                   auto b = upload(ctx, matrix<float>(m, n, ints(m * n, 4, 34)));
                   tensor<float> y(ctx, m, n);
                   scale_rows<float>(ctx, s.view(), x.view(), y.view());
                   hadamard<float>(ctx, y.view(), b.view(), b.view());  // in place
                   std::vector<double> out;
                   append(out, download<float>(ctx, y.view()).values());
                   append(out, download<float>(ctx, b.view()).values());
                   return out;
                 }});
  all.push_back({"scatter_add_rows " + sz, 0.0, [=](const exec_context& ctx) {
                   std::int64_t const rows = m / 2 + 2;  // repeated ids; the last row never hit
                   auto x = upload(ctx, matrix<float>(m, n, ints(m * n, 5, 35)));
                   std::vector<std::int64_t> ids(static_cast<std::size_t>(m));
                   for (std::int64_t i = 0; i < m; ++i) ids[i] = (i * 7 + 3) % (rows - 1);
                   auto di = upload<std::int64_t>(ctx, ids);
                   auto o = upload(ctx, matrix<float>(rows, n, ints(rows * n, 3, 36)));
                   scatter_add_rows<float>(ctx, x.view(), di.view(), o.view());
                   std::vector<double> out;
                   append(out, download<float>(ctx, o.view()).values());
                   return out;
                 }});
  for (bool per_channel : {false, true}) {
    all.push_back({"prelu forward+backward " + sz + (per_channel ? " per channel" : " shared"),
                   1e-5, [=](const exec_context& ctx) {
                     std::size_t const na = per_channel ? static_cast<std::size_t>(n) : 1;
                     std::vector<float> alpha(na);
                     for (std::size_t c = 0; c < na; ++c)
                       alpha[c] = 0.25f * static_cast<float>(c % 5) - 0.5f;
                     auto da = upload<float>(ctx, alpha);
                     auto x = upload(ctx, matrix<float>(m, n, ints(m * n, 4, 37)));
                     auto g = upload(ctx, matrix<float>(m, n, ints(m * n, 4, 38)));
                     auto ag = upload<float>(ctx, ints(na, 3, 39));
                     tensor<float> y(ctx, m, n);
                     prelu_forward<float>(ctx, x.view(), da.view(), y.view());
                     prelu_backward<float>(ctx, g.view(), x.view(), da.view(), g.view(), ag.view());
                     std::vector<double> out;
                     append(out, download<float>(ctx, y.view()).values());
                     append(out, download<float>(ctx, g.view()).values());
                     append(out, download<float>(ctx, ag.view()));
                     return out;
                   }});
  }
  all.push_back({"layer_norm forward+backward " + sz, 1e-5, [=](const exec_context& ctx) {
                   auto x = upload(ctx, matrix<float>(m, n, ints(m * n, 6, 40)));
                   auto gamma = upload<float>(ctx, ints(static_cast<std::size_t>(n), 2, 41));
                   auto beta = upload<float>(ctx, ints(static_cast<std::size_t>(n), 2, 42));
                   tensor<float> y(ctx, m, n);
                   buffer<float> mean(ctx, static_cast<std::size_t>(m));
                   buffer<float> rstd(ctx, static_cast<std::size_t>(m));
                   layer_norm_forward<float>(ctx, x.view(), gamma.view(), beta.view(), 1e-5f,
                                             y.view(), mean.view(), rstd.view());
                   auto g = upload(ctx, matrix<float>(m, n, ints(m * n, 3, 43)));
                   auto gg = upload<float>(ctx, ints(static_cast<std::size_t>(n), 2, 44));
                   auto bg = upload<float>(ctx, ints(static_cast<std::size_t>(n), 2, 45));
                   layer_norm_backward<float>(ctx, g.view(), x.view(), gamma.view(), mean.view(),
                                              rstd.view(), g.view(), gg.view(), bg.view());
                   std::vector<double> out;
                   append(out, download<float>(ctx, y.view()).values());
                   append(out, download<float>(ctx, mean.view()));
                   append(out, download<float>(ctx, rstd.view()));
                   append(out, download<float>(ctx, g.view()).values());
                   append(out, download<float>(ctx, gg.view()));
                   append(out, download<float>(ctx, bg.view()));
                   return out;
                 }});
  all.push_back(
      {"bce_with_logits " + sz, 1e-6, [=](const exec_context& ctx) {
         auto const k = static_cast<std::size_t>(m * n);
         auto l = upload<float>(ctx, ints(k, 5, 46));
         std::vector<float> labels(k);
         for (std::size_t i = 0; i < k; ++i) labels[i] = static_cast<float>(i * 5 / 3 % 2);
         auto dl = upload<float>(ctx, labels);
         buffer<float> g(ctx, k);
         float const loss = bce_with_logits<float>(ctx, l.view(), dl.view(), 0.25f, g.view());
         float const loss_only = bce_with_logits<float>(ctx, l.view(), dl.view(), 1.0f, {});
         std::vector<double> out{static_cast<double>(loss), static_cast<double>(loss_only)};
         append(out, download<float>(ctx, g.view()));
         return out;
       }});
  all.push_back({"adam_update_rows " + sz, 0.0, [=](const exec_context& ctx) {
                   std::int64_t const rows = m + 2;
                   auto v = upload(ctx, matrix<float>(rows, n, ints(rows * n, 3, 47)));
                   auto mm = upload(ctx, matrix<float>(rows, n, ints(rows * n, 1, 49)));
                   auto vv = upload(ctx, matrix<float>(rows, n, 0.5f));
                   std::vector<std::int64_t> sel;  // every other row, descending
                   for (std::int64_t r = rows - 1; r >= 0; r -= 2) sel.push_back(r);
                   auto const k = static_cast<std::int64_t>(sel.size());
                   auto g = upload(ctx, matrix<float>(k, n, ints(k * n, 3, 48)));  // compact
                   auto ds = upload<std::int64_t>(ctx, sel);
                   adam_step_params p{0.01, 0.9, 0.999, 1e-8, 5e-4, 0.1, 0.001};
                   adam_update_rows(ctx, v.view(), g.view(), mm.view(), vv.view(), ds.view(), p);
                   std::vector<double> out;
                   append(out, download<float>(ctx, v.view()).values());
                   append(out, download<float>(ctx, mm.view()).values());
                   append(out, download<float>(ctx, vv.view()).values());
                   return out;
                 }});
}

}  // namespace

std::vector<op_case> parity_cases() {
  std::vector<op_case> all;
  for (auto [m, n] : kShapes) {
    std::string const sz = std::to_string(m) + "x" + std::to_string(n);
    for (op oa : {op::none, op::transpose}) {
      for (op ob : {op::none, op::transpose}) {
        for (float beta : {0.0f, 1.0f}) {
          std::int64_t const k = 17;
          all.push_back({"gemm " + sz + (oa == op::none ? " N" : " T") +
                             (ob == op::none ? "N" : "T") +
                             " beta=" + std::to_string(static_cast<int>(beta)),
                         1e-5, [=](const exec_context& ctx) {
                           auto a = ints(static_cast<std::size_t>(m * k), 3, 1);
                           auto b = ints(static_cast<std::size_t>(k * n), 3, 2);
                           auto c = ints(static_cast<std::size_t>(m * n), 3, 3);
                           matrix<float> ha(oa == op::none ? m : k, oa == op::none ? k : m, a);
                           matrix<float> hb(ob == op::none ? k : n, ob == op::none ? n : k, b);
                           matrix<float> hc(m, n, c);
                           auto da = upload(ctx, ha);
                           auto db = upload(ctx, hb);
                           auto dc = upload(ctx, hc);
                           gemm<float>(ctx, oa, ob, 2.0f, da.view(), db.view(), beta, dc.view());
                           std::vector<double> out;
                           append(out, download<float>(ctx, dc.view()).values());
                           return out;
                         }});
        }
      }
    }
    auto const csr = make_csr(m, std::max<std::int64_t>(m, 2), 7 + static_cast<std::uint64_t>(m));
    auto sparse_inputs = [csr](const exec_context& ctx, buffer<eid_t>& ip, buffer<std::int64_t>& ix,
                               buffer<float>& vals) {
      ip = upload<eid_t>(ctx, csr.indptr);
      ix = upload<std::int64_t>(ctx, csr.indices);
      vals = upload<float>(ctx, ints(csr.indices.size(), 2, 5));
      return csr_view{csr.rows,  csr.cols,  static_cast<std::int64_t>(csr.indices.size()),
                      ip.data(), ix.data(), ctx.space()};
    };
    all.push_back({"spmm " + sz, 1e-5, [=](const exec_context& ctx) {
                     buffer<eid_t> ip;
                     buffer<std::int64_t> ix;
                     buffer<float> vals;
                     auto const a = sparse_inputs(ctx, ip, ix, vals);
                     auto x = upload(ctx, matrix<float>(csr.cols, n, ints(csr.cols * n, 3, 6)));
                     tensor<float> y(ctx, csr.rows, n);
                     spmm<float>(ctx, a, vals.view(), x.view(), y.view());
                     std::vector<double> out;
                     append(out, download<float>(ctx, y.view()).values());
                     return out;
                   }});
    all.push_back({"spmm_transpose_add " + sz, 1e-5, [=](const exec_context& ctx) {
                     buffer<eid_t> ip;
                     buffer<std::int64_t> ix;
                     buffer<float> vals;
                     auto const a = sparse_inputs(ctx, ip, ix, vals);
                     auto g = upload(ctx, matrix<float>(csr.rows, n, ints(csr.rows * n, 3, 8)));
                     auto xg = upload(ctx, matrix<float>(csr.cols, n, ints(csr.cols * n, 3, 9)));
                     spmm_transpose_add<float>(ctx, a, vals.view(), g.view(), xg.view());
                     std::vector<double> out;
                     append(out, download<float>(ctx, xg.view()).values());
                     return out;
                   }});
    for (bool relu : {false, true}) {
      all.push_back(
          {"bias_activation " + sz + (relu ? " relu" : ""), 0.0, [=](const exec_context& ctx) {
             auto o = upload(ctx, matrix<float>(m, n, ints(m * n, 4, 10)));
             auto b = upload<float>(ctx, ints(static_cast<std::size_t>(n), 4, 11));
             bias_activation<float>(ctx, o.view(), b.view(), relu);
             std::vector<double> out;
             append(out, download<float>(ctx, o.view()).values());
             return out;
           }});
    }
    all.push_back({"relu_backward " + sz, 0.0, [=](const exec_context& ctx) {
                     auto g = upload(ctx, matrix<float>(m, n, ints(m * n, 4, 12)));
                     auto o = upload(ctx, matrix<float>(m, n, ints(m * n, 1, 13)));
                     tensor<float> gi(ctx, m, n);
                     relu_backward<float>(ctx, g.view(), o.view(), gi.view());
                     std::vector<double> out;
                     append(out, download<float>(ctx, gi.view()).values());
                     return out;
                   }});
    all.push_back({"bias_grad_add " + sz, 1e-5, [=](const exec_context& ctx) {
                     auto g = upload(ctx, matrix<float>(m, n, ints(m * n, 4, 14)));
                     auto bg = upload<float>(ctx, ints(static_cast<std::size_t>(n), 4, 15));
                     bias_grad_add<float>(ctx, g.view(), bg.view());
                     std::vector<double> out;
                     append(out, download<float>(ctx, bg.view()));
                     return out;
                   }});
    all.push_back({"dropout forward+backward " + sz, 0.0, [=](const exec_context& ctx) {
                     auto x = upload(ctx, matrix<float>(m, n, ints(m * n, 4, 16)));
                     std::vector<vid_t> ids(static_cast<std::size_t>(m));
                     for (std::int64_t i = 0; i < m; ++i) ids[i] = 1000 + 37 * i;
                     auto dids = upload<vid_t>(ctx, ids);
                     tensor<float> y(ctx, m, n);
                     buffer<std::uint8_t> keep(ctx, static_cast<std::size_t>(m * n));
                     dropout_forward<float>(ctx, x.view(), dids.view(), dropout_key{5, 3, 1}, 0.5f,
                                            2.0f, y.view(), keep.view());
                     auto g = upload(ctx, matrix<float>(m, n, ints(m * n, 4, 17)));
                     dropout_backward<float>(ctx, g.view(), keep.view(), 2.0f);
                     std::vector<double> out;
                     append(out, download<float>(ctx, y.view()).values());
                     append(out, download<std::uint8_t>(ctx, keep.view()));
                     append(out, download<float>(ctx, g.view()).values());
                     return out;
                   }});
    all.push_back({"gcn coefficients and self term " + sz, 1e-6, [=](const exec_context& ctx) {
                     buffer<eid_t> ip;
                     buffer<std::int64_t> ix;
                     buffer<float> vals;
                     auto const a = sparse_inputs(ctx, ip, ix, vals);
                     std::vector<std::int64_t> deg(static_cast<std::size_t>(csr.cols));
                     for (std::int64_t t = 0; t < csr.cols; ++t) deg[t] = (t * 7) % 11;
                     auto ddeg = upload<std::int64_t>(ctx, deg);
                     block_view const b{csr.rows,  csr.cols,    a.num_edges, nullptr,    a.indptr,
                                        a.indices, vals.data(), ddeg.data(), ctx.space()};
                     buffer<float> ev(ctx, static_cast<std::size_t>(a.num_edges));
                     gcn_edge_values<float>(ctx, b, ev.view());
                     auto x = upload(ctx, matrix<float>(csr.cols, n, ints(csr.cols * n, 3, 18)));
                     auto y = upload(ctx, matrix<float>(csr.rows, n, ints(csr.rows * n, 3, 19)));
                     gcn_self_add<float>(ctx, ddeg.view(), x.view(), y.view());
                     std::vector<double> out;
                     append(out, download<float>(ctx, ev.view()));
                     append(out, download<float>(ctx, y.view()).values());
                     return out;
                   }});
    all.push_back({"softmax_cross_entropy " + sz, 1e-6, [=](const exec_context& ctx) {
                     auto l = upload(ctx, matrix<float>(m, n, ints(m * n, 5, 20)));
                     std::vector<std::int64_t> labels(static_cast<std::size_t>(m));
                     for (std::int64_t i = 0; i < m; ++i) labels[i] = (i * 5) % n;
                     auto dl = upload<std::int64_t>(ctx, labels);
                     tensor<float> g(ctx, m, n);
                     float const loss =
                         softmax_cross_entropy<float>(ctx, l.view(), dl.view(), 0.25f, g.view());
                     std::vector<double> out{static_cast<double>(loss)};
                     append(out, download<float>(ctx, g.view()).values());
                     return out;
                   }});
    all.push_back({"sddmm " + sz, 1e-5, [=](const exec_context& ctx) {
                     buffer<eid_t> ip;
                     buffer<std::int64_t> ix;
                     buffer<float> vals;
                     auto const a = sparse_inputs(ctx, ip, ix, vals);
                     auto da = upload(ctx, matrix<float>(csr.rows, n, ints(csr.rows * n, 3, 25)));
                     auto dx = upload(ctx, matrix<float>(csr.cols, n, ints(csr.cols * n, 3, 26)));
                     buffer<float> out(ctx, static_cast<std::size_t>(a.num_edges));
                     buffer<float> out1(ctx, static_cast<std::size_t>(a.num_edges));
                     sddmm<float>(ctx, a, da.view(), dx.view(), vals.view(), out.view());
                     sddmm<float>(ctx, a, da.view(), dx.view(), {}, out1.view());
                     std::vector<double> r;
                     append(r, download<float>(ctx, out.view()));
                     append(r, download<float>(ctx, out1.view()));
                     return r;
                   }});
    all.push_back({"edge_softmax forward+backward " + sz, 1e-5, [=](const exec_context& ctx) {
                     buffer<eid_t> ip;
                     buffer<std::int64_t> ix;
                     buffer<float> vals;
                     auto const a = sparse_inputs(ctx, ip, ix, vals);
                     auto const e = static_cast<std::size_t>(a.num_edges);
                     auto scores = upload<float>(ctx, ints(e, 4, 27));
                     auto gy = upload<float>(ctx, ints(e, 3, 28));
                     buffer<float> y(ctx, e);
                     buffer<float> gs(ctx, e);
                     edge_softmax<float>(ctx, a, scores.view(), y.view());
                     edge_softmax_backward<float>(ctx, a, y.view(), gy.view(), gs.view());
                     std::vector<double> r;
                     append(r, download<float>(ctx, y.view()));
                     append(r, download<float>(ctx, gs.view()));
                     return r;
                   }});
    all.push_back({"attention ops (GAT) " + sz, 1e-6, [=](const exec_context& ctx) {
                     buffer<eid_t> ip;
                     buffer<std::int64_t> ix;
                     buffer<float> vals;
                     auto const a0 = sparse_inputs(ctx, ip, ix, vals);
                     auto const loops = add_self_loops(ctx, a0);
                     auto const a = loops.view();
                     std::int64_t const heads = 2, hf = 2 * (n / 2 + 1);
                     auto const e = static_cast<std::size_t>(a.num_edges * heads);
                     auto z = upload(ctx, matrix<float>(csr.cols, hf, ints(csr.cols * hf, 3, 40)));
                     auto av = upload<float>(ctx, ints(static_cast<std::size_t>(hf), 2, 41));
                     tensor<float> el(ctx, csr.cols, heads);
                     attention_project<float>(ctx, z.view(), av.view(), heads, el.view());
                     buffer<float> sc(ctx, e);
                     attention_scores<float>(ctx, a, el.view(), el.view(), 0.25f, false, sc.view());
                     auto alpha = upload<float>(ctx, ints(e, 2, 42));
                     std::vector<vid_t> ids(static_cast<std::size_t>(csr.cols));
                     for (std::size_t i = 0; i < ids.size(); ++i)
                       ids[i] = static_cast<vid_t>(3 * i + 1);
                     auto dids = upload<vid_t>(ctx, ids);
                     buffer<std::uint8_t> keep(ctx, e);
                     attention_dropout<float>(ctx, a, dids.view(), heads, dropout_key{5, 1, 2},
                                              0.5f, 2.0f, alpha.view(), keep.view());
                     tensor<float> y(ctx, csr.rows, hf);
                     attention_aggregate<float>(ctx, a, alpha.view(), z.view(), heads, y.view());
                     auto g = upload(ctx, matrix<float>(csr.rows, hf, ints(csr.rows * hf, 2, 43)));
                     buffer<float> ga(ctx, e);
                     tensor<float> gz = zeros<float>(ctx, csr.cols, hf);
                     attention_aggregate_backward<float>(ctx, a, alpha.view(), z.view(), g.view(),
                                                         heads, ga.view(), gz.view());
                     tensor<float> gel = zeros<float>(ctx, csr.rows, heads);
                     tensor<float> ger = zeros<float>(ctx, csr.cols, heads);
                     attention_scores_backward<float>(ctx, a, sc.view(), ga.view(), 0.25f,
                                                      gel.view(), ger.view());
                     tensor<float> gav = zeros<float>(ctx, 1, hf);
                     attention_project_backward<float>(ctx, z.view(), av.view(), ger.view(),
                                                       gz.view(), gav.view().flat());
                     elu_inplace<float>(ctx, y.view());
                     tensor<float> gy(ctx, csr.rows, hf);
                     elu_backward<float>(ctx, g.view(), y.view(), gy.view());
                     std::vector<double> r;
                     append(r, download<std::int64_t>(ctx, loops.indices.view()));
                     append(r, download<float>(ctx, sc.view()));
                     append(r, download<std::uint8_t>(ctx, keep.view()));
                     append(r, download<float>(ctx, alpha.view()));
                     append(r, download<float>(ctx, ga.view()));
                     append(r, download<float>(ctx, gz.view()).values());
                     append(r, download<float>(ctx, gel.view()).values());
                     append(r, download<float>(ctx, ger.view()).values());
                     append(r, download<float>(ctx, gav.view()).values());
                     append(r, download<float>(ctx, y.view()).values());
                     append(r, download<float>(ctx, gy.view()).values());
                     return r;
                   }});
    all.push_back({"gather_rows " + sz, 0.0, [=](const exec_context& ctx) {
                     auto t = upload(ctx, matrix<float>(m + 1, n, ints((m + 1) * n, 9, 21)));
                     std::vector<std::int64_t> ids;
                     for (std::int64_t i = 0; i < 2 * m; ++i) ids.push_back((i * 13) % (m + 1));
                     auto di = upload<std::int64_t>(ctx, ids);
                     tensor<float> o(ctx, static_cast<std::int64_t>(ids.size()), n);
                     gather_rows(ctx, t.view(), di.view(), o.view());
                     std::vector<double> out;
                     append(out, download<float>(ctx, o.view()).values());
                     return out;
                   }});
    // The widening gather of 16-bit feature tables (kernels/gather): bit patterns over every
    // class (normals, subnormals, +-0, +-inf, NaN); outputs compared as float32 bits, a NaN as
    // the marker -1 (CUDA's conversion need not keep a NaN's payload).
    for (feature_dtype dt : {feature_dtype::float16, feature_dtype::bfloat16}) {
      all.push_back(
          {"gather_rows " + std::string(to_string(dt)) + " " + sz, 0.0,
           [=](const exec_context& ctx) {
             std::vector<std::uint16_t> bits(static_cast<std::size_t>((m + 1) * n));
             std::mt19937_64 gen(25);
             std::uint16_t const special[] = {0x0000, 0x8000, 0x0001, 0x03FF, 0x7C00,
                                              0xFC00, 0x7E00, 0x7F80, 0x3C00};
             for (std::size_t k = 0; k < bits.size(); ++k) {
               bits[k] = k % 5 == 0 ? special[k / 5 % 9] : static_cast<std::uint16_t>(gen());
             }
             auto t = upload(ctx, matrix<std::uint16_t>(m + 1, n, std::move(bits)));
             std::vector<std::int64_t> ids;
             for (std::int64_t i = 0; i < 2 * m; ++i) ids.push_back((i * 7) % (m + 1));
             auto di = upload<std::int64_t>(ctx, ids);
             tensor<float> o(ctx, static_cast<std::int64_t>(ids.size()), n);
             gather_rows(ctx, t.view(), dt, di.view(), o.view());
             std::vector<double> out;
             matrix<float> const got = download<float>(ctx, o.view());
             for (float x : got.values()) {
               out.push_back(std::isnan(x) ? -1.0
                                           : static_cast<double>(std::bit_cast<std::uint32_t>(x)));
             }
             return out;
           }});
    }
    append_link_cases(all, m, n, sz);
  }
  for (std::int64_t n : {0, 1, 33, 1000}) {
    all.push_back({"adam_update n=" + std::to_string(n), 0.0, [=](const exec_context& ctx) {
                     auto const un = static_cast<std::size_t>(n);
                     auto v = upload<float>(ctx, ints(un, 3, 22));
                     auto g = upload<float>(ctx, ints(un, 3, 23));
                     auto mm = upload<float>(ctx, ints(un, 1, 24));
                     auto vv = upload<float>(ctx, std::vector<float>(un, 0.5f));
                     adam_step_params p{0.01, 0.9, 0.999, 1e-8, 5e-4, 0.1, 0.001};
                     adam_update(ctx, v.view(), g.view(), mm.view(), vv.view(), p);
                     std::vector<double> out;
                     append(out, download<float>(ctx, v.view()));
                     append(out, download<float>(ctx, mm.view()));
                     append(out, download<float>(ctx, vv.view()));
                     return out;
                   }});
  }
  // Typed (heterogeneous) sampling and unique-and-compact: NS and LABOR over 3 relations with
  // per-relation fanouts (all, none, Floyd's linear and hash-set paths on the hub), n * R rows;
  // the zero-in-degree vertex 0, the hub 1 and the one-edge vertex 2 among the seeds.
  for (auto kind : {sampler_kind::ns, sampler_kind::labor}) {
    for (auto const& fanouts : {std::vector<int>{2, 0, -1}, std::vector<int>{40, 5, 33}}) {
      std::string name = "typed_sample " + to_string(kind) + " k_r =";
      for (int k : fanouts) name += " " + std::to_string(k);
      all.push_back({name, 0.0, [=](const exec_context& ctx) {
                       static const typed_graph t = random_typed_graph(300, 3, 6, 44);
                       std::vector<vid_t> seeds = {0, 1, 2};
                       for (vid_t v = 5; v < 300; v += 7) seeds.push_back(v);
                       auto const g = upload_graph(ctx, t.g);
                       auto const ds = upload<vid_t>(ctx, seeds);
                       sample_params p{kind, 1, 2024, 1, 3};
                       p.relation_fanouts = fanouts;
                       auto const sb = sample_neighbors(ctx, g.view(), ds.view(), p);
                       auto const b = to_host(ctx, make_block(ctx, g.view(), ds.view(), sb));
                       std::vector<double> out;
                       append(out, download<eid_t>(ctx, sb.indptr.view()));
                       append(out, download<vid_t>(ctx, sb.nbrs.view()));
                       append(out, download<float>(ctx, sb.weights.view()));
                       out.push_back(b.num_relations);
                       append(out, b.src_ids);
                       append(out, b.indptr);
                       append(out, b.indices);
                       append(out, b.weights);
                       append(out, b.src_degree);
                       return out;
                     }});
    }
  }
  // Edge exclusion: seeds of 0, 1, 33 and 40 sampled edges; every 3rd edge excluded, and every
  // edge of seed 1 (left without edges); weights renormalised.
  all.push_back({"exclude_edges", 0.0, [](const exec_context& ctx) {
                   std::vector<vid_t> const seeds = {5, 7, 9, 11};
                   std::vector<eid_t> const indptr = {0, 0, 1, 34, 74};
                   std::vector<vid_t> nbrs;
                   std::vector<float> w;
                   for (int e = 0; e < 74; ++e) {
                     nbrs.push_back((e * 7) % 50 + 100);
                     w.push_back(1.0f / static_cast<float>(1 + e % 5));
                   }
                   std::vector<std::uint64_t> keys;
                   for (std::size_t i = 0; i < seeds.size(); ++i) {
                     for (eid_t e = indptr[i]; e < indptr[i + 1]; ++e) {
                       if (i == 1 || e % 3 == 0) {
                         keys.push_back(
                             edge_exclusion_key(nbrs[static_cast<std::size_t>(e)], seeds[i]));
                       }
                     }
                   }
                   std::sort(keys.begin(), keys.end());
                   keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
                   sampled_buffers sb{upload<eid_t>(ctx, indptr), upload<vid_t>(ctx, nbrs),
                                      upload<float>(ctx, w)};
                   auto const ds = upload<vid_t>(ctx, seeds);
                   auto const dk = upload<std::uint64_t>(ctx, keys);
                   auto const r = exclude_edges(ctx, ds.view(), sb, dk.view());
                   std::vector<double> out;
                   append(out, download<eid_t>(ctx, r.indptr.view()));
                   append(out, download<vid_t>(ctx, r.nbrs.view()));
                   append(out, download<float>(ctx, r.weights.view()));
                   return out;
                 }});
  // Typed edge exclusion: 3 seeds x R = 3 rows; one (t, s) pair in two relations, excluded
  // in one of them only; every 4th other edge excluded.
  all.push_back({"exclude_edges_typed", 0.0, [](const exec_context& ctx) {
                   std::int32_t const R = 3;
                   std::vector<vid_t> const seeds = {5, 7, 9};
                   std::vector<eid_t> const indptr = {0, 2, 2, 9, 12, 12, 20, 21, 25, 33};
                   std::vector<vid_t> nbrs;
                   std::vector<float> w;
                   for (int e = 0; e < 33; ++e) {
                     nbrs.push_back((e * 5) % 17 + 100);
                     w.push_back(1.0f / static_cast<float>(1 + e % 4));
                   }
                   nbrs[12] = nbrs[0];  // row 5 (seed 7, relation 2) vs row 0 (seed 5, rel 0)
                   nbrs[3] = nbrs[0];   // row 2 (seed 5, relation 2): the pair of row 0
                   std::vector<std::uint64_t> keys = {edge_exclusion_key(nbrs[0], 5, 0, R)};
                   for (std::size_t q = 0; q + 1 < indptr.size(); ++q) {
                     for (eid_t e = indptr[q]; e < indptr[q + 1]; ++e) {
                       if (e % 4 == 1) {
                         keys.push_back(edge_exclusion_key(nbrs[static_cast<std::size_t>(e)],
                                                           seeds[q / R],
                                                           static_cast<std::int32_t>(q % R), R));
                       }
                     }
                   }
                   std::sort(keys.begin(), keys.end());
                   keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
                   sampled_buffers sb{upload<eid_t>(ctx, indptr), upload<vid_t>(ctx, nbrs),
                                      upload<float>(ctx, w)};
                   auto const ds = upload<vid_t>(ctx, seeds);
                   auto const dk = upload<std::uint64_t>(ctx, keys);
                   auto const r = exclude_edges(ctx, ds.view(), sb, dk.view());
                   std::vector<double> out;
                   append(out, download<eid_t>(ctx, r.indptr.view()));
                   append(out, download<vid_t>(ctx, r.nbrs.view()));
                   append(out, download<float>(ctx, r.weights.view()));
                   return out;
                 }});
  return all;
}

void expect_parity(const exec_context& target, const std::string& backend_name, bool exact) {
  exec_context const host;
  auto const all = parity_cases();
  std::size_t nonzero_cases = 0;
  for (auto const& c : all) {
    SCOPED_TRACE(c.name);
    auto const ref = c.run(host);
    bool any = false;
    for (double v : ref) any = any || v != 0.0;
    nonzero_cases += any ? 1 : 0;
    SCOPED_TRACE(backend_name);
    auto const got = c.run(target);
    ASSERT_EQ(got.size(), ref.size());
    for (std::size_t i = 0; i < ref.size(); ++i) {
      double const tol = exact ? 0.0 : c.tolerance * std::max(1.0, std::abs(ref[i]));
      if (tol == 0.0) {
        ASSERT_EQ(got[i], ref[i]) << "element " << i;
      } else {
        ASSERT_NEAR(got[i], ref[i], tol) << "element " << i;
      }
    }
  }
  // The harness is not vacuous: almost every case produces non-zero data (empty shapes do not).
  EXPECT_GT(nonzero_cases, all.size() * 3 / 4);
}

gemm_under_test gemm_on(const exec_context& ctx) {
  return [ctx](const tf32_gemm_case& c, const std::vector<float>& a, const std::vector<float>& b,
               const std::vector<float>& c0) {
    matrix<float> ha(c.op_a == op::none ? c.m : c.k, c.op_a == op::none ? c.k : c.m, a);
    matrix<float> hb(c.op_b == op::none ? c.k : c.n, c.op_b == op::none ? c.n : c.k, b);
    auto da = upload(ctx, ha);
    auto db = upload(ctx, hb);
    auto dc = upload(ctx, matrix<float>(c.m, c.n, c0));
    gemm<float>(ctx, c.op_a, c.op_b, c.alpha, da.view(), db.view(), c.beta, dc.view());
    return download<float>(ctx, dc.view()).values();
  };
}

double tf32_gemm_tolerance(std::int64_t k, double abs_alpha_s, double abs_beta_c0) {
  double const u = std::ldexp(1.0, -10);    // a TF32 conversion, truncating (2^-11 rounding)
  double const eps = std::ldexp(1.0, -24);  // FP32 unit roundoff
  double const ke = static_cast<double>(k) * eps;
  double const gamma = ke / (1.0 - ke);
  return abs_alpha_s * (2 * u + u * u + gamma * ((1 + u) * (1 + u) + 1)) +
         4 * eps * (abs_alpha_s + abs_beta_c0);
}

tf32_gemm_report check_gemm_within_tf32_bound(const gemm_under_test& under_test) {
  exec_context const host;
  auto const reference = gemm_on(host);
  tf32_gemm_report r;
  std::uint64_t seed = 101;
  struct mnk {
    std::int64_t m, n, k;
  };
  for (auto [m, n, k] : {mnk{1, 1, 1}, mnk{33, 5, 17}, mnk{31, 32, 64}, mnk{7, 33, 300}}) {
    for (op oa : {op::none, op::transpose}) {
      for (op ob : {op::none, op::transpose}) {
        for (float beta : {0.0f, 1.0f}) {
          tf32_gemm_case const c{m, n, k, oa, ob, 0.75f, beta};
          // Uniform in [-1, 1): the low 13 mantissa bits are set, so TF32 changes the inputs.
          auto values = [&](std::int64_t count) {
            std::mt19937_64 gen(seed++);
            std::uniform_real_distribution<float> d(-1.0f, 1.0f);
            std::vector<float> v(static_cast<std::size_t>(count));
            for (auto& x : v) x = d(gen);
            return v;
          };
          auto const a = values(m * k);
          auto const b = values(k * n);
          auto const c0 = values(m * n);
          auto const ref = reference(c, a, b, c0);
          auto const got = under_test(c, a, b, c0);
          if (got.size() != ref.size()) {
            r.outside += static_cast<std::int64_t>(ref.size());
            if (r.first_outside.empty()) {
              r.first_outside = fmt::format("{}x{} k={}: {} elements returned, {} expected", m, n,
                                            k, got.size(), ref.size());
            }
            continue;
          }
          // op(A)_il and op(B)_lj in the stored layouts.
          auto at = [&](std::int64_t i, std::int64_t l) {
            return oa == op::none ? a[static_cast<std::size_t>(i * k + l)]
                                  : a[static_cast<std::size_t>(l * m + i)];
          };
          auto bt = [&](std::int64_t l, std::int64_t j) {
            return ob == op::none ? b[static_cast<std::size_t>(l * n + j)]
                                  : b[static_cast<std::size_t>(j * k + l)];
          };
          for (std::int64_t i = 0; i < m; ++i) {
            for (std::int64_t j = 0; j < n; ++j) {
              double s = 0;
              for (std::int64_t l = 0; l < k; ++l) {
                s += std::abs(static_cast<double>(at(i, l))) *
                     std::abs(static_cast<double>(bt(l, j)));
              }
              auto const e = static_cast<std::size_t>(i * n + j);
              double const abs_alpha_s = std::abs(static_cast<double>(c.alpha)) * s;
              double const abs_beta_c0 = std::abs(static_cast<double>(beta) * c0[e]);
              double const tol = tf32_gemm_tolerance(k, abs_alpha_s, abs_beta_c0);
              double const err = std::abs(static_cast<double>(got[e]) - ref[e]);
              ++r.elements;
              if (std::bit_cast<std::uint32_t>(got[e]) != std::bit_cast<std::uint32_t>(ref[e])) {
                ++r.differ;
              }
              if (err <= tol) continue;
              ++r.outside;
              if (!r.first_outside.empty()) continue;
              r.first_outside = fmt::format(
                  "gemm {}x{} k={} {}{} alpha={} beta={}, element ({}, {}): |{} - {}| = {:.3e} > "
                  "tol {:.3e} = |alpha| S (2u + u^2 + gamma_k ((1 + u)^2 + 1)) + 4 eps (|alpha| "
                  "S + |beta c0|) with K = {}, |alpha| S = {:.6e}, |beta c0| = {:.3e}, u = 2^-10 "
                  "(a TF32 input), eps = 2^-24, gamma_k = K eps / (1 - K eps)",
                  m, n, k, oa == op::none ? "N" : "T", ob == op::none ? "N" : "T", c.alpha, beta, i,
                  j, got[e], ref[e], err, tol, k, abs_alpha_s, abs_beta_c0);
            }
          }
        }
      }
    }
  }
  return r;
}

}  // namespace coopgnn::test
