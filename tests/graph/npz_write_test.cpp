// write_npz (runtime/graph/npz.hpp): numpy.savez's layout, one stored .npy member per array, read
// back by npz_archive; bad members are refused before anything is written.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <zip.h>

#include <string>
#include <vector>

#include "runtime/core/error.hpp"
#include "runtime/graph/npz.hpp"
#include "tests/common/files.hpp"

namespace coopgnn {
namespace {

using ::testing::HasSubstr;

TEST(WriteNpz, MembersRoundTripInOrderUncompressed) {
  test::temp_dir dir;
  std::vector<float> const a = {1, 2, 3, 4, 5, 6};
  std::vector<float> const b = {-0.5f};
  std::vector<npz_float32_member> const members = {{"layer.0.weight", a, {2, 3}},
                                                   {"bias", b, {1}},
                                                   {"empty", {}, {0, 4}}};
  auto const file = dir.path() / "m.npz";
  write_npz(file, members);
  npz_archive const z(file);
  EXPECT_EQ(z.members(), (std::vector<std::string>{"layer.0.weight", "bias", "empty"}));
  auto const ra = z.read<float>("layer.0.weight");
  EXPECT_EQ(ra.shape, (std::vector<std::int64_t>{2, 3}));
  EXPECT_EQ(ra.data, a);
  EXPECT_EQ(ra.stored, npy_dtype::float32);
  EXPECT_EQ(z.read<float>("bias.npy").data, b);
  EXPECT_EQ(z.read<float>("empty").shape, (std::vector<std::int64_t>{0, 4}));
  // numpy.savez stores members uncompressed: check the zip directory says so.
  int err = 0;
  zip_t* za = zip_open(file.c_str(), ZIP_RDONLY, &err);
  ASSERT_NE(za, nullptr);
  zip_stat_t st;
  ASSERT_EQ(zip_stat(za, "layer.0.weight.npy", 0, &st), 0);
  EXPECT_EQ(st.comp_method, ZIP_CM_STORE);
  zip_discard(za);
  // Rewriting replaces the archive.
  write_npz(file, std::vector<npz_float32_member>{{"only", b, {1, 1}}});
  EXPECT_EQ(npz_archive(file).members(), (std::vector<std::string>{"only"}));
}

TEST(WriteNpz, RefusesBadMembers) {
  test::temp_dir dir;
  std::vector<float> const a = {1, 2, 3};
  auto const file = dir.path() / "bad.npz";
  EXPECT_THAT(test::error_of<error>([&] {
                write_npz(file, std::vector<npz_float32_member>{{"w", a, {2, 2}}});
              }),
              HasSubstr("member 'w' has 3 values, its shape (2, 2) holds 4"));
  EXPECT_THAT(test::error_of<error>([&] {
                write_npz(file, std::vector<npz_float32_member>{{"w", a, {3}}, {"w", a, {3}}});
              }),
              HasSubstr("member 'w' appears twice"));
  EXPECT_THAT(test::error_of<error>([&] {
                write_npz(file, std::vector<npz_float32_member>{{"", a, {3}}});
              }),
              HasSubstr("member 0 has no name"));
  EXPECT_FALSE(std::filesystem::exists(file));
  EXPECT_THAT(test::error_of<error>([&] {
                write_npz(dir.path() / "no" / "such" / "dir.npz",
                          std::vector<npz_float32_member>{{"w", a, {3}}});
              }),
              HasSubstr("cannot write the .npz archive"));
}

}  // namespace
}  // namespace coopgnn
