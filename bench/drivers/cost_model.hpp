// The cost model of `coopgnn bench modes` (docs/design.md section 6.5;
// docs/results/cost-model.md), in the spirit of appendix A.4 / Table 5 of Balin, LaSalle &
// Catalyurek, "Cooperative Minibatching in Graph Neural Networks" (TMLR 2025): each stage's time on
// a target machine is its COUNTED bytes over the bandwidth that moves them (HBM, NVLink, PCIe/UVA)
// plus its COUNTED arithmetic over the GPU's rate, kernel by kernel (a roofline: max(bytes /
// bandwidth, flops / rate) per kernel, summed). Nothing here reads a clock. Machine figures come
// from one data file (bench/machines.yaml) with a source per figure; host seconds never stand in
// for a GPU's.
#pragma once

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "models/layers.hpp"
#include "pipeline/trainer.hpp"

namespace coopgnn::bench {

/// One figure of a machine description, as the file states it.
struct machine_figure {
  double value = 0;
  std::string source;       ///< datasheet, URL or the reason for an assumption
  bool assumption = false;  ///< not a datasheet number
};

/// One machine of a machine file (bench/machines.yaml documents every field). Per GPU; GB/s are
/// 1e9 bytes per second per direction, TFLOP/s 1e12 flops per second, fractions in (0, 1].
struct machine_model {
  std::string name;  ///< e.g. "DGX-H100"
  std::string gpu;   ///< e.g. "H100-SXM5-80GB"
  std::string link;  ///< GPU-to-GPU link, e.g. "NVLink4 via NVSwitch"
  std::string file;  ///< the machine file it came from
  int gpus = 8;
  bool gemm_tf32 = false;  ///< GEMMs at tf32_tflops instead of fp32_tflops
  double hbm_gbps = 0, hbm_efficiency = 0, gpu_memory_gb = 0;
  double fp32_tflops = 0, tf32_tflops = 0, flop_efficiency = 0;
  double nvlink_gbps = 0, nccl_efficiency = 0, nccl_latency_us = 0;
  double pcie_gbps = 0;         ///< achievable host-to-device per GPU (UVA feature reads)
  double kernel_launch_us = 0;  ///< fixed cost per kernel (launch and a small kernel's tail)
  /// Every figure in file order (key, value, source, assumption), for outputs and reports.
  std::vector<std::pair<std::string, machine_figure>> figures;
};

/// The keys every machine's `figures` map must have (bench/machines.yaml).
const std::vector<std::string>& machine_figure_keys();

/// Reads a machine file: `machines:` a non-empty list of maps with name, gpu, gpus, link,
/// optional gemm_math (fp32 | tf32) and `figures:` a map of every machine_figure_keys() key to
/// {value: number > 0 (latencies, keys ending in _us: >= 0), source: non-empty text,
/// assumption: bool (optional)}; fractions (keys ending in _efficiency) must be <= 1. Unknown
/// figure keys are errors (a typo must not silently fall back).
/// @throws io_error naming the file when it cannot be read or is not YAML; logic_error naming
///         the file, the machine and the key for a missing, mistyped or out-of-range value or
///         a duplicate machine name.
std::vector<machine_model> load_machines(const std::filesystem::path& file);

/// Sets every machine's GEMM math (--gemm-math): "fp32" (fp32_tflops), "tf32" (tf32_tflops, the
/// Tensor Cores' TF32 rate) or "" (leave each machine's `gemm_math` from its file).
/// @throws logic_error naming --gemm-math for any other value.
void apply_gemm_math(std::vector<machine_model>& machines, const std::string& gemm_math);

/// The machines of `all` named in `names`, in the order of `names` (all of them when empty).
/// @throws logic_error naming an unknown machine and the file's machines.
std::vector<machine_model> select_machines(const std::vector<machine_model>& all,
                                           const std::vector<std::string>& names);

/// Where the model puts the input features on the target machine.
enum class feature_placement {
  uva,    ///< pinned host memory read over PCIe (UVA), device cache hits from HBM (the paper's)
  device  ///< the whole table in HBM
};
std::string to_string(feature_placement p);
/// @throws logic_error naming the value unless "uva" or "device".
feature_placement parse_feature_placement(const std::string& s);

/// What one PE did in one step, counted by the runtime (pe_trace) and nothing else.
struct step_counts {
  std::vector<layer_shape> layers;  ///< [L] per block: shape and its conv's widths
  double feature_rows_host = 0;     ///< input rows read from host storage (cache misses)
  double feature_rows_cached = 0;   ///< input rows served by the PE's device cache
  double feature_row_bytes = 0;     ///< bytes per input row as stored (F * 4 for float32,
                                    ///< F * 2 for float16 / bfloat16 tables)
  /// Bytes per input row once gathered (F * 4: the gather widens to float32); 0 = the same as
  /// feature_row_bytes.
  double feature_out_row_bytes = 0;
  /// Bytes per element of the input rows the cooperative feature exchange moves: 4, the
  /// runtime's (rows are widened to float32 when gathered); `bench modes --feature-bytes`
  /// overrides it with the modelled storage width. It scales the exchange's gathers and, in
  /// counts_of, its all-to-all bytes.
  double feature_element_bytes = 4;
  double alltoall_bytes = 0;        ///< bytes this PE sent to other PEs (all all-to-alls)
  double alltoall_calls = 0;        ///< its all-to-all-v calls (informational)
  /// Every collective operation of its step (work_counters::collectives: the counts exchanges,
  /// all-to-all-v calls, all-reduces, ...), informational: a counts exchange that rides with its
  /// ids is an operation but not a call.
  double collectives = 0;
  /// Every collective call of its step (work_counters::collective_calls); each is charged
  /// nccl_latency_us.
  double collective_calls = 0;
  double allreduce_bytes = 0;       ///< gradient bytes it contributed to all-reduces
  double parameters = 0;            ///< model parameters (floats) the optimizer updates
  bool exchanges = false;           ///< cooperative with P > 1: rows are routed between layers
  int pes = 1;
};

/// Model options that are not counts.
struct cost_options {
  models::conv_kind conv = models::conv_kind::sage;
  bool dropout = true;  ///< training with dropout on each conv's input (the trainer's default)
  feature_placement placement = feature_placement::uva;
  /// GAT: heads of the hidden convs (their out_dim is heads x per-head width) and of the last
  /// conv (averaged: it computes out_heads x out_dim columns), and attention dropout on.
  std::int64_t heads = 1;
  std::int64_t out_heads = 1;
  bool attn_dropout = false;
  /// R-GCN: R relations, the typed blocks' rows per destination (conv rgcn; 1 otherwise).
  std::int64_t relations = 1;
};

/// Modelled seconds of one step on one PE, per stage: the measured stages' struct, so that both
/// kinds print, add and compare alike.
using modelled_seconds = stage_seconds;

/// Seconds of one kernel moving `bytes` through HBM and doing `flops` (a multiply-add = 2) on
/// `m`: max(bytes / (hbm_gbps 1e9 hbm_efficiency), flops / (rate 1e12 flop_efficiency)), rate =
/// tf32_tflops when `tensor` and m.gemm_tf32, else fp32_tflops. Pure.
double kernel_seconds(const machine_model& m, double bytes, double flops, bool tensor = false);

/// The modelled stage seconds of one PE's step on `m` (every term a count over a ceiling; the
/// byte constants are the kernels' own traffic, documented in cost_model.cpp):
///   sample        = sum_l K(16 n_dst + 52 E + 16 n_src [+ 32 n_src when exchanges])
///   feature_load  = uva: host_rows row_bytes / (pcie_gbps 1e9)
///                        + K(cached_rows (row_bytes + out_row_bytes));
///                   device: K(rows (row_bytes + out_row_bytes)) (read at the stored width,
///                   written widened); + the local gathers of the feature exchange
///                   K(4 e n_src in) x 2 (e = feature_element_bytes)
///   forward       = sum_l dropout K(9 n_src in) + SpMM K(12 E + 4 E c + 4 n_out c, 2 E c)
///                   + GEMMs K(4 (m k + k n + m n), 2 m k n) + bias/ReLU K(8 n_dst out)
///                   + exchange gathers K(16 n_src in) when exchanges (c, m: as the conv runs)
///   backward      = the mirror: ReLU' , dW GEMMs, and (except the input layer) dX GEMMs,
///                   the transposed SpMM and dropout'; + exchange gathers
///   GAT convs (Velickovic et al. 2018; models/layers.hpp) with H heads computing W = H c
///   columns over E' = E + n_dst edges (one self-loop per destination): GEMM [n_src, in] x
///   [in, W]; attention projections K(4 n_src W + 8 n_src H, 4 n_src W); scores + LeakyReLU
///   K(8 E' + 12 E' H, 3 E' H); edge softmax K(16 E' H, 4 E' H); attention dropout
///   K(9 E' H); per-head SpMM K(12 E' + 4 E' H + 4 E' W + 4 n_dst W, 2 E' W); bias + ELU.
///   Backward: the same kernels' adjoints (two SpMM-shaped passes for d(alpha) and d(z)).
///   communication = alltoall_bytes / (nvlink_gbps 1e9 nccl_efficiency)
///                   + collective_calls nccl_latency_us 1e-6 (every counted collective call:
///                     the id exchanges with their counts, the row all-to-all-v calls, the
///                     all-reduces of gradients and loss; a counts exchange riding with its
///                     ids is no call of its own)
///                   + (P > 1) ring all-reduce 2 (P - 1) / P allreduce_bytes / the same link
///   optimizer     = K(28 parameters) (Adam: read p, g, m, v; write p, m, v)
/// K(b, f) = kernel_launch_us 1e-6 + kernel_seconds(m, b, f), one per kernel (a sampled layer
/// counts 8 kernels, 12 with the owner exchange; the UVA feature gather 1). No overlap between
/// stages or kernels inside the step; what the runtime overlaps across steps is step_total's.
/// Pure; never throws.
modelled_seconds model_step(const machine_model& m, const step_counts& c, const cost_options& o);

/// Whether the runtime prepares batch i + 1 (seeds, sampling, feature loading) while batch i
/// computes on backend `b` at --prefetch `depth` (docs/design.md section 6.7): true with depth > 0
/// on every backend (the prefetch thread; on CUDA on a stream of its own), false at 0. Pure;
/// never throws.
bool overlaps_prepare(backend b, int depth);

/// A step's modelled seconds when the runtime overlaps what overlaps_prepare says: s.total(),
/// less min(s.sample + s.feature_load, s.forward + s.backward + s.optimizer) when
/// `prepare_overlapped` (the prepare stages' local work hidden behind the compute stages', or the
/// reverse). Communication is never subtracted: the prefetch thread's exchanges and the compute
/// stages' share the PE's link, so the model keeps them in series (an upper bound). Pure; never
/// throws.
double step_total(const modelled_seconds& s, bool prepare_overlapped);

/// The kernels model_step charges a launch (kernel_launch_us) for in step `c`, per stage: the
/// same formulas with every kernel taking one unit and every bandwidth and rate infinite, so
/// each stage's value is its kernel count (communication: 0; collectives are charged as
/// nccl_latency_us, not as kernels). Machine-independent. Pure; never throws.
stage_seconds model_kernels(const step_counts& c, const cost_options& o);

/// The counts of pe_trace `t` of a step with P PEs (cooperative or not), input rows of
/// `feature_row_bytes` bytes each as stored and `feature_out_row_bytes` once gathered (float32;
/// 0 = feature_row_bytes); the feature exchange moves rows of `feature_element_bytes` bytes per
/// element: the runtime's float32 all-to-all bytes of the feature exchange (traffic direction
/// "features") are scaled by feature_element_bytes / 4, every other byte count is taken as
/// counted.
step_counts counts_of(const pe_trace& t, int P, bool cooperative, double feature_row_bytes,
                      double feature_out_row_bytes = 0, double feature_element_bytes = 4);

/// Measured per-PE seconds plus modelled links: today's "measured compute + modelled links"
/// projection, meaningful only when the seconds were measured on a GPU (the CUDA backend).
struct measured_step {
  double sample_s = 0, forward_s = 0, backward_s = 0, optimizer_s = 0;  ///< measured on a GPU
  double feature_bytes = 0;    ///< feature rows loaded from host storage over PCIe (UVA)
  double alltoall_bytes = 0;   ///< bytes this PE sent to other PEs
  double allreduce_bytes = 0;  ///< gradient bytes of the all-reduce
  int pes = 1;
};
/// sample, forward, backward, optimizer: measured; feature_load = feature_bytes / PCIe;
/// communication = alltoall_bytes / (NVLink efficiency) + ring all-reduce
/// 2 (P - 1) / P allreduce_bytes / (NVLink efficiency). Pure; never throws.
modelled_seconds measured_plus_links(const machine_model& m, const measured_step& c);

}  // namespace coopgnn::bench
