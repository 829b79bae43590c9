// The server's evaluator (Zhu et al. 2023 section 4.1; docs/design.md 7.2): every aggregate is
// scored on the validation set on a thread of its own, from a snapshot, so the server's timer
// and the MPI protocol never wait for an evaluation; the best aggregate is checkpointed
// atomically and, with the last one, tested at the end. No MPI here.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "tma/tma.hpp"

namespace coopgnn::tma {

/// One aggregate as the server holds it after an averaging.
struct aggregate {
  std::uint32_t generation = 0;
  double seconds = 0;  ///< server's seconds since the start of training at the averaging
  command cmd = command::average;
  std::vector<float> params;       ///< [num_parameters] the averaged (LLCG: corrected) weights
  std::vector<progress> trainers;  ///< [M] as gathered at this aggregation
};

/// A model's score on one evaluation set.
struct score {
  std::string metric;  ///< e.g. "mrr"
  double value = 0;    ///< the model-selection value (higher is better)
  std::vector<std::pair<std::string, double>> all;  ///< every metric computed
};

/// What the evaluator knows at the end.
struct evaluation_history {
  struct point {
    std::uint32_t generation = 0;
    double seconds = 0;
    std::optional<double> val;  ///< empty when the aggregate was superseded before it was scored
  };
  std::vector<point> points;  ///< in generation order
  std::optional<std::uint32_t> best_generation;
  double best_val = 0;
  std::vector<float> best_params;  ///< [num_parameters] of best_generation
  std::vector<float> last_params;  ///< the last aggregate submitted
  std::uint32_t last_generation = 0;
};

/// Scores aggregates on its own thread. submit() never blocks on scoring: when the thread is
/// busy, the newest aggregate waits and an older waiting one is superseded (reported with a null
/// validation value, as the reference skips evaluations that would delay the timer). Each
/// aggregate's JSON object (aggregation_json) goes to `line` from the evaluator's thread, in
/// generation order. A new best is written to `best_checkpoint` (float32 .npy [n], temporary
/// file then rename, so a reader or a crash never sees half a file) before its line is emitted.
class evaluator {
 public:
  using score_fn = std::function<score(std::span<const float>)>;
  using line_fn = std::function<void(const std::string& json_line)>;
  /// @param validate       scores parameters on the validation set (called on the evaluator's
  ///                       thread only; must not call MPI)
  /// @param line           receives one JSON object (no newline) per aggregate; must not throw
  /// @param best_checkpoint the .npy the best aggregate is written to; empty path = none
  evaluator(score_fn validate, line_fn line, std::filesystem::path best_checkpoint);
  ~evaluator();
  evaluator(const evaluator&) = delete;
  evaluator& operator=(const evaluator&) = delete;

  /// Hands an aggregate over (moved); returns at once.
  void submit(aggregate a);
  /// Waits until every submitted aggregate was scored or superseded, stops the thread and
  /// returns the history. Rethrows an exception the scoring threw (as coopgnn::error naming the
  /// generation).
  evaluation_history finish();

 private:
  void run();
  void emit(const aggregate& a, const std::optional<score>& s);
  void emit_skipped();
  score_fn validate_;
  line_fn line_;
  std::filesystem::path best_path_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<aggregate> queue_;    // at most one waiting
  std::deque<aggregate> skipped_;  // superseded before they were scored (no params)
  bool closing_ = false;
  std::string failure_;
  evaluation_history hist_;
  std::thread thread_;
};

/// Every metric of `s` as a JSON object {name: value or null (non-finite)}.
nlohmann::json metrics_json(const score& s);

/// The JSON object of one aggregation: {"event": "aggregation", "generation", "seconds",
/// "command", "steps": [M], "train_loss": [M] (mean step loss since the previous aggregation,
/// null without steps), "epoch": [M], "val": {metric: value...} or null, "val_metric": value or
/// null, "evaluated": bool}.
std::string aggregation_json(const aggregate& a, const std::optional<score>& s);

/// The first time the validation value is within `tolerance` (relative; 1% in Zhu et al. 2023
/// section 4.1) of its maximum over `points`; NaN when nothing was scored.
double convergence_seconds(const std::vector<evaluation_history::point>& points,
                           double tolerance = 0.01);

}  // namespace coopgnn::tma
