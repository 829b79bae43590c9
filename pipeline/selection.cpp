#include "pipeline/selection.hpp"

#include <cmath>
#include <limits>
#include <string>
#include <utility>

#include "runtime/core/error.hpp"

namespace coopgnn {

namespace {

using nlohmann::json;

/// `r`'s epoch and metrics as a selection under `rule`.
model_selection selection_of(const epoch_report& r, select_best_kind rule) {
  model_selection s;
  s.rule = rule;
  s.epoch = r.epoch;
  s.epochs = r.epoch;
  s.metric_name = r.metric_name;
  s.val_metric = r.val_metric;
  s.test_metric = r.test_metric;
  s.val_metrics = r.val_metrics;
  s.test_metrics = r.test_metrics;
  return s;
}

json number_json(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

/// [[name, value], ...]: a list keeps the metrics' order (a JSON object would sort them).
json metrics_json(const std::vector<std::pair<std::string, double>>& m) {
  json a = json::array();
  for (auto const& [k, v] : m) a.push_back(json::array({k, number_json(v)}));
  return a;
}

/// The member `key` of `j` (a selection state), type-checked. @throws io_error naming `file`.
const json& member(const json& j, const char* key, const std::filesystem::path& file) {
  if (!j.is_object() || !j.contains(key)) {
    COOPGNN_IO_FAIL("{}: extra.selection has no '{}' (a damaged or edited manifest)", file.string(),
                    key);
  }
  return j.at(key);
}

double number_of(const json& v, const char* key, const std::filesystem::path& file) {
  if (v.is_null()) return std::numeric_limits<double>::quiet_NaN();
  if (!v.is_number()) {
    COOPGNN_IO_FAIL("{}: extra.selection.{} is {}, not a number or null", file.string(), key,
                    v.dump());
  }
  return v.get<double>();
}

std::vector<std::pair<std::string, double>> metrics_of(const json& a, const char* key,
                                                       const std::filesystem::path& file) {
  std::vector<std::pair<std::string, double>> out;
  if (!a.is_array()) COOPGNN_IO_FAIL("{}: extra.selection.{} is not a list", file.string(), key);
  for (auto const& e : a) {
    if (!e.is_array() || e.size() != 2 || !e[0].is_string()) {
      COOPGNN_IO_FAIL("{}: extra.selection.{} holds {}, not [name, value]", file.string(), key,
                      e.dump());
    }
    out.emplace_back(e[0].get<std::string>(), number_of(e[1], key, file));
  }
  return out;
}

}  // namespace

bool model_selector::offer(const epoch_report& r) {
  last_ = selection_of(r, sel_.rule);
  if (sel_.rule == select_best_kind::last || !std::isfinite(r.val_metric)) return false;
  if (sel_.epoch > 0 && !(r.val_metric > sel_.val_metric)) return false;  // ties: the earlier
  sel_ = last_;
  has_params_ = false;  // keep() stores this epoch's
  params_.clear();
  emb_ = matrix<float>();
  return true;
}

void model_selector::keep(std::vector<float> params, matrix<float> embeddings) {
  params_ = std::move(params);
  emb_ = std::move(embeddings);
  has_params_ = true;
}

model_selection model_selector::selected() const {
  model_selection s = sel_.rule == select_best_kind::last || sel_.epoch == 0 ? last_ : sel_;
  s.rule = sel_.rule;
  s.epochs = std::max(last_.epoch, sel_.epochs);
  s.note = note_;
  if (sel_.rule == select_best_kind::val && sel_.epoch == 0 && last_.epoch > 0) {
    std::string const why = "no evaluated epoch has a validation metric: the last epoch";
    s.note = s.note.empty() ? why : s.note + "; " + why;
  }
  return s;
}

json model_selector::to_json() const {
  return {{"rule", to_string(sel_.rule)},
          {"epoch", sel_.epoch},
          {"metric_name", sel_.metric_name},
          {"val_metric", number_json(sel_.val_metric)},
          {"test_metric", number_json(sel_.test_metric)},
          {"val_metrics", metrics_json(sel_.val_metrics)},
          {"test_metrics", metrics_json(sel_.test_metrics)},
          {"params", has_params_},
          {"note", note_}};
}

void model_selector::restore(const json& j, std::vector<float> params, matrix<float> embeddings,
                             const std::filesystem::path& file) {
  const json& epoch = member(j, "epoch", file);
  if (!epoch.is_number_integer() || epoch.get<std::int64_t>() < 0 ||
      epoch.get<std::int64_t>() > std::numeric_limits<int>::max()) {
    COOPGNN_IO_FAIL("{}: extra.selection.epoch is {}, not an epoch", file.string(), epoch.dump());
  }
  const json& name = member(j, "metric_name", file);
  const json& held = member(j, "params", file);
  if (!name.is_string() || !held.is_boolean()) {
    COOPGNN_IO_FAIL("{}: extra.selection: metric_name or params of the wrong type", file.string());
  }
  sel_.epoch = epoch.get<int>();
  sel_.epochs = sel_.epoch;
  sel_.metric_name = name.get<std::string>();
  sel_.val_metric = number_of(member(j, "val_metric", file), "val_metric", file);
  sel_.test_metric = number_of(member(j, "test_metric", file), "test_metric", file);
  sel_.val_metrics = metrics_of(member(j, "val_metrics", file), "val_metrics", file);
  sel_.test_metrics = metrics_of(member(j, "test_metrics", file), "test_metrics", file);
  if (j.contains("note") && j["note"].is_string()) note_ = j["note"].get<std::string>();
  has_params_ = held.get<bool>();
  if (has_params_ && params.empty()) {
    COOPGNN_IO_FAIL(
        "{}: extra.selection says the selected epoch's parameters are held, but the "
        "checkpoint has no selected_params array",
        file.string());
  }
  params_ = has_params_ ? std::move(params) : std::vector<float>();
  emb_ = has_params_ ? std::move(embeddings) : matrix<float>();
}

}  // namespace coopgnn
