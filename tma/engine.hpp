// The MPI engine of time-based model aggregation (docs/design.md section 7.2;
// Zhu et al. 2023 section 3.3). Rank 0 runs run_server, ranks 1..M run_trainer; both
// drive the workers of tma/tma.hpp and never know what is trained. MPI is called only
// from the thread that created the mpi_session (MPI_THREAD_FUNNELED).
//
// Collective sequence (every rank issues the same collectives in the same order; all are
// nonblocking, completed by polling MPI_Test so the server keeps its clock and its heartbeat
// watch while it waits, and an idle rank does not spin a core):
//   GPUs (CUDA backend only, before the workers exist; assign_gpus): MPI_Comm_split_type
//                 (SHARED: the node), MPI_Comm_split of the node into its GPU-using ranks,
//                 MPI_Iallgather of their choices and device identities on that communicator.
//   setup:        MPI_Comm_dup(WORLD); MPI_Comm_split (the trainers' communicator, for GGS);
//                 Ibcast of the server's initial parameters (all start identical).
//   aggregation g (when the server decides, command AVERAGE or STOP):
//     1. Ibcast of the 16-byte control message {g, command, seconds} from rank 0. Trainers keep
//        this receive posted and test it after every step; they finish the step, then join.
//     2. Igather of every rank's progress message to rank 0.
//     3. Ireduce (SUM, float32) of the contributors' parameters to rank 0 (non-contributors and
//        the server add zeros); rank 0 divides by the number of contributors; LLCG: rank 0 runs
//        its correction on the mean.
//     4. Ibcast of the result from rank 0; every trainer sets it (optimizer state stays local).
//   STOP ends the loops after step 4; each trainer then sends a final progress message.
//   GGS adds, after every step on the trainers' communicator: Ireduce + Ibcast of the gradients
//   (their sum: each share is normalised by the global batch) and an Iallreduce of {loss,
//   control seen}; when any trainer saw the control message they
//   all join the aggregation after that same step, so the collectives stay matched.
// Deadlines: every wait for a collective or a message a rank has joined is bounded by
// engine_options::peer_timeout (then a message naming the rank and the collective, and
// MPI_Abort).
// Heartbeats: trainers Isend their progress (tag 7) at most every heartbeat period and before
// joining an aggregation; the server reports a trainer silent for longer than the heartbeat
// timeout that has not joined the current collective, and aborts the job (MPI_Abort) instead of
// waiting forever.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "runtime/core/device.hpp"
#include "tma/evaluator.hpp"
#include "tma/tma.hpp"

namespace coopgnn::tma {

/// Whether this build has MPI (CMake found it; tools/setup.sh installs Open MPI). Without it the
/// functions below throw coopgnn::error saying how to get it.
bool mpi_available();

/// MPI_Init_thread (MPI_THREAD_FUNNELED requested and checked) and MPI_Finalize in the
/// destructor. At most one per process.
class mpi_session {
 public:
  /// @param expected_size  the world size the run needs (1 + trainers); 0 = any.
  /// @param peer_timeout   seconds the collectives below wait for the other ranks before this
  ///                       rank prints which one it waited in and aborts the job (MPI_Abort,
  ///                       status 4); 0 = wait forever. >= 0.
  /// @throws error when MPI gives less than MPI_THREAD_FUNNELED, or when the world size differs
  ///         from expected_size (naming both, and the usual cause: a launcher without PMI starts
  ///         every process as a singleton, https://github.com/open-mpi/ompi/issues/13523).
  explicit mpi_session(int expected_size = 0, double peer_timeout = 300);
  ~mpi_session();
  mpi_session(const mpi_session&) = delete;
  mpi_session& operator=(const mpi_session&) = delete;
  [[nodiscard]] int rank() const { return rank_; }
  [[nodiscard]] int size() const { return size_; }
  /// This process's host name (MPI_Get_processor_name).
  [[nodiscard]] const std::string& host() const { return host_; }
  /// Every rank's host name, on every rank (collective: MPI_Allgather).
  [[nodiscard]] std::vector<std::string> hosts() const;
  /// Rank 0's `v` on every rank (collective: the length, then the values in chunks below 2^31).
  void broadcast(std::vector<std::int32_t>& v) const;
  /// Rank 0's `x` on every rank (collective).
  void broadcast(double& x) const;
  /// Every rank's `mine`, in rank order, on every rank (collective: MPI_Iallgather of the
  /// lengths, then MPI_Iallgatherv; each string below 2^31 bytes, their sum too).
  [[nodiscard]] std::vector<std::string> all_gather(const std::string& mine) const;
  /// Whether every rank passes `ok` (collective: MPI_Allreduce of a flag), so a rank that failed
  /// to set up lets every rank stop together instead of leaving the others in a collective.
  [[nodiscard]] bool all(bool ok) const;
  /// MPI_Abort(MPI_COMM_WORLD, code): ends every rank of the job.
  [[noreturn]] static void abort(int code);
  /// The peer timeout given at construction, seconds (0 = none).
  [[nodiscard]] double peer_timeout() const { return peer_timeout_; }

 private:
  double peer_timeout_ = 300;
  int rank_ = 0;
  int size_ = 1;
  std::string host_;
};

/// The CUDA devices one rank trains on (assign_gpus).
struct gpu_assignment {
  std::vector<int> devices;  ///< [n] ordinals in this rank's numbering (train_config::devices);
                             ///< empty when the rank uses no GPU or on error
  std::vector<device_identity> identities;  ///< [n] the devices' uuid, PCI bus id and name
  int node_index = -1;     ///< this rank among its node's GPU-using ranks (by world rank); -1: none
  int node_gpu_ranks = 0;  ///< GPU-using ranks on this rank's node (0 when this one uses none)
  std::string reason;      ///< how the devices were chosen (choose_rank_devices)
  std::string error;       ///< set when this rank has no valid choice, or when two GPU-using
                           ///< ranks of its node chose the same physical device (then the same
                           ///< message on every GPU-using rank of that node, naming the ranks,
                           ///< the device and the fixes)
  /// One line for the log: "CUDA devices [d,...] (uuid PCI bus id, ...): reason", or the error.
  [[nodiscard]] std::string describe() const;
  /// {"devices": [...], "uuids": [...], "pci_bus_ids": [...], "names": [...], "node_index",
  /// "node_gpu_ranks", "reason"} as a JSON text (the server's start record gathers them).
  [[nodiscard]] std::string json() const;
};

/// One GPU-using rank's choice as its node's ranks exchange it (assign_gpus).
struct rank_gpu_choice {
  int rank = 0;                                     ///< MPI_COMM_WORLD rank
  std::vector<int> devices;                         ///< [n] its ordinals (its own numbering)
  std::vector<std::string> uuids;                   ///< [n] device_identity::uuid of each
  std::vector<std::string> pci_bus_ids;             ///< [n]
  std::optional<std::string> cuda_visible_devices;  ///< its CUDA_VISIBLE_DEVICES, if set
};

/// Whether ranks of one node (`host`) chose the same physical GPU: empty when every uuid of
/// `node` belongs to one rank, else a message naming the first shared uuid (in uuid order), its
/// PCI bus id, every rank on it with its ordinal and CUDA_VISIBLE_DEVICES, and the fixes. Pure.
/// @throws logic_error when a choice's devices, uuids and pci_bus_ids differ in length.
std::string shared_gpu_error(const std::vector<rank_gpu_choice>& node, const std::string& host);

/// Chooses the CUDA devices of every GPU-using rank (the trainers; the server too when it trains,
/// LLCG's correction steps) so that no two ranks of a node share one. Collective over
/// MPI_COMM_WORLD: every rank calls it, `uses_gpus` or not. The node is
/// MPI_Comm_split_type(MPI_COMM_TYPE_SHARED); a GPU-using rank's index i among its node's L
/// GPU-using ranks (by world rank), n = ceil(num_pes / pes_per_gpu), the count V of devices it
/// sees (query_devices) and whether CUDA_VISIBLE_DEVICES is set give its devices
/// (choose_rank_devices); then the node's GPU-using ranks exchange their devices' uuids and any
/// uuid chosen by two ranks is an error on each of them (shared_gpu_error; this is what catches
/// one CUDA_VISIBLE_DEVICES set identically for every rank). Errors are returned, not thrown, so
/// the caller can stop every rank together (mpi_session::all); so are bad arguments (num_pes or
/// pes_per_gpu < 1) and failed CUDA queries. The server evaluates on the host (link_scorer,
/// runtime_server's initial model): it uses GPUs only when it trains (LLCG on --backend cuda).
/// @throws error when an MPI call fails.
gpu_assignment assign_gpus(const mpi_session& s, bool uses_gpus, int num_pes, int pes_per_gpu);

/// How the engine runs.
struct engine_options {
  scheme sch = scheme::randomtma;
  schedule clock;
  double heartbeat_period = 0.5;  ///< seconds between a trainer's heartbeats (at most)
  /// --peer-timeout: seconds any rank waits for one nonblocking collective or message (MPI has
  /// no timeouts: each is polled with MPI_Test against this deadline) before it prints
  /// "coopgnn tma rank R: <collective> did not complete within T s ..." and aborts the job
  /// (MPI_Abort, status 4), so a dead or hung peer ends the job non-zero instead of hanging it.
  /// 0 = wait forever. Trainers waiting for the server's next control message are not bounded
  /// (that wait is the schedule's); the server's watch over silent trainers is heartbeat_timeout.
  double peer_timeout = 300;
  /// Ranks whose parameters enter the mean (empty = every trainer). GGS: {1} (the trainers hold
  /// identical weights; one contribution divides exactly).
  std::vector<int> contributors;
  /// Server only: a line for the log (stderr) on events (a silent trainer, abort); must not throw.
  std::function<void(const std::string&)> log;
  /// Server only: called (on the MPI thread) right before MPI_Abort on a heartbeat timeout, with
  /// a JSON object {"event": "trainer_timeout", ...}, so the caller can flush what it reported.
  std::function<void(const std::string&)> on_fatal;
};

/// What the server saw.
struct server_result {
  std::int64_t aggregations = 0;
  std::int64_t bytes_aggregated = 0;     ///< parameter bytes reduced and broadcast: 2 M 4 n per
                                         ///< aggregation (M trainers, n parameters)
  std::vector<progress> final_progress;  ///< [M] each trainer's final message
  double seconds = 0;                    ///< server's seconds from the start of training to STOP
};

/// What a trainer did.
struct trainer_result {
  std::int64_t steps = 0;
  std::uint32_t generations = 0;  ///< aggregations joined
};

/// Rank 0. Broadcasts server.initial_parameters(), then runs the clock: AVERAGE every
/// clock.interval seconds, STOP at clock.time_limit or when every trainer has completed; each
/// aggregate goes to `on_aggregate` (moved) right after step 4, on this thread (hand it to an
/// evaluator; do not block). Returns after every trainer's final message.
/// @throws error on a protocol violation; calls on_fatal then MPI_Abort on a heartbeat timeout;
///         throws error("terminated by signal N") when SIGTERM/SIGINT arrives (the launcher ends
///         the job after a rank failed), so the caller can flush its output first.
server_result run_server(const mpi_session& s, server_worker& server, const engine_options& opt,
                         const std::function<void(aggregate)>& on_aggregate);

/// Ranks 1..M. Receives the initial parameters, trains step by step (averaging schemes: step();
/// GGS: compute_gradients + all-reduce + apply_gradients), joins every aggregation the server
/// starts and returns after STOP.
/// @throws error on a protocol violation (a generation other than the expected one).
trainer_result run_trainer(const mpi_session& s, trainer_worker& worker, const engine_options& opt);

}  // namespace coopgnn::tma
