#include "bench/drivers/cost_model.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "runtime/core/error.hpp"

namespace coopgnn::bench {

// ---- machine files ---------------------------------------------------------------------------

const std::vector<std::string>& machine_figure_keys() {
  static const std::vector<std::string> keys = {"hbm_gbps",    "hbm_efficiency",  "gpu_memory_gb",
                                                "fp32_tflops", "tf32_tflops",     "flop_efficiency",
                                                "nvlink_gbps", "nccl_efficiency", "nccl_latency_us",
                                                "pcie_gbps",   "kernel_launch_us"};
  return keys;
}

namespace {

bool is_fraction(const std::string& key) { return key.ends_with("_efficiency"); }

/// Reads one machine; `where` = "FILE: machines[i]" (plus the name once known).
machine_model read_machine(const YAML::Node& n, const std::string& file, std::size_t i) {
  std::string where = fmt::format("machine file {}: machines[{}]", file, i);
  COOPGNN_EXPECTS(n.IsMap(), "{}: expected a map with name, gpu, gpus, link and figures", where);
  auto text = [&](const char* key) {
    YAML::Node const v = n[key];
    COOPGNN_EXPECTS(v.IsDefined() && v.IsScalar() && !v.as<std::string>().empty(),
                    "{}: key '{}' is missing or not a non-empty string", where, key);
    return v.as<std::string>();
  };
  machine_model m;
  m.file = file;
  m.name = text("name");
  where += fmt::format(" ({})", m.name);
  m.gpu = text("gpu");
  m.link = text("link");
  try {
    m.gpus = n["gpus"].as<int>();
  } catch (const YAML::Exception&) {
    COOPGNN_FAIL("{}: key 'gpus' is missing or not an integer", where);
  }
  COOPGNN_EXPECTS(m.gpus >= 1, "{}: key 'gpus' must be at least 1, got {}", where, m.gpus);
  if (YAML::Node const g = n["gemm_math"]; g.IsDefined()) {
    auto const s = g.IsScalar() ? g.as<std::string>() : std::string();
    COOPGNN_EXPECTS(s == "fp32" || s == "tf32",
                    "{}: key 'gemm_math' must be fp32 or tf32, got '{}'", where, s);
    m.gemm_tf32 = s == "tf32";
  }
  YAML::Node const figs = n["figures"];
  COOPGNN_EXPECTS(figs.IsDefined() && figs.IsMap(), "{}: key 'figures' is missing or not a map",
                  where);
  std::set<std::string> const known(machine_figure_keys().begin(), machine_figure_keys().end());
  for (auto const& kv : figs) {
    auto const key = kv.first.as<std::string>();
    COOPGNN_EXPECTS(known.contains(key), "{}: unknown key 'figures.{}' (expected one of {})", where,
                    key, fmt::join(machine_figure_keys(), ", "));
    YAML::Node const f = kv.second;
    COOPGNN_EXPECTS(f.IsMap(), "{}: key 'figures.{}' must be a map {{value, source}}", where, key);
    machine_figure fig;
    try {
      fig.value = f["value"].as<double>();
    } catch (const YAML::Exception&) {
      COOPGNN_FAIL("{}: key 'figures.{}.value' is missing or not a number", where, key);
    }
    // Latencies may be 0 (a bandwidth-only model); rates, bandwidths and fractions may not.
    bool const latency = key.ends_with("_us");
    COOPGNN_EXPECTS(
        (latency ? fig.value >= 0 : fig.value > 0) && (!is_fraction(key) || fig.value <= 1),
        "{}: key 'figures.{}.value' must be {}, got {}", where, key,
        is_fraction(key) ? "in (0, 1]" : (latency ? "non-negative" : "positive"), fig.value);
    YAML::Node const src = f["source"];
    COOPGNN_EXPECTS(src.IsDefined() && src.IsScalar() && !src.as<std::string>().empty(),
                    "{}: key 'figures.{}.source' is missing: every figure needs a source", where,
                    key);
    fig.source = src.as<std::string>();
    if (YAML::Node const a = f["assumption"]; a.IsDefined()) {
      try {
        fig.assumption = a.as<bool>();
      } catch (const YAML::Exception&) {
        COOPGNN_FAIL("{}: key 'figures.{}.assumption' must be true or false", where, key);
      }
    }
    m.figures.emplace_back(key, fig);
  }
  auto value = [&](const std::string& key) {
    for (auto const& [k, f] : m.figures) {
      if (k == key) return f.value;
    }
    COOPGNN_FAIL("{}: key 'figures.{}' is missing", where, key);
  };
  m.hbm_gbps = value("hbm_gbps");
  m.hbm_efficiency = value("hbm_efficiency");
  m.gpu_memory_gb = value("gpu_memory_gb");
  m.fp32_tflops = value("fp32_tflops");
  m.tf32_tflops = value("tf32_tflops");
  m.flop_efficiency = value("flop_efficiency");
  m.nvlink_gbps = value("nvlink_gbps");
  m.nccl_efficiency = value("nccl_efficiency");
  m.nccl_latency_us = value("nccl_latency_us");
  m.pcie_gbps = value("pcie_gbps");
  m.kernel_launch_us = value("kernel_launch_us");
  return m;
}

}  // namespace

std::vector<machine_model> load_machines(const std::filesystem::path& file) {
  YAML::Node root;
  try {
    root = YAML::LoadFile(file.string());
  } catch (const YAML::BadFile&) {
    COOPGNN_IO_FAIL("machine file {}: cannot be read (pass one with --machine FILE)",
                    file.string());
  } catch (const YAML::Exception& e) {
    COOPGNN_IO_FAIL("machine file {}: not valid YAML: {}", file.string(), e.what());
  }
  YAML::Node const list = root["machines"];
  COOPGNN_EXPECTS(list.IsDefined() && list.IsSequence() && list.size() > 0,
                  "machine file {}: key 'machines' is missing or not a non-empty list",
                  file.string());
  std::vector<machine_model> out;
  for (std::size_t i = 0; i < list.size(); ++i) {
    out.push_back(read_machine(list[i], file.string(), i));
    for (std::size_t j = 0; j + 1 < out.size(); ++j) {
      COOPGNN_EXPECTS(out[j].name != out.back().name,
                      "machine file {}: machines[{}] repeats the name '{}'", file.string(), i,
                      out.back().name);
    }
  }
  return out;
}

void apply_gemm_math(std::vector<machine_model>& machines, const std::string& gemm_math) {
  if (gemm_math.empty()) return;
  COOPGNN_EXPECTS(gemm_math == "fp32" || gemm_math == "tf32",
                  "--gemm-math '{}': expected fp32 or tf32", gemm_math);
  for (auto& m : machines) m.gemm_tf32 = gemm_math == "tf32";
}

std::vector<machine_model> select_machines(const std::vector<machine_model>& all,
                                           const std::vector<std::string>& names) {
  if (names.empty()) return all;
  std::vector<machine_model> out;
  for (auto const& name : names) {
    auto const it = std::find_if(all.begin(), all.end(),
                                 [&](const machine_model& m) { return m.name == name; });
    if (it == all.end()) {
      std::vector<std::string> have;
      for (auto const& m : all) have.push_back(m.name);
      COOPGNN_FAIL("--machines: '{}' is not in {} (it has {})", name,
                   all.empty() ? std::string("the machine file") : all.front().file,
                   fmt::join(have, ", "));
    }
    out.push_back(*it);
  }
  return out;
}

std::string to_string(feature_placement p) {
  return p == feature_placement::uva ? "uva" : "device";
}

feature_placement parse_feature_placement(const std::string& s) {
  if (s == "uva") return feature_placement::uva;
  if (s == "device") return feature_placement::device;
  COOPGNN_FAIL("--feature-placement '{}': expected uva or device", s);
}

// ---- the model -------------------------------------------------------------------------------

double kernel_seconds(const machine_model& m, double bytes, double flops, bool tensor) {
  double const bw = m.hbm_gbps * 1e9 * m.hbm_efficiency;
  double const rate =
      (tensor && m.gemm_tf32 ? m.tf32_tflops : m.fp32_tflops) * 1e12 * m.flop_efficiency;
  return std::max(bytes / bw, flops / rate);
}

namespace {

// Bytes each kernel moves (float = 4, id = 8 bytes), one pass, no cache reuse assumed:
//   sampling, per destination: its two CSC offsets (16); per sampled edge: the neighbour id read
//   (8), the sampled id and weight written (12), and the sort-based compaction reading and
//   writing (key, position) pairs once (32); per unique source: its id and degree written (16);
//   the owner exchange's split and deduplication: (key, position) pairs once more (32).
constexpr double kSampleDst = 16, kSampleEdge = 52, kSampleSrc = 16, kSampleExchange = 32;
//   Kernels per sampled layer (each pays kernel_launch_us): sampling's count, scan and draw,
//   the compaction's sort passes, unique and relabel: 8; the owner exchange's split and
//   deduplication: 4 more. Every other term below is one kernel per K().
constexpr double kSampleKernels = 8, kExchangeKernels = 4;
//   SpMM (CSR, row per destination): per edge its index and weight (12), then one gathered row
//   of c columns (4 c) per edge, and the output row (4 c) per destination; 2 flops per edge-col.
//   GEMM [m, k] x [k, n]: 4 (m k + k n + m n) bytes (+ 4 m n when accumulating), 2 m k n flops.
//   Dropout: read 4, write 4 and a 1-byte mask per element. Bias + ReLU: read and write 4 each.
//   Row exchange gathers (cooperative, P > 1): two gathers of the rows sent and received, each
//   read + write, approximated by 16 bytes per column of every requester row.

double gemm_bytes(double m, double k, double n, bool accumulate) {
  return 4 * (m * k + k * n + m * n) + (accumulate ? 4 * m * n : 0);
}

struct conv_cost {
  double forward = 0, backward = 0;
};

/// One conv layer over block `s` (models/layers.hpp: SAGE out = h_dst W_self + (A h) W_neigh,
/// GCN out = (A + self) h W; transform-first when in_dim > out_dim).
conv_cost conv_seconds(const machine_model& m, const layer_shape& s, const cost_options& o) {
  auto const nd = static_cast<double>(s.num_dst), ns = static_cast<double>(s.num_src),
             e = static_cast<double>(s.num_edges), in = static_cast<double>(s.in_dim),
             out = static_cast<double>(s.out_dim);
  bool const sage = o.conv == models::conv_kind::sage;
  bool const mlp = o.conv == models::conv_kind::mlp;
  double const launch = m.kernel_launch_us * 1e-6;
  auto K = [&](double bytes, double flops, bool tensor = false) {
    return launch + kernel_seconds(m, bytes, flops, tensor);
  };
  auto spmm = [&](double rows_out, double cols) {
    return K(12 * e + 4 * e * cols + 4 * rows_out * cols, 2 * e * cols);
  };
  auto gemm = [&](double rows, double k, double n, bool acc) {
    return K(gemm_bytes(rows, k, n, acc), 2 * rows * k * n, true);
  };
  conv_cost c;
  double const drop = o.dropout ? K(9 * ns * in, 0) : 0;
  if (o.conv == models::conv_kind::gat) {
    // The last conv (block 0) averages out_heads heads of out columns; hidden convs concatenate.
    bool const last = s.layer == 0;
    double const heads = static_cast<double>(last ? o.out_heads : o.heads);
    double const w = last ? heads * out : out;  // columns the heads compute together
    double const e2 = e + nd;                   // one self-loop per destination
    double const project = K(4 * ns * w + 8 * ns * heads, 4 * ns * w);
    double const scores = K(8 * e2 + 12 * e2 * heads, 3 * e2 * heads);
    double const softmax = K(16 * e2 * heads, 4 * e2 * heads);
    double const adrop = o.attn_dropout ? K(9 * e2 * heads, 0) : 0;
    double const aggregate = K(12 * e2 + 4 * e2 * heads + 4 * e2 * w + 4 * nd * w, 2 * e2 * w);
    c.forward += drop + gemm(ns, in, w, false) + project + scores + softmax + adrop + aggregate +
                 K(8 * nd * out, nd * out);  // bias + ELU
    // Backward: ELU', d(alpha) and d(z) (two SpMM-shaped passes), dropout', softmax', scores',
    // projections', dW; dX and the input dropout' except for the input layer.
    c.backward += K(12 * nd * out, nd * out) + 2 * aggregate + adrop + softmax + scores + project +
                  gemm(ns, in, w, true);
    if (s.input_grad) c.backward += gemm(ns, w, in, false) + drop;
    return c;
  }
  c.forward += drop + K(8 * nd * out, nd * out);  // dropout, bias + ReLU
  c.backward += K(12 * nd * out, nd * out);       // ReLU' (read g, out; write g)
  if (o.conv == models::conv_kind::rgcn) {
    // models/rgcn.cpp: agg = A_rows h over nd R rows [nd, R in], out = agg W [R in, out] +
    // h_dst W_0; backward dW = agg^T g, dW_0, and (not the input layer) g W^T, A_rows^T and
    // g W_0^T. The weight's expansion (bases or blocks: R in out values) is not counted.
    double const R = static_cast<double>(o.relations);
    c.forward += spmm(nd * R, in) + gemm(nd, R * in, out, false) + gemm(nd, in, out, true);
    c.backward += gemm(nd, R * in, out, true) + gemm(nd, in, out, true);
    if (s.input_grad) {
      c.backward += gemm(nd, out, R * in, false) + spmm(ns, in) + gemm(nd, out, in, true) + drop;
    }
    return c;
  }
  if (mlp) {
    c.forward += gemm(nd, in, out, false);
    c.backward += gemm(nd, in, out, true);  // dW
    if (s.input_grad) c.backward += gemm(nd, out, in, false) + drop;
    return c;
  }
  if (!s.transform_first) {
    // Aggregate (in columns), then transform the destinations.
    c.forward += spmm(nd, in) + gemm(nd, in, out, false);
    c.backward += gemm(nd, in, out, true);  // dW_neigh (GCN: dW)
    if (sage) {
      c.forward += gemm(nd, in, out, true);   // + h_dst W_self
      c.backward += gemm(nd, in, out, true);  // dW_self
    }
    if (s.input_grad) {
      c.backward += gemm(nd, out, in, false) + spmm(ns, in) + drop;  // d(agg), A^T, dropout'
      if (sage) c.backward += gemm(nd, out, in, true);               // d(h_dst)
    }
  } else {
    // Transform every source (out columns), then aggregate.
    c.forward += gemm(ns, in, out, false) + spmm(nd, out);
    c.backward += spmm(ns, out) + gemm(ns, in, out, true);  // A^T g, dW_neigh (GCN: dW)
    if (sage) {
      c.forward += gemm(nd, in, out, true);
      c.backward += gemm(nd, in, out, true);
    }
    if (s.input_grad) {
      c.backward += gemm(ns, out, in, false) + drop;
      if (sage) c.backward += gemm(nd, out, in, true);
    }
  }
  return c;
}

}  // namespace

modelled_seconds model_step(const machine_model& m, const step_counts& c, const cost_options& o) {
  modelled_seconds t;
  double const launch = m.kernel_launch_us * 1e-6;
  auto K = [&](double bytes, double kernels = 1) {
    return kernels * launch + kernel_seconds(m, bytes, 0);
  };
  for (auto const& s : c.layers) {
    auto const nd = static_cast<double>(s.num_dst), ns = static_cast<double>(s.num_src),
               e = static_cast<double>(s.num_edges), in = static_cast<double>(s.in_dim);
    t.sample += K(kSampleDst * nd + kSampleEdge * e + kSampleSrc * ns +
                      (c.exchanges ? kSampleExchange * ns : 0),
                  kSampleKernels + (c.exchanges ? kExchangeKernels : 0));
    auto const conv = conv_seconds(m, s, o);
    t.forward += conv.forward;
    t.backward += conv.backward;
    if (c.exchanges) {
      // Block l's sources are filled by an exchange: the features (l = L-1, feature_load) or
      // the previous layer's outputs (forward); backward pushes gradients back except for the
      // input rows.
      bool const input_layer = static_cast<std::size_t>(s.layer) + 1 == c.layers.size();
      // Two gathers, each reading and writing every requester row: 4 element bytes per column
      // (the input rows at their stored width, the layer outputs as float32).
      double const elem = input_layer ? c.feature_element_bytes : 4.0;
      double const gathers = K(4 * elem * ns * in, 2);
      (input_layer ? t.feature_load : t.forward) += gathers;
      if (!input_layer) t.backward += gathers;
    }
  }
  double const rows = c.feature_rows_host + c.feature_rows_cached;
  // A gathered row: read at the stored width, written widened to float32.
  double const moved = c.feature_row_bytes + (c.feature_out_row_bytes > 0 ? c.feature_out_row_bytes
                                                                          : c.feature_row_bytes);
  if (o.placement == feature_placement::uva) {
    t.feature_load += launch + c.feature_rows_host * c.feature_row_bytes / (m.pcie_gbps * 1e9) +
                      (c.feature_rows_cached > 0 ? K(c.feature_rows_cached * moved) : 0);
  } else {
    t.feature_load += K(rows * moved);
  }
  double const link = m.nvlink_gbps * 1e9 * m.nccl_efficiency;
  double const latency = m.nccl_latency_us * 1e-6;
  // Bytes over the link plus a fixed cost per counted collective call (with one PE there is
  // none: exchanges are skipped and nothing is all-reduced across PEs).
  t.communication = c.alltoall_bytes / link + c.collective_calls * latency;
  if (c.pes > 1) t.communication += 2.0 * (c.pes - 1) / c.pes * c.allreduce_bytes / link;
  t.optimizer = K(28 * c.parameters);
  return t;
}

bool overlaps_prepare(backend /*b*/, int depth) { return depth > 0; }

double step_total(const modelled_seconds& s, bool prepare_overlapped) {
  if (!prepare_overlapped) return s.total();
  return s.total() - std::min(s.sample + s.feature_load, s.forward + s.backward + s.optimizer);
}

stage_seconds model_kernels(const step_counts& c, const cost_options& o) {
  // One second per kernel and nothing else: every bandwidth and rate infinite (bytes / inf = 0),
  // no collective latency.
  double const inf = std::numeric_limits<double>::infinity();
  machine_model unit;
  unit.hbm_gbps = unit.fp32_tflops = unit.tf32_tflops = unit.nvlink_gbps = unit.pcie_gbps = inf;
  unit.hbm_efficiency = unit.flop_efficiency = unit.nccl_efficiency = 1;
  unit.nccl_latency_us = 0;
  unit.kernel_launch_us = 1e6;
  auto k = model_step(unit, c, o);
  for (double* v : {&k.sample, &k.feature_load, &k.forward, &k.backward, &k.communication,
                    &k.optimizer}) {
    *v = std::round(*v);
  }
  return k;
}

step_counts counts_of(const pe_trace& t, int P, bool cooperative, double feature_row_bytes,
                      double feature_out_row_bytes, double feature_element_bytes) {
  step_counts c;
  c.layers = t.layers;
  auto const hits = static_cast<double>(t.work.cache_hits);
  c.feature_rows_cached = hits;
  c.feature_rows_host = std::max(0.0, static_cast<double>(t.work.feature_rows) - hits);
  c.feature_row_bytes = feature_row_bytes;
  c.feature_out_row_bytes = feature_out_row_bytes;
  c.feature_element_bytes = feature_element_bytes;
  c.alltoall_bytes = static_cast<double>(t.work.alltoall_bytes);
  // The feature exchange moves the input rows at their stored width; the runtime counted float32.
  for (auto const& tr : t.traffic) {
    if (tr.direction == std::string("features")) {
      c.alltoall_bytes -= static_cast<double>(tr.bytes) * (1.0 - feature_element_bytes / 4.0);
    }
  }
  c.alltoall_calls = static_cast<double>(t.work.alltoall_calls);
  c.collectives = static_cast<double>(t.work.collectives);
  c.collective_calls = static_cast<double>(t.work.collective_calls);
  c.allreduce_bytes = static_cast<double>(t.work.allreduce_bytes);
  c.parameters = static_cast<double>(t.parameters);
  c.exchanges = cooperative && P > 1;
  c.pes = P;
  return c;
}

modelled_seconds measured_plus_links(const machine_model& m, const measured_step& c) {
  modelled_seconds p;
  double const link = m.nvlink_gbps * m.nccl_efficiency * 1e9;
  p.sample = c.sample_s;
  p.forward = c.forward_s;
  p.backward = c.backward_s;
  p.optimizer = c.optimizer_s;
  p.feature_load = c.feature_bytes / (m.pcie_gbps * 1e9);
  double const ring = c.pes > 1 ? 2.0 * (c.pes - 1) / c.pes * c.allreduce_bytes : 0.0;
  p.communication = (c.alltoall_bytes + ring) / link;
  return p;
}

}  // namespace coopgnn::bench
