// Kernel entries of link prediction and of the TMA paper's layer order (Conv -> LayerNorm ->
// PReLU -> Dropout; decoders dot and MLP on the Hadamard product; binary cross-entropy), one
// entry per op for every backend (docs/design.md sections 2 and 7.1). Each entry checks that its
// operands live in ctx.space() (logic_error naming the operand otherwise) and runs the host
// reference (link_ops.cpp; backends host and emulated) or the CUDA kernel (link_ops.cu) on ctx's
// compute stream (backend cuda, float32 only; asynchronous unless stated). Shapes are those of
// the views; a shape mismatch throws logic_error naming the operands. Empty operands do nothing.
// None of them allocates unless stated. The CUDA launchers are in link_ops_cuda.hpp.
//
// Every template exists for T = float (all backends) and T = double (host and emulated only; the
// CUDA backend throws logic_error "... float32 only ...").
#pragma once

#include <cstdint>

#include "kernels/dense/adam_params.hpp"
#include "runtime/core/exec_context.hpp"
#include "runtime/core/memory.hpp"
#include "runtime/core/types.hpp"

namespace coopgnn {

/// out[i] = sum_{j < d} a[i, j] * b[i, j], summed from zero in ascending j.
/// @param a, b [m, d]; @param out [m]. CUDA: within a relative 1e-5 (exact on integer data).
template <typename T>
void row_dot(const exec_context& ctx, tensor_view<const T> a, tensor_view<const T> b,
             buffer_view<T> out);

/// y[i, j] = s[i] * x[i, j]. @param s [m]; @param x, y [m, d] (y may be exactly x). Bitwise.
template <typename T>
void scale_rows(const exec_context& ctx, buffer_view<const T> s, tensor_view<const T> x,
                tensor_view<T> y);

/// out[e] = a[e] * b[e] (Hadamard product; also its own backward with the gradient as a).
/// @param a, b, out same shape (out may be exactly a or b). Bitwise.
template <typename T>
void hadamard(const exec_context& ctx, tensor_view<const T> a, tensor_view<const T> b,
              tensor_view<T> out);

/// out[ids[i], :] += x[i, :] for i ascending (the backward of gather_rows). Deterministic: on
/// CUDA the positions are grouped by id (group_by_value) and each output row adds its terms in
/// ascending i, so the result is bitwise equal to the host's.
/// @param x [m, d]; @param ids [m] int64 in [0, out.rows) (host: every id is checked before any
///        row is written, an id outside throws logic_error naming the position; CUDA: not
///        checked); @param out [n, d], accumulated; must not overlap x.
/// CUDA allocates its grouping workspace from ctx's pool (stream-ordered).
template <typename T>
void scatter_add_rows(const exec_context& ctx, tensor_view<const T> x,
                      buffer_view<const std::int64_t> ids, tensor_view<T> out);

/// y = PReLU(x): y[i, j] = x[i, j] > 0 ? x[i, j] : alpha[c] * x[i, j] with c = j when
/// alpha.size == cols (per channel) and c = 0 when alpha.size == 1 (one shared slope, PyTorch's
/// default; with d == 1 the two coincide). @param x, y [m, d] (y may be exactly x); @param alpha
/// [d] or [1] (logic_error otherwise). Bitwise.
template <typename T>
void prelu_forward(const exec_context& ctx, tensor_view<const T> x, buffer_view<const T> alpha,
                   tensor_view<T> y);

/// Backward of prelu_forward at input x: grad_in[i, j] = x > 0 ? g : alpha[c] * g, and
/// alpha_grad[c] += sum over (i, j) mapped to c of (x <= 0 ? x * g : 0) (host: i ascending then
/// j, each sum from zero then added; CUDA: a fixed order, within a relative 1e-5, exact on
/// integer data).
/// @param grad_out, x, grad_in [m, d] (grad_in may be exactly grad_out); @param alpha_grad as
///        alpha, accumulated into.
template <typename T>
void prelu_backward(const exec_context& ctx, tensor_view<const T> grad_out, tensor_view<const T> x,
                    buffer_view<const T> alpha, tensor_view<T> grad_in, buffer_view<T> alpha_grad);

/// Layer normalisation over each row (Ba, Kiros & Hinton 2016):
///   mu_i = mean_j x[i, j]; var_i = mean_j (x[i, j] - mu_i)^2 (biased, as PyTorch);
///   rstd_i = 1 / sqrt(var_i + eps); y[i, j] = (x[i, j] - mu_i) rstd_i gamma[j] + beta[j].
/// mu, var and rstd in double (host: ascending j, the variance in a second pass), stored as T in
/// mean and rstd; y is computed in T from the stored values (the backward's xh). CUDA: within a
/// relative 1e-5.
/// @param x, y [m, d] (y must not overlap x); @param gamma, beta [d];
/// @param mean, rstd [m], overwritten (kept for the backward)
/// @throws logic_error also when m > 0 and d == 0, eps < 0, or y is x.
template <typename T>
void layer_norm_forward(const exec_context& ctx, tensor_view<const T> x, buffer_view<const T> gamma,
                        buffer_view<const T> beta, T eps, tensor_view<T> y, buffer_view<T> mean,
                        buffer_view<T> rstd);

/// Backward of layer_norm_forward: with xh = (x - mu) rstd and gy = grad_out * gamma,
///   grad_in[i, j] = rstd_i (gy[i, j] - mean_j gy[i, :] - xh[i, j] mean_j (gy[i, :] xh[i, :]));
///   gamma_grad[j] += sum_i grad_out[i, j] xh[i, j]; beta_grad[j] += sum_i grad_out[i, j].
/// The two row means in double; the column sums in T from zero, i ascending, then added. CUDA:
/// within a relative 1e-5. @param grad_out, x, grad_in [m, d] (grad_in must not overlap x; it may
/// be exactly grad_out); @param gamma, gamma_grad, beta_grad [d]; @param mean, rstd [m] from the
/// forward. @throws logic_error also when m > 0 and d == 0, or grad_in is x.
template <typename T>
void layer_norm_backward(const exec_context& ctx, tensor_view<const T> grad_out,
                         tensor_view<const T> x, buffer_view<const T> gamma,
                         buffer_view<const T> mean, buffer_view<const T> rstd,
                         tensor_view<T> grad_in, buffer_view<T> gamma_grad,
                         buffer_view<T> beta_grad);

/// Binary cross-entropy with logits, numerically stable:
///   returns scale * sum_i [max(x_i, 0) - x_i y_i + log1p(exp(-|x_i|))] (accumulated in double,
///   in ascending i) and, when grad.data is not null, grad[i] = scale * (sigmoid(x_i) - y_i).
/// sigmoid is evaluated in double without overflow (exp of a non-positive argument only).
/// @param logits [m]; @param labels [m] in {0, 1} (as T); @param grad [m] or empty ({}: the
/// value only). m == 0 returns 0.
/// Host: a label other than 0 or 1 throws logic_error naming the position. CUDA: labels not
/// checked, the value within a relative 1e-6 of the host's; the call synchronises the compute
/// stream (the value is copied to the host).
template <typename T>
T bce_with_logits(const exec_context& ctx, buffer_view<const T> logits, buffer_view<const T> labels,
                  T scale, buffer_view<T> grad);

/// Lazy ("sparse") Adam on selected rows of a [n, d] parameter table (PyTorch's SparseAdam
/// semantics: one global step counter in params, moments of untouched rows stay as they are):
/// for every k < r and j < d, element (rows[k], j) of value, m and v gets exactly adam_update's
/// formula (kernels/dense/elementwise.hpp) with gradient grad[k, j] (a compact gradient, one
/// row per updated row: the step costs O(r d) whatever n is), the one function adam_element of
/// adam_params.hpp that both use on every backend; every other element is left bit-identical.
/// Bitwise equal on CUDA.
/// @param value, m, v [n, d] float32; @param grad [r, d] float32, row k for rows[k];
/// @param rows [r] int64, distinct, in [0, n) (host:
///        every row is checked first, a row outside throws logic_error naming it; CUDA: not
///        checked; distinctness is not checked anywhere: a repeated row is updated twice on the
///        host and races on CUDA)
void adam_update_rows(const exec_context& ctx, tensor_view<float> value,
                      tensor_view<const float> grad, tensor_view<float> m, tensor_view<float> v,
                      buffer_view<const std::int64_t> rows, const adam_step_params& params);

}  // namespace coopgnn
