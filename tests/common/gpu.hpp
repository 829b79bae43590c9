// GPU test helpers: tests that need a device skip with the reason when none is present
// (docs/design.md section 12; tests/CMakeLists.txt labels *_gpu_test.cpp files `gpu`).
#pragma once

#include <gtest/gtest.h>

#include "runtime/core/device.hpp"

/// First statement of a GPU test: GTEST_SKIP()s with "no CUDA device: <reason>" when
/// coopgnn::query_devices() finds none.
#define COOPGNN_REQUIRE_DEVICE()                                     \
  do {                                                               \
    auto const coopgnn_devices_ = ::coopgnn::query_devices();        \
    if (coopgnn_devices_.count == 0) {                               \
      GTEST_SKIP() << "no CUDA device: " << coopgnn_devices_.reason; \
    }                                                                \
  } while (0)
