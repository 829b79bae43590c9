#include "tools/coopgnn/progress.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <utility>

namespace coopgnn::cli {
namespace {

double steady_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::string format_duration(double s) {
  if (s < 1) return "<1 s";
  auto const t = static_cast<std::int64_t>(std::llround(s));
  if (t < 60) return fmt::format("{} s", t);
  if (t < 3600) return fmt::format("{} min {:02} s", t / 60, t % 60);
  return fmt::format("{} h {:02} min", t / 3600, (t % 3600) / 60);
}

}  // namespace

std::string format_progress(const std::string& label, std::int64_t done, std::int64_t total,
                            double elapsed_s) {
  if (total <= 0) return fmt::format("{} {}", label, done);
  std::string line = fmt::format("{} {}/{} ({}%)", label, done, total, 100 * done / total);
  if (elapsed_s > 0 && done > 0) {
    double const rate = static_cast<double>(done) / elapsed_s;
    line += fmt::format(" {:.3g}/s ETA {}", rate,
                        format_duration(static_cast<double>(total - done) / rate));
  }
  return line;
}

progress_reporter::progress_reporter(std::string label, bool enabled, bool terminal,
                                     double interval_s, std::FILE* out, std::function<double()> now)
    : label_(std::move(label)),
      enabled_(enabled),
      terminal_(terminal),
      interval_s_(interval_s),
      out_(out),
      now_(now ? std::move(now) : std::function<double()>(steady_seconds)) {
  start_ = last_line_ = now_();
}

void progress_reporter::update(std::int64_t done, std::int64_t total) {
  if (!enabled_ || total <= 0) return;
  double const t = now_();
  if (terminal_) {
    int const width = 30;
    auto const filled = static_cast<int>(width * done / total);
    std::string const text = format_progress(label_, done, total, t - start_);
    fmt::print(out_, "\r{} [{}{}]", text, std::string(filled, '#'),
               std::string(width - filled, '.'));
    // Erased when complete: the epoch's summary line takes its place.
    if (done == total) fmt::print(out_, "\r{}\r", std::string(text.size() + width + 8, ' '));
    std::fflush(out_);
    return;
  }
  if (done == total || t - last_line_ < interval_s_) return;
  last_line_ = t;
  fmt::print(out_, "{}\n", format_progress(label_, done, total, t - start_));
  std::fflush(out_);
}

}  // namespace coopgnn::cli
