#include "runtime/graph/metadata.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <sstream>
#include <utility>

#include "runtime/core/error.hpp"
#include "runtime/core/memory_limit.hpp"
#include "runtime/graph/dataset.hpp"
#include "runtime/graph/npy.hpp"

namespace coopgnn {

namespace {

/// Reads YAML nodes with messages that name the file, the key path and the line.
class reader {
 public:
  explicit reader(const std::string& what) : what_(what) {}

  [[noreturn]] void fail_kind(const YAML::Node& n, const std::string& key,
                              const std::string& want) const {
    COOPGNN_IO_FAIL("{}: key '{}' (line {}) must be {}", what_, key, n.Mark().line + 1, want);
  }

  static bool present(const YAML::Node& n) { return n.IsDefined() && !n.IsNull(); }

  YAML::Node required(const YAML::Node& map, const char* key, const std::string& path) const {
    YAML::Node n = map[key];
    if (!present(n)) COOPGNN_IO_FAIL("{}: missing required key '{}'", what_, join(path, key));
    return n;
  }

  static std::string join(const std::string& path, const char* key) {
    return path.empty() ? std::string(key) : path + "." + key;
  }

  std::string str(const YAML::Node& n, const std::string& key) const {
    if (!n.IsScalar()) fail_kind(n, key, "a string");
    return n.Scalar();
  }

  std::optional<std::string> opt_str(const YAML::Node& map, const char* key,
                                     const std::string& path) const {
    YAML::Node n = map[key];
    if (!present(n)) return std::nullopt;
    return str(n, join(path, key));
  }

  std::int64_t integer(const YAML::Node& n, const std::string& key) const {
    if (!n.IsScalar()) fail_kind(n, key, "an integer");
    std::string const& s = n.Scalar();
    std::int64_t v = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || p != s.data() + s.size()) {
      fail_kind(n, key, fmt::format("an integer, found '{}'", s));
    }
    return v;
  }

  bool boolean(const YAML::Node& n, const std::string& key) const {
    if (!n.IsScalar()) fail_kind(n, key, "true or false");
    bool b = false;
    if (!YAML::convert<bool>::decode(n, b)) {
      fail_kind(n, key, fmt::format("true or false, found '{}'", n.Scalar()));
    }
    return b;
  }

  /// A sequence (absent or null -> empty).
  std::vector<YAML::Node> list(const YAML::Node& n, const std::string& key) const {
    std::vector<YAML::Node> out;
    if (!present(n)) return out;
    if (!n.IsSequence()) fail_kind(n, key, "a list");
    for (const auto& e : n) out.push_back(e);
    return out;
  }

  void map(const YAML::Node& n, const std::string& key) const {
    if (!n.IsMap()) fail_kind(n, key, "a mapping of keys to values");
  }

  const std::string& what() const { return what_; }

 private:
  const std::string& what_;
};

std::string idx(const std::string& path, std::size_t i) { return fmt::format("{}[{}]", path, i); }

std::vector<item_set_meta> parse_sets(const reader& r, const YAML::Node& task, const char* key,
                                      const std::string& tpath) {
  std::vector<item_set_meta> sets;
  std::string const spath = reader::join(tpath, key);
  auto const entries = r.list(task[key], spath);
  for (std::size_t i = 0; i < entries.size(); ++i) {
    std::string const p = idx(spath, i);
    r.map(entries[i], p);
    item_set_meta s;
    s.type = r.opt_str(entries[i], "type", p);
    YAML::Node const data = r.required(entries[i], "data", p);
    auto const items = r.list(data, reader::join(p, "data"));
    for (std::size_t j = 0; j < items.size(); ++j) {
      std::string const q = idx(reader::join(p, "data"), j);
      r.map(items[j], q);
      item_data_meta d;
      d.name = r.opt_str(items[j], "name", q);
      d.format = r.str(r.required(items[j], "format", q), reader::join(q, "format"));
      if (d.format != "numpy" && d.format != "torch") {
        r.fail_kind(items[j]["format"], reader::join(q, "format"),
                    fmt::format("numpy or torch, found '{}'", d.format));
      }
      if (reader::present(items[j]["in_memory"])) {
        d.in_memory = r.boolean(items[j]["in_memory"], reader::join(q, "in_memory"));
      }
      d.path = r.str(r.required(items[j], "path", q), reader::join(q, "path"));
      s.data.push_back(std::move(d));
    }
    sets.push_back(std::move(s));
  }
  return sets;
}

bool needs_quotes(const std::string& s) {
  if (s.empty()) return true;
  std::string lower(s);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  static const char* const kWords[] = {"true", "false", "yes", "no",   "on",   "off",  "null",
                                       "~",    "y",     "n",   ".nan", ".inf", "-.inf"};
  for (const char* w : kWords) {
    if (lower == w) return true;
  }
  // Anything that reads as a number.
  double d = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), d);
  return ec == std::errc() && p == s.data() + s.size();
}

void emit_str(YAML::Emitter& out, const std::string& s) {
  if (needs_quotes(s)) {
    out << YAML::DoubleQuoted << s;
  } else {
    out << s;
  }
}

void emit_sets(YAML::Emitter& out, const char* key, const std::vector<item_set_meta>& sets) {
  if (sets.empty()) return;
  out << YAML::Key << key << YAML::Value << YAML::BeginSeq;
  for (const auto& s : sets) {
    out << YAML::BeginMap;
    if (s.type) {
      out << YAML::Key << "type" << YAML::Value;
      emit_str(out, *s.type);
    }
    out << YAML::Key << "data" << YAML::Value << YAML::BeginSeq;
    for (const auto& d : s.data) {
      out << YAML::BeginMap;
      if (d.name) {
        out << YAML::Key << "name" << YAML::Value;
        emit_str(out, *d.name);
      }
      out << YAML::Key << "format" << YAML::Value << d.format;
      out << YAML::Key << "in_memory" << YAML::Value << d.in_memory;
      out << YAML::Key << "path" << YAML::Value;
      emit_str(out, d.path);
      out << YAML::EndMap;
    }
    out << YAML::EndSeq << YAML::EndMap;
  }
  out << YAML::EndSeq;
}

}  // namespace

dataset_metadata parse_metadata(std::string_view yaml_text, const std::string& what) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml_text));
  } catch (const YAML::Exception& e) {
    COOPGNN_IO_FAIL("{}: yaml error at line {}, column {}: {}", what, e.mark.line + 1,
                    e.mark.column + 1, e.msg);
  }
  reader const r(what);
  if (!root.IsMap()) {
    COOPGNN_IO_FAIL(
        "{}: the document must be a mapping with keys dataset_name, graph, "
        "feature_data and tasks",
        what);
  }
  dataset_metadata m;
  try {
    if (reader::present(root["graph_topology"]) && !reader::present(root["graph"])) {
      COOPGNN_IO_FAIL(
          "{}: has 'graph_topology' but no 'graph': this is GraphBolt's preprocessed "
          "metadata; point coopgnn at the original dataset directory",
          what);
    }
    if (auto n = root["dataset_name"]; reader::present(n))
      m.dataset_name = r.str(n, "dataset_name");

    YAML::Node const graph = r.required(root, "graph", "");
    r.map(graph, "graph");
    auto const nodes = r.list(r.required(graph, "nodes", "graph"), "graph.nodes");
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      std::string const p = idx("graph.nodes", i);
      r.map(nodes[i], p);
      node_meta nm;
      nm.type = r.opt_str(nodes[i], "type", p);
      YAML::Node const num = r.required(nodes[i], "num", p);
      nm.num = r.integer(num, reader::join(p, "num"));
      if (nm.num < 0) r.fail_kind(num, reader::join(p, "num"), "a non-negative node count");
      m.nodes.push_back(std::move(nm));
    }
    auto const edges = r.list(r.required(graph, "edges", "graph"), "graph.edges");
    for (std::size_t i = 0; i < edges.size(); ++i) {
      std::string const p = idx("graph.edges", i);
      r.map(edges[i], p);
      edge_meta em;
      em.type = r.opt_str(edges[i], "type", p);
      YAML::Node const f = r.required(edges[i], "format", p);
      em.format = r.str(f, reader::join(p, "format"));
      if (em.format != "csv" && em.format != "numpy") {
        r.fail_kind(f, reader::join(p, "format"),
                    fmt::format("csv or numpy, found '{}'", em.format));
      }
      em.path = r.str(r.required(edges[i], "path", p), reader::join(p, "path"));
      m.edges.push_back(std::move(em));
    }

    auto const feats = r.list(root["feature_data"], "feature_data");
    for (std::size_t i = 0; i < feats.size(); ++i) {
      std::string const p = idx("feature_data", i);
      r.map(feats[i], p);
      feature_meta fm;
      YAML::Node const dom = r.required(feats[i], "domain", p);
      fm.domain = r.str(dom, reader::join(p, "domain"));
      if (fm.domain != "node" && fm.domain != "edge") {
        r.fail_kind(dom, reader::join(p, "domain"),
                    fmt::format("node or edge, found '{}'", fm.domain));
      }
      fm.type = r.opt_str(feats[i], "type", p);
      fm.name = r.str(r.required(feats[i], "name", p), reader::join(p, "name"));
      YAML::Node const f = r.required(feats[i], "format", p);
      fm.format = r.str(f, reader::join(p, "format"));
      if (fm.format != "numpy" && fm.format != "torch") {
        r.fail_kind(f, reader::join(p, "format"),
                    fmt::format("numpy or torch, found '{}'", fm.format));
      }
      if (reader::present(feats[i]["in_memory"])) {
        fm.in_memory = r.boolean(feats[i]["in_memory"], reader::join(p, "in_memory"));
      }
      fm.path = r.str(r.required(feats[i], "path", p), reader::join(p, "path"));
      m.feature_data.push_back(std::move(fm));
    }

    auto const tasks = r.list(root["tasks"], "tasks");
    for (std::size_t i = 0; i < tasks.size(); ++i) {
      std::string const p = idx("tasks", i);
      r.map(tasks[i], p);
      task_meta tm;
      if (auto n = tasks[i]["name"]; reader::present(n))
        tm.name = r.str(n, reader::join(p, "name"));
      if (auto n = tasks[i]["num_classes"]; reader::present(n)) {
        tm.num_classes = r.integer(n, reader::join(p, "num_classes"));
        if (*tm.num_classes < 0 || *tm.num_classes > kMaxNumClasses) {
          r.fail_kind(n, reader::join(p, "num_classes"),
                      fmt::format("a class count in [0, {}] (it sizes per-class arrays and the "
                                  "model's output layer), found {}",
                                  kMaxNumClasses, *tm.num_classes));
        }
        // The per-class arrays (class counts, confusion rows) before any exists.
        check_declared_bytes(
            what, reader::join(p, "num_classes"), static_cast<std::uint64_t>(*tm.num_classes),
            saturating_bytes(*tm.num_classes, 8), "8 bytes per class: the per-class counts");
      }
      for (auto [key, slot] :
           {std::pair{"item_begin", &tm.item_begin}, std::pair{"item_end", &tm.item_end}}) {
        if (auto n = tasks[i][key]; reader::present(n)) {
          *slot = r.integer(n, reader::join(p, key));
          if (**slot < 0) r.fail_kind(n, reader::join(p, key), "a non-negative vertex id");
        }
      }
      tm.train_set = parse_sets(r, tasks[i], "train_set", p);
      tm.validation_set = parse_sets(r, tasks[i], "validation_set", p);
      tm.test_set = parse_sets(r, tasks[i], "test_set", p);
      m.tasks.push_back(std::move(tm));
    }
  } catch (const YAML::Exception& e) {
    // Structural surprises yaml-cpp reports while we walk the tree.
    COOPGNN_IO_FAIL("{}: yaml error at line {}, column {}: {}", what, e.mark.line + 1,
                    e.mark.column + 1, e.msg);
  }
  return m;
}

dataset_metadata read_metadata(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) COOPGNN_IO_FAIL("{}: cannot read: {}", file.string(), std::strerror(errno));
  std::ostringstream ss;
  ss << in.rdbuf();
  return parse_metadata(ss.str(), file.string());
}

std::string emit_metadata(const dataset_metadata& m) {
  YAML::Emitter out;
  out << YAML::BeginMap;
  out << YAML::Key << "dataset_name" << YAML::Value;
  emit_str(out, m.dataset_name);
  out << YAML::Key << "graph" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "nodes" << YAML::Value << YAML::BeginSeq;
  for (const auto& n : m.nodes) {
    out << YAML::BeginMap;
    if (n.type) {
      out << YAML::Key << "type" << YAML::Value;
      emit_str(out, *n.type);
    }
    out << YAML::Key << "num" << YAML::Value << n.num << YAML::EndMap;
  }
  out << YAML::EndSeq;
  out << YAML::Key << "edges" << YAML::Value << YAML::BeginSeq;
  for (const auto& e : m.edges) {
    out << YAML::BeginMap;
    if (e.type) {
      out << YAML::Key << "type" << YAML::Value;
      emit_str(out, *e.type);
    }
    out << YAML::Key << "format" << YAML::Value << e.format;
    out << YAML::Key << "path" << YAML::Value;
    emit_str(out, e.path);
    out << YAML::EndMap;
  }
  out << YAML::EndSeq << YAML::EndMap;
  if (!m.feature_data.empty()) {
    out << YAML::Key << "feature_data" << YAML::Value << YAML::BeginSeq;
    for (const auto& f : m.feature_data) {
      out << YAML::BeginMap;
      out << YAML::Key << "domain" << YAML::Value << f.domain;
      if (f.type) {
        out << YAML::Key << "type" << YAML::Value;
        emit_str(out, *f.type);
      }
      out << YAML::Key << "name" << YAML::Value;
      emit_str(out, f.name);
      out << YAML::Key << "format" << YAML::Value << f.format;
      out << YAML::Key << "in_memory" << YAML::Value << f.in_memory;
      out << YAML::Key << "path" << YAML::Value;
      emit_str(out, f.path);
      out << YAML::EndMap;
    }
    out << YAML::EndSeq;
  }
  if (!m.tasks.empty()) {
    out << YAML::Key << "tasks" << YAML::Value << YAML::BeginSeq;
    for (const auto& t : m.tasks) {
      out << YAML::BeginMap;
      out << YAML::Key << "name" << YAML::Value;
      emit_str(out, t.name);
      if (t.num_classes) out << YAML::Key << "num_classes" << YAML::Value << *t.num_classes;
      if (t.item_begin) out << YAML::Key << "item_begin" << YAML::Value << *t.item_begin;
      if (t.item_end) out << YAML::Key << "item_end" << YAML::Value << *t.item_end;
      emit_sets(out, "train_set", t.train_set);
      emit_sets(out, "validation_set", t.validation_set);
      emit_sets(out, "test_set", t.test_set);
      out << YAML::EndMap;
    }
    out << YAML::EndSeq;
  }
  out << YAML::EndMap;
  std::string text = out.c_str();
  text.push_back('\n');
  return text;
}

void write_metadata(const dataset_metadata& meta, const std::filesystem::path& file) {
  std::string const text = emit_metadata(meta);
  atomic_file out(file);
  out.write(text.data(), text.size());
  out.commit();
}

}  // namespace coopgnn
