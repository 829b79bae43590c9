#include "tma/tma.hpp"

#include <limits>

#include "runtime/core/error.hpp"

namespace coopgnn::tma {

scheme parse_scheme(const std::string& s) {
  if (s == "randomtma") return scheme::randomtma;
  if (s == "supertma") return scheme::supertma;
  if (s == "psgd-pa") return scheme::psgd_pa;
  if (s == "llcg") return scheme::llcg;
  if (s == "ggs") return scheme::ggs;
  COOPGNN_FAIL("--scheme {}: expected randomtma, supertma, psgd-pa, llcg or ggs", s);
}

std::string to_string(scheme s) {
  switch (s) {
    case scheme::randomtma:
      return "randomtma";
    case scheme::supertma:
      return "supertma";
    case scheme::psgd_pa:
      return "psgd-pa";
    case scheme::llcg:
      return "llcg";
    case scheme::ggs:
      return "ggs";
  }
  return "?";
}

std::optional<partition_scheme> partition_of(scheme s) {
  switch (s) {
    case scheme::randomtma:
      return partition_scheme::random;
    case scheme::supertma:
      return partition_scheme::super;
    case scheme::psgd_pa:
    case scheme::llcg:
      return partition_scheme::metis;
    case scheme::ggs:
      return std::nullopt;
  }
  return std::nullopt;
}

std::string to_string(command c) {
  switch (c) {
    case command::none:
      return "none";
    case command::average:
      return "average";
    case command::stop:
      return "stop";
  }
  return "?";
}

double progress::mean_loss() const {
  return loss_steps > 0 ? loss_sum / static_cast<double>(loss_steps)
                        : std::numeric_limits<double>::quiet_NaN();
}

command decide(double now, double last_aggregation, const schedule& s, bool all_completed) {
  COOPGNN_EXPECTS(s.interval > 0, "--interval must be > 0 seconds, got {}", s.interval);
  COOPGNN_EXPECTS(s.time_limit > 0, "--time-limit must be > 0 seconds, got {}", s.time_limit);
  if (now >= s.time_limit || all_completed) return command::stop;
  if (now - last_aggregation >= s.interval) return command::average;
  return command::none;
}

}  // namespace coopgnn::tma
