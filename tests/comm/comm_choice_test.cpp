// Choice of the device communicator (runtime/comm/device_comm.hpp): pure host logic, so it runs
// on every machine. The expected kinds follow the documented rule, written out by hand.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "runtime/comm/device_comm.hpp"
#include "runtime/core/error.hpp"

namespace coopgnn {
namespace {

struct choice_usecase {
  std::vector<int> devices;
  std::string option;
  device_comm_kind expected;
};

std::ostream& operator<<(std::ostream& os, const choice_usecase& u) {
  os << u.option << " {";
  for (int d : u.devices) os << d << ",";
  return os << "} -> " << to_string(u.expected);
}

class CommChoiceTest : public ::testing::TestWithParam<choice_usecase> {};

TEST_P(CommChoiceTest, FollowsTheRule) {
  auto const& u = GetParam();
  EXPECT_EQ(choose_device_comm(u.devices, u.option), u.expected) << u;
}

INSTANTIATE_TEST_SUITE_P(Rule, CommChoiceTest,
                         ::testing::Values(
                             // auto: all PEs on one device -> peer copies
                             choice_usecase{{0, 0, 0, 0}, "auto", device_comm_kind::peer},
                             // auto: one device per PE -> NCCL
                             choice_usecase{{0, 1, 2, 3}, "auto", device_comm_kind::nccl},
                             choice_usecase{{3, 1}, "auto", device_comm_kind::nccl},
                             // auto: some devices shared -> NCCL cannot, peer copies
                             choice_usecase{{0, 0, 1, 1}, "auto", device_comm_kind::peer},
                             choice_usecase{{0, 1, 2, 0}, "auto", device_comm_kind::peer},
                             // auto with one PE: nothing to connect, no NCCL setup
                             choice_usecase{{2}, "auto", device_comm_kind::peer},
                             // explicit choices
                             choice_usecase{{0, 1, 2, 3}, "peer", device_comm_kind::peer},
                             choice_usecase{{0, 0}, "peer", device_comm_kind::peer},
                             choice_usecase{{0, 1}, "nccl", device_comm_kind::nccl},
                             choice_usecase{{5}, "nccl", device_comm_kind::nccl}));

TEST(CommChoice, NcclWithASharedDeviceNamesTheOptionAndThePes) {
  std::vector<int> const devices = {0, 1, 2, 1};
  try {
    (void)choose_device_comm(devices, "nccl");
    FAIL() << "expected logic_error";
  } catch (const logic_error& e) {
    std::string const what = e.what();
    EXPECT_NE(what.find("device_comm=nccl"), std::string::npos) << what;
    EXPECT_NE(what.find("PEs 1 and 3 share device 1"), std::string::npos) << what;
  }
}

TEST(CommChoice, BadArgumentsAreLogicErrors) {
  std::vector<int> const ok = {0, 1};
  EXPECT_THROW((void)choose_device_comm(ok, "mpi"), logic_error);
  EXPECT_THROW((void)choose_device_comm(ok, ""), logic_error);
  EXPECT_THROW((void)choose_device_comm(std::vector<int>{}, "auto"), logic_error);
  EXPECT_THROW((void)choose_device_comm(std::vector<int>{0, -1}, "auto"), logic_error);
  try {
    (void)choose_device_comm(ok, "NCCL");
    FAIL() << "expected logic_error";
  } catch (const logic_error& e) {
    EXPECT_NE(std::string(e.what()).find("device_comm"), std::string::npos) << e.what();
  }
}

TEST(CommChoice, KindNames) {
  EXPECT_EQ(to_string(device_comm_kind::peer), "peer");
  EXPECT_EQ(to_string(device_comm_kind::nccl), "nccl");
}

TEST(CommChoice, FactoryRejectsAnEmptyGroup) {
  EXPECT_THROW((void)make_device_communicators({}, "auto"), logic_error);
}

}  // namespace
}  // namespace coopgnn
