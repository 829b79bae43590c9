#include "bench/drivers/work.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>
#include <tuple>
#include <utility>

#include "runtime/core/error.hpp"
#include "runtime/core/rng.hpp"
#include "runtime/core/timer.hpp"
#include "pipeline/minibatch.hpp"

namespace coopgnn::bench {

namespace {

constexpr const char* kNonincreasing = "work_per_seed_nonincreasing";
constexpr const char* kConcave = "concave";
constexpr const char* kSubadditive = "P*W(B/P)>=W(B)";

bool is_power_of_two(std::int64_t x) { return x > 0 && (x & (x - 1)) == 0; }

/// Per-layer vertex and edge counts of one sampled batch.
struct batch_counts {
  std::vector<std::int64_t> vertices;  // [L]
  std::vector<std::int64_t> edges;     // [L]
  std::int64_t total_vertices = 0;
  std::int64_t total_edges = 0;
};

batch_counts count_batch(const exec_context& ctx, const csc_graph& g, std::span<const vid_t> seeds,
                         const batch_key& key) {
  auto const sb = sample_independent(ctx, g, seeds, key);
  batch_counts c;
  for (auto const& b : sb.blocks) {
    c.vertices.push_back(b.num_src());
    c.edges.push_back(b.num_edges());
    c.total_vertices += b.num_src();
    c.total_edges += b.num_edges();
  }
  return c;
}

/// Sums over the repeats of one (sampler, P, B) subadditivity check.
struct subadditive_acc {
  double lhs_vertices = 0, rhs_vertices = 0, lhs_edges = 0, rhs_edges = 0;
  bool pass_vertices = true, pass_edges = true;
};

/// Shortest round-trip form of a double ("12", "0.5", "1234.3333333333333").
std::string num(double x) { return fmt::format("{}", x); }

}  // namespace

void validate_work_options(const work_options& o, std::int64_t num_candidates) {
  COOPGNN_EXPECTS(!o.samplers.empty(), "--samplers: give at least one sampler (ns, labor)");
  COOPGNN_EXPECTS(!o.fanouts.empty(), "--fanouts: give at least one layer's fanout");
  for (int f : o.fanouts) {
    COOPGNN_EXPECTS(f >= 1 || f == -1, "--fanouts: fanout {} is invalid (use k >= 1 or -1 = all)",
                    f);
  }
  COOPGNN_EXPECTS(is_power_of_two(o.min_batch), "--min-batch {} is not a power of two (>= 1)",
                  o.min_batch);
  COOPGNN_EXPECTS(is_power_of_two(o.max_batch), "--max-batch {} is not a power of two (>= 1)",
                  o.max_batch);
  COOPGNN_EXPECTS(o.min_batch <= o.max_batch, "--min-batch {} is larger than --max-batch {}",
                  o.min_batch, o.max_batch);
  COOPGNN_EXPECTS(o.min_batch <= num_candidates,
                  "--min-batch {} is larger than the {} candidate seeds of the dataset",
                  o.min_batch, num_candidates);
  COOPGNN_EXPECTS(o.repeats >= 1, "--repeats {} must be >= 1", o.repeats);
  for (std::size_t i = 0; i < o.pes.size(); ++i) {
    COOPGNN_EXPECTS(o.pes[i] >= 1, "--pes: P = {} must be >= 1", o.pes[i]);
    COOPGNN_EXPECTS(std::count(o.pes.begin(), o.pes.begin() + i, o.pes[i]) == 0,
                    "--pes: P = {} is given twice", o.pes[i]);
  }
  for (std::size_t i = 0; i < o.samplers.size(); ++i) {
    COOPGNN_EXPECTS(std::count(o.samplers.begin(), o.samplers.begin() + i, o.samplers[i]) == 0,
                    "--samplers: {} is given twice", to_string(o.samplers[i]));
  }
  COOPGNN_EXPECTS(o.sample_threads >= 1, "--sample-threads {} must be >= 1", o.sample_threads);
  COOPGNN_EXPECTS(o.tolerance >= 0 && o.tolerance < 1, "tolerance {} must be in [0, 1)",
                  o.tolerance);
}

std::vector<std::int64_t> work_batch_grid(const work_options& o, std::int64_t num_candidates) {
  validate_work_options(o, num_candidates);
  std::vector<std::int64_t> grid;
  for (std::int64_t b = o.min_batch; b <= o.max_batch && b <= num_candidates; b *= 2) {
    grid.push_back(b);
  }
  return grid;
}

std::vector<vid_t> draw_seed_set(std::span<const vid_t> candidates, std::int64_t b,
                                 std::uint64_t seed, std::uint32_t repeat) {
  auto const n = static_cast<std::int64_t>(candidates.size());
  COOPGNN_EXPECTS(b >= 0 && b <= n, "draw_seed_set: batch size {} outside [0, {}]", b, n);
  auto const st = rng::make_stream(seed, rng::purpose::shuffle, 0);
  std::vector<std::pair<std::uint64_t, vid_t>> keyed;
  keyed.reserve(candidates.size());
  for (vid_t v : candidates) {
    auto const r = rng::draw4(st, static_cast<std::uint64_t>(v), 0, repeat);
    keyed.emplace_back((static_cast<std::uint64_t>(r[0]) << 32) | r[1], v);
  }
  std::partial_sort(keyed.begin(), keyed.begin() + b, keyed.end());
  std::vector<vid_t> out;
  out.reserve(static_cast<std::size_t>(b));
  for (std::int64_t i = 0; i < b; ++i) out.push_back(keyed[i].second);
  return out;
}

std::vector<std::int64_t> chunk_offsets(std::int64_t n, int pes) {
  COOPGNN_EXPECTS(pes >= 1, "chunk_offsets: P = {} must be >= 1", pes);
  COOPGNN_EXPECTS(n >= 0, "chunk_offsets: n = {} must be >= 0", n);
  std::vector<std::int64_t> off(static_cast<std::size_t>(pes) + 1, 0);
  for (int p = 0; p < pes; ++p) off[p + 1] = off[p] + n / pes + (p < n % pes ? 1 : 0);
  return off;
}

work_result run_work_bench(const exec_context& ctx, const csc_graph& g,
                           std::span<const vid_t> candidates, const work_options& o,
                           const work_progress& progress) {
  scoped_timer timer(nullptr);
  auto const n = static_cast<std::int64_t>(candidates.size());
  work_result res;
  res.num_candidates = n;
  res.batch_sizes = work_batch_grid(o, n);
  for (vid_t v : candidates) {
    COOPGNN_EXPECTS(v >= 0 && v < g.num_nodes, "candidate seed {} outside [0, {})", v, g.num_nodes);
  }
  auto const L = o.fanouts.size();
  std::int64_t const b_max = res.batch_sizes.back();

  // Seed sets of one repeat are nested prefixes of one keyed order.
  std::vector<std::vector<vid_t>> orders;
  for (int r = 0; r < o.repeats; ++r) {
    orders.push_back(draw_seed_set(candidates, b_max, o.seed, static_cast<std::uint32_t>(r)));
  }

  std::int64_t const points = static_cast<std::int64_t>(o.samplers.size() * res.batch_sizes.size());
  std::int64_t done = 0;
  for (sampler_kind kind : o.samplers) {
    std::string const name = to_string(kind);
    std::vector<double> mean_v, mean_e;                           // [grid] mean totals
    std::map<std::pair<int, std::int64_t>, subadditive_acc> sub;  // (P, B)
    for (std::int64_t B : res.batch_sizes) {
      std::vector<double> sum_v(L, 0), sum_e(L, 0);
      double tot_v = 0, tot_e = 0;
      for (int r = 0; r < o.repeats; ++r) {
        std::span<const vid_t> const seeds(orders[r].data(), static_cast<std::size_t>(B));
        batch_key key;
        key.kind = kind;
        key.fanouts = o.fanouts;
        key.run_seed = o.seed;
        key.batch = static_cast<std::uint32_t>(r);
        auto const whole = count_batch(ctx, g, seeds, key);
        for (std::size_t l = 0; l < L; ++l) {
          sum_v[l] += static_cast<double>(whole.vertices[l]);
          sum_e[l] += static_cast<double>(whole.edges[l]);
        }
        tot_v += static_cast<double>(whole.total_vertices);
        tot_e += static_cast<double>(whole.total_edges);
        for (int P : o.pes) {
          if (B < P) continue;
          auto const off = chunk_offsets(B, P);
          std::int64_t lhs_v = 0, lhs_e = 0;
          for (int p = 0; p < P; ++p) {
            auto const part = count_batch(ctx, g, seeds.subspan(off[p], off[p + 1] - off[p]), key);
            lhs_v += part.total_vertices;
            lhs_e += part.total_edges;
          }
          auto& acc = sub[{P, B}];
          acc.lhs_vertices += static_cast<double>(lhs_v);
          acc.rhs_vertices += static_cast<double>(whole.total_vertices);
          acc.lhs_edges += static_cast<double>(lhs_e);
          acc.rhs_edges += static_cast<double>(whole.total_edges);
          acc.pass_vertices = acc.pass_vertices && lhs_v >= whole.total_vertices;
          acc.pass_edges = acc.pass_edges && lhs_e >= whole.total_edges;
        }
      }
      double const R = o.repeats;
      auto const Bd = static_cast<double>(B);
      for (std::size_t l = 0; l <= L; ++l) {
        work_row row;
        row.sampler = name;
        row.batch_size = B;
        row.layer = l < L ? static_cast<int>(l) : -1;
        row.vertices = (l < L ? sum_v[l] : tot_v) / R;
        row.edges = (l < L ? sum_e[l] : tot_e) / R;
        row.vertices_per_seed = row.vertices / Bd;
        row.edges_per_seed = row.edges / Bd;
        res.rows.push_back(row);
      }
      mean_v.push_back(tot_v / R);
      mean_e.push_back(tot_e / R);
      ++done;
      if (progress) progress(name, B, done, points);
    }

    // Checks on means (Theorems 3.1 and 3.2), then the exact per-batch one.
    double const slack = 1.0 + o.tolerance;
    auto const& grid = res.batch_sizes;
    for (std::size_t i = 1; i < grid.size(); ++i) {
      auto const b0 = static_cast<double>(grid[i - 1]);
      auto const b1 = static_cast<double>(grid[i]);
      for (auto const& [q, w] : {std::pair{"vertices", &mean_v}, std::pair{"edges", &mean_e}}) {
        work_check c{name, kNonincreasing, q, grid[i], 1, (*w)[i] / b1, (*w)[i - 1] / b0, false};
        c.pass = c.lhs <= c.rhs * slack;
        res.checks.push_back(c);
      }
    }
    for (std::size_t i = 1; i + 1 < grid.size(); ++i) {
      auto const b0 = static_cast<double>(grid[i - 1]);
      auto const b1 = static_cast<double>(grid[i]);
      auto const b2 = static_cast<double>(grid[i + 1]);
      double const rhs = (mean_e[i] - mean_e[i - 1]) / (b1 - b0);
      double const lhs = (mean_e[i + 1] - mean_e[i]) / (b2 - b1);
      res.checks.push_back({name, kConcave, "edges", grid[i], 1, lhs, rhs, lhs <= rhs * slack});
    }
    for (auto const& [pb, acc] : sub) {
      double const R = o.repeats;
      res.checks.push_back({name, kSubadditive, "vertices", pb.second, pb.first,
                            acc.lhs_vertices / R, acc.rhs_vertices / R, acc.pass_vertices});
      res.checks.push_back({name, kSubadditive, "edges", pb.second, pb.first, acc.lhs_edges / R,
                            acc.rhs_edges / R, acc.pass_edges});
    }
  }
  res.seconds = timer.seconds();
  return res;
}

nlohmann::ordered_json work_to_json(const result_header& h, const work_options& o,
                                    const work_result& r) {
  using json = nlohmann::ordered_json;
  json j = header_json(h);
  j["bench"] = "work";
  j["fanouts"] = o.fanouts;
  j["repeats"] = o.repeats;
  j["seed"] = o.seed;
  j["batch_sizes"] = r.batch_sizes;
  json samplers = json::array();
  for (auto k : o.samplers) samplers.push_back(to_string(k));
  j["samplers"] = samplers;
  j["pes"] = o.pes;
  j["tolerance"] = o.tolerance;
  j["num_candidates"] = r.num_candidates;
  j["seconds"] = r.seconds;
  json rows = json::array();
  for (auto const& w : r.rows) {
    rows.push_back({{"sampler", w.sampler},
                    {"batch_size", w.batch_size},
                    {"layer", w.layer},
                    {"vertices", w.vertices},
                    {"edges", w.edges},
                    {"vertices_per_seed", w.vertices_per_seed},
                    {"edges_per_seed", w.edges_per_seed}});
  }
  j["rows"] = rows;
  json checks = json::array();
  for (auto const& c : r.checks) {
    checks.push_back({{"sampler", c.sampler},
                      {"check", c.check},
                      {"quantity", c.quantity},
                      {"batch_size", c.batch_size},
                      {"pes", c.pes},
                      {"lhs", c.lhs},
                      {"rhs", c.rhs},
                      {"pass", c.pass}});
  }
  j["checks"] = checks;
  return j;
}

std::string work_to_csv(const work_result& r) {
  std::string out = "sampler,batch_size,layer,vertices,edges,vertices_per_seed,edges_per_seed\n";
  for (auto const& w : r.rows) {
    out += fmt::format("{},{},{},{},{},{},{}\n", w.sampler, w.batch_size, w.layer, num(w.vertices),
                       num(w.edges), num(w.vertices_per_seed), num(w.edges_per_seed));
  }
  return out;
}

std::string format_work_table(const work_options& o, const work_result& r) {
  std::string out;
  // Mean P W(B/P) / W(B) of edges, per (sampler, B, P).
  std::map<std::tuple<std::string, std::int64_t, int>, double> ratio;
  for (auto const& c : r.checks) {
    if (c.check == kSubadditive && c.quantity == "edges" && c.rhs > 0) {
      ratio[{c.sampler, c.batch_size, c.pes}] = c.lhs / c.rhs;
    }
  }
  out += fmt::format("{:<7} {:>7} {:>14} {:>14}", "sampler", "B", "vertices/seed", "edges/seed");
  for (int P : o.pes) out += fmt::format(" {:>11}", fmt::format("P={} ratio", P));
  out += "\n";
  for (auto const& w : r.rows) {
    if (w.layer != -1) continue;
    out += fmt::format("{:<7} {:>7} {:>14.3f} {:>14.3f}", w.sampler, w.batch_size,
                       w.vertices_per_seed, w.edges_per_seed);
    for (int P : o.pes) {
      auto const it = ratio.find({w.sampler, w.batch_size, P});
      out +=
          it == ratio.end() ? fmt::format(" {:>11}", "-") : fmt::format(" {:>11.4f}", it->second);
    }
    out += "\n";
  }
  out += fmt::format(
      "(P=k ratio: P W(B/P) / W(B) of sampled edges, mean over {} batches; 1 = no redundancy)\n\n",
      o.repeats);

  out += fmt::format(
      "checks (means within a tolerance of {:g}% for sampling noise; P*W(B/P)>=W(B) exact for "
      "every batch):\n",
      o.tolerance * 100);
  // Summary per (sampler, check, quantity, P) in first-seen order, failures listed after.
  std::vector<std::tuple<std::string, std::string, std::string, int>> order;
  std::map<std::tuple<std::string, std::string, std::string, int>, std::pair<int, int>> tally;
  std::string failures;
  for (auto const& c : r.checks) {
    int const p = c.check == kSubadditive ? c.pes : 0;
    auto const k = std::make_tuple(c.sampler, c.check, c.quantity, p);
    if (tally.find(k) == tally.end()) order.push_back(k);
    auto& t = tally[k];
    t.first += c.pass ? 1 : 0;
    ++t.second;
    if (!c.pass) {
      failures += fmt::format("  FAIL {} {} {} B={} P={}: lhs {:.6g} rhs {:.6g}\n", c.sampler,
                              c.check, c.quantity, c.batch_size, c.pes, c.lhs, c.rhs);
    }
  }
  for (auto const& k : order) {
    auto const& [s, check, q, p] = k;
    auto const& [passed, total] = tally[k];
    std::string const label = p > 0 ? fmt::format("{} (P={})", check, p) : check;
    out += fmt::format("  {:<6} {:<32} {:<9} {:>3}/{:<3} {}\n", s, label, q, passed, total,
                       passed == total ? "pass" : "FAIL");
  }
  out += failures;
  return out;
}

}  // namespace coopgnn::bench
