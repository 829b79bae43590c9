// Memory that knows where it lives (runtime/core/memory.hpp): host buffers adopt and release
// their storage without a copy; emulated-device buffers are separate, poisoned allocations that
// host code reads only through a download; copies cross spaces only when asked; views keep
// their space; wrong spaces are errors naming the operand.
#include "runtime/core/memory.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace coopgnn {
namespace {

exec_context const host;
exec_context const emulated(backend::emulated);

TEST(Memory, HostBuffersAreZeroAndAdoptWithoutACopy) {
  buffer<float> z(host, 5);
  ASSERT_EQ(z.size(), 5u);
  for (float v : z.host()) EXPECT_EQ(v, 0.0f);
  std::vector<std::int64_t> v = {3, 1, 4, 1, 5};
  const std::int64_t* storage = v.data();
  auto b = buffer<std::int64_t>::adopt(std::move(v));
  EXPECT_EQ(b.data(), storage);
  EXPECT_EQ(b.space(), memory_space::host);
  auto back = std::move(b).release_host();
  EXPECT_EQ(back.data(), storage);
  EXPECT_EQ(back, (std::vector<std::int64_t>{3, 1, 4, 1, 5}));
  EXPECT_TRUE(b.empty());
  // to_space on a host context adopts too.
  std::vector<int> w = {7, 8};
  const int* ws = w.data();
  auto t = to_space(host, std::move(w));
  EXPECT_EQ(t.data(), ws);
}

TEST(Memory, NoInitBuffersHoldWhatIsWrittenAndMoveOut) {
  buffer<std::int64_t> b(host, 4, no_init);
  ASSERT_EQ(b.size(), 4u);
  ASSERT_NE(b.data(), nullptr);
  EXPECT_EQ(b.space(), memory_space::host);
#ifndef NDEBUG
  // Debug builds poison unwritten storage as the emulated device does.
  for (auto x : b.host()) EXPECT_EQ(x, -1);
#endif
  for (std::size_t i = 0; i < b.size(); ++i) b.host()[i] = static_cast<std::int64_t>(10 + i);
  buffer<std::int64_t> moved = std::move(b);
  EXPECT_TRUE(b.empty());
  EXPECT_EQ(moved.size(), 4u);
  auto back = std::move(moved).release_host();  // a copy out of the unset storage
  EXPECT_EQ(back, (std::vector<std::int64_t>{10, 11, 12, 13}));
  EXPECT_TRUE(moved.empty());
  buffer<float> none(host, 0, no_init);
  EXPECT_TRUE(none.empty());
  tensor<float> t(host, 3, 2, no_init);
  EXPECT_EQ(t.rows(), 3);
  EXPECT_EQ(t.cols(), 2);
  EXPECT_EQ(t.storage().size(), 6u);
  EXPECT_THROW((tensor<float>(host, -1, 2, no_init)), logic_error);
  // On a device context no_init is the ordinary (unset) device allocation.
  buffer<float> d(emulated, 3, no_init);
  EXPECT_EQ(d.space(), memory_space::device);
  for (float x : download<float>(emulated, d.view())) EXPECT_TRUE(std::isnan(x));
}

TEST(Memory, EmulatedDeviceMemoryIsPoisonedAndOnlyReadableByDownload) {
  buffer<float> f(emulated, 3);
  buffer<std::int64_t> i(emulated, 2);
  EXPECT_EQ(f.space(), memory_space::device);
  EXPECT_THROW((void)f.host(), logic_error);
  EXPECT_THROW((void)std::move(i).release_host(), logic_error);
  auto const fv = download<float>(emulated, f.view());
  for (float x : fv) EXPECT_TRUE(std::isnan(x)) << "fresh device memory must read as poison";
  auto const iv = download<std::int64_t>(emulated, i.view());
  for (auto x : iv) EXPECT_EQ(x, -1);
  fill_zero(emulated, f.view());
  for (float x : download<float>(emulated, f.view())) EXPECT_EQ(x, 0.0f);
  // Uploads are copies into a separate allocation: changing the source changes nothing there.
  std::vector<float> src = {1.5f, 2.5f};
  auto up = upload<float>(emulated, src);
  EXPECT_NE(up.data(), src.data());
  src[0] = 9.0f;
  EXPECT_EQ(download<float>(emulated, up.view()), (std::vector<float>{1.5f, 2.5f}));
  auto const zero = zeros<float>(emulated, 2, 3);
  auto const zm = download<float>(emulated, zero.view());
  for (float x : zm.values()) EXPECT_EQ(x, 0.0f);
}

TEST(Memory, TensorsViewsAndCopiesKeepShapesAndSpaces) {
  matrix<float> m(2, 3, std::vector<float>{1, 2, 3, 4, 5, 6});
  auto d = upload(emulated, m);
  EXPECT_EQ(d.rows(), 2);
  EXPECT_EQ(d.cols(), 3);
  auto const first = d.view().first_rows(1);
  EXPECT_EQ(first.rows, 1);
  EXPECT_EQ(first.space, memory_space::device);
  EXPECT_THROW((void)d.view().first_rows(3), logic_error);
  EXPECT_THROW((void)d.view().host_row(0), logic_error);
  EXPECT_EQ(download<float>(emulated, first)(0, 2), 3.0f);
  auto back = download<float>(emulated, d.view());
  EXPECT_EQ(back.values(), m.values());
  // Host tensors adopt a matrix and give it back without a copy.
  const float* storage = m.data();
  auto t = tensor<float>::adopt(std::move(m));
  EXPECT_EQ(t.data(), storage);
  auto again = std::move(t).release_host();
  EXPECT_EQ(again.data(), storage);
  // Buffer and shape must agree; sizes of a copy must agree.
  EXPECT_THROW(tensor<float>(buffer<float>(host, 5), 2, 3), logic_error);
  buffer<float> a(host, 2), b(host, 3);
  EXPECT_THROW(copy<float>(host, a.view(), b.view()), logic_error);
  EXPECT_THROW((void)b.view().sub(2, 2), logic_error);
}

TEST(Memory, ContextsSayWhereTheyCompute) {
  EXPECT_EQ(host.space(), memory_space::host);
  EXPECT_EQ(emulated.space(), memory_space::device);
  EXPECT_TRUE(emulated.runs_on_host());
  EXPECT_EQ(emulated.cuda(), nullptr);
  EXPECT_EQ(host.with_threads(0).threads(), 1);
  EXPECT_EQ(host.with_threads(3).threads(), 3);
  // A CUDA context needs a cuda_context: asking for one without it is an error.
  EXPECT_THROW(exec_context(backend::cuda), logic_error);
  // Host contexts have no device memory, and a device view is not copied on a host context.
  buffer<float> d(emulated, 1);
  std::vector<float> h(1);
  EXPECT_THROW(copy<float>(host, host_view(h), d.view()), logic_error);
  try {
    detail::expect_space(emulated, memory_space::host, "op", "x");
    FAIL() << "expected logic_error";
  } catch (const logic_error& e) {
    std::string const msg = e.what();
    EXPECT_NE(msg.find("op: x is host memory"), std::string::npos) << msg;
    EXPECT_NE(msg.find("emulated"), std::string::npos) << msg;
  }
}

}  // namespace
}  // namespace coopgnn
