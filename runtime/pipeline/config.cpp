#include "runtime/pipeline/config.hpp"

#include <algorithm>
#include <thread>

#include "runtime/core/error.hpp"

namespace coopgnn {

minibatch_mode parse_mode(const std::string& name) {
  if (name == "independent") return minibatch_mode::independent;
  if (name == "cooperative") return minibatch_mode::cooperative;
  COOPGNN_FAIL("unknown mode '{}': expected 'cooperative' or 'independent'", name);
}

std::string to_string(minibatch_mode m) {
  return m == minibatch_mode::independent ? "independent" : "cooperative";
}

std::string to_string(task_kind t) {
  return t == task_kind::link_prediction ? "link_prediction" : "node_classification";
}

std::string to_string(exclude_kind e) {
  switch (e) {
    case exclude_kind::self:
      return "self";
    case exclude_kind::reverse:
      return "reverse";
    default:
      return "none";
  }
}

exclude_kind parse_exclude_kind(const std::string& name) {
  if (name == "none") return exclude_kind::none;
  if (name == "self") return exclude_kind::self;
  if (name == "reverse") return exclude_kind::reverse;
  COOPGNN_FAIL("--exclude '{}': expected none, self or reverse", name);
}

backend resolve_backend(const std::string& name, int cuda_devices,
                        const std::string& no_device_reason) {
#ifdef COOPGNN_WITH_CUDA
  bool const built = true;
#else
  bool const built = false;
#endif
  if (name == "host") return backend::host;
  if (name == "emulated") return backend::emulated;
  if (name == "auto") return built && cuda_devices > 0 ? backend::cuda : backend::host;
  COOPGNN_EXPECTS(name == "cuda", "--backend '{}': expected auto, host, cuda or emulated", name);
  COOPGNN_EXPECTS(built,
                  "--backend cuda: this build has no CUDA backend (configure with nvcc "
                  "available, COOPGNN_CUDA=ON)");
  COOPGNN_EXPECTS(cuda_devices > 0, "--backend cuda: no CUDA device ({})", no_device_reason);
  return backend::cuda;
}

work_counters& work_counters::operator+=(const work_counters& o) {
  seeds += o.seeds;
  sampled_edges += o.sampled_edges;
  sampled_vertices += o.sampled_vertices;
  feature_rows += o.feature_rows;
  feature_bytes += o.feature_bytes;
  alltoall_bytes += o.alltoall_bytes;
  alltoall_calls += o.alltoall_calls;
  collectives += o.collectives;
  allreduce_bytes += o.allreduce_bytes;
  cache_hits += o.cache_hits;
  cache_misses += o.cache_misses;
  auto add = [](std::vector<std::int64_t>& a, const std::vector<std::int64_t>& b) {
    if (a.size() < b.size()) a.resize(b.size(), 0);
    for (std::size_t i = 0; i < b.size(); ++i) a[i] += b[i];
  };
  add(rows_per_type, o.rows_per_type);
  add(edges_per_relation, o.edges_per_relation);
  return *this;
}

stage_seconds& stage_seconds::max_with(const stage_seconds& o) {
  sample = std::max(sample, o.sample);
  feature_load = std::max(feature_load, o.feature_load);
  forward = std::max(forward, o.forward);
  backward = std::max(backward, o.backward);
  communication = std::max(communication, o.communication);
  optimizer = std::max(optimizer, o.optimizer);
  return *this;
}

stage_seconds& stage_seconds::operator/=(double n) {
  sample /= n;
  feature_load /= n;
  forward /= n;
  backward /= n;
  communication /= n;
  optimizer /= n;
  return *this;
}

stage_seconds& stage_seconds::operator+=(const stage_seconds& o) {
  sample += o.sample;
  feature_load += o.feature_load;
  forward += o.forward;
  backward += o.backward;
  communication += o.communication;
  optimizer += o.optimizer;
  return *this;
}

int pe_thread_budget(const train_config& c) {
  COOPGNN_EXPECTS(c.threads_per_pe >= 0, "--threads-per-pe {}: expected a count >= 1 or auto",
                  c.threads_per_pe);
  COOPGNN_EXPECTS(c.num_pes >= 1, "--pes {}: expected at least 1", c.num_pes);
  if (c.threads_per_pe > 0) return c.threads_per_pe;
  int const hw = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  return std::max(1, hw / c.num_pes);
}

int sampler_threads(const train_config& c) {
  COOPGNN_EXPECTS(c.sample_threads >= 0, "--sample-threads {}: expected a count >= 1",
                  c.sample_threads);
  return c.sample_threads > 0 ? c.sample_threads : pe_thread_budget(c);
}

}  // namespace coopgnn
