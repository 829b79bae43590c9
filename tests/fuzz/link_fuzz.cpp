// Fuzz target: link-prediction item sets (runtime/graph/dataset.hpp read_dataset): a fixed
// 8-vertex dataset directory whose one array is the input. Byte 0 picks the array (mod 6):
// 0 train seeds, 1 validation seeds, 2 validation negative_dsts, 3 test seeds, 4 test labels,
// 5 test indexes; the rest of the input is that .npy file. (byte 0 / 6) odd: the same arrays in
// a typed directory (node types paper and author, 8 each; relations author:writes:paper and
// paper:cites:paper; item sets typed by relation, validation split over both relations), read
// with dataset_read_options::heterogeneous.
#include <array>
#include <span>
#include <string_view>

#include "runtime/graph/dataset.hpp"
#include "tests/fuzz/fuzz_common.hpp"

namespace {

// Flow style, one set per line: train seeds; validation seeds + negative_dsts; test seeds +
// labels + indexes (every path a file of kFiles).
constexpr std::string_view kMetadata = R"(dataset_name: fuzz_link
graph: {nodes: [{num: 8}], edges: [{format: numpy, path: edges.npy}]}
feature_data: [{domain: node, name: feat, format: numpy, in_memory: true, path: feat.npy}]
tasks:
  - name: link_prediction
    item_begin: 2
    item_end: 8
    train_set: [{data: [{name: seeds, format: numpy, path: lp_train_seeds.npy}]}]
    validation_set: [{data: [{name: seeds, format: numpy, path: lp_valid_seeds.npy},
                             {name: negative_dsts, format: numpy, path: lp_valid_neg.npy}]}]
    test_set: [{data: [{name: seeds, format: numpy, path: lp_test_seeds.npy},
                       {name: labels, format: numpy, path: lp_test_labels.npy},
                       {name: indexes, format: numpy, path: lp_test_indexes.npy}]}]
)";

// The typed form: the same files, item sets typed "src:rel:dst" (local ids of 8 per type).
constexpr std::string_view kTypedMetadata = R"(dataset_name: fuzz_typed_link
graph:
  nodes: [{type: paper, num: 8}, {type: author, num: 8}]
  edges: [{type: "author:writes:paper", format: numpy, path: edges.npy},
          {type: "paper:cites:paper", format: numpy, path: edges.npy}]
feature_data: [{domain: node, type: paper, name: feat, format: numpy, in_memory: true,
                path: feat.npy}]
tasks:
  - name: link_prediction
    train_set: [{type: "paper:cites:paper",
                 data: [{name: seeds, format: numpy, path: lp_train_seeds.npy}]}]
    validation_set: [{type: "author:writes:paper",
                      data: [{name: seeds, format: numpy, path: lp_valid_seeds.npy},
                             {name: negative_dsts, format: numpy, path: lp_valid_neg.npy}]},
                     {type: "paper:cites:paper",
                      data: [{name: seeds, format: numpy, path: pairs.npy},
                             {name: negative_dsts, format: numpy, path: neg.npy}]}]
    test_set: [{type: "paper:cites:paper",
                data: [{name: seeds, format: numpy, path: lp_test_seeds.npy},
                       {name: labels, format: numpy, path: lp_test_labels.npy},
                       {name: indexes, format: numpy, path: lp_test_indexes.npy}]}]
)";

constexpr std::array<const char*, 6> kFiles = {"lp_train_seeds.npy", "lp_valid_seeds.npy",
                                               "lp_valid_neg.npy",   "lp_test_seeds.npy",
                                               "lp_test_labels.npy", "lp_test_indexes.npy"};
constexpr std::array<const char*, 6> kFixed = {"pairs.npy", "pairs.npy",       "neg.npy",
                                               "pairs.npy", "pair_labels.npy", "pair_indexes.npy"};

}  // namespace

COOPGNN_FUZZ_TARGET(link) {
  using namespace coopgnn;
  namespace fs = std::filesystem;
  static const fs::path untyped_dir = [] {
    auto d = fuzz::fresh_dir("link");
    fuzz::write_fixed_arrays(d);
    fuzz::write_file(d / "metadata.yaml", kMetadata);
    return d;
  }();
  static const fs::path typed_dir = [] {
    auto d = fuzz::fresh_dir("typed_link");
    fuzz::write_fixed_arrays(d);
    fuzz::write_file(d / "metadata.yaml", kTypedMetadata);
    return d;
  }();
  if (size == 0) return 0;
  std::size_t const pick = data[0] % kFiles.size();
  bool const typed = (data[0] / kFiles.size()) % 2 == 1;
  const fs::path& dir = typed ? typed_dir : untyped_dir;
  for (std::size_t i = 0; i < kFiles.size(); ++i) {
    if (i == pick) {
      fuzz::write_file(dir / kFiles[i], std::span<const std::uint8_t>(data + 1, size - 1));
    } else {
      fuzz::copy_file(dir / kFixed[i], dir / kFiles[i]);
    }
  }
  fuzz::rejecting_ok([&] {
    dataset_read_options opt;
    opt.task = "link_prediction";
    opt.heterogeneous = typed;
    (void)read_dataset(dir, opt);
  });
  return 0;
}
