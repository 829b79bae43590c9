// Small helpers shared by the subcommands (tools/coopgnn/commands.hpp).
#include <filesystem>

#include "tools/coopgnn/commands.hpp"

#ifndef COOPGNN_DEFAULT_DATASET
#define COOPGNN_DEFAULT_DATASET "data/cora"
#endif

namespace coopgnn::cli {

std::string default_dataset_dir() {
  if (std::filesystem::exists("data/cora/metadata.yaml")) return "data/cora";
  return COOPGNN_DEFAULT_DATASET;
}

std::unique_ptr<loaded_dataset> load_dataset(const std::string& dir, bool load_features) {
  dataset_read_options opt;
  opt.load_features = load_features;
  return load_dataset(dir, opt);
}

std::unique_ptr<loaded_dataset> load_dataset(const std::string& dir,
                                             const dataset_read_options& opt) {
  auto data = std::make_unique<loaded_dataset>();
  data->ds = read_dataset(dir, opt);
  if (data->ds.hetero) {
    // Typed CSC: columns sorted by (relation, source), one relation id per edge.
    auto const& h = *data->ds.hetero;
    data->g = build_csc(data->ds.num_nodes, data->ds.src, data->ds.dst, h.edge_type,
                        static_cast<std::int32_t>(h.edge_types.size()));
  } else {
    data->g = build_csc(data->ds.num_nodes, data->ds.src, data->ds.dst);
  }
  return data;
}

std::string file_stem(std::string name) {
  for (char& c : name) {
    if (c == '/' || c == '\\' || c == ' ' || c == ':') c = '_';
  }
  return name.empty() ? "dataset" : name;
}

void add_sampling_bench_options(CLI::App& cmd, std::string& dataset, std::string& sampler,
                                const std::string& sampler_help, std::vector<int>& fanouts,
                                std::int64_t& batch_size) {
  cmd.add_option("--dataset", dataset, "Dataset directory (default: the bundled Cora)");
  cmd.add_option("--sampler", sampler, sampler_help)
      ->check(CLI::IsMember({"ns", "labor"}))
      ->capture_default_str();
  cmd.add_option("--fanouts", fanouts, "Fanout per layer, seeds' layer first; -1 = all")
      ->delimiter(',')
      ->capture_default_str();
  cmd.add_option("--batch-size", batch_size, "Global batch size B")->capture_default_str();
}

}  // namespace coopgnn::cli
