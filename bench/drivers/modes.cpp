#include "bench/drivers/modes.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "runtime/core/error.hpp"
#include "runtime/core/timer.hpp"
#include "pipeline/run_sizes.hpp"
#include "pipeline/trainer.hpp"

namespace coopgnn::bench {

void validate(const modes_options& o) {
  COOPGNN_EXPECTS(!o.fanouts.empty(), "--fanouts needs at least one layer");
  COOPGNN_EXPECTS(o.batch_size >= 1, "--batch-size must be at least 1, got {}", o.batch_size);
  COOPGNN_EXPECTS(!o.pes.empty(), "--pes needs at least one PE count");
  for (int p : o.pes) COOPGNN_EXPECTS(p >= 1 && p <= 1024, "--pes: {} is outside [1, 1024]", p);
  COOPGNN_EXPECTS(o.batches >= 1, "--batches must be at least 1, got {}", o.batches);
  COOPGNN_EXPECTS(o.warmup >= 0, "--warmup must be non-negative, got {}", o.warmup);
  COOPGNN_EXPECTS(o.devices >= 1, "bench modes: {} GPUs", o.devices);
  COOPGNN_EXPECTS(o.batch_per_pe >= 0, "--batch-per-pe must be non-negative, got {}",
                  o.batch_per_pe);
  COOPGNN_EXPECTS(o.batch_dependency >= 0, "--batch-dependency must be non-negative, got {}",
                  o.batch_dependency);
  check_labor_dependency(o.sampler, o.batch_dependency, false);  // the option table's rule
  COOPGNN_EXPECTS(o.cache_rows >= 0, "--cache-rows {} is negative", o.cache_rows);
  COOPGNN_EXPECTS(o.cache_rows == 0 || o.cache_policy != cache_policy_kind::none,
                  "--cache-rows/--cache-fraction without --cache-policy: nothing would be cached");
  COOPGNN_EXPECTS(o.feature_bytes >= 1 && o.feature_bytes <= 8,
                  "--feature-bytes must be in [1, 8] bytes per element, got {}", o.feature_bytes);
}

const std::vector<paper_setting>& paper_settings() {
  static const std::vector<paper_setting> s = {
      {"NS kappa 1, no cache", "k1", sampler_kind::ns, 1, false},
      {"LABOR kappa 1, no cache", "k1", sampler_kind::labor, 1, false},
      {"LABOR kappa 1, cache", "k1-cache", sampler_kind::labor, 1, true},
      {"LABOR kappa 256, cache", "k256-cache", sampler_kind::labor, 256, true}};
  return s;
}

modes_options with_setting(const modes_options& base, const paper_setting& s) {
  modes_options o = base;
  o.sampler = s.sampler;
  o.batch_dependency = s.batch_dependency;
  if (!s.cache) {
    o.cache_policy = cache_policy_kind::none;
    o.cache_rows = 0;
  }
  o.setting = s.label;
  return o;
}

namespace {

double ratio_max_mean(const std::vector<double>& v) {
  double const mean = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
  double const mx = *std::max_element(v.begin(), v.end());
  return mean > 0 ? mx / mean : 1.0;
}

}  // namespace

train_config modes_run_config(const modes_options& o, minibatch_mode mode, int P) {
  train_config cfg;
  cfg.mode = mode;
  cfg.num_pes = P;
  cfg.model = models::parse_conv_kind(o.model);
  cfg.hidden = o.hidden;
  cfg.heads = o.heads;
  cfg.out_heads = o.out_heads;
  cfg.attn_dropout = o.attn_dropout;
  cfg.num_bases = o.num_bases;
  cfg.num_blocks = o.num_blocks;
  cfg.fanouts = o.fanouts;
  cfg.sampler = o.sampler;
  cfg.batch_dependency = o.batch_dependency;
  cfg.cache_policy = o.cache_policy;
  cfg.cache_rows = o.cache_rows;
  cfg.batch_size = o.batch_per_pe > 0 ? o.batch_per_pe * P : o.batch_size;
  cfg.seed = o.seed;
  cfg.wrap_around = true;  // every measured batch is full, past the epoch's end too
  cfg.compute_backend = o.compute_backend;
  // One host thread per PE for compute and sampling, as the header records (h.threads = 1).
  cfg.threads_per_pe = 1;
  cfg.sample_threads = 1;
  if (o.compute_backend == backend::cuda) cfg.pes_per_gpu = (P + o.devices - 1) / o.devices;
  return cfg;
}

namespace {

modes_row run_one(const dataset& ds, const csc_graph& g, const modes_options& o,
                  minibatch_mode mode, int P) {
  train_config cfg = modes_run_config(o, mode, P);
  trainer tr(ds, g, cfg);
  auto const order = tr.epoch_order(1);

  std::vector<stage_seconds> pe_seconds(static_cast<std::size_t>(P));
  std::vector<stage_seconds> pe_cpu(static_cast<std::size_t>(P));
  std::vector<double> pe_feature_bytes(P, 0), pe_a2a(P, 0), pe_allreduce(P, 0);
  std::vector<double> pe_peak(P, 0);
  modes_row row;
  row.mode = to_string(mode);
  row.pes = P;
  row.batch_size = cfg.batch_size;
  // The model's per-PE sums over the measured batches, per machine.
  cost_options copt = o.cost;
  copt.conv = cfg.model;
  copt.dropout = cfg.dropout > 0;
  copt.heads = cfg.heads;
  copt.out_heads = cfg.out_heads;
  copt.attn_dropout = cfg.attn_dropout > 0;
  copt.relations = g.num_relations;
  bool const coop = mode == minibatch_mode::cooperative;
  // The model's input width (typed graphs: the featured types' width, which every row has), in
  // bytes as stored (o.feature_bytes per element: the dataset's dtype, or --feature-bytes) and once
  // gathered (float32); the cooperative feature exchange moves float32 rows unless --feature-bytes
  // models another width.
  double const in_dim = static_cast<double>(model_config_for(ds, cfg).in_dim);
  double const out_row_bytes = in_dim * sizeof(float);
  double const row_bytes = cfg.embedding_dim > 0 ? out_row_bytes : in_dim * o.feature_bytes;
  double const exchange_element_bytes = o.feature_bytes_given ? o.feature_bytes : 4.0;
  stage_seconds kernels;  // model_kernels summed over PEs and measured batches
  std::vector<std::vector<modelled_seconds>> pe_model(
      o.machines.size(), std::vector<modelled_seconds>(static_cast<std::size_t>(P)));
  double imb_seeds = 0, imb_edges = 0, imb_rows = 0;
  work_counters total;
  std::vector<pe_trace> traces;
  for (int b = 0; b < o.warmup + o.batches; ++b) {
    // Consecutive global batches of the epoch order, wrapping around (cfg.wrap_around).
    auto const batch = tr.epoch_batch(order, b);
    tr.step(batch, static_cast<std::uint32_t>(b), step_options{true, &traces, false});
    if (b < o.warmup) continue;
    std::vector<double> seeds, edges, rows;
    for (int p = 0; p < P; ++p) {
      auto const& t = traces[p];
      pe_seconds[p] += t.seconds;
      pe_cpu[p] += t.cpu_seconds;
      pe_feature_bytes[p] += static_cast<double>(t.work.feature_bytes);
      pe_a2a[p] += static_cast<double>(t.work.alltoall_bytes);
      pe_allreduce[p] += static_cast<double>(t.work.allreduce_bytes);
      double const peak = static_cast<double>(t.working_set_bytes + t.staging_bytes);
      pe_peak[p] = std::max(pe_peak[p], peak);
      row.peak_bytes_max = std::max(row.peak_bytes_max, peak);
      row.staging_bytes_max = std::max(row.staging_bytes_max, static_cast<double>(t.staging_bytes));
      total += t.work;
      // Typed graphs: rows of featured types at their stored width, learnt embedding rows at 4
      // bytes per element; the runtime counted each row at its own width.
      double const pe_row_bytes =
          ds.hetero && t.work.feature_rows > 0
              ? static_cast<double>(t.work.feature_bytes) / static_cast<double>(t.work.feature_rows)
              : row_bytes;
      auto const counts =
          counts_of(t, P, coop, pe_row_bytes, out_row_bytes, exchange_element_bytes);
      kernels += model_kernels(counts, copt);
      for (std::size_t mi = 0; mi < o.machines.size(); ++mi) {
        pe_model[mi][static_cast<std::size_t>(p)] += model_step(o.machines[mi], counts, copt);
      }
      for (auto const& tr_l : t.traffic) {
        row.traffic[{tr_l.layer, tr_l.direction}] += static_cast<double>(tr_l.bytes);
      }
      seeds.push_back(static_cast<double>(t.work.seeds));
      edges.push_back(static_cast<double>(t.work.sampled_edges));
      rows.push_back(static_cast<double>(t.work.feature_rows));
    }
    imb_seeds += ratio_max_mean(seeds);
    imb_edges += ratio_max_mean(edges);
    imb_rows += ratio_max_mean(rows);
  }
  double const nb = o.batches;
  auto per_batch = [nb](stage_seconds x) { return x /= nb; };
  stage_seconds cpu;  // max over PEs of the per-PE CPU time per batch, per stage
  for (int p = 0; p < P; ++p) {
    auto const mean = per_batch(pe_seconds[p]);
    row.seconds.max_with(mean);
    row.total_seconds = std::max(row.total_seconds, mean.total());  // slowest PE's whole batch
    cpu.max_with(per_batch(pe_cpu[p]));
  }
  row.cpu_seconds = cpu;
  row.work = {{"seeds", static_cast<double>(total.seeds) / nb},
              {"sampled_edges", static_cast<double>(total.sampled_edges) / nb},
              {"sampled_vertices", static_cast<double>(total.sampled_vertices) / nb},
              {"feature_rows", static_cast<double>(total.feature_rows) / nb},
              {"feature_bytes", static_cast<double>(total.feature_bytes) / nb},
              {"alltoall_bytes", static_cast<double>(total.alltoall_bytes) / nb},
              {"alltoall_calls", static_cast<double>(total.alltoall_calls) / nb},
              {"allreduce_bytes", static_cast<double>(total.allreduce_bytes) / nb},
              {"collectives", static_cast<double>(total.collectives) / nb},
              {"collective_calls", static_cast<double>(total.collective_calls) / nb},
              {"count_exchanges", static_cast<double>(total.count_exchanges) / nb},
              {"kernel_calls", static_cast<double>(total.kernel_calls) / nb},
              {"kernel_launches", kernels.total() / nb},
              {"cache_hits", static_cast<double>(total.cache_hits) / nb},
              {"cache_misses", static_cast<double>(total.cache_misses) / nb}};
  for (auto& [key, bytes] : row.traffic) bytes /= nb;
  row.kernel_launches = kernels /= nb * P;
  row.imbalance_seeds = imb_seeds / nb;
  row.imbalance_edges = imb_edges / nb;
  row.imbalance_rows = imb_rows / nb;
  row.peak_bytes_mean = std::accumulate(pe_peak.begin(), pe_peak.end(), 0.0) / P;

  // Modelled: per stage the maximum over PEs of the per-PE mean, total the slowest PE's sum.
  for (auto& per_pe : pe_model) {
    modelled_seconds stages;
    double slowest = 0;
    for (auto& x : per_pe) {
      x /= nb;
      stages.max_with(x);
      // The modelled machine is a GPU: the overlap of the CUDA backend's runtime.
      slowest = std::max(slowest, step_total(x, overlaps_prepare(backend::cuda, o.prefetch)));
    }
    row.modelled.push_back(stages);
    row.modelled_total.push_back(slowest);
  }
  // Measured compute + modelled links, only where the compute ran on a GPU (the compute
  // stream's event-timed stage spans with the collectives' time taken out, step_meter::settle);
  // host seconds never stand in for a GPU's.
  if (o.compute_backend == backend::cuda) {
    measured_step cost;
    cost.sample_s = row.seconds.sample;
    cost.forward_s = row.seconds.forward;
    cost.backward_s = row.seconds.backward;
    cost.optimizer_s = row.seconds.optimizer;
    cost.feature_bytes = *std::max_element(pe_feature_bytes.begin(), pe_feature_bytes.end()) / nb;
    cost.alltoall_bytes = *std::max_element(pe_a2a.begin(), pe_a2a.end()) / nb;
    cost.allreduce_bytes = *std::max_element(pe_allreduce.begin(), pe_allreduce.end()) / nb;
    cost.pes = P;
    for (auto const& m : o.machines) row.measured_links.push_back(measured_plus_links(m, cost));
  }
  return row;
}

}  // namespace

modes_result run_modes(const dataset& ds, const csc_graph& g, const modes_options& o,
                       const modes_progress& progress) {
  validate(o);
  // Every run's sizes against the memory before any of them allocates (train's own check).
  for (int P : o.pes) {
    for (auto mode : {minibatch_mode::cooperative, minibatch_mode::independent}) {
      check_run_footprint(ds, modes_run_config(o, mode, P));
    }
  }
  scoped_timer wall(nullptr);
  modes_result r;
  r.relations_merged = ds.hetero.has_value() && o.model != "rgcn";
  for (int P : o.pes) {
    for (auto mode : {minibatch_mode::cooperative, minibatch_mode::independent}) {
      if (progress) progress(fmt::format("{} P={}", to_string(mode), P));
      r.rows.push_back(run_one(ds, g, o, mode, P));
    }
  }
  r.seconds = wall.seconds();
  return r;
}

namespace {

nlohmann::ordered_json stages_json(const modelled_seconds& p, double total) {
  return {{"sample", p.sample},     {"feature_load", p.feature_load},   {"forward", p.forward},
          {"backward", p.backward}, {"communication", p.communication}, {"optimizer", p.optimizer},
          {"total", total}};
}

nlohmann::ordered_json cost_model_json(const modes_options& o) {
  nlohmann::ordered_json c;
  c["feature_placement"] = to_string(o.cost.placement);
  // Bytes per input-feature element the model reads (the dataset's stored width, or
  // --feature-bytes), and the GEMM math override ("" = each machine's file setting).
  c["feature_bytes"] = o.feature_bytes;
  c["feature_bytes_source"] = o.feature_bytes_given
                                  ? "--feature-bytes override (modelled only)"
                                  : "the dataset's stored dtype (the runtime's)";
  c["gemm_math"] = o.gemm_math.empty() ? "machine file" : o.gemm_math;
  c["machine_file"] = o.machines.empty() ? std::string() : o.machines.front().file;
  c["machines"] = nlohmann::ordered_json::array();
  for (auto const& m : o.machines) {
    nlohmann::ordered_json figs;
    for (auto const& [key, f] : m.figures) {
      figs[key] = {{"value", f.value}, {"source", f.source}, {"assumption", f.assumption}};
    }
    c["machines"].push_back({{"name", m.name},
                             {"gpu", m.gpu},
                             {"gpus", m.gpus},
                             {"link", m.link},
                             {"gemm_math", m.gemm_tf32 ? "tf32" : "fp32"},
                             {"figures", figs}});
  }
  return c;
}

}  // namespace

nlohmann::ordered_json modes_to_json(const result_header& h, const modes_options& o,
                                     const modes_result& r) {
  nlohmann::ordered_json j = header_json(h);
  j["bench"] = "modes";
  j["fanouts"] = o.fanouts;
  j["sampler"] = to_string(o.sampler);
  j["batch_size"] = o.batch_size;
  j["batches"] = o.batches;
  j["warmup"] = o.warmup;
  j["hidden"] = o.hidden;
  j["model"] = o.model;
  if (o.model == "gat") {
    j["heads"] = o.heads;
    j["out_heads"] = o.out_heads;
    j["attn_dropout"] = o.attn_dropout;
  }
  if (o.model == "rgcn") {
    j["num_bases"] = o.num_bases;
    j["num_blocks"] = o.num_blocks;
  }
  // Typed dataset, untyped model: the relations-merged view (run_modes).
  j["relations_merged"] = r.relations_merged;
  j["seed"] = o.seed;
  j["batch_per_pe"] = o.batch_per_pe;
  j["batch_dependency"] = o.batch_dependency;
  j["cache_policy"] = to_string(o.cache_policy);
  j["cache_rows"] = o.cache_rows;
  j["feature_bytes"] = o.feature_bytes;
  if (!o.setting.empty()) j["paper_setting"] = o.setting;
  j["seconds"] = r.seconds;
  j["cost_model"] = cost_model_json(o);
  j["rows"] = nlohmann::ordered_json::array();
  for (auto const& row : r.rows) {
    nlohmann::ordered_json x;
    x["mode"] = row.mode;
    x["pes"] = row.pes;
    auto const& s = row.seconds;
    x["seconds_per_batch"] = {
        {"sample", s.sample},        {"feature_load", s.feature_load},   {"forward", s.forward},
        {"backward", s.backward},    {"communication", s.communication}, {"optimizer", s.optimizer},
        {"total", row.total_seconds}};
    auto const& c = row.cpu_seconds;
    x["cpu_seconds_per_batch"] = {
        {"sample", c.sample},     {"feature_load", c.feature_load},   {"forward", c.forward},
        {"backward", c.backward}, {"communication", c.communication}, {"optimizer", c.optimizer}};
    x["work_per_batch"] = row.work;
    // Per PE and step: collective operations, collective calls (what the model charges a
    // latency for) and counts exchanges of their own, counted by the communicators; kernel entry
    // calls counted by the PE's contexts; and the kernels the cost model charges a launch for
    // (model_kernels; not a runtime count), per stage.
    x["collectives_per_pe_step"] = row.work.at("collectives") / row.pes;
    x["collective_calls_per_pe_step"] = row.work.at("collective_calls") / row.pes;
    x["count_exchanges_per_pe_step"] = row.work.at("count_exchanges") / row.pes;
    x["kernel_calls_per_pe_step"] = row.work.at("kernel_calls") / row.pes;
    x["kernel_launches_per_pe_step"] = stages_json(row.kernel_launches, row.kernel_launches.total());
    x["alltoall_bytes_per_batch"] = nlohmann::ordered_json::array();
    for (auto const& [key, bytes] : row.traffic) {
      x["alltoall_bytes_per_batch"].push_back(
          {{"layer", key.first}, {"direction", key.second}, {"bytes", bytes}});
    }
    x["imbalance"] = {{"seeds", row.imbalance_seeds},
                      {"sampled_edges", row.imbalance_edges},
                      {"feature_rows", row.imbalance_rows}};
    x["peak_bytes_per_pe"] = {{"max", row.peak_bytes_max},
                              {"mean", row.peak_bytes_mean},
                              {"alltoall_buffers_max", row.staging_bytes_max}};
    x["batch_size"] = row.batch_size;
    x["modelled"] = nlohmann::ordered_json::array();
    for (std::size_t mi = 0; mi < row.modelled.size(); ++mi) {
      x["modelled"].push_back(
          {{"machine", o.machines[mi].name},
           {"kind", "modelled"},
           {"seconds_per_batch", stages_json(row.modelled[mi], row.modelled_total[mi])}});
    }
    if (!row.measured_links.empty()) {
      x["measured_compute_modelled_links"] = nlohmann::ordered_json::array();
      for (std::size_t mi = 0; mi < row.measured_links.size(); ++mi) {
        auto const& p = row.measured_links[mi];
        x["measured_compute_modelled_links"].push_back(
            {{"machine", o.machines[mi].name},
             {"kind", "measured compute + modelled links"},
             {"seconds_per_batch", stages_json(p, p.total())}});
      }
    }
    j["rows"].push_back(std::move(x));
  }
  return j;
}

std::string modes_to_csv(const modes_result& r) {
  std::string out =
      "mode,pes,sample_s,feature_load_s,forward_s,backward_s,communication_s,optimizer_s,"
      "total_s,sampled_edges,sampled_vertices,feature_rows,alltoall_bytes,imbalance_edges,"
      "peak_bytes_max,collectives_per_pe_step,kernel_launches_per_pe_step,"
      "collective_calls_per_pe_step,count_exchanges_per_pe_step,kernel_calls_per_pe_step\n";
  for (auto const& row : r.rows) {
    auto const& s = row.seconds;
    out += fmt::format(
        "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", row.mode, row.pes,
        s.sample, s.feature_load, s.forward, s.backward, s.communication, s.optimizer,
        row.total_seconds, row.work.at("sampled_edges"), row.work.at("sampled_vertices"),
        row.work.at("feature_rows"), row.work.at("alltoall_bytes"), row.imbalance_edges,
        row.peak_bytes_max, row.work.at("collectives") / row.pes, row.kernel_launches.total(),
        row.work.at("collective_calls") / row.pes, row.work.at("count_exchanges") / row.pes,
        row.work.at("kernel_calls") / row.pes);
  }
  return out;
}

std::string modes_model_csv(const modes_options& o, const modes_result& r) {
  std::string out =
      "mode,pes,batch_size,machine,kind,sample_s,feature_load_s,forward_s,backward_s,"
      "communication_s,optimizer_s,total_s\n";
  auto line = [&](const modes_row& row, const std::string& machine, const char* kind,
                  const modelled_seconds& p, double total) {
    out += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{}\n", row.mode, row.pes, row.batch_size,
                       machine, kind, p.sample, p.feature_load, p.forward, p.backward,
                       p.communication, p.optimizer, total);
  };
  for (auto const& row : r.rows) {
    for (std::size_t mi = 0; mi < row.modelled.size(); ++mi) {
      line(row, o.machines[mi].name, "modelled", row.modelled[mi], row.modelled_total[mi]);
    }
    for (std::size_t mi = 0; mi < row.measured_links.size(); ++mi) {
      line(row, o.machines[mi].name, "measured compute + modelled links", row.measured_links[mi],
           row.measured_links[mi].total());
    }
  }
  return out;
}

std::string format_modes_table(const modes_options& o, const modes_result& r) {
  std::string out = fmt::format(
      "{:<12}{:>4}{:>10}{:>10}{:>10}{:>10}{:>10}{:>10}{:>12}{:>12}{:>10}{:>8}{:>10}"
      "{:>7}{:>7}{:>7}\n",
      "mode", "P", "sample", "feature", "forward", "backward", "comm", "total", "edges", "rows",
      "a2a MB", "imb", "peak MB", "coll", "kcall", "kern");
  for (auto const& row : r.rows) {
    auto const& s = row.seconds;
    out += fmt::format(
        "{:<12}{:>4}{:>10.4f}{:>10.4f}{:>10.4f}{:>10.4f}{:>10.4f}{:>10.4f}{:>12.0f}{:>12.0f}"
        "{:>10.2f}{:>8.3f}{:>10.1f}{:>7.1f}{:>7.0f}{:>7.0f}\n",
        row.mode, row.pes, s.sample, s.feature_load, s.forward, s.backward, s.communication,
        row.total_seconds, row.work.at("sampled_edges"), row.work.at("feature_rows"),
        row.work.at("alltoall_bytes") / 1e6, row.imbalance_edges, row.peak_bytes_max / 1e6,
        row.work.at("collective_calls") / row.pes, row.work.at("kernel_calls") / row.pes,
        row.kernel_launches.total());
  }
  out += fmt::format(
      "(MEASURED seconds per global batch on this machine's {} backend; coll: collective calls "
      "per PE and step, counted (a counts exchange riding with its ids is no call of its own); "
      "kcall: kernel entry calls per PE and step, counted; kern: kernels the cost model charges "
      "a launch for per PE and step, modelled)\n",
      to_string(o.compute_backend));
  if (o.machines.empty()) return out;
  auto table = [&](const std::string& title, auto&& get) {
    out += "\n" + title + "\n";
    out += fmt::format("{:<12}{:>4}", "mode", "P");
    for (auto const& m : o.machines) out += fmt::format("{:>14}", m.name);
    out += "\n";
    for (auto const& row : r.rows) {
      out += fmt::format("{:<12}{:>4}", row.mode, row.pes);
      for (std::size_t mi = 0; mi < o.machines.size(); ++mi) {
        out += fmt::format("{:>14.6f}", get(row, mi));
      }
      out += "\n";
    }
  };
  table(fmt::format("MODELLED seconds per global batch (counted bytes and flops over the machine "
                    "file's ceilings, features {} at {} bytes per element{}, GEMMs {}, {}; not "
                    "measured)",
                    to_string(o.cost.placement), o.feature_bytes,
                    o.feature_bytes_given ? " (--feature-bytes)" : "",
                    o.gemm_math.empty() ? "as each machine's gemm_math" : o.gemm_math,
                    overlaps_prepare(backend::cuda, o.prefetch)
                        ? "prepare overlapped with compute"
                        : "stages in series (--prefetch 0)"),
        [](const modes_row& row, std::size_t mi) { return row.modelled_total[mi]; });
  if (o.compute_backend == backend::cuda) {
    table(
        "MEASURED COMPUTE + MODELLED LINKS seconds per global batch (GPU compute seconds "
        "measured here, bytes over the machine's links)",
        [](const modes_row& row, std::size_t mi) { return row.measured_links[mi].total(); });
  }
  return out;
}

namespace {

/// Cache hits over the feature rows loaded (0 without a cache).
double hit_rate(const modes_row& row) {
  double const rows = row.work.at("feature_rows");
  return rows > 0 ? row.work.at("cache_hits") / rows : 0.0;
}

/// The independent row of the same P as cooperative row `coop` (nullptr if none).
const modes_row* independent_of(const modes_result& r, const modes_row& coop) {
  for (auto const& row : r.rows) {
    if (row.mode == "independent" && row.pes == coop.pes) return &row;
  }
  return nullptr;
}

}  // namespace

std::string format_settings_table(const std::vector<setting_result>& runs) {
  if (runs.empty() || runs.front().options.machines.empty()) return {};
  auto const& machines = runs.front().options.machines;
  std::string out = fmt::format(
      "MODELLED seconds per global batch for the paper's settings (both protocols; counted work "
      "over the machine file's ceilings, not measured); speedup = independent / cooperative\n");
  out += fmt::format("{:<26}{:>4} {:<12}{:>7}", "setting", "P", "mode", "hit%");
  for (auto const& m : machines) out += fmt::format("{:>14}{:>9}", m.name, "speedup");
  out += "\n";
  for (auto const& run : runs) {
    for (auto const& row : run.result.rows) {
      out += fmt::format("{:<26}{:>4} {:<12}{:>7.1f}", run.setting.label, row.pes, row.mode,
                         100 * hit_rate(row));
      const modes_row* ind = row.mode == "cooperative" ? independent_of(run.result, row) : nullptr;
      for (std::size_t mi = 0; mi < machines.size(); ++mi) {
        out += fmt::format("{:>14.6f}", row.modelled_total[mi]);
        out += ind != nullptr && row.modelled_total[mi] > 0
                   ? fmt::format("{:>8.2f}x", ind->modelled_total[mi] / row.modelled_total[mi])
                   : fmt::format("{:>9}", "");
      }
      out += "\n";
    }
  }
  return out;
}

std::string settings_csv(const std::vector<setting_result>& runs) {
  std::string out =
      "setting,sampler,kappa,cache_policy,cache_rows,feature_bytes,gemm_math,mode,pes,batch_size,"
      "cache_hit_rate,machine,modelled_total_s,speedup\n";
  for (auto const& run : runs) {
    auto const& o = run.options;
    for (auto const& row : run.result.rows) {
      const modes_row* ind = row.mode == "cooperative" ? independent_of(run.result, row) : nullptr;
      for (std::size_t mi = 0; mi < o.machines.size(); ++mi) {
        out += fmt::format(
            "\"{}\",{},{},{},{},{},{},{},{},{},{},{},{},{}\n", run.setting.label,
            to_string(o.sampler), o.batch_dependency, to_string(o.cache_policy), o.cache_rows,
            o.feature_bytes, o.gemm_math.empty() ? "machine file" : o.gemm_math, row.mode,
            row.pes, row.batch_size, hit_rate(row), o.machines[mi].name, row.modelled_total[mi],
            ind != nullptr && row.modelled_total[mi] > 0
                ? fmt::format("{}", ind->modelled_total[mi] / row.modelled_total[mi])
                : std::string());
      }
    }
  }
  return out;
}

}  // namespace coopgnn::bench
