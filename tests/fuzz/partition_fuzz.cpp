// Fuzz target: the files `coopgnn partition` writes and `coopgnn tma --partition DIR` reads back
// (runtime/graph/partition.hpp read_partition_files: parts.npy + summary.json), then the
// partition summary and one induced subgraph of a fixed 8-vertex dataset. The input is a
// container (fuzz_common.hpp) with parts.npy and summary.json.
#include <filesystem>

#include "runtime/graph/partition.hpp"
#include "tests/fuzz/fuzz_common.hpp"

COOPGNN_FUZZ_TARGET(partition) {
  using namespace coopgnn;
  return fuzz::on_container_dir("partition", data, size, [](const std::filesystem::path& dir) {
    constexpr std::int32_t kParts = 3;
    partition_files const pf = read_partition_files(dir, 8, kParts);
    dataset ds;
    ds.name = "fuzz";
    ds.num_nodes = 8;
    ds.src = {0, 1, 2, 3, 4, 5, 6, 7, 0};
    ds.dst = {1, 2, 3, 4, 5, 6, 7, 0, 4};
    ds.labels = {0, 1, 0, 1, 0, 1, 0, -1};
    ds.num_classes = 2;
    (void)partition_summary(ds, pf.parts, kParts);
    (void)induced_subgraph(ds, pf.parts, 1);
  });
}
