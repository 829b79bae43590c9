// Saved models (pipeline/checkpoint.hpp; docs/usage.md "Saved models"): model.npz holds
// one named float32 array per tensor and manifest.json lists name, shape, dtype and order of
// each; version 1 models (one flat params.npy) are still read; tampered files are named.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <zlib.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <numeric>
#include <string>
#include <vector>

#include "runtime/core/error.hpp"
#include "runtime/graph/npy.hpp"
#include "runtime/graph/npz.hpp"
#include "pipeline/checkpoint.hpp"
#include "tests/common/files.hpp"

namespace coopgnn {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using nlohmann::json;

/// GraphSAGE 5 -> 4 -> 3, two layers, no head: six tensors.
models::model_config sage_config() {
  models::model_config c;
  c.kind = models::conv_kind::sage;
  c.in_dim = 5;
  c.hidden = 4;
  c.num_classes = 3;
  c.num_layers = 2;
  return c;
}

/// The tensors of sage_config() in params() order, written out here (name, rows, cols).
struct tensor_row {
  std::string name;
  std::int64_t rows, cols;
};
std::vector<tensor_row> const kSageTensors = {
    {"sage0.w_self", 5, 4}, {"sage0.w_neigh", 5, 4}, {"sage0.bias", 1, 4},
    {"sage1.w_self", 4, 3}, {"sage1.w_neigh", 4, 3}, {"sage1.bias", 1, 3}};

/// 5*4*2 + 4 + 4*3*2 + 3 = 71 parameters, value i = i / 2 (exact in float).
saved_model sage_model() {
  saved_model m;
  m.config = sage_config();
  m.params.resize(71);
  for (std::size_t i = 0; i < m.params.size(); ++i) m.params[i] = static_cast<float>(i) / 2;
  m.identity = {{"dataset", "toy"}, {"dataset.num_nodes", 9}};
  return m;
}

TEST(SavedModel, NpzHoldsOneNamedArrayPerTensorAndTheManifestListsThem) {
  test::temp_dir dir;
  auto const m = sage_model();
  write_saved_model(dir.path(), m);
  json const man = json::parse(test::read_text(dir.path() / "manifest.json"));
  EXPECT_EQ(man["version"], 2);
  EXPECT_EQ(man["kind"], "model");
  EXPECT_EQ(man["file"]["file"], "model.npz");
  EXPECT_EQ(man["transductive"], false);
  EXPECT_EQ(man["identity"]["dataset"], "toy");
  ASSERT_EQ(man["tensors"].size(), kSageTensors.size());
  npz_archive const npz(dir.path() / "model.npz");
  std::int64_t offset = 0;
  for (std::size_t i = 0; i < kSageTensors.size(); ++i) {
    auto const& want = kSageTensors[i];
    auto const& t = man["tensors"][i];
    EXPECT_EQ(t["name"], want.name);
    EXPECT_EQ(t["shape"], (std::vector<std::int64_t>{want.rows, want.cols}));
    EXPECT_EQ(t["dtype"], "float32");
    EXPECT_EQ(t["order"], "C");
    EXPECT_EQ(t["role"], "parameter");
    auto const a = npz.read<float>(want.name);
    EXPECT_EQ(a.stored, npy_dtype::float32);
    EXPECT_EQ(a.shape, (std::vector<std::int64_t>{want.rows, want.cols}));
    for (std::int64_t k = 0; k < want.rows * want.cols; ++k) {
      ASSERT_EQ(a.data[static_cast<std::size_t>(k)], static_cast<float>(offset + k) / 2)
          << want.name << " element " << k;
    }
    offset += want.rows * want.cols;
  }
  EXPECT_EQ(offset, 71);
  EXPECT_EQ(npz.members().size(), kSageTensors.size());
}

TEST(SavedModel, RoundTripsParametersTensorsAndEmbeddings) {
  test::temp_dir dir;
  auto m = sage_model();
  m.embeddings = matrix<float>(9, 5);
  for (std::int64_t i = 0; i < 45; ++i) m.embeddings->values()[static_cast<std::size_t>(i)] = i;
  write_saved_model(dir.path(), m);
  json const man = json::parse(test::read_text(dir.path() / "manifest.json"));
  EXPECT_EQ(man["transductive"], true);
  EXPECT_EQ(man["tensors"].back()["name"], "embeddings");
  EXPECT_EQ(man["tensors"].back()["role"], "embedding");
  EXPECT_EQ(man["tensors"].back()["shape"], (std::vector<std::int64_t>{9, 5}));
  saved_model const back = read_saved_model(dir.path());
  EXPECT_EQ(back.params, m.params);
  ASSERT_TRUE(back.embeddings.has_value());
  EXPECT_EQ(back.embeddings->values(), m.embeddings->values());
  ASSERT_EQ(back.tensors.size(), kSageTensors.size());
  for (std::size_t i = 0; i < kSageTensors.size(); ++i) {
    EXPECT_EQ(back.tensors[i].name, kSageTensors[i].name);
  }
  auto const model = build_saved_model(back, exec_context(backend::host), "manifest");
  EXPECT_EQ(model->num_parameters(), 71);
}

TEST(SavedModel, ReadsAVersionOneModel) {
  // The layout before named tensors: params.npy (flat float32) listed under "arrays" with its
  // byte size and CRC-32 (zlib's, computed here).
  test::temp_dir dir;
  auto const m = sage_model();
  write_saved_model(dir.path(), m);
  json man = json::parse(test::read_text(dir.path() / "manifest.json"));
  fs::remove(dir.path() / "model.npz");
  write_npy(dir.path() / "params.npy", std::span<const float>(m.params),
            std::vector<std::int64_t>{71});
  std::string const bytes = test::read_text(dir.path() / "params.npy");
  auto const crc = crc32(0L, reinterpret_cast<const Bytef*>(bytes.data()),
                         static_cast<uInt>(bytes.size()));
  json v1 = {{"format", man["format"]},
             {"version", 1},
             {"kind", "model"},
             {"model", man["model"]},
             {"identity", man["identity"]},
             {"arrays",
              {{"params",
                {{"file", "params.npy"},
                 {"dtype", "float32"},
                 {"shape", {71}},
                 {"bytes", bytes.size()},
                 {"crc32", crc}}}}}};
  test::write_text(dir.path() / "manifest.json", v1.dump());
  saved_model const back = read_saved_model(dir.path());
  EXPECT_EQ(back.params, m.params);
  EXPECT_TRUE(back.tensors.empty());
  EXPECT_EQ(build_saved_model(back, exec_context(backend::host), "m")->num_parameters(), 71);
}

TEST(SavedModel, TamperedFilesAreNamed) {
  auto const m = sage_model();
  {
    // A manifest shape that is not the archive's.
    test::temp_dir dir;
    write_saved_model(dir.path(), m);
    json man = json::parse(test::read_text(dir.path() / "manifest.json"));
    man["tensors"][1]["shape"] = {4, 5};
    test::write_text(dir.path() / "manifest.json", man.dump());
    auto const why = test::error_of([&] { (void)read_saved_model(dir.path()); });
    EXPECT_THAT(why, HasSubstr("tensor 'sage0.w_neigh' is float32 (5, 4), the manifest says "
                               "float32 (4, 5)"));
  }
  {
    // A tensor the archive does not hold.
    test::temp_dir dir;
    write_saved_model(dir.path(), m);
    json man = json::parse(test::read_text(dir.path() / "manifest.json"));
    man["tensors"][0]["name"] = "layers.0.weight";
    test::write_text(dir.path() / "manifest.json", man.dump());
    auto const why = test::error_of([&] { (void)read_saved_model(dir.path()); });
    EXPECT_THAT(why, HasSubstr("no tensor 'layers.0.weight'"));
    EXPECT_THAT(why, HasSubstr("sage0.w_self"));
  }
  {
    // A flipped byte in the archive fails its checksum.
    test::temp_dir dir;
    write_saved_model(dir.path(), m);
    std::string bytes = test::read_text(dir.path() / "model.npz");
    bytes[bytes.size() / 2] = static_cast<char>(bytes[bytes.size() / 2] ^ 0x40);
    test::write_text(dir.path() / "model.npz", bytes);
    auto const why = test::error_of([&] { (void)read_saved_model(dir.path()); });
    EXPECT_THAT(why, HasSubstr("model.npz"));
    EXPECT_THAT(why, HasSubstr("CRC-32"));
  }
  {
    // Tensors that are not the configuration's (a different layer order).
    saved_model back = [&] {
      test::temp_dir dir;
      write_saved_model(dir.path(), m);
      return read_saved_model(dir.path());
    }();
    std::swap(back.tensors[0].name, back.tensors[1].name);
    auto const why = test::error_of(
        [&] { (void)build_saved_model(back, exec_context(backend::host), "manifest"); });
    EXPECT_THAT(why, HasSubstr("manifest: tensor 0 is sage0.w_neigh [5, 4], the model "
                               "configuration's is sage0.w_self [5, 4]"));
  }
  {
    // Not a model directory at all.
    test::temp_dir dir;
    auto const why = test::error_of([&] { (void)read_saved_model(dir.path()); });
    EXPECT_THAT(why, HasSubstr("manifest.json: missing"));
  }
}

TEST(SavedModel, WriterRefusesParametersOfAnotherLength) {
  test::temp_dir dir;
  auto m = sage_model();
  m.params.pop_back();
  auto const why = test::error_of<error>([&] { write_saved_model(dir.path(), m); });
  EXPECT_THAT(why, HasSubstr("70 parameters, the model configuration has 71"));
}

}  // namespace
}  // namespace coopgnn
