#include "tools/coopgnn/info.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "runtime/graph/npy.hpp"
#include "tools/coopgnn/commands.hpp"

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

pair_set_info pair_stats(const pair_set& s) {
  pair_set_info i;
  i.pairs = s.size();
  i.positives = s.labels.empty()
                    ? s.size()
                    : static_cast<std::int64_t>(std::count(s.labels.begin(), s.labels.end(), 1));
  bool first = true;
  for (std::size_t b = 0; b < s.indexes.size();) {
    std::size_t e = b;
    std::int64_t neg = 0;
    for (; e < s.indexes.size() && s.indexes[e] == s.indexes[b]; ++e) {
      neg += !s.labels.empty() && s.labels[e] == 0 ? 1 : 0;
    }
    ++i.queries;
    i.neg_min = first ? neg : std::min(i.neg_min, neg);
    i.neg_max = first ? neg : std::max(i.neg_max, neg);
    first = false;
    b = e;
  }
  return i;
}

std::string pair_text(const pair_set_info& p) {
  if (p.pairs == 0) return "none";
  std::string s = fmt::format("{} pairs, {} positives", p.pairs, p.positives);
  if (p.queries > 0) {
    s += p.neg_min == p.neg_max
             ? fmt::format(", {} queries x {} negatives", p.queries, p.neg_min)
             : fmt::format(", {} queries, {}..{} negatives each", p.queries, p.neg_min, p.neg_max);
  } else if (p.positives < p.pairs) {
    s += fmt::format(", {} negatives (ungrouped)", p.pairs - p.positives);
  }
  return s;
}

nlohmann::json pair_json(const pair_set_info& p) {
  return {{"pairs", p.pairs},
          {"positives", p.positives},
          {"queries", p.queries},
          {"negatives_per_query", {p.neg_min, p.neg_max}}};
}

std::string shape_text(const std::vector<std::int64_t>& shape) { return format_npy_shape(shape); }

}  // namespace

std::string format_contents(const std::vector<dataset_contents::feature>& features,
                            const std::vector<dataset_contents::task>& tasks,
                            const std::string& input_feature, const std::string& trained_task) {
  std::string s;
  for (const char* domain : {"node", "edge"}) {
    bool first = true;
    for (const auto& f : features) {
      if (f.domain != domain) continue;
      std::string const what = f.error.empty() ? fmt::format("{} {}", f.dtype, shape_text(f.shape))
                                               : fmt::format("unreadable: {}", f.error);
      bool const input = f.domain == "node" && f.name == input_feature;
      s += fmt::format("  {:<16} '{}'{} {} ({}, {}){}\n",
                       first ? fmt::format("{} features", domain) : "", f.name,
                       f.type.empty() ? "" : fmt::format(" [{}]", f.type), what, f.format, f.path,
                       input ? "  <- input" : "");
      first = false;
    }
    if (first) s += fmt::format("  {:<16} none\n", fmt::format("{} features", domain));
  }
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    const auto& t = tasks[i];
    std::string what;
    if (!t.error.empty()) {
      what = fmt::format("unreadable: {}", t.error);
    } else {
      what = t.kind;
      if (t.num_classes) what += fmt::format(", {} classes", *t.num_classes);
      what += fmt::format(", train {}  valid {}  test {}", t.train, t.valid, t.test);
    }
    s += fmt::format("  {:<16} [{}] '{}' {}{}\n", i == 0 ? "tasks" : "", i, t.name, what,
                     t.name == trained_task ? "  <- trained" : "");
  }
  if (tasks.empty()) s += fmt::format("  {:<16} none\n", "tasks");
  return s;
}

dataset_info compute_info(const dataset& ds) {
  dataset_info info;
  info.name = ds.name;
  info.num_nodes = ds.num_nodes;
  // The graph `train` trains (cli::graph_of): a repeated edge counts once.
  csc_graph const g = cli::graph_of(ds);
  info.num_edges = g.num_edges();
  info.num_edges_stored = ds.num_edges();
  auto const n = static_cast<std::size_t>(std::max<vid_t>(ds.num_nodes, 0));
  std::vector<std::int64_t> in(n, 0);
  std::vector<std::int64_t> out(n, 0);
  std::int64_t same = 0;
  std::int64_t labelled_edges = 0;
  for (vid_t v = 0; v < g.num_nodes; ++v) {
    auto const dst = static_cast<std::size_t>(v);
    in[dst] = g.in_degree(v);
    for (eid_t e = g.indptr[dst]; e < g.indptr[dst + 1]; ++e) {
      auto const src = static_cast<std::size_t>(g.indices[static_cast<std::size_t>(e)]);
      ++out[src];
      if (src == dst) ++info.self_loops;
      if (!ds.labels.empty()) {
        std::int64_t const a = ds.labels[src];
        std::int64_t const b = ds.labels[dst];
        if (a >= 0 && b >= 0) {
          ++labelled_edges;
          same += a == b ? 1 : 0;
        }
      }
    }
  }
  for (std::size_t v = 0; v < n; ++v) info.isolated += (in[v] == 0 && out[v] == 0) ? 1 : 0;
  info.in_degree = stats_of(std::move(in), info.num_edges);
  info.out_degree = stats_of(std::move(out), info.num_edges);
  info.feature_dim = ds.feature_dim();
  info.feature_rows = info.feature_dim > 0 ? ds.num_nodes : 0;
  info.feature_dtype = std::string(to_string(ds.feature_type));
  if (ds.hetero) {
    const hetero_schema& h = *ds.hetero;
    for (std::int64_t t = 0; t < h.num_node_types(); ++t) {
      info.node_types.push_back(
          {h.node_types[static_cast<std::size_t>(t)], h.count(t), h.feature_dim(t),
           h.feature_dim(t) > 0 ? std::string(to_string(h.feature_type(t))) : std::string()});
    }
    for (const std::string& r : h.edge_types) info.edge_types.push_back({r, 0, 0});
    for (std::int32_t r : g.etype) ++info.edge_types[static_cast<std::size_t>(r)].count;
  }
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
  info.input_feature = ds.feature_name;
  info.notes = ds.notes;
  if (ds.link) {
    info.link.present = true;
    info.link.name = ds.link->name;
    info.link.train = ds.link->train.size();
    info.link.valid = pair_stats(ds.link->valid);
    info.link.test = pair_stats(ds.link->test);
    info.link.item_begin = ds.link->item_begin;
    info.link.item_end = ds.link->item_end;
  }
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
  std::int64_t const repeated = i.num_edges_stored - i.num_edges;
  row("edges", repeated > 0 ? fmt::format("{} (directed; {} repeated edges of the {} stored "
                                          "removed, as `train` does)",
                                          i.num_edges, repeated, i.num_edges_stored)
                            : fmt::format("{} (directed)", i.num_edges));
  row("in-degree", deg(i.in_degree));
  row("out-degree", deg(i.out_degree));
  row("isolated", fmt::format("{}", i.isolated));
  row("self-loops", fmt::format("{}", i.self_loops));
  for (std::size_t t = 0; t < i.node_types.size(); ++t) {
    const type_info& n = i.node_types[t];
    row(t == 0 ? "node types" : "",
        fmt::format("{} ({} nodes, {})", n.name, n.count,
                    n.feature_dim > 0
                        ? fmt::format("{} feature columns, {}", n.feature_dim, n.feature_dtype)
                        : std::string("no features")));
  }
  for (std::size_t r = 0; r < i.edge_types.size(); ++r) {
    row(r == 0 ? "edge types" : "",
        fmt::format("{} ({} edges)", i.edge_types[r].name, i.edge_types[r].count));
  }
  if (i.node_types.empty()) {
    row("features", i.feature_dim > 0
                        ? fmt::format("[{}, {}] {}", i.feature_rows, i.feature_dim, i.feature_dtype)
                        : "none");
  }
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
  if (i.link.present) {
    row("link task", fmt::format("'{}'", i.link.name));
    row("link train", fmt::format("{} positives", i.link.train));
    row("link valid", pair_text(i.link.valid));
    row("link test", pair_text(i.link.test));
    if (i.link.item_end > i.link.item_begin) {
      row("user-item", fmt::format("users [0, {}) ({}), items [{}, {}) ({})", i.link.item_begin,
                                   i.link.item_begin, i.link.item_begin, i.link.item_end,
                                   i.link.item_end - i.link.item_begin));
    }
  }
  if (!i.features.empty() || !i.tasks.empty()) {
    s += format_contents(i.features, i.tasks, i.input_feature, i.trained_task);
  }
  for (const auto& note : i.notes) row("note", note);
  return s;
}

std::string info_to_json(const dataset_info& i) {
  nlohmann::json j;
  j["name"] = i.name;
  j["num_nodes"] = i.num_nodes;
  j["num_edges"] = i.num_edges;
  j["num_edges_stored"] = i.num_edges_stored;
  j["duplicate_edges_removed"] = i.num_edges_stored - i.num_edges;
  j["in_degree"] = degree_json(i.in_degree);
  j["out_degree"] = degree_json(i.out_degree);
  j["isolated"] = i.isolated;
  j["self_loops"] = i.self_loops;
  j["feature_shape"] = {i.feature_rows, i.feature_dim};
  j["feature_dtype"] = i.feature_dtype;
  if (!i.node_types.empty()) {
    nlohmann::json nt = nlohmann::json::array();
    for (const type_info& t : i.node_types) {
      nlohmann::json e = {{"name", t.name}, {"num_nodes", t.count}, {"feature_dim", t.feature_dim}};
      if (t.feature_dim > 0) e["feature_dtype"] = t.feature_dtype;
      nt.push_back(std::move(e));
    }
    nlohmann::json et = nlohmann::json::array();
    for (const type_info& t : i.edge_types)
      et.push_back({{"name", t.name}, {"num_edges", t.count}});
    j["node_types"] = nt;
    j["edge_types"] = et;
  }
  j["num_classes"] = i.num_classes;
  j["class_counts"] = i.class_counts;
  j["unlabeled"] = i.unlabeled;
  j["edge_homophily"] = i.edge_homophily >= 0 ? nlohmann::json(i.edge_homophily) : nlohmann::json();
  j["split"] = {{"train", i.train}, {"valid", i.valid}, {"test", i.test}};
  if (i.link.present) {
    nlohmann::json l;
    l["name"] = i.link.name;
    l["train"] = i.link.train;
    l["valid"] = pair_json(i.link.valid);
    l["test"] = pair_json(i.link.test);
    l["items"] = i.link.item_end > i.link.item_begin
                     ? nlohmann::json{i.link.item_begin, i.link.item_end}
                     : nlohmann::json();
    j["link"] = l;
  } else {
    j["link"] = nullptr;
  }
  nlohmann::json feats = nlohmann::json::array();
  for (const auto& f : i.features) {
    feats.push_back({{"domain", f.domain},
                     {"type", f.type.empty() ? nlohmann::json() : nlohmann::json(f.type)},
                     {"name", f.name},
                     {"format", f.format},
                     {"path", f.path},
                     {"dtype", f.dtype},
                     {"shape", f.shape},
                     {"error", f.error.empty() ? nlohmann::json() : nlohmann::json(f.error)},
                     {"input", f.domain == "node" && f.name == i.input_feature}});
  }
  j["features"] = feats;
  nlohmann::json tasks = nlohmann::json::array();
  for (const auto& t : i.tasks) {
    tasks.push_back(
        {{"name", t.name},
         {"kind", t.kind.empty() ? nlohmann::json() : nlohmann::json(t.kind)},
         {"num_classes", t.num_classes ? nlohmann::json(*t.num_classes) : nlohmann::json()},
         {"train", t.train},
         {"valid", t.valid},
         {"test", t.test},
         {"error", t.error.empty() ? nlohmann::json() : nlohmann::json(t.error)},
         {"trained", t.name == i.trained_task}});
  }
  j["tasks"] = tasks;
  j["notes"] = i.notes;
  return j.dump();
}

}  // namespace coopgnn
