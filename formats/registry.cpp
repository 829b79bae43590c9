// The input-format registry (formats/formats.hpp): the list of formats, look-up by name, detection
// and convert_dataset, which reads through the registry and attaches a separate feature file.
#include <fmt/ranges.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "formats/detail/common.hpp"

namespace coopgnn {

using namespace formats::detail;  // NOLINT(google-build-using-namespace): the readers' helpers

namespace {

/// "a, b and c" (`last` = "and") or "a, b or c".
std::string join_words(const std::vector<std::string_view>& words, std::string_view last) {
  std::string out;
  for (std::size_t i = 0; i < words.size(); ++i) {
    if (i > 0) out += i + 1 == words.size() ? fmt::format(" {} ", last) : std::string(", ");
    out += words[i];
  }
  return out;
}

std::vector<std::string_view> format_names() {
  std::vector<std::string_view> names;
  for (const input_format* f : input_formats()) names.push_back(f->name);
  return names;
}

bool reads_option(const input_format& f, std::string_view option) {
  return std::find(f.options.begin(), f.options.end(), option) != f.options.end();
}

}  // namespace

std::span<const input_format* const> input_formats() {
  static const input_format* const all[] = {&ogb_format(),      &snap_format(),  &npz_format(),
                                            &lightgcn_format(), &musae_format(), &heco_format(),
                                            &mag240m_format()};
  return all;
}

const input_format& find_input_format(std::string_view name) {
  for (const input_format* f : input_formats()) {
    if (f->name == name) return *f;
  }
  COOPGNN_IO_FAIL("unknown input format '{}' (expected {})", name,
                  join_words(format_names(), "or"));
}

std::vector<std::string_view> formats_reading(std::string_view option) {
  std::vector<std::string_view> names;
  for (const input_format* f : input_formats()) {
    if (reads_option(*f, option)) names.push_back(f->name);
  }
  return names;
}

const input_format& detect_input_format(const fs::path& input) {
  std::vector<const input_format*> hits;
  for (const input_format* f : input_formats()) {
    if (f->detect(input)) hits.push_back(f);
  }
  if (hits.size() == 1) return *hits[0];
  std::vector<std::string_view> names;
  for (const input_format* f : hits) names.push_back(f->name);
  std::error_code ec;
  if (!fs::exists(input, ec)) COOPGNN_IO_FAIL("{}: no such file or directory", input.string());
  if (hits.empty()) {
    std::vector<std::string> what;
    for (const input_format* f : input_formats()) {
      what.push_back(fmt::format("{}: {}", f->name, f->summary));
    }
    COOPGNN_IO_FAIL("{}: not recognised as any input format; name one with --from ({})",
                    input.string(), fmt::join(what, "; "));
  }
  COOPGNN_IO_FAIL("{}: looks like {} at once; name one with --from", input.string(),
                  join_words(names, "and"));
}

dataset convert_dataset(std::string_view from, const fs::path& input, const convert_options& opt,
                        convert_report* report) {
  convert_report local;
  convert_report& rep = report != nullptr ? *report : local;
  check_options(opt);
  const input_format& format = find_input_format(from);
  bool const takes_features = reads_option(format, "--features");
  if (!opt.features_file.empty() && !takes_features) {
    COOPGNN_IO_FAIL("{}: --features applies to {} inputs, not {}", opt.features_file.string(),
                    join_words(formats_reading("--features"), "and"), from);
  }
  dataset ds = format.read(input, opt, &rep);
  if (takes_features && !opt.features_file.empty()) {
    if (ds.feature_dim() > 0) {
      COOPGNN_IO_FAIL("{}: --features given, but {} already has {} features per node",
                      opt.features_file.string(), input.string(), ds.feature_dim());
    }
    matrix<float> x = read_feature_file(opt.features_file, opt, rep);
    bool const grow = format.features_add_vertices && x.rows() > ds.num_nodes;
    if (x.rows() != ds.num_nodes && !grow) {
      COOPGNN_IO_FAIL("{}: {} feature rows, but {} has {} nodes", opt.features_file.string(),
                      x.rows(), input.string(), ds.num_nodes);
    }
    if (grow) {
      note(rep, fmt::format("{}: {} feature rows: vertices {}..{} have no edges",
                            opt.features_file.string(), x.rows(), ds.num_nodes, x.rows() - 1));
      ds.num_nodes = x.rows();
    }
    ds.features = std::move(x);
    validate_dataset(ds, input.string());
  }
  return ds;
}

}  // namespace coopgnn
