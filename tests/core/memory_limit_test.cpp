// Limits on sizes declared by files (runtime/core/memory_limit.hpp).
#include "runtime/core/memory_limit.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/core/error.hpp"
#include "tests/common/files.hpp"

namespace coopgnn {
namespace {

using test::error_of;
using test::scoped_env;
using ::testing::HasSubstr;

TEST(MemoryLimit, EnvironmentOverridesMemAvailable) {
  scoped_env const env("COOPGNN_MEMORY_LIMIT", "12345");
  memory_limit const lim = host_memory_limit();
  EXPECT_EQ(lim.bytes, 12345u);
  EXPECT_EQ(lim.source, "COOPGNN_MEMORY_LIMIT");
}

TEST(MemoryLimit, UnparsableEnvironmentFallsBackToMeminfo) {
  scoped_env const env("COOPGNN_MEMORY_LIMIT", "12k");
  memory_limit const lim = host_memory_limit();
  EXPECT_NE(lim.source, "COOPGNN_MEMORY_LIMIT");
  EXPECT_GT(lim.bytes, 12345u);
}

TEST(MemoryLimit, SaturatingBytes) {
  EXPECT_EQ(saturating_bytes(0, 16), 0u);
  EXPECT_EQ(saturating_bytes(-5, 16), 0u);
  EXPECT_EQ(saturating_bytes(1000, 16), 16000u);
  // 2^60 * 16 = 2^64 does not fit: saturates.
  EXPECT_EQ(saturating_bytes(std::int64_t{1} << 60, 16), UINT64_MAX);
  EXPECT_EQ(saturating_bytes((std::int64_t{1} << 60) - 1, 16), UINT64_MAX - 15);
}

TEST(MemoryLimit, FormatBytes) {
  EXPECT_EQ(format_bytes(17), "17 B");
  EXPECT_EQ(format_bytes(1536), "1.50 KiB");
  EXPECT_EQ(format_bytes(std::uint64_t{3} << 30), "3.00 GiB");
  EXPECT_EQ(format_bytes(std::uint64_t{16} << 40), "16.00 TiB");
}

TEST(MemoryLimit, CheckDeclaredBytesNamesFileKeyValueAndLimit) {
  scoped_env const env("COOPGNN_MEMORY_LIMIT", "1000");
  EXPECT_NO_THROW(check_declared_bytes("f.yaml", "k", 62, 992, "16 bytes each"));
  EXPECT_NO_THROW(check_declared_bytes("f.yaml", "k", 62, 1000, "16 bytes each"));
  std::string const msg =
      error_of([] { check_declared_bytes("f.yaml", "graph.nodes[0].num", 63, 1008, "16 each"); });
  EXPECT_THAT(msg, HasSubstr("f.yaml: graph.nodes[0].num = 63 needs 1008 bytes (1008 B; 16 each) "
                             "but only 1000 bytes (1000 B) of memory are available "
                             "(COOPGNN_MEMORY_LIMIT;"));
}

TEST(MemoryLimit, OverflowingSizeIsRefusedEvenWithoutALimit) {
  scoped_env const env("COOPGNN_MEMORY_LIMIT", "18446744073709551615");
  EXPECT_NO_THROW(check_declared_bytes("f", "k", 1, UINT64_MAX - 1, "x"));
  EXPECT_THAT(error_of([] { check_declared_bytes("f", "k", 1, UINT64_MAX, "x"); }),
              HasSubstr("f: k = 1 needs >= 2^64 bytes"));
}

}  // namespace
}  // namespace coopgnn

namespace coopgnn {
namespace {

// The guard the declared-size tests rely on: a child that allocates past its slack fails.
TEST(MemoryLimit, LimitedChildReportsALargeAllocation) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  // ASan and TSan reserve terabytes of shadow address space at start-up, so the child's
  // RLIMIT_AS cannot be set low enough to catch a 1 GiB allocation; the plain builds run it.
  GTEST_SKIP() << "no address-space limit under sanitizers (their shadow memory needs TBs)";
#endif
  std::string const out = test::in_limited_child(8u << 20, [] {
    std::vector<char> big(std::size_t{1} << 30, 1);
    return std::string(1, big[12345]);
  });
  EXPECT_THAT(out, HasSubstr("<child failed: threw std::bad_alloc"));
  EXPECT_EQ(test::in_limited_child(8u << 20, [] { return std::string("small"); }), "small");
}

}  // namespace
}  // namespace coopgnn
