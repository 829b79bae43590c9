#include "runtime/pipeline/config.hpp"

#include <algorithm>

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

work_counters& work_counters::operator+=(const work_counters& o) {
  seeds += o.seeds;
  sampled_edges += o.sampled_edges;
  sampled_vertices += o.sampled_vertices;
  feature_rows += o.feature_rows;
  feature_bytes += o.feature_bytes;
  alltoall_bytes += o.alltoall_bytes;
  allreduce_bytes += o.allreduce_bytes;
  cache_hits += o.cache_hits;
  cache_misses += o.cache_misses;
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

stage_seconds& stage_seconds::operator+=(const stage_seconds& o) {
  sample += o.sample;
  feature_load += o.feature_load;
  forward += o.forward;
  backward += o.backward;
  communication += o.communication;
  optimizer += o.optimizer;
  return *this;
}

}  // namespace coopgnn
