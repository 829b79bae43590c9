#include "runtime/core/device.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "runtime/core/error.hpp"

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

// PE p runs on device p / K: 7 PEs, 3 per device -> devices of 3, 3 and 1 PEs.
TEST(Device, BytesPerDeviceCountsThePesPlacedOnEachDevice) {
  EXPECT_EQ(bytes_per_device(100, 5, 7, 3), (std::vector<std::uint64_t>{305, 305, 105}));
  EXPECT_EQ(bytes_per_device(100, 5, 4, 1), (std::vector<std::uint64_t>{105, 105, 105, 105}));
  EXPECT_EQ(bytes_per_device(100, 5, 2, 8), (std::vector<std::uint64_t>{205}));
  EXPECT_EQ(bytes_per_device(0, 0, 1, 1), (std::vector<std::uint64_t>{0}));
  // Saturates instead of wrapping.
  EXPECT_EQ(bytes_per_device(UINT64_MAX / 2, 10, 4, 4), (std::vector<std::uint64_t>{UINT64_MAX}));
  EXPECT_EQ(bytes_per_device(1, UINT64_MAX, 1, 1), (std::vector<std::uint64_t>{UINT64_MAX}));
  EXPECT_THROW((void)bytes_per_device(1, 1, 0, 1), logic_error);
  EXPECT_THROW((void)bytes_per_device(1, 1, 1, 0), logic_error);
}

TEST(Device, MemoryQueryReportsAVisibleDeviceAndRefusesOthers) {
  int const n = query_devices().count;
  EXPECT_ANY_THROW((void)query_device_memory(n));  // one past the last (device 0 without any)
  EXPECT_ANY_THROW((void)query_device_memory(-1));
  for (int d = 0; d < n; ++d) {
    device_memory const m = query_device_memory(d);
    EXPECT_GT(m.total_bytes, 0u) << "device " << d;
    EXPECT_LE(m.free_bytes, m.total_bytes) << "device " << d;
  }
}

}  // namespace
}  // namespace coopgnn
