// Central finite differences against analytic gradients (DESIGN.md section 8: every backward
// is checked in double precision on the host).
#pragma once

#include <functional>
#include <span>
#include <string>

#include "runtime/core/matrix.hpp"

namespace coopgnn::test {

/// Central differences of loss() with respect to every element of `var` (perturbed in place by
/// +-h and restored), compared norm-wise with `analytic`: records a gtest failure when
/// ||analytic - numeric|| / max(||analytic||, ||numeric||) >= 1e-6, or when both are all zero
/// (the check would be vacuous).
void expect_gradient(const std::string& what, std::span<double> var,
                     std::span<const double> analytic, const std::function<double()>& loss,
                     double h = 1e-6);
void expect_gradient(const std::string& what, matrix<double>& var, const matrix<double>& analytic,
                     const std::function<double()>& loss, double h = 1e-6);

}  // namespace coopgnn::test
