#include "bench/drivers/report_tma.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <tuple>

#include "bench/drivers/report_format.hpp"
#include "runtime/core/error.hpp"

namespace coopgnn::bench {

namespace fs = std::filesystem;
using detail::bytes;
using detail::opt_num;
using detail::opt_sig;
using detail::opt_str;
using detail::plot_link;
using detail::sig;
using detail::table;
using nlohmann::json;

namespace {

// ---- reading ---------------------------------------------------------------------------------

int scheme_rank(const std::string& s) {
  static const std::vector<std::string> order = {"randomtma", "supertma", "psgd-pa", "llcg", "ggs"};
  auto const it = std::find(order.begin(), order.end(), s);
  return static_cast<int>(it - order.begin());
}

/// "default" first, then numeric seeds ascending, then other strings.
std::tuple<int, double, std::string> seed_key(const std::string& s) {
  if (s == "default") return {0, 0.0, s};
  char* end = nullptr;
  double const v = std::strtod(s.c_str(), &end);
  if (!s.empty() && end != nullptr && *end == '\0') return {1, v, s};
  return {2, 0.0, s};
}

std::string seed_of(const std::string& command) {
  static const std::regex re(R"((?:^|\s)--seed(?:=|\s+)(\S+))");
  std::smatch m;
  return std::regex_search(command, m, re) ? m[1].str() : std::string("default");
}

std::size_t array_size(const json& obj, const std::string& key) {
  return obj.is_object() && obj.contains(key) && obj.at(key).is_array() ? obj.at(key).size() : 0;
}

tma_run read_run(const fs::path& root, const fs::path& jsonl) {
  tma_run r;
  r.jsonl = jsonl;
  fs::path const rel = jsonl.parent_path().lexically_relative(root);
  r.name = rel.empty() ? "." : rel.generic_string();
  std::ifstream in(jsonl);
  if (!in) COOPGNN_IO_FAIL("{}: cannot open", jsonl.string());
  std::string line, bad, terminated, timeout;
  bool any = false;
  for (int n = 1; std::getline(in, line); ++n) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    any = true;
    json j = json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.is_object()) {
      if (bad.empty()) bad = fmt::format("line {} is not a JSON object", n);
      continue;
    }
    std::string const ev = opt_str(j, "event");
    if (ev == "start") {
      r.start = std::move(j);
    } else if (ev == "aggregation") {
      r.aggregations.push_back(std::move(j));
    } else if (ev == "final") {
      r.final = std::move(j);
    } else if (ev == "terminated") {
      terminated = opt_str(j, "reason", "no reason given");
    } else if (ev == "trainer_timeout") {
      timeout =
          fmt::format("trainer rank {} sent no heartbeat after {} s (timeout {} s)",
                      opt_sig(opt_num(j, "rank")), opt_sig(opt_num(j, "last_heartbeat_seconds")),
                      opt_sig(opt_num(j, "heartbeat_timeout")));
    }
  }
  if (!terminated.empty()) {
    r.failure = "terminated: " + terminated;
  } else if (!timeout.empty()) {
    r.failure = timeout;
  } else if (!any) {
    r.failure = "empty tma.jsonl (the run stopped before its start line)";
  } else if (!r.final) {
    r.failure = fmt::format("no final line after {} aggregation(s){}", r.aggregations.size(),
                            bad.empty() ? "" : "; " + bad);
  }
  r.dataset = opt_str(r.start, "dataset", "?");
  r.scheme = opt_str(r.start, "scheme", r.final ? opt_str(*r.final, "scheme", "?") : "?");
  r.seed = seed_of(opt_str(r.start, "command"));
  r.dropped = static_cast<int>(r.start.contains("dropped_parts")
                                   ? array_size(r.start, "dropped_parts")
                                   : (r.final ? array_size(*r.final, "dropped_parts") : 0));
  return r;
}

// ---- numbers ---------------------------------------------------------------------------------

struct mean_std {
  std::size_t n = 0;
  double mean = 0, std = 0;  ///< std: sample standard deviation (n - 1), 0 for n = 1
};

mean_std stats(const std::vector<double>& xs) {
  mean_std s;
  s.n = xs.size();
  if (s.n == 0) return s;
  for (double x : xs) s.mean += x;
  s.mean /= static_cast<double>(s.n);
  if (s.n > 1) {
    double ss = 0;
    for (double x : xs) ss += (x - s.mean) * (x - s.mean);
    s.std = std::sqrt(ss / static_cast<double>(s.n - 1));
  }
  return s;
}

/// "-" (no value), "m" (one value) or "m ± s".
std::string pm(const mean_std& s) {
  if (s.n == 0) return "-";
  return s.n == 1 ? sig(s.mean) : fmt::format("{} ± {}", sig(s.mean), sig(s.std));
}

std::string mean_of(const std::vector<double>& xs) {
  return xs.empty() ? "-" : sig(stats(xs).mean);
}

std::optional<double> mean_loss_spread(const tma_run& r) {
  auto const s = tma_loss_spreads(r);
  if (s.empty()) return std::nullopt;
  return stats(s).mean;
}

const json& final_of(const tma_run& r) {
  static const json empty = json::object();
  return r.final ? *r.final : empty;
}

std::optional<double> kept_ratio(const tma_run& r) {
  if (auto v = opt_num(final_of(r), "kept_ratio")) return v;
  return opt_num(r.start.value("partition", json::object()), "kept_ratio");
}

std::string metric_of(const std::vector<tma_run>& runs) {
  std::set<std::string> m;
  for (auto const& r : runs) {
    if (r.final) m.insert(opt_str(*r.final, "metric", "?"));
  }
  return m.size() == 1 ? *m.begin() : std::string("metric");
}

/// Markdown-safe text for a table cell.
std::string cell(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '|') {
      out += "\\|";
    } else {
      out += (c == '\n' || c == '\r') ? ' ' : c;
    }
  }
  return out;
}

std::string file_token(const std::string& s) {
  std::string out = s;
  for (char& c : out) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-')) c = '_';
  }
  return out;
}

/// A CSV-safe label of a run: scheme, seed and the dropped parts.
std::string run_label(const tma_run& r) {
  std::string s = fmt::format("{} seed {}", r.scheme, r.seed);
  if (r.dropped > 0) {
    std::vector<std::string> parts;
    for (auto const& p : r.start.value("dropped_parts", json::array())) parts.push_back(p.dump());
    s += fmt::format(" drop {}", fmt::join(parts, "+"));
  }
  std::replace(s.begin(), s.end(), ',', ';');
  return s;
}

std::vector<std::string> datasets_of(const std::vector<tma_run>& runs) {
  return detail::distinct<std::string>(runs, [](const tma_run& r) { return r.dataset; });
}

// ---- tables ----------------------------------------------------------------------------------

std::string runs_table(const std::vector<tma_run>& runs) {
  std::vector<std::vector<std::string>> body;
  for (auto const& r : runs) {
    json const& f = final_of(r);
    json const part = r.start.value("partition", json::object());
    json const dist = part.value("distance", json::object());
    json const best = f.value("best", json::object());
    json const last = f.value("last", json::object());
    std::string distance = "-";
    if (auto mx = opt_num(dist, "max"))
      distance = fmt::format("{} {}", opt_str(dist, "kind", "?"), sig(*mx));
    auto const bytes_agg = opt_num(f, "bytes_aggregated");
    body.push_back(
        {cell(r.name), cell(r.dataset), cell(r.scheme), cell(r.seed),
         opt_sig(opt_num(r.start, "trainers")), std::to_string(r.dropped), opt_sig(kept_ratio(r)),
         distance,
         r.final ? opt_sig(opt_num(f, "aggregations")) : std::to_string(r.aggregations.size()),
         opt_sig(opt_num(best, "val")), opt_sig(opt_num(best, "test")),
         opt_sig(opt_num(last, "test")), opt_sig(opt_num(f, "convergence_seconds")),
         opt_sig(opt_num(f, "steps_min")), opt_sig(opt_num(f, "steps_max")),
         opt_sig(opt_num(f, "steps_spread")), opt_sig(mean_loss_spread(r)),
         bytes_agg ? bytes(*bytes_agg) : "-",
         r.failed() ? "**failed**: " + cell(r.failure) : "ok"});
  }
  return table({"run", "dataset", "scheme", "seed", "M", "F", "r", "distance (kind, max)",
                "aggregations", "best val", "best test", "last test", "convergence s", "steps min",
                "steps max", "steps max/min", "train loss spread", "bytes aggregated", "status"},
               body, 4);
}

/// The finished runs of one (dataset, scheme, F), reduced over seeds.
struct group {
  std::string dataset, scheme;
  int dropped = 0;
  std::vector<const tma_run*> ok;
  int failed = 0;
  [[nodiscard]] std::vector<double> values(const std::string& obj, const std::string& key) const {
    std::vector<double> xs;
    for (auto const* r : ok) {
      json const& f = final_of(*r);
      auto const v = opt_num(obj.empty() ? f : f.value(obj, json::object()), key);
      if (v) xs.push_back(*v);
    }
    return xs;
  }
  [[nodiscard]] mean_std best_test() const { return stats(values("best", "test")); }
  [[nodiscard]] mean_std convergence() const { return stats(values("", "convergence_seconds")); }
};

std::vector<group> groups_of(const std::vector<tma_run>& runs) {
  std::vector<group> out;
  for (auto const& r : runs) {
    auto it = std::find_if(out.begin(), out.end(), [&](const group& g) {
      return g.dataset == r.dataset && g.scheme == r.scheme && g.dropped == r.dropped;
    });
    if (it == out.end()) {
      out.push_back({r.dataset, r.scheme, r.dropped, {}, 0});
      it = out.end() - 1;
    }
    if (r.failed()) {
      ++it->failed;
    } else {
      it->ok.push_back(&r);
    }
  }
  return out;
}

std::string groups_table(const std::vector<group>& groups, const std::string& metric) {
  std::vector<std::vector<std::string>> body;
  for (auto const& g : groups) {
    std::vector<double> r, spread;
    std::set<std::string> seeds;
    for (auto const* run : g.ok) {
      if (auto v = kept_ratio(*run)) r.push_back(*v);
      if (auto v = mean_loss_spread(*run)) spread.push_back(*v);
      seeds.insert(run->seed);
    }
    body.push_back({cell(g.dataset), cell(g.scheme), std::to_string(g.dropped), mean_of(r),
                    pm(g.best_test()), pm(g.convergence()), mean_of(g.values("", "steps_min")),
                    mean_of(g.values("", "steps_max")), mean_of(g.values("", "steps_spread")),
                    mean_of(spread), std::to_string(seeds.size()), std::to_string(g.ok.size()),
                    std::to_string(g.failed)});
  }
  return table({"dataset", "scheme", "F", "r", "best test " + metric, "convergence s", "steps min",
                "steps max", "steps max/min", "train loss spread", "seeds", "runs", "failed"},
               body, 3);
}

std::string robustness_table(const std::vector<group>& groups, const std::string& metric) {
  std::vector<std::vector<std::string>> body;
  for (auto const& g1 : groups) {
    if (g1.dropped != 1 || g1.ok.empty()) continue;
    auto const g0 = std::find_if(groups.begin(), groups.end(), [&](const group& g) {
      return g.dataset == g1.dataset && g.scheme == g1.scheme && g.dropped == 0 && !g.ok.empty();
    });
    if (g0 == groups.end()) continue;
    auto const t1 = g1.best_test(), t0 = g0->best_test();
    body.push_back({cell(g1.dataset), cell(g1.scheme), pm(t1), pm(t0),
                    t1.n > 0 && t0.n > 0 ? sig(t1.mean - t0.mean) : "-", pm(g1.convergence()),
                    pm(g0->convergence()), std::to_string(g1.ok.size()),
                    std::to_string(g0->ok.size())});
  }
  if (body.empty()) {
    return "No (dataset, scheme) has finished runs with both F = 0 and F = 1.\n\n";
  }
  return table({"dataset", "scheme", "best test " + metric + " F=1", "best test " + metric + " F=0",
                "F=1 - F=0", "convergence s F=1", "convergence s F=0", "runs F=1", "runs F=0"},
               body, 2);
}

std::string discrepancy_table(const std::vector<tma_run>& runs) {
  std::vector<std::vector<std::string>> body;
  for (auto const& r : runs) {
    auto const s = tma_loss_spreads(r);
    auto const m = stats(s);
    body.push_back({cell(r.name), cell(r.dataset), cell(r.scheme), cell(r.seed),
                    std::to_string(r.dropped), std::to_string(r.aggregations.size()),
                    std::to_string(s.size()), s.empty() ? "-" : sig(m.mean),
                    s.empty() ? "-" : sig(*std::max_element(s.begin(), s.end())),
                    s.empty() ? "-" : sig(s.back()), r.failed() ? "failed" : "ok"});
  }
  return table({"run", "dataset", "scheme", "seed", "F", "aggregations", "with 2+ losses",
                "mean spread", "max spread", "last spread", "status"},
               body, 4);
}

}  // namespace

std::vector<double> tma_loss_spreads(const tma_run& run) {
  std::vector<double> out;
  for (auto const& a : run.aggregations) {
    if (!a.contains("train_loss") || !a["train_loss"].is_array()) continue;
    std::vector<double> xs;
    for (auto const& x : a["train_loss"]) {
      if (x.is_number()) xs.push_back(x.get<double>());
    }
    if (xs.size() < 2) continue;
    auto const [lo, hi] = std::minmax_element(xs.begin(), xs.end());
    out.push_back(*hi - *lo);
  }
  return out;
}

std::vector<tma_run> read_tma_runs(const fs::path& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) COOPGNN_IO_FAIL("{}: not a readable directory", dir.string());
  std::vector<fs::path> paths;
  fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec);
  for (; !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (it->path().filename() == "tma.jsonl" && it->is_regular_file(ec)) {
      paths.push_back(it->path());
    }
  }
  if (ec) COOPGNN_IO_FAIL("{}: cannot list: {}", dir.string(), ec.message());
  std::sort(paths.begin(), paths.end());
  std::vector<tma_run> runs;
  for (auto const& p : paths) runs.push_back(read_run(dir, p));
  std::stable_sort(runs.begin(), runs.end(), [](const tma_run& a, const tma_run& b) {
    auto key = [](const tma_run& r) {
      return std::make_tuple(r.dataset, scheme_rank(r.scheme), r.scheme, r.dropped,
                             seed_key(r.seed), r.name);
    };
    return key(a) < key(b);
  });
  return runs;
}

std::string render_tma(const std::vector<tma_run>& runs, const std::vector<fs::path>& plots) {
  if (runs.empty()) return "";
  std::string const metric = metric_of(runs);
  auto const groups = groups_of(runs);
  int const failed = static_cast<int>(
      std::count_if(runs.begin(), runs.end(), [](const tma_run& r) { return r.failed(); }));
  std::string out = "## Time-based model aggregation\n\n";
  out += fmt::format(
      "{} run(s) of `coopgnn tma` ({} failed), one per directory holding a `tma.jsonl` "
      "(docs/results-schema.md, \"tma\"; Zhu et al. 2023, \"Simplifying Distributed Neural "
      "Network Training on Massive Graphs: Randomized Partitions Improve Model Aggregation\"). "
      "M = trainers, F = dropped partitions (trainers that never start), r = kept training edges "
      "over all training edges (none for ggs, which trains on the whole graph), distance = the "
      "partition's distance between parts (largest over pairs). best = the aggregate with the "
      "highest validation {} (tested at the end), last = the final aggregate; convergence = the "
      "first time the validation {} is within 1% of its maximum; steps = training steps per "
      "trainer. Train loss spread = max - min over trainers of the mean step loss since the "
      "previous aggregation, averaged over the aggregations where two or more trainers reported "
      "one. Failed runs (no final line, or terminated) are listed with their reason and left "
      "out of every mean.\n\n",
      runs.size(), failed, metric, metric);
  out += "### Runs\n\n" + runs_table(runs);
  out += fmt::format(
      "### Per dataset, scheme and F (cf. Tables 2 and 3)\n\n"
      "Over the finished runs of each (dataset, scheme, F): best test {} and convergence "
      "seconds as mean ± sample standard deviation (n - 1; one value alone when n = 1; "
      "convergence over the runs that converged), the other columns as means; seeds = distinct "
      "seeds among them.\n\n",
      metric);
  out += groups_table(groups, metric);
  out +=
      "### F = 1 against F = 0 (cf. Table 6)\n\n"
      "One trainer that never starts (F = 1, its partition dropped) against all trainers "
      "(F = 0), per (dataset, scheme); F = 1 averages over every dropped partition and seed.\n\n";
  out += robustness_table(groups, metric);
  out +=
      "### Loss discrepancy across trainers (cf. Figure 3)\n\n"
      "Per run, the spread (max - min over trainers) of the train loss reported at each "
      "aggregation: its mean, largest and last value over the aggregations where two or more "
      "trainers reported a loss.\n\n";
  out += discrepancy_table(runs);
  for (auto const& d : datasets_of(runs)) {
    std::string const tok = file_token(d);
    std::string const p =
        plot_link(plots, "tma_" + tok + "_val.png",
                  fmt::format("validation {} against seconds, one line per run", metric)) +
        plot_link(plots, "tma_" + tok + "_loss.png",
                  "train loss per trainer against seconds, one panel per scheme");
    if (!p.empty()) out += fmt::format("### Plots, dataset {}\n\n", d) + p;
  }
  out += "### Provenance\n\n";
  for (auto const& r : runs) {
    auto const& s = r.start;
    out += fmt::format(
        "- `{}`: created {}, {} trainers x {} PE(s) ({}), batch {} per trainer, interval {} s, "
        "time limit {} s\n\n  ```sh\n  {}\n  ```\n",
        r.name, opt_str(s, "created", "?"), opt_sig(opt_num(s, "trainers")),
        opt_sig(opt_num(s, "pes_per_trainer")), opt_str(s, "mode", "?"),
        opt_sig(opt_num(s, "batch_size_per_trainer")), opt_sig(opt_num(s, "interval")),
        opt_sig(opt_num(s, "time_limit")), opt_str(s, "command", "?"));
  }
  return out + "\n";
}

std::vector<tma_plot> tma_plot_data(const std::vector<tma_run>& runs) {
  std::vector<tma_plot> out;
  std::string const metric = metric_of(runs);
  for (auto const& d : datasets_of(runs)) {
    std::string const tok = file_token(d);
    std::string val = "run,scheme,label,seconds,val\n";
    bool any_val = false;
    std::string loss = "scheme,trainer,seconds,loss\n";
    json panels = json::array();
    std::set<std::string> schemes_done;
    for (std::size_t i = 0; i < runs.size(); ++i) {
      auto const& r = runs[i];
      if (r.dataset != d) continue;
      for (auto const& a : r.aggregations) {
        auto const t = opt_num(a, "seconds"), v = opt_num(a, "val_metric");
        if (!t || !v) continue;
        val += fmt::format("r{},{},{},{},{}\n", i, r.scheme, run_label(r), *t, *v);
        any_val = true;
      }
      if (r.failed() || schemes_done.contains(r.scheme)) continue;
      bool any_loss = false;
      for (auto const& a : r.aggregations) {
        auto const t = opt_num(a, "seconds");
        if (!t || !a.contains("train_loss") || !a["train_loss"].is_array()) continue;
        for (std::size_t k = 0; k < a["train_loss"].size(); ++k) {
          if (!a["train_loss"][k].is_number()) continue;
          loss += fmt::format("{},{},{},{}\n", r.scheme, k, *t, a["train_loss"][k].get<double>());
          any_loss = true;
        }
      }
      if (!any_loss) continue;
      schemes_done.insert(r.scheme);
      panels.push_back({{"y", "loss"},
                        {"ylabel", "mean train loss since the previous aggregation"},
                        {"where", {{"scheme", r.scheme}}},
                        {"title", run_label(r)}});
    }
    if (any_val) {
      out.push_back(
          {{{"type", "line"},
            {"out", "tma_" + tok + "_val.png"},
            {"title", fmt::format("{}: validation {} vs training time (TMA)", d, metric)},
            {"x", "seconds"},
            {"xlabel", "seconds since the start"},
            {"logy", false},
            {"color_by", "scheme"},
            {"style_by", "run"},
            {"label", "{label}"},
            {"panels", json::array({{{"y", "val"}, {"ylabel", "validation " + metric}}})}},
           "tma_" + tok + "_val.csv",
           val});
    }
    if (!panels.empty()) {
      out.push_back(
          {{{"type", "line"},
            {"out", "tma_" + tok + "_loss.png"},
            {"title", fmt::format("{}: train loss per trainer (first run per scheme)", d)},
            {"x", "seconds"},
            {"xlabel", "seconds since the start"},
            {"logy", false},
            {"color_by", "trainer"},
            {"label", "trainer {trainer}"},
            {"columns", 3},
            {"panels", panels}},
           "tma_" + tok + "_loss.csv",
           loss});
    }
  }
  return out;
}

}  // namespace coopgnn::bench
