#include "tools/coopgnn/info.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <nlohmann/json.hpp>

namespace coopgnn {

namespace {

degree_stats stats_of(std::vector<std::int64_t> deg, std::int64_t num_edges) {
  degree_stats s;
  if (deg.empty()) return s;
  std::sort(deg.begin(), deg.end());
  std::size_t const n = deg.size();
  s.min = deg.front();
  s.max = deg.back();
  s.mean = static_cast<double>(num_edges) / static_cast<double>(n);
  s.median = n % 2 == 1 ? static_cast<double>(deg[n / 2])
                        : 0.5 * static_cast<double>(deg[n / 2 - 1] + deg[n / 2]);
  // Nearest rank: ceil(0.99 n) computed in integers.
  std::size_t const rank = (99 * n + 99) / 100;
  s.p99 = deg[std::max<std::size_t>(rank, 1) - 1];
  s.zero = static_cast<std::int64_t>(std::count(deg.begin(), deg.end(), 0));
  return s;
}

nlohmann::json degree_json(const degree_stats& s) {
  return {{"min", s.min},       {"max", s.max}, {"mean", s.mean},
          {"median", s.median}, {"p99", s.p99}, {"zero", s.zero}};
}

}  // namespace

dataset_info compute_info(const dataset& ds) {
  dataset_info info;
  info.name = ds.name;
  info.num_nodes = ds.num_nodes;
  info.num_edges = ds.num_edges();
  auto const n = static_cast<std::size_t>(std::max<vid_t>(ds.num_nodes, 0));
  std::vector<std::int64_t> in(n, 0);
  std::vector<std::int64_t> out(n, 0);
  std::int64_t same = 0;
  std::int64_t labelled_edges = 0;
  for (std::size_t e = 0; e < ds.src.size(); ++e) {
    ++out[static_cast<std::size_t>(ds.src[e])];
    ++in[static_cast<std::size_t>(ds.dst[e])];
    if (ds.src[e] == ds.dst[e]) ++info.self_loops;
    if (!ds.labels.empty()) {
      std::int64_t const a = ds.labels[static_cast<std::size_t>(ds.src[e])];
      std::int64_t const b = ds.labels[static_cast<std::size_t>(ds.dst[e])];
      if (a >= 0 && b >= 0) {
        ++labelled_edges;
        same += a == b ? 1 : 0;
      }
    }
  }
  for (std::size_t v = 0; v < n; ++v) info.isolated += (in[v] == 0 && out[v] == 0) ? 1 : 0;
  info.in_degree = stats_of(std::move(in), info.num_edges);
  info.out_degree = stats_of(std::move(out), info.num_edges);
  info.feature_rows = ds.features.rows();
  info.feature_dim = ds.features.cols();
  info.num_classes = ds.num_classes;
  if (!ds.labels.empty()) {
    info.class_counts.assign(static_cast<std::size_t>(std::max<std::int64_t>(ds.num_classes, 0)),
                             0);
    for (std::int64_t l : ds.labels) {
      if (l < 0) {
        ++info.unlabeled;
      } else if (l < ds.num_classes) {
        ++info.class_counts[static_cast<std::size_t>(l)];
      }
    }
    if (labelled_edges > 0) {
      info.edge_homophily = static_cast<double>(same) / static_cast<double>(labelled_edges);
    }
  }
  info.train = static_cast<std::int64_t>(ds.train.size());
  info.valid = static_cast<std::int64_t>(ds.valid.size());
  info.test = static_cast<std::int64_t>(ds.test.size());
  return info;
}

std::string format_info_table(const dataset_info& i) {
  std::string s;
  auto row = [&](std::string_view k, const std::string& v) {
    s += fmt::format("  {:<16} {}\n", k, v);
  };
  auto deg = [](const degree_stats& d) {
    return fmt::format("min {}  max {}  mean {:.2f}  median {:g}  p99 {}  zero {}", d.min, d.max,
                       d.mean, d.median, d.p99, d.zero);
  };
  s += fmt::format("dataset '{}'\n", i.name);
  row("nodes", fmt::format("{}", i.num_nodes));
  row("edges", fmt::format("{} (directed, as stored)", i.num_edges));
  row("in-degree", deg(i.in_degree));
  row("out-degree", deg(i.out_degree));
  row("isolated", fmt::format("{}", i.isolated));
  row("self-loops", fmt::format("{}", i.self_loops));
  row("features",
      i.feature_dim > 0 ? fmt::format("[{}, {}] float32", i.feature_rows, i.feature_dim) : "none");
  if (i.num_classes > 0) {
    row("classes", fmt::format("{}", i.num_classes));
    if (!i.class_counts.empty()) {
      row("class counts", fmt::format("{}", fmt::join(i.class_counts, " ")));
    }
    if (i.unlabeled > 0) row("unlabeled", fmt::format("{}", i.unlabeled));
    if (i.edge_homophily >= 0) row("edge homophily", fmt::format("{:.4f}", i.edge_homophily));
  } else {
    row("classes", "none (structure only)");
  }
  if (i.train + i.valid + i.test > 0) {
    row("split", fmt::format("train {}  valid {}  test {}", i.train, i.valid, i.test));
  } else {
    row("split", "none");
  }
  return s;
}

std::string info_to_json(const dataset_info& i) {
  nlohmann::json j;
  j["name"] = i.name;
  j["num_nodes"] = i.num_nodes;
  j["num_edges"] = i.num_edges;
  j["in_degree"] = degree_json(i.in_degree);
  j["out_degree"] = degree_json(i.out_degree);
  j["isolated"] = i.isolated;
  j["self_loops"] = i.self_loops;
  j["feature_shape"] = {i.feature_rows, i.feature_dim};
  j["num_classes"] = i.num_classes;
  j["class_counts"] = i.class_counts;
  j["unlabeled"] = i.unlabeled;
  j["edge_homophily"] = i.edge_homophily >= 0 ? nlohmann::json(i.edge_homophily) : nlohmann::json();
  j["split"] = {{"train", i.train}, {"valid", i.valid}, {"test", i.test}};
  return j.dump();
}

}  // namespace coopgnn
