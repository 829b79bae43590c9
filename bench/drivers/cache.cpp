#include "bench/drivers/cache.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <tuple>

#include "cache/policy.hpp"
#include "runtime/core/error.hpp"
#include "runtime/core/timer.hpp"
#include "runtime/graph/ownership.hpp"
#include "pipeline/minibatch.hpp"
#include "pipeline/trainer.hpp"

namespace coopgnn::bench {

namespace {

template <class T>
void expect_distinct(const std::vector<T>& v, const char* option) {
  std::set<T> const s(v.begin(), v.end());
  COOPGNN_EXPECTS(s.size() == v.size(), "{}: a value is given twice", option);
}

/// The per-PE caches of one (policy, fraction, mode, P) point.
struct point {
  std::size_t policy = 0, fraction = 0, mode = 0, pes = 0;
  std::vector<std::unique_ptr<cache_policy>> caches;  // [P]
  std::int64_t seeds = 0;
};

}  // namespace

std::string kappa_name(std::int64_t kappa) {
  return kappa == 0 ? std::string("never") : std::to_string(kappa);
}

void validate(const cache_options& o) {
  COOPGNN_EXPECTS(!o.fanouts.empty(), "--fanouts: give at least one layer's fanout");
  for (int f : o.fanouts) {
    COOPGNN_EXPECTS(f >= 1 || f == -1, "--fanouts: fanout {} is invalid (use k >= 1 or -1 = all)",
                    f);
  }
  COOPGNN_EXPECTS(o.batch_size >= 1, "--batch-size {} must be >= 1", o.batch_size);
  COOPGNN_EXPECTS(!o.kappas.empty(), "--kappas: give at least one value");
  for (auto k : o.kappas) {
    COOPGNN_EXPECTS(k >= 0, "--kappas: {} is negative (0 = never refresh, 1 = independent)", k);
    COOPGNN_EXPECTS(k == 1 || o.sampler == sampler_kind::labor,
                    "--kappas: dependent minibatching (kappa {}) needs --sampler labor", k);
  }
  expect_distinct(o.kappas, "--kappas");
  COOPGNN_EXPECTS(!o.fractions.empty(), "--fractions: give at least one value");
  for (double f : o.fractions) {
    COOPGNN_EXPECTS(f >= 0 && f <= 1, "--fractions: {} is outside [0, 1]", f);
  }
  expect_distinct(o.fractions, "--fractions");
  COOPGNN_EXPECTS(!o.modes.empty(), "--modes: give at least one mode");
  expect_distinct(o.modes, "--modes");
  COOPGNN_EXPECTS(!o.pes.empty(), "--pes: give at least one PE count");
  for (int p : o.pes) COOPGNN_EXPECTS(p >= 1, "--pes: {} must be >= 1", p);
  expect_distinct(o.pes, "--pes");
  COOPGNN_EXPECTS(!o.policies.empty(), "--policies: give at least one cache policy");
  for (auto const& name : o.policies) {
    try {
      (void)make_cache_policy(name, 0);
    } catch (const logic_error&) {
      COOPGNN_FAIL("--policies: unknown cache policy '{}' (lru, clock, sieve, s3fifo, setassoc)",
                   name);
    }
  }
  expect_distinct(o.policies, "--policies");
  COOPGNN_EXPECTS(o.epochs >= 0, "--epochs {} must be >= 0 (0 = auto)", o.epochs);
  COOPGNN_EXPECTS(o.batches >= 0, "--batches {} must be >= 0 (0 = all epochs)", o.batches);
  COOPGNN_EXPECTS(o.warmup >= 0, "--warmup {} must be >= 0", o.warmup);
  COOPGNN_EXPECTS(o.sample_threads >= 1, "--sample-threads {} must be >= 1", o.sample_threads);
}

cache_result run_cache_bench(const exec_context& ctx, const csc_graph& g,
                             std::span<const vid_t> train, std::int64_t feature_dim,
                             const cache_options& o, const cache_progress& progress) {
  validate(o);
  COOPGNN_EXPECTS(!train.empty(), "bench cache: the dataset has no training vertices");
  scoped_timer timer(nullptr);
  auto const n = static_cast<std::int64_t>(train.size());
  auto const nb = epoch_batch_count(n, o.batch_size, false);  // the trainer's short tail
  int const epochs = o.epochs > 0 ? o.epochs : static_cast<int>((100 + nb - 1) / nb);
  auto total = nb * epochs;
  if (o.batches > 0) total = std::min(total, o.batches);
  auto const num_nodes = g.num_nodes;

  std::map<int, ownership> owners;  // P -> ownership, for cooperative points
  for (int P : o.pes) owners.emplace(P, ownership(num_nodes, P, o.seed));

  cache_result res;
  COOPGNN_EXPECTS(o.warmup < total,
                  "--warmup {} leaves no batch to count: the run replays {} batches per kappa",
                  o.warmup, total);
  res.batches_per_kappa = total;
  res.warmup = o.warmup;
  res.epochs = epochs;
  std::vector<std::uint8_t> hit;
  for (std::size_t ki = 0; ki < o.kappas.size(); ++ki) {
    std::vector<point> points;
    for (std::size_t pi = 0; pi < o.policies.size(); ++pi) {
      for (std::size_t fi = 0; fi < o.fractions.size(); ++fi) {
        auto const rows =
            static_cast<std::int64_t>(o.fractions[fi] * static_cast<double>(num_nodes));
        for (std::size_t mi = 0; mi < o.modes.size(); ++mi) {
          for (std::size_t qi = 0; qi < o.pes.size(); ++qi) {
            point pt{pi, fi, mi, qi, {}, 0};
            for (int p = 0; p < o.pes[qi]; ++p) {
              pt.caches.push_back(make_cache_policy(o.policies[pi], rows));
            }
            points.push_back(std::move(pt));
          }
        }
      }
    }
    std::vector<vid_t> order;
    int order_epoch = 0;
    for (std::int64_t t = 0; t < total; ++t) {
      int const epoch = static_cast<int>(t / nb) + 1;
      if (epoch != order_epoch) {
        order = epoch_order(train, o.seed, epoch);
        order_epoch = epoch;
      }
      std::vector<vid_t> const batch = epoch_batch(order, o.batch_size, t % nb, false);
      std::span<const vid_t> const global(batch);
      auto const B = static_cast<std::int64_t>(global.size());
      batch_key const key{o.sampler, o.fanouts, o.seed, static_cast<std::uint32_t>(t),
                          labor_dependency{o.kappas[ki], o.layer_dependency}};
      // Loads per (mode, P): [P] id lists, built once and shared by every policy and fraction.
      std::map<std::pair<std::size_t, int>, std::vector<std::vector<vid_t>>> loads;
      std::vector<vid_t> whole;  // the global batch's last-layer sources, sampled alone
      bool have_whole = false;
      auto whole_sources = [&]() -> const std::vector<vid_t>& {
        if (!have_whole) {
          whole = sample_independent(ctx, g, global, key).input_nodes;
          have_whole = true;
        }
        return whole;
      };
      for (std::size_t mi = 0; mi < o.modes.size(); ++mi) {
        for (int P : o.pes) {
          std::vector<std::vector<vid_t>> per_pe(static_cast<std::size_t>(P));
          if (o.modes[mi] == minibatch_mode::cooperative && P > 1) {
            // The owner-side deduplication sorts each PE's rows (one PE skips the exchange and
            // loads in independent's order, the branch below).
            auto const& own = owners.at(P);
            for (vid_t v : whole_sources())
              per_pe[static_cast<std::size_t>(own.owner(v))].push_back(v);
            for (auto& ids : per_pe) std::sort(ids.begin(), ids.end());
          } else if (P == 1) {
            per_pe[0] = whole_sources();
          } else {
            for (int p = 0; p < P; ++p) {
              auto const s = B * p / P, e = B * (p + 1) / P;
              per_pe[static_cast<std::size_t>(p)] =
                  sample_independent(
                      ctx, g,
                      global.subspan(static_cast<std::size_t>(s), static_cast<std::size_t>(e - s)),
                      key)
                      .input_nodes;
            }
          }
          loads.emplace(std::pair{mi, P}, std::move(per_pe));
        }
      }
      if (t == o.warmup) {
        for (auto& pt : points) {
          for (auto& c : pt.caches) c->reset_counters();
        }
      }
      for (auto& pt : points) {
        auto const& per_pe = loads.at({pt.mode, o.pes[pt.pes]});
        for (std::size_t p = 0; p < per_pe.size(); ++p) {
          hit.resize(per_pe[p].size());
          pt.caches[p]->access_batch(per_pe[p], hit);
        }
        if (t >= o.warmup) pt.seeds += B;
      }
    }
    for (auto const& pt : points) {
      cache_row r;
      r.policy = o.policies[pt.policy];
      r.kappa = o.kappas[ki];
      r.fraction = o.fractions[pt.fraction];
      r.cache_rows = pt.caches.front()->capacity();
      r.mode = to_string(o.modes[pt.mode]);
      r.pes = o.pes[pt.pes];
      r.batches = total - o.warmup;
      r.seeds = pt.seeds;
      for (auto const& c : pt.caches) {
        r.hits += c->hits();
        r.misses += c->misses();
      }
      r.requests = r.hits + r.misses;
      r.miss_rate =
          r.requests > 0 ? static_cast<double>(r.misses) / static_cast<double>(r.requests) : 0;
      if (r.seeds > 0) {
        auto const s = static_cast<double>(r.seeds);
        r.rows_per_seed = static_cast<double>(r.requests) / s;
        r.miss_bytes_per_seed =
            static_cast<double>(r.misses) * static_cast<double>(feature_dim) * 4.0 / s;
      }
      res.rows.push_back(std::move(r));
    }
    if (progress)
      progress(o.kappas[ki], static_cast<std::int64_t>(ki + 1),
               static_cast<std::int64_t>(o.kappas.size()));
  }
  // Rows were produced kappa-major; order them policy, kappa, fraction, mode, P.
  std::vector<std::string> mode_names;
  for (auto m : o.modes) mode_names.push_back(to_string(m));
  auto rank = [&](const cache_row& r) {
    auto idx = [](const auto& v, const auto& x) {
      return std::find(v.begin(), v.end(), x) - v.begin();
    };
    return std::tuple{idx(o.policies, r.policy), idx(o.kappas, r.kappa),
                      idx(o.fractions, r.fraction), idx(mode_names, r.mode), idx(o.pes, r.pes)};
  };
  std::stable_sort(res.rows.begin(), res.rows.end(),
                   [&](const cache_row& a, const cache_row& b) { return rank(a) < rank(b); });
  res.seconds = timer.seconds();
  return res;
}

nlohmann::ordered_json cache_to_json(const result_header& h, const cache_options& o,
                                     const cache_result& r) {
  auto j = header_json(h);
  j["sampler"] = to_string(o.sampler);
  j["fanouts"] = o.fanouts;
  j["batch_size"] = o.batch_size;
  j["kappas"] = o.kappas;
  j["fractions"] = o.fractions;
  std::vector<std::string> modes;
  for (auto m : o.modes) modes.push_back(to_string(m));
  j["modes"] = modes;
  j["pes"] = o.pes;
  j["policies"] = o.policies;
  j["layer_dependency"] = o.layer_dependency;
  j["epochs"] = r.epochs;
  j["batches"] = r.batches_per_kappa;
  j["warmup"] = r.warmup;
  j["seed"] = o.seed;
  auto rows = nlohmann::ordered_json::array();
  for (auto const& x : r.rows) {
    rows.push_back({{"policy", x.policy},
                    {"kappa", x.kappa},
                    {"fraction", x.fraction},
                    {"cache_rows", x.cache_rows},
                    {"mode", x.mode},
                    {"pes", x.pes},
                    {"batches", x.batches},
                    {"seeds", x.seeds},
                    {"requests", x.requests},
                    {"hits", x.hits},
                    {"misses", x.misses},
                    {"miss_rate", x.miss_rate},
                    {"rows_per_seed", x.rows_per_seed},
                    {"miss_bytes_per_seed", x.miss_bytes_per_seed}});
  }
  j["rows"] = std::move(rows);
  j["seconds"] = r.seconds;
  return j;
}

std::string cache_to_csv(const cache_result& r) {
  std::string out =
      "policy,kappa,fraction,cache_rows,mode,pes,batches,seeds,requests,hits,misses,miss_rate,"
      "rows_per_seed,miss_bytes_per_seed\n";
  for (auto const& x : r.rows) {
    out += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", x.policy, x.kappa, x.fraction,
                       x.cache_rows, x.mode, x.pes, x.batches, x.seeds, x.requests, x.hits,
                       x.misses, x.miss_rate, x.rows_per_seed, x.miss_bytes_per_seed);
  }
  return out;
}

std::string format_cache_table(const cache_options& o, const cache_result& r) {
  std::string out =
      fmt::format("{:<8} {:>8} {:>9} {:<11} {:>3}", "policy", "fraction", "rows/PE", "mode", "P");
  for (auto k : o.kappas) out += fmt::format(" {:>8}", "K=" + kappa_name(k));
  out += fmt::format(" {:>10} {:>11}\n", "rows/seed", "K1/Kmax");
  // The largest finite kappa (the K1/Kmax column compares kappa = 1 with it).
  std::int64_t kmax = 0;
  for (auto k : o.kappas) kmax = std::max(kmax, k);
  std::map<std::tuple<std::string, double, std::string, int>,
           std::map<std::int64_t, const cache_row*>>
      grid;
  std::vector<std::tuple<std::string, double, std::string, int>> keys;
  for (auto const& x : r.rows) {
    auto const k = std::tuple{x.policy, x.fraction, x.mode, x.pes};
    if (!grid.count(k)) keys.push_back(k);
    grid[k][x.kappa] = &x;
  }
  // First appearances follow the row order (policy, fraction, mode, P at the first kappa).
  for (auto const& k : keys) {
    auto const& byk = grid[k];
    auto const* any = byk.begin()->second;
    out += fmt::format("{:<8} {:>8} {:>9} {:<11} {:>3}", std::get<0>(k), std::get<1>(k),
                       any->cache_rows, std::get<2>(k), std::get<3>(k));
    for (auto kv : o.kappas) {
      auto it = byk.find(kv);
      out += it != byk.end() ? fmt::format(" {:>8.4f}", it->second->miss_rate)
                             : fmt::format(" {:>8}", "-");
    }
    auto const one = byk.find(1), top = byk.find(kmax);
    std::string ratio = "-";
    if (one != byk.end() && top != byk.end() && kmax > 1 && top->second->miss_rate > 0) {
      ratio = fmt::format("{:.3f}", one->second->miss_rate / top->second->miss_rate);
    }
    out += fmt::format(" {:>10.1f} {:>11}\n", any->rows_per_seed, ratio);
  }
  out += fmt::format(
      "miss rate = rows read from storage / rows requested, summed over PEs and {} batches "
      "(after {} warm-up batches); K1/Kmax = miss rate at kappa 1 / at kappa {}\n",
      r.batches_per_kappa - r.warmup, r.warmup, kmax);
  return out;
}

}  // namespace coopgnn::bench
