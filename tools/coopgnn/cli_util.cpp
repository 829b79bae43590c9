// Small helpers shared by the subcommands (tools/coopgnn/commands.hpp).
#include <cmath>
#include <cstdlib>
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
  data->g = graph_of(data->ds);
  return data;
}

csc_graph graph_of(const dataset& ds) {
  if (!ds.hetero) {
    // Left in their file (dataset_read_options::load_edges false): streamed into the CSC.
    if (ds.edges_in_file > 0) return read_edge_csc(ds.num_nodes, ds.edge_file);
    return build_csc(ds.num_nodes, ds.src, ds.dst);
  }
  // Typed CSC: columns sorted by (relation, source), one relation id per edge.
  auto const& h = *ds.hetero;
  return build_csc(ds.num_nodes, ds.src, ds.dst, h.edge_type,
                   static_cast<std::int32_t>(h.edge_types.size()));
}

std::string duplicate_edges_note(const loaded_dataset& data) {
  return repeated_edges_note(data.ds, data.ds.num_edges() - data.g.num_edges(), data.ds.num_edges(),
                             "trained");
}

std::string repeated_edges_note(const dataset& ds, std::int64_t removed, std::int64_t stored,
                                const std::string& what) {
  if (removed <= 0) return {};
  return fmt::format(
      "dataset '{}': {} of its {} stored edges repeat an earlier (source, destination{}) pair "
      "and were removed; the graph {} has {} edges",
      ds.name, removed, stored, ds.hetero ? ", relation" : "", what, stored - removed);
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
      ->check(non_empty_entry())
      ->capture_default_str();
  cmd.add_option("--batch-size", batch_size, "Global batch size B")->capture_default_str();
}

CLI::Validator finite_number() {
  return {[](std::string& text) -> std::string {
            char* end = nullptr;
            double const v = std::strtod(text.c_str(), &end);
            if (end != text.c_str() && !std::isfinite(v)) {
              return "value " + text + " is not a finite number";
            }
            return {};  // finite, or not a number at all: the option's own conversion says so
          },
          "", "FINITE"};
}

CLI::Validator non_empty_entry() {
  return {[](std::string& text) -> std::string {
            return text.empty() ? "an empty entry in the list: give comma-separated integers, "
                                  "e.g. 10,10"
                                : std::string();
          },
          "", "NONEMPTY"};
}

void require_finite_floats(CLI::App& app) {
  for (CLI::Option* opt : app.get_options()) {
    // The type name is "FLOAT", followed by ":DESCRIPTION" of each validator that has one.
    std::string const type = opt->get_type_name();
    if (type != "FLOAT" && type.rfind("FLOAT:", 0) != 0) continue;
    try {
      (void)opt->get_validator("FINITE");  // checked already (finite_number() given first)
    } catch (const CLI::OptionNotFound&) {
      opt->check(finite_number());
    }
  }
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
    require_finite_floats(*sub);
  }
}

}  // namespace coopgnn::cli
