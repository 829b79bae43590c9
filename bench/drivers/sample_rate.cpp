#include "bench/drivers/sample_rate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>

#include "runtime/core/error.hpp"
#include "pipeline/trainer.hpp"

namespace coopgnn::bench {

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  auto const m = v.size();
  return m % 2 == 1 ? v[m / 2] : 0.5 * (v[m / 2 - 1] + v[m / 2]);
}

double rate(double count, double seconds) { return seconds > 0 ? count / seconds : 0.0; }

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

void validate(const sample_rate_options& o) {
  COOPGNN_EXPECTS(!o.fanouts.empty(), "--fanouts: give at least one layer");
  for (int k : o.fanouts) {
    COOPGNN_EXPECTS(k == -1 || k >= 1, "--fanouts: {} is invalid (a positive count or -1)", k);
  }
  COOPGNN_EXPECTS(o.batch_size >= 1, "--batch-size {} must be >= 1", o.batch_size);
  COOPGNN_EXPECTS(o.batches >= 1, "--batches {} must be >= 1", o.batches);
  COOPGNN_EXPECTS(o.repeats >= 1, "--repeats {} must be >= 1", o.repeats);
  COOPGNN_EXPECTS(o.sample_threads >= 1, "--sample-threads {} must be >= 1", o.sample_threads);
}

std::vector<std::vector<vid_t>> sample_rate_batches(std::span<const vid_t> train,
                                                    const sample_rate_options& o) {
  validate(o);
  COOPGNN_EXPECTS(!train.empty(), "bench sample: no seeds to batch (empty training set)");
  auto const n = static_cast<std::int64_t>(train.size());
  std::int64_t const nb = (n + o.batch_size - 1) / o.batch_size;
  std::vector<std::vector<vid_t>> out;
  std::vector<vid_t> order;
  int order_epoch = 0;
  for (std::int64_t t = 0; t < o.batches; ++t) {
    int const epoch = static_cast<int>(t / nb) + 1;
    if (epoch != order_epoch) {
      order = epoch_order(train, o.seed, epoch);
      order_epoch = epoch;
    }
    auto const lo = (t % nb) * o.batch_size, hi = std::min(n, lo + o.batch_size);
    out.emplace_back(order.begin() + lo, order.begin() + hi);
  }
  return out;
}

sample_rate_result run_sample_rate_bench(const exec_context& ctx, const csc_graph& g,
                                         const std::vector<std::vector<vid_t>>& batches,
                                         const sample_rate_options& o,
                                         const sample_rate_progress& progress) {
  validate(o);
  COOPGNN_EXPECTS(ctx.get_backend() == backend::host,
                  "bench sample: measures the host backend (got another backend)");
  auto const L = o.fanouts.size();
  sample_rate_result res;
  res.batches = static_cast<std::int64_t>(batches.size());
  res.layers.resize(L);
  std::vector<std::vector<double>> sample_t(L), block_t(L);
  std::vector<double> sample_total, block_total;
  double const wall0 = now_seconds();
  for (int rep = 0; rep < o.repeats; ++rep) {
    std::vector<std::int64_t> seeds(L, 0), edges(L, 0), sources(L, 0);
    std::vector<double> ts(L, 0.0), tb(L, 0.0);
    double const rep0 = now_seconds();
    for (std::size_t t = 0; t < batches.size(); ++t) {
      std::vector<vid_t> layer_seeds = batches[t];
      for (std::size_t l = 0; l < L; ++l) {
        sample_params const p{o.sampler,
                              o.fanouts[l],
                              o.seed,
                              static_cast<std::uint32_t>(l),
                              static_cast<std::uint32_t>(t),
                              {}};
        double const t0 = now_seconds();
        auto const s = sample_neighbors(ctx, g, layer_seeds, p);
        double const t1 = now_seconds();
        block b = make_block(g, layer_seeds, s);
        double const t2 = now_seconds();
        ts[l] += t1 - t0;
        tb[l] += t2 - t1;
        seeds[l] += static_cast<std::int64_t>(layer_seeds.size());
        edges[l] += static_cast<std::int64_t>(s.nbrs.size());
        sources[l] += b.num_src();
        layer_seeds = std::move(b.src_ids);
      }
    }
    double const rep_seconds = now_seconds() - rep0;
    double st = 0, bt = 0;
    for (std::size_t l = 0; l < L; ++l) {
      auto& row = res.layers[l];
      if (rep == 0) {
        row.layer = static_cast<int>(l);
        row.fanout = o.fanouts[l];
        row.seeds = seeds[l];
        row.edges = edges[l];
        row.sources = sources[l];
      } else {
        COOPGNN_EXPECTS(row.seeds == seeds[l] && row.edges == edges[l] && row.sources == sources[l],
                        "bench sample: repeat {} sampled other counts at layer {} (not keyed?)",
                        rep, l);
      }
      sample_t[l].push_back(ts[l]);
      block_t[l].push_back(tb[l]);
      st += ts[l];
      bt += tb[l];
    }
    sample_total.push_back(st);
    block_total.push_back(bt);
    res.repeat_seconds.push_back(rep_seconds);
    if (progress) progress(rep + 1, o.repeats, rep_seconds);
  }
  for (std::size_t l = 0; l < L; ++l) {
    auto& row = res.layers[l];
    std::vector<double> both(sample_t[l].size());
    for (std::size_t r = 0; r < both.size(); ++r) both[r] = sample_t[l][r] + block_t[l][r];
    row.sample_seconds = median(sample_t[l]);
    row.block_seconds = median(block_t[l]);
    row.seconds = median(both);
    row.edges_per_second = rate(static_cast<double>(row.edges), row.seconds);
    row.seeds_per_second = rate(static_cast<double>(row.seeds), row.seconds);
    row.sample_edges_per_second = rate(static_cast<double>(row.edges), row.sample_seconds);
    res.edges += row.edges;
  }
  res.seeds = res.layers.front().seeds;
  res.seconds = median(res.repeat_seconds);
  res.sample_seconds = median(sample_total);
  res.block_seconds = median(block_total);
  res.edges_per_second = rate(static_cast<double>(res.edges), res.seconds);
  res.seeds_per_second = rate(static_cast<double>(res.seeds), res.seconds);
  res.wall_seconds = now_seconds() - wall0;
  return res;
}

nlohmann::ordered_json sample_rate_to_json(const result_header& h, const sample_rate_options& o,
                                           const sample_rate_result& r) {
  using json = nlohmann::ordered_json;
  json j = header_json(h);
  j["bench"] = "sample";
  j["sampler"] = to_string(o.sampler);
  j["fanouts"] = o.fanouts;
  j["batch_size"] = o.batch_size;
  j["batches"] = r.batches;
  j["repeats"] = o.repeats;
  j["seed"] = o.seed;
  j["sample_threads"] = o.sample_threads;
  json layers = json::array();
  for (auto const& l : r.layers) {
    layers.push_back({{"layer", l.layer},
                      {"fanout", l.fanout},
                      {"seeds", l.seeds},
                      {"edges", l.edges},
                      {"sources", l.sources},
                      {"sample_seconds", l.sample_seconds},
                      {"block_seconds", l.block_seconds},
                      {"seconds", l.seconds},
                      {"edges_per_second", l.edges_per_second},
                      {"seeds_per_second", l.seeds_per_second},
                      {"sample_edges_per_second", l.sample_edges_per_second}});
  }
  j["layers"] = layers;
  j["total"] = {{"seeds", r.seeds},
                {"edges", r.edges},
                {"sample_seconds", r.sample_seconds},
                {"block_seconds", r.block_seconds},
                {"seconds", r.seconds},
                {"edges_per_second", r.edges_per_second},
                {"seeds_per_second", r.seeds_per_second},
                {"repeat_seconds", r.repeat_seconds}};
  j["seconds"] = r.wall_seconds;
  return j;
}

std::string sample_rate_to_csv(const sample_rate_result& r) {
  std::string out =
      "layer,fanout,seeds,edges,sources,sample_seconds,block_seconds,seconds,edges_per_second,"
      "seeds_per_second,sample_edges_per_second\n";
  for (auto const& l : r.layers) {
    out += fmt::format("{},{},{},{},{},{},{},{},{},{},{}\n", l.layer, l.fanout, l.seeds, l.edges,
                       l.sources, l.sample_seconds, l.block_seconds, l.seconds, l.edges_per_second,
                       l.seeds_per_second, l.sample_edges_per_second);
  }
  out += fmt::format("total,,{},{},,{},{},{},{},{},{}\n", r.seeds, r.edges, r.sample_seconds,
                     r.block_seconds, r.seconds, r.edges_per_second, r.seeds_per_second,
                     rate(static_cast<double>(r.edges), r.sample_seconds));
  return out;
}

std::string format_sample_rate_table(const sample_rate_result& r) {
  std::string out =
      fmt::format("{:>6} {:>6} {:>10} {:>11} {:>10} {:>9} {:>9} {:>12} {:>12}\n", "layer", "fanout",
                  "seeds", "edges", "sources", "sample s", "block s", "edges/s", "seeds/s");
  auto line = [&](const std::string& layer, const std::string& fanout, std::int64_t seeds,
                  std::int64_t edges, const std::string& sources, double ts, double tb, double eps,
                  double sps) {
    out += fmt::format("{:>6} {:>6} {:>10} {:>11} {:>10} {:>9.4f} {:>9.4f} {:>12.4g} {:>12.4g}\n",
                       layer, fanout, seeds, edges, sources, ts, tb, eps, sps);
  };
  for (auto const& l : r.layers) {
    line(std::to_string(l.layer), std::to_string(l.fanout), l.seeds, l.edges,
         std::to_string(l.sources), l.sample_seconds, l.block_seconds, l.edges_per_second,
         l.seeds_per_second);
  }
  line("total", "", r.seeds, r.edges, "", r.sample_seconds, r.block_seconds, r.edges_per_second,
       r.seeds_per_second);
  double const share = r.sample_seconds + r.block_seconds > 0
                           ? r.sample_seconds / (r.sample_seconds + r.block_seconds)
                           : 0.0;
  out += fmt::format(
      "medians over {} repeats of {} batches; sampling {:.0f}% of the time, compaction {:.0f}%\n",
      r.repeat_seconds.size(), r.batches, 100 * share, 100 * (1 - share));
  return out;
}

std::string seed_batches_to_text(const std::vector<std::vector<vid_t>>& batches) {
  std::string out;
  for (auto const& b : batches) out += fmt::format("{}\n", fmt::join(b, " "));
  return out;
}

}  // namespace coopgnn::bench
