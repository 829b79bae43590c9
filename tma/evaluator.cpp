#include "tma/evaluator.hpp"

#include <algorithm>
#include <cmath>
#include <exception>
#include <limits>
#include <nlohmann/json.hpp>

#include "runtime/core/error.hpp"
#include "runtime/graph/npy.hpp"
#include "pipeline/report.hpp"

namespace coopgnn::tma {

nlohmann::json metrics_json(const score& s) {
  nlohmann::json v = nlohmann::json::object();
  for (auto const& [k, x] : s.all) v[k] = number_or_null(x);
  return v;
}

std::string aggregation_json(const aggregate& a, const std::optional<score>& s) {
  nlohmann::json j;
  j["event"] = "aggregation";
  j["generation"] = a.generation;
  j["seconds"] = a.seconds;
  j["command"] = to_string(a.cmd);
  auto& steps = j["steps"] = nlohmann::json::array();
  auto& loss = j["train_loss"] = nlohmann::json::array();
  auto& epoch = j["epoch"] = nlohmann::json::array();
  for (const progress& p : a.trainers) {
    steps.push_back(p.steps);
    loss.push_back(number_or_null(p.mean_loss()));
    epoch.push_back(p.epoch);
  }
  j["evaluated"] = s.has_value();
  if (s) {
    j["val_metric"] = number_or_null(s->value);
    j["val"] = metrics_json(*s);
    j["metric"] = s->metric;
  } else {
    j["val_metric"] = nullptr;
    j["val"] = nullptr;
  }
  return j.dump();
}

double convergence_seconds(const std::vector<evaluation_history::point>& points, double tolerance) {
  double best = -std::numeric_limits<double>::infinity();
  for (auto const& p : points) {
    if (p.val && std::isfinite(*p.val)) best = std::max(best, *p.val);
  }
  if (!std::isfinite(best)) return std::numeric_limits<double>::quiet_NaN();
  double const bar = best - tolerance * std::abs(best);
  for (auto const& p : points) {
    if (p.val && std::isfinite(*p.val) && *p.val >= bar) return p.seconds;
  }
  return std::numeric_limits<double>::quiet_NaN();
}

evaluator::evaluator(score_fn validate, line_fn line, std::filesystem::path best_checkpoint)
    : validate_(std::move(validate)),
      line_(std::move(line)),
      best_path_(std::move(best_checkpoint)) {
  thread_ = std::thread([this] { run(); });
}

evaluator::~evaluator() {
  {
    std::lock_guard<std::mutex> lk(mu_);
    closing_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void evaluator::submit(aggregate a) {
  {
    std::lock_guard<std::mutex> lk(mu_);
    COOPGNN_EXPECTS(!closing_, "tma::evaluator::submit after finish()");
    hist_.last_params = a.params;
    hist_.last_generation = a.generation;
    if (!queue_.empty()) {
      // The thread is still scoring an older aggregate: the waiting one is superseded. Its line
      // comes from the evaluator's thread, after the one it is scoring (generation order).
      skipped_.push_back(std::move(queue_.front()));
      skipped_.back().params.clear();
      queue_.pop_front();
    }
    queue_.push_back(std::move(a));
  }
  cv_.notify_all();
}

void evaluator::emit_skipped() {
  // Called with mu_ held. Every skipped aggregate is newer than the last one emitted and older
  // than the queued one.
  for (const aggregate& s : skipped_) emit(s, std::nullopt);
  skipped_.clear();
}

void evaluator::emit(const aggregate& a, const std::optional<score>& s) {
  // Called with mu_ held.
  hist_.points.push_back(
      {a.generation, a.seconds, s ? std::optional<double>(s->value) : std::nullopt});
  try {
    line_(aggregation_json(a, s));
  } catch (const std::exception& e) {
    if (failure_.empty())
      failure_ = fmt::format("reporting aggregate {}: {}", a.generation, e.what());
  }
}

void evaluator::run() {
  for (;;) {
    aggregate a;
    {
      std::unique_lock<std::mutex> lk(mu_);
      cv_.wait(lk, [&] { return closing_ || !queue_.empty(); });
      emit_skipped();
      if (queue_.empty()) return;
      a = std::move(queue_.front());
      queue_.pop_front();
    }
    std::optional<score> s;
    try {
      s = validate_(a.params);
    } catch (const std::exception& e) {
      std::lock_guard<std::mutex> lk(mu_);
      if (failure_.empty()) {
        failure_ = fmt::format("evaluating aggregate {}: {}", a.generation, e.what());
      }
      emit(a, std::nullopt);
      continue;
    }
    bool const better =
        std::isfinite(s->value) && (!hist_.best_generation || s->value > hist_.best_val);
    if (better && !best_path_.empty()) {
      // Written before the line that reports it, atomically (write_npy renames into place).
      try {
        std::int64_t const n = static_cast<std::int64_t>(a.params.size());
        write_npy(best_path_, std::span<const float>(a.params),
                  std::span<const std::int64_t>(&n, 1));
      } catch (const std::exception& e) {
        std::lock_guard<std::mutex> lk(mu_);
        if (failure_.empty()) failure_ = fmt::format("best checkpoint: {}", e.what());
      }
    }
    std::lock_guard<std::mutex> lk(mu_);
    if (better) {
      hist_.best_generation = a.generation;
      hist_.best_val = s->value;
      hist_.best_params = a.params;
    }
    emit(a, s);
  }
}

evaluation_history evaluator::finish() {
  {
    std::lock_guard<std::mutex> lk(mu_);
    closing_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  std::lock_guard<std::mutex> lk(mu_);
  if (!failure_.empty()) throw error(failure_);
  std::sort(hist_.points.begin(), hist_.points.end(),
            [](auto const& x, auto const& y) { return x.generation < y.generation; });
  return hist_;
}

}  // namespace coopgnn::tma
