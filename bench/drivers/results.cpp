#include "bench/drivers/results.hpp"

#include <fmt/format.h>

#include <ctime>
#include <fstream>
#include <thread>
#include <vector>

#include "runtime/graph/npy.hpp"

namespace coopgnn::bench {

namespace {

std::string quote_arg(const std::string& a) {
  if (!a.empty() && a.find_first_of(" \t\n'\"\\$`") == std::string::npos) return a;
  std::string q = "'";
  for (char c : a) {
    if (c == '\'') {
      q += "'\\''";
    } else {
      q += c;
    }
  }
  return q + "'";
}

}  // namespace

std::string utc_now_iso8601() {
  std::time_t const t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string process_command_line(const std::string& fallback) {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  if (!in) return fallback;
  std::string raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> args;
  std::string cur;
  for (char c : raw) {
    if (c == '\0') {
      args.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) args.push_back(cur);
  if (args.empty()) return fallback;
  std::string out;
  for (auto const& a : args) {
    if (!out.empty()) out += ' ';
    out += quote_arg(a);
  }
  return out;
}

result_header host_result_header(std::string bench, const dataset& ds, const csc_graph& g,
                                 std::string dataset_dir, std::string command, int threads) {
  result_header h;
  h.bench = std::move(bench);
  h.dataset = ds.name;
  h.dataset_dir = std::move(dataset_dir);
  h.num_nodes = ds.num_nodes;
  h.num_edges = g.num_edges();
  h.num_edges_stored = ds.num_edges();
  h.command = std::move(command);
  h.created = utc_now_iso8601();
  h.backend = "host";
  h.device = host_device_name();
  h.threads = threads;
  return h;
}

std::string host_device_name() {
  std::ifstream in("/proc/cpuinfo");
  std::string line, model;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      auto const colon = line.find(':');
      if (colon != std::string::npos) model = line.substr(colon + 1);
      auto const first = model.find_first_not_of(" \t");
      model = first == std::string::npos ? "" : model.substr(first);
      break;
    }
  }
  unsigned const cores = std::thread::hardware_concurrency();
  if (model.empty()) model = "host CPU";
  return cores > 0 ? fmt::format("{} ({} threads)", model, cores) : model;
}

nlohmann::ordered_json header_json(const result_header& h) {
  nlohmann::ordered_json j;
  j["bench"] = h.bench;
  j["dataset"] = h.dataset;
  j["dataset_dir"] = h.dataset_dir;
  j["num_nodes"] = h.num_nodes;
  j["num_edges"] = h.num_edges;
  j["num_edges_stored"] = h.num_edges_stored;
  j["command"] = h.command;
  j["created"] = h.created;
  j["host"] = {{"backend", h.backend}, {"device", h.device}, {"threads", h.threads}};
  return j;
}

void write_file_atomic(const std::filesystem::path& path, const std::string& text) {
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path());
  atomic_file f(path);
  f.write(text.data(), text.size());
  f.commit();
}

}  // namespace coopgnn::bench
