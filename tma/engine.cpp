#include "tma/engine.hpp"

#include <fmt/ranges.h>

#include <cstdlib>
#include <map>
#include <nlohmann/json.hpp>

#include "runtime/core/error.hpp"
#include "runtime/core/log.hpp"

#if COOPGNN_WITH_MPI
#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <limits>
#include <thread>

#include "runtime/comm/fault_injection.hpp"
#include "runtime/core/signals.hpp"
#include "runtime/core/timer.hpp"
#endif

namespace coopgnn::tma {

std::string gpu_assignment::describe() const {
  if (!error.empty()) return error;
  if (devices.empty()) return "no CUDA device (this rank trains on none)";
  std::vector<std::string> ids;
  for (auto const& id : identities) ids.push_back(fmt::format("{} {}", id.uuid, id.pci_bus_id));
  return fmt::format("CUDA device{} [{}] ({}): {}", devices.size() == 1 ? "" : "s",
                     fmt::join(devices, ","), fmt::join(ids, ", "), reason);
}

std::string gpu_assignment::json() const {
  nlohmann::json j;
  j["devices"] = devices;
  std::vector<std::string> uuids, buses, names;
  for (auto const& id : identities) {
    uuids.push_back(id.uuid);
    buses.push_back(id.pci_bus_id);
    names.push_back(id.name);
  }
  j["uuids"] = uuids;
  j["pci_bus_ids"] = buses;
  j["names"] = names;
  j["node_index"] = node_index;
  j["node_gpu_ranks"] = node_gpu_ranks;
  j["reason"] = reason;
  if (!error.empty()) j["error"] = error;
  return j.dump();
}

std::string shared_gpu_error(const std::vector<rank_gpu_choice>& node, const std::string& host) {
  struct user {
    int rank, device;
    std::string bus, cvd;
  };
  std::map<std::string, std::vector<user>> by_uuid;  // ordered: the same report on every rank
  for (auto const& c : node) {
    COOPGNN_EXPECTS(c.uuids.size() == c.devices.size() && c.pci_bus_ids.size() == c.devices.size(),
                    "shared_gpu_error: rank {} has {} devices, {} uuids and {} PCI bus ids", c.rank,
                    c.devices.size(), c.uuids.size(), c.pci_bus_ids.size());
    for (std::size_t k = 0; k < c.uuids.size(); ++k) {
      by_uuid[c.uuids[k]].push_back(
          user{c.rank, c.devices[k], c.pci_bus_ids[k], c.cuda_visible_devices.value_or("unset")});
    }
  }
  for (auto const& [uuid, users] : by_uuid) {
    if (users.size() < 2) continue;
    std::vector<std::string> who;
    for (auto const& u : users) {
      who.push_back(
          fmt::format("rank {} (its device {}, CUDA_VISIBLE_DEVICES {})", u.rank, u.device, u.cvd));
    }
    return fmt::format(
        "ranks on host {} would share the GPU {} (PCI {}): {}. Ranks must not share a GPU: "
        "leave CUDA_VISIBLE_DEVICES unset (the node's GPU ranks then take disjoint blocks of its "
        "devices), give each rank its own devices (srun --gpus-per-task=N, or a per-rank "
        "CUDA_VISIBLE_DEVICES), or start fewer ranks per node",
        host, uuid, users.front().bus, fmt::join(who, ", "));
  }
  return {};
}

#if !COOPGNN_WITH_MPI

bool mpi_available() { return false; }

namespace {
[[noreturn]] void no_mpi() {
  throw error(
      "coopgnn tma needs MPI, which this build does not have: install Open MPI "
      "(tools/setup.sh, or apt-get install libopenmpi-dev openmpi-bin) and reconfigure "
      "(cmake --preset default)");
}
}  // namespace

mpi_session::mpi_session(int, double) { no_mpi(); }
mpi_session::~mpi_session() = default;
std::vector<std::string> mpi_session::hosts() const { no_mpi(); }
std::vector<std::string> mpi_session::all_gather(const std::string&) const { no_mpi(); }
gpu_assignment assign_gpus(const mpi_session&, bool, int, int) { no_mpi(); }
void mpi_session::broadcast(std::vector<std::int32_t>&) const { no_mpi(); }
void mpi_session::broadcast(double&) const { no_mpi(); }
bool mpi_session::all(bool) const { no_mpi(); }
void mpi_session::abort(int code) { std::exit(code); }
server_result run_server(const mpi_session&, server_worker&, const engine_options&,
                         const std::function<void(aggregate)>&) {
  no_mpi();
}
trainer_result run_trainer(const mpi_session&, trainer_worker&, const engine_options&) { no_mpi(); }

#else

bool mpi_available() { return true; }

namespace {

constexpr int heartbeat_tag = 7;

void check(int rc, const char* what) {
  if (rc == MPI_SUCCESS) return;
  char msg[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, msg, &len);
  throw error(fmt::format("MPI {} failed: {}", what, std::string(msg, static_cast<size_t>(len))));
}

int count_of(std::size_t n, const char* what) {
  COOPGNN_EXPECTS(n <= static_cast<std::size_t>(std::numeric_limits<int>::max()),
                  "{}: {} elements exceed one MPI message's int count", what, n);
  return static_cast<int>(n);
}

using clock_type = std::chrono::steady_clock;
double since(clock_type::time_point t0) {
  return std::chrono::duration<double>(clock_type::now() - t0).count();
}

/// The limit of one wait and who waits, for the message when it passes.
struct deadline {
  double seconds = 0;                   ///< 0 = none (--peer-timeout 0)
  int rank = 0;                         ///< the waiting rank (MPI_COMM_WORLD)
  const engine_options* opt = nullptr;  ///< the server's: on_fatal hears of the timeout
};

/// A wait passed its deadline: says where on stderr (and to the server's on_fatal as a JSON
/// event), then ends the job with status 4.
[[noreturn]] void peer_timed_out(const deadline& d, const char* what, double waited) {
  auto const msg = fmt::format(
      "coopgnn tma rank {}: {} did not complete within {:g} s (--peer-timeout; waited {:.1f} "
      "s): a peer rank is dead or hung; aborting the job",
      d.rank, what, d.seconds, waited);
  log::error("{}", msg);
  if (d.opt != nullptr && d.opt->on_fatal) {
    nlohmann::json j;
    j["event"] = "peer_timeout";
    j["rank"] = d.rank;
    j["collective"] = what;
    j["peer_timeout"] = d.seconds;
    d.opt->on_fatal(j.dump());
  }
  mpi_session::abort(4);
}

/// Completes `r` by polling MPI_Test (an idle rank sleeps instead of spinning a core), calling
/// poll() between tests; past the deadline `d` (from the first test), peer_timed_out(what).
template <typename F>
void wait_polling(MPI_Request& r, const deadline& d, const char* what, F&& poll) {
  auto const t0 = clock_type::now();
  for (int done = 0;;) {
    check(MPI_Test(&r, &done, MPI_STATUS_IGNORE), "MPI_Test");
    if (done) return;
    poll();
    if (d.seconds > 0) {
      double const waited = since(t0);
      if (waited > d.seconds) peer_timed_out(d, what, waited);
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}
void wait_quiet(MPI_Request& r, const deadline& d, const char* what) {
  wait_polling(r, d, what, [] {});
}

/// The communicators and buffers both roles share.
struct channel {
  MPI_Comm world = MPI_COMM_NULL;
  MPI_Comm trainers = MPI_COMM_NULL;  // ranks 1..M; MPI_COMM_NULL on the server
  int rank = 0;
  int size = 1;
  int num_trainers() const { return size - 1; }
  channel() {
    check(MPI_Comm_dup(MPI_COMM_WORLD, &world), "MPI_Comm_dup");
    MPI_Comm_rank(world, &rank);
    MPI_Comm_size(world, &size);
    COOPGNN_EXPECTS(size >= 2, "tma needs at least 2 ranks (1 server + trainers), got {}", size);
    check(MPI_Comm_split(world, rank == 0 ? MPI_UNDEFINED : 1, rank, &trainers), "MPI_Comm_split");
  }
  ~channel() {
    if (trainers != MPI_COMM_NULL) MPI_Comm_free(&trainers);
    if (world != MPI_COMM_NULL) MPI_Comm_free(&world);
  }
  channel(const channel&) = delete;
  channel& operator=(const channel&) = delete;
};

bool contributes(const engine_options& opt, int rank) {
  return opt.contributors.empty() || std::find(opt.contributors.begin(), opt.contributors.end(),
                                               rank) != opt.contributors.end();
}

int contributor_count(const engine_options& opt, int num_trainers) {
  if (opt.contributors.empty()) return num_trainers;
  int c = 0;
  for (int r : opt.contributors) {
    COOPGNN_EXPECTS(r >= 1 && r <= num_trainers, "tma contributor rank {} outside 1..{}", r,
                    num_trainers);
    ++c;
  }
  return c;
}

}  // namespace

mpi_session::mpi_session(int expected_size, double peer_timeout) : peer_timeout_(peer_timeout) {
  COOPGNN_EXPECTS(peer_timeout >= 0, "--peer-timeout {} must be >= 0 seconds (0 = none)",
                  peer_timeout);
  int provided = 0;
  check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  char name[MPI_MAX_PROCESSOR_NAME];
  int len = 0;
  MPI_Get_processor_name(name, &len);
  host_.assign(name, static_cast<std::size_t>(len));
  if (provided < MPI_THREAD_FUNNELED) {
    MPI_Finalize();
    throw error(fmt::format(
        "MPI provides thread level {} but coopgnn tma needs MPI_THREAD_FUNNELED (PE threads run "
        "beside the MPI thread)",
        provided));
  }
  if (expected_size > 0 && size_ != expected_size) {
    int const got = size_;
    MPI_Finalize();
    throw error(fmt::format(
        "this run needs {} MPI ranks (1 server + {} trainers) but MPI reports {}. Start it with "
        "`mpirun -np {} coopgnn tma ...` (or srun --mpi=pmix -n {}); a world of 1 usually means "
        "the process was started without mpirun, or by a launcher without PMI support, which "
        "starts every process as a singleton",
        expected_size, expected_size - 1, got, expected_size, expected_size));
  }
  // SIGTERM/SIGINT (mpirun's way of ending the job when a rank failed, or on Ctrl-C) only set a
  // flag on every rank: the server sees it, writes its last line and aborts the job. Trainers
  // must stay up meanwhile: Open MPI's TCP transport kills the server outright when a peer's
  // connection drops, before it could report (tried: with trainers ending at once, the server
  // never wrote its line). mpirun's SIGKILL ends any rank that is left.
  signals::install_stop_handlers(signals::on_second_signal::record);
}

mpi_session::~mpi_session() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}

std::vector<std::string> mpi_session::hosts() const {
  std::vector<char> mine(MPI_MAX_PROCESSOR_NAME, '\0');
  std::memcpy(mine.data(), host_.data(), std::min<std::size_t>(host_.size(), mine.size() - 1));
  std::vector<char> all(mine.size() * static_cast<std::size_t>(size_));
  MPI_Request req = MPI_REQUEST_NULL;
  check(MPI_Iallgather(mine.data(), MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all.data(),
                       MPI_MAX_PROCESSOR_NAME, MPI_CHAR, MPI_COMM_WORLD, &req),
        "MPI_Iallgather");
  wait_quiet(req, deadline{peer_timeout_, rank_}, "MPI_Iallgather of the host names (setup)");
  std::vector<std::string> out;
  for (int r = 0; r < size_; ++r) out.emplace_back(all.data() + r * MPI_MAX_PROCESSOR_NAME);
  return out;
}

namespace {

/// Every rank of `comm`'s `mine`, in rank order (MPI_Iallgather of the lengths, then
/// MPI_Iallgatherv), each wait bounded by `d`.
std::vector<std::string> allgather_strings(MPI_Comm comm, const std::string& mine,
                                           const deadline& d, const char* what_lengths,
                                           const char* what_bytes) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  int const len = count_of(mine.size(), what_bytes);
  std::vector<int> lens(static_cast<std::size_t>(size));
  MPI_Request r = MPI_REQUEST_NULL;
  check(MPI_Iallgather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, comm, &r), "MPI_Iallgather");
  wait_quiet(r, d, what_lengths);
  std::vector<int> displs(static_cast<std::size_t>(size));
  std::int64_t total = 0;
  for (std::size_t i = 0; i < lens.size(); ++i) {
    displs[i] = count_of(static_cast<std::size_t>(total), what_bytes);
    total += lens[i];
  }
  std::vector<char> all(
      static_cast<std::size_t>(count_of(static_cast<std::size_t>(total), what_bytes)));
  check(MPI_Iallgatherv(mine.data(), len, MPI_CHAR, all.data(), lens.data(), displs.data(),
                        MPI_CHAR, comm, &r),
        "MPI_Iallgatherv");
  wait_quiet(r, d, what_bytes);
  std::vector<std::string> out;
  for (std::size_t i = 0; i < lens.size(); ++i) {
    out.emplace_back(all.data() + displs[i], static_cast<std::size_t>(lens[i]));
  }
  return out;
}

/// A communicator freed when it goes out of scope.
struct owned_comm {
  MPI_Comm c = MPI_COMM_NULL;
  owned_comm() = default;
  owned_comm(const owned_comm&) = delete;
  owned_comm& operator=(const owned_comm&) = delete;
  ~owned_comm() {
    if (c != MPI_COMM_NULL) MPI_Comm_free(&c);
  }
};

}  // namespace

std::vector<std::string> mpi_session::all_gather(const std::string& mine) const {
  return allgather_strings(MPI_COMM_WORLD, mine, deadline{peer_timeout_, rank_},
                           "MPI_Iallgather of the string lengths (setup)",
                           "MPI_Iallgatherv of the strings (setup)");
}

gpu_assignment assign_gpus(const mpi_session& s, bool uses_gpus, int num_pes, int pes_per_gpu) {
  int const rank = s.rank();
  owned_comm node, gpus;
  check(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node.c),
        "MPI_Comm_split_type");
  check(MPI_Comm_split(node.c, uses_gpus ? 0 : MPI_UNDEFINED, rank, &gpus.c), "MPI_Comm_split");
  gpu_assignment a;
  if (!uses_gpus) return a;
  MPI_Comm_rank(gpus.c, &a.node_index);
  MPI_Comm_size(gpus.c, &a.node_gpu_ranks);
  const char* const cvd = std::getenv("CUDA_VISIBLE_DEVICES");
  try {
    auto const info = query_devices();
    if (info.count == 0) {
      a.error = fmt::format("--backend cuda: no CUDA device ({})", info.reason);
    } else {
      auto const choice = choose_rank_devices(a.node_index, a.node_gpu_ranks, num_pes, pes_per_gpu,
                                              info.count, cvd != nullptr);
      if (choice.ok()) {
        a.devices = choice.devices;
        a.reason = choice.reason;
        for (int d : a.devices) a.identities.push_back(query_device_identity(d));
      } else {
        a.error = choice.error;
      }
    }
  } catch (const std::exception& e) {
    // Not thrown: the other ranks are about to wait for this one in the exchange below.
    a.error = fmt::format("choosing the CUDA devices: {}", e.what());
  }
  if (!a.error.empty()) {
    a.devices.clear();
    a.identities.clear();
  }
  // Every GPU-using rank of the node learns every other's devices and checks them all, so each
  // rank involved in a conflict reports it (the same message).
  nlohmann::json mine;
  mine["rank"] = rank;
  mine["cuda_visible_devices"] = cvd != nullptr ? nlohmann::json(cvd) : nlohmann::json(nullptr);
  mine["devices"] = a.devices;
  std::vector<std::string> uuids, buses;
  for (auto const& id : a.identities) {
    uuids.push_back(id.uuid);
    buses.push_back(id.pci_bus_id);
  }
  mine["uuids"] = uuids;
  mine["pci_bus_ids"] = buses;
  auto const all =
      allgather_strings(gpus.c, mine.dump(), deadline{s.peer_timeout(), rank},
                        "MPI_Iallgather of the GPU choices' lengths (setup, the node's GPU ranks)",
                        "MPI_Iallgatherv of the GPU choices (setup, the node's GPU ranks)");
  std::vector<rank_gpu_choice> choices;
  for (auto const& text : all) {
    auto const j = nlohmann::json::parse(text);
    rank_gpu_choice c;
    c.rank = j["rank"].get<int>();
    c.devices = j["devices"].get<std::vector<int>>();
    c.uuids = j["uuids"].get<std::vector<std::string>>();
    c.pci_bus_ids = j["pci_bus_ids"].get<std::vector<std::string>>();
    if (!j["cuda_visible_devices"].is_null()) {
      c.cuda_visible_devices = j["cuda_visible_devices"].get<std::string>();
    }
    choices.push_back(std::move(c));
  }
  if (std::string const shared = shared_gpu_error(choices, s.host()); !shared.empty()) {
    a.error = shared;
    a.devices.clear();
    a.identities.clear();
  }
  return a;
}

void mpi_session::broadcast(std::vector<std::int32_t>& v) const {
  deadline const d{peer_timeout_, rank_};
  auto n = static_cast<std::int64_t>(v.size());
  MPI_Request r = MPI_REQUEST_NULL;
  check(MPI_Ibcast(&n, 1, MPI_INT64_T, 0, MPI_COMM_WORLD, &r), "MPI_Ibcast");
  wait_quiet(r, d, "MPI_Ibcast of a setup vector's length (setup, e.g. the partition)");
  v.resize(static_cast<std::size_t>(n));
  constexpr std::int64_t chunk = std::int64_t{1} << 30;
  for (std::int64_t off = 0; off < n; off += chunk) {
    int const c = static_cast<int>(std::min(chunk, n - off));
    check(MPI_Ibcast(v.data() + off, c, MPI_INT32_T, 0, MPI_COMM_WORLD, &r), "MPI_Ibcast");
    wait_quiet(r, d, "MPI_Ibcast of a setup vector (setup)");
  }
}

void mpi_session::broadcast(double& x) const {
  MPI_Request r = MPI_REQUEST_NULL;
  check(MPI_Ibcast(&x, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD, &r), "MPI_Ibcast");
  wait_quiet(r, deadline{peer_timeout_, rank_}, "MPI_Ibcast of a setup value (setup)");
}

bool mpi_session::all(bool ok) const {
  int mine = ok ? 1 : 0, every = 0;
  MPI_Request r = MPI_REQUEST_NULL;
  check(MPI_Iallreduce(&mine, &every, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD, &r), "MPI_Iallreduce");
  // Ranks meet here after their setup (reading, partitioning): its length counts too.
  wait_quiet(r, deadline{peer_timeout_, rank_},
             "MPI_Iallreduce of the setup status (every rank's setup: reading the dataset, "
             "partitioning on rank 0; raise --peer-timeout if it takes longer)");
  return every == 1;
}

void mpi_session::abort(int code) {
  MPI_Abort(MPI_COMM_WORLD, code);
  std::exit(code);
}

// ------------------------------------------------------------------------------------------------
// Trainer
// ------------------------------------------------------------------------------------------------

namespace {

/// One heartbeat in flight at a time.
class heartbeat_sender {
 public:
  heartbeat_sender(MPI_Comm c, const deadline& d) : comm_(c), d_(d) {}
  ~heartbeat_sender() {
    if (req_ != MPI_REQUEST_NULL) {
      MPI_Cancel(&req_);
      MPI_Request_free(&req_);
    }
  }
  /// Sends `p` unless the previous message is still in flight (then skips; force waits).
  void send(const progress& p, bool force) {
    if (req_ != MPI_REQUEST_NULL) {
      int done = 0;
      check(MPI_Test(&req_, &done, MPI_STATUS_IGNORE), "MPI_Test");
      if (!done) {
        if (!force) return;
        wait_quiet(req_, d_, "MPI_Isend of a heartbeat to the server");
      }
    }
    buf_ = p;
    check(MPI_Isend(&buf_, sizeof(progress), MPI_BYTE, 0, heartbeat_tag, comm_, &req_),
          "MPI_Isend");
  }
  void flush() {
    if (req_ != MPI_REQUEST_NULL) wait_quiet(req_, d_, "MPI_Isend of a heartbeat to the server");
  }

 private:
  MPI_Comm comm_;
  deadline d_;
  MPI_Request req_ = MPI_REQUEST_NULL;
  progress buf_;
};

/// Steps 2-4 of an aggregation, shared by both roles. `params`: a trainer's weights in, the
/// result out; on the server the result (zeros in).
void aggregation_collectives(const channel& ch, const progress& mine,
                             std::vector<progress>* gathered, std::vector<float>& params,
                             bool contribute, const deadline& d, const std::function<void()>& poll,
                             const std::function<void(std::vector<float>&)>& at_root) {
  MPI_Request r = MPI_REQUEST_NULL;
  progress send = mine;
  check(MPI_Igather(&send, sizeof(progress), MPI_BYTE,
                    gathered != nullptr ? gathered->data() : nullptr, sizeof(progress), MPI_BYTE, 0,
                    ch.world, &r),
        "MPI_Igather");
  wait_polling(r, d, "MPI_Igather of the progress messages (aggregation step 2)", poll);
  int const n = count_of(params.size(), "parameters");
  if (ch.rank == 0) {
    std::fill(params.begin(), params.end(), 0.0f);
    check(MPI_Ireduce(MPI_IN_PLACE, params.data(), n, MPI_FLOAT, MPI_SUM, 0, ch.world, &r),
          "MPI_Ireduce");
    wait_polling(r, d, "MPI_Ireduce of the parameters (aggregation step 3)", poll);
    at_root(params);
  } else {
    std::vector<float> zeros;
    const float* src = params.data();
    if (!contribute) {
      zeros.assign(params.size(), 0.0f);
      src = zeros.data();
    }
    check(MPI_Ireduce(src, nullptr, n, MPI_FLOAT, MPI_SUM, 0, ch.world, &r), "MPI_Ireduce");
    wait_polling(r, d, "MPI_Ireduce of the parameters (aggregation step 3)", poll);
  }
  check(MPI_Ibcast(params.data(), n, MPI_FLOAT, 0, ch.world, &r), "MPI_Ibcast");
  wait_polling(r, d, "MPI_Ibcast of the averaged parameters (aggregation step 4)", poll);
}

void check_generation(const control_message& m, std::uint32_t expected, int rank) {
  if (m.generation != expected || (m.cmd != static_cast<std::uint32_t>(command::average) &&
                                   m.cmd != static_cast<std::uint32_t>(command::stop))) {
    throw error(fmt::format(
        "tma protocol error on rank {}: control message generation {} command {}, expected "
        "generation {} with average or stop",
        rank, m.generation, m.cmd, expected));
  }
}

}  // namespace

trainer_result run_trainer(const mpi_session& s, trainer_worker& worker,
                           const engine_options& opt) {
  COOPGNN_EXPECTS(opt.peer_timeout >= 0, "--peer-timeout {} must be >= 0 seconds (0 = none)",
                  opt.peer_timeout);
  channel ch;
  COOPGNN_EXPECTS(ch.rank != 0, "run_trainer on rank 0 (the server)");
  deadline const dl{opt.peer_timeout, ch.rank};
  bool const ggs = opt.sch == scheme::ggs;
  auto const n = static_cast<std::size_t>(worker.num_parameters());
  std::vector<float> params(n);
  MPI_Request r = MPI_REQUEST_NULL;
  check(MPI_Ibcast(params.data(), count_of(n, "parameters"), MPI_FLOAT, 0, ch.world, &r),
        "MPI_Ibcast");
  wait_quiet(r, dl, "MPI_Ibcast of the initial parameters");
  worker.set_parameters(params);
  auto const t0 = clock_type::now();

  heartbeat_sender hb(ch.world, dl);
  progress prog;
  trainer_result res;
  std::uint32_t expected = 1;
  control_message ctrl;
  MPI_Request ctrl_req = MPI_REQUEST_NULL;
  auto post_control = [&] {
    check(MPI_Ibcast(&ctrl, sizeof(ctrl), MPI_BYTE, 0, ch.world, &ctrl_req), "MPI_Ibcast");
  };
  auto control_arrived = [&] {
    if (ctrl_req == MPI_REQUEST_NULL) return true;  // completed earlier (GGS)
    int done = 0;
    check(MPI_Test(&ctrl_req, &done, MPI_STATUS_IGNORE), "MPI_Test");
    return done != 0;
  };
  double last_beat = -1e300;
  auto beat = [&](bool force) {
    double const now = since(t0);
    if (!force && now - last_beat < opt.heartbeat_period) return;
    prog.seconds = now;
    prog.epoch = worker.epoch();
    prog.flags = worker.done() ? progress_completed : 0u;
    hb.send(prog, force);
    last_beat = now;
  };
  post_control();
  std::vector<float> grads(ggs ? n : 0);
  for (;;) {
    bool arrived = false;
    if (!worker.done()) {
      // Test-only (COOPGNN_FAULT_INJECT=rank:R,...): a stall sleeps until the job is killed.
      fault_injection::at_step(fault_injection::plan::target::rank, ch.rank, prog.steps);
      if (!ggs) {
        double const loss = worker.step();
        prog.loss_sum += loss;
        ++prog.loss_steps;
        ++prog.steps;
        arrived = control_arrived();
      } else {
        // Whether this trainer saw the control message goes into the step's reduction, so
        // every trainer joins the aggregation after the same step.
        double local[2] = {worker.compute_gradients(), control_arrived() ? 1.0 : 0.0};
        worker.gradients(grads);
        MPI_Request rq = MPI_REQUEST_NULL;
        int const nn = count_of(n, "gradients");
        int const trank = ch.rank - 1;  // rank in the trainers' communicator (split by rank)
        double sum[2] = {0, 0};
        check(MPI_Ireduce(trank == 0 ? MPI_IN_PLACE : grads.data(),
                          trank == 0 ? grads.data() : nullptr, nn, MPI_FLOAT, MPI_SUM, 0,
                          ch.trainers, &rq),
              "MPI_Ireduce");
        wait_quiet(rq, dl, "MPI_Ireduce of the gradients (GGS step)");
        check(MPI_Ibcast(grads.data(), nn, MPI_FLOAT, 0, ch.trainers, &rq), "MPI_Ibcast");
        wait_quiet(rq, dl, "MPI_Ibcast of the summed gradients (GGS step)");
        check(MPI_Iallreduce(local, sum, 2, MPI_DOUBLE, MPI_SUM, ch.trainers, &rq),
              "MPI_Iallreduce");
        wait_quiet(rq, dl, "MPI_Iallreduce of the loss and the control flag (GGS step)");
        worker.apply_gradients(grads);
        prog.loss_sum += sum[0];  // the shares' losses add up to the global batch's
        ++prog.loss_steps;
        ++prog.steps;
        arrived = sum[1] > 0;
        if (arrived && ctrl_req != MPI_REQUEST_NULL) {
          wait_quiet(ctrl_req, dl, "MPI_Ibcast of the control message (GGS)");
        }
      }
      beat(false);
    } else {
      beat(false);
      arrived = control_arrived();
      if (!arrived) std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    if (!arrived) continue;
    // Join aggregation `expected`.
    check_generation(ctrl, expected, ch.rank);
    prog.generation = expected;
    beat(true);  // "joined": the server does not count this trainer as silent while it waits
    worker.parameters(params);
    prog.seconds = since(t0);
    aggregation_collectives(
        ch, prog, nullptr, params, contributes(opt, ch.rank), dl, [] {},
        [](std::vector<float>&) {});
    worker.set_parameters(params);
    prog.loss_sum = 0;
    prog.loss_steps = 0;
    ++res.generations;
    if (ctrl.cmd == static_cast<std::uint32_t>(command::stop)) break;
    ++expected;
    post_control();
  }
  hb.flush();
  prog.seconds = since(t0);
  prog.flags |= progress_final;
  hb.send(prog, true);
  hb.flush();
  res.steps = prog.steps;
  (void)s;
  return res;
}

// ------------------------------------------------------------------------------------------------
// Server
// ------------------------------------------------------------------------------------------------

namespace {

/// The server's receive side of the heartbeats, and the watch over silent trainers.
class heartbeat_watch {
 public:
  heartbeat_watch(MPI_Comm c, int trainers, clock_type::time_point t0, double timeout,
                  const engine_options& opt)
      : comm_(c),
        t0_(t0),
        timeout_(timeout),
        opt_(opt),
        buf_(trainers),
        latest_(trainers),
        seen_(static_cast<std::size_t>(trainers), 0.0),
        final_(static_cast<std::size_t>(trainers), false),
        reqs_(static_cast<std::size_t>(trainers), MPI_REQUEST_NULL) {
    for (int t = 0; t < trainers; ++t) post(t);
  }
  ~heartbeat_watch() {
    for (auto& r : reqs_) {
      if (r != MPI_REQUEST_NULL) {
        MPI_Cancel(&r);
        MPI_Request_free(&r);
      }
    }
  }
  /// Receives what arrived; reports and aborts on a silent trainer that has not joined
  /// `generation`; throws on a signal.
  void poll(std::uint32_t generation) {
    for (std::size_t t = 0; t < reqs_.size(); ++t) {
      for (;;) {
        if (reqs_[t] == MPI_REQUEST_NULL) break;
        int done = 0;
        check(MPI_Test(&reqs_[t], &done, MPI_STATUS_IGNORE), "MPI_Test");
        if (!done) break;
        latest_[t] = buf_[t];
        seen_[t] = since(t0_);
        if ((buf_[t].flags & progress_final) != 0u) {
          final_[t] = true;
        } else {
          post(static_cast<int>(t));
        }
      }
    }
    if (int sig = signals::stop_signal(); sig != 0) {
      // The launcher ends every rank when one fails; the failed one stopped sending heartbeats.
      double const now = since(t0_);
      std::vector<std::string> ages;
      for (std::size_t t = 0; t < reqs_.size(); ++t) {
        ages.push_back(fmt::format("rank {} {:.1f} s ago after {} steps", t + 1, now - seen_[t],
                                   latest_[t].steps));
      }
      throw error(
          fmt::format("terminated by signal {} at {:.1f} s (mpirun ends every rank when "
                      "one fails; its message names the rank); last heartbeats: {}",
                      sig, now, fmt::join(ages, "; ")));
    }
    double const now = since(t0_);
    for (std::size_t t = 0; t < reqs_.size(); ++t) {
      if (final_[t] || (generation > 0 && latest_[t].generation >= generation)) continue;
      if (now - seen_[t] <= timeout_) continue;
      nlohmann::json j;
      j["event"] = "trainer_timeout";
      j["rank"] = t + 1;
      j["seconds"] = now;
      j["last_heartbeat_seconds"] = seen_[t];
      j["steps"] = latest_[t].steps;
      j["heartbeat_timeout"] = timeout_;
      j["waiting_for_generation"] = generation;
      if (opt_.log) {
        opt_.log(
            fmt::format("tma server: trainer rank {} sent no heartbeat for {:.1f} s (timeout "
                        "{:.0f} s; last at {:.1f} s after {} steps): aborting the job",
                        t + 1, now - seen_[t], timeout_, seen_[t], latest_[t].steps));
      }
      if (opt_.on_fatal) opt_.on_fatal(j.dump());
      mpi_session::abort(3);
    }
  }
  [[nodiscard]] bool all_completed() const {
    for (std::size_t t = 0; t < latest_.size(); ++t) {
      if ((latest_[t].flags & progress_completed) == 0u) return false;
    }
    return true;
  }
  [[nodiscard]] bool all_final() const {
    return std::all_of(final_.begin(), final_.end(), [](bool b) { return b; });
  }
  [[nodiscard]] const std::vector<progress>& latest() const { return latest_; }

 private:
  void post(int t) {
    check(MPI_Irecv(&buf_[static_cast<std::size_t>(t)], sizeof(progress), MPI_BYTE, t + 1,
                    heartbeat_tag, comm_, &reqs_[static_cast<std::size_t>(t)]),
          "MPI_Irecv");
  }
  MPI_Comm comm_;
  clock_type::time_point t0_;
  double timeout_;
  const engine_options& opt_;
  std::vector<progress> buf_, latest_;
  std::vector<double> seen_;
  std::vector<bool> final_;
  std::vector<MPI_Request> reqs_;
};

}  // namespace

server_result run_server(const mpi_session& s, server_worker& server, const engine_options& opt,
                         const std::function<void(aggregate)>& on_aggregate) {
  (void)decide(0, 0, opt.clock, false);  // validates the schedule before any collective
  COOPGNN_EXPECTS(opt.clock.heartbeat_timeout > 0, "--heartbeat-timeout must be > 0 seconds");
  COOPGNN_EXPECTS(opt.peer_timeout >= 0, "--peer-timeout {} must be >= 0 seconds (0 = none)",
                  opt.peer_timeout);
  channel ch;
  COOPGNN_EXPECTS(ch.rank == 0, "run_server on rank {} (the server is rank 0)", ch.rank);
  deadline const dl{opt.peer_timeout, 0, &opt};

  int const M = ch.num_trainers();
  int const C = contributor_count(opt, M);
  auto const n = static_cast<std::size_t>(server.num_parameters());
  std::vector<float> params(n);
  server.initial_parameters(params);
  MPI_Request r = MPI_REQUEST_NULL;
  check(MPI_Ibcast(params.data(), count_of(n, "parameters"), MPI_FLOAT, 0, ch.world, &r),
        "MPI_Ibcast");
  wait_quiet(r, dl, "MPI_Ibcast of the initial parameters");
  auto const t0 = clock_type::now();
  heartbeat_watch watch(ch.world, M, t0, opt.clock.heartbeat_timeout, opt);
  server_result res;
  std::uint32_t generation = 0;
  double last = 0;
  for (;;) {
    watch.poll(generation);
    double const now = since(t0);
    command const cmd = decide(now, last, opt.clock, watch.all_completed());
    if (cmd == command::none) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
      continue;
    }
    ++generation;
    control_message ctrl{generation, static_cast<std::uint32_t>(cmd), now};
    check(MPI_Ibcast(&ctrl, sizeof(ctrl), MPI_BYTE, 0, ch.world, &r), "MPI_Ibcast");
    auto poll = [&] { watch.poll(generation); };
    wait_polling(r, dl, "MPI_Ibcast of the control message (aggregation step 1)", poll);
    std::vector<progress> gathered(static_cast<std::size_t>(ch.size));
    progress mine;
    mine.generation = generation;
    aggregation_collectives(ch, mine, &gathered, params, false, dl, poll,
                            [&](std::vector<float>& sum) {
                              // Division, not a reciprocal: the correctly rounded mean.
                              for (float& v : sum) v /= static_cast<float>(C);
                              if (opt.sch == scheme::llcg) server.correct(sum);
                            });
    res.aggregations += 1;
    res.bytes_aggregated += 2 * static_cast<std::int64_t>(M) * 4 * static_cast<std::int64_t>(n);
    aggregate a;
    a.generation = generation;
    a.seconds = since(t0);
    a.cmd = cmd;
    a.params = params;
    a.trainers.assign(gathered.begin() + 1, gathered.end());
    last = a.seconds;
    on_aggregate(std::move(a));
    if (cmd == command::stop) break;
  }
  res.seconds = since(t0);
  // Every trainer's final message (they send it right after the last aggregation).
  while (!watch.all_final()) {
    watch.poll(generation + 1);
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  res.final_progress = watch.latest();
  (void)s;
  return res;
}

#endif  // COOPGNN_WITH_MPI

}  // namespace coopgnn::tma
