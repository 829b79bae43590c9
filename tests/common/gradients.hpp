// Finite-difference gradient checks shared by the kernel and layer tests (docs/design.md section
// 12, tests: every backward against central differences; ggml's habit).
#pragma once

#include <functional>
#include <span>
#include <string>

#include "runtime/core/matrix.hpp"

namespace coopgnn::test {

/// Central differences (step h) of loss() with respect to every element of `var` (each restored
/// afterwards), compared norm-wise with the analytic gradient:
/// ||analytic - numeric|| / max(||analytic||, ||numeric||) < rel_tol. Records gtest failures
/// naming `what`; fails when both gradients are all zero (the check would be vacuous).
void expect_gradient(const std::string& what, std::span<double> var,
                     std::span<const double> analytic, const std::function<double()>& loss,
                     double h = 1e-6, double rel_tol = 1e-6);
/// The same on a matrix variable and its analytic gradient (shapes must agree).
void expect_gradient(const std::string& what, matrix<double>& var, const matrix<double>& analytic,
                     const std::function<double()>& loss, double h = 1e-6);

}  // namespace coopgnn::test
