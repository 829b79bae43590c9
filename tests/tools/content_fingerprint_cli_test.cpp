// The dataset's content fingerprint on the command line (pipeline/checkpoint.hpp,
// dataset_fingerprint; docs/usage.md "Checkpoints"): `train --resume`, `predict` and `embed`
// refuse a copy of the dataset whose split or any feature row differs, naming what differs; an
// unchanged copy, or the same dataset with its features left in their file, resumes; a
// checkpoint or model written with the older fingerprint still resumes and loads.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "runtime/graph/npy.hpp"
#include "tests/common/cli.hpp"
#include "tests/common/files.hpp"

namespace coopgnn {
namespace {

namespace fs = std::filesystem;
using test::run_train_cli;
using test::temp_dir;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

std::vector<std::string> with(std::vector<std::string> args, const std::vector<std::string>& more) {
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

/// A copy of the bundled Cora at dir/name.
fs::path cora_copy(const fs::path& dir, const std::string& name) {
  fs::path const dst = dir / name;
  fs::copy(fs::path(COOPGNN_SOURCE_DIR) / "data" / "cora", dst, fs::copy_options::recursive);
  return dst;
}

/// Rewrites the int64 .npy `file` after `edit` changed its values.
template <class F>
void edit_int64(const fs::path& file, F&& edit) {
  auto a = read_npy<std::int64_t>(file);
  edit(a.data);
  fs::remove(file);
  write_npy(file, std::span<const std::int64_t>(a.data), std::span<const std::int64_t>(a.shape));
}

/// Sets the identity's dataset.content of the manifest `file` to `content` (what an older
/// coopgnn wrote).
void set_recorded_content(const fs::path& file, const std::string& content) {
  auto j = nlohmann::json::parse(test::read_text(file));
  ASSERT_TRUE(j.contains("identity")) << file;
  j["identity"]["dataset.content"] = content;
  test::write_text(file, j.dump(1));
}

struct trained {
  fs::path checkpoint;
  fs::path model;
};

/// One epoch on the bundled Cora, checkpointed under dir/ck and saved to dir/model.
trained train_once(const temp_dir& d) {
  trained t{d / "ck", d / "model"};
  EXPECT_EQ(run_train_cli(
                with(test::tiny_run_args("train", "8", "1"),
                     {"--checkpoint", t.checkpoint.string(), "--save-model", t.model.string()})),
            "");
  return t;
}

std::string resume_on(const trained& t, const fs::path& dataset,
                      const std::vector<std::string>& more = {}) {
  return run_train_cli(with(test::tiny_run_args("train", "8", "2", more, dataset.string()),
                            {"--resume", t.checkpoint.string()}));
}

std::string predict_on(const trained& t, const fs::path& dataset, const fs::path& out) {
  return run_train_cli({"predict", "--model", t.model.string(), "--dataset", dataset.string(),
                        "--out", out.string()});
}

TEST(ContentFingerprintCli, ResumeOnAnotherTrainSplitIsRefusedNamingTheSplit) {
  temp_dir d;
  trained const t = train_once(d);
  // The same sizes (140 training vertices): train vertex 0 and test vertex 0 trade places.
  fs::path const other = cora_copy(d.path(), "cora");
  auto const set = other / "set";
  std::int64_t train0 = 0;
  std::int64_t test0 = 0;
  edit_int64(set / "train_seeds.npy", [&](std::vector<std::int64_t>& v) { train0 = v.at(0); });
  edit_int64(set / "test_seeds.npy", [&](std::vector<std::int64_t>& v) {
    test0 = v.at(0);
    v[0] = train0;
  });
  edit_int64(set / "train_seeds.npy", [&](std::vector<std::int64_t>& v) { v[0] = test0; });
  std::int64_t train_label = 0;
  std::int64_t test_label = 0;
  edit_int64(set / "train_labels.npy",
             [&](std::vector<std::int64_t>& v) { train_label = v.at(0); });
  edit_int64(set / "test_labels.npy", [&](std::vector<std::int64_t>& v) {
    test_label = v.at(0);
    v[0] = train_label;
  });
  edit_int64(set / "train_labels.npy", [&](std::vector<std::int64_t>& v) { v[0] = test_label; });
  ASSERT_NE(train0, test0);

  auto const why = resume_on(t, other);
  EXPECT_THAT(why, AllOf(HasSubstr("cannot resume"), HasSubstr("dataset.content"),
                         HasSubstr("other split")));
  EXPECT_THAT(why, AllOf(Not(HasSubstr("other features")), Not(HasSubstr("edges and")),
                         Not(HasSubstr("and labels"))));
  auto const msg = predict_on(t, other, d / "p.npy");
  EXPECT_THAT(msg, AllOf(HasSubstr("other content"), HasSubstr("split differ"))) << msg;
}

TEST(ContentFingerprintCli, ResumeWithTwoFeatureRowsChangedIsRefusedNamingTheFeatures) {
  temp_dir d;
  trained const t = train_once(d);
  // Rows 1 and 2 of 2708: no row an evenly spaced sample of 64 rows would read.
  fs::path const other = cora_copy(d.path(), "cora");
  auto const feat = other / "data" / "feat.npy";
  auto a = read_npy<float>(feat);
  ASSERT_EQ(a.shape.size(), 2U);
  std::int64_t const cols = a.shape[1];
  a.data.at(static_cast<std::size_t>(1 * cols)) += 1.0f;
  a.data.at(static_cast<std::size_t>(2 * cols + 5)) += 1.0f;
  fs::remove(feat);
  write_npy(feat, std::span<const float>(a.data), std::span<const std::int64_t>(a.shape));

  auto const why = resume_on(t, other);
  EXPECT_THAT(why, AllOf(HasSubstr("cannot resume"), HasSubstr("other features")));
  EXPECT_THAT(why, AllOf(Not(HasSubstr("features and")), Not(HasSubstr("edges and"))));
  auto const msg = predict_on(t, other, d / "p.npy");
  EXPECT_THAT(msg, AllOf(HasSubstr("other content"), HasSubstr("features differ"))) << msg;
}

TEST(ContentFingerprintCli, AnUnchangedCopyAndMappedFeaturesResume) {
  temp_dir d;
  trained const t = train_once(d);
  fs::path const copy = cora_copy(d.path(), "cora");
  EXPECT_EQ(resume_on(t, copy), "");
  // The features left in their file: the same content.
  EXPECT_EQ(resume_on(t, copy, {"--feature-storage", "mmap"}), "");
  EXPECT_EQ(predict_on(t, copy, d / "p.npy"), "");
}

TEST(ContentFingerprintCli, OlderFingerprintsStillResumeAndLoad) {
  temp_dir d;
  trained const t = train_once(d);
  // What the previous version recorded: edges and sampled feature rows (FNV-1a).
  std::string const older = "edges:0123456789abcdef features:fedcba9876543210";
  for (auto const& e : fs::directory_iterator(t.checkpoint)) {
    if (fs::exists(e.path() / "manifest.json"))
      set_recorded_content(e.path() / "manifest.json", older);
  }
  set_recorded_content(t.model / "manifest.json", older);
  EXPECT_EQ(resume_on(t, fs::path(COOPGNN_SOURCE_DIR) / "data" / "cora"), "");
  EXPECT_EQ(predict_on(t, fs::path(COOPGNN_SOURCE_DIR) / "data" / "cora", d / "p.npy"), "");
}

}  // namespace
}  // namespace coopgnn
