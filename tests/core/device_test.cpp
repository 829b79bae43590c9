#include "runtime/core/device.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <set>
#include <string>
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

// Arguments: node-local GPU rank i, GPU ranks on the node L, --pes P, --pes-per-gpu K (n =
// ceil(P / K) devices per rank), visible devices V, CUDA_VISIBLE_DEVICES set.
TEST(RankDevices, DisjointBlocksWhenTheNodesDevicesSufficeForEveryRank) {
  using v = std::vector<int>;
  // 8 ranks x 1 PE on an 8-GPU node: rank i on GPU i.
  for (int i = 0; i < 8; ++i) {
    auto const r = choose_rank_devices(i, 8, 1, 1, 8, false);
    ASSERT_TRUE(r.ok()) << r.error;
    EXPECT_EQ(r.devices, v{i});
    EXPECT_TRUE(r.error.empty());
  }
  // 4 ranks x 4 PEs, 2 PEs per GPU -> n = 2: rank 0 {0,1}, 1 {2,3}, 2 {4,5}, 3 {6,7}.
  EXPECT_EQ(choose_rank_devices(0, 4, 4, 2, 8, false).devices, (v{0, 1}));
  EXPECT_EQ(choose_rank_devices(1, 4, 4, 2, 8, false).devices, (v{2, 3}));
  EXPECT_EQ(choose_rank_devices(3, 4, 4, 2, 8, false).devices, (v{6, 7}));
  // 3 PEs, 2 per GPU: n = ceil(3 / 2) = 2; rank 2 of 3 with 8 visible takes {4, 5} (6, 7 idle).
  EXPECT_EQ(choose_rank_devices(2, 3, 3, 2, 8, false).devices, (v{4, 5}));
  // One rank per node takes the whole node (--pes 8).
  EXPECT_EQ(choose_rank_devices(0, 1, 8, 1, 8, false).devices, (v{0, 1, 2, 3, 4, 5, 6, 7}));
  // Today's single-process placement: one rank, 2 PEs on one GPU.
  EXPECT_EQ(choose_rank_devices(0, 1, 2, 2, 1, false).devices, (v{0}));
  // A CUDA_VISIBLE_DEVICES that leaves the whole block visible changes nothing: 2 ranks x 2
  // GPUs among 4 visible.
  auto const r = choose_rank_devices(1, 2, 2, 1, 4, true);
  EXPECT_EQ(r.devices, (v{2, 3}));
  EXPECT_NE(r.reason.find("node-local GPU rank 1 of 2"), std::string::npos) << r.reason;
}

TEST(RankDevices, LauncherNarrowedVisibilityTakesTheFirstDevices) {
  using v = std::vector<int>;
  // srun --gpus-per-task=1 with 8 ranks on the node: each sees its own GPU as device 0.
  for (int i = 0; i < 8; ++i) {
    auto const r = choose_rank_devices(i, 8, 1, 1, 1, true);
    ASSERT_TRUE(r.ok()) << r.error;
    EXPECT_EQ(r.devices, v{0});
    EXPECT_NE(r.reason.find("CUDA_VISIBLE_DEVICES"), std::string::npos) << r.reason;
  }
  // --gpus-per-task=2, 4 ranks x 2 GPUs (n = 2): 4 x 2 = 8 > 2 visible -> {0, 1} on each.
  EXPECT_EQ(choose_rank_devices(3, 4, 2, 1, 2, true).devices, (v{0, 1}));
  // More visible than needed but fewer than the node's ranks need together: the first n.
  EXPECT_EQ(choose_rank_devices(2, 4, 1, 1, 3, true).devices, (v{0}));
}

TEST(RankDevices, TooFewDevicesIsAnErrorNamingTheNumbersAndTheFixes) {
  // 8 ranks x 1 GPU but only 4 visible and no CUDA_VISIBLE_DEVICES: they would share.
  auto const r = choose_rank_devices(5, 8, 1, 1, 4, false);
  EXPECT_FALSE(r.ok());
  EXPECT_TRUE(r.devices.empty());
  EXPECT_TRUE(r.reason.empty());
  for (const char* part :
       {"8 GPU ranks on this node need 1 CUDA device each", "--pes 1", "--pes-per-gpu 1",
        "8 in all", "this rank sees 4", "at most 4 GPU ranks per node", "ppr:4:node",
        "--gpus-per-task=1", "CUDA_VISIBLE_DEVICES"}) {
    EXPECT_NE(r.error.find(part), std::string::npos) << "missing '" << part << "': " << r.error;
  }
  // CUDA_VISIBLE_DEVICES set but too narrow for even one rank: 4 PEs / 1 per GPU, 2 visible.
  auto const narrow = choose_rank_devices(0, 2, 4, 1, 2, true);
  EXPECT_FALSE(narrow.ok());
  for (const char* part : {"2 GPU ranks on this node need 4 CUDA devices each", "8 in all",
                           "this rank sees 2 (CUDA_VISIBLE_DEVICES is set)", "Not even one rank",
                           "make 4 devices visible"}) {
    EXPECT_NE(narrow.error.find(part), std::string::npos)
        << "missing '" << part << "': " << narrow.error;
  }
  // No device at all.
  EXPECT_FALSE(choose_rank_devices(0, 1, 1, 1, 0, false).ok());
  // 2 ranks x 3 GPUs (--pes 6 --pes-per-gpu 2) among 4 visible, unset: 6 > 4 -> error, at most
  // floor(4 / 3) = 1 rank per node.
  auto const one = choose_rank_devices(1, 2, 6, 2, 4, false);
  EXPECT_FALSE(one.ok());
  EXPECT_NE(one.error.find("at most 1 GPU rank per node"), std::string::npos) << one.error;
}

TEST(RankDevices, RefusesBadArguments) {
  EXPECT_THROW((void)choose_rank_devices(0, 0, 1, 1, 1, false), logic_error);
  EXPECT_THROW((void)choose_rank_devices(2, 2, 1, 1, 4, false), logic_error);
  EXPECT_THROW((void)choose_rank_devices(-1, 2, 1, 1, 4, false), logic_error);
  EXPECT_THROW((void)choose_rank_devices(0, 1, 0, 1, 1, false), logic_error);
  EXPECT_THROW((void)choose_rank_devices(0, 1, 1, 0, 1, false), logic_error);
  EXPECT_THROW((void)choose_rank_devices(0, 1, 1, 1, -1, false), logic_error);
}

TEST(RankDevices, UuidTextIsNvidiaSmisFormat) {
  std::array<unsigned char, 16> const b = {0x41, 0x25, 0x54, 0x06, 0xc9, 0xaf, 0xf9, 0x4b,
                                           0x4e, 0xbf, 0x9d, 0x57, 0xad, 0x18, 0x53, 0xda};
  EXPECT_EQ(format_device_uuid(b), "GPU-41255406-c9af-f94b-4ebf-9d57ad1853da");
}

TEST(Device, IdentityQueryCoversEveryVisibleDeviceAndRefusesOthers) {
  int const n = query_devices().count;
  EXPECT_ANY_THROW((void)query_device_identity(n));
  EXPECT_ANY_THROW((void)query_device_identity(-1));
  std::set<std::string> uuids;
  for (int d = 0; d < n; ++d) {
    device_identity const id = query_device_identity(d);
    EXPECT_EQ(id.uuid.size(), 40u) << id.uuid;  // "GPU-" + 32 hex digits + 4 dashes
    EXPECT_FALSE(id.pci_bus_id.empty());
    EXPECT_TRUE(uuids.insert(id.uuid).second) << "device " << d << " repeats " << id.uuid;
  }
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
