#include "runtime/core/device.hpp"

#include <gtest/gtest.h>

namespace coopgnn {
namespace {

TEST(Device, QueryNeverThrowsAndExplainsAbsence) {
  device_info info;
  ASSERT_NO_THROW(info = query_devices());
  EXPECT_GE(info.count, 0);
  if (info.count == 0) {
    EXPECT_FALSE(info.reason.empty()) << "no device and no reason given";
  } else {
    EXPECT_FALSE(info.first_name.empty());
  }
}

}  // namespace
}  // namespace coopgnn
