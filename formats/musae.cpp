// MUSAE directories (formats/formats.hpp convert_musae) and their registry entry.
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <fstream>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>

#include "runtime/graph/generate.hpp"

#include "formats/detail/common.hpp"

namespace coopgnn {

using namespace formats::detail;  // NOLINT(google-build-using-namespace): the readers' helpers

namespace {

/// Splits one CSV record (RFC 4180: a field in double quotes may hold commas, "" is a quote).
/// @returns false for an unterminated quote.
bool split_csv(std::string_view line, std::vector<std::string>& out) {
  out.clear();
  std::string field;
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    char const ch = line[i];
    if (quoted) {
      if (ch == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        field.push_back('"');
        ++i;
      } else if (ch == '"') {
        quoted = false;
      } else {
        field.push_back(ch);
      }
    } else if (ch == '"') {
      quoted = true;
    } else if (ch == ',') {
      out.push_back(std::move(field));
      field.clear();
    } else {
      field.push_back(ch);
    }
  }
  out.push_back(std::move(field));
  return !quoted;
}

/// The three files of a MUSAE directory and the dataset name they give.
struct musae_layout {
  fs::path edges;
  fs::path target;
  fs::path features;
  std::string name;  ///< NAME of NAME_edges.csv; empty for the original release's names
};

/// Finds the files of a MUSAE directory: SNAP's NAME_edges.csv, NAME_target.csv and
/// NAME_features.json (each found by its suffix, exactly one each), or, when the directory holds
/// edges.csv and no NAME_edges.csv, the original release's edges.csv, target.csv and
/// features.json. With `fail` false, nullopt instead of an io_error (for detection).
std::optional<musae_layout> musae_files(const fs::path& dir, bool fail) {
  std::error_code ec;
  std::vector<std::string> all;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->is_regular_file(ec)) all.push_back(it->path().filename().string());
  }
  if (ec) {
    if (!fail) return std::nullopt;
    COOPGNN_IO_FAIL("{}: cannot list the directory: {}", dir.string(), ec.message());
  }
  std::sort(all.begin(), all.end());
  std::string const listing =
      all.empty() ? std::string("none") : fmt::format("{}", fmt::join(all, ", "));
  auto has = [&](std::string_view f) { return std::binary_search(all.begin(), all.end(), f); };
  auto with_suffix = [&](std::string_view suffix) {
    std::vector<std::string> hits;
    for (const std::string& f : all) {
      if (f.size() > suffix.size() && f.ends_with(suffix)) hits.push_back(f);
    }
    return hits;
  };
  constexpr const char* kOriginal =
      "; the original release's edges.csv, target.csv and features.json are read too";
  musae_layout l;
  if (has("edges.csv") && with_suffix("_edges.csv").empty()) {
    for (const char* f : {"target.csv", "features.json"}) {
      if (has(f)) continue;
      if (!fail) return std::nullopt;
      COOPGNN_IO_FAIL(
          "{}: missing file {} (a MUSAE directory in the original release's layout holds "
          "edges.csv, target.csv and features.json; files here: {})",
          dir.string(), f, listing);
    }
    l.edges = dir / "edges.csv";
    l.target = dir / "target.csv";
    l.features = dir / "features.json";
    return l;
  }
  std::array<fs::path*, 3> const out = {&l.edges, &l.target, &l.features};
  std::array<std::string_view, 3> const suffixes = {"_edges.csv", "_target.csv",
                                                    "_features.json"};
  for (std::size_t k = 0; k < 3; ++k) {
    std::vector<std::string> hits = with_suffix(suffixes[k]);
    if (k == 0 && has("edges.csv")) hits.insert(hits.begin(), "edges.csv");
    if (hits.size() == 1) {
      *out[k] = dir / hits[0];
      continue;
    }
    if (!fail) return std::nullopt;
    if (hits.empty()) {
      COOPGNN_IO_FAIL(
          "{}: missing file NAME{} (a MUSAE directory holds NAME_edges.csv, NAME_target.csv and "
          "NAME_features.json; files here: {}){}",
          dir.string(), suffixes[k], listing, kOriginal);
    }
    COOPGNN_IO_FAIL("{}: several files NAME{} ({}): a MUSAE directory holds one dataset",
                    dir.string(), suffixes[k], fmt::join(hits, ", "));
  }
  std::string const stem = l.edges.filename().string();
  l.name = stem.substr(0, stem.size() - std::strlen("_edges.csv"));
  return l;
}

std::int64_t column_index(const std::vector<std::string>& cols, std::string_view name) {
  auto const it = std::find(cols.begin(), cols.end(), name);
  return it == cols.end() ? -1 : static_cast<std::int64_t>(it - cols.begin());
}

}  // namespace

dataset convert_musae(const fs::path& dir, const convert_options& opt, convert_report* report) {
  check_options(opt);
  COOPGNN_EXPECTS(opt.train_fraction >= 0 && opt.valid_fraction >= 0 &&
                      opt.train_fraction + opt.valid_fraction <= 1.0 + 1e-12,
                  "--train-fraction {} and --valid-fraction {} must be in [0, 1] and sum to at "
                  "most 1",
                  opt.train_fraction, opt.valid_fraction);
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    COOPGNN_IO_FAIL(
        "{}: not a directory (a MUSAE dataset directory holds NAME_edges.csv, NAME_target.csv "
        "and NAME_features.json)",
        dir.string());
  }
  convert_report local;
  convert_report& rep = report != nullptr ? *report : local;
  musae_layout const files = *musae_files(dir, true);
  fs::path const& e_file = files.edges;
  fs::path const& t_file = files.target;
  fs::path const& f_file = files.features;
  dataset ds;
  if (!opt.name.empty()) {
    ds.name = opt.name;
  } else {
    ds.name = files.name.empty() ? default_name(dir) : files.name;
  }

  // Targets: one row per node, N = rows, ids 0..N-1.
  read_file(rep, t_file);
  std::vector<std::string> cols;
  std::int64_t id_col = -1;
  std::int64_t label_col = -1;
  struct row {
    vid_t id;
    std::string label;
    std::int64_t line;
  };
  std::vector<row> rows;
  {
    line_reader in(t_file);
    std::string_view line;
    std::vector<std::string> fields;
    while (in.next(line)) {
      if (blank(line)) continue;
      if (!split_csv(line, fields)) in.fail("unterminated quoted field");
      if (cols.empty()) {
        cols = fields;
        std::string id_name = opt.id_column;
        if (id_name.empty()) id_name = column_index(cols, "new_id") >= 0 ? "new_id" : "id";
        id_col = column_index(cols, id_name);
        if (id_col < 0) {
          in.fail(
              fmt::format("no node id column '{}'; columns are: {}; choose one with "
                          "--id-column NAME",
                          id_name, fmt::join(cols, ", ")));
        }
        if (!opt.label_column.empty()) {
          label_col = column_index(cols, opt.label_column);
          if (label_col < 0) {
            in.fail(fmt::format("no label column '{}' (--label-column); columns are: {}",
                                opt.label_column, fmt::join(cols, ", ")));
          }
        } else {
          for (std::string_view c : kMusaeLabelColumns) {
            if ((label_col = column_index(cols, c)) >= 0) break;
          }
          if (label_col < 0) {
            in.fail(
                fmt::format("no label column (tried {}); columns are: {}; choose one with "
                            "--label-column NAME",
                            fmt::join(kMusaeLabelColumns, ", "), fmt::join(cols, ", ")));
          }
        }
        continue;
      }
      if (fields.size() != cols.size()) {
        in.fail(fmt::format("{} fields, but the header has {} columns ({})", fields.size(),
                            cols.size(), fmt::join(cols, ", ")));
      }
      vid_t const id = parse_id(fields[id_col], in, "node id");
      std::string const& label = fields[label_col];
      if (strip(label).empty()) {
        in.fail(fmt::format("empty value in label column '{}'", cols[label_col]));
      }
      rows.push_back({id, std::string(strip(label)), in.lineno()});
    }
    if (rows.empty()) {
      COOPGNN_IO_FAIL("{}: no rows: expected a header and one row per node", t_file.string());
    }
  }
  auto const n = static_cast<vid_t>(rows.size());
  ds.num_nodes = n;
  std::vector<const std::string*> label_of(static_cast<std::size_t>(n), nullptr);
  for (const row& r : rows) {
    if (r.id >= n) {
      COOPGNN_IO_FAIL("{}:{}: node id {} is out of range: {} rows, so ids must be 0..{}",
                      t_file.string(), r.line, r.id, n, n - 1);
    }
    if (label_of[r.id] != nullptr) {
      COOPGNN_IO_FAIL("{}:{}: node id {} appears twice", t_file.string(), r.line, r.id);
    }
    label_of[r.id] = &r.label;
  }
  std::string const& lname = cols[label_col];
  bool const integer = std::all_of(rows.begin(), rows.end(), [](const row& r) {
    std::int64_t v = 0;
    auto [p, e] = std::from_chars(r.label.data(), r.label.data() + r.label.size(), v);
    return e == std::errc() && p == r.label.data() + r.label.size();
  });
  ds.labels.resize(static_cast<std::size_t>(n));
  if (integer) {
    for (const row& r : rows) {
      std::int64_t v = 0;
      std::from_chars(r.label.data(), r.label.data() + r.label.size(), v);
      if (v < 0) {
        COOPGNN_IO_FAIL("{}:{}: label {} in column '{}' is negative: class ids start at 0",
                        t_file.string(), r.line, v, lname);
      }
      ds.labels[r.id] = v;
    }
    ds.num_classes = classes_from_max_label(*std::max_element(ds.labels.begin(), ds.labels.end()),
                                            t_file.string());
    note(rep, fmt::format("{}: labels from column '{}': integer class ids, {} classes (max + 1)",
                          t_file.string(), lname, ds.num_classes));
  } else {
    std::map<std::string, std::int64_t> ids;
    for (const row& r : rows) ids.emplace(r.label, 0);
    std::int64_t next = 0;
    std::vector<std::string> shown;
    for (auto& [value, id] : ids) {
      id = next++;
      shown.push_back(fmt::format("{}={}", value, id));
    }
    for (const row& r : rows) ds.labels[r.id] = ids.at(r.label);
    ds.num_classes = next;
    note(rep, fmt::format("{}: labels from column '{}': {} distinct values mapped to class ids "
                          "0..{} in sorted order{}",
                          t_file.string(), lname, next, next - 1,
                          next <= 20 ? fmt::format(" ({})", fmt::join(shown, ", ")) : ""));
  }

  // Edges
  (void)read_edge_lines(e_file, ds, rep, n,
                        fmt::format("{} has {} nodes (ids 0..{})", t_file.string(), n, n - 1));
  if (ds.src.empty()) COOPGNN_IO_FAIL("{}: no edges", e_file.string());

  // Features: {"node id": [feature ids...]}
  read_file(rep, f_file);
  nlohmann::json j;
  {
    std::ifstream f(f_file, std::ios::binary);
    if (!f) COOPGNN_IO_FAIL("{}: cannot open", f_file.string());
    try {
      j = nlohmann::json::parse(f);
    } catch (const nlohmann::json::exception& e) {
      COOPGNN_IO_FAIL(
          "{}: not valid JSON: {} (expected an object {{\"node id\": [feature ids, ...]}})",
          f_file.string(), e.what());
    }
  }
  if (!j.is_object()) {
    COOPGNN_IO_FAIL("{}: expected a JSON object {{\"node id\": [feature ids, ...]}}, found {}",
                    f_file.string(), j.type_name());
  }
  std::int64_t max_feature = -1;
  std::int64_t listed = 0;
  for (const auto& [key, value] : j.items()) {
    std::int64_t v = -1;
    auto [p, e] = std::from_chars(key.data(), key.data() + key.size(), v);
    if (e != std::errc() || p != key.data() + key.size() || v < 0 || v >= n) {
      COOPGNN_IO_FAIL("{}: key \"{}\" is not a node id: expected an integer 0..{} ({} has {} rows)",
                      f_file.string(), key, n - 1, t_file.string(), n);
    }
    bool ok = value.is_array();
    for (const auto& x : value) {
      ok = ok && x.is_number_integer() && x.get<std::int64_t>() >= 0 &&
           x.get<std::int64_t>() < std::numeric_limits<std::int64_t>::max();
      if (ok) max_feature = std::max(max_feature, x.get<std::int64_t>());
    }
    if (!ok) {
      // Shown as JSON only when flat: dump() recurses, and a deeply nested value (accepted by
      // the iterative parser) would overflow the stack.
      bool const flat = std::all_of(value.begin(), value.end(),
                                    [](const nlohmann::json& x) { return x.is_primitive(); });
      std::string shown =
          flat ? value.dump() : fmt::format("{} holding arrays or objects", value.type_name());
      if (shown.size() > 60) shown = shown.substr(0, 57) + "...";
      COOPGNN_IO_FAIL(
          "{}: key \"{}\": expected an array of non-negative integer feature ids, found {}",
          f_file.string(), key, shown);
    }
    listed += static_cast<std::int64_t>(value.size());
  }
  if (max_feature >= 0) {
    check_dense_size(
        f_file.string(),
        fmt::format("bag of words, {} feature ids listed for {} of {} nodes", listed, j.size(), n),
        n, max_feature + 1, opt, rep);
    ds.features = matrix<float>(n, max_feature + 1);
    for (const auto& [key, value] : j.items()) {
      vid_t const v = std::stoll(key);
      for (const auto& x : value) ds.features(v, x.get<std::int64_t>()) += 1.0f;
    }
  } else {
    note(rep, fmt::format("{}: no feature ids listed: no features", f_file.string()));
  }

  finish_edges(ds, opt, rep, e_file.string(), stored_once_policy::undirected_format);
  if (opt.stratified) {
    stratified_split(ds, opt.train_fraction, opt.valid_fraction, opt.seed);
  } else {
    keyed_split(ds, opt.train_fraction, opt.valid_fraction, opt.seed);
  }
  rep.split = fmt::format("{} {}/{}/{} (fractions {}/{}{}, keyed, seed {})",
                          opt.stratified ? "stratified" : "random", ds.train.size(),
                          ds.valid.size(), ds.test.size(), opt.train_fraction, opt.valid_fraction,
                          opt.stratified ? " within each class" : "", opt.seed);
  validate_dataset(ds, dir.string());
  return ds;
}


namespace formats::detail {

namespace {

bool detect_musae(const fs::path& input) {
  std::error_code ec;
  return fs::is_directory(input, ec) && musae_files(input, false).has_value();
}

constexpr std::string_view kMusaeOptions[] = {"--directed", "--label-column", "--id-column", "--train-fraction", "--valid-fraction", "--seed", "--stratified"};

}  // namespace

const input_format& musae_format() {
  static const input_format f{
      "musae",
      "a MUSAE directory (NAME_edges.csv, NAME_target.csv, NAME_features.json)",
      "a MUSAE directory (NAME_edges.csv, NAME_target.csv, NAME_features.json; SNAP's\n"
      "facebook, git, twitch, wikipedia; or the original release's edges.csv, target.csv,\n"
      "features.json): undirected edges symmetrized (--directed keeps them), labels from\n"
      "--label-column (non-integer values -> sorted class ids), dense bag-of-words\n"
      "features, a keyed random split by --train-fraction/--valid-fraction (--stratified:\n"
      "those fractions within each class).",
      true,
      kMusaeOptions,
      detect_musae,
      convert_musae};
  return f;
}

}  // namespace formats::detail

}  // namespace coopgnn
