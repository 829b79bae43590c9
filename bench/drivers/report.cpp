#include "bench/drivers/report.hpp"

#include <fmt/format.h>
#include <sys/wait.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <tuple>

#include "bench/drivers/cache.hpp"
#include "bench/drivers/report_format.hpp"
#include "bench/drivers/report_tma.hpp"
#include "bench/drivers/work.hpp"
#include "runtime/core/error.hpp"

namespace coopgnn::bench {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr const char* kSubadditive = "P*W(B/P)>=W(B)";
const std::vector<std::string> kStages = {"sample",   "feature_load",  "forward",
                                          "backward", "communication", "optimizer"};
const std::vector<std::string> kWorkKeys = {"seeds",          "sampled_edges", "sampled_vertices",
                                            "feature_rows",   "feature_bytes", "alltoall_bytes",
                                            "allreduce_bytes"};

// ---- JSON access that names the file and the key ------------------------------------------

const json& need(const result_file& f, const json& obj, const std::string& key,
                 const std::string& where = "") {
  if (!obj.is_object() || !obj.contains(key)) {
    COOPGNN_IO_FAIL("{}: missing key \"{}\"{}", f.path.string(), key,
                    where.empty() ? "" : " in " + where);
  }
  return obj.at(key);
}

double need_num(const result_file& f, const json& obj, const std::string& key,
                const std::string& where = "") {
  const json& v = need(f, obj, key, where);
  if (!v.is_number()) {
    COOPGNN_IO_FAIL("{}: key \"{}\"{} is not a number", f.path.string(), key,
                    where.empty() ? "" : " in " + where);
  }
  return v.get<double>();
}

std::string need_str(const result_file& f, const json& obj, const std::string& key,
                     const std::string& where = "") {
  const json& v = need(f, obj, key, where);
  if (!v.is_string()) {
    COOPGNN_IO_FAIL("{}: key \"{}\"{} is not a string", f.path.string(), key,
                    where.empty() ? "" : " in " + where);
  }
  return v.get<std::string>();
}

const json& need_array(const result_file& f, const json& obj, const std::string& key) {
  const json& v = need(f, obj, key);
  if (!v.is_array()) COOPGNN_IO_FAIL("{}: key \"{}\" is not an array", f.path.string(), key);
  return v;
}

using detail::bytes;
using detail::count;
using detail::distinct;
using detail::opt_num;
using detail::opt_sig;
using detail::opt_str;
using detail::plot_link;
using detail::ratio;
using detail::sig;
using detail::table;

std::string stem_of(const result_file& f) { return f.path.stem().string(); }

// ---- work ----------------------------------------------------------------------------------

struct work_row_view {
  std::string sampler;
  std::int64_t batch_size;
  int layer;
  double vertices_per_seed, edges_per_seed;
};

std::vector<work_row_view> work_rows(const result_file& f) {
  std::vector<work_row_view> out;
  for (auto const& r : need_array(f, f.json, "rows")) {
    out.push_back({need_str(f, r, "sampler", "rows"),
                   static_cast<std::int64_t>(need_num(f, r, "batch_size", "rows")),
                   static_cast<int>(need_num(f, r, "layer", "rows")),
                   need_num(f, r, "vertices_per_seed", "rows"),
                   need_num(f, r, "edges_per_seed", "rows")});
  }
  return out;
}

struct check_view {
  std::string sampler, check, quantity;
  std::int64_t batch_size;
  int pes;
  double lhs, rhs;
  bool pass;
};

std::vector<check_view> work_checks(const result_file& f) {
  std::vector<check_view> out;
  for (auto const& c : need_array(f, f.json, "checks")) {
    const json& pass = need(f, c, "pass", "checks");
    if (!pass.is_boolean())
      COOPGNN_IO_FAIL("{}: \"pass\" in checks is not a boolean", f.path.string());
    out.push_back({need_str(f, c, "sampler", "checks"), need_str(f, c, "check", "checks"),
                   opt_str(c, "quantity", "work"),
                   static_cast<std::int64_t>(need_num(f, c, "batch_size", "checks")),
                   static_cast<int>(opt_num(c, "pes").value_or(1)), need_num(f, c, "lhs", "checks"),
                   need_num(f, c, "rhs", "checks"), pass.get<bool>()});
  }
  return out;
}

std::string render_work(const result_file& f, const std::vector<fs::path>& plots) {
  auto const& j = f.json;
  auto const rows = work_rows(f);
  auto const checks = work_checks(f);
  std::string out = fmt::format("### Sampled work against batch size (`bench work`, {})\n\n",
                                f.path.filename().string());
  std::string fanouts = "?";
  if (j.contains("fanouts") && j["fanouts"].is_array()) {
    fanouts = fmt::format("{}", fmt::join(j["fanouts"].get<std::vector<int>>(), ","));
  }
  auto const cand = opt_num(j, "num_candidates");
  out += fmt::format(
      "Fanouts {}; {} random seed sets (batches) per point, run seed {}{}; means over the "
      "batches. Theorem 3.1 says work per seed does not grow with B; Theorem 3.2 that the work "
      "W(B) is concave, hence P W(B/P) >= W(B).\n\n",
      fanouts, opt_sig(opt_num(j, "repeats")), opt_sig(opt_num(j, "seed")),
      cand ? fmt::format(", drawn from {} candidate seeds", sig(*cand)) : std::string());

  auto const samplers = distinct<std::string>(rows, [](auto const& r) { return r.sampler; });
  auto const sizes = distinct<std::int64_t>(rows, [](auto const& r) { return r.batch_size; });
  std::vector<int> layers = distinct<int>(rows, [](auto const& r) { return r.layer; });
  std::sort(layers.begin(), layers.end());
  std::vector<std::int64_t> sorted_sizes = sizes;
  std::sort(sorted_sizes.begin(), sorted_sizes.end());
  std::map<std::tuple<std::string, std::int64_t, int>, const work_row_view*> at;
  for (auto const& r : rows) at[{r.sampler, r.batch_size, r.layer}] = &r;

  // Totals per seed.
  {
    std::vector<std::string> header = {"B"};
    for (auto const& s : samplers) {
      header.push_back(s + " vertices/seed");
      header.push_back(s + " edges/seed");
    }
    std::vector<std::vector<std::string>> body;
    for (auto B : sorted_sizes) {
      std::vector<std::string> line = {std::to_string(B)};
      for (auto const& s : samplers) {
        auto const it = at.find({s, B, -1});
        line.push_back(it == at.end() ? "-" : sig(it->second->vertices_per_seed));
        line.push_back(it == at.end() ? "-" : sig(it->second->edges_per_seed));
      }
      body.push_back(line);
    }
    out += "Total over layers, per seed:\n\n" + table(header, body);
  }
  // Per layer.
  std::vector<int> per_layer;
  for (int l : layers) {
    if (l >= 0) per_layer.push_back(l);
  }
  if (!per_layer.empty()) {
    std::vector<std::string> header = {"sampler", "B"};
    for (int l : per_layer) {
      header.push_back(fmt::format("L{} vertices/seed", l));
      header.push_back(fmt::format("L{} edges/seed", l));
    }
    std::vector<std::vector<std::string>> body;
    for (auto const& s : samplers) {
      for (auto B : sorted_sizes) {
        std::vector<std::string> line = {s, std::to_string(B)};
        for (int l : per_layer) {
          auto const it = at.find({s, B, l});
          line.push_back(it == at.end() ? "-" : sig(it->second->vertices_per_seed));
          line.push_back(it == at.end() ? "-" : sig(it->second->edges_per_seed));
        }
        body.push_back(line);
      }
    }
    out +=
        "Per layer (layer l: vertices of layer l+1 and edges of block l; l = 0 next to the "
        "seeds), per seed:\n\n" +
        table(header, body, 2);
  }
  out += plot_link(plots, stem_of(f) + "_per_seed.png",
                   "sampled vertices and edges per seed against batch size");

  // Redundancy P W(B/P) / W(B).
  std::vector<int> pes;
  std::map<std::tuple<std::string, std::int64_t, int, std::string>, const check_view*> sub;
  for (auto const& c : checks) {
    if (c.check != kSubadditive) continue;
    if (std::find(pes.begin(), pes.end(), c.pes) == pes.end()) pes.push_back(c.pes);
    sub[{c.sampler, c.batch_size, c.pes, c.quantity}] = &c;
  }
  std::sort(pes.begin(), pes.end());
  if (!pes.empty()) {
    std::vector<std::string> header = {"sampler", "B"};
    for (int P : pes) {
      header.push_back(fmt::format("P={} vertices", P));
      header.push_back(fmt::format("P={} edges", P));
    }
    std::vector<std::vector<std::string>> body;
    for (auto const& s : samplers) {
      for (auto B : sorted_sizes) {
        std::vector<std::string> line = {s, std::to_string(B)};
        for (int P : pes) {
          for (char const* q : {"vertices", "edges"}) {
            auto const it = sub.find({s, B, P, q});
            line.push_back(it == sub.end() ? "-" : ratio(it->second->lhs, it->second->rhs));
          }
        }
        body.push_back(line);
      }
    }
    out +=
        "Redundancy of independent minibatching, P W(B/P) / W(B): the work of P independent "
        "batches of B/P seeds over one cooperative batch of B seeds (mean over the batches; "
        "1 = none):\n\n" +
        table(header, body, 2);
    out += plot_link(plots, stem_of(f) + "_redundancy.png", "P W(B/P) / W(B) against B");
  }

  // Checks: a summary per kind, then every failure.
  std::string const tol =
      opt_num(j, "tolerance") ? fmt::format("{:g}%", *opt_num(j, "tolerance") * 100) : "?";
  using key_t = std::tuple<std::string, std::string, std::string, int>;
  std::vector<key_t> order;
  struct tally_t {
    int passed = 0, total = 0;
    double worst = std::nan("");
  };
  std::map<key_t, tally_t> tally;
  std::vector<std::vector<std::string>> failures;
  for (auto const& c : checks) {
    bool const sub_check = c.check == kSubadditive;
    key_t const k{c.sampler, c.check, c.quantity, sub_check ? c.pes : 0};
    if (!tally.contains(k)) order.push_back(k);
    auto& t = tally[k];
    t.passed += c.pass ? 1 : 0;
    ++t.total;
    if (c.rhs != 0) {
      double const r = c.lhs / c.rhs;
      if (std::isnan(t.worst) || (sub_check ? r < t.worst : r > t.worst)) t.worst = r;
    }
    if (!c.pass) {
      failures.push_back({c.sampler, c.check, c.quantity, std::to_string(c.batch_size),
                          std::to_string(c.pes), sig(c.lhs), sig(c.rhs)});
    }
  }
  std::vector<std::vector<std::string>> body;
  for (auto const& k : order) {
    auto const& [s, check, q, P] = k;
    auto const& t = tally[k];
    body.push_back({s, check, q, P > 0 ? std::to_string(P) : "-",
                    fmt::format("{}/{}", t.passed, t.total),
                    std::isnan(t.worst) ? "-" : fmt::format("{:.4f}", t.worst),
                    t.passed == t.total ? "pass" : "**FAIL**"});
  }
  out += fmt::format(
      "Checks (docs/results-schema.md). `work_per_seed_nonincreasing` (Theorem 3.1, lhs = "
      "W(2B)/2B, rhs = W(B)/B) and `concave` (Theorem 3.2, on total edges, lhs = the slope after "
      "B, rhs = the slope before) compare means and pass within a tolerance of {} for sampling "
      "noise; worst lhs/rhs is the largest (pass: <= 1 + tolerance). `P*W(B/P)>=W(B)` must hold "
      "exactly for every batch; worst lhs/rhs is the smallest (pass: >= 1).\n\n",
      tol);
  out += table({"sampler", "check", "quantity", "P", "passed", "worst lhs/rhs", "result"}, body, 3);
  if (failures.empty()) {
    out += "Every check passed.\n\n";
  } else {
    out += "Failed checks:\n\n" +
           table({"sampler", "check", "quantity", "B", "P", "lhs", "rhs"}, failures, 3);
  }
  return out;
}

// ---- modes ---------------------------------------------------------------------------------

struct mode_row {
  std::string mode;
  int pes;
  const json* row;
};

std::vector<mode_row> modes_rows(const result_file& f) {
  std::vector<mode_row> out;
  for (auto const& r : need_array(f, f.json, "rows")) {
    need(f, r, "seconds_per_batch", "rows");
    need(f, r, "work_per_batch", "rows");
    out.push_back(
        {need_str(f, r, "mode", "rows"), static_cast<int>(need_num(f, r, "pes", "rows")), &r});
  }
  // Ascending P, cooperative first.
  std::stable_sort(out.begin(), out.end(), [](const mode_row& a, const mode_row& b) {
    return std::tie(a.pes, a.mode) < std::tie(b.pes, b.mode);
  });
  return out;
}

struct modelled_speedup {
  std::string machine;
  int pes = 0;
  double speedup = 0;  ///< independent modelled total / cooperative modelled total
};

/// The modelled cooperative/independent speedups of a modes file, per (machine, P).
std::vector<modelled_speedup> modelled_speedups(const result_file& f) {
  std::map<std::pair<std::string, int>, std::pair<double, double>> totals;  // coop, indep
  for (auto const& r : modes_rows(f)) {
    if (!r.row->contains("modelled") || !(*r.row)["modelled"].is_array()) continue;
    for (auto const& m : (*r.row)["modelled"]) {
      auto const t = opt_num(m.value("seconds_per_batch", json::object()), "total");
      if (!t) continue;
      auto& slot = totals[{opt_str(m, "machine", "?"), r.pes}];
      (r.mode == "cooperative" ? slot.first : slot.second) = *t;
    }
  }
  std::vector<modelled_speedup> out;
  for (auto const& [key, t] : totals) {
    if (t.first > 0 && t.second > 0) out.push_back({key.first, key.second, t.second / t.first});
  }
  return out;
}

std::string render_modes(const result_file& f, const std::vector<fs::path>& plots) {
  auto const& j = f.json;
  auto const rows = modes_rows(f);
  std::string out =
      fmt::format("### Cooperative vs independent minibatching (`bench modes`, {})\n\n",
                  f.path.filename().string());
  std::string fanouts = "?";
  if (j.contains("fanouts") && j["fanouts"].is_array()) {
    fanouts = fmt::format("{}", fmt::join(j["fanouts"].get<std::vector<int>>(), ","));
  }
  out += fmt::format(
      "Model {} (hidden {}), sampler {}, fanouts {}, global batch B = {}; {} measured batches per "
      "point after {} warm-up batches. Measured on this machine ({}).\n\n",
      opt_str(j, "model", "?"), opt_sig(opt_num(j, "hidden")), opt_str(j, "sampler", "?"), fanouts,
      opt_num(j, "batch_per_pe").value_or(0) > 0
          ? fmt::format("{} per PE (B = {} P)", opt_sig(opt_num(j, "batch_per_pe")),
                        opt_sig(opt_num(j, "batch_per_pe")))
          : opt_sig(opt_num(j, "batch_size")),
      opt_sig(opt_num(j, "batches")), opt_sig(opt_num(j, "warmup")),
      opt_str(j.value("host", json::object()), "device", "?"));

  // Seconds per stage.
  {
    std::vector<std::string> header = {"P", "mode"};
    for (auto const& s : kStages) header.push_back(s);
    header.push_back("total");
    std::vector<std::vector<std::string>> body;
    for (auto const& r : rows) {
      auto const& sec = (*r.row)["seconds_per_batch"];
      std::vector<std::string> line = {std::to_string(r.pes), r.mode};
      for (auto const& s : kStages) line.push_back(opt_sig(opt_num(sec, s)));
      line.push_back(opt_sig(opt_num(sec, "total")));
      body.push_back(line);
    }
    out += "Seconds per batch (per stage: the maximum over PEs of the mean per batch):\n\n" +
           table(header, body, 2);
    out += plot_link(plots, stem_of(f) + "_stages.png", "seconds per batch by stage");
  }
  // Work per batch.
  {
    std::vector<std::string> header = {"P", "mode"};
    for (auto const& k : kWorkKeys) header.push_back(k);
    std::vector<std::vector<std::string>> body;
    for (auto const& r : rows) {
      auto const& w = (*r.row)["work_per_batch"];
      std::vector<std::string> line = {std::to_string(r.pes), r.mode};
      for (auto const& k : kWorkKeys) {
        auto const v = opt_num(w, k);
        bool const is_bytes = k.find("bytes") != std::string::npos;
        line.push_back(!v ? "-" : (is_bytes ? bytes(*v) : count(*v)));
      }
      body.push_back(line);
    }
    out += "Work per batch (summed over PEs):\n\n" + table(header, body, 2);
  }
  // Independent / cooperative ratios at equal P.
  {
    std::vector<std::vector<std::string>> body;
    std::set<int> seen;
    for (auto const& r : rows) {
      if (seen.contains(r.pes)) continue;
      const json* coop = nullptr;
      const json* indep = nullptr;
      for (auto const& q : rows) {
        if (q.pes != r.pes) continue;
        if (q.mode == "cooperative") coop = q.row;
        if (q.mode == "independent") indep = q.row;
      }
      if (coop == nullptr || indep == nullptr) continue;
      seen.insert(r.pes);
      auto rat = [&](const char* obj, const char* key) {
        auto const a = opt_num((*indep)[obj], key);
        auto const b = opt_num((*coop)[obj], key);
        return a && b ? ratio(*a, *b) : std::string("-");
      };
      body.push_back({std::to_string(r.pes), rat("seconds_per_batch", "total"),
                      rat("work_per_batch", "sampled_edges"),
                      rat("work_per_batch", "sampled_vertices"),
                      rat("work_per_batch", "feature_rows")});
    }
    if (!body.empty()) {
      out +=
          "Independent / cooperative at equal P (> 1: cooperative does less):\n\n" +
          table({"P", "total seconds", "sampled_edges", "sampled_vertices", "feature_rows"}, body);
    }
  }
  out += plot_link(plots, stem_of(f) + "_work.png", "feature rows and sampled edges per batch");
  // All-to-all bytes per layer and direction.
  {
    std::vector<std::string> dirs = {"ids", "features", "forward", "backward"};
    std::vector<std::vector<std::string>> body;
    for (auto const& r : rows) {
      if (!r.row->contains("alltoall_bytes_per_batch")) continue;
      auto const& a = (*r.row)["alltoall_bytes_per_batch"];
      if (!a.is_array() || a.empty()) continue;
      std::map<int, std::map<std::string, double>> by_layer;
      for (auto const& e : a) {
        auto const layer = opt_num(e, "layer");
        auto const b = opt_num(e, "bytes");
        std::string const d = opt_str(e, "direction", "?");
        if (!layer || !b) continue;
        if (std::find(dirs.begin(), dirs.end(), d) == dirs.end()) dirs.push_back(d);
        by_layer[static_cast<int>(*layer)][d] += *b;
      }
      for (auto const& [layer, m] : by_layer) {
        std::vector<std::string> line = {std::to_string(r.pes), r.mode, std::to_string(layer)};
        for (auto const& d : dirs) {
          auto const it = m.find(d);
          line.push_back(it == m.end() ? "-" : bytes(it->second));
        }
        body.push_back(line);
      }
    }
    if (!body.empty()) {
      std::vector<std::string> header = {"P", "mode", "layer"};
      for (auto const& d : dirs) header.push_back(d);
      for (auto& line : body) line.resize(header.size(), "-");
      out +=
          "All-to-all bytes per batch leaving PEs (summed over PEs; ids = sampling exchange, "
          "features = owner -> requester input rows, forward = layer outputs owner -> "
          "requester, backward = gradients requester -> owner):\n\n" +
          table(header, body, 2);
    }
  }
  // Imbalance and peak memory.
  {
    std::vector<std::vector<std::string>> body;
    for (auto const& r : rows) {
      auto const imb = r.row->value("imbalance", json::object());
      auto const peak = r.row->value("peak_bytes_per_pe", json::object());
      auto const pmax = opt_num(peak, "max");
      auto const pmean = opt_num(peak, "mean");
      auto const pa2a = opt_num(peak, "alltoall_buffers_max");
      body.push_back({std::to_string(r.pes), r.mode, opt_sig(opt_num(imb, "seeds")),
                      opt_sig(opt_num(imb, "sampled_edges")), opt_sig(opt_num(imb, "feature_rows")),
                      pmax ? bytes(*pmax) : "-", pmean ? bytes(*pmean) : "-",
                      pa2a ? bytes(*pa2a) : "-"});
    }
    out +=
        "Load imbalance (max over PEs / mean over PEs; 1 = even) and peak working set per PE "
        "(counted by the runtime):\n\n" +
        table({"P", "mode", "imbalance seeds", "imbalance sampled_edges", "imbalance feature_rows",
               "peak max", "peak mean", "all-to-all buffers max"},
              body, 2);
  }
  // Modelled DGX times (bench/drivers/cost_model.hpp) and, from a GPU run only, measured
  // compute + modelled links.
  auto kind_table = [&](const char* key, const std::string& title) {
    std::vector<std::vector<std::string>> body;
    for (auto const& r : rows) {
      if (!r.row->contains(key) || !(*r.row)[key].is_array()) continue;
      for (auto const& p : (*r.row)[key]) {
        auto const sec = p.value("seconds_per_batch", json::object());
        std::vector<std::string> line = {opt_str(p, "machine", "?"), std::to_string(r.pes), r.mode};
        for (auto const& st : kStages) line.push_back(opt_sig(opt_num(sec, st)));
        line.push_back(opt_sig(opt_num(sec, "total")));
        body.push_back(line);
      }
    }
    if (body.empty()) return;
    std::stable_sort(body.begin(), body.end(),
                     [](const auto& a, const auto& b) { return a[0] < b[0]; });
    std::vector<std::string> header = {"machine", "P", "mode"};
    for (auto const& st : kStages) header.push_back(st);
    header.push_back("total");
    out += title + table(header, body, 3);
  };
  kind_table("modelled",
             "**MODELLED, not measured** (counted bytes and flops over the ceilings of the "
             "machine file, features " +
                 opt_str(j.value("cost_model", json::object()), "feature_placement", "?") +
                 "; see \"DGX times from the cost model\" above): seconds per batch, per stage "
                 "the maximum over PEs:\n\n");
  auto const speedups = modelled_speedups(f);
  if (!speedups.empty()) {
    std::vector<std::string> machines;
    std::set<int> ps;
    for (auto const& s : speedups) {
      if (std::find(machines.begin(), machines.end(), s.machine) == machines.end())
        machines.push_back(s.machine);
      ps.insert(s.pes);
    }
    std::vector<std::string> header = {"P"};
    for (auto const& m : machines) header.push_back(m + " (modelled)");
    std::vector<std::vector<std::string>> body;
    for (int P : ps) {
      std::vector<std::string> line = {std::to_string(P)};
      for (auto const& m : machines) {
        std::string cell = "-";
        for (auto const& s : speedups) {
          if (s.machine == m && s.pes == P) cell = fmt::format("{:.2f}x", s.speedup);
        }
        line.push_back(cell);
      }
      body.push_back(line);
    }
    out +=
        "Modelled speedup of cooperative over independent (independent total / cooperative "
        "total, > 1: cooperative is faster):\n\n" +
        table(header, body);
    out += plot_link(plots, stem_of(f) + "_modelled_speedup.png",
                     "modelled cooperative / independent speedup against P");
  }
  kind_table("measured_compute_modelled_links",
             "**MEASURED COMPUTE + MODELLED LINKS** (GPU compute seconds measured in this run, "
             "bytes over the machine's links): seconds per batch:\n\n");
  return out;
}

// ---- cache -----------------------------------------------------------------------------------

struct cache_row_view {
  std::string policy, mode;
  std::int64_t kappa = 1, cache_rows = 0;
  double fraction = 0, miss_rate = 0, rows_per_seed = 0, miss_bytes_per_seed = 0;
  int pes = 1;
};

std::vector<cache_row_view> cache_rows(const result_file& f) {
  std::vector<cache_row_view> out;
  for (auto const& r : need_array(f, f.json, "rows")) {
    cache_row_view v;
    v.policy = need_str(f, r, "policy", "rows");
    v.mode = need_str(f, r, "mode", "rows");
    v.kappa = static_cast<std::int64_t>(need_num(f, r, "kappa", "rows"));
    v.cache_rows = static_cast<std::int64_t>(need_num(f, r, "cache_rows", "rows"));
    v.fraction = need_num(f, r, "fraction", "rows");
    v.miss_rate = need_num(f, r, "miss_rate", "rows");
    v.rows_per_seed = need_num(f, r, "rows_per_seed", "rows");
    v.miss_bytes_per_seed = need_num(f, r, "miss_bytes_per_seed", "rows");
    v.pes = static_cast<int>(need_num(f, r, "pes", "rows"));
    out.push_back(std::move(v));
  }
  return out;
}

/// The kappas of `rows` in first-appearance (file) order.
std::vector<std::int64_t> distinct_kappas(const std::vector<cache_row_view>& rows) {
  return distinct<std::int64_t>(rows, [](auto const& r) { return r.kappa; });
}

std::string render_cache(const result_file& f, const std::vector<fs::path>& plots) {
  auto const& j = f.json;
  auto const rows = cache_rows(f);
  std::string out =
      fmt::format("### Feature cache vs dependent minibatching (`bench cache`, {})\n\n",
                  f.path.filename().string());
  std::string fanouts = "?";
  if (j.contains("fanouts") && j["fanouts"].is_array()) {
    fanouts = fmt::format("{}", fmt::join(j["fanouts"].get<std::vector<int>>(), ","));
  }
  out += fmt::format(
      "Sampler {}, fanouts {}, global batch B = {}, {} batches per kappa of which the first {} "
      "only warm the caches; each PE's feature loads of a batch go to its own cache as one batch "
      "(lookups, then admission of the misses). Miss rate = rows read from storage / rows "
      "requested, over all PEs and counted batches.\n\n",
      opt_str(j, "sampler", "?"), fanouts, opt_sig(opt_num(j, "batch_size")),
      opt_sig(opt_num(j, "batches")), opt_sig(opt_num(j, "warmup").value_or(0)));
  out += plot_link(plots, stem_of(f) + "_miss_rate.png", "miss rate vs kappa");
  // One line per (policy, fraction, mode, P); kappas as columns in file order.
  auto const kappas = distinct_kappas(rows);
  if (kappas.empty()) return out + "No rows.\n\n";
  std::int64_t kmax = *std::max_element(kappas.begin(), kappas.end());
  using key_t = std::tuple<std::string, double, std::string, int>;
  std::vector<key_t> keys;
  std::map<key_t, std::map<std::int64_t, const cache_row_view*>> grid;
  for (auto const& r : rows) {
    key_t const k{r.policy, r.fraction, r.mode, r.pes};
    if (!grid.count(k)) keys.push_back(k);
    grid[k][r.kappa] = &r;
  }
  std::vector<std::string> header = {"policy", "cache (|V| per PE)", "mode", "P"};
  for (auto k : kappas) header.push_back("miss K=" + kappa_name(k));
  header.push_back(fmt::format("K=1 / K={}", kmax));
  header.push_back("rows/seed K=1");
  std::vector<std::vector<std::string>> body;
  for (auto const& k : keys) {
    auto const& byk = grid[k];
    std::vector<std::string> line = {
        std::get<0>(k),
        fmt::format("{} ({} rows)", sig(std::get<1>(k)), byk.begin()->second->cache_rows),
        std::get<2>(k), std::to_string(std::get<3>(k))};
    for (auto kv : kappas) {
      auto it = byk.find(kv);
      line.push_back(it != byk.end() ? fmt::format("{:.4f}", it->second->miss_rate) : "-");
    }
    auto one = byk.find(1), top = byk.find(kmax);
    line.push_back(one != byk.end() && top != byk.end() && kmax > 1
                       ? ratio(one->second->miss_rate, top->second->miss_rate)
                       : "-");
    line.push_back(one != byk.end() ? sig(one->second->rows_per_seed) : "-");
    body.push_back(std::move(line));
  }
  out += table(header, body, 3);
  // Cooperative against independent at the same per-PE (so the same total) capacity.
  std::vector<std::vector<std::string>> cmp;
  for (auto const& r : rows) {
    if (r.mode != "cooperative" || r.pes < 2) continue;
    auto const it = grid.find(key_t{r.policy, r.fraction, "independent", r.pes});
    if (it == grid.end() || !it->second.count(r.kappa)) continue;
    auto const* ind = it->second.at(r.kappa);
    cmp.push_back({r.policy, sig(r.fraction), std::to_string(r.pes), kappa_name(r.kappa),
                   fmt::format("{:.4f}", r.miss_rate), fmt::format("{:.4f}", ind->miss_rate),
                   sig(r.rows_per_seed), sig(ind->rows_per_seed), bytes(r.miss_bytes_per_seed),
                   bytes(ind->miss_bytes_per_seed)});
  }
  if (!cmp.empty()) {
    out += "Cooperative vs independent, same cache per PE (same total capacity):\n\n";
    out += table(
        {"policy", "cache (|V| per PE)", "P", "K", "miss coop", "miss indep", "rows/seed coop",
         "rows/seed indep", "storage bytes/seed coop", "storage bytes/seed indep"},
        cmp, 4);
  }
  return out;
}
}  // namespace

std::vector<result_file> read_result_files(const fs::path& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) COOPGNN_IO_FAIL("{}: not a readable directory", dir.string());
  std::vector<fs::path> paths;
  for (auto const& e : fs::directory_iterator(dir, ec)) {
    if (e.is_regular_file() && e.path().extension() == ".json") paths.push_back(e.path());
  }
  if (ec) COOPGNN_IO_FAIL("{}: cannot list: {}", dir.string(), ec.message());
  std::sort(paths.begin(), paths.end());
  std::vector<result_file> out;
  for (auto const& p : paths) {
    std::ifstream in(p);
    json j = json::parse(in, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.is_object() || !j.contains("bench")) continue;
    result_file f{p, std::move(j)};
    std::string const bench = need_str(f, f.json, "bench");
    if (bench == "sample") continue;  // bench sample: a speed table, not rendered here
    if (bench != "work" && bench != "modes" && bench != "cache") {
      COOPGNN_IO_FAIL("{}: unknown bench \"{}\" (expected work, modes or cache)", p.string(),
                      bench);
    }
    need_str(f, f.json, "dataset");
    need_array(f, f.json, "rows");
    if (bench == "work") need_array(f, f.json, "checks");
    out.push_back(std::move(f));
  }
  return out;
}

/// A modes result's setup in one cell: "hidden H, kappa K, cache POLICY R rows | no cache, GEMM
/// fp32|tf32, features B B/elem" (results written before a key existed: its default), and a note
/// when the result predates the counted collectives.
std::string setup_of(const json& j) {
  auto const cm = j.value("cost_model", json::object());
  std::string gemm = opt_str(cm, "gemm_math", "machine file");
  if (gemm == "machine file") {
    auto const ms = cm.value("machines", json::array());
    gemm = ms.empty() ? "fp32" : opt_str(ms.front(), "gemm_math", "fp32");
  }
  auto const policy = opt_str(j, "cache_policy", "none");
  // Results written before the collectives were counted: their model charged the all-to-all-v
  // calls and 2 all-reduces but not the counts all-to-alls.
  auto const rows = j.value("rows", json::array());
  bool const counted = !rows.empty() && rows.front().contains("collectives_per_pe_step");
  return fmt::format("hidden {}, kappa {}, {}, GEMM {}, features {} B/elem{}",
                     opt_sig(opt_num(j, "hidden")), sig(opt_num(j, "batch_dependency").value_or(1)),
                     policy == "none" ? std::string("no cache")
                                      : fmt::format("cache {} {} rows", policy,
                                                    sig(opt_num(j, "cache_rows").value_or(0))),
                     gemm, sig(opt_num(cm, "feature_bytes").value_or(4)),
                     counted ? "" : " (older model: counts all-to-alls not charged)");
}

/// The cross-dataset summary of the modelled DGX times: speedups per file, machine and P, the
/// machine figures with their sources, and whether any GPU run validates the model.
std::string render_cost_model(const std::vector<result_file>& files) {
  std::vector<const result_file*> modes;
  for (auto const& f : files) {
    if (f.json["bench"] == "modes" && f.json.contains("cost_model")) modes.push_back(&f);
  }
  if (modes.empty()) return "";
  std::string out = "## DGX times from the cost model\n\n";
  out +=
      "Every DGX number in this report is **MODELLED, not measured**: each stage's counted bytes "
      "over the bandwidth that moves them (HBM, NVLink, PCIe/UVA) plus its counted arithmetic "
      "over the GPU's FP32 rate (GEMMs at the TF32 Tensor Core rate where the setup says tf32), "
      "kernel by kernel, plus a fixed cost per kernel and per counted collective call "
      "(bench/drivers/cost_model.hpp; appendix A.4 of the cooperative paper in spirit). The "
      "counts come from this machine's runs; no host second enters a DGX number.\n\n";
  bool validated = false;
  for (auto const* f : modes) {
    if (opt_str(f->json.value("host", json::object()), "backend", "") == "cuda") validated = true;
  }
  out += validated ? "Validation: a CUDA-backend run is among the results; its measured stages are "
                     "printed beside the model by tools/device_check.sh.\n\n"
                   : "**Validation: the model is UNVALIDATED.** No GPU run exists yet; "
                     "tools/device_check.sh prints measured per-stage times beside the model's "
                     "prediction and their ratio when a GPU is present.\n\n";
  std::vector<std::vector<std::string>> body;
  std::vector<std::string> machines;
  std::set<int> ps;
  for (auto const* f : modes) {
    for (auto const& x : modelled_speedups(*f)) {
      if (std::find(machines.begin(), machines.end(), x.machine) == machines.end())
        machines.push_back(x.machine);
      ps.insert(x.pes);
    }
  }
  for (auto const* f : modes) {
    auto const sp = modelled_speedups(*f);
    for (auto const& m : machines) {
      auto const bpp = opt_num(f->json, "batch_per_pe").value_or(0);
      std::vector<std::string> line = {
          f->path.filename().string(), opt_str(f->json, "sampler", "?"),
          bpp > 0 ? fmt::format("{} per PE", sig(bpp)) : opt_sig(opt_num(f->json, "batch_size")),
          setup_of(f->json), m};
      for (int P : ps) {
        std::string cell = "-";
        for (auto const& x : sp) {
          if (x.machine == m && x.pes == P) cell = fmt::format("{:.2f}x", x.speedup);
        }
        line.push_back(cell);
      }
      body.push_back(line);
    }
  }
  std::vector<std::string> header = {"result", "sampler", "global batch", "setup", "machine"};
  for (int P : ps) header.push_back(fmt::format("P={}", P));
  out +=
      "Modelled speedup of cooperative over independent minibatching (independent seconds "
      "per batch / cooperative; > 1: cooperative is faster). The paper reports \"up to 64% "
      "speedup\" (1.64x) on single-node multi-GPU systems (arXiv:2310.12403, abstract). The "
      "setup column gives each result's hidden width, LABOR kappa, per-PE feature cache, GEMM "
      "math and modelled bytes per feature element; docs/results/cost-model.md says how far "
      "each `paper` result is from the paper's configuration:\n\n" +
      table(header, body, 5);
  // Machine figures (from the first file; every file of one regeneration uses the same file).
  auto const& cm = modes.front()->json["cost_model"];
  std::vector<std::string> mh = {"figure"};
  std::vector<std::vector<std::string>> mb;
  std::map<std::string, std::size_t> row_of;
  for (auto const& m : cm.value("machines", json::array())) {
    mh.push_back(opt_str(m, "name", "?"));
    json const figures = m.value("figures", json::object());  // items() must not dangle
    for (auto const& [key, fig] : figures.items()) {
      if (!row_of.contains(key)) {
        row_of[key] = mb.size();
        mb.push_back({key});
      }
      auto& line = mb[row_of[key]];
      line.resize(mh.size() - 1, "-");
      line.push_back(opt_sig(opt_num(fig, "value")) +
                     (fig.value("assumption", false) ? " (assumption)" : ""));
    }
  }
  for (auto& line : mb) line.resize(mh.size(), "-");
  out += fmt::format(
             "Machine figures (`{}`; every figure's source is in that file and in each "
             "result's `cost_model`; GB/s per direction):\n\n",
             opt_str(cm, "machine_file", "?")) +
         table(mh, mb, 1);
  return out;
}

std::string render_report(const std::string& title, const std::vector<result_file>& files,
                          const std::vector<fs::path>& plots, const std::string& plot_note,
                          const std::vector<tma_run>& runs) {
  std::string out = fmt::format("# {}\n\n", title);
  out += fmt::format(
      "Rendered by `coopgnn report` from {} result file(s){} (docs/results-schema.md); every "
      "number below is read from them. Plots: {}.\n\n",
      files.size(), runs.empty() ? "" : fmt::format(" and {} TMA run(s)", runs.size()), plot_note);
  out += render_cost_model(files);
  std::vector<std::string> datasets;
  for (auto const& f : files) {
    auto const d = need_str(f, f.json, "dataset");
    if (std::find(datasets.begin(), datasets.end(), d) == datasets.end()) datasets.push_back(d);
  }
  for (auto const& d : datasets) {
    std::vector<const result_file*> mine;
    for (auto const& f : files) {
      if (f.json["dataset"] == d) mine.push_back(&f);
    }
    auto const& first = mine.front()->json;
    out += fmt::format("## Dataset {}\n\n", d);
    // num_edges is the graph measured, each edge once; files written before num_edges_stored
    // existed give the stored count there.
    out += fmt::format("Directory `{}`, |V| = {}, |E| = {} ({}).\n\n",
                       opt_str(first, "dataset_dir", "?"), opt_sig(opt_num(first, "num_nodes")),
                       opt_sig(opt_num(first, "num_edges")),
                       first.contains("num_edges_stored")
                           ? fmt::format("directed, repeats removed; {} stored",
                                         opt_sig(opt_num(first, "num_edges_stored")))
                           : std::string("directed, as stored"));
    // `work`, then `modes`, then `cache`, each in file-name order.
    for (auto const* f : mine) {
      if (f->json["bench"] == "work") out += render_work(*f, plots);
    }
    for (auto const* f : mine) {
      if (f->json["bench"] == "modes") out += render_modes(*f, plots);
    }
    for (auto const* f : mine) {
      if (f->json["bench"] == "cache") out += render_cache(*f, plots);
    }
    out += "### Provenance\n\n";
    for (auto const* f : mine) {
      auto const host = f->json.value("host", json::object());
      out += fmt::format(
          "- `{}`: created {}, backend {}, device {}, threads {}\n\n  ```sh\n  {}\n  ```\n",
          f->path.filename().string(), opt_str(f->json, "created", "?"),
          opt_str(host, "backend", "?"), opt_str(host, "device", "?"),
          opt_sig(opt_num(host, "threads")), opt_str(f->json, "command", "?"));
    }
    out += "\n";
  }
  if (datasets.empty() && runs.empty()) {
    out += "No result files (`*.json` with a `bench` key) were found.\n";
  }
  return out + render_tma(runs, plots);
}

std::vector<fs::path> write_plot_data(const fs::path& dir, const std::vector<result_file>& files,
                                      const std::vector<tma_run>& runs) {
  fs::path const pdir = dir / "plots";
  json specs = json::array();
  std::vector<fs::path> pngs;
  auto add = [&](json spec, const std::string& csv_name, const std::string& csv) {
    write_file_atomic(pdir / csv_name, csv);
    spec["csv"] = csv_name;
    pngs.push_back(fs::path("plots") / spec["out"].get<std::string>());
    specs.push_back(std::move(spec));
  };
  for (auto const& f : files) {
    std::string const stem = stem_of(f);
    std::string const ds = need_str(f, f.json, "dataset");
    if (f.json["bench"] == "work") {
      std::string csv = "sampler,layer,layer_name,batch_size,vertices_per_seed,edges_per_seed\n";
      for (auto const& r : work_rows(f)) {
        csv += fmt::format("{},{},{},{},{},{}\n", r.sampler, r.layer,
                           r.layer < 0 ? std::string("total") : fmt::format("layer {}", r.layer),
                           r.batch_size, r.vertices_per_seed, r.edges_per_seed);
      }
      add({{"type", "line"},
           {"out", stem + "_per_seed.png"},
           {"title", fmt::format("{}: sampled work per seed vs batch size", ds)},
           {"x", "batch_size"},
           {"xlabel", "batch size B (seeds)"},
           {"log2x", true},
           {"logy", true},
           {"color_by", "layer_name"},
           {"style_by", "sampler"},
           {"label", "{sampler} {layer_name}"},
           {"panels",
            json::array({{{"y", "vertices_per_seed"}, {"ylabel", "sampled vertices per seed"}},
                         {{"y", "edges_per_seed"}, {"ylabel", "sampled edges per seed"}}})}},
          stem + "_per_seed.csv", csv);
      csv = "sampler,quantity,pes,P,batch_size,ratio\n";
      bool any = false;
      for (auto const& c : work_checks(f)) {
        if (c.check != kSubadditive || c.rhs == 0) continue;
        any = true;
        csv += fmt::format("{},{},{},P={},{},{}\n", c.sampler, c.quantity, c.pes, c.pes,
                           c.batch_size, c.lhs / c.rhs);
      }
      if (any) {
        add({{"type", "line"},
             {"out", stem + "_redundancy.png"},
             {"title", fmt::format("{}: P W(B/P) / W(B), independent over cooperative work", ds)},
             {"x", "batch_size"},
             {"xlabel", "global batch size B (seeds)"},
             {"log2x", true},
             {"logy", false},
             {"hline", 1.0},
             {"color_by", "P"},
             {"style_by", "sampler"},
             {"label", "{sampler} {P}"},
             {"panels", json::array({{{"y", "ratio"},
                                      {"ylabel", "P W(B/P) / W(B), sampled vertices"},
                                      {"where", {{"quantity", "vertices"}}}},
                                     {{"y", "ratio"},
                                      {"ylabel", "P W(B/P) / W(B), sampled edges"},
                                      {"where", {{"quantity", "edges"}}}}})}},
            stem + "_redundancy.csv", csv);
      }
    } else if (f.json["bench"] == "cache") {
      // x = the kappa's position in the file (never last), labelled with the kappa.
      auto const rows = cache_rows(f);
      auto const kappas = distinct_kappas(rows);
      std::string csv = "policy,mode,pes,series,size,x,kappa,miss_rate,miss_bytes_per_seed\n";
      for (auto const& r : rows) {
        auto const x = std::find(kappas.begin(), kappas.end(), r.kappa) - kappas.begin();
        csv += fmt::format("{},{},{},{} {} P={},{} |V|,{},{},{},{}\n", r.policy, r.mode, r.pes,
                           r.policy, r.mode == "cooperative" ? "coop" : "indep", r.pes,
                           sig(r.fraction), x, kappa_name(r.kappa), r.miss_rate,
                           r.miss_bytes_per_seed);
      }
      json ticks = json::array();
      for (std::size_t i = 0; i < kappas.size(); ++i) ticks.push_back({i, kappa_name(kappas[i])});
      add({{"type", "line"},
           {"out", stem + "_miss_rate.png"},
           {"title", fmt::format("{}: feature cache miss rate vs dependent minibatching", ds)},
           {"x", "x"},
           {"xlabel", "batch dependency kappa"},
           {"xticks", ticks},
           {"logy", false},
           {"color_by", "series"},
           {"style_by", "size"},
           {"label", "{series}, {size}"},
           {"panels", json::array({{{"y", "miss_rate"}, {"ylabel", "cache miss rate"}},
                                   {{"y", "miss_bytes_per_seed"},
                                    {"ylabel", "feature bytes from storage per seed"}}})}},
          stem + "_miss_rate.csv", csv);
    } else {
      auto const rows = modes_rows(f);
      std::string csv = "pes,P,mode";
      for (auto const& s : kStages) csv += "," + s;
      csv += "\n";
      for (auto const& r : rows) {
        csv += fmt::format("{},P={},{}", r.pes, r.pes, r.mode);
        for (auto const& s : kStages) {
          csv += fmt::format(",{}", opt_num((*r.row)["seconds_per_batch"], s).value_or(0.0));
        }
        csv += "\n";
      }
      auto const speedups = modelled_speedups(f);
      if (!speedups.empty()) {
        std::string sc = "machine,pes,speedup\n";
        for (auto const& x : speedups) sc += fmt::format("{},{},{}\n", x.machine, x.pes, x.speedup);
        add({{"type", "line"},
             {"out", stem + "_modelled_speedup.png"},
             {"title", fmt::format("{} ({}): MODELLED cooperative / independent speedup", ds,
                                   opt_str(f.json, "sampler", "?"))},
             {"x", "pes"},
             {"xlabel", "PEs (GPUs) P"},
             {"log2x", true},
             {"logy", false},
             {"hline", 1.0},
             {"color_by", "machine"},
             {"label", "{machine}"},
             {"panels",
              json::array({{{"y", "speedup"},
                            {"ylabel", "independent / cooperative seconds per batch"}}})}},
            stem + "_modelled_speedup.csv", sc);
      }
      add({{"type", "stacked_bar"},
           {"out", stem + "_stages.png"},
           {"title", fmt::format("{}: seconds per batch by stage (measured)", ds)},
           {"group", "P"},
           {"bar", "mode"},
           {"stack", kStages},
           {"ylabel", "seconds per batch (max over PEs)"}},
          stem + "_stages.csv", csv);
      csv = "pes,P,mode,feature_rows,sampled_edges\n";
      for (auto const& r : rows) {
        auto const& w = (*r.row)["work_per_batch"];
        csv += fmt::format("{},P={},{},{},{}\n", r.pes, r.pes, r.mode,
                           opt_num(w, "feature_rows").value_or(0.0),
                           opt_num(w, "sampled_edges").value_or(0.0));
      }
      add({{"type", "grouped_bar"},
           {"out", stem + "_work.png"},
           {"title", fmt::format("{}: work per batch, cooperative vs independent", ds)},
           {"group", "P"},
           {"bar", "mode"},
           {"panels",
            json::array({{{"y", "feature_rows"}, {"ylabel", "feature rows per batch"}},
                         {{"y", "sampled_edges"}, {"ylabel", "sampled edges per batch"}}})}},
          stem + "_work.csv", csv);
    }
  }
  for (auto& p : tma_plot_data(runs)) add(std::move(p.spec), p.csv_name, p.csv);
  write_file_atomic(pdir / "plots.json", json{{"plots", specs}}.dump(2) + "\n");
  return pngs;
}

namespace {

std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

int run_shell(const std::string& cmd) {
  int const st = std::system(cmd.c_str());
  if (st == -1) return -1;
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

/// Last `n` lines of a text file, joined by " / ".
std::string tail_lines(const fs::path& p, std::size_t n) {
  std::ifstream in(p);
  std::vector<std::string> lines;
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty()) lines.push_back(line);
  }
  std::size_t const from = lines.size() > n ? lines.size() - n : 0;
  std::string out;
  for (std::size_t i = from; i < lines.size(); ++i) out += (out.empty() ? "" : " / ") + lines[i];
  return out;
}

}  // namespace

report_outcome write_report(const fs::path& dir, const report_options& o) {
  report_outcome res;
  auto const files = read_result_files(dir);
  auto const runs = read_tma_runs(dir);
  for (auto const& f : files) res.files.push_back(f.path);
  for (auto const& r : runs) res.runs.push_back(r.jsonl);
  if (files.empty() && runs.empty()) {
    COOPGNN_IO_FAIL(
        "{}: no result files (*.json with a \"bench\" key) or TMA runs (tma.jsonl) "
        "to report",
        dir.string());
  }
  if (!o.plots) {
    res.plot_note = "disabled (--no-plots)";
  } else {
    auto const wanted = write_plot_data(dir, files, runs);
    std::string python;
    for (auto const& py : o.python) {
      if (run_shell(shell_quote(py) + " -c 'import matplotlib' >/dev/null 2>&1") == 0) {
        python = py;
        break;
      }
    }
    std::error_code ec;
    if (python.empty()) {
      res.plot_note = fmt::format(
          "skipped: no Python interpreter with matplotlib (tried {}); install python3-matplotlib "
          "and rerun to get the PNGs",
          fmt::join(o.python, ", "));
    } else if (!fs::is_regular_file(o.plot_script, ec)) {
      res.plot_note = fmt::format("skipped: plot script {} not found", o.plot_script.string());
    } else {
      fs::path const log = dir / "plots" / "plot.log";
      int const rc = run_shell(fmt::format("MPLBACKEND=Agg {} {} {} >{} 2>&1", shell_quote(python),
                                           shell_quote(o.plot_script.string()),
                                           shell_quote((dir / "plots" / "plots.json").string()),
                                           shell_quote(log.string())));
      for (auto const& p : wanted) {
        if (fs::is_regular_file(dir / p, ec)) res.plots.push_back(p);
      }
      if (rc != 0) {
        res.plot_note = fmt::format("skipped: {} failed with exit status {} ({})",
                                    o.plot_script.string(), rc, tail_lines(log, 3));
      } else {
        res.plot_note = fmt::format("{} PNG(s) rendered into plots/ by {} ({})", res.plots.size(),
                                    o.plot_script.filename().string(), python);
      }
      if (rc != 0) res.plots.clear();
    }
  }
  res.markdown = dir / "report.md";
  write_file_atomic(res.markdown, render_report(o.title, files, res.plots, res.plot_note, runs));
  return res;
}

}  // namespace coopgnn::bench
