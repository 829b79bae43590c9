// The op cases of the kernel parity harness (docs/design.md section 2), shared by
// tests/kernels/parity_test.cpp (the emulated device, every CI run) and
// tests/kernels/parity_gpu_test.cpp (CUDA, tools/device_check.sh): one list, every backend; and
// its TF32 case (--gemm-math tf32), compared with the host's FP32 within a bound derived from K
// and the values (tf32_gemm_tolerance).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "kernels/dense/op.hpp"
#include "runtime/core/exec_context.hpp"

namespace coopgnn::test {

/// An op case: runs the op under ctx on host inputs (uploaded inside) and returns its outputs
/// downloaded and flattened (doubles, so integer outputs fit too).
struct op_case {
  std::string name;
  double tolerance;  ///< relative tolerance on CUDA when the result is not integer-valued
  std::function<std::vector<double>(const exec_context&)> run;
};

/// Every op case: gemm (all op combinations, beta 0 and 1), spmm and its transpose, SDDMM (with
/// and without edge scales), edge softmax and its backward, the element-wise ops, the loss, Adam,
/// the gather (float32, and float16 / bfloat16 tables widened to float32), the link-prediction
/// ops of link_ops.hpp, edge exclusion and typed (per-relation) NS / LABOR sampling with
/// unique-and-compact, on shapes that include empty, 1, 31/32/33 and widths that are not
/// multiples of 4, over CSRs with a zero-degree row next to a row with an edge from every
/// source. Inputs are integer-valued (the 16-bit gathers: every class of bit pattern).
std::vector<op_case> parity_cases();

/// Runs every case on the host and on `target` and compares: bitwise when `exact`, else within
/// each case's tolerance (relative, at least absolute 1 * tolerance). Records gtest failures
/// naming the case, the backend and the element; also checks the cases are not vacuous.
void expect_parity(const exec_context& target, const std::string& name, bool exact);

/// One GEMM of the TF32 parity case: C = alpha op(A) op(B) + beta C0 with C [m, n] and inner
/// dimension k.
struct tf32_gemm_case {
  std::int64_t m, n, k;
  op op_a, op_b;
  float alpha, beta;
};

/// Computes one tf32_gemm_case on host inputs (A, B and C0 row-major as op_a / op_b store them)
/// and returns C row-major on the host.
using gemm_under_test =
    std::function<std::vector<float>(const tf32_gemm_case&, const std::vector<float>& a,
                                     const std::vector<float>& b, const std::vector<float>& c0)>;

/// The GEMM entry (kernels/dense/gemm.hpp) under `ctx`: uploads, gemm<float>, downloads.
gemm_under_test gemm_on(const exec_context& ctx);

/// The largest |C_tf32 - C_fp32| of one element of C = alpha op(A) op(B) + beta C0 that
/// --gemm-math tf32 may give (CUBLAS_TF32_TENSOR_OP_MATH) against the host's FP32 reference.
/// TF32 keeps 10 explicit mantissa bits of each FP32 input: the conversion changes an input by at
/// most u |x|, u = 2^-11 when it rounds to nearest and 2^-10 when it truncates (the Tensor Cores
/// may read only the leading 10 mantissa bits; cuBLAS does not say which), so u = 2^-10 here.
/// A product of two converted inputs is then within (2u + u^2) |a b| of the exact one; the k
/// products are accumulated in FP32 (unit roundoff eps = 2^-24) on both sides, each sum within
/// gamma_k = k eps / (1 - k eps) of its terms' absolute sum (Higham, "Accuracy and Stability of
/// Numerical Algorithms", 3.1); alpha acc + beta c0 costs at most two more roundings per side:
///   tol = |alpha| S (2u + u^2 + gamma_k ((1 + u)^2 + 1)) + 4 eps (|alpha| S + |beta c0|),
///   S = sum over the k terms of |op(A)_il| |op(B)_lj| (exact, in double).
/// The bound grows with k through gamma_k and with the values through S; for k = 64 it is about
/// 1.96e-3 |alpha| S. Pure.
double tf32_gemm_tolerance(std::int64_t k, double abs_alpha_s, double abs_beta_c0);

/// What check_gemm_within_tf32_bound found over every case.
struct tf32_gemm_report {
  std::int64_t elements = 0;  ///< elements of C compared
  std::int64_t outside = 0;   ///< elements beyond tf32_gemm_tolerance
  std::int64_t differ = 0;    ///< elements whose bits differ from the FP32 reference
  std::string first_outside;  ///< the first element beyond the bound: case, element, values,
                              ///< the bound and its terms
};

/// The TF32 case of the parity harness: GEMMs of every op combination, beta 0 and 1, k from 1 to
/// 300, on values in [-1, 1) with full 24-bit mantissas (so that the TF32 conversion changes
/// them; integer data would be exact), computed by `under_test` and by the host FP32 reference,
/// compared element by element with tf32_gemm_tolerance.
tf32_gemm_report check_gemm_within_tf32_bound(const gemm_under_test& under_test);

}  // namespace coopgnn::test
