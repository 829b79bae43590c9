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

std::string file_stem(std::string name) {
  for (char& c : name) {
    if (c == '/' || c == '\\' || c == ' ' || c == ':') c = '_';
  }
  return name.empty() ? "dataset" : name;
}

}  // namespace coopgnn::cli
