// The op cases of the kernel parity harness (docs/design.md section 2), shared by
// tests/kernels/parity_test.cpp (the emulated device, every CI run) and
// tests/kernels/parity_gpu_test.cpp (CUDA, tools/device_check.sh): one list, every backend.
#pragma once

#include <functional>
#include <string>
#include <vector>

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

}  // namespace coopgnn::test
