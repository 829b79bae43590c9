// Shared parts of every benchmark result file (docs/results-schema.md): the header keys, the
// command line, the machine, and atomic writes.
#pragma once

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "runtime/graph/csc.hpp"
#include "runtime/graph/dataset.hpp"

namespace coopgnn::bench {

/// Top-level keys every result file shares (docs/results-schema.md).
struct result_header {
  std::string bench;        ///< "work" or "modes"
  std::string dataset;      ///< dataset name (metadata.yaml dataset_name)
  std::string dataset_dir;  ///< the directory given
  std::int64_t num_nodes = 0;
  std::int64_t num_edges = 0;         ///< the graph measured: each edge once (its CSC's)
  std::int64_t num_edges_stored = 0;  ///< the dataset's edge list as stored (repeats included)
  std::string command;  ///< the command line that produced the file
  std::string created;  ///< ISO 8601 UTC, e.g. 2025-01-31T12:00:00Z
  std::string backend = "host";
  std::string device;  ///< CPU model (host) or GPU name
  int threads = 1;
};

/// The header of a result file about `ds` measured on this host now: bench, ds's name and size
/// (num_edges: the edges of `g`, ds's CSC as measured, repeats removed; num_edges_stored: ds's
/// stored list), `dataset_dir`, `command`, created = utc_now_iso8601(), backend "host", device =
/// host_device_name(), `threads`. A device bench overrides backend and device.
result_header host_result_header(std::string bench, const dataset& ds, const csc_graph& g,
                                 std::string dataset_dir, std::string command, int threads);

/// The keys every result file starts with: bench, dataset, dataset_dir, num_nodes, num_edges,
/// num_edges_stored, command, created, host {backend, device, threads} (docs/results-schema.md).
nlohmann::ordered_json header_json(const result_header& h);

/// The current time as ISO 8601 UTC with seconds, "YYYY-MM-DDTHH:MM:SSZ".
std::string utc_now_iso8601();

/// This process's command line, arguments joined by spaces (quoted when they contain spaces or
/// quotes), read from /proc/self/cmdline; `fallback` when that cannot be read.
std::string process_command_line(const std::string& fallback);

/// A description of the host CPU ("model name" of /proc/cpuinfo and the core count), or "host".
std::string host_device_name();

/// Writes `text` to `path` through a temporary file and a rename (creating the directory).
/// @throws io_error naming the path when it cannot be written.
void write_file_atomic(const std::filesystem::path& path, const std::string& text);

}  // namespace coopgnn::bench
