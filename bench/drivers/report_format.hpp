// Formatting shared by the renderers of `coopgnn report` (bench/drivers/report.cpp for bench
// result files, bench/drivers/report_tma.cpp for TMA runs): numbers, Markdown tables and plot
// links, so every section of report.md writes a number the same way.
#pragma once

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace coopgnn::bench::detail {

/// The distinct values of key(row) over `rows`, in first-seen order (T needs operator==).
template <typename T, typename R, typename F>
std::vector<T> distinct(const R& rows, F key) {
  std::vector<T> out;
  for (auto const& r : rows) {
    T k = key(r);
    if (std::find(out.begin(), out.end(), k) == out.end()) out.push_back(std::move(k));
  }
  return out;
}

/// obj[key] when obj is an object holding a number there, else nullopt (never throws).
std::optional<double> opt_num(const nlohmann::json& obj, const std::string& key);

/// obj[key] when obj is an object holding a string there, else `dflt` (never throws).
std::string opt_str(const nlohmann::json& obj, const std::string& key,
                    const std::string& dflt = "");

/// Four significant digits, fixed notation, trailing zeros dropped ("1235", "12.35", "0.0125");
/// "nan", "inf", "-inf" for non-finite x.
std::string sig(double x);

/// sig(*x), or "-" when x is empty.
std::string opt_sig(std::optional<double> x);

/// A count: integral values exactly ("12"), others with one decimal ("12.5").
std::string count(double x);

/// Bytes in binary units ("512 B", "1.50 KiB", "2.00 MiB", "3.25 GiB").
std::string bytes(double b);

/// a / b with three decimals, or "-" when b == 0.
std::string ratio(double a, double b);

/// A Markdown table (header, separator, one line per row, a blank line after); the first `left`
/// columns are left-aligned, the others right-aligned. Rows are written as given (no padding).
std::string table(const std::vector<std::string>& header,
                  const std::vector<std::vector<std::string>>& rows, std::size_t left = 1);

/// "![caption](path)\n\n" for the first of `plots` whose file name is `name`, else "" (a plot
/// that was not rendered is simply not shown).
std::string plot_link(const std::vector<std::filesystem::path>& plots, const std::string& name,
                      const std::string& caption);

}  // namespace coopgnn::bench::detail
