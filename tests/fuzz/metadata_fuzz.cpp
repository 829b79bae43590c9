// Fuzz target: metadata.yaml (runtime/graph/metadata.hpp parse_metadata), then the whole dataset
// directory it describes (dataset.hpp read_dataset and inspect_dataset) over the fixed arrays of
// fuzz_common.hpp write_fixed_arrays, so declared counts (graph.nodes[0].num, num_classes,
// item_begin / item_end) meet real arrays.
#include <filesystem>
#include <string_view>

#include "runtime/graph/dataset.hpp"
#include "runtime/graph/metadata.hpp"
#include "tests/fuzz/fuzz_common.hpp"

COOPGNN_FUZZ_TARGET(metadata) {
  using namespace coopgnn;
  static const std::filesystem::path dir = [] {
    auto d = fuzz::fresh_dir("metadata");
    fuzz::write_fixed_arrays(d);
    return d;
  }();
  std::string_view const text(reinterpret_cast<const char*>(data), size);
  bool parsed = false;
  fuzz::rejecting_ok([&] {
    (void)parse_metadata(text, "metadata.yaml");
    parsed = true;
  });
  if (!parsed) return 0;
  fuzz::write_file(dir / "metadata.yaml", text);
  fuzz::rejecting_ok([&] { (void)read_dataset(dir); });
  fuzz::rejecting_ok([&] {
    dataset_read_options opt;
    opt.load_features = false;
    opt.task = "link_prediction";
    (void)read_dataset(dir, opt);
  });
  fuzz::rejecting_ok([&] {
    dataset_read_options opt;
    opt.heterogeneous = true;  // the typed layout (hetero_schema)
    (void)read_dataset(dir, opt);
  });
  fuzz::rejecting_ok([&] { (void)inspect_dataset(dir); });
  return 0;
}
