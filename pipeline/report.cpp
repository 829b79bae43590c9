#include "pipeline/report.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <ctime>
#include <random>
#include <utility>
#include <vector>

#include "runtime/core/error.hpp"

namespace coopgnn {

nlohmann::json number_or_null(double v) {
  return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr);
}

namespace {
double hit_rate(const work_counters& w) {
  auto const n = w.cache_hits + w.cache_misses;
  return n > 0 ? static_cast<double>(w.cache_hits) / static_cast<double>(n) : 0.0;
}
std::string metric_text(double v) { return std::isfinite(v) ? fmt::format("{:.4f}", v) : "-"; }
/// The epoch's communication wait in seconds, or "n/a" where it is not measured.
std::string wait_text(const epoch_report& r) {
  return r.communication_wait_measured ? fmt::format("{:.3f}", r.seconds.communication_wait)
                                       : std::string("n/a");
}
/// The test metrics beyond the selection metric ("  test mrr_ogb 0.41 hits@10 0.62 ...").
std::string extra_metrics(const epoch_report& r) {
  std::string out;
  for (auto const& [k, v] : r.test_metrics) {
    if (k != r.metric_name) out += fmt::format(" {} {}", k, metric_text(v));
  }
  return out.empty() ? out : "  |  test" + out;
}
}  // namespace

nlohmann::json selection_json(const model_selection& s, const std::string& task) {
  nlohmann::json j;
  j["record"] = "selection";
  j["select_best"] = to_string(s.rule);
  j["selected_epoch"] = s.epoch;
  j["epochs"] = s.epochs;
  j["metric_name"] = s.metric_name;
  j["task"] = task;
  j["val_metric"] = number_or_null(s.val_metric);
  j["test_metric"] = number_or_null(s.test_metric);
  if (!s.val_metrics.empty() || !s.test_metrics.empty()) {
    nlohmann::json val = nlohmann::json::object(), test = nlohmann::json::object();
    for (auto const& [k, v] : s.val_metrics) val[k] = number_or_null(v);
    for (auto const& [k, v] : s.test_metrics) test[k] = number_or_null(v);
    j["metrics"] = {{"val", val}, {"test", test}};
  }
  if (!s.note.empty()) j["note"] = s.note;
  return j;
}

std::string format_selection(const model_selection& s) {
  std::string const which =
      s.rule == select_best_kind::val
          ? fmt::format("selected epoch {} of {} (best val {})", s.epoch, s.epochs, s.metric_name)
          : fmt::format("selected epoch {} (the last)", s.epoch);
  std::string out =
      fmt::format("{}: val {} {}  test {} {}", which, s.metric_name, metric_text(s.val_metric),
                  s.metric_name, metric_text(s.test_metric));
  std::string more;
  for (auto const& [k, v] : s.test_metrics) {
    if (k != s.metric_name) more += fmt::format(" {} {}", k, metric_text(v));
  }
  if (!more.empty()) out += "  |  test" + more;
  if (!s.note.empty()) out += fmt::format("  ({})", s.note);
  return out;
}

std::string make_run_id(std::chrono::system_clock::time_point start) {
  std::uint64_t bits = 0;
  try {
    std::random_device rd;
    bits = (static_cast<std::uint64_t>(rd()) << 32) ^ static_cast<std::uint64_t>(rd());
  } catch (const std::exception&) {
    bits = static_cast<std::uint64_t>(start.time_since_epoch().count()) * 0x9E3779B97F4A7C15ULL ^
           static_cast<std::uint64_t>(::getpid());
  }
  std::time_t const t = std::chrono::system_clock::to_time_t(start);
  std::tm utc{};
  ::gmtime_r(&t, &utc);
  return fmt::format("{:04}{:02}{:02}T{:02}{:02}{:02}Z-{:016x}", utc.tm_year + 1900, utc.tm_mon + 1,
                     utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec, bits);
}

nlohmann::json to_json(const epoch_report& r) {
  nlohmann::json j;
  j["mode"] = r.mode;
  j["backend"] = r.backend;
  j["pes"] = r.pes;
  j["epoch"] = r.epoch;
  j["train_loss"] = number_or_null(r.train_loss);
  j["val_metric"] = number_or_null(r.val_metric);
  j["test_metric"] = number_or_null(r.test_metric);
  j["metric_name"] = r.metric_name;
  j["task"] = r.task;
  if (!r.val_metrics.empty() || !r.test_metrics.empty()) {
    nlohmann::json val = nlohmann::json::object(), test = nlohmann::json::object();
    for (auto const& [k, v] : r.val_metrics) val[k] = number_or_null(v);
    for (auto const& [k, v] : r.test_metrics) test[k] = number_or_null(v);
    j["metrics"] = {{"val", val}, {"test", test}};
  }
  j["batches"] = r.batches;
  j["seconds"] = {{"sample", r.seconds.sample},
                  {"feature_load", r.seconds.feature_load},
                  {"forward", r.seconds.forward},
                  {"backward", r.seconds.backward},
                  {"communication", r.seconds.communication},
                  {"communication_wait", r.communication_wait_measured
                                             ? nlohmann::json(r.seconds.communication_wait)
                                             : nlohmann::json(nullptr)},
                  {"optimizer", r.seconds.optimizer},
                  {"epoch", r.epoch_seconds},
                  {"eval", r.eval_seconds}};
  j["cpu_seconds"] = {{"sample", r.cpu_seconds.sample},
                      {"feature_load", r.cpu_seconds.feature_load},
                      {"forward", r.cpu_seconds.forward},
                      {"backward", r.cpu_seconds.backward},
                      {"communication", r.cpu_seconds.communication},
                      {"optimizer", r.cpu_seconds.optimizer}};
  j["work"] = {{"seeds", r.work.seeds},
               {"sampled_edges", r.work.sampled_edges},
               {"sampled_vertices", r.work.sampled_vertices},
               {"feature_rows", r.work.feature_rows},
               {"feature_bytes", r.work.feature_bytes},
               {"alltoall_bytes", r.work.alltoall_bytes},
               {"allreduce_bytes", r.work.allreduce_bytes},
               {"alltoall_calls", r.work.alltoall_calls},
               {"collectives", r.work.collectives},
               {"collective_calls", r.work.collective_calls},
               {"count_exchanges", r.work.count_exchanges},
               {"kernel_calls", r.work.kernel_calls}};
  if (!r.node_types.empty()) {
    // Heterogeneous graphs: the counts by node type and relation, by name.
    nlohmann::json rows = nlohmann::json::object(), edges = nlohmann::json::object();
    for (std::size_t t = 0; t < r.node_types.size() && t < r.work.rows_per_type.size(); ++t)
      rows[r.node_types[t]] = r.work.rows_per_type[t];
    for (std::size_t e = 0; e < r.relations.size() && e < r.work.edges_per_relation.size(); ++e)
      edges[r.relations[e]] = r.work.edges_per_relation[e];
    j["work"]["feature_rows_per_type"] = rows;
    j["work"]["sampled_edges_per_relation"] = edges;
  }
  auto const bytes_or_null = [](std::int64_t b) {
    return b >= 0 ? nlohmann::json(b) : nlohmann::json(nullptr);
  };
  j["memory"] = {
      {"peak_device_bytes",
       r.peak_device_bytes.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.peak_device_bytes)},
      {"peak_rss_bytes", bytes_or_null(r.peak_rss_bytes)},
      {"rss_bytes", bytes_or_null(r.rss_bytes)}};
  auto const accesses = r.work.cache_hits + r.work.cache_misses;
  j["cache"] = {
      {"hits", r.work.cache_hits},
      {"misses", r.work.cache_misses},
      {"miss_rate", number_or_null(accesses > 0 ? static_cast<double>(r.work.cache_misses) /
                                                      static_cast<double>(accesses)
                                                : std::nan(""))}};
  return j;
}

std::string format_epoch_line(const epoch_report& r) {
  auto const& s = r.seconds;
  return fmt::format(
             "[{}] epoch {:>3}  loss {:.4f}  val {} {}  test {}  |  {:.3f}s (sample {:.3f} feat "
             "{:.3f} "
             "fwd {:.3f} bwd {:.3f} comm {:.3f} (wait {}, cpu {:.3f}) opt {:.3f})  |  edges {} "
             "vertices {} "
             "rows {} a2a {:.2f} MB",
             r.mode, r.epoch, r.train_loss, r.metric_name, metric_text(r.val_metric),
             metric_text(r.test_metric), r.epoch_seconds, s.sample, s.feature_load, s.forward,
             s.backward, s.communication, wait_text(r), r.cpu_seconds.communication, s.optimizer,
             r.work.sampled_edges,
             r.work.sampled_vertices, r.work.feature_rows,
             static_cast<double>(r.work.alltoall_bytes) / 1e6) +
         extra_metrics(r) +
         (r.work.cache_hits > 0 ? fmt::format("  cache hit rate {:.3f}", hit_rate(r.work)) : "");
}

namespace {
/// The mean epoch time of a run's totals, seconds.
double seconds_per_epoch(const epoch_report& t) { return t.epoch_seconds / std::max(1, t.epoch); }
/// The runs of each mode in `totals` (nullptr when absent).
std::pair<const epoch_report*, const epoch_report*> cooperative_and_independent(
    const std::vector<epoch_report>& totals) {
  const epoch_report* coop = nullptr;
  const epoch_report* ind = nullptr;
  for (auto const& t : totals) {
    if (t.mode == "independent") ind = &t;
    if (t.mode == "cooperative") coop = &t;
  }
  return {coop, ind};
}
}  // namespace

std::string format_comparison(const std::vector<epoch_report>& finals,
                              const std::vector<epoch_report>& totals,
                              const comparison_setting* setting) {
  // Rows are collected first: the label column fits the longest label (per-relation rows name
  // edge types such as "paper:paper-subject:subject"), at least 28 wide.
  std::vector<std::pair<std::string, std::vector<std::string>>> lines;
  auto row = [&](const std::string& name, auto&& cell) {
    std::vector<std::string> cells;
    for (std::size_t i = 0; i < finals.size(); ++i) cells.push_back(cell(i));
    lines.emplace_back(name, std::move(cells));
  };
  auto one = [&](const std::string& name, const std::string& cell) {
    lines.emplace_back(name, std::vector<std::string>{cell});
  };
  row("", [&](std::size_t i) { return fmt::format("{} (P={})", finals[i].mode, finals[i].pes); });
  row(fmt::format("final val {}", finals.empty() ? "" : finals[0].metric_name),
      [&](std::size_t i) { return metric_text(finals[i].val_metric); });
  row(fmt::format("final test {}", finals.empty() ? "" : finals[0].metric_name),
      [&](std::size_t i) { return metric_text(finals[i].test_metric); });
  row("final train loss",
      [&](std::size_t i) { return fmt::format("{:.4f}", finals[i].train_loss); });
  row("epoch time, mean (s)",
      [&](std::size_t i) { return fmt::format("{:.4f}", seconds_per_epoch(totals[i])); });
  auto per_epoch = [&](std::size_t i, std::int64_t v) {
    return fmt::format("{}", v / std::max(1, totals[i].epoch));
  };
  // Seconds per epoch in collectives (the slowest PE's, per epoch), and the waiting part.
  row("communication s / epoch", [&](std::size_t i) {
    return fmt::format("{:.4f}", totals[i].seconds.communication / std::max(1, totals[i].epoch));
  });
  row("  of which wait s / epoch", [&](std::size_t i) {
    return totals[i].communication_wait_measured
               ? fmt::format("{:.4f}",
                             totals[i].seconds.communication_wait / std::max(1, totals[i].epoch))
               : std::string("n/a");
  });
  // The same split in the PE threads' CPU time (the slowest PE's, per stage): what the
  // collectives and the stages cost in work when PE threads outnumber the cores.
  row("  of which cpu s / epoch", [&](std::size_t i) {
    return fmt::format("{:.4f}",
                       totals[i].cpu_seconds.communication / std::max(1, totals[i].epoch));
  });
  row("compute cpu s / epoch", [&](std::size_t i) {
    auto const& c = totals[i].cpu_seconds;
    return fmt::format("{:.4f}", (c.total() - c.communication) / std::max(1, totals[i].epoch));
  });
  row("sampled edges / epoch",
      [&](std::size_t i) { return per_epoch(i, totals[i].work.sampled_edges); });
  row("sampled vertices / epoch",
      [&](std::size_t i) { return per_epoch(i, totals[i].work.sampled_vertices); });
  row("feature rows / epoch",
      [&](std::size_t i) { return per_epoch(i, totals[i].work.feature_rows); });
  bool const cache = setting != nullptr
                         ? setting->cache
                         : std::any_of(totals.begin(), totals.end(),
                                       [](const epoch_report& t) { return t.work.cache_hits > 0; });
  if (cache) {
    row("feature cache hit rate",
        [&](std::size_t i) { return fmt::format("{:.4f}", hit_rate(totals[i].work)); });
  }
  row("all-to-all MB / epoch", [&](std::size_t i) {
    return fmt::format("{:.3f}", static_cast<double>(totals[i].work.alltoall_bytes) / 1e6 /
                                     std::max(1, totals[i].epoch));
  });
  row("all-reduce MB / epoch", [&](std::size_t i) {
    return fmt::format("{:.3f}", static_cast<double>(totals[i].work.allreduce_bytes) / 1e6 /
                                     std::max(1, totals[i].epoch));
  });
  // Per PE and step: every PE makes the same collective calls.
  auto per_pe_step = [&](std::size_t i, std::int64_t v) {
    auto const steps = std::max<std::int64_t>(1, totals[i].batches) * std::max(1, totals[i].pes);
    return fmt::format("{:.2f}", static_cast<double>(v) / static_cast<double>(steps));
  };
  row("collectives / PE / step",
      [&](std::size_t i) { return per_pe_step(i, totals[i].work.collectives); });
  row("coll. calls / PE / step",
      [&](std::size_t i) { return per_pe_step(i, totals[i].work.collective_calls); });
  row("kernel calls / PE / step",
      [&](std::size_t i) { return per_pe_step(i, totals[i].work.kernel_calls); });
  // Ratios when both modes are present: time cooperative / independent, work the other way.
  auto const [coop, ind] = cooperative_and_independent(totals);
  if (ind != nullptr && coop != nullptr) {
    auto ratio = [](std::int64_t a, std::int64_t b) {
      return b > 0 ? fmt::format("{:.3f}", static_cast<double>(a) / static_cast<double>(b))
                   : std::string("-");
    };
    double const t_ind = seconds_per_epoch(*ind);
    one("cooperative/independent:", "");
    one("  epoch time",
        t_ind > 0 ? fmt::format("{:.3f}", seconds_per_epoch(*coop) / t_ind) : std::string("-"));
    one("independent/cooperative:", "");
    one("  sampled edges", ratio(ind->work.sampled_edges, coop->work.sampled_edges));
    one("  sampled vertices", ratio(ind->work.sampled_vertices, coop->work.sampled_vertices));
    one("  feature rows", ratio(ind->work.feature_rows, coop->work.feature_rows));
    // Heterogeneous graphs: the same ratios per node type and per relation.
    auto at = [](const std::vector<std::int64_t>& v, std::size_t i) {
      return i < v.size() ? v[i] : std::int64_t{0};
    };
    for (std::size_t t = 0; t < coop->node_types.size(); ++t) {
      one(fmt::format("  feature rows {}", coop->node_types[t]),
          ratio(at(ind->work.rows_per_type, t), at(coop->work.rows_per_type, t)));
    }
    for (std::size_t e = 0; e < coop->relations.size(); ++e) {
      one(fmt::format("  edges {}", coop->relations[e]),
          ratio(at(ind->work.edges_per_relation, e), at(coop->work.edges_per_relation, e)));
    }
  }
  std::size_t width = 28;
  for (auto const& [name, cells] : lines) width = std::max(width, name.size() + 2);
  std::string out;
  for (auto const& [name, cells] : lines) {
    out += fmt::format("{:<{}}", name, width);
    for (auto const& c : cells) out += fmt::format("{:>18}", c);
    out += "\n";
  }
  return out;
}

std::string format_comparison_legend(const std::vector<epoch_report>& totals,
                                     const comparison_setting& s) {
  std::string out;
  auto const [coop, ind] = cooperative_and_independent(totals);
  if (coop != nullptr && ind != nullptr) {
    double const tc = seconds_per_epoch(*coop), ti = seconds_per_epoch(*ind);
    if (tc > 0 && ti > 0) {
      bool const coop_faster = tc < ti;
      out += fmt::format(
          "time: cooperative {:.4f} s/epoch, independent {:.4f} s/epoch: cooperative / "
          "independent = {:.3f}, {} is {:.2f}x faster\n",
          tc, ti, tc / ti, coop_faster ? "cooperative" : "independent",
          coop_faster ? ti / tc : tc / ti);
    }
  }
  if (!totals.empty()) {
    auto const& t = totals.front();
    if (t.backend == "cuda") {
      out += fmt::format("timings: cuda backend, {} PEs on {} GPU{}: measured on the devices\n",
                         t.pes, s.gpus, s.gpus == 1 ? "" : "s");
    } else {
      std::int64_t const threads = static_cast<std::int64_t>(t.pes) * s.threads_per_pe;
      out += fmt::format(
          "timings: {} backend, {} PEs x {} thread{} on {} hardware thread{}: timings are of "
          "CPU threads{}, not GPUs\n",
          t.backend, t.pes, s.threads_per_pe, s.threads_per_pe == 1 ? "" : "s", s.hardware_threads,
          s.hardware_threads == 1 ? "" : "s", threads > s.hardware_threads ? " sharing cores" : "");
    }
  }
  if (s.train_items > 0 && s.batch_size >= s.train_items) {
    out += fmt::format(
        "batches: every epoch is one batch (--batch-size {} >= {} training {}): the modes "
        "differ in how that batch is split, not in how many steps an epoch takes\n",
        s.batch_size, s.train_items,
        !totals.empty() && totals.front().task == "link_prediction" ? "pairs" : "seeds");
  }
  if (coop != nullptr && ind != nullptr) {
    out +=
        "work: independent / cooperative > 1 is the work (sampled edges and vertices, feature "
        "rows) cooperative minibatching saves by sampling one global batch; timings depend on "
        "the machine, the work ratios do not\n";
  }
  return out;
}

line_appender::line_appender(std::filesystem::path file) : file_(std::move(file)) {
  fd_ = ::open(file_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd_ < 0) {
    throw io_error(
        fmt::format("{}: cannot open for appending: {}", file_.string(), std::strerror(errno)));
  }
}

line_appender::~line_appender() {
  if (fd_ >= 0) ::close(fd_);
}

void line_appender::append(std::string_view line) {
  COOPGNN_EXPECTS(line.find('\n') == std::string_view::npos,
                  "line_appender: a line of {} bytes contains a newline", line.size());
  std::string whole(line);
  whole.push_back('\n');
  ssize_t n = -1;
  do {
    n = ::write(fd_, whole.data(), whole.size());
  } while (n < 0 && errno == EINTR);
  if (n != static_cast<ssize_t>(whole.size())) {
    throw io_error(fmt::format("{}: write failed ({} of {} bytes): {}", file_.string(), n,
                               whole.size(), n < 0 ? std::strerror(errno) : "short write"));
  }
}

}  // namespace coopgnn
