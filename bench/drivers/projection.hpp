// Projected per-batch time on DGX-class machines (DESIGN.md section 6, "Projected multi-GPU
// time"): measured per-PE compute time plus counted bytes over the machine's link bandwidths.
// Every number it produces is a projection, and outputs say so.
#pragma once

#include <string>
#include <vector>

namespace coopgnn::bench {

/// Link and memory bandwidths of one machine, GB/s (1e9 bytes per second) per direction.
struct machine_model {
  std::string name;              ///< e.g. "DGX-H100"
  std::string link;              ///< name of the GPU-to-GPU link, e.g. "NVLink4"
  double nvlink_gbps = 0;        ///< per GPU, per direction
  double nccl_efficiency = 0.8;  ///< fraction of the link NCCL all-to-all reaches (77-82%)
  double pcie_gbps = 0;          ///< achievable host-to-device, per GPU (features over UVA)
  double hbm_gbps = 0;           ///< device memory bandwidth
};

/// DGX-A100 (NVLink3 300 GB/s, PCIe Gen4 25 GB/s, HBM2e 2039 GB/s), DGX-H100 (NVLink4 450 GB/s,
/// PCIe Gen5 55 GB/s, HBM3 3350 GB/s) and DGX-H200 (NVLink4 450 GB/s, PCIe Gen5 55 GB/s, HBM3e
/// 4800 GB/s): the numbers of DESIGN.md section 6 and the vendors' data sheets.
std::vector<machine_model> default_machines();

/// Parses "NAME:NVLINK:PCIE:HBM" (GB/s) or a default machine's name.
/// @throws logic_error naming the text when it does not parse or a bandwidth is not positive.
machine_model parse_machine(const std::string& text);

/// What one PE did in one batch, as measured (seconds) and counted (bytes).
struct pe_batch_cost {
  double sample_s = 0, forward_s = 0, backward_s = 0, optimizer_s = 0;  ///< measured compute
  double feature_bytes = 0;    ///< feature rows loaded from host storage over PCIe (UVA)
  double alltoall_bytes = 0;   ///< bytes this PE sent to other PEs
  double allreduce_bytes = 0;  ///< gradient bytes of the all-reduce
  int pes = 1;
};

/// Projected seconds per stage of one batch (labelled projected wherever they are printed).
struct projected_seconds {
  double sample = 0, feature_load = 0, forward = 0, backward = 0, communication = 0, total = 0;
};
/// Projected stage seconds of one batch on `m`:
///   sample, forward, backward: measured compute (host backend today: an upper bound);
///   feature_load = feature_bytes / PCIe;
///   communication = alltoall_bytes / (NVLink * efficiency) + ring all-reduce
///                   2 (P - 1) / P * allreduce_bytes / (NVLink * efficiency);
///   total = their sum plus optimizer.
/// @param m  bandwidths (GB/s, > 0); @param c  one PE's measured seconds and counted bytes.
/// Never throws; pure function.
projected_seconds project(const machine_model& m, const pe_batch_cost& c);

}  // namespace coopgnn::bench
