#include "bench/drivers/projection.hpp"

#include <sstream>

#include "runtime/core/error.hpp"

namespace coopgnn::bench {

std::vector<machine_model> default_machines() {
  return {
      {"DGX-A100", "NVLink3", 300.0, 0.8, 25.0, 2039.0},
      {"DGX-H100", "NVLink4", 450.0, 0.8, 55.0, 3350.0},
      {"DGX-H200", "NVLink4", 450.0, 0.8, 55.0, 4800.0},
  };
}

machine_model parse_machine(const std::string& text) {
  for (auto const& m : default_machines()) {
    if (m.name == text) return m;
  }
  std::vector<std::string> parts;
  std::stringstream ss(text);
  for (std::string item; std::getline(ss, item, ':');) parts.push_back(item);
  COOPGNN_EXPECTS(parts.size() == 4,
                  "--machines: '{}' is neither DGX-A100, DGX-H100, DGX-H200 nor "
                  "NAME:NVLINK_GBPS:PCIE_GBPS:HBM_GBPS",
                  text);
  machine_model m;
  m.name = parts[0];
  m.link = "custom";
  try {
    m.nvlink_gbps = std::stod(parts[1]);
    m.pcie_gbps = std::stod(parts[2]);
    m.hbm_gbps = std::stod(parts[3]);
  } catch (const std::exception&) {
    COOPGNN_FAIL("--machines: '{}' has a bandwidth that is not a number", text);
  }
  COOPGNN_EXPECTS(m.nvlink_gbps > 0 && m.pcie_gbps > 0 && m.hbm_gbps > 0,
                  "--machines: '{}' needs positive bandwidths", text);
  return m;
}

projected_seconds project(const machine_model& m, const pe_batch_cost& c) {
  projected_seconds p;
  double const link = m.nvlink_gbps * m.nccl_efficiency * 1e9;
  p.sample = c.sample_s;
  p.forward = c.forward_s;
  p.backward = c.backward_s;
  p.feature_load = c.feature_bytes / (m.pcie_gbps * 1e9);
  double const ring = c.pes > 1 ? 2.0 * (c.pes - 1) / c.pes * c.allreduce_bytes : 0.0;
  p.communication = (c.alltoall_bytes + ring) / link;
  p.total = p.sample + p.feature_load + p.forward + p.backward + p.communication + c.optimizer_s;
  return p;
}

}  // namespace coopgnn::bench
