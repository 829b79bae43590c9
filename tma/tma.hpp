// Time-based model aggregation (TMA) across machines (docs/design.md section 7.2;
// Zhu et al. 2023, "Simplifying Distributed Neural Network Training on Massive Graphs: Randomized
// Partitions Improve Model Aggregation", sections 3-4). The pieces every rank shares and that
// need no MPI: the schemes, the fixed-size control and progress messages, the server's clock
// decision, and the interfaces through which the MPI engine (tma/engine.hpp) drives a
// trainer and the server's LLCG corrector without knowing what they train.
//
// World: rank 0 is the server (timer, averaging root, LLCG corrector, evaluator), ranks 1..M the
// trainers. Parameters travel as one contiguous float32 host buffer in the model's params()
// order; optimizer state never leaves its rank (as in the paper's code, amazon-science/random-tma).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "runtime/graph/partition.hpp"

namespace coopgnn::tma {

/// The training schemes of the paper's comparison (Zhu et al. 2023, section 4.1).
enum class scheme {
  randomtma,  ///< random vertex partition, periodic parameter averaging
  supertma,   ///< METIS mini-clusters dealt randomly to the trainers, averaging
  psgd_pa,    ///< METIS with one part per trainer (edge-balanced), averaging
  llcg,       ///< PSGD-PA's parts, averaging, then S server correction steps on the full graph
  ggs,        ///< no partition: synchronous data parallelism, a gradient all-reduce every step
};

/// Parses "randomtma", "supertma", "psgd-pa", "llcg" or "ggs".
/// @throws logic_error "--scheme ..." listing the choices otherwise.
scheme parse_scheme(const std::string& s);
std::string to_string(scheme s);

/// The partitioner a scheme trains on: random (randomtma), super (supertma), metis (psgd-pa and
/// llcg); empty for ggs (every trainer holds the whole graph).
std::optional<partition_scheme> partition_of(scheme s);

/// What the server tells every rank with one control broadcast.
enum class command : std::uint32_t {
  none = 0,     ///< nothing to do (decide() only; never sent)
  average = 1,  ///< finish the current step, join the averaging, continue
  stop = 2,     ///< finish the current step, join the final averaging, leave
};
std::string to_string(command c);

/// The control message: one MPI_Ibcast of exactly these 16 bytes from rank 0 per aggregation.
/// `generation` counts aggregations from 1; a rank that receives a generation other than the one
/// it expects stops with a protocol error (the reference's boolean flag could be seen twice and
/// deadlock; a counter cannot).
struct control_message {
  std::uint32_t generation = 0;
  std::uint32_t cmd = 0;      ///< a command
  double server_seconds = 0;  ///< server's seconds since the start of training when sent
};
static_assert(sizeof(control_message) == 16);

/// Flags of a progress message.
enum progress_flags : std::uint32_t {
  progress_completed = 1u,  ///< the trainer's epoch budget is exhausted; it waits for STOP
  progress_final = 2u,      ///< the last message this trainer sends (after STOP)
};

/// What a trainer reports: as a heartbeat (point-to-point, tag heartbeat_tag, at most every
/// heartbeat period and before joining an aggregation) and gathered at every aggregation.
/// Fixed size, sent as bytes.
struct progress {
  std::int64_t steps = 0;        ///< training steps finished since the start
  double loss_sum = 0;           ///< sum of the step losses since the previous aggregation
  std::int64_t loss_steps = 0;   ///< how many steps loss_sum holds
  double seconds = 0;            ///< the trainer's seconds since the start of training
  std::uint32_t generation = 0;  ///< the last generation it joined (or is joining)
  std::uint32_t flags = 0;       ///< progress_flags
  std::int64_t epoch = 0;        ///< the epoch it is in (1-based)
  [[nodiscard]] double mean_loss() const;  ///< loss_sum / loss_steps; NaN without steps
};

/// The server's clock (wall-clock seconds; Zhu et al. 2023 section 3.3: aggregation on a time
/// interval, not a step count).
struct schedule {
  double interval = 120;           ///< seconds between aggregations (> 0)
  double time_limit = 3600;        ///< seconds of training before STOP (> 0)
  double heartbeat_timeout = 300;  ///< a trainer silent this long is reported and the job aborted
};

/// The server's decision at time `now` (seconds since the start of training), given the time of
/// the last aggregation (0 before the first): STOP when now >= time_limit or every trainer has
/// completed its epoch budget; AVERAGE when now - last >= interval; none otherwise. Pure.
/// @throws logic_error for a non-positive interval or time limit.
command decide(double now, double last_aggregation, const schedule& s, bool all_completed);

/// A trainer as the engine drives it: one local step at a time on this rank's data, parameters
/// read and written as one host float32 buffer [num_parameters()]. run_trainer calls it from the
/// thread that initialised MPI (the worker may start its own threads inside a call).
class trainer_worker {
 public:
  virtual ~trainer_worker() = default;
  [[nodiscard]] virtual std::int64_t num_parameters() const = 0;
  /// True when the epoch budget is exhausted (the engine then only joins aggregations).
  [[nodiscard]] virtual bool done() const = 0;
  /// The epoch the next step belongs to (1-based), for progress messages.
  [[nodiscard]] virtual std::int64_t epoch() const = 0;
  /// Averaging schemes: one training step with the optimizer update; returns its loss.
  virtual double step() = 0;
  /// GGS: one step's gradients without the update, this rank's share of the global batch
  /// normalised by the whole global batch; returns the share's loss (same normalisation). The
  /// engine sums the shares' gradients over the trainers (their sum is the global batch's
  /// gradient) and hands the sum to apply_gradients() on every trainer.
  virtual double compute_gradients() = 0;
  virtual void gradients(std::span<float> out) const = 0;
  virtual void apply_gradients(std::span<const float> grads) = 0;
  virtual void parameters(std::span<float> out) const = 0;
  virtual void set_parameters(std::span<const float> values) = 0;
};

/// The server's model work: its initial parameters (broadcast to every trainer so they start
/// identical) and, for LLCG, the correction of an average (Ramezani et al.
/// 2022, "Learn Locally, Correct Globally", as in the TMA paper's code: S steps of the server's
/// own optimizer on minibatches of the full training graph).
class server_worker {
 public:
  virtual ~server_worker() = default;
  [[nodiscard]] virtual std::int64_t num_parameters() const = 0;
  virtual void initial_parameters(std::span<float> out) = 0;
  /// LLCG: replaces `params` (the mean) by the corrected parameters. Called only for llcg.
  virtual void correct(std::span<float> params) = 0;
};

}  // namespace coopgnn::tma
