#include "bench/drivers/report_format.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace coopgnn::bench::detail {

using nlohmann::json;

std::optional<double> opt_num(const json& obj, const std::string& key) {
  if (!obj.is_object() || !obj.contains(key) || !obj.at(key).is_number()) return std::nullopt;
  return obj.at(key).get<double>();
}

std::string opt_str(const json& obj, const std::string& key, const std::string& dflt) {
  if (!obj.is_object() || !obj.contains(key) || !obj.at(key).is_string()) return dflt;
  return obj.at(key).get<std::string>();
}

std::string sig(double x) {
  if (!std::isfinite(x)) return std::isnan(x) ? "nan" : (x > 0 ? "inf" : "-inf");
  if (x == 0) return "0";
  int const mag = static_cast<int>(std::floor(std::log10(std::fabs(x))));
  int const decimals = std::clamp(3 - mag, 0, 9);
  std::string s = fmt::format("{:.{}f}", x, decimals);
  if (s.find('.') != std::string::npos) {
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  return s;
}

std::string opt_sig(std::optional<double> x) { return x ? sig(*x) : "-"; }

std::string count(double x) {
  if (std::fabs(x - std::round(x)) < 1e-9) return fmt::format("{:.0f}", x);
  return fmt::format("{:.1f}", x);
}

std::string bytes(double b) {
  char const* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  double v = b;
  while (std::fabs(v) >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  return u == 0 ? fmt::format("{:.0f} B", v) : fmt::format("{:.2f} {}", v, units[u]);
}

std::string ratio(double a, double b) { return b != 0 ? fmt::format("{:.3f}", a / b) : "-"; }

std::string table(const std::vector<std::string>& header,
                  const std::vector<std::vector<std::string>>& rows, std::size_t left) {
  std::string out = "| " + fmt::format("{}", fmt::join(header, " | ")) + " |\n|";
  for (std::size_t i = 0; i < header.size(); ++i) out += i < left ? "---|" : "---:|";
  out += "\n";
  for (auto const& r : rows) out += "| " + fmt::format("{}", fmt::join(r, " | ")) + " |\n";
  return out + "\n";
}

std::string plot_link(const std::vector<std::filesystem::path>& plots, const std::string& name,
                      const std::string& caption) {
  for (auto const& p : plots) {
    if (p.filename().string() == name) {
      return fmt::format("![{}]({})\n\n", caption, p.generic_string());
    }
  }
  return "";
}

}  // namespace coopgnn::bench::detail
