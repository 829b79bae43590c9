// Model selection over a run's epochs (--select-best; docs/usage.md "Model selection"): the
// epoch whose test metric a run reports and whose parameters --save-model writes.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <vector>

#include "runtime/core/matrix.hpp"
#include "pipeline/config.hpp"

namespace coopgnn {

/// Chooses a run's epoch from its epoch reports, in epoch order. Rule val: among the epochs
/// whose validation metric is finite (evaluated; --eval-every), the one of highest validation
/// metric (every selection metric is higher-is-better: accuracy, Macro-F1, ROC-AUC, MRR,
/// Recall@K), the earlier one on ties (strictly greater replaces); when no offered epoch has one,
/// the last offered epoch, with model_selection::note saying so. Rule last: the last offered
/// epoch. Holds the selected epoch's parameters when the caller keeps them (keep()), so that
/// --save-model writes that epoch's model and a checkpoint carries it (to_json / from_json).
/// Host memory only; not thread-safe.
class model_selector {
 public:
  explicit model_selector(select_best_kind rule) { sel_.rule = rule; }

  /// Considers the finished epoch `r` (r.epoch >= 1, offered in increasing epoch order).
  /// @returns true when `r` is now the selected epoch and its parameters are worth keeping
  ///          (rule val and a finite validation metric): the caller then calls keep() with the
  ///          parameters the trainer holds after that epoch.
  bool offer(const epoch_report& r);

  /// Stores the parameters of the epoch offer() just selected: `params` [num_parameters]
  /// float32 (params() order) and `embeddings` [|V|, D] (empty without learnable embeddings).
  void keep(std::vector<float> params, matrix<float> embeddings);

  /// The selected epoch so far (epoch 0 before any offer). Rule val without any finite
  /// validation metric: the last offered epoch and a note.
  [[nodiscard]] model_selection selected() const;

  /// The kept parameters of the selected epoch, or nullptr when none are kept (rule last, a
  /// caller that keeps none, or a selected epoch without a validation metric): the trainer's
  /// current parameters are then the ones to save.
  [[nodiscard]] const std::vector<float>* params() const {
    return has_params_ ? &params_ : nullptr;
  }
  /// The kept embedding table ([|V|, D]; 0 rows without learnable embeddings or params()).
  [[nodiscard]] const matrix<float>& embeddings() const { return emb_; }

  /// The state a checkpoint carries (rule val): the selected epoch and its metrics as JSON
  /// (numbers, NaN as null), whether parameters are held; the arrays themselves go into the
  /// checkpoint's selected_params / selected_embeddings.
  [[nodiscard]] nlohmann::json to_json() const;
  /// Restores what to_json wrote, with the arrays a checkpoint read back.
  /// @throws io_error naming `file` and the key that is missing or of the wrong type, or when
  ///         the state says parameters are held and `params` is empty.
  void restore(const nlohmann::json& j, std::vector<float> params, matrix<float> embeddings,
               const std::filesystem::path& file);
  /// Sets the note of a selection that could not see every epoch (a resume from a checkpoint
  /// without the selection state).
  void set_note(std::string note) { note_ = std::move(note); }

 private:
  model_selection sel_;   // the best epoch with a finite validation metric (rule val)
  model_selection last_;  // the last offered epoch
  std::string note_;
  std::vector<float> params_;
  matrix<float> emb_;
  bool has_params_ = false;
};

}  // namespace coopgnn
