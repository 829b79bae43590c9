#include "tma/fingerprint.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <map>
#include <set>

#include "pipeline/checkpoint.hpp"

namespace coopgnn::tma {

nlohmann::json rank_fingerprint(const dataset& ds, const train_config& cfg,
                                const std::string& scheme, std::int64_t num_parameters,
                                const std::string& content) {
  nlohmann::json j = arithmetic_options(cfg);
  j["--task"] = to_string(cfg.task);
  j["--mode"] = to_string(cfg.mode);
  j["--scheme"] = scheme;
  j["parameters"] = num_parameters;
  j["dataset"] = ds.name;
  j["dataset.num_nodes"] = ds.num_nodes;
  j["dataset.content"] = content;
  return j;
}

std::string fingerprint_mismatch(const std::vector<std::string>& gathered) {
  std::vector<nlohmann::json> fp;
  for (std::size_t r = 0; r < gathered.size(); ++r) {
    nlohmann::json j = nlohmann::json::parse(gathered[r], nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.is_object()) {
      return fmt::format("rank {} sent no readable fingerprint ('{}')", r, gathered[r]);
    }
    fp.push_back(std::move(j));
  }
  if (fp.empty()) return {};
  std::set<std::string> keys;
  for (const auto& j : fp) {
    for (auto const& [k, v] : j.items()) keys.insert(k);
  }
  auto text = [](const nlohmann::json& j, const std::string& k) {
    return j.contains(k) ? j[k].dump() : std::string("(not set)");
  };
  for (const std::string& k : keys) {
    std::map<std::string, std::vector<std::size_t>> ranks_of;  // value -> its ranks
    std::vector<std::string> order;                            // values by their first rank
    for (std::size_t r = 0; r < fp.size(); ++r) {
      std::string const v = text(fp[r], k);
      if (!ranks_of.contains(v)) order.push_back(v);
      ranks_of[v].push_back(r);
    }
    if (order.size() == 1) continue;
    // The dataset's content: say which part differs (edges, features, split, labels).
    std::string what;
    auto const first = ranks_of[order[0]][0];
    auto const second = ranks_of[order[1]][0];
    if (k == "dataset.content" && fp[first].contains(k) && fp[second].contains(k) &&
        fp[first][k].is_string() && fp[second][k].is_string()) {
      std::string const diff =
          fingerprint_difference(fp[first][k].get<std::string>(), fp[second][k].get<std::string>());
      what = diff.empty() ? std::string(" (their datasets hold other tasks)")
                          : fmt::format(" (their datasets' {} differ)", diff);
    }
    std::vector<std::string> parts;
    for (const std::string& v : order) {
      auto const& rs = ranks_of[v];
      parts.push_back(fmt::format("{} on rank{} {}", v, rs.size() == 1 ? "" : "s",
                                  fmt::join(rs, ", ")));
    }
    return fmt::format(
        "the ranks disagree on {}{}: {} (start every rank with the same options and dataset)", k,
        what, fmt::join(parts, "; "));
  }
  return {};
}

}  // namespace coopgnn::tma
